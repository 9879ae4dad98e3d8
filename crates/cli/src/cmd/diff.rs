//! `hprof diff`: what changed between two profiles (`hprof_profile::diff`) or two heap dumps
//! (`hprof_heap::diff`): which inputs are which, the options, the outputs, the exit status.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use hprof_format::{Record, Records, Tag};
use hprof_heap::diff::report as heap_report;
use hprof_heap::{Analysis, HeapDiff, HeapGraph, HeapSummary, Paths};
use hprof_profile::diff::{Gate, ProfileDiff, flame as diff_flame, report};
use hprof_profile::{Kind, Recording};

use crate::heap_progress::Bar;
use crate::input::{Either, Input, ProfileBytes, recording_of};
use crate::profile_select::SelectArgs;

const EXAMPLES: &str = "\
Examples:
  hprof diff before.hprof.txt after.hprof.txt            methods by change of self and total share
  hprof diff before.txt after.txt --stacks -n 10          whole stacks too
  hprof diff before.txt after.txt -o diff.html            NEW's flame graph coloured by change
  hprof diff before.txt after.txt -o diff.collapsed       `stack BASE NEW` lines (flamegraph.pl, inferno)
  hprof diff base.pb.gz new.collapsed --alloc --json      any mix of inputs `hprof convert` reads
  hprof diff base.txt new.txt --fail-above 2              exit 1 when a method's self share grew > 2 points
  hprof diff base.txt new.txt --fail-above-total 5        ... when a method's total share grew > 5 points
  hprof diff old.hprof new.hprof.gz                       heap dumps: classes and reference chains by change
  hprof diff old.hprof new.hprof --html diff.html --json  the report as a page, and as JSON on stdout
  hprof diff old.hprof new.hprof --fail-above 50MB        exit 1 when a chain's retained size grew > 50 MB
  hprof diff old.hprof new.hprof --fail-above 5%          ... by more than 5 % of OLD's reachable heap

Exit status: 0 when the gate passed (or there is none), 1 when it failed (the offending rows are
on stderr), 2 for bad input or options.";

/// Arguments of `hprof diff`.
#[derive(Debug, Args)]
#[command(
    about = "Show what changed between two profiles or two heap dumps, and gate a CI job on it",
    long_about = "Compares NEW with BASE.\n\nProfiles (the agent's text or binary output, folded \
stacks, gzipped pprof, in any mix): the profile of one kind is read from each, chosen as `hprof \
convert` chooses (--cpu, --times, --alloc, --live, --lock; by default the first kind both files \
hold) and each is normalised to its own total. Printed: methods by change of their self share and \
of their total share, in points (percentage points of each profile's total) with both shares, \
then the methods new in NEW and those that vanished; --stacks adds whole stacks. -o FILE.html \
writes NEW's flame graph with each frame coloured by its change (red grew, blue shrank); -o \
FILE.collapsed writes `stack BASE NEW` lines (BASE scaled to NEW's total), the input of \
flamegraph.pl's and inferno's differential flame graphs.\n\nHeap dumps (HPROF binary, ours or \
jcmd's, gzip-compressed or not): classes by change of retained size (with instances and shallow \
bytes), and the retained memory grouped by its reference chain from the GC roots (`static \
LeakHold.CACHE → java.util.HashMap.table → …`), chain by chain, since object ids do not \
survive from one dump to the next. Both files are heap dumps when both hold one and no profile \
kind is given (--heap says so).",
    after_help = EXAMPLES
)]
pub struct DiffArgs {
    /// BASE: the profile or heap dump compared against (the earlier run, the known-good build;
    /// `-` reads standard input).
    pub base: PathBuf,
    /// NEW: the profile or heap dump compared with BASE (`-` reads standard input).
    pub new: PathBuf,
    #[command(flatten)]
    pub select: SelectArgs,
    /// Compare the heap dumps of the two files (the default when both hold one and no profile
    /// kind is given).
    #[arg(long, conflicts_with_all = ["cpu", "times", "alloc", "live", "lock"])]
    pub heap: bool,
    /// Also write the diff to FILE: .html (flame graph, or the heap report), .collapsed or
    /// .folded (differential folded stacks, profiles only), .json.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write the HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Print one JSON object instead of the tables.
    #[arg(long)]
    pub json: bool,
    /// Rows per table (0: every row).
    #[arg(
        short = 'n',
        long,
        visible_alias = "top",
        default_value_t = 20,
        value_name = "N"
    )]
    pub rows: usize,
    /// Also rank whole stacks (profiles).
    #[arg(long)]
    pub stacks: bool,
    /// Exit with status 1 when a method's self share grew by more than LIMIT points
    /// (profiles), or when a reference chain's retained size grew by more than LIMIT bytes
    /// (heap dumps: a number with an optional unit, 50MB, 2GiB; or a percentage of OLD's
    /// reachable heap, 5%).
    #[arg(long, value_name = "LIMIT")]
    pub fail_above: Option<String>,
    /// Exit with status 1 when a method's total share grew by more than PCT points (profiles).
    #[arg(long, value_name = "PCT", value_parser = parse_points)]
    pub fail_above_total: Option<f64>,
    /// Title of the flame graph.
    #[arg(long)]
    pub title: Option<String>,
    /// Accept a truncated heap dump: compare what was read of it, say what is missing.
    #[arg(long)]
    pub allow_truncated: bool,
}

/// A number of points: `2`, `2.5`, `2%`.
fn parse_points(text: &str) -> std::result::Result<f64, String> {
    match text.trim().trim_end_matches('%').trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "`{text}` is not a number of points: a number of percentage points, 0 or more (2, 2.5)"
        )),
    }
}

/// A heap gate's limit.
#[derive(Debug, Clone, Copy, PartialEq)]
enum HeapLimit {
    Bytes(u64),
    /// A percentage of OLD's reachable bytes.
    Percent(f64),
}

/// A size (`1048576`, `512KB`, `50MB`, `2GiB`: units of 1024) or a percentage (`5%`).
fn parse_heap_limit(text: &str) -> std::result::Result<HeapLimit, String> {
    let bad = || {
        format!(
            "`{text}` is not a size or a percentage: bytes with an optional unit (50MB, 2GiB, \
units of 1024) or a percentage of OLD's reachable heap (5%)"
        )
    };
    let t = text.trim();
    if let Some(p) = t.strip_suffix('%') {
        return match p.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(HeapLimit::Percent(v)),
            _ => Err(bad()),
        };
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number: f64 = number.parse().map_err(|_| bad())?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(bad()),
    };
    Ok(HeapLimit::Bytes((number * scale).round() as u64))
}

/// An input as opened: an HPROF binary file, with what its records hold, or any other
/// profile, read through the bounded paths every command reads through
/// ([`crate::input::open_either`]).
enum Opened {
    Binary {
        input: Input,
        heap_dumps: usize,
        profile_records: usize,
        id_size: usize,
    },
    Other(ProfileBytes, bool),
}

impl Opened {
    /// Opens `path`: an HPROF binary file (gzip-compressed or not) is mapped or spooled and
    /// its records are looked over; any other profile is read.
    fn open(path: &Path) -> Result<Opened> {
        let input = match crate::input::open_either(path)? {
            Either::Profile(bytes, gzip) => return Ok(Opened::Other(bytes, gzip)),
            Either::Binary(input) => input,
        };
        let name = path.display().to_string();
        let (header, mut records) = Records::new(input.bytes()).with_context(|| name.clone())?;
        let (mut heap_dumps, mut profile_records) = (0, 0);
        let mut ended = true;
        loop {
            match records.next() {
                Ok(Some((_, record))) => match record {
                    Record::HeapDump(_) => heap_dumps += 1,
                    Record::HeapDumpSegment(_) if ended => {
                        heap_dumps += 1;
                        ended = false;
                    }
                    Record::HeapDumpEnd => ended = true,
                    Record::CpuSamples { .. } | Record::AllocSites(_) => profile_records += 1,
                    _ => {}
                },
                Ok(None) => break,
                Err(_) => {
                    // Errors are the readers' to report, with their context; a heap dump cut
                    // short is still a heap dump (its reader says what is missing).
                    let tag = input.bytes().get(records.offset() as usize).copied();
                    match tag.and_then(Tag::from_u8) {
                        Some(Tag::HeapDump) => heap_dumps += 1,
                        Some(Tag::HeapDumpSegment) if ended => heap_dumps += 1,
                        _ => {}
                    }
                    break;
                }
            }
        }
        Ok(Opened::Binary {
            input,
            heap_dumps,
            profile_records,
            id_size: header.id_size.bytes(),
        })
    }

    /// True if the file holds a heap dump, or is an HPROF binary file that can hold nothing
    /// else (no profile record: a heap dump cut before its first heap record, whose reader
    /// says what is missing).
    fn is_dump(&self) -> bool {
        match self {
            Opened::Binary {
                heap_dumps,
                profile_records,
                ..
            } => *heap_dumps > 0 || *profile_records == 0,
            Opened::Other(..) => false,
        }
    }

    /// True unless the file is an HPROF binary file with no profile record.
    fn may_be_profile(&self) -> bool {
        match self {
            Opened::Binary {
                profile_records, ..
            } => *profile_records > 0,
            Opened::Other(..) => true,
        }
    }

    fn what(&self) -> &'static str {
        if self.may_be_profile() {
            "a profile"
        } else {
            "a heap dump"
        }
    }

    /// The profile the file holds, read as every command reads one, but its frames by method
    /// (methods and stacks are compared by name).
    fn recording(&self, name: &str) -> Result<Recording> {
        match self {
            Opened::Binary { input, .. } => recording_of(input.bytes(), false, name, true),
            Opened::Other(bytes, gzip) => recording_of(bytes.bytes(), *gzip, name, true),
        }
    }
}

/// What errors call the two inputs.
const SIDES: [&str; 2] = ["BASE", "NEW"];

/// Runs `f` on BASE and on NEW, one on each core; errors name the side.
fn both<T: Send>(f: impl Fn(usize) -> Result<T> + Sync) -> Result<(T, T)> {
    let (base, new) = std::thread::scope(|scope| {
        let base = scope.spawn(|| f(0));
        let new = f(1);
        (base.join(), new)
    });
    let base = base
        .map_err(|_| anyhow::anyhow!("the reading thread failed"))?
        .context(SIDES[0])?;
    Ok((base, new.context(SIDES[1])?))
}

/// Runs `hprof diff`; the exit status: 0, or 1 when the gate failed. Errors exit with 2.
pub fn run(args: &DiffArgs, out: &mut dyn Write) -> Result<i32> {
    if args.base == Path::new("-") && args.new == Path::new("-") {
        bail!("standard input (-) can be only one of the two inputs");
    }
    let paths = [&args.base, &args.new];
    let (base, new) = both(|side| Opened::open(paths[side]))?;
    let heap = if args.select.kind().is_some() {
        false
    } else {
        args.heap || (base.is_dump() && new.is_dump())
    };
    let names = (
        args.base.display().to_string(),
        args.new.display().to_string(),
    );
    if heap {
        for (opened, name) in [(&base, &names.0), (&new, &names.1)] {
            if !opened.is_dump() {
                bail!(
                    "mismatched inputs: {name} holds no heap dump (it is {}); heap dumps are \
compared with heap dumps",
                    opened.what()
                );
            }
        }
        return heap_diff(args, base, new, &names, out);
    }
    for (opened, name, other) in [(&base, &names.0, &new), (&new, &names.1, &base)] {
        if !opened.may_be_profile() {
            bail!(
                "mismatched inputs: {name} is a heap dump, the other file is {}: `hprof diff` \
compares two profiles or two heap dumps",
                other.what()
            );
        }
    }
    profile_diff(args, &base, &new, &names, out)
}

/// Compares two profiles.
fn profile_diff(
    args: &DiffArgs,
    base: &Opened,
    new: &Opened,
    (base_name, new_name): &(String, String),
    out: &mut dyn Write,
) -> Result<i32> {
    if args.allow_truncated {
        bail!("--allow-truncated is for heap dumps; these are profiles");
    }
    let gate = Gate {
        self_points: args
            .fail_above
            .as_deref()
            .map(parse_points)
            .transpose()
            .map_err(|e| anyhow::anyhow!("--fail-above: {e}"))?,
        total_points: args.fail_above_total,
    };
    if args
        .output
        .as_deref()
        .is_some_and(|o| output_kind(o).is_none())
    {
        bail!(
            "-o: can't tell the format from {}: name it .html, .collapsed, .folded or .json",
            args.output.as_deref().unwrap_or(Path::new("")).display()
        );
    }
    let inputs = [(base, base_name), (new, new_name)];
    let (base_recording, new_recording) = both(|side| inputs[side].0.recording(inputs[side].1))?;
    let kinds = |r: &Recording| -> Vec<Kind> {
        Kind::ALL.into_iter().filter(|&k| r.dumps(k) > 0).collect()
    };
    let kind = match args.select.kind() {
        Some(kind) => kind,
        None => {
            let (b, n) = (kinds(&base_recording), kinds(&new_recording));
            match b.iter().find(|k| n.contains(k)) {
                Some(&kind) => kind,
                None => {
                    let list = |ks: &[Kind]| {
                        if ks.is_empty() {
                            "no profile".to_string()
                        } else {
                            let mut names: Vec<&str> = ks.iter().map(|k| k.section()).collect();
                            names.dedup();
                            names.join(", ")
                        }
                    };
                    bail!(
                        "mismatched inputs: {base_name} holds {}, {new_name} holds {}: no kind \
of profile is in both",
                        list(&b),
                        list(&n)
                    );
                }
            }
        }
    };
    let mut base_profile = args.select.profile(&base_recording, kind, base_name)?;
    let mut new_profile = args.select.profile(&new_recording, kind, new_name)?;
    base_profile.stable_names();
    new_profile.stable_names();
    for (profile, name) in [(&base_profile, base_name), (&new_profile, new_name)] {
        if profile.total() <= 0 {
            bail!("{name}: the {} profile is empty", kind.section());
        }
    }
    let diff = ProfileDiff::new(&base_profile, &new_profile);
    let options = report::Options {
        base_name,
        new_name,
        rows: args.rows,
        stacks: args.stacks,
    };
    let offences = diff.offences(&gate);
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| format!("{}: {new_name} against {base_name}", kind.section()));
    let mut outputs: Vec<(&Path, OutputKind)> = Vec::new();
    if let Some(path) = &args.output {
        outputs.push((path, output_kind(path).unwrap_or(OutputKind::Html)));
    }
    if let Some(path) = &args.html {
        outputs.push((path, OutputKind::Html));
    }
    for (path, kind) in outputs {
        write_file(path, |file| match kind {
            OutputKind::Html => diff_flame::write(&diff, &title, file),
            OutputKind::Collapsed => diff.write_folded(file),
            OutputKind::Json => writeln!(file, "{:#}", report::json(&diff, &options, &offences)),
        })?;
    }
    if args.json {
        writeln!(out, "{:#}", report::json(&diff, &options, &offences))?;
    } else {
        report::text(&diff, &options, out)?;
    }
    let status = gate_status(!offences.is_empty(), || {
        let mut text = Vec::new();
        let _ = report::offences(&diff, &offences, &mut text);
        text
    });
    // Freeing millions of small strings costs more than the comparison.
    std::mem::forget((base_recording, new_recording, base_profile, new_profile));
    Ok(status)
}

/// The exit status of a gate, and its offending rows (`rows()`) on stderr when it failed.
fn gate_status(failed: bool, rows: impl FnOnce() -> Vec<u8>) -> i32 {
    if !failed {
        return 0;
    }
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(b"hprof diff: the gate failed:\n");
    let _ = err.write_all(&rows());
    1
}

/// What an output file holds, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OutputKind {
    Html,
    Collapsed,
    Json,
}

fn output_kind(path: &Path) -> Option<OutputKind> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    if name.ends_with(".html") || name.ends_with(".htm") {
        Some(OutputKind::Html)
    } else if name.ends_with(".collapsed") || name.ends_with(".folded") {
        Some(OutputKind::Collapsed)
    } else if name.ends_with(".json") {
        Some(OutputKind::Json)
    } else {
        None
    }
}

/// Writes a new private file at `path` with `write`.
fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let file =
        hprof_outfile::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    write(&mut out)
        .and_then(|()| out.flush())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// What an analysis leaves to free: the graph, its analysis, its paths.
type Analysed<'i> = (HeapGraph<'i>, Analysis, Paths);

/// Analyses one heap dump (`input`, named `name`, read whole unless `allow_truncated`): what
/// the comparison needs of it, and what is left to free.
fn summarise<'i>(
    input: &'i Input,
    name: &str,
    allow_truncated: bool,
) -> Result<(HeapSummary, Analysed<'i>)> {
    let bar = Bar::new(input);
    let (mut graph, completeness) = super::analyze::open_graph(input, name, allow_truncated, &bar)?;
    crate::input::finish_reading(name, &completeness, allow_truncated)?;
    let (analysis, strong) = Analysis::new(&mut graph, &bar);
    let summary = HeapSummary::new(&graph, &analysis, &strong, &bar);
    bar.finish();
    Ok((summary, (graph, analysis, strong)))
}

/// Compares two heap dumps.
fn heap_diff(
    args: &DiffArgs,
    base: Opened,
    new: Opened,
    (old_name, new_name): &(String, String),
    out: &mut dyn Write,
) -> Result<i32> {
    let s = &args.select;
    if args.stacks
        || args.fail_above_total.is_some()
        || args.title.is_some()
        || s.dump.is_some()
        || s.all
        || s.threads.is_some()
        || s.from.is_some()
        || s.to.is_some()
        || s.include.is_some()
        || s.exclude.is_some()
    {
        bail!(
            "--stacks, --fail-above-total, --title, --dump, --all, --threads, --from, --to, \
--include and --exclude are for profiles; these are heap dumps"
        );
    }
    let limit = args
        .fail_above
        .as_deref()
        .map(parse_heap_limit)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--fail-above: {e}"))?;
    if let Some(path) = &args.output
        && !matches!(output_kind(path), Some(OutputKind::Html | OutputKind::Json))
    {
        bail!(
            "-o: heap dumps are compared as .html or .json, not {}",
            path.display()
        );
    }
    if let (Opened::Binary { id_size: a, .. }, Opened::Binary { id_size: b, .. }) = (&base, &new)
        && a != b
    {
        bail!(
            "mismatched inputs: {old_name} has {a}-byte identifiers, {new_name} {b}-byte ones \
(dumps of a {}-bit and a {}-bit JVM): their objects cannot be compared",
            a * 8,
            b * 8
        );
    }
    let allow = args.allow_truncated;
    let (
        Opened::Binary {
            input: old_input, ..
        },
        Opened::Binary {
            input: new_input, ..
        },
    ) = (base, new)
    else {
        bail!("heap dumps are compared with heap dumps");
    };
    let (old, new) = std::thread::scope(|scope| -> Result<_> {
        let (old, analysed) = summarise(&old_input, old_name, allow).context(SIDES[0])?;
        // OLD's graph is freed on the other core while NEW is read.
        scope.spawn(move || drop(analysed));
        let (new, analysed) = summarise(&new_input, new_name, allow).context(SIDES[1])?;
        drop(analysed);
        Ok((old, new))
    })?;
    let diff = HeapDiff::new(&old, &new);
    let limit_bytes = limit.map(|l| match l {
        HeapLimit::Bytes(b) => b,
        HeapLimit::Percent(p) => (old.totals.reachable_bytes as f64 * p / 100.0) as u64,
    });
    let offences = limit_bytes.map(|b| diff.offences(b)).unwrap_or_default();
    let options = heap_report::Options {
        old_name,
        new_name,
        rows: args.rows,
        gate: limit_bytes.map(|b| (b, offences.as_slice())),
    };
    let mut pages: Vec<(&Path, OutputKind)> = Vec::new();
    if let Some(path) = &args.output {
        pages.push((path, output_kind(path).unwrap_or(OutputKind::Html)));
    }
    if let Some(path) = &args.html {
        pages.push((path, OutputKind::Html));
    }
    for (path, kind) in pages {
        write_file(path, |file| match kind {
            OutputKind::Json => writeln!(file, "{:#}", heap_report::json(&diff, &options)),
            _ => file.write_all(heap_report::html(&diff, &options).as_bytes()),
        })?;
    }
    if args.json {
        writeln!(out, "{:#}", heap_report::json(&diff, &options))?;
    } else {
        out.write_all(heap_report::text(&diff, &options).as_bytes())?;
    }
    Ok(gate_status(!offences.is_empty(), || {
        heap_report::offences(&diff, limit_bytes.unwrap_or(0), &offences).into_bytes()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_as_points_sizes_and_percentages() {
        assert_eq!(parse_points("2.5"), Ok(2.5));
        assert_eq!(parse_points("3%"), Ok(3.0));
        assert!(parse_points("-1").is_err());
        assert!(parse_points("lots").unwrap_err().contains("points"));
        assert_eq!(parse_heap_limit("1048576"), Ok(HeapLimit::Bytes(1 << 20)));
        assert_eq!(parse_heap_limit("50MB"), Ok(HeapLimit::Bytes(50 << 20)));
        assert_eq!(parse_heap_limit("2 GiB"), Ok(HeapLimit::Bytes(2 << 30)));
        assert_eq!(parse_heap_limit("1.5k"), Ok(HeapLimit::Bytes(1536)));
        assert_eq!(parse_heap_limit("5%"), Ok(HeapLimit::Percent(5.0)));
        assert!(
            parse_heap_limit("5 parsecs")
                .unwrap_err()
                .contains("percentage")
        );
    }
}
