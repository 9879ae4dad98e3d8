//! Owns the HTML page of `hprof analyze --html`: one self-contained file (no network, no
//! external script or font) with the dominator tree as a treemap (click to zoom, hover for
//! values, leak suspects outlined in red), the suspects with their paths and allocation
//! sites, and every table of the text report, collapsible, searchable and sortable.

use std::fmt::Write as _;

use serde_json::Value as Json;

use crate::units;

/// How much of the file was read, and what is missing when it is incomplete.
fn input(h: &mut String, input: &Json) {
    let _ = write!(
        h,
        "<p id=\"input\">Read {} of {} bytes ({:.1} %).{}</p>",
        input["bytes_read"],
        input["file_bytes"],
        input["fraction_read"].as_f64().unwrap_or(0.0) * 100.0,
        match input["incomplete"].as_str() {
            Some(line) => format!(" <b style=\"color:#c00\">INCOMPLETE: {}</b>", esc(line)),
            None => String::from(" The whole dump."),
        }
    );
    if let Some(lines) = input["anomalies"].as_array()
        && !lines.is_empty()
    {
        h.push_str("<p id=\"anomalies\">Inconsistencies (read in spite of them):</p><ul>");
        for line in lines {
            let _ = write!(h, "<li>{}</li>", esc(line.as_str().unwrap_or_default()));
        }
        h.push_str("</ul>");
    }
}

/// The page for the report `j` (as `--json` prints it) of the file `name`, with `treemap`,
/// the dominator tree as [`super::analyze`] builds it for the page.
pub fn page(name: &str, j: &Json, treemap: &Json) -> String {
    let mut h = String::with_capacity(64 << 10);
    let _ = write!(
        h,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>hprof analyze: {}</title><style>{STYLE}</style></head><body><h1>Heap analysis of {}</h1>",
        esc(name),
        esc(name)
    );
    input(&mut h, &j["input"]);
    totals(&mut h, &j["totals"]);
    h.push_str(
        "<h2>Dominator tree</h2><p class=\"note\">Each rectangle is an object, sized by the memory it retains, \
inside the object that dominates it. Click to zoom in, click the path above to zoom out; leak suspects are \
outlined in red (dashed: a suspect is inside).</p><div id=\"crumbs\"></div><div id=\"treemap\"></div>\
<div id=\"tip\" hidden></div>",
    );
    suspects(&mut h, j);
    classes(&mut h, j);
    dominators(&mut h, j);
    sites(&mut h, j);
    waste(&mut h, &j["waste"]);
    loaders(&mut h, &j["class_loaders"]);
    let data = serde_json::to_string(treemap).unwrap_or_else(|_| "{}".to_string());
    let _ = writeln!(
        h,
        "<script id=\"treemap-data\" type=\"application/json\">{}</script><script>{SCRIPT}</script></body></html>",
        script_safe(&data)
    );
    h
}

fn n(v: &Json) -> u64 {
    v.as_u64().unwrap_or(0)
}

fn f(v: &Json) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn st(v: &Json) -> &str {
    v.as_str().unwrap_or("?")
}

/// Escapes text for HTML.
fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// JSON inside a `<script>` element: no `</script>` or `<!--` can end it early.
fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// A table cell of bytes: human units shown, exact bytes in its tooltip and sort key.
fn bytes_cell(bytes: u64) -> String {
    format!(
        "<td data-v=\"{bytes}\" title=\"{} bytes\">{}</td>",
        units::count(bytes),
        units::bytes(bytes)
    )
}

fn count_cell(count: u64) -> String {
    format!("<td data-v=\"{count}\">{}</td>", units::count(count))
}

fn share_cell(share: f64) -> String {
    format!("<td data-v=\"{share}\">{share:.2}%</td>")
}

fn text_cell(text: &str) -> String {
    format!("<td>{}</td>", esc(text))
}

/// Opens a collapsible, searchable table: `id`, the summary line, the column headers (the
/// last one left-aligned).
fn table_start(h: &mut String, id: &str, summary: &str, headers: &[&str], open: bool) {
    let _ = write!(
        h,
        "<details class=\"section\"{}><summary>{}</summary><input class=\"filter\" type=\"search\" placeholder=\"search\" data-table=\"{id}\">\
<table class=\"data\" id=\"{id}\"><thead><tr>",
        if open { " open" } else { "" },
        summary
    );
    for header in headers {
        let _ = write!(h, "<th>{}</th>", esc(header));
    }
    h.push_str("</tr></thead><tbody>");
}

fn table_end(h: &mut String) {
    h.push_str("</tbody></table></details>");
}

fn totals(h: &mut String, t: &Json) {
    let card = |h: &mut String, label: &str, value: String| {
        let _ = write!(
            h,
            "<div class=\"card\"><div class=\"label\">{label}</div><div class=\"value\">{value}</div></div>"
        );
    };
    h.push_str("<div id=\"totals\">");
    card(
        h,
        "objects",
        format!(
            "{} <small>{}</small>",
            units::count(n(&t["objects"])),
            units::bytes(n(&t["shallow_bytes"]))
        ),
    );
    card(
        h,
        "reachable",
        format!(
            "<span title=\"{} bytes\">{}</span> <small>{} objects</small>",
            units::count(n(&t["reachable_bytes"])),
            units::bytes(n(&t["reachable_bytes"])),
            units::count(n(&t["reachable_objects"]))
        ),
    );
    card(
        h,
        "only weakly reachable",
        units::bytes(n(&t["weakly_reachable_bytes"])),
    );
    card(
        h,
        "unreachable",
        format!(
            "{} <small>{} objects</small>",
            units::bytes(n(&t["unreachable_bytes"])),
            units::count(n(&t["unreachable_objects"]))
        ),
    );
    card(h, "GC roots", units::count(n(&t["gc_roots"])));
    h.push_str("</div>");
}

fn path_html(path: &Json) -> String {
    if !path.is_object() {
        return "not reachable from a GC root without weak references".to_string();
    }
    let root = &path["root"];
    let mut text = format!("GC root: {}", st(&root["kind"]));
    if let Some(thread) = root["thread"].as_str() {
        let _ = write!(text, ", thread \"{thread}\"");
    }
    if let Some(frame) = root["frame"].as_str() {
        let _ = write!(text, ", frame {frame}");
    }
    text.push('\n');
    for step in path["steps"].as_array().into_iter().flatten() {
        let object = format!("{} @ {}", st(&step["class"]), st(&step["id"]));
        match step["via"].as_str() {
            Some(via) => {
                let _ = writeln!(text, "  .{via} -> {object}");
            }
            None => {
                let _ = writeln!(text, "  {object}");
            }
        }
    }
    esc(&text)
}

/// Where what a suspect or dominator retains was allocated.
fn allocated(h: &mut String, b: &Json, id: &str) {
    if !b.is_object() {
        return;
    }
    let whole = n(&b["bytes"]);
    let pct = |bytes: u64| {
        if whole == 0 {
            0.0
        } else {
            bytes as f64 * 100.0 / whole as f64
        }
    };
    table_start(
        h,
        &format!("{id}-frames"),
        &format!(
            "Allocated in ({} of {} objects joined to their allocation site; ± two standard errors)",
            units::count(n(&b["samples"])),
            units::count(n(&b["objects"]))
        ),
        &["share", "±", "bytes", "frame"],
        true,
    );
    for fr in b["allocated_in"].as_array().into_iter().flatten() {
        let _ = write!(
            h,
            "<tr>{}<td>{:.2}%</td>{}{}</tr>",
            share_cell(f(&fr["share"])),
            pct(n(&fr["error_bytes"])),
            bytes_cell(n(&fr["bytes"])),
            text_cell(st(&fr["frame"]))
        );
    }
    table_end(h);
    table_start(
        h,
        &format!("{id}-sites"),
        "By allocation site",
        &[
            "share", "±", "bytes", "objects", "samples", "class", "trace",
        ],
        false,
    );
    for site in b["sites"].as_array().into_iter().flatten() {
        let frames: Vec<&str> = site["frames"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str())
            .collect();
        let _ = write!(
            h,
            "<tr>{}<td>{:.2}%</td>{}{}{}{}{}</tr>",
            share_cell(f(&site["share"])),
            pct(n(&site["error_bytes"])),
            bytes_cell(n(&site["bytes"])),
            count_cell(n(&site["objects"])),
            count_cell(n(&site["samples"])),
            text_cell(st(&site["class"])),
            text_cell(&frames.join(" ← "))
        );
    }
    table_end(h);
}

fn suspects(h: &mut String, j: &Json) {
    let _ = write!(
        h,
        "<h2>Leak suspects</h2><p class=\"note\">Objects and classes retaining more than {}% of the reachable heap.</p><div id=\"suspects\">",
        j["suspect_threshold_percent"]
    );
    let objects = j["suspects"]["objects"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let classes = j["suspects"]["classes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if objects.is_empty() && classes.is_empty() {
        h.push_str("<p>None.</p>");
    }
    for (i, o) in objects.iter().enumerate() {
        let p = &o["accumulation_point"];
        let _ = write!(
            h,
            "<div class=\"suspect\" data-id=\"{}\"><b>{} @ {}</b> retains <span title=\"{} bytes\">{}</span> ({:.2}%)<br>\
accumulation point: {} @ {} retains {} in {} objects it dominates<pre>{}</pre>",
            esc(st(&o["id"])),
            esc(st(&o["class"])),
            esc(st(&o["id"])),
            units::count(n(&o["retained"])),
            units::bytes(n(&o["retained"])),
            f(&o["share"]),
            esc(st(&p["class"])),
            esc(st(&p["id"])),
            units::bytes(n(&p["retained"])),
            units::count(n(&o["accumulated_in"])),
            path_html(&o["path"])
        );
        allocated(h, &o["allocated"], &format!("suspect{i}"));
        suspect_loaders(h, &o["class_loaders"]);
        h.push_str("</div>");
    }
    for (i, c) in classes.iter().enumerate() {
        let _ = write!(
            h,
            "<div class=\"suspect\"><b>class {}</b>: {} instances retain {} ({:.2}%)<pre>{}</pre>",
            esc(st(&c["class"])),
            units::count(n(&c["instances"])),
            units::bytes(n(&c["retained"])),
            f(&c["share"]),
            path_html(&c["path"])
        );
        allocated(h, &c["allocated"], &format!("classsuspect{i}"));
        suspect_loaders(h, &c["class_loaders"]);
        h.push_str("</div>");
    }
    h.push_str("</div>");
}

fn suspect_loaders(h: &mut String, loaders: &Json) {
    let list = loaders.as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        return;
    }
    h.push_str("<div class=\"loaders\">Class loaders of what it retains: ");
    let parts: Vec<String> = list
        .iter()
        .map(|l| {
            let count = n(&l["loaders"]);
            let who = if count > 1 {
                format!("{} loaders {}", units::count(count), st(&l["loader"]))
            } else {
                st(&l["loader"]).to_string()
            };
            format!(
                "{} {:.1}% ({})",
                esc(&who),
                f(&l["share"]),
                units::bytes(n(&l["bytes"]))
            )
        })
        .collect();
    h.push_str(&parts.join("; "));
    h.push_str("</div>");
}

fn classes(h: &mut String, j: &Json) {
    h.push_str("<h2>Top consumers</h2>");
    table_start(
        h,
        "classes",
        "Classes by retained size",
        &["retained", "share", "instances", "shallow", "class"],
        true,
    );
    for c in j["classes"].as_array().into_iter().flatten() {
        let _ = write!(
            h,
            "<tr>{}{}{}{}{}</tr>",
            bytes_cell(n(&c["retained"])),
            share_cell(f(&c["share"])),
            count_cell(n(&c["instances"])),
            bytes_cell(n(&c["shallow"])),
            text_cell(st(&c["class"]))
        );
    }
    table_end(h);
}

fn dominators(h: &mut String, j: &Json) {
    h.push_str("<details class=\"section\" open><summary>Dominator tree (biggest retained sizes)</summary><div id=\"dominators\">");
    fn nodes(h: &mut String, list: &Json) {
        for o in list.as_array().into_iter().flatten() {
            let mut line = format!(
                "<span title=\"{} bytes\">{}</span> ({:.2}%) {} @ {} (shallow {})",
                units::count(n(&o["retained"])),
                units::bytes(n(&o["retained"])),
                f(&o["share"]),
                esc(st(&o["class"])),
                esc(st(&o["id"])),
                units::bytes(n(&o["shallow"]))
            );
            if let Some(top) = o["allocated"]["allocated_in"]
                .as_array()
                .and_then(|a| a.first())
            {
                let _ = write!(
                    line,
                    " <i>allocated mostly in {} ({:.1}%)</i>",
                    esc(st(&top["frame"])),
                    f(&top["share"])
                );
            }
            let kids = &o["children"];
            if kids.as_array().is_some_and(|k| !k.is_empty()) {
                let _ = write!(h, "<details><summary>{line}</summary>");
                nodes(h, kids);
                h.push_str("</details>");
            } else {
                let _ = write!(h, "<div class=\"leaf\">{line}</div>");
            }
        }
    }
    nodes(h, &j["dominator_tree"]);
    h.push_str("</div></details>");
}

fn sites(h: &mut String, j: &Json) {
    let a = &j["allocation_sites"];
    if !a.is_object() {
        return;
    }
    let _ = write!(
        h,
        "<h2>Retained by allocation site</h2><p class=\"note\">The reachable heap's bytes by the code that allocated them: \
{} objects joined to their site by the agent{}, the others estimated from them and from the sites' live counts.</p><div id=\"sites\">",
        units::count(n(&a["objects_joined"])),
        if a["sampled"].as_bool().unwrap_or(false) {
            format!(
                " (allocations sampled every {})",
                units::bytes(n(&a["sampling_interval"]))
            )
        } else {
            String::new()
        }
    );
    allocated(h, &a["heap"], "heap");
    h.push_str("</div>");
}

fn waste(h: &mut String, w: &Json) {
    h.push_str("<h2>Waste</h2>");
    let d = &w["duplicate_strings"];
    table_start(
        h,
        "strings",
        &format!(
            "Duplicate strings: {} values held by {} String objects, {} wasted",
            units::count(n(&d["values"])),
            units::count(n(&d["copies"])),
            units::bytes(n(&d["wasted"]))
        ),
        &["wasted", "copies", "length", "value"],
        true,
    );
    for v in d["top"].as_array().into_iter().flatten() {
        let _ = write!(
            h,
            "<tr>{}{}{}<td class=\"value\">{}</td></tr>",
            bytes_cell(n(&v["wasted"])),
            count_cell(n(&v["copies"])),
            count_cell(n(&v["length"])),
            esc(st(&v["value"]))
        );
    }
    table_end(h);
    table_start(
        h,
        "collections",
        &format!(
            "Collections: {} wasted (empty; sparse: under 25% full; oversized: 25 to 50% full; wasted: what right-sized ones would save)",
            units::bytes(n(&w["collections_wasted"]))
        ),
        &[
            "wasted",
            "count",
            "empty",
            "empty wasted",
            "sparse",
            "sparse wasted",
            "oversized",
            "oversized wasted",
            "class",
        ],
        true,
    );
    for r in w["collections"].as_array().into_iter().flatten() {
        let _ = write!(
            h,
            "<tr>{}{}{}{}{}{}{}{}{}</tr>",
            bytes_cell(n(&r["wasted"])),
            count_cell(n(&r["count"])),
            count_cell(n(&r["empty"]["count"])),
            bytes_cell(n(&r["empty"]["wasted"])),
            count_cell(n(&r["sparse"]["count"])),
            bytes_cell(n(&r["sparse"]["wasted"])),
            count_cell(n(&r["oversized"]["count"])),
            bytes_cell(n(&r["oversized"]["wasted"])),
            text_cell(st(&r["class"]))
        );
    }
    table_end(h);
    table_start(
        h,
        "nullarrays",
        &format!(
            "Object arrays mostly null: {} in null slots",
            units::bytes(n(&w["null_arrays_wasted"]))
        ),
        &[
            "null slots",
            "arrays",
            "elements",
            "nulls",
            "class",
            "biggest",
        ],
        false,
    );
    for r in w["null_arrays"].as_array().into_iter().flatten() {
        let _ = write!(
            h,
            "<tr>{}{}{}{}{}{}</tr>",
            bytes_cell(n(&r["wasted"])),
            count_cell(n(&r["count"])),
            count_cell(n(&r["length"])),
            count_cell(n(&r["nulls"])),
            text_cell(st(&r["class"])),
            text_cell(st(&r["biggest"]))
        );
    }
    table_end(h);
}

fn loaders(h: &mut String, l: &Json) {
    h.push_str("<h2>Class loaders</h2>");
    table_start(
        h,
        "loaders",
        &format!(
            "{} class loaders, by what the instances of their classes retain",
            units::count(n(&l["count"]))
        ),
        &[
            "retained",
            "share",
            "classes",
            "instances",
            "loader retains",
            "loader",
        ],
        true,
    );
    for r in l["loaders"].as_array().into_iter().flatten() {
        let _ = write!(
            h,
            "<tr>{}{}{}{}{}{}</tr>",
            bytes_cell(n(&r["retained"])),
            share_cell(f(&r["share"])),
            count_cell(n(&r["classes"])),
            count_cell(n(&r["instances"])),
            bytes_cell(n(&r["loader_retained"])),
            text_cell(&format!("{} @ {}", st(&r["loader"]), st(&r["id"])))
        );
    }
    table_end(h);
    table_start(
        h,
        "dupclasses",
        &format!(
            "Classes defined by several loaders: {}",
            units::count(n(&l["duplicate_class_count"]))
        ),
        &["loaders", "instances", "shallow", "class", "loader classes"],
        false,
    );
    for d in l["duplicate_classes"].as_array().into_iter().flatten() {
        let mut names: Vec<&str> = d["loader_names"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str())
            .collect();
        names.dedup();
        let _ = write!(
            h,
            "<tr>{}{}{}{}{}</tr>",
            count_cell(n(&d["loaders"])),
            count_cell(n(&d["instances"])),
            bytes_cell(n(&d["shallow"])),
            text_cell(st(&d["class"])),
            text_cell(&names.join(", "))
        );
    }
    table_end(h);
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1em 2em;color:#222}\
h2{margin-top:1.6em;border-bottom:1px solid #ddd}\
.note{color:#555;font-size:.9em}\
#totals{display:flex;flex-wrap:wrap;gap:.8em}\
.card{border:1px solid #ddd;border-radius:6px;padding:.4em .8em;min-width:9em}\
.card .label{color:#666;font-size:.8em}.card .value{font-size:1.3em}\
table.data{border-collapse:collapse;margin:.4em 0}\
table.data td,table.data th{padding:2px 8px;text-align:right;white-space:nowrap}\
table.data td:last-child,table.data th:last-child{text-align:left;white-space:normal}\
table.data th{cursor:pointer;background:#eee;position:sticky;top:0}\
table.data tr:nth-child(even){background:#f6f6f6}\
td.value{font-family:monospace;text-align:left!important;white-space:pre-wrap!important;max-width:60em;overflow-wrap:anywhere}\
details{margin:.3em 0}details details{margin-left:1.5em}summary{cursor:pointer}\
.leaf{margin-left:1.5em}\
details.section>summary{font-weight:600}\
input.filter{margin:.3em 0 .3em 1em}\
pre{font-family:monospace;background:#f8f8f8;padding:.4em}\
.suspect{border:1px solid #c00;border-radius:6px;padding:.5em;margin:.6em 0}\
.loaders{font-size:.9em;color:#444}\
#crumbs{margin:.3em 0;font-size:.9em}#crumbs a{color:#06c;cursor:pointer;text-decoration:underline}\
#treemap{position:relative;width:100%;height:520px;border:1px solid #999;overflow:hidden;background:#fafafa}\
.tm-node{position:absolute;box-sizing:border-box;border:1px solid #fff;overflow:hidden;font-size:11px;line-height:14px;padding:1px 3px;cursor:pointer;color:#111}\
.tm-node.tm-other{background:#ddd!important;cursor:default;color:#555}\
.tm-node.suspect{border:3px solid #d00;z-index:2}\
.tm-node.holds-suspect{border:2px dashed #d00}\
.tm-node:hover{filter:brightness(1.08)}\
#tip{position:fixed;background:#fff;border:1px solid #888;padding:4px 8px;font-size:12px;pointer-events:none;z-index:10;box-shadow:2px 2px 6px rgba(0,0,0,.2);max-width:40em}";

const SCRIPT: &str = r#"(function () {
  "use strict";
  function human(b) {
    if (b < 1024) return b + " B";
    var u = ["KB", "MB", "GB", "TB", "PB"], v = b / 1024, i = 0;
    while (v >= 1023.95 && i < u.length - 1) { v /= 1024; i++; }
    return (v >= 99.95 ? v.toFixed(0) : v >= 9.995 ? v.toFixed(1) : v.toFixed(2)) + " " + u[i];
  }
  function commas(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  // Tables: search filters rows, a click on a header sorts by that column.
  Array.prototype.forEach.call(document.querySelectorAll("input.filter"), function (input) {
    input.addEventListener("input", function () {
      var q = input.value.toLowerCase();
      var table = document.getElementById(input.getAttribute("data-table"));
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        row.style.display = !q || row.textContent.toLowerCase().indexOf(q) >= 0 ? "" : "none";
      });
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll("table.data th"), function (th) {
    th.addEventListener("click", function () {
      var table = th.closest("table"), col = th.cellIndex, body = table.tBodies[0];
      var desc = th.getAttribute("data-sort") !== "desc";
      th.setAttribute("data-sort", desc ? "desc" : "asc");
      var rows = Array.prototype.slice.call(body.rows);
      function key(r) {
        var c = r.cells[col]; if (!c) return "";
        var v = c.getAttribute("data-v");
        return v === null ? c.textContent : parseFloat(v);
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b), o = x < y ? -1 : x > y ? 1 : 0;
        return desc ? -o : o;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  // The treemap.
  var data = JSON.parse(document.getElementById("treemap-data").textContent);
  var box = document.getElementById("treemap"), crumbs = document.getElementById("crumbs");
  var tip = document.getElementById("tip");
  var total = data.r || 1;
  (function mark(n) {
    var holds = false;
    (n.c || []).forEach(function (k) { if (mark(k)) holds = true; });
    n.h = holds;
    return holds || !!n.x;
  })(data);
  function hue(name) {
    var h = 0; for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) | 0;
    return Math.abs(h) % 360;
  }
  function worst(row, sum, side, scale) {
    var len = sum * scale / side, w = 0;
    row.forEach(function (it) {
      var o = it.v * scale / len, r = Math.max(len / o, o / len);
      if (r > w) w = r;
    });
    return w;
  }
  function squarify(items, x, y, w, h) {
    var out = [], rest = items.filter(function (it) { return it.v > 0; });
    var sum = rest.reduce(function (a, it) { return a + it.v; }, 0);
    while (rest.length && w > 0.5 && h > 0.5) {
      var scale = w * h / sum, side = Math.min(w, h), row = [], rs = 0, best = Infinity;
      while (rest.length) {
        var it = rest[0], s = rs + it.v, r = worst(row.concat([it]), s, side, scale);
        if (row.length && r > best) break;
        row.push(it); rs = s; best = r; rest.shift();
      }
      var len = rs * scale / side, at;
      if (w >= h) {
        at = y;
        row.forEach(function (it) { var l = it.v * scale / len; out.push({n: it.n, x: x, y: at, w: len, h: l}); at += l; });
        x += len; w -= len;
      } else {
        at = x;
        row.forEach(function (it) { var l = it.v * scale / len; out.push({n: it.n, x: at, y: y, w: l, h: len}); at += l; });
        y += len; h -= len;
      }
      sum -= rs;
    }
    return out;
  }
  function describe(n) {
    var t = n.l + (n.i ? " @ " + n.i : "") + "\nretains " + human(n.r) + " (" + commas(n.r) + " bytes, " +
      (100 * n.r / total).toFixed(2) + "% of the reachable heap)";
    if (n.s !== undefined) t += "\nshallow " + human(n.s);
    if (n.x) t += "\nleak suspect";
    return t;
  }
  var path = [data];
  // Draws the children of `n` in the rectangle, and theirs inside them while they are big
  // enough (`trail`: the nodes from the zoomed one down to `n`, excluded).
  function draw(n, parent, x, y, w, h, depth, trail) {
    var kids = (n.c || []).map(function (k) { return {n: k, v: k.r}; });
    squarify(kids, x, y, w, h).forEach(function (r) {
      var k = r.n, d = document.createElement("div");
      d.className = "tm-node" + (k.g ? " tm-other" : "") + (k.x ? " suspect" : k.h ? " holds-suspect" : "");
      d.style.left = r.x + "px"; d.style.top = r.y + "px";
      d.style.width = Math.max(r.w, 0) + "px"; d.style.height = Math.max(r.h, 0) + "px";
      if (!k.g) d.style.background = "hsl(" + hue(k.l) + ",55%," + (70 + 6 * depth) + "%)";
      d.setAttribute("data-id", k.i || "");
      d.setAttribute("data-label", k.l);
      if (r.w > 40 && r.h > 14) d.textContent = k.l + " " + human(k.r);
      d.addEventListener("mousemove", function (e) {
        e.stopPropagation();
        tip.hidden = false; tip.textContent = describe(k); tip.style.whiteSpace = "pre";
        tip.style.left = (e.clientX + 12) + "px"; tip.style.top = (e.clientY + 12) + "px";
      });
      d.addEventListener("mouseleave", function () { tip.hidden = true; });
      d.addEventListener("click", function (e) {
        e.stopPropagation();
        if (k.c && k.c.length) zoom(path.concat(trail, [k]));
      });
      parent.appendChild(d);
      if (depth < 3 && k.c && k.c.length && r.w > 60 && r.h > 44) {
        draw(k, d, 2, 16, r.w - 6, r.h - 20, depth + 1, trail.concat([k]));
      }
    });
  }
  function zoom(p) {
    path = p;
    box.textContent = "";
    var n = path[path.length - 1];
    draw(n, box, 0, 0, box.clientWidth, box.clientHeight, 0, []);
    crumbs.textContent = "";
    path.forEach(function (c, i) {
      if (i) crumbs.appendChild(document.createTextNode(" › "));
      var a = document.createElement(i === path.length - 1 ? "b" : "a");
      a.textContent = c.l + " " + human(c.r);
      if (i < path.length - 1) a.addEventListener("click", function () { zoom(path.slice(0, i + 1)); });
      crumbs.appendChild(a);
    });
  }
  window.hprofTreemap = {zoom: function (id) {
    function find(n, trail) {
      if (n.i === id) return trail.concat([n]);
      for (var i = 0; i < (n.c || []).length; i++) {
        var f = find(n.c[i], trail.concat([n])); if (f) return f;
      }
      return null;
    }
    var p = find(data, []); if (p) zoom(p); return !!p;
  }, depth: function () { return path.length; }};
  zoom(path);
  window.addEventListener("resize", function () { zoom(path); });
})();
"#;
