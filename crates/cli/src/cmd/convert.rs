//! `hprof convert`: a profile the agent wrote (text or binary) as folded stacks, pprof or an
//! HTML flame graph.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use hprof_profile::{Kind, Profile, Recording, flame, folded, pprof};

use crate::profile_select::SelectArgs;

/// Which profile of a file a command reads: the file, and the kind of section, the dump,
/// threads and filters.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// A profile: the agent's java.hprof.txt or binary output, folded stacks, or gzipped pprof.
    pub input: PathBuf,
    #[command(flatten)]
    pub select: SelectArgs,
}

impl ProfileArgs {
    /// Reads the input and makes the profile the options select.
    pub fn load(&self) -> Result<(Profile, Kind)> {
        let name = self.input.display().to_string();
        let bytes = std::fs::read(&self.input).with_context(|| format!("cannot read {name}"))?;
        let recording = Recording::read(&bytes).with_context(|| name.clone())?;
        let kind = match self.select.kind() {
            Some(kind) => kind,
            None => recording.default_kind().with_context(|| {
                format!("{name}: no CPU SAMPLES, CPU TIME, SITES or MONITOR TIME section")
            })?,
        };
        Ok((self.select.profile(&recording, kind, &name)?, kind))
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
    pub(crate) fn from_extension(path: &std::path::Path) -> Option<Format> {
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
