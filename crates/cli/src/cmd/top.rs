//! `hprof top`: the methods of a profile ranked by self and total share, summed over every
//! trace (or, with `--by trace`, the traces as the section lists them).

use std::io::{IsTerminal, Write};

use anyhow::Result;
use clap::{Args, ValueEnum};
use hprof_profile::{FrameKind, Profile, top};

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

/// The ANSI colour of a frame of `kind` on a terminal (the flame graph's hues), if any.
fn ansi(kind: FrameKind) -> Option<&'static str> {
    match kind {
        FrameKind::Jvm => Some("\x1b[36m"),
        FrameKind::Native => Some("\x1b[32m"),
        FrameKind::Kernel => Some("\x1b[35m"),
        FrameKind::Application | FrameKind::Jdk | FrameKind::Pseudo => None,
    }
}

/// `name`, coloured by `kind` when `colour`.
fn painted(name: &str, kind: FrameKind, colour: bool) -> String {
    match ansi(kind).filter(|_| colour) {
        Some(code) => format!("{code}{name}\x1b[0m"),
        None => name.to_string(),
    }
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

/// The line that groups the samples by what their leaf frame runs (`Java 61.2%, kernel
/// 23.7%, ...`), when any is not Java code.
fn groups_line(profile: &Profile, total: i64) -> Option<String> {
    let groups = top::groups(profile);
    if groups.iter().all(|&(g, _)| g == "Java" || g == "other") {
        return None;
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|&(g, v)| format!("{g} {:.1}%", share(v, total)))
        .collect();
    Some(format!("self by kind: {}", parts.join(", ")))
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
                let doc = serde_json::json!({"section": section, "unit": unit, "total": total, "kinds": kinds, "methods": rows});
                writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
                return Ok(());
            }
            let colour = colour_wanted(args.color);
            writeln!(out, "{section}: {total} {unit}, by method")?;
            writeln!(out, "rank   self  total  method")?;
            for (i, r) in rows.iter().take(args.rows).enumerate() {
                writeln!(
                    out,
                    "{:4} {:5.1}% {:5.1}%  {}",
                    i + 1,
                    share(r.self_value, total),
                    share(r.total_value, total),
                    painted(&r.name, r.kind, colour)
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
            if let Some(line) = groups_line(profile, total) {
                writeln!(out, "{line}")?;
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
