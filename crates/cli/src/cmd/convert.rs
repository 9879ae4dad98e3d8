//! `hprof convert`: a profile the agent wrote (text or binary) or a JFR recording as folded
//! stacks, pprof or an HTML flame graph.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use hprof_profile::{Filter, Kind, Profile, Recording, Selection};

use crate::report::{Format, write};

/// Which profile of a file a command reads: the kind of section, the dump, threads, filters.
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
    /// Reads the input and makes the profile the options select.
    pub fn load(&self) -> Result<(Profile, Kind)> {
        self.load_with(false)
    }

    /// As [`ProfileArgs::load`]; with `timeline`, the profile has its timeline when the
    /// file's samples carry their times.
    pub fn load_with(&self, timeline: bool) -> Result<(Profile, Kind)> {
        let name = self.input.display().to_string();
        let bytes = crate::input::read_profile(&self.input)?;
        let recording = Recording::read(&bytes).with_context(|| name.clone())?;
        drop(bytes);
        crate::report::warn_notes(&name, &recording);
        let kind = if self.cpu {
            Kind::Cpu
        } else if self.wall {
            Kind::Wall
        } else if self.times {
            Kind::Times
        } else if self.alloc {
            Kind::Alloc
        } else if self.live {
            Kind::Live
        } else if self.lock {
            Kind::Lock
        } else {
            recording.default_kind().with_context(|| {
                if recording.span().is_some() {
                    format!(
                        "{name}: no execution, wall-clock, allocation or lock events in the recording"
                    )
                } else {
                    format!("{name}: no CPU SAMPLES, CPU TIME, SITES or MONITOR TIME section")
                }
            })?
        };
        let selection = match (self.dump, self.all) {
            (Some(n), _) => Selection::Nth(n),
            (None, true) => Selection::All,
            (None, false) => Selection::Last,
        };
        let regex = |r: &Option<String>| -> Result<Option<regex::Regex>> {
            r.as_deref()
                .map(|r| {
                    regex::Regex::new(r).with_context(|| format!("bad regular expression {r:?}"))
                })
                .transpose()
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
        if let (Some(from), Some(to)) = (filter.from, filter.to)
            && from >= to
        {
            bail!("--from must come before --to");
        }
        let mut profile = recording
            .profile_filtered(kind, selection, &filter)
            .with_context(|| name.clone())?;
        profile.filter(
            regex(&self.include)?.as_ref(),
            regex(&self.exclude)?.as_ref(),
        );
        Ok((profile, kind))
    }
}

/// Converts a profile the agent wrote, or a JFR recording, to a standard format.
#[derive(Debug, Args)]
#[command(
    after_help = "The output's extension picks the format: .html (flame graph), \
.collapsed or .folded (folded stacks), .pb.gz (pprof). The default profile is the first the \
file holds of CPU samples, CPU time, allocated, live, lock (and wall, for JFR); the default \
dump is the last. From a file whose samples carry their times (JFR), the HTML page has a \
timeline above the flame graph: drag across it to draw the flame graph of that range."
)]
pub struct ConvertArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// The file to write.
    pub output: PathBuf,
    /// Format, instead of the one the output's extension names.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Title of the flame graph.
    #[arg(long)]
    pub title: Option<String>,
}

/// Runs `hprof convert`.
pub fn run(args: &ConvertArgs) -> Result<()> {
    let format = match args.format.or_else(|| Format::from_extension(&args.output)) {
        Some(f) => f,
        None => bail!(
            "can't tell the format from {}: name it .html, .collapsed, .folded or .pb.gz, or give --format",
            args.output.display()
        ),
    };
    let (profile, kind) = args.profile.load_with(format == Format::Html)?;
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| format!("{} — {}", kind.section(), args.profile.input.display()));
    write(&profile, format, &title, &args.output)?;
    let (total, stacks) = (profile.total(), profile.samples.len());
    let sample_type = profile
        .sample_types
        .first()
        .map(|t| t.name.clone())
        .unwrap_or_default();
    std::mem::forget(profile);
    eprintln!(
        "hprof: wrote {} ({} {}, {} stacks)",
        args.output.display(),
        total,
        sample_type,
        stacks
    );
    Ok(())
}
