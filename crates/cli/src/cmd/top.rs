//! `hprof top`: the methods of a profile ranked by self and total share, summed over every
//! trace (or, with `--by trace`, the traces as the section lists them).

use std::io::{IsTerminal, Write};

use anyhow::Result;
use clap::{Args, ValueEnum};

use crate::cmd::convert::ProfileArgs;
use crate::report::{By, Ranking, write_top};

/// Ranks the methods of a profile the agent wrote.
#[derive(Debug, Args)]
pub struct TopArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// Rank methods (self, then total) or traces.
    #[arg(long, value_enum, default_value = "method")]
    pub by: By,
    /// How many rows.
    #[arg(short = 'n', long, default_value_t = 20, value_name = "N")]
    pub rows: usize,
    /// Show each row's hottest stack.
    #[arg(long)]
    pub stacks: bool,
    /// One JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Colour native, JVM and kernel functions: `auto` on a terminal unless `NO_COLOR` is set.
    #[arg(long, value_enum, default_value = "auto", value_name = "WHEN")]
    pub color: Colour,
}

/// When `hprof top` colours its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Colour {
    /// On a terminal, unless `NO_COLOR` is set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Whether `hprof top` colours its output (`--color`).
fn colour_wanted(when: Colour) -> bool {
    match when {
        Colour::Always => true,
        Colour::Never => false,
        Colour::Auto => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// Runs `hprof top`.
pub fn run(args: &TopArgs, out: &mut dyn Write) -> Result<()> {
    let (profile, kind) = args.profile.load()?;
    let ranking = Ranking {
        by: args.by,
        rows: args.rows,
        stacks: args.stacks,
        json: args.json,
        colour: colour_wanted(args.color),
    };
    write_top(&profile, kind.section(), &ranking, out)?;
    // Freeing its millions of small strings would cost more than the ranking.
    std::mem::forget(profile);
    Ok(())
}
