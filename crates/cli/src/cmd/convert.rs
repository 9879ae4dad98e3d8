//! `hprof convert`: a profile the agent wrote (text or binary) as folded stacks, pprof or an
//! HTML flame graph.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use hprof_profile::{Kind, Profile, Recording, Selection};

use crate::report::{Format, write};

/// Which profile of a file a command reads: the kind of section, the dump, threads, filters.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// A java.hprof.txt or binary profile written by the agent.
    pub input: PathBuf,
    /// CPU SAMPLES.
    #[arg(long, group = "kind")]
    pub cpu: bool,
    /// CPU TIME: self milliseconds and calls.
    #[arg(long, group = "kind")]
    pub times: bool,
    /// SITES: allocated bytes and objects (the allocated class as the leaf frame).
    #[arg(long, group = "kind")]
    pub alloc: bool,
    /// SITES: live bytes and objects (the allocated class as the leaf frame).
    #[arg(long, group = "kind")]
    pub live: bool,
    /// MONITOR TIME: time waited to enter monitors.
    #[arg(long, group = "kind")]
    pub lock: bool,
    /// The N-th dump of the file (from 1), instead of the last.
    #[arg(long, value_name = "N", conflicts_with = "all")]
    pub dump: Option<usize>,
    /// Every dump of the file, added up.
    #[arg(long)]
    pub all: bool,
    /// Split by thread (traces taken with thread=y): the thread is the root frame.
    #[arg(long)]
    pub threads: bool,
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
        let name = self.input.display().to_string();
        let bytes = crate::input::read_profile(&self.input)?;
        let recording = Recording::read(&bytes).with_context(|| name.clone())?;
        crate::report::warn_notes(&name, &recording);
        let kind = if self.cpu {
            Kind::Cpu
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
                format!("{name}: no CPU SAMPLES, CPU TIME, SITES or MONITOR TIME section")
            })?
        };
        let selection = match (self.dump, self.all) {
            (Some(n), _) => Selection::Nth(n),
            (None, true) => Selection::All,
            (None, false) => Selection::Last,
        };
        let mut profile = recording
            .profile(kind, selection, self.threads)
            .with_context(|| name.clone())?;
        let regex = |r: &Option<String>| -> Result<Option<regex::Regex>> {
            r.as_deref()
                .map(|r| {
                    regex::Regex::new(r).with_context(|| format!("bad regular expression {r:?}"))
                })
                .transpose()
        };
        profile.filter(
            regex(&self.include)?.as_ref(),
            regex(&self.exclude)?.as_ref(),
        );
        Ok((profile, kind))
    }
}

/// Converts a profile the agent wrote to a standard format.
#[derive(Debug, Args)]
#[command(
    after_help = "The output's extension picks the format: .html (flame graph), \
.collapsed or .folded (folded stacks), .pb.gz (pprof). The default profile is the first the \
file holds of CPU samples, CPU time, allocated, live, lock; the default dump is the last."
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
    let (profile, kind) = args.profile.load()?;
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
