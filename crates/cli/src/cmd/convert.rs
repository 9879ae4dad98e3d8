//! `hprof convert`: a profile the agent wrote (text or binary) as folded stacks, pprof or an
//! HTML flame graph.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use hprof_profile::{Kind, Recording, Selection, flame, folded, pprof};

/// Converts a profile the agent wrote to a standard format.
#[derive(Debug, Args)]
#[command(
    after_help = "The output's extension picks the format: .html (flame graph), \
.collapsed or .folded (folded stacks), .pb.gz (pprof). The default profile is the first the \
file holds of CPU samples, CPU time, allocated, live, lock; the default dump is the last."
)]
pub struct ConvertArgs {
    /// A java.hprof.txt or binary profile written by the agent.
    pub input: PathBuf,
    /// The file to write.
    pub output: PathBuf,
    /// Format, instead of the one the output's extension names.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
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
    /// Title of the flame graph.
    #[arg(long)]
    pub title: Option<String>,
}

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
    fn from_extension(path: &std::path::Path) -> Option<Format> {
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

/// Runs `hprof convert`.
pub fn run(args: &ConvertArgs) -> Result<()> {
    let format = match args.format.or_else(|| Format::from_extension(&args.output)) {
        Some(f) => f,
        None => bail!(
            "can't tell the format from {}: name it .html, .collapsed, .folded or .pb.gz, or give --format",
            args.output.display()
        ),
    };
    let name = args.input.display().to_string();
    let bytes = std::fs::read(&args.input).with_context(|| format!("cannot read {name}"))?;
    let recording = Recording::read(&bytes).with_context(|| name.clone())?;
    let kind = if args.cpu {
        Kind::Cpu
    } else if args.times {
        Kind::Times
    } else if args.alloc {
        Kind::Alloc
    } else if args.live {
        Kind::Live
    } else if args.lock {
        Kind::Lock
    } else {
        recording.default_kind().with_context(|| {
            format!("{name}: no CPU SAMPLES, CPU TIME, SITES or MONITOR TIME section")
        })?
    };
    let selection = match (args.dump, args.all) {
        (Some(n), _) => Selection::Nth(n),
        (None, true) => Selection::All,
        (None, false) => Selection::Last,
    };
    let mut profile = recording
        .profile(kind, selection, args.threads)
        .with_context(|| name.clone())?;
    let regex = |r: &Option<String>| -> Result<Option<regex::Regex>> {
        r.as_deref()
            .map(|r| regex::Regex::new(r).with_context(|| format!("bad regular expression {r:?}")))
            .transpose()
    };
    profile.filter(
        regex(&args.include)?.as_ref(),
        regex(&args.exclude)?.as_ref(),
    );
    let file = hprof_outfile::create(&args.output)
        .with_context(|| format!("cannot create {}", args.output.display()))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| format!("{} — {}", kind.section(), name));
    match format {
        Format::Collapsed => folded::write(&profile, &mut out),
        Format::Pprof => pprof::write(&profile, &mut out),
        Format::Html => flame::write(&profile, &title, &mut out),
    }
    .and_then(|()| out.flush())
    .with_context(|| format!("cannot write {}", args.output.display()))?;
    eprintln!(
        "hprof: wrote {} ({} {}, {} stacks)",
        args.output.display(),
        profile.total(),
        profile.sample_types.first().map_or("", |t| t.name.as_str()),
        profile.samples.len()
    );
    Ok(())
}
