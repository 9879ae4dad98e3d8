//! The comparison of two profiles as a text table and as JSON.

use std::io::{self, Write};

use serde_json::{Value as Json, json};

use super::{MethodChange, Offence, Presence, ProfileDiff, StackChange, percent};

/// What the reports show.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    /// BASE's file name.
    pub base_name: &'a str,
    /// NEW's file name.
    pub new_name: &'a str,
    /// Rows per table (0: every row).
    pub rows: usize,
    /// Also rank whole stacks.
    pub stacks: bool,
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

/// The section title and unit of the profiles (NEW's).
fn heading(diff: &ProfileDiff<'_>) -> (&'static str, String) {
    let section = diff.new.kind.map_or("PROFILE", |k| k.section());
    (section, crate::flame::unit(diff.new).to_string())
}

fn method_row(out: &mut dyn Write, diff: &ProfileDiff<'_>, m: &MethodChange) -> io::Result<()> {
    let (bt, nt) = (diff.base_total, diff.new_total);
    let mark = match m.presence() {
        Presence::Both => "",
        Presence::New => "  (new)",
        Presence::Vanished => "  (vanished)",
    };
    writeln!(
        out,
        "{:>+8.2} {:>7.2}% {:>7.2}%  {:>+8.2} {:>7.2}% {:>7.2}%  {}{mark}",
        m.self_points,
        percent(m.base_self, bt),
        percent(m.new_self, nt),
        m.total_points,
        percent(m.base_total, bt),
        percent(m.new_total, nt),
        m.name
    )
}

const METHOD_HEADER: &str =
    "  self Δ    base      new    total Δ    base      new   method (Δ in points)";

/// Writes the comparison as tables: methods by change of self share, by change of total
/// share, new methods, vanished methods, and (with `stacks`) stacks by change of share.
pub fn text(diff: &ProfileDiff<'_>, options: &Options<'_>, out: &mut dyn Write) -> io::Result<()> {
    let (section, unit) = heading(diff);
    let limit = options.limit();
    writeln!(
        out,
        "{section}: BASE {} ({} {unit}), NEW {} ({} {unit})",
        options.base_name, diff.base_total, options.new_name, diff.new_total
    )?;
    writeln!(
        out,
        "Shares are of each profile's own total; Δ is NEW's share less BASE's, in points.\n"
    )?;
    let changed = |m: &&MethodChange| m.self_points != 0.0 || m.total_points != 0.0;
    writeln!(out, "Methods by change in self share")?;
    writeln!(out, "{METHOD_HEADER}")?;
    let rows: Vec<&MethodChange> = diff.methods.iter().filter(changed).take(limit).collect();
    for m in &rows {
        method_row(out, diff, m)?;
    }
    if rows.is_empty() {
        writeln!(out, "  no change")?;
    }
    writeln!(out, "\nMethods by change in total share")?;
    writeln!(out, "{METHOD_HEADER}")?;
    let rows: Vec<&MethodChange> = diff
        .methods_by_total()
        .into_iter()
        .filter(changed)
        .take(limit)
        .collect();
    for m in &rows {
        method_row(out, diff, m)?;
    }
    if rows.is_empty() {
        writeln!(out, "  no change")?;
    }
    for (presence, title, total) in [
        (Presence::New, "New methods (not in BASE)", diff.new_total),
        (
            Presence::Vanished,
            "Vanished methods (not in NEW)",
            diff.base_total,
        ),
    ] {
        let rows = diff.only(presence);
        writeln!(out, "\n{title}: {}", rows.len())?;
        if !rows.is_empty() {
            writeln!(out, "     self    total   method")?;
        }
        for m in rows.iter().take(limit) {
            let (s, t) = match presence {
                Presence::New => (m.new_self, m.new_total),
                _ => (m.base_self, m.base_total),
            };
            writeln!(
                out,
                "  {:>6.2}%  {:>6.2}%   {}",
                percent(s, total),
                percent(t, total),
                m.name
            )?;
        }
        if rows.len() > limit {
            writeln!(out, "  ... {} more", rows.len() - limit)?;
        }
    }
    if options.stacks {
        writeln!(out, "\nStacks by change in share (leaf first)")?;
        writeln!(out, "       Δ    base      new   stack")?;
        let stacks = diff.stacks();
        for s in stacks.iter().filter(|s| s.points != 0.0).take(limit) {
            let mut frames = s.frames().rev();
            writeln!(
                out,
                "{:>+8.2} {:>7.2}% {:>7.2}%   {}",
                s.points,
                percent(s.base, diff.base_total),
                percent(s.new, diff.new_total),
                frames.next().unwrap_or("")
            )?;
            for frame in frames {
                writeln!(out, "                             {frame}")?;
            }
        }
    }
    Ok(())
}

/// Writes the offences of a gate, one line each (for standard error).
pub fn offences(
    diff: &ProfileDiff<'_>,
    offences: &[Offence<'_>],
    out: &mut dyn Write,
) -> io::Result<()> {
    for o in offences {
        let (base, new) = match o.measure {
            super::Measure::SelfShare => (o.method.base_self, o.method.new_self),
            super::Measure::TotalShare => (o.method.base_total, o.method.new_total),
        };
        writeln!(
            out,
            "{} share of {} grew {:+.2} points (limit {:.2}): {:.2}% -> {:.2}%",
            o.measure.name(),
            o.method.name,
            o.points,
            o.limit,
            percent(base, diff.base_total),
            percent(new, diff.new_total)
        )?;
    }
    Ok(())
}

fn method_json(diff: &ProfileDiff<'_>, m: &MethodChange) -> Json {
    let (bt, nt) = (diff.base_total, diff.new_total);
    json!({
        "method": m.name,
        "presence": m.presence().name(),
        "self_points": m.self_points,
        "total_points": m.total_points,
        "base_self": m.base_self,
        "new_self": m.new_self,
        "base_total": m.base_total,
        "new_total": m.new_total,
        "base_self_percent": percent(m.base_self, bt),
        "new_self_percent": percent(m.new_self, nt),
        "base_total_percent": percent(m.base_total, bt),
        "new_total_percent": percent(m.new_total, nt),
    })
}

fn stack_json(diff: &ProfileDiff<'_>, s: &StackChange) -> Json {
    json!({
        "points": s.points,
        "base": s.base,
        "new": s.new,
        "base_percent": percent(s.base, diff.base_total),
        "new_percent": percent(s.new, diff.new_total),
        "stack": s.frames().rev().collect::<Vec<_>>(),
    })
}

/// The comparison as one JSON object: `section`, `unit`, `base` and `new` (file, total),
/// `methods` (by change of self share), `methods_by_total`, `new_methods`,
/// `vanished_methods`, with `stacks` the `stacks` (leaf first), and the gate's `offences`.
pub fn json(diff: &ProfileDiff<'_>, options: &Options<'_>, offences: &[Offence<'_>]) -> Json {
    let (section, unit) = heading(diff);
    let limit = options.limit();
    let rows = |list: Vec<&MethodChange>| -> Vec<Json> {
        list.into_iter()
            .take(limit)
            .map(|m| method_json(diff, m))
            .collect()
    };
    let mut doc = json!({
        "section": section,
        "unit": unit,
        "base": {"file": options.base_name, "total": diff.base_total},
        "new": {"file": options.new_name, "total": diff.new_total},
        "methods": rows(diff.methods.iter().collect()),
        "methods_by_total": rows(diff.methods_by_total()),
        "new_methods": rows(diff.only(Presence::New)),
        "vanished_methods": rows(diff.only(Presence::Vanished)),
        "offences": offences.iter().map(|o| json!({
            "method": o.method.name,
            "measure": o.measure.name(),
            "points": o.points,
            "limit": o.limit,
        })).collect::<Vec<_>>(),
    });
    if options.stacks {
        doc["stacks"] = diff
            .stacks()
            .iter()
            .take(limit)
            .map(|s| stack_json(diff, s))
            .collect();
    }
    doc
}
