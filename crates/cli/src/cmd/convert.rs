//! `hprof convert`: a profile the agent wrote (text or binary) or a JFR recording as folded
//! stacks, pprof or an HTML flame graph.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;
use hprof_profile::Format;

use crate::profiles::{ProfileArgs, convert, format_parser};

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
    #[arg(long, value_parser = format_parser())]
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
    convert(&args.profile, &args.output, format, args.title.as_deref())
}
