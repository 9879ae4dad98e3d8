//! `hprof run`: runs a Java program under the agent, then prints the top of each section.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};

/// The bundled demo program, run through Java's source launcher when no program is given.
const DEMO_SOURCE: &str = include_str!("../../../../java/src/Demo.java");

/// `--cpu`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Cpu {
    /// Sample the threads using the CPU every `interval` ms.
    Samples,
    /// Count and time every method call.
    Times,
    /// cpu=times in the old prof layout.
    Old,
}

/// `--heap`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Heap {
    /// Allocation sites.
    Sites,
    /// A heap dump.
    Dump,
    /// Both.
    All,
}

/// `--format`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OutputFormat {
    /// java.hprof.txt text.
    A,
    /// HPROF binary.
    B,
}

/// Arguments of `hprof run`.
#[derive(Debug, Args)]
#[command(
    about = "Run a Java program under the hprof agent and show the top of the profile",
    long_about = "Runs `java ARGS...` with the hprof agent (libhprof.so, found next to this \
program or named by $HPROF_AGENT) and, when it ends, prints the top rows of each section of \
the profile. Without a program it profiles a bundled demo through Java's source launcher. \
With no --cpu or --heap it samples the CPU (cpu=samples). The exit status is the program's.",
    after_help = "Examples:\n  hprof run\n  hprof run -- java -cp app.jar com.example.Main\n  \
hprof run --cpu samples --agent-opts interval=5,depth=8 -- java -jar app.jar"
)]
pub struct RunArgs {
    /// CPU profiling (the agent's cpu=).
    #[arg(long, value_enum)]
    pub cpu: Option<Cpu>,
    /// Heap profiling (the agent's heap=).
    #[arg(long, value_enum)]
    pub heap: Option<Heap>,
    /// Output format (the agent's format=).
    #[arg(long, value_enum, default_value = "a")]
    pub format: OutputFormat,
    /// Output file (the agent's file=; default java.hprof.txt, or java.hprof for --format b).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// More agent options, appended as they are (`interval=5,depth=8`).
    #[arg(long, value_name = "OPTS")]
    pub agent_opts: Option<String>,
    /// How many rows of each section to show.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,
    /// The Java command line: `java` (or a path to it) and its arguments.
    #[arg(last = true, value_name = "JAVA ARGS")]
    pub command: Vec<OsString>,
}

/// Runs `hprof run`; returns the program's exit status.
pub fn run(args: &RunArgs, out: &mut dyn Write) -> Result<i32> {
    let agent = find_agent()?;
    let format_b = matches!(args.format, OutputFormat::B);
    let output = args.output.clone().unwrap_or_else(|| {
        PathBuf::from(if format_b {
            "java.hprof"
        } else {
            "java.hprof.txt"
        })
    });
    let mut options = Vec::new();
    match (args.cpu, args.heap) {
        (None, None) => options.push("cpu=samples".to_string()),
        (cpu, heap) => {
            if let Some(cpu) = cpu {
                options.push(format!(
                    "cpu={}",
                    match cpu {
                        Cpu::Samples => "samples",
                        Cpu::Times => "times",
                        Cpu::Old => "old",
                    }
                ));
            }
            if let Some(heap) = heap {
                options.push(format!(
                    "heap={}",
                    match heap {
                        Heap::Sites => "sites",
                        Heap::Dump => "dump",
                        Heap::All => "all",
                    }
                ));
            }
        }
    }
    if format_b {
        options.push("format=b".into());
    }
    let file = output
        .to_str()
        .context("the output file name must be UTF-8")?;
    if file.contains(',') {
        bail!("the output file name cannot contain a comma (the agent's option syntax)");
    }
    options.push(format!("file={file}"));
    if let Some(extra) = &args.agent_opts {
        options.push(extra.clone());
    }
    let agent_flag = format!("-agentpath:{}={}", agent.display(), options.join(","));

    // The demo's source goes in a private directory of its own (mode 0700, a random name),
    // removed when this function returns, whatever the path.
    let demo_dir;
    let mut command = if args.command.is_empty() {
        demo_dir = tempfile::Builder::new()
            .prefix("hprof-demo-")
            .tempdir()
            .context("cannot create a temporary directory for the demo")?;
        let source = demo_dir.path().join("Demo.java");
        hprof_outfile::create(&source)
            .and_then(|mut f| f.write_all(DEMO_SOURCE.as_bytes()))
            .with_context(|| format!("cannot write {}", source.display()))?;
        let mut c = Command::new(java_executable());
        c.arg(&agent_flag).arg(&source);
        c
    } else {
        let mut c = Command::new(&args.command[0]);
        c.arg(&agent_flag).args(&args.command[1..]);
        c
    };
    let status = command
        .status()
        .with_context(|| format!("cannot start {:?}", command.get_program()))?;
    let code = status.code().unwrap_or_else(|| {
        use std::os::unix::process::ExitStatusExt;
        128 + status.signal().unwrap_or(0)
    });
    if output.exists() {
        report(&output, format_b, args.top, out)?;
    } else {
        eprintln!("hprof: no profile was written to {}", output.display());
    }
    Ok(code)
}

/// `libhprof.so` next to this program, or `$HPROF_AGENT`.
fn find_agent() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("HPROF_AGENT") {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    let agent = exe.with_file_name("libhprof.so");
    if !agent.is_file() {
        bail!(
            "libhprof.so not found next to {} (build it with `cargo build --release`, or set HPROF_AGENT)",
            exe.display()
        );
    }
    Ok(agent)
}

/// `$JAVA_HOME/bin/java` if set, else `java` from the PATH.
fn java_executable() -> PathBuf {
    match std::env::var_os("JAVA_HOME") {
        Some(home) if Path::new(&home).join("bin/java").is_file() => {
            Path::new(&home).join("bin/java")
        }
        _ => PathBuf::from("java"),
    }
}

/// Prints the top rows of the last section of each kind in the profile.
fn report(path: &Path, binary: bool, top: usize, out: &mut dyn Write) -> Result<()> {
    let text = if binary {
        let mut rendered = Vec::new();
        crate::cmd::print::render_file(path, &mut rendered)?;
        String::from_utf8_lossy(&rendered).into_owned()
    } else {
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?
    };
    writeln!(out, "\nProfile written to {}", path.display())?;
    for section in last_sections(&text) {
        writeln!(out)?;
        let rows: Vec<&str> = section
            .iter()
            .skip(1)
            .filter(|l| !l.ends_with(" END"))
            .copied()
            .collect();
        writeln!(out, "{}", section[0])?;
        let headers = rows
            .iter()
            .take_while(|l| !l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .count();
        for line in rows.iter().take(headers + top) {
            writeln!(out, "{line}")?;
        }
        let rest = rows.len().saturating_sub(headers + top);
        if rest > 0 {
            writeln!(out, "... {rest} more rows in {}", path.display())?;
        }
    }
    Ok(())
}

/// The lines of the last CPU SAMPLES, CPU TIME, SITES and MONITOR TIME sections (HEAP DUMP
/// shows only its first line).
fn last_sections(text: &str) -> Vec<Vec<&str>> {
    let mut found: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(kind) = [
            "CPU SAMPLES",
            "CPU TIME (ms)",
            "SITES",
            "MONITOR TIME",
            "HEAP DUMP",
        ]
        .into_iter()
        .find(|k| line.starts_with(&format!("{k} BEGIN"))) else {
            continue;
        };
        let end = format!("{kind} END");
        let mut section = vec![line];
        for next in lines.by_ref() {
            if next == end {
                break;
            }
            if kind != "HEAP DUMP" {
                section.push(next);
            }
        }
        found.retain(|(k, _)| *k != kind);
        found.push((kind, section));
    }
    found.into_iter().map(|(_, s)| s).collect()
}
