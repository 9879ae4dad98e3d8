//! `hprof top`: the methods of a profile ranked by self and total share, summed over every
//! trace (or, with `--by trace`, the traces as the section lists them).

use std::io::{IsTerminal, Write};

use anyhow::Result;
use clap::{Args, ValueEnum};
use hprof_profile::top::{self, share, stack_names, unit};
use hprof_profile::{Profile, top::by_value};

use crate::profiles::ProfileArgs;

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

/// What `hprof top` ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum By {
    /// Methods, by self then total value.
    Method,
    /// Traces (stacks), by value.
    Trace,
}

/// Runs `hprof top`.
pub fn run(args: &TopArgs, out: &mut dyn Write) -> Result<()> {
    let (profile, kind) = args.profile.load()?;
    write_top(&profile, kind.section(), args, out)?;
    // Freeing its millions of small strings would cost more than the ranking.
    std::mem::forget(profile);
    Ok(())
}

/// Writes the ranking of `profile`: a table, or with `--json` one JSON object.
fn write_top(profile: &Profile, section: &str, args: &TopArgs, out: &mut dyn Write) -> Result<()> {
    if !args.json {
        match args.by {
            By::Method => top::write_methods(
                profile,
                section,
                args.rows,
                args.stacks,
                colour_wanted(args.color),
                out,
            )?,
            By::Trace => top::write_traces(profile, section, args.rows, args.stacks, out)?,
        }
        return Ok(());
    }
    let total = profile.total();
    let unit = unit(profile);
    let doc = match args.by {
        By::Method => {
            let rows: Vec<_> = top::methods(profile)
                .iter()
                .take(args.rows)
                .map(|r| {
                    serde_json::json!({
                        "method": r.name,
                        "kind": r.kind.group(),
                        "self": r.self_value,
                        "total": r.total_value,
                        "self_percent": share(r.self_value, total),
                        "total_percent": share(r.total_value, total),
                        "stack": stack_names(profile, &r.hottest),
                    })
                })
                .collect();
            let kinds: serde_json::Map<String, serde_json::Value> = top::groups(profile)
                .into_iter()
                .map(|(g, v)| (g.to_string(), v.into()))
                .collect();
            serde_json::json!({"section": section, "unit": unit, "total": total, "kinds": kinds, "methods": rows})
        }
        By::Trace => {
            let rows: Vec<_> = by_value(profile)
                .iter()
                .take(args.rows)
                .map(|s| serde_json::json!({"value": s.values[0], "percent": share(s.values[0], total), "thread": s.thread, "stack": stack_names(profile, &s.stack)}))
                .collect();
            serde_json::json!({"section": section, "unit": unit, "total": total, "traces": rows})
        }
    };
    writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    Ok(())
}
