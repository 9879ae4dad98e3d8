//! Owns what several commands make of a profile: the ranking table (`hprof top`, and the
//! reports of `hprof run` and `hprof attach`), the report written when a profiled program
//! ends, and a profile written in a standard format (`hprof convert`, `hprof attach -o`).

use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use clap::ValueEnum;
use hprof_profile::{FrameKind, Profile, flame, folded, pprof, top};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// An interactive HTML flame graph.
    Html,
    /// Folded (collapsed) stacks.
    Collapsed,
    /// pprof (gzipped profile.proto).
    Pprof,
}

impl Format {
    pub fn from_extension(path: &std::path::Path) -> Option<Format> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        if name.ends_with(".html") || name.ends_with(".htm") {
            Some(Format::Html)
        } else if name.ends_with(".collapsed") || name.ends_with(".folded") {
            Some(Format::Collapsed)
        } else if name.ends_with(".pb.gz") || name.ends_with(".pprof") {
            Some(Format::Pprof)
        } else {
            None
        }
    }
}

/// How a ranking is shown.
#[derive(Debug, Clone, Copy)]
pub struct Ranking {
    /// Methods or traces.
    pub by: By,
    /// How many rows.
    pub rows: usize,
    /// Each row's hottest stack too.
    pub stacks: bool,
    /// One JSON object instead of a table.
    pub json: bool,
    /// Native, JVM and kernel functions in colour (ANSI).
    pub colour: bool,
}

/// What `hprof top` ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum By {
    /// Methods, by self then total value.
    Method,
    /// Traces (stacks), by value.
    Trace,
}

fn share(value: i64, total: i64) -> f64 {
    if total == 0 {
        0.0
    } else {
        value as f64 * 100.0 / total as f64
    }
}

/// The ANSI colour of a frame of `kind` on a terminal (the flame graph's hues), if any.
fn ansi(kind: FrameKind) -> Option<&'static str> {
    match kind {
        FrameKind::Jvm => Some("\x1b[36m"),
        FrameKind::Native => Some("\x1b[32m"),
        FrameKind::Kernel => Some("\x1b[35m"),
        FrameKind::Application | FrameKind::Jdk | FrameKind::Pseudo => None,
    }
}

/// `name`, coloured by `kind` when `colour`.
fn painted(name: &str, kind: FrameKind, colour: bool) -> String {
    match ansi(kind).filter(|_| colour) {
        Some(code) => format!("{code}{name}\x1b[0m"),
        None => name.to_string(),
    }
}

/// The line that groups the samples by what their leaf frame runs (`Java 61.2%, kernel
/// 23.7%, ...`), when any is not Java code.
fn groups_line(profile: &Profile, total: i64) -> Option<String> {
    let groups = top::groups(profile);
    if groups.iter().all(|&(g, _)| g == "Java" || g == "other") {
        return None;
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|&(g, v)| format!("{g} {:.1}%", share(v, total)))
        .collect();
    Some(format!("self by kind: {}", parts.join(", ")))
}

fn stack_names(profile: &Profile, stack: &[usize]) -> Vec<String> {
    stack
        .iter()
        .rev()
        .map(|&f| profile.frames[f].name().to_string())
        .collect()
}

/// Writes the ranking of `profile` (`hprof top`, and the reports of `hprof run` and `hprof
/// attach`).
pub fn write_top(
    profile: &Profile,
    section: &str,
    args: &Ranking,
    out: &mut dyn Write,
) -> Result<()> {
    let total = profile.total();
    let unit = profile.sample_types.first().map_or(String::new(), |t| {
        if t.unit == "count" {
            t.name.clone()
        } else {
            t.unit.clone()
        }
    });
    match args.by {
        By::Method => {
            let rows = top::methods(profile);
            if args.json {
                let rows: Vec<_> = rows
                    .iter()
                    .take(args.rows)
                    .map(|r| {
                        serde_json::json!({
                            "method": r.name,
                            "kind": r.kind.group(),
                            "self": r.self_value,
                            "total": r.total_value,
                            "self_percent": share(r.self_value, total),
                            "total_percent": share(r.total_value, total),
                            "stack": stack_names(profile, &r.hottest),
                        })
                    })
                    .collect();
                let kinds: serde_json::Map<String, serde_json::Value> = top::groups(profile)
                    .into_iter()
                    .map(|(g, v)| (g.to_string(), v.into()))
                    .collect();
                let doc = serde_json::json!({"section": section, "unit": unit, "total": total, "kinds": kinds, "methods": rows});
                writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
                return Ok(());
            }
            writeln!(out, "{section}: {total} {unit}, by method")?;
            writeln!(out, "rank   self  total  method")?;
            for (i, r) in rows.iter().take(args.rows).enumerate() {
                writeln!(
                    out,
                    "{:4} {:5.1}% {:5.1}%  {}",
                    i + 1,
                    share(r.self_value, total),
                    share(r.total_value, total),
                    painted(&r.name, r.kind, args.colour)
                )?;
                if args.stacks {
                    for frame in stack_names(profile, &r.hottest) {
                        writeln!(out, "                   {frame}")?;
                    }
                }
            }
            if rows.len() > args.rows {
                writeln!(out, "... {} more methods", rows.len() - args.rows)?;
            }
            if let Some(line) = groups_line(profile, total) {
                writeln!(out, "{line}")?;
            }
        }
        By::Trace => {
            let mut samples: Vec<_> = profile.samples.iter().collect();
            samples.sort_by(|a, b| b.values[0].cmp(&a.values[0]));
            if args.json {
                let rows: Vec<_> = samples
                    .iter()
                    .take(args.rows)
                    .map(|s| serde_json::json!({"value": s.values[0], "percent": share(s.values[0], total), "thread": s.thread, "stack": stack_names(profile, &s.stack)}))
                    .collect();
                let doc = serde_json::json!({"section": section, "unit": unit, "total": total, "traces": rows});
                writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
                return Ok(());
            }
            writeln!(out, "{section}: {total} {unit}, by trace")?;
            writeln!(out, "rank  share      value  top frame")?;
            for (i, s) in samples.iter().take(args.rows).enumerate() {
                let names = stack_names(profile, &s.stack);
                writeln!(
                    out,
                    "{:4} {:5.1}% {:10}  {}",
                    i + 1,
                    share(s.values[0], total),
                    s.values[0],
                    names.first().map_or("", String::as_str)
                )?;
                if args.stacks {
                    for frame in names.iter().skip(1) {
                        writeln!(out, "                          {frame}")?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Writes `profile` to a new private file at `path` in `format`.
pub fn write(profile: &Profile, format: Format, title: &str, path: &Path) -> Result<()> {
    let file =
        hprof_outfile::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    match format {
        Format::Collapsed => folded::write(profile, &mut out),
        Format::Pprof => pprof::write(profile, &mut out),
        Format::Html => flame::write(profile, title, &mut out),
    }
    .and_then(|()| out.flush())
    .with_context(|| format!("cannot write {}", path.display()))
}

/// Reports a profile: for each kind of section it holds, the hottest methods of the last dump;
/// then writes its flame graph (of the first kind) to `flame`.
pub fn report(path: &Path, flame: Option<&Path>, top: usize, out: &mut dyn Write) -> Result<()> {
    use hprof_profile::{Kind, Selection};
    let recording = crate::input::read_recording(path)?;
    warn_notes(&path.display().to_string(), &recording);
    writeln!(out, "\nProfile written to {}", path.display())?;
    let ranking = Ranking {
        by: By::Method,
        rows: top,
        stacks: false,
        json: false,
        colour: false,
    };
    let kinds: Vec<Kind> = [Kind::Cpu, Kind::Times, Kind::Alloc, Kind::Lock]
        .into_iter()
        .filter(|&k| recording.dumps(k) > 0)
        .collect();
    for &kind in &kinds {
        let profile = recording.profile(kind, Selection::Last, false)?;
        writeln!(out)?;
        write_top(&profile, kind.section(), &ranking, out)?;
    }
    if let (Some(flame), Some(&kind)) = (flame, kinds.first()) {
        let profile = recording.profile(kind, Selection::Last, false)?;
        if profile.total() > 0 {
            let title = format!("{} — {}", kind.section(), path.display());
            write(&profile, Format::Html, &title, flame)?;
            writeln!(out, "Flame graph: {}", flame.display())?;
        }
    }
    Ok(())
}

/// Converts the profile file `source` (the first kind of profile it holds; every dump added
/// up for `all`, else the last) to `format` at `output`.
pub fn convert_file(source: &Path, output: &Path, format: Format, all: bool) -> Result<()> {
    use hprof_profile::Selection;
    let name = source.display().to_string();
    let recording = crate::input::read_recording(source)?;
    warn_notes(&name, &recording);
    let kind = recording.default_kind().with_context(|| {
        format!("{name}: no CPU SAMPLES, CPU TIME, SITES or MONITOR TIME section")
    })?;
    let selection = if all { Selection::All } else { Selection::Last };
    let profile = recording
        .profile(kind, selection, false)
        .with_context(|| name.clone())?;
    let title = format!("{} — {name}", kind.section());
    write(&profile, format, &title, output)
}

/// Warns of what the agent noted it could not write into a profile (a dump cut short by a
/// full disk, a heap dump it lost): the profile is incomplete.
pub fn warn_notes(name: &str, recording: &hprof_profile::Recording) {
    for note in recording.notes() {
        eprintln!("hprof: warning: {name} is incomplete: its writer noted: {note}");
    }
}
