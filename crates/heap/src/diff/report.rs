//! The comparison of two heap dumps as text, JSON and a self-contained HTML page.

use std::fmt::Write as _;

use serde_json::{Value as Json, json};

use super::{ChainChange, Change, ClassChange, HeapDiff};

/// What the reports show.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    /// OLD's file name.
    pub old_name: &'a str,
    /// NEW's file name.
    pub new_name: &'a str,
    /// Rows per table (0: every row).
    pub rows: usize,
    /// The gate's limit in bytes, if there is one, and the chains past it.
    pub gate: Option<(u64, &'a [usize])>,
}

impl Options<'_> {
    fn limit(&self) -> usize {
        if self.rows == 0 {
            usize::MAX
        } else {
            self.rows
        }
    }
}

/// `n` with thousands separators.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A change with its sign and thousands separators.
pub fn signed(n: i64) -> String {
    let sign = if n < 0 { '-' } else { '+' };
    format!("{sign}{}", grouped(n.unsigned_abs()))
}

fn change_json(c: Change) -> Json {
    json!({"old": c.old, "new": c.new, "change": c.delta()})
}

fn chain_json(diff: &HeapDiff, c: &ChainChange) -> Json {
    let mut row = json!({
        "chain": c.describe(),
        "steps": c.steps.iter().map(|(via, class)| json!({"via": via, "class": class})).collect::<Vec<_>>(),
        "objects": change_json(c.objects),
        "retained": change_json(c.retained),
    });
    let end = &diff.chains[c.accumulation];
    if !std::ptr::eq(end, c) {
        row["accumulation"] = json!({
            "chain": end.describe(),
            "objects": change_json(end.objects),
            "retained": change_json(end.retained),
        });
    }
    row
}

fn class_json(c: &ClassChange) -> Json {
    json!({
        "class": c.name,
        "instances": change_json(c.instances),
        "shallow": change_json(c.shallow),
        "retained": change_json(c.retained),
    })
}

/// The comparison as one JSON object: `old` and `new` (file, totals), `chains` (the chain
/// rows, with where each one's growth accumulates), `classes`, and with a gate `fail_above`
/// (its limit in bytes and the offending chains).
pub fn json(diff: &HeapDiff, options: &Options<'_>) -> Json {
    let limit = options.limit();
    let side = |name: &str, pick: fn(Change) -> u64| {
        json!({
            "file": name,
            "totals": {
                "objects": pick(diff.objects),
                "shallow_bytes": pick(diff.shallow_bytes),
                "reachable_objects": pick(diff.reachable_objects),
                "reachable_bytes": pick(diff.reachable_bytes),
            },
        })
    };
    let mut doc = json!({
        "old": side(options.old_name, |c| c.old),
        "new": side(options.new_name, |c| c.new),
        "change": {
            "objects": diff.objects.delta(),
            "shallow_bytes": diff.shallow_bytes.delta(),
            "reachable_objects": diff.reachable_objects.delta(),
            "reachable_bytes": diff.reachable_bytes.delta(),
        },
        "chains": diff.chain_rows().into_iter().take(limit)
            .map(|i| chain_json(diff, &diff.chains[i])).collect::<Vec<_>>(),
        "classes": diff.classes.iter().filter(|c| changed(c)).take(limit)
            .map(class_json).collect::<Vec<_>>(),
    });
    if let Some((bytes, offences)) = options.gate {
        doc["fail_above"] = json!({
            "limit_bytes": bytes,
            "offences": offences.iter().map(|&i| chain_json(diff, &diff.chains[i])).collect::<Vec<_>>(),
        });
    }
    doc
}

fn changed(c: &ClassChange) -> bool {
    c.instances.delta() != 0 || c.shallow.delta() != 0 || c.retained.delta() != 0
}

/// The comparison as text: totals, chains by change of retained bytes (with where each
/// one's growth accumulates), classes by change of retained bytes.
pub fn text(diff: &HeapDiff, options: &Options<'_>) -> String {
    let limit = options.limit();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Heap diff: OLD {} → NEW {}\n",
        options.old_name, options.new_name
    );
    let _ = writeln!(
        s,
        "  {:<26} {:>16} {:>16} {:>16}",
        "", "OLD", "NEW", "change"
    );
    for (name, c) in [
        ("objects", diff.objects),
        ("shallow bytes", diff.shallow_bytes),
        ("reachable objects", diff.reachable_objects),
        ("reachable bytes", diff.reachable_bytes),
    ] {
        let _ = writeln!(
            s,
            "  {:<26} {:>16} {:>16} {:>16}",
            name,
            grouped(c.old),
            grouped(c.new),
            signed(c.delta())
        );
    }
    let _ = writeln!(
        s,
        "\nRetained memory by reference chain from GC roots, by change"
    );
    let rows = diff.chain_rows();
    if rows.is_empty() {
        let _ = writeln!(s, "  no change");
    } else {
        let _ = writeln!(
            s,
            "  {:>15} {:>12} {:>15} {:>15}   chain",
            "retained Δ", "objects Δ", "OLD retained", "NEW retained"
        );
    }
    for &i in rows.iter().take(limit) {
        let c = &diff.chains[i];
        let _ = writeln!(
            s,
            "  {:>15} {:>12} {:>15} {:>15}   {}",
            signed(c.retained.delta()),
            signed(c.objects.delta()),
            grouped(c.retained.old),
            grouped(c.retained.new),
            c.describe()
        );
        if c.accumulation != i {
            let end = &diff.chains[c.accumulation];
            let _ = writeln!(
                s,
                "  {:>15} {:>12} {:>15} {:>15}     grows in: {}",
                signed(end.retained.delta()),
                signed(end.objects.delta()),
                "",
                "",
                c.describe_below(end)
            );
        }
    }
    if rows.len() > limit {
        let _ = writeln!(s, "  ... {} more chains", rows.len() - limit);
    }
    let _ = writeln!(s, "\nClasses by change in retained size");
    let classes: Vec<&ClassChange> = diff.classes.iter().filter(|c| changed(c)).collect();
    if classes.is_empty() {
        let _ = writeln!(s, "  no change");
    } else {
        let _ = writeln!(
            s,
            "  {:>15} {:>15} {:>12} {:>15} {:>15}   class",
            "retained Δ", "shallow Δ", "instances Δ", "OLD retained", "NEW retained"
        );
    }
    for c in classes.iter().take(limit) {
        let _ = writeln!(
            s,
            "  {:>15} {:>15} {:>12} {:>15} {:>15}   {}",
            signed(c.retained.delta()),
            signed(c.shallow.delta()),
            signed(c.instances.delta()),
            grouped(c.retained.old),
            grouped(c.retained.new),
            c.name
        );
    }
    if classes.len() > limit {
        let _ = writeln!(s, "  ... {} more classes", classes.len() - limit);
    }
    s
}

/// The offending chains of a gate, one line each (for standard error).
pub fn offences(diff: &HeapDiff, limit: u64, offences: &[usize]) -> String {
    let mut s = String::new();
    for &i in offences {
        let c = &diff.chains[i];
        let _ = writeln!(
            s,
            "retained size of {} grew {} bytes (limit {}): {} -> {}",
            c.describe(),
            signed(c.retained.delta()),
            grouped(limit),
            grouped(c.retained.old),
            grouped(c.retained.new)
        );
    }
    s
}

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The class of a change's cell: grew or shrank.
fn tone(delta: i64) -> &'static str {
    match delta.signum() {
        1 => "up",
        -1 => "down",
        _ => "",
    }
}

/// The comparison as one self-contained page (no script, no network): totals, the chain rows,
/// every chain as a tree (nested `<details>`, continuing chains by change), classes.
pub fn html(diff: &HeapDiff, options: &Options<'_>) -> String {
    let limit = options.limit();
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>hprof diff: {old} → {new}</title>\
<style>body{{font-family:sans-serif;margin:1em 2em}}table{{border-collapse:collapse}}\
td,th{{padding:2px 8px;text-align:right}}td:last-child,th:last-child{{text-align:left}}\
tr:nth-child(even){{background:#f4f4f4}}details{{margin-left:1.5em}}summary{{cursor:pointer}}\
.up{{color:#b00}}.down{{color:#04a}}.grows{{color:#555;font-size:90%}}</style>\
</head><body><h1>Heap diff</h1><p>OLD <code>{old}</code>, NEW <code>{new}</code></p>",
        old = esc(options.old_name),
        new = esc(options.new_name)
    );
    h.push_str("<h2>Totals</h2><table id=\"totals\"><tr><th></th><th>OLD</th><th>NEW</th><th>change</th></tr>");
    for (name, c) in [
        ("objects", diff.objects),
        ("shallow bytes", diff.shallow_bytes),
        ("reachable objects", diff.reachable_objects),
        ("reachable bytes", diff.reachable_bytes),
    ] {
        let _ = write!(
            h,
            "<tr><th>{name}</th><td>{}</td><td>{}</td><td class=\"{}\">{}</td></tr>",
            grouped(c.old),
            grouped(c.new),
            tone(c.delta()),
            signed(c.delta())
        );
    }
    h.push_str("</table>");
    if let Some((bytes, offences)) = options.gate {
        let _ = write!(
            h,
            "<h2>Gate</h2><p id=\"gate\">Limit: {} bytes of retained growth per chain: {}.</p>",
            grouped(bytes),
            if offences.is_empty() {
                "passed".to_string()
            } else {
                format!("{} chains grew past it", offences.len())
            }
        );
    }
    h.push_str("<h2>Retained memory by reference chain, by change</h2><table id=\"chains\"><tr><th>retained Δ</th><th>objects Δ</th><th>OLD retained</th><th>NEW retained</th><th>chain</th></tr>");
    for i in diff.chain_rows().into_iter().take(limit) {
        let c = &diff.chains[i];
        let mut chain = esc(&c.describe());
        if c.accumulation != i {
            let end = &diff.chains[c.accumulation];
            let _ = write!(
                chain,
                "<br><span class=\"grows\">grows in: {} ({} bytes, {} objects)</span>",
                esc(&c.describe_below(end)),
                signed(end.retained.delta()),
                signed(end.objects.delta())
            );
        }
        let _ = write!(
            h,
            "<tr><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{chain}</td></tr>",
            tone(c.retained.delta()),
            signed(c.retained.delta()),
            signed(c.objects.delta()),
            grouped(c.retained.old),
            grouped(c.retained.new)
        );
    }
    h.push_str("</table><h2>Every chain</h2><div id=\"tree\">");
    // Each chain's continuing chains; the GC roots' last.
    let mut kids: Vec<Vec<usize>> = vec![Vec::new(); diff.chains.len() + 1];
    for (i, c) in diff.chains.iter().enumerate() {
        if c.retained.delta() != 0 || c.objects.delta() != 0 {
            kids[c.parent.unwrap_or(diff.chains.len())].push(i);
        }
    }
    tree(&mut h, diff, &kids, diff.chains.len(), limit);
    h.push_str("</div><h2>Classes by change in retained size</h2><table id=\"classes\"><tr><th>retained Δ</th><th>shallow Δ</th><th>instances Δ</th><th>OLD retained</th><th>NEW retained</th><th>class</th></tr>");
    for c in diff.classes.iter().filter(|c| changed(c)).take(limit) {
        let _ = write!(
            h,
            "<tr><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            tone(c.retained.delta()),
            signed(c.retained.delta()),
            signed(c.shallow.delta()),
            signed(c.instances.delta()),
            grouped(c.retained.old),
            grouped(c.retained.new),
            esc(&c.name)
        );
    }
    h.push_str("</table></body></html>\n");
    h
}

/// The changed chains continuing `parent` (`kids[parent]`; the GC roots' are last), by
/// change, as nested `<details>`.
fn tree(h: &mut String, diff: &HeapDiff, kids: &[Vec<usize>], parent: usize, limit: usize) {
    let mut list = kids[parent].clone();
    list.sort_by_key(|&i| std::cmp::Reverse(diff.chains[i].retained.delta().unsigned_abs()));
    for &i in list.iter().take(limit) {
        let c = &diff.chains[i];
        let (step, class) = &c.steps[c.steps.len() - 1];
        let label = format!(
            "<span class=\"{}\">{}</span> bytes, {} objects: {} <code>{}</code>",
            tone(c.retained.delta()),
            signed(c.retained.delta()),
            signed(c.objects.delta()),
            esc(step),
            esc(class)
        );
        if kids[i].is_empty() {
            let _ = write!(h, "<div style=\"margin-left:1.5em\">{label}</div>");
        } else {
            let _ = write!(h, "<details><summary>{label}</summary>");
            tree(h, diff, kids, i, limit);
            h.push_str("</details>");
        }
    }
}
