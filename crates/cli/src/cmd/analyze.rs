//! `hprof analyze` and `hprof path`: what holds the memory of a heap dump (dominator tree,
//! retained sizes, leak suspects, paths from GC roots), rendered as text, JSON or HTML.

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use hprof_heap::{
    Analysis, Breakdown, HeapGraph, Paths, Progress, RootKind, SiteJoin, WasteReport, loader_name,
    loader_report, loaders_in, roots_of,
};
use serde_json::{Value as Json, json};

use crate::heap_progress::Bar;
use crate::input::Input;
use crate::units;

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
pub(crate) fn open_graph<'a>(
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
    let top = if args.top == 0 { usize::MAX } else { args.top };
    // The waste is read beside the dominators' depth-first search, from the references.
    let (analysis, strong, waste) = Analysis::new_with(&mut graph, &bar, |graph, csr, strong| {
        hprof_heap::waste(graph, csr, &|v| strong.reaches(v), top)
    });
    let paths = weak.unwrap_or(strong);
    bar.phase("allocation sites", 0);
    let mut join = SiteJoin::read(&graph).with_context(|| name.clone())?;
    if let Some(join) = &mut join {
        join.prepare(&graph, &analysis);
    }
    bar.phase("report", 0);
    let context = Inputs {
        graph: &graph,
        analysis: &analysis,
        paths: &paths,
        join: join.as_ref(),
        args,
    };
    let mut report = Report::new(&context, &waste);
    report.json["input"] = json!({
        "file_bytes": completeness.file_len(),
        "bytes_read": completeness.bytes_read(),
        "fraction_read": completeness.fraction_read(),
        "complete": completeness.is_complete(),
        "incomplete": completeness.summary(),
        "anomalies": graph.anomalies().lines(),
    });
    bar.finish();
    if let Some(path) = &args.html {
        let mut file = hprof_outfile::create(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        let treemap = treemap(&context);
        file.write_all(super::analyze_html::page(&name, &report.json, &treemap).as_bytes())
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
        bail!(
            "{name}: no object with id {:#x} in the heap dump at offset {:#x} ({} objects)",
            args.object,
            graph.dump_offset(),
            graph.len()
        );
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

/// What the report is computed from.
struct Inputs<'c, 'g> {
    graph: &'c HeapGraph<'g>,
    analysis: &'c Analysis,
    paths: &'c Paths,
    join: Option<&'c SiteJoin>,
    args: &'c AnalyzeArgs,
}

impl Inputs<'_, '_> {
    /// Rows per table (`--top`, 0 for all).
    fn top(&self) -> usize {
        if self.args.top == 0 {
            usize::MAX
        } else {
            self.args.top
        }
    }

    fn share(&self, bytes: u64) -> f64 {
        percent(bytes, self.analysis.reachable_bytes)
    }

    fn class_name(&self, class: u32) -> &str {
        self.graph
            .classes()
            .get(class as usize)
            .map_or("?", |c| c.name.as_str())
    }
}

/// Everything `hprof analyze` reports, as one JSON document the renderers read.
struct Report {
    json: Json,
}

impl Report {
    fn new(cx: &Inputs<'_, '_>, waste: &WasteReport) -> Report {
        let (graph, analysis) = (cx.graph, cx.analysis);
        let top = cx.top();
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
        let mut dominators = tree(graph, analysis, analysis.super_root(), cx.args.depth, top);
        // The biggest dominators: where what each retains was allocated.
        if let Some(join) = cx.join {
            for o in dominators.as_array_mut().into_iter().flatten() {
                if let Some(node) = o["id"]
                    .as_str()
                    .and_then(parse_hex)
                    .and_then(|id| graph.node(id))
                {
                    o["allocated"] =
                        breakdown_json(cx, &join.breakdown(graph, analysis, &[node]), 5);
                }
            }
        }

        let threshold = (total as f64 * cx.args.threshold / 100.0) as u64;
        let path_of = |node: u32| cx.paths.path(node).map(|p| path_json(graph, &p));
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
                s["class_loaders"] = loaders_json(cx, &[node]);
                if let Some(join) = cx.join {
                    s["allocated"] =
                        breakdown_json(cx, &join.breakdown(graph, analysis, &[node]), 10);
                }
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
                let tops = top_instances(cx, c as u32);
                s["class_loaders"] = loaders_json(cx, &tops);
                if let Some(join) = cx.join {
                    s["allocated"] =
                        breakdown_json(cx, &join.breakdown(graph, analysis, &tops), 10);
                }
                s
            })
            .collect();
        let mut json = json!({
            "totals": totals,
            "classes": classes,
            "dominator_tree": dominators,
            "suspect_threshold_percent": cx.args.threshold,
            "suspects": {"objects": object_suspects, "classes": class_suspects},
        });
        if let Some(join) = cx.join {
            json["allocation_sites"] = sites_json(cx, join);
        }
        json["waste"] = waste_json(cx, waste);
        json["class_loaders"] = class_loaders_json(cx);
        Report { json }
    }

    fn text(&self, name: &str) -> String {
        let j = &self.json;
        let t = &j["totals"];
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
        if let Some(lines) = input["anomalies"].as_array()
            && !lines.is_empty()
        {
            let _ = writeln!(s, "Inconsistencies (read in spite of them):");
            for line in lines {
                let _ = writeln!(s, "  {}", line.as_str().unwrap_or_default());
            }
            let _ = writeln!(s);
        }
        if n(&t["heap_dumps_in_file"]) > 1 {
            let _ = writeln!(
                s,
                "The file holds {} heap dumps (one per dump request); this is the last one.\n",
                n(&t["heap_dumps_in_file"])
            );
        }
        let _ = writeln!(
            s,
            "Objects: {} ({} shallow), {} GC roots",
            units::count(n(&t["objects"])),
            units::bytes(n(&t["shallow_bytes"])),
            units::count(n(&t["gc_roots"]))
        );
        let _ = writeln!(
            s,
            "Reachable from GC roots: {} objects, {}",
            units::count(n(&t["reachable_objects"])),
            units::bytes(n(&t["reachable_bytes"]))
        );
        let _ = writeln!(
            s,
            "Reachable only through weak, soft, phantom or final references: {} objects, {}",
            units::count(n(&t["weakly_reachable_objects"])),
            units::bytes(n(&t["weakly_reachable_bytes"]))
        );
        let _ = writeln!(
            s,
            "Unreachable (garbage): {} objects, {}",
            units::count(n(&t["unreachable_objects"])),
            units::bytes(n(&t["unreachable_bytes"]))
        );
        suspects_text(&mut s, j);
        classes_text(&mut s, j);
        dominators_text(&mut s, j);
        sites_text(&mut s, j);
        waste_text(&mut s, &j["waste"]);
        loaders_text(&mut s, &j["class_loaders"]);
        s
    }
}

/// A JSON number as u64 (0 if absent).
fn n(v: &Json) -> u64 {
    v.as_u64().unwrap_or(0)
}

fn f(v: &Json) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn st(v: &Json) -> &str {
    v.as_str().unwrap_or("?")
}

fn parse_hex(text: &str) -> Option<u64> {
    u64::from_str_radix(text.trim_start_matches("0x"), 16).ok()
}

/// The instances of class `c` with no instance of `c` above them in the dominator tree (the
/// roots of the class's retained set).
fn top_instances(cx: &Inputs<'_, '_>, c: u32) -> Vec<u32> {
    let (graph, analysis) = (cx.graph, cx.analysis);
    let mut out = Vec::new();
    let mut stack = vec![analysis.super_root()];
    while let Some(v) = stack.pop() {
        if (v as usize) < graph.len() && graph.class_of(v) == c {
            out.push(v);
            continue;
        }
        stack.extend_from_slice(analysis.children(v));
    }
    out
}

/// The class loaders of what `roots` retain (JDK objects counting for the loader of the
/// object holding them), grouped by the loader's class, the most bytes first.
fn loaders_json(cx: &Inputs<'_, '_>, roots: &[u32]) -> Json {
    let loaders = &cx.analysis.loaders;
    let mut by_name: Vec<(String, u64, u64)> = Vec::new();
    for (l, bytes) in loaders_in(cx.graph, cx.analysis, roots) {
        let id = loaders.ids[l as usize];
        let name = match cx.graph.node(id) {
            Some(node) if id != 0 => cx.graph.class(node).name.clone(),
            _ => loader_name(cx.graph, id),
        };
        match by_name.iter_mut().find(|e| e.0 == name) {
            Some(e) => {
                e.1 += 1;
                e.2 += bytes;
            }
            None => by_name.push((name, 1, bytes)),
        }
    }
    by_name.sort_by_key(|e| std::cmp::Reverse(e.2));
    let whole: u64 = by_name.iter().map(|e| e.2).sum();
    Json::Array(
        by_name
            .into_iter()
            .take(5)
            .map(|(name, count, bytes)| {
                json!({"loader": name, "loaders": count, "bytes": bytes, "share": percent(bytes, whole)})
            })
            .collect(),
    )
}

/// A frame as one line: `pkg.Class.method (File.java:12)`.
fn frame_text(frame: &hprof_heap::FrameInfo) -> String {
    format!("{} ({})", frame.method, frame.location)
}

/// What a part of the heap holds by allocation site, its `rows` biggest sites and frames.
fn breakdown_json(cx: &Inputs<'_, '_>, b: &Breakdown, rows: usize) -> Json {
    let Some(join) = cx.join else {
        return Json::Null;
    };
    let share = |bytes: u64| percent(bytes, b.bytes);
    let sites: Vec<Json> = b
        .rows
        .iter()
        .take(rows)
        .map(|r| {
            let site = &join.sites[r.site as usize];
            json!({
                "class": site.class_name,
                "trace": site.trace_serial,
                "frames": site.frames.iter().map(frame_text).collect::<Vec<_>>(),
                "bytes": r.bytes(),
                "objects": r.objects(),
                "share": share(r.bytes()),
                "exact_bytes": r.exact_bytes,
                "estimated_bytes": r.estimated_bytes,
                "error_bytes": r.error_bytes,
                "samples": r.samples,
            })
        })
        .collect();
    let frames: Vec<Json> = b
        .frames
        .iter()
        .take(rows)
        .map(|fr| {
            json!({
                "frame": frame_text(&fr.frame),
                "method": fr.frame.method,
                "location": fr.frame.location,
                "bytes": fr.bytes,
                "share": share(fr.bytes),
                "error_bytes": fr.error_bytes,
                "depth": (fr.depth * 100.0).round() / 100.0,
            })
        })
        .collect();
    let unattributed: Vec<Json> = b
        .unattributed
        .iter()
        .take(rows)
        .map(|&(c, bytes, objects)| {
            json!({"class": cx.class_name(c), "bytes": bytes, "objects": objects, "share": share(bytes)})
        })
        .collect();
    json!({
        "bytes": b.bytes,
        "objects": b.objects,
        "samples": b.samples,
        "allocated_in": frames,
        "sites": sites,
        "unattributed": unattributed,
        "unattributed_bytes": b.unattributed.iter().map(|u| u.1).sum::<u64>(),
        "before_counting": {"bytes": b.before_counting.0, "objects": b.before_counting.1},
    })
}

/// How objects were joined to sites, and the whole heap by allocation site.
fn sites_json(cx: &Inputs<'_, '_>, join: &SiteJoin) -> Json {
    let heap = join.breakdown(cx.graph, cx.analysis, &[cx.analysis.super_root()]);
    json!({
        "objects_joined": join.joined,
        "objects_from_before_counting": join.baseline,
        "sampled": join.sampled,
        "sampling_interval": join.interval,
        "stride": join.stride,
        "has_object_sites": join.has_objects,
        "has_alloc_sites": join.has_listing,
        "heap": breakdown_json(cx, &heap, cx.top()),
    })
}

fn waste_json(cx: &Inputs<'_, '_>, report: &WasteReport) -> Json {
    let graph = cx.graph;
    let strings: Vec<Json> = report
        .strings
        .top
        .iter()
        .map(|d| {
            json!({
                "value": d.value,
                "length": d.length,
                "copies": d.copies,
                "arrays": d.arrays,
                "bytes": d.bytes,
                "wasted": d.wasted,
                "example": hex(graph.id(d.example)),
            })
        })
        .collect();
    let tally = |t: &hprof_heap::Tally| json!({"count": t.count, "wasted": t.wasted});
    let collections: Vec<Json> = report
        .collections
        .iter()
        .take(cx.top())
        .map(|c| {
            json!({
                "class": cx.class_name(c.class),
                "kind": c.kind.class_name(),
                "count": c.count,
                "elements": c.elements,
                "bytes": c.bytes,
                "empty": tally(&c.empty),
                "sparse": tally(&c.sparse),
                "oversized": tally(&c.oversized),
                "wasted": c.wasted,
            })
        })
        .collect();
    let arrays: Vec<Json> = report
        .null_arrays
        .iter()
        .take(cx.top())
        .map(|a| {
            json!({
                "class": cx.class_name(a.class),
                "count": a.count,
                "length": a.length,
                "nulls": a.nulls,
                "bytes": a.bytes,
                "wasted": a.wasted,
                "biggest": hex(graph.id(a.biggest)),
            })
        })
        .collect();
    json!({
        "duplicate_strings": {
            "values": report.strings.values,
            "copies": report.strings.copies,
            "wasted": report.strings.wasted,
            "top": strings,
        },
        "collections": collections,
        "collections_wasted": report.collections.iter().map(|c| c.wasted).sum::<u64>(),
        "null_arrays": arrays,
        "null_arrays_wasted": report.null_arrays.iter().map(|a| a.wasted).sum::<u64>(),
    })
}

fn class_loaders_json(cx: &Inputs<'_, '_>) -> Json {
    let report = loader_report(cx.graph, cx.analysis);
    let names: Vec<String> = report.loaders.iter().map(|l| l.name.clone()).collect();
    let loaders: Vec<Json> = report
        .loaders
        .iter()
        .take(cx.top())
        .map(|l| {
            json!({
                "loader": l.name,
                "id": hex(l.id),
                "classes": l.classes,
                "instances": l.instances,
                "shallow": l.shallow,
                "retained": l.retained,
                "share": cx.share(l.retained),
                "loader_retained": l.loader_retained,
            })
        })
        .collect();
    let name_of = |index: u32| {
        report
            .loaders
            .iter()
            .position(|l| l.index == index)
            .map_or_else(|| "?".to_string(), |i| names[i].clone())
    };
    let duplicates: Vec<Json> = report
        .duplicates
        .iter()
        .take(cx.top())
        .map(|d| {
            let mut loaders: Vec<String> = d.loaders.iter().map(|&l| name_of(l)).collect();
            loaders.sort();
            json!({
                "class": d.name,
                "loaders": d.loaders.len(),
                "loader_names": loaders,
                "instances": d.instances,
                "shallow": d.shallow,
            })
        })
        .collect();
    json!({
        "count": report.loaders.len(),
        "loaders": loaders,
        "duplicate_classes": duplicates,
        "duplicate_class_count": report.duplicates.len(),
    })
}

/// The dominator tree for the HTML treemap: below each node, its children retaining at
/// least 0.1 % of the heap (at most 40 each, 12 levels, 6,000 nodes in all), the rest as one
/// "smaller objects" node; object suspects marked.
fn treemap(cx: &Inputs<'_, '_>) -> Json {
    let (graph, analysis) = (cx.graph, cx.analysis);
    let threshold = (analysis.reachable_bytes as f64 * cx.args.threshold / 100.0) as u64;
    let suspects: Vec<u32> = analysis.suspects(graph, threshold);
    let min = (analysis.reachable_bytes / 1000).max(1);
    let mut budget = 6000usize;
    fn node(
        cx: &Inputs<'_, '_>,
        v: u32,
        depth: usize,
        min: u64,
        budget: &mut usize,
        suspects: &[u32],
    ) -> Json {
        let (graph, analysis) = (cx.graph, cx.analysis);
        let mut o = json!({
            "l": label(graph, v),
            "i": hex(graph.id(v)),
            "r": analysis.retained[v as usize],
            "s": graph.shallow(v),
        });
        if suspects.contains(&v) {
            o["x"] = json!(1);
        }
        let kids = analysis.children_by_size(v);
        if depth < 12 {
            let mut children = Vec::new();
            let mut rest = (0u64, 0u64);
            for (i, k) in kids.iter().enumerate() {
                let r = analysis.retained[*k as usize];
                if r >= min && i < 40 && *budget > 0 {
                    *budget -= 1;
                    children.push(node(cx, *k, depth + 1, min, budget, suspects));
                } else {
                    rest.0 += 1;
                    rest.1 += r;
                }
            }
            if rest.1 > 0 {
                children.push(json!({"l": format!("{} smaller objects", units::count(rest.0)), "r": rest.1, "g": 1}));
            }
            if !children.is_empty() {
                o["c"] = Json::Array(children);
            }
        }
        o
    }
    let mut top = Vec::new();
    let mut rest = (0u64, 0u64);
    for (i, k) in analysis
        .children_by_size(analysis.super_root())
        .into_iter()
        .enumerate()
    {
        let r = analysis.retained[k as usize];
        if r >= min && i < 60 && budget > 0 {
            budget -= 1;
            top.push(node(cx, k, 1, min, &mut budget, &suspects));
        } else {
            rest.0 += 1;
            rest.1 += r;
        }
    }
    if rest.1 > 0 {
        top.push(
            json!({"l": format!("{} smaller objects", units::count(rest.0)), "r": rest.1, "g": 1}),
        );
    }
    json!({"l": "heap", "r": analysis.reachable_bytes, "c": top})
}

fn suspects_text(s: &mut String, j: &Json) {
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
            "\n  {}. {} @ {} retains {} ({:.2}%)",
            i + 1,
            st(&o["class"]),
            st(&o["id"]),
            units::bytes(n(&o["retained"])),
            f(&o["share"])
        );
        let p = &o["accumulation_point"];
        let _ = writeln!(
            s,
            "     accumulation point: {} @ {} retains {} ({:.2}%) in {} objects it dominates",
            st(&p["class"]),
            st(&p["id"]),
            units::bytes(n(&p["retained"])),
            f(&p["share"]),
            units::count(n(&o["accumulated_in"]))
        );
        s.push_str(&path_section(&o["path"]));
        allocated_text(s, &o["allocated"], "     ");
        suspect_loaders_text(s, &o["class_loaders"]);
    }
    for c in &classes {
        let _ = writeln!(
            s,
            "\n  class {}: {} instances retain {} ({:.2}%), {} of it outside the objects above",
            st(&c["class"]),
            units::count(n(&c["instances"])),
            units::bytes(n(&c["retained"])),
            f(&c["share"]),
            units::bytes(n(&c["retained_outside_object_suspects"]))
        );
        let b = &c["biggest_instance"];
        if b.is_object() {
            let _ = writeln!(
                s,
                "     biggest instance: {} retains {}",
                st(&b["id"]),
                units::bytes(n(&b["retained"]))
            );
            s.push_str(&path_section(&c["path"]));
        }
        allocated_text(s, &c["allocated"], "     ");
        suspect_loaders_text(s, &c["class_loaders"]);
    }
}

fn suspect_loaders_text(s: &mut String, loaders: &Json) {
    let list = loaders.as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        return;
    }
    let _ = writeln!(s, "     class loaders of what it retains:");
    for l in &list {
        let count = n(&l["loaders"]);
        let who = if count > 1 {
            format!("{} loaders {}", units::count(count), st(&l["loader"]))
        } else {
            st(&l["loader"]).to_string()
        };
        let _ = writeln!(
            s,
            "       {:>6.2}% {:>9}  {who}",
            f(&l["share"]),
            units::bytes(n(&l["bytes"]))
        );
    }
}

/// A breakdown by allocation site as text lines, indented.
fn allocated_text(s: &mut String, b: &Json, indent: &str) {
    if !b.is_object() {
        return;
    }
    let _ = writeln!(
        s,
        "{indent}allocated in ({} of its {} objects joined to their site by the agent; ± two standard errors):",
        units::count(n(&b["samples"])),
        units::count(n(&b["objects"]))
    );
    let whole = n(&b["bytes"]);
    for fr in b["allocated_in"].as_array().into_iter().flatten().take(5) {
        let _ = writeln!(
            s,
            "{indent}  {:>6.2}% {:<8} {:>9}  {}",
            f(&fr["share"]),
            format!("± {:.2}%", percent(n(&fr["error_bytes"]), whole)),
            units::bytes(n(&fr["bytes"])),
            st(&fr["frame"])
        );
    }
    let sites = b["sites"].as_array().cloned().unwrap_or_default();
    if !sites.is_empty() {
        let _ = writeln!(s, "{indent}by allocation site:");
    }
    for site in &sites {
        let frames: Vec<&str> = site["frames"]
            .as_array()
            .into_iter()
            .flatten()
            .take(3)
            .filter_map(|v| v.as_str())
            .collect();
        let _ = writeln!(
            s,
            "{indent}  {:>6.2}% {:<8} {:>9} {:>10} objects  {}  {}",
            f(&site["share"]),
            format!("± {:.2}%", percent(n(&site["error_bytes"]), whole)),
            units::bytes(n(&site["bytes"])),
            units::count(n(&site["objects"])),
            st(&site["class"]),
            if frames.is_empty() {
                "(no trace)".to_string()
            } else {
                frames.join(" <- ")
            }
        );
    }
    let unattributed = n(&b["unattributed_bytes"]);
    if unattributed > 0 {
        let _ = writeln!(
            s,
            "{indent}  {:>6.2}% {:8} {:>9}  allocated where no site counted (not tracked by the agent)",
            percent(unattributed, whole),
            "",
            units::bytes(unattributed)
        );
    }
    let before = n(&b["before_counting"]["bytes"]);
    if before > 0 {
        let _ = writeln!(
            s,
            "{indent}  {:>6.2}% {:8} {:>9}  in the heap before the agent began counting",
            percent(before, whole),
            "",
            units::bytes(before)
        );
    }
}

fn classes_text(s: &mut String, j: &Json) {
    let _ = writeln!(s, "\nClasses by retained size");
    let _ = writeln!(
        s,
        "  {:>10} {:>7} {:>12} {:>10}  class",
        "retained", "share", "instances", "shallow"
    );
    for c in j["classes"].as_array().into_iter().flatten() {
        let _ = writeln!(
            s,
            "  {:>10} {:>6.2}% {:>12} {:>10}  {}",
            units::bytes(n(&c["retained"])),
            f(&c["share"]),
            units::count(n(&c["instances"])),
            units::bytes(n(&c["shallow"])),
            st(&c["class"])
        );
    }
}

fn dominators_text(s: &mut String, j: &Json) {
    let _ = writeln!(s, "\nDominator tree (biggest retained sizes)");
    let _ = writeln!(
        s,
        "  {:>10} {:>7} {:>10}  object",
        "retained", "share", "shallow"
    );
    fn rows(s: &mut String, nodes: &Json, depth: usize) {
        for o in nodes.as_array().into_iter().flatten() {
            let _ = writeln!(
                s,
                "  {:>10} {:>6.2}% {:>10}  {}{} @ {}",
                units::bytes(n(&o["retained"])),
                f(&o["share"]),
                units::bytes(n(&o["shallow"])),
                "  ".repeat(depth),
                st(&o["class"]),
                st(&o["id"])
            );
            if let Some(top) = o["allocated"]["allocated_in"]
                .as_array()
                .and_then(|a| a.first())
            {
                let _ = writeln!(
                    s,
                    "  {:>30}{}allocated mostly in {} ({:.1}%)",
                    "",
                    "  ".repeat(depth),
                    st(&top["frame"]),
                    f(&top["share"])
                );
            }
            rows(s, &o["children"], depth + 1);
        }
    }
    rows(s, &j["dominator_tree"], 0);
}

fn sites_text(s: &mut String, j: &Json) {
    let a = &j["allocation_sites"];
    if !a.is_object() {
        return;
    }
    let how = if !a["has_object_sites"].as_bool().unwrap_or(false) {
        "no object was joined to its site (the file has ALLOC SITES only): estimated by class from the sites' live counts".to_string()
    } else if a["sampled"].as_bool().unwrap_or(false) {
        format!(
            "{} objects joined to the allocation sampled every {} (the others estimated from them)",
            units::count(n(&a["objects_joined"])),
            units::bytes(n(&a["sampling_interval"]))
        )
    } else {
        format!(
            "{} objects joined to their allocation exactly (objects the agent did not track estimated)",
            units::count(n(&a["objects_joined"]))
        )
    };
    let _ = writeln!(
        s,
        "\nRetained by allocation site: the reachable heap's bytes by the code that allocated them"
    );
    let _ = writeln!(s, "  ({how})");
    allocated_text(s, &a["heap"], "  ");
}

fn waste_text(s: &mut String, w: &Json) {
    let d = &w["duplicate_strings"];
    let _ = writeln!(
        s,
        "\nDuplicate strings: {} values held by {} String objects, {} wasted by the copies",
        units::count(n(&d["values"])),
        units::count(n(&d["copies"])),
        units::bytes(n(&d["wasted"]))
    );
    let top = d["top"].as_array().cloned().unwrap_or_default();
    if !top.is_empty() {
        let _ = writeln!(
            s,
            "  {:>10} {:>10} {:>8}  value",
            "wasted", "copies", "length"
        );
    }
    for v in &top {
        let _ = writeln!(
            s,
            "  {:>10} {:>10} {:>8}  {}",
            units::bytes(n(&v["wasted"])),
            units::count(n(&v["copies"])),
            units::count(n(&v["length"])),
            quoted(st(&v["value"]), 80)
        );
    }
    let _ = writeln!(
        s,
        "\nCollections: {} wasted (empty: no element; sparse: under 25% full; oversized: 25 to 50% full; wasted: what right-sized ones would save)",
        units::bytes(n(&w["collections_wasted"]))
    );
    let rows = w["collections"].as_array().cloned().unwrap_or_default();
    if !rows.is_empty() {
        let _ = writeln!(
            s,
            "  {:>10} {:>10} {:>21} {:>21} {:>21}  class",
            "wasted", "count", "empty (wasted)", "sparse (wasted)", "oversized (wasted)"
        );
    }
    let cell = |t: &Json| {
        format!(
            "{} ({})",
            units::count(n(&t["count"])),
            units::bytes(n(&t["wasted"]))
        )
    };
    for r in &rows {
        let _ = writeln!(
            s,
            "  {:>10} {:>10} {:>21} {:>21} {:>21}  {}",
            units::bytes(n(&r["wasted"])),
            units::count(n(&r["count"])),
            cell(&r["empty"]),
            cell(&r["sparse"]),
            cell(&r["oversized"]),
            st(&r["class"])
        );
    }
    let _ = writeln!(
        s,
        "\nObject arrays mostly null (8 elements or more, over half null; not a collection's storage): {} in null slots",
        units::bytes(n(&w["null_arrays_wasted"]))
    );
    let rows = w["null_arrays"].as_array().cloned().unwrap_or_default();
    if !rows.is_empty() {
        let _ = writeln!(
            s,
            "  {:>10} {:>10} {:>12} {:>12}  class (biggest)",
            "null slots", "arrays", "elements", "nulls"
        );
    }
    for r in &rows {
        let _ = writeln!(
            s,
            "  {:>10} {:>10} {:>12} {:>12}  {} ({})",
            units::bytes(n(&r["wasted"])),
            units::count(n(&r["count"])),
            units::count(n(&r["length"])),
            units::count(n(&r["nulls"])),
            st(&r["class"]),
            st(&r["biggest"])
        );
    }
}

fn loaders_text(s: &mut String, l: &Json) {
    let _ = writeln!(
        s,
        "\nClass loaders ({}) by what the instances of their classes retain",
        units::count(n(&l["count"]))
    );
    let _ = writeln!(
        s,
        "  {:>10} {:>7} {:>8} {:>12} {:>10}  loader",
        "retained", "share", "classes", "instances", "loader"
    );
    for r in l["loaders"].as_array().into_iter().flatten() {
        let _ = writeln!(
            s,
            "  {:>10} {:>6.2}% {:>8} {:>12} {:>10}  {} @ {}",
            units::bytes(n(&r["retained"])),
            f(&r["share"]),
            units::count(n(&r["classes"])),
            units::count(n(&r["instances"])),
            units::bytes(n(&r["loader_retained"])),
            st(&r["loader"]),
            st(&r["id"])
        );
    }
    let dups = l["duplicate_classes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "\nClasses defined by several loaders: {}",
        units::count(n(&l["duplicate_class_count"]))
    );
    for d in &dups {
        let names: Vec<&str> = d["loader_names"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str())
            .collect();
        let mut distinct = names.clone();
        distinct.dedup();
        let _ = writeln!(
            s,
            "  {:>4} loaders {:>10} instances  {}  ({})",
            n(&d["loaders"]),
            units::count(n(&d["instances"])),
            st(&d["class"]),
            distinct.join(", ")
        );
    }
}

/// `text` in double quotes, control characters escaped, cut to `max` characters.
fn quoted(text: &str, max: usize) -> String {
    let mut out = String::from("\"");
    for (i, c) in text.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
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
