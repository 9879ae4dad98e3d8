//! Owns what the commands that read the agent's profiles share (none imports another): which
//! profile of a file to read ([`ProfileArgs`]), writing a profile to a file in a standard
//! format ([`write`]), the report `hprof run` and `hprof attach` print ([`report`]), and the
//! warning that a profile is incomplete ([`warn_notes`]).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use hprof_profile::{Filter, Format, Kind, Profile, Recording, Selection};

/// Which profile of a file a command reads: the kind of section, the dump, threads, times,
/// filters.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// A java.hprof.txt or binary profile written by the agent, or a JFR recording (JDK 11
    /// to 25, async-profiler); plain or gzip-compressed.
    pub input: PathBuf,
    /// CPU SAMPLES (JFR: jdk.CPUTimeSample when the recording has them, else
    /// jdk.ExecutionSample).
    #[arg(long, group = "kind")]
    pub cpu: bool,
    /// JFR wall-clock samples (jdk.NativeMethodSample, async-profiler's WallClockSample),
    /// the thread's state as the root frame.
    #[arg(long, group = "kind")]
    pub wall: bool,
    /// CPU TIME: self milliseconds and calls.
    #[arg(long, group = "kind")]
    pub times: bool,
    /// SITES: allocated bytes and objects (the allocated class as the leaf frame); JFR:
    /// jdk.ObjectAllocationSample's weights, else the TLAB events' sizes.
    #[arg(long, group = "kind")]
    pub alloc: bool,
    /// SITES: live bytes and objects (the allocated class as the leaf frame).
    #[arg(long, group = "kind")]
    pub live: bool,
    /// MONITOR TIME: time waited to enter monitors; JFR: jdk.JavaMonitorEnter and
    /// jdk.ThreadPark, their durations (the monitor's class as the leaf frame).
    #[arg(long, group = "kind")]
    pub lock: bool,
    /// The N-th dump of the file (from 1), instead of the last.
    #[arg(long, value_name = "N", conflicts_with = "all")]
    pub dump: Option<usize>,
    /// Every dump of the file, added up.
    #[arg(long)]
    pub all: bool,
    /// Split by thread (traces taken with thread=y; JFR): the thread is the root frame. With
    /// =REGEX, only the threads whose name matches.
    #[arg(long, value_name = "REGEX", num_args = 0..=1, require_equals = true)]
    pub threads: Option<Option<String>>,
    /// Only samples taken at or after this time: seconds from the recording's start (12.5),
    /// or a wall-clock time (14:03:12, 2026-11-26T14:03:12.250, ...Z or +01:00; local time
    /// unless it names its zone). Needs samples with times (JFR).
    #[arg(long, value_name = "TIME")]
    pub from: Option<String>,
    /// Only samples taken before this time (as --from).
    #[arg(long, value_name = "TIME")]
    pub to: Option<String>,
    /// Keep only frames matching this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub include: Option<String>,
    /// Drop frames matching this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub exclude: Option<String>,
}

impl ProfileArgs {
    /// The default profile of `input` (every option at its default).
    pub fn of(input: &Path) -> ProfileArgs {
        ProfileArgs {
            input: input.to_path_buf(),
            cpu: false,
            wall: false,
            times: false,
            alloc: false,
            live: false,
            lock: false,
            dump: None,
            all: false,
            threads: None,
            from: None,
            to: None,
            include: None,
            exclude: None,
        }
    }

    /// Reads the input and makes the profile the options select.
    pub fn load(&self) -> Result<(Profile, Kind)> {
        self.load_with(false)
    }

    /// As [`ProfileArgs::load`]; with `timeline`, the profile has its timeline when the
    /// file's samples carry their times.
    pub fn load_with(&self, timeline: bool) -> Result<(Profile, Kind)> {
        let regex = |r: &Option<String>| -> Result<Option<regex::Regex>> {
            r.as_deref()
                .map(|r| {
                    regex::Regex::new(r).with_context(|| format!("bad regular expression {r:?}"))
                })
                .transpose()
        };
        let (include, exclude) = (regex(&self.include)?, regex(&self.exclude)?);
        let name = self.input.display().to_string();
        let bytes = crate::input::read_profile(&self.input)?;
        let recording = Recording::read(&bytes).with_context(|| name.clone())?;
        drop(bytes);
        warn_notes(&name, &recording);
        let kind = [
            (self.cpu, Kind::Cpu),
            (self.wall, Kind::Wall),
            (self.times, Kind::Times),
            (self.alloc, Kind::Alloc),
            (self.live, Kind::Live),
            (self.lock, Kind::Lock),
        ]
        .into_iter()
        .find_map(|(chosen, kind)| chosen.then_some(kind));
        let selection = match (self.dump, self.all) {
            (Some(n), _) => Selection::Nth(n),
            (None, true) => Selection::All,
            (None, false) => Selection::Last,
        };
        let span = recording.span();
        let time = |option: &str, text: &Option<String>| -> Result<Option<i64>> {
            let Some(text) = text else { return Ok(None) };
            let Some((start, _)) = span else {
                bail!(
                    "{name}: --{option} needs samples with their times (a JFR recording); this file has none"
                );
            };
            crate::when::resolve(text, start)
                .map(Some)
                .with_context(|| format!("--{option} {text:?}"))
        };
        let filter = Filter {
            by_thread: self.threads.is_some(),
            threads: regex(&self.threads.clone().flatten())?,
            from: time("from", &self.from)?,
            to: time("to", &self.to)?,
            timeline,
        };
        recording
            .select(kind, selection, &filter, include.as_ref(), exclude.as_ref())
            .with_context(|| name.clone())
    }
}

/// The parser of a `--format` option: a [`Format`]'s name.
pub fn format_parser() -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(
        Format::ALL.map(|f| clap::builder::PossibleValue::new(f.name()).help(f.description())),
    )
    .map(|name| Format::from_name(&name).unwrap_or(Format::Html))
}

/// Writes the profile `profile` selects to `output` in `format` (the flame graph titled
/// `title`, by default after the section and the file), and says so on standard error.
pub fn convert(
    profile: &ProfileArgs,
    output: &Path,
    format: Format,
    title: Option<&str>,
) -> Result<()> {
    let (selected, kind) = profile.load_with(format == Format::Html)?;
    let title = title.map_or_else(
        || format!("{} — {}", kind.section(), profile.input.display()),
        str::to_string,
    );
    write(&selected, format, &title, output)?;
    let (total, stacks) = (selected.total(), selected.samples.len());
    let sample_type = selected
        .sample_types
        .first()
        .map(|t| t.name.clone())
        .unwrap_or_default();
    // Freeing its millions of small strings would cost more than the conversion.
    std::mem::forget(selected);
    eprintln!(
        "hprof: wrote {} ({} {}, {} stacks)",
        output.display(),
        total,
        sample_type,
        stacks
    );
    Ok(())
}

/// Writes `profile` to a new private file at `path` in `format`.
pub fn write(profile: &Profile, format: Format, title: &str, path: &Path) -> Result<()> {
    let file =
        hprof_outfile::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    format
        .write(profile, title, &mut out)
        .and_then(|()| out.flush())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Reports a profile: for each kind of section it holds, the hottest methods of the last dump;
/// then writes its flame graph (of the first kind) to `flame`.
pub fn report(path: &Path, flame: Option<&Path>, top: usize, out: &mut dyn Write) -> Result<()> {
    let bytes = crate::input::read_profile(path)?;
    let recording = Recording::read(&bytes).with_context(|| format!("{}", path.display()))?;
    warn_notes(&path.display().to_string(), &recording);
    writeln!(out, "\nProfile written to {}", path.display())?;
    let kinds: Vec<Kind> = [Kind::Cpu, Kind::Times, Kind::Alloc, Kind::Lock]
        .into_iter()
        .filter(|&k| recording.dumps(k) > 0)
        .collect();
    for &kind in &kinds {
        let profile = recording.profile(kind, Selection::Last, false)?;
        writeln!(out)?;
        hprof_profile::top::write_methods(&profile, kind.section(), top, false, out)?;
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

/// Warns of what the agent noted it could not write into a profile (a dump cut short by a
/// full disk, a heap dump it lost): the profile is incomplete.
pub fn warn_notes(name: &str, recording: &Recording) {
    for note in recording.notes() {
        eprintln!("hprof: warning: {name} is incomplete: its writer noted: {note}");
    }
}
