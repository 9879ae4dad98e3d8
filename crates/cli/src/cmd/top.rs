//! `hprof top`: the methods of a profile ranked by self and total share, summed over every
//! trace (or, with `--by trace`, the traces as the section lists them).

use std::io::Write;

use anyhow::Result;
use clap::{Args, ValueEnum};
use hprof_profile::{Profile, top};

use crate::cmd::convert::ProfileArgs;

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
}

/// What `hprof top` ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum By {
    /// Methods, by self then total value.
    Method,
    /// Traces (stacks), by value.
    Trace,
}

fn share(value: i64, total: i64) -> f64 {
    if total == 0 {
        0.0
    } else {
        value as f64 * 100.0 / total as f64
    }
}

fn stack_names(profile: &Profile, stack: &[usize]) -> Vec<String> {
    stack
        .iter()
        .rev()
        .map(|&f| profile.frames[f].name().to_string())
        .collect()
}

/// Runs `hprof top`.
pub fn run(args: &TopArgs, out: &mut dyn Write) -> Result<()> {
    let (profile, kind) = args.profile.load()?;
    write_top(&profile, kind.section(), args, out)?;
    // Freeing its millions of small strings would cost more than the ranking.
    std::mem::forget(profile);
    Ok(())
}

/// Writes the ranking of `profile` (also used by `hprof run`'s report).
pub fn write_top(
    profile: &Profile,
    section: &str,
    args: &TopArgs,
    out: &mut dyn Write,
) -> Result<()> {
    let total = profile.total();
    let unit = profile.sample_types.first().map_or(String::new(), |t| {
        if t.unit == "count" {
            t.name.clone()
        } else {
            t.unit.clone()
        }
    });
    match args.by {
        By::Method => {
            let rows = top::methods(profile);
            if args.json {
                let rows: Vec<_> = rows
                    .iter()
                    .take(args.rows)
                    .map(|r| {
                        serde_json::json!({
                            "method": r.name,
                            "self": r.self_value,
                            "total": r.total_value,
                            "self_percent": share(r.self_value, total),
                            "total_percent": share(r.total_value, total),
                            "stack": stack_names(profile, &r.hottest),
                        })
                    })
                    .collect();
                let doc = serde_json::json!({"section": section, "unit": unit, "total": total, "methods": rows});
                writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
                return Ok(());
            }
            writeln!(out, "{section}: {total} {unit}, by method")?;
            writeln!(out, "rank   self  total  method")?;
            for (i, r) in rows.iter().take(args.rows).enumerate() {
                writeln!(
                    out,
                    "{:4} {:5.1}% {:5.1}%  {}",
                    i + 1,
                    share(r.self_value, total),
                    share(r.total_value, total),
                    r.name
                )?;
                if args.stacks {
                    for frame in stack_names(profile, &r.hottest) {
                        writeln!(out, "                   {frame}")?;
                    }
                }
            }
            if rows.len() > args.rows {
                writeln!(out, "... {} more methods", rows.len() - args.rows)?;
            }
        }
        By::Trace => {
            let mut samples: Vec<_> = profile.samples.iter().collect();
            samples.sort_by(|a, b| b.values[0].cmp(&a.values[0]));
            if args.json {
                let rows: Vec<_> = samples
                    .iter()
                    .take(args.rows)
                    .map(|s| serde_json::json!({"value": s.values[0], "percent": share(s.values[0], total), "thread": s.thread, "stack": stack_names(profile, &s.stack)}))
                    .collect();
                let doc = serde_json::json!({"section": section, "unit": unit, "total": total, "traces": rows});
                writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
                return Ok(());
            }
            writeln!(out, "{section}: {total} {unit}, by trace")?;
            writeln!(out, "rank  share      value  top frame")?;
            for (i, s) in samples.iter().take(args.rows).enumerate() {
                let names = stack_names(profile, &s.stack);
                writeln!(
                    out,
                    "{:4} {:5.1}% {:10}  {}",
                    i + 1,
                    share(s.values[0], total),
                    s.values[0],
                    names.first().map_or("", String::as_str)
                )?;
                if args.stacks {
                    for frame in names.iter().skip(1) {
                        writeln!(out, "                          {frame}")?;
                    }
                }
            }
        }
    }
    Ok(())
}
