//! `hprof convert`: a profile the agent wrote (text or binary) or a JFR recording as folded
//! stacks, pprof or an HTML flame graph.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;
use hprof_profile::{Kind, Profile};

use crate::report::{Format, write};

use crate::profile_select::SelectArgs;

/// Which profile of a file a command reads: the file, and the kind of section, the dump,
/// threads and filters.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// A profile: the agent's java.hprof.txt or binary output, a JFR recording (JDK 11 to 25,
    /// async-profiler), folded stacks, or gzipped pprof; plain or gzip-compressed.
    pub input: PathBuf,
    #[command(flatten)]
    pub select: SelectArgs,
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
        let recording = crate::input::read_recording(&self.input)?;
        crate::report::warn_notes(&name, &recording);
        let kind = self.select.kind_in(&recording, &name)?;
        Ok((
            self.select
                .profile_with(&recording, kind, &name, timeline)?,
            kind,
        ))
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
