//! Which profile of a file a command reads: the kind of section, the dump, threads and
//! filters, as options shared by the commands that read profiles (`convert`, `top`, `diff`).

use anyhow::{Context, Result, bail};
use clap::Args;
use hprof_profile::{Filter, Kind, Profile, Recording, Selection};

/// The options that pick a profile out of a file.
#[derive(Debug, Default, Args)]
pub struct SelectArgs {
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

impl SelectArgs {
    /// The kind a flag names, if one does.
    pub fn kind(&self) -> Option<Kind> {
        [
            (self.cpu, Kind::Cpu),
            (self.wall, Kind::Wall),
            (self.times, Kind::Times),
            (self.alloc, Kind::Alloc),
            (self.live, Kind::Live),
            (self.lock, Kind::Lock),
        ]
        .into_iter()
        .find_map(|(flag, kind)| flag.then_some(kind))
    }

    /// The dumps the options select.
    pub fn selection(&self) -> Selection {
        match (self.dump, self.all) {
            (Some(n), _) => Selection::Nth(n),
            (None, true) => Selection::All,
            (None, false) => Selection::Last,
        }
    }

    /// The profile of `kind` in `recording` (read from the file `name`), filtered.
    pub fn profile(&self, recording: &Recording, kind: Kind, name: &str) -> Result<Profile> {
        Ok(self.select(recording, Some(kind), name, false)?.0)
    }

    /// The profile of `kind` (by default the first the recording holds) in `recording` (read
    /// from the file `name`), filtered; with `timeline`, the profile has its timeline when the
    /// file's samples carry their times. And its kind.
    pub fn select(
        &self,
        recording: &Recording,
        kind: Option<Kind>,
        name: &str,
        timeline: bool,
    ) -> Result<(Profile, Kind)> {
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
        recording
            .select(
                kind,
                self.selection(),
                &filter,
                regex(&self.include)?.as_ref(),
                regex(&self.exclude)?.as_ref(),
            )
            .with_context(|| name.to_string())
    }
}
