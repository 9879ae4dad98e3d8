//! `hprof analyze` and `hprof path`: what holds the memory of a heap dump (dominator tree,
//! retained sizes, leak suspects, paths from GC roots), rendered as text, JSON or HTML.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use hprof_heap::{Analysis, HeapGraph, Paths, Progress, RootKind, roots_of};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value as Json, json};

use crate::input::Input;

/// Arguments of `hprof analyze`.
#[derive(Debug, Args)]
#[command(
    about = "Find what holds the memory of a heap dump: retained sizes, dominator tree, leak suspects",
    long_about = "Reads a heap dump (HPROF 1.0.1 or 1.0.2, from the hprof agent or `jcmd \
GC.heap_dump`, gzip-compressed or not) and prints: totals; classes by retained size (the memory \
the set of a class's instances retains); the dominator tree's biggest objects; leak suspects \
(objects and classes retaining more than a share of the reachable heap), each with its shortest \
path from a GC root and its accumulation point.\n\nShallow sizes are those of a 64-bit HotSpot \
JVM with compressed oops, as VisualVM's heap library computes them (see docs/formats.md)."
)]
pub struct AnalyzeArgs {
    /// The heap dump to read (`-` reads standard input).
    pub file: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write a self-contained HTML report to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// How many levels of the dominator tree to show.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub depth: usize,
    /// How many rows each table and each dominator tree level shows (0 shows all).
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub top: usize,
    /// Leak suspects retain more than this percentage of the reachable heap.
    #[arg(long, default_value_t = 10.0, value_name = "PERCENT", value_parser = parse_share)]
    pub threshold: f64,
    /// Follow the referent of weak, soft, phantom and final references in paths.
    #[arg(long)]
    pub include_weak: bool,
    /// Accept a truncated dump: analyse what was read, say what is missing, and exit 0.
    #[arg(long)]
    pub allow_truncated: bool,
}

/// Arguments of `hprof path`.
#[derive(Debug, Args)]
#[command(
    about = "Print the shortest path from a GC root to an object of a heap dump",
    long_about = "Prints the shortest chain of references from a GC root to the object (its id \
in hex, 0x..., or decimal), with the root's kind (and thread and frame for stack roots) and the \
field or array index at every step. The referent of weak, soft, phantom and final references \
is not followed unless --include-weak, as in Eclipse MAT."
)]
pub struct PathArgs {
    /// The heap dump to read.
    pub file: PathBuf,
    /// The object's id: hex with 0x, or decimal.
    #[arg(value_parser = parse_id)]
    pub object: u64,
    /// Follow the referent of weak, soft, phantom and final references.
    #[arg(long)]
    pub include_weak: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Accept a truncated dump: search what was read, say what is missing, and exit 0.
    #[arg(long)]
    pub allow_truncated: bool,
}

/// Opens a heap dump and builds its graph from its whole records (all of them, unless
/// `allow_truncated` accepts a file cut inside one); returns what is missing from it too.
fn open_graph<'a>(
    input: &'a Input,
    name: &str,
    allow_truncated: bool,
    bar: &Bar,
) -> Result<(HeapGraph<'a>, hprof_format::Completeness)> {
    let mut completeness = crate::input::completeness(input, name, allow_truncated)?;
    let whole = &input.bytes()[..completeness.bytes_read() as usize];
    let graph = HeapGraph::build(whole, bar).with_context(|| name.to_string())?;
    completeness.require_heap_dump();
    completeness.heap_counts(graph.len() as u64, graph.roots().len() as u64);
    Ok((graph, completeness))
}

fn parse_share(text: &str) -> std::result::Result<f64, String> {
    match text.trim_end_matches('%').parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 100.0 => Ok(v),
        _ => Err(format!(
            "`{text}` is not a percentage: a number above 0 and at most 100"
        )),
    }
}

fn parse_id(text: &str) -> std::result::Result<u64, String> {
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|_| format!("`{text}` is not an object id: hex with 0x, or decimal"))
}

/// The progress of the analysis on stderr, when it is a terminal and the file is big
/// enough for phases to last (100 MB and more): one line per phase, with a bar and a
/// percentage when the phase knows its amount of work, else a spinner, and the time spent.
struct Bar(Option<ProgressBar>);

impl Bar {
    fn new(input: &Input) -> Bar {
        Bar(
            (input.bytes().len() >= 100 << 20 && std::io::stderr().is_terminal()).then(|| {
                let bar = ProgressBar::new(0);
                bar.enable_steady_tick(Duration::from_millis(100));
                bar
            }),
        )
    }

    fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Bar {
    /// Clears the line on every exit path, errors included.
    fn drop(&mut self) {
        self.finish();
    }
}

impl Progress for Bar {
    fn phase(&self, name: &str, total: u64) {
        let Some(bar) = &self.0 else { return };
        let template = if total > 0 {
            "{msg:38} [{bar:30}] {percent:>3}% {elapsed:>4}"
        } else {
            "{msg:38} {spinner} {elapsed:>4}"
        };
        bar.set_style(
            ProgressStyle::with_template(template)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_length(total);
        bar.set_position(0);
        bar.reset_elapsed();
        bar.set_message(name.to_string());
    }

    fn advance(&self, done: u64) {
        if let Some(bar) = &self.0 {
            bar.inc(done);
        }
    }
}

/// Runs `hprof analyze`.
pub fn run(args: &AnalyzeArgs, out: &mut dyn Write) -> Result<()> {
    let name = args.file.display().to_string();
    let input = Input::open(&args.file)?;
    let bar = Bar::new(&input);
    let (mut graph, completeness) = open_graph(&input, &name, args.allow_truncated, &bar)?;
    let weak = args.include_weak.then(|| {
        bar.phase("paths through weak references", 0);
        Paths::new(&graph, true)
    });
    let (analysis, strong) = Analysis::new(&mut graph, &bar);
    let paths = weak.unwrap_or(strong);
    bar.phase("report", 0);
    let mut report = Report::new(&graph, &analysis, &paths, args);
    report.json["input"] = json!({
        "file_bytes": completeness.file_len(),
        "bytes_read": completeness.bytes_read(),
        "fraction_read": completeness.fraction_read(),
        "complete": completeness.is_complete(),
        "incomplete": completeness.summary(),
    });
    bar.finish();
    if let Some(path) = &args.html {
        let mut file = hprof_outfile::create(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        file.write_all(report.html(&name).as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if args.json {
        let mut doc = report.json;
        doc["file"] = json!(name);
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)?;
    } else {
        out.write_all(report.text(&name).as_bytes())?;
    }
    crate::input::finish_reading(&name, &completeness, args.allow_truncated)
}

/// Runs `hprof path`.
pub fn run_path(args: &PathArgs, out: &mut dyn Write) -> Result<()> {
    let name = args.file.display().to_string();
    let input = Input::open(&args.file)?;
    let bar = Bar::new(&input);
    let (graph, completeness) = open_graph(&input, &name, args.allow_truncated, &bar)?;
    let Some(node) = graph.node(args.object) else {
        bar.finish();
        crate::input::finish_reading(&name, &completeness, args.allow_truncated)?;
        bail!("{name}: no object with id {:#x} in the dump", args.object);
    };
    bar.phase("paths from GC roots", 0);
    let paths = Paths::new(&graph, args.include_weak);
    bar.finish();
    let path = paths.path(node).map(|p| path_json(&graph, &p));
    if args.json {
        let doc = json!({"file": name, "object": hex(args.object), "path": path});
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)?;
        return Ok(());
    }
    match path {
        Some(path) => out.write_all(path_text(&path, "").as_bytes())?,
        None if args.include_weak => writeln!(
            out,
            "{:#x} is not reachable from any GC root (it is garbage)",
            args.object
        )?,
        None => writeln!(
            out,
            "{:#x} is not reachable from any GC root except through weak, soft, phantom or \
final references (try --include-weak)",
            args.object
        )?,
    }
    crate::input::finish_reading(&name, &completeness, args.allow_truncated)
}

fn hex(id: u64) -> String {
    format!("{id:#x}")
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64) * 100.0 / (whole as f64)
    }
}

/// A node's label: the class name, for class objects `class X`.
fn label(graph: &HeapGraph<'_>, node: u32) -> String {
    match graph.described_class(node) {
        Some(class) if graph.class(node).name == "java.lang.Class" => {
            format!("class {}", class.name)
        }
        _ => graph.class(node).name.clone(),
    }
}

fn object_json(graph: &HeapGraph<'_>, analysis: &Analysis, node: u32) -> Json {
    json!({
        "id": hex(graph.id(node)),
        "class": label(graph, node),
        "shallow": graph.shallow(node),
        "retained": analysis.retained[node as usize],
        "share": percent(analysis.retained[node as usize], analysis.reachable_bytes),
    })
}

/// A path as JSON: the root record, then every object with the reference that reaches it.
fn path_json(graph: &HeapGraph<'_>, path: &[u32]) -> Json {
    let first = path[0];
    let root = roots_of(graph, first).first().map(|r| {
        let mut root = json!({"kind": r.kind.name()});
        if r.kind.is_stack() || r.kind == RootKind::ThreadObject {
            root["thread"] = json!(graph.thread_name(r.thread_serial));
        }
        if r.frame != u32::MAX
            && let Some(frame) = graph.thread_frame(r.thread_serial, r.frame)
        {
            root["frame"] = json!(format!("{} ({})", frame.method, frame.location));
        }
        root
    });
    let steps: Vec<Json> = path
        .iter()
        .enumerate()
        .map(|(i, &node)| {
            let mut step = json!({"id": hex(graph.id(node)), "class": label(graph, node)});
            if i > 0 {
                step["via"] = json!(graph.reference_name(path[i - 1], node));
            }
            step
        })
        .collect();
    json!({"root": root, "steps": steps})
}

/// A path as indented text lines.
fn path_text(path: &Json, indent: &str) -> String {
    let mut text = String::new();
    let root = &path["root"];
    let mut head = format!("GC root: {}", root["kind"].as_str().unwrap_or("?"));
    if let Some(thread) = root["thread"].as_str() {
        let _ = write!(head, ", thread \"{thread}\"");
    }
    if let Some(frame) = root["frame"].as_str() {
        let _ = write!(head, ", frame {frame}");
    }
    let _ = writeln!(text, "{indent}{head}");
    for step in path["steps"].as_array().into_iter().flatten() {
        let object = format!(
            "{} @ {}",
            step["class"].as_str().unwrap_or("?"),
            step["id"].as_str().unwrap_or("?")
        );
        match step["via"].as_str() {
            Some(via) => {
                let _ = writeln!(text, "{indent}  .{via} -> {object}");
            }
            None => {
                let _ = writeln!(text, "{indent}  {object}");
            }
        }
    }
    text
}

/// Everything `hprof analyze` reports, as one JSON document the renderers read.
struct Report {
    json: Json,
}

impl Report {
    fn new(
        graph: &HeapGraph<'_>,
        analysis: &Analysis,
        paths: &Paths,
        args: &AnalyzeArgs,
    ) -> Report {
        let top = if args.top == 0 { usize::MAX } else { args.top };
        let total = analysis.reachable_bytes;
        let totals = json!({
            "objects": analysis.objects,
            "shallow_bytes": analysis.shallow_bytes,
            "reachable_objects": analysis.reachable_objects,
            "reachable_bytes": analysis.reachable_bytes,
            "weakly_reachable_objects": analysis.weakly_reachable_objects,
            "weakly_reachable_bytes": analysis.weakly_reachable_bytes,
            "unreachable_objects": analysis.objects - analysis.reachable_objects - analysis.weakly_reachable_objects,
            "unreachable_bytes": analysis.shallow_bytes - analysis.reachable_bytes - analysis.weakly_reachable_bytes,
            "gc_roots": graph.roots().len(),
            "heap_dumps_in_file": graph.dumps(),
        });
        let mut order: Vec<usize> = (0..graph.classes().len())
            .filter(|&c| analysis.class_count[c] > 0 || analysis.class_shallow[c] > 0)
            .collect();
        order.sort_by_key(|&c| {
            (
                std::cmp::Reverse(analysis.class_retained[c]),
                graph.classes()[c].name.clone(),
            )
        });
        let class_row = |c: usize| {
            json!({
                "class": graph.classes()[c].name,
                "instances": analysis.class_count[c],
                "shallow": analysis.class_shallow[c],
                "retained": analysis.class_retained[c],
                "share": percent(analysis.class_retained[c], total),
            })
        };
        let classes: Vec<Json> = order.iter().take(top).map(|&c| class_row(c)).collect();
        let dominators = tree(graph, analysis, analysis.super_root(), args.depth, top);

        let threshold = (total as f64 * args.threshold / 100.0) as u64;
        let path_of = |node: u32| paths.path(node).map(|p| path_json(graph, &p));
        let suspect_nodes = analysis.suspects(graph, threshold);
        let object_suspects: Vec<Json> = suspect_nodes
            .iter()
            .copied()
            .map(|node| {
                let point = analysis.accumulation_point(node);
                let mut s = object_json(graph, analysis, node);
                s["path"] = json!(path_of(node));
                s["accumulation_point"] = object_json(graph, analysis, point);
                s["accumulated_in"] = json!(analysis.children(point).len());
                s
            })
            .collect();
        // Classes whose instances together retain over the threshold, though none alone
        // does (many small objects), outside what the object suspects already hold, with
        // their biggest instance.
        let outside = if suspect_nodes.is_empty() {
            analysis.class_retained.clone()
        } else {
            analysis.class_retained_excluding(graph, &suspect_nodes)
        };
        let mut biggest_retained = vec![0u64; graph.classes().len()];
        for v in 0..graph.len() as u32 {
            let c = graph.class_of(v) as usize;
            biggest_retained[c] = biggest_retained[c].max(analysis.retained[v as usize]);
        }
        let class_suspects: Vec<Json> = order
            .iter()
            .filter(|&&c| {
                outside[c] > threshold
                    && biggest_retained[c] <= threshold
                    && analysis.class_count[c] > 1
            })
            .map(|&c| {
                let mut s = class_row(c);
                s["retained_outside_object_suspects"] = json!(outside[c]);
                let biggest = (0..graph.len() as u32)
                    .filter(|&v| graph.class_of(v) as usize == c)
                    .max_by_key(|&v| analysis.retained[v as usize]);
                if let Some(b) = biggest {
                    s["biggest_instance"] = object_json(graph, analysis, b);
                    s["path"] = json!(path_of(b));
                }
                s
            })
            .collect();
        Report {
            json: json!({
                "totals": totals,
                "classes": classes,
                "dominator_tree": dominators,
                "suspect_threshold_percent": args.threshold,
                "suspects": {"objects": object_suspects, "classes": class_suspects},
            }),
        }
    }

    fn text(&self, name: &str) -> String {
        let j = &self.json;
        let t = &j["totals"];
        let n = |v: &Json| v.as_u64().unwrap_or(0);
        let mut s = String::new();
        let _ = writeln!(s, "{name}: heap analysis\n");
        let input = &j["input"];
        let _ = writeln!(
            s,
            "Read: {} of {} bytes ({:.1} %){}",
            n(&input["bytes_read"]),
            n(&input["file_bytes"]),
            input["fraction_read"].as_f64().unwrap_or(0.0) * 100.0,
            match input["incomplete"].as_str() {
                Some(line) => format!("\nINCOMPLETE: {line}\n"),
                None => String::from(", the whole dump\n"),
            }
        );
        if n(&t["heap_dumps_in_file"]) > 1 {
            let _ = writeln!(
                s,
                "The file holds {} heap dumps (one per dump request); this is the last one.\n",
                n(&t["heap_dumps_in_file"])
            );
        }
        let _ = writeln!(
            s,
            "Objects: {} ({} bytes shallow), {} GC roots",
            n(&t["objects"]),
            n(&t["shallow_bytes"]),
            n(&t["gc_roots"])
        );
        let _ = writeln!(
            s,
            "Reachable from GC roots: {} objects, {} bytes",
            n(&t["reachable_objects"]),
            n(&t["reachable_bytes"])
        );
        let _ = writeln!(
            s,
            "Reachable only through weak, soft, phantom or final references: {} objects, {} bytes",
            n(&t["weakly_reachable_objects"]),
            n(&t["weakly_reachable_bytes"])
        );
        let _ = writeln!(
            s,
            "Unreachable (garbage): {} objects, {} bytes\n",
            n(&t["unreachable_objects"]),
            n(&t["unreachable_bytes"])
        );
        let _ = writeln!(s, "Classes by retained size");
        let _ = writeln!(
            s,
            "  {:>14} {:>7} {:>10} {:>14}  class",
            "retained", "share", "instances", "shallow"
        );
        for c in j["classes"].as_array().into_iter().flatten() {
            let _ = writeln!(
                s,
                "  {:>14} {:>6.2}% {:>10} {:>14}  {}",
                n(&c["retained"]),
                c["share"].as_f64().unwrap_or(0.0),
                n(&c["instances"]),
                n(&c["shallow"]),
                c["class"].as_str().unwrap_or("?")
            );
        }
        let _ = writeln!(s, "\nDominator tree (biggest retained sizes)");
        let _ = writeln!(
            s,
            "  {:>14} {:>7} {:>10}  object",
            "retained", "share", "shallow"
        );
        fn rows(s: &mut String, nodes: &Json, depth: usize) {
            for o in nodes.as_array().into_iter().flatten() {
                let _ = writeln!(
                    s,
                    "  {:>14} {:>6.2}% {:>10}  {}{} @ {}",
                    o["retained"].as_u64().unwrap_or(0),
                    o["share"].as_f64().unwrap_or(0.0),
                    o["shallow"].as_u64().unwrap_or(0),
                    "  ".repeat(depth),
                    o["class"].as_str().unwrap_or("?"),
                    o["id"].as_str().unwrap_or("?")
                );
                rows(s, &o["children"], depth + 1);
            }
        }
        rows(&mut s, &j["dominator_tree"], 0);
        let _ = writeln!(
            s,
            "\nLeak suspects (retaining more than {}% of the reachable heap)",
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
            let _ = writeln!(s, "  none");
        }
        for (i, o) in objects.iter().enumerate() {
            let _ = writeln!(
                s,
                "\n  {}. {} @ {} retains {} bytes ({:.2}%)",
                i + 1,
                o["class"].as_str().unwrap_or("?"),
                o["id"].as_str().unwrap_or("?"),
                n(&o["retained"]),
                o["share"].as_f64().unwrap_or(0.0)
            );
            let p = &o["accumulation_point"];
            let _ = writeln!(
                s,
                "     accumulation point: {} @ {} retains {} bytes ({:.2}%) in {} objects it dominates",
                p["class"].as_str().unwrap_or("?"),
                p["id"].as_str().unwrap_or("?"),
                n(&p["retained"]),
                p["share"].as_f64().unwrap_or(0.0),
                n(&o["accumulated_in"])
            );
            s.push_str(&path_section(&o["path"]));
        }
        for c in &classes {
            let _ = writeln!(
                s,
                "\n  class {}: {} instances retain {} bytes ({:.2}%), {} of them outside the objects above",
                c["class"].as_str().unwrap_or("?"),
                n(&c["instances"]),
                n(&c["retained"]),
                c["share"].as_f64().unwrap_or(0.0),
                n(&c["retained_outside_object_suspects"])
            );
            let b = &c["biggest_instance"];
            if b.is_object() {
                let _ = writeln!(
                    s,
                    "     biggest instance: {} retains {} bytes",
                    b["id"].as_str().unwrap_or("?"),
                    n(&b["retained"])
                );
                s.push_str(&path_section(&c["path"]));
            }
        }
        s
    }

    fn html(&self, name: &str) -> String {
        let j = &self.json;
        let mut h = String::new();
        let _ = write!(
            h,
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>hprof analyze: {}</title>\
<style>body{{font-family:sans-serif;margin:1em 2em}}table{{border-collapse:collapse}}\
td,th{{padding:2px 8px;text-align:right}}td:last-child,th:last-child{{text-align:left}}\
tr:nth-child(even){{background:#f4f4f4}}details{{margin-left:1.5em}}summary{{cursor:pointer}}\
code,pre{{font-family:monospace}}.suspect{{border:1px solid #c00;padding:.5em;margin:.5em 0}}</style>\
</head><body><h1>Heap analysis of {}</h1>",
            esc(name),
            esc(name)
        );
        let input = &j["input"];
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
        let t = &j["totals"];
        let _ = write!(
            h,
            "<h2>Totals</h2><table id=\"totals\"><tr><th>objects</th><td>{}</td></tr>\
<tr><th>shallow bytes</th><td>{}</td></tr><tr><th>reachable objects</th><td>{}</td></tr>\
<tr><th>reachable bytes</th><td>{}</td></tr><tr><th>only weakly reachable bytes</th><td>{}</td></tr><tr><th>unreachable objects</th><td>{}</td></tr>\
<tr><th>unreachable bytes</th><td>{}</td></tr></table>",
            t["objects"],
            t["shallow_bytes"],
            t["reachable_objects"],
            t["reachable_bytes"],
            t["weakly_reachable_bytes"],
            t["unreachable_objects"],
            t["unreachable_bytes"]
        );
        let _ = write!(h, "<h2>Leak suspects</h2><div id=\"suspects\">");
        for o in j["suspects"]["objects"].as_array().into_iter().flatten() {
            let p = &o["accumulation_point"];
            let _ = write!(
                h,
                "<div class=\"suspect\"><b>{} @ {}</b> retains {} bytes ({:.2}%)<br>\
accumulation point: {} @ {} retains {} bytes<pre>{}</pre></div>",
                esc(o["class"].as_str().unwrap_or("?")),
                esc(o["id"].as_str().unwrap_or("?")),
                o["retained"],
                o["share"].as_f64().unwrap_or(0.0),
                esc(p["class"].as_str().unwrap_or("?")),
                esc(p["id"].as_str().unwrap_or("?")),
                p["retained"],
                esc(&path_section(&o["path"]))
            );
        }
        for c in j["suspects"]["classes"].as_array().into_iter().flatten() {
            let _ = write!(
                h,
                "<div class=\"suspect\"><b>class {}</b>: {} instances retain {} bytes ({:.2}%)<pre>{}</pre></div>",
                esc(c["class"].as_str().unwrap_or("?")),
                c["instances"],
                c["retained"],
                c["share"].as_f64().unwrap_or(0.0),
                esc(&path_section(&c["path"]))
            );
        }
        h.push_str("</div><h2>Classes by retained size</h2><table id=\"classes\"><tr><th>retained</th><th>share</th><th>instances</th><th>shallow</th><th>class</th></tr>");
        for c in j["classes"].as_array().into_iter().flatten() {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{:.2}%</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                c["retained"],
                c["share"].as_f64().unwrap_or(0.0),
                c["instances"],
                c["shallow"],
                esc(c["class"].as_str().unwrap_or("?"))
            );
        }
        h.push_str("</table><h2>Dominator tree</h2><div id=\"dominators\">");
        fn nodes(h: &mut String, list: &Json) {
            for o in list.as_array().into_iter().flatten() {
                let line = format!(
                    "{} bytes ({:.2}%) {} @ {} (shallow {})",
                    o["retained"],
                    o["share"].as_f64().unwrap_or(0.0),
                    esc(o["class"].as_str().unwrap_or("?")),
                    esc(o["id"].as_str().unwrap_or("?")),
                    o["shallow"]
                );
                let kids = &o["children"];
                if kids.as_array().is_some_and(|k| !k.is_empty()) {
                    let _ = write!(h, "<details><summary>{line}</summary>");
                    nodes(h, kids);
                    h.push_str("</details>");
                } else {
                    let _ = write!(h, "<div style=\"margin-left:1.5em\">{line}</div>");
                }
            }
        }
        nodes(&mut h, &j["dominator_tree"]);
        h.push_str("</div></body></html>\n");
        h
    }
}

fn path_section(path: &Json) -> String {
    if path.is_object() {
        format!(
            "     shortest path from a GC root:\n{}",
            path_text(path, "       ")
        )
    } else {
        "     not reachable from a GC root without weak references\n".to_string()
    }
}

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The biggest children of `v` in the dominator tree, `depth` levels down.
fn tree(graph: &HeapGraph<'_>, analysis: &Analysis, v: u32, depth: usize, top: usize) -> Json {
    if depth == 0 {
        return json!([]);
    }
    Json::Array(
        analysis
            .children_by_size(v)
            .into_iter()
            .take(top)
            .map(|k| {
                let mut o = object_json(graph, analysis, k);
                o["children"] = tree(graph, analysis, k, depth - 1, top);
                o
            })
            .collect(),
    )
}
