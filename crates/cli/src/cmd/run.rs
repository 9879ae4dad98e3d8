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
    /// A JDK Flight Recorder recording (jfr, JMC).
    Jfr,
}

/// Arguments of `hprof run`.
#[derive(Debug, Args)]
#[command(
    about = "Run a Java program under the hprof agent and show the top of the profile",
    long_about = "Runs a Java program with the hprof agent (libhprof.so, found next to this \
program or named by $HPROF_AGENT) and, when it ends, reports its hottest methods on standard \
error and writes an HTML flame graph next to the profile. `java ...` gets the agent on its \
command line; any other launcher (javac, mvn, gradlew, a script) gets it through \
JAVA_TOOL_OPTIONS, and each JVM it starts writes its own profile (the pid in the name). \
Without a program it profiles a bundled demo through Java's source launcher. With no --cpu or \
--heap it samples the CPU (cpu=samples); stacks are 64 frames deep unless --agent-opts says \
otherwise. The exit status is the program's.",
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
    /// Output file (the agent's file=; default java.hprof.txt, java.hprof for --format b,
    /// java.jfr for --format jfr; a name ending in .jfr makes a JFR recording).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// More agent options, appended as they are (`interval=5,depth=8`).
    #[arg(long, value_name = "OPTS")]
    pub agent_opts: Option<String>,
    /// How many rows of each section to show.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,
    /// Where the HTML flame graph goes (default: next to the profile, `.html`).
    #[arg(long, value_name = "FILE", conflicts_with = "no_flame")]
    pub flame: Option<PathBuf>,
    /// Write no flame graph.
    #[arg(long)]
    pub no_flame: bool,
    /// Write the report to this file instead of standard error.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// The Java command line: `java` (or a path to it) and its arguments.
    #[arg(last = true, value_name = "JAVA ARGS")]
    pub command: Vec<OsString>,
}

/// Runs `hprof run` (its report goes to standard error or `--report`, never to standard
/// output, which is the program's); returns the program's exit status.
pub fn run(args: &RunArgs) -> Result<i32> {
    let agent = crate::agent_lib::find_agent()?;
    let format_b = matches!(args.format, OutputFormat::B);
    let format_jfr = matches!(args.format, OutputFormat::Jfr);
    let output = args.output.clone().unwrap_or_else(|| {
        PathBuf::from(match args.format {
            OutputFormat::B => "java.hprof",
            OutputFormat::Jfr => "java.jfr",
            OutputFormat::A => "java.hprof.txt",
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
    if format_jfr {
        options.push("format=jfr".into());
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
    if !args
        .agent_opts
        .as_deref()
        .is_some_and(|o| o.split(',').any(|o| o.starts_with("depth=")))
    {
        options.push("depth=64".into());
    }

    // The demo's source goes in a private directory of its own (mode 0700, a random name),
    // removed when this function returns, whatever the path.
    let demo_dir;
    let program = args.command.first().map(PathBuf::from);
    let through_java = program
        .as_ref()
        .is_none_or(|p| p.file_name().is_some_and(|n| n == "java"));
    if !through_java {
        // Several JVMs may start: none replaces another's profile (force=n: the first gets
        // the name, the others the name with their pid).
        options.push("force=n".into());
    }
    let agent_flag = format!("-agentpath:{}={}", agent.display(), options.join(","));
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
    } else if through_java {
        let mut c = Command::new(&args.command[0]);
        c.arg(&agent_flag).args(&args.command[1..]);
        c
    } else {
        let mut tool_options = std::env::var_os("JAVA_TOOL_OPTIONS").unwrap_or_default();
        if !tool_options.is_empty() {
            tool_options.push(" ");
        }
        tool_options.push(&agent_flag);
        let mut c = Command::new(&args.command[0]);
        c.args(&args.command[1..])
            .env("JAVA_TOOL_OPTIONS", tool_options);
        c
    };
    let before = profiles_beside(&output);
    let status = command
        .status()
        .with_context(|| format!("cannot start {:?}", command.get_program()))?;
    // A program killed by a signal exits as a shell reports it: 128 + the signal's number.
    let killed_by = {
        use std::os::unix::process::ExitStatusExt;
        status.signal()
    };
    let code = status
        .code()
        .unwrap_or_else(|| 128 + killed_by.unwrap_or(0));
    // Only profiles this run wrote: new files, or files replaced since (a new inode or time).
    let fresh: Vec<PathBuf> = profiles_beside(&output)
        .into_iter()
        .filter(|(path, id)| before.iter().all(|(p, old)| p != path || old != id))
        .map(|(path, _)| path)
        .collect();
    if fresh.is_empty() {
        eprintln!(
            "hprof: the agent wrote no profile to {} (see the JVM's messages above); exit status {code}",
            output.display()
        );
        return Ok(if code == 0 { 1 } else { code });
    }
    if let Some(signal) = killed_by {
        return Ok(killed(&fresh, signal, code));
    }
    let mut report_out: Box<dyn Write> = match &args.report {
        Some(path) => Box::new(
            hprof_outfile::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?,
        ),
        None => Box::new(std::io::stderr()),
    };
    for profile in &fresh {
        let flame = if args.no_flame {
            None
        } else if let (Some(path), 1) = (&args.flame, fresh.len()) {
            Some(path.clone())
        } else {
            Some(flame_path(profile, args.flame.as_deref()))
        };
        match crate::profiles::report(profile, flame.as_deref(), args.top, &mut report_out) {
            Ok(()) => {}
            // A program that failed may have ended before the agent finished its profile
            // (a JVM crash with core dumps off exits 1): its status is the answer.
            Err(e) if code != 0 => {
                eprintln!(
                    "hprof: the program exited with status {code} before its profile was \
                     complete: {e:#}"
                );
                remove_if_empty(profile);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(code)
}

/// The program was killed by `signal` (the JVM's exit handlers, where the agent writes its
/// last dump, never ran): says so, removes the profiles that hold nothing (only their
/// header), keeps those that hold earlier dumps, and returns the program's status.
fn killed(fresh: &[PathBuf], signal: i32, code: i32) -> i32 {
    let name = nix::sys::signal::Signal::try_from(signal)
        .map_or_else(|_| format!("signal {signal}"), |s| s.as_str().to_string());
    for profile in fresh {
        let readable = crate::input::read_recording(profile)
            .ok()
            .is_some_and(|r| r.default_kind().is_some());
        if readable {
            eprintln!(
                "hprof: the JVM was killed by {name} (exit status {code}): its last dump could \
                 not be written; {} holds only the dumps made before (SIGQUIT, dump requests)",
                profile.display()
            );
        } else {
            let removed = remove_if_empty(profile);
            eprintln!(
                "hprof: the JVM was killed by {name} (exit status {code}): its profile could not \
                 be written{}",
                if removed {
                    format!(
                        " ({}, which held nothing yet, was removed)",
                        profile.display()
                    )
                } else {
                    format!(" ({} is incomplete)", profile.display())
                }
            );
        }
    }
    code
}

/// Removes a profile the agent began but never wrote into (at most its header line):
/// nothing is lost, and no empty file is left to be taken for a profile.
fn remove_if_empty(profile: &Path) -> bool {
    let holds_nothing = std::fs::read(profile).is_ok_and(|bytes| {
        bytes.len() < 4096
            && hprof_profile::Recording::read(&bytes).map_or(true, |r| r.default_kind().is_none())
    });
    holds_nothing && std::fs::remove_file(profile).is_ok()
}

/// The files beside `output` that may be this run's profiles (its name, or its name with a
/// pid), with what identifies their contents (inode and modification time).
fn profiles_beside(output: &Path) -> Vec<(PathBuf, (u64, std::time::SystemTime))> {
    use std::os::unix::fs::MetadataExt;
    let dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (stem, ext) = match name.strip_suffix(".txt") {
        Some(stem) => (stem.to_string(), ".txt"),
        None => (name.clone(), ""),
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n == name
                || n.strip_prefix(&format!("{stem}."))
                    .and_then(|rest| rest.strip_suffix(ext))
                    .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|e| {
            let meta = std::fs::symlink_metadata(e.path()).ok()?;
            let modified = meta.modified().ok()?;
            meta.is_file().then(|| (e.path(), (meta.ino(), modified)))
        })
        .map(|(p, id)| (dir.join(p.file_name().unwrap_or_default()), id))
        .collect()
}

/// Where a profile's flame graph goes: `--flame`'s name with the profile's pid suffix when
/// several JVMs wrote profiles, else the profile's name ending in `.html`.
fn flame_path(profile: &Path, flame: Option<&Path>) -> PathBuf {
    let name = profile
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = name.strip_suffix(".txt").unwrap_or(&name);
    match flame {
        Some(f) => {
            let pid = base
                .rsplit('.')
                .next()
                .filter(|p| p.bytes().all(|b| b.is_ascii_digit()));
            let f = f.to_string_lossy();
            let stem = f.strip_suffix(".html").unwrap_or(&f);
            PathBuf::from(match pid {
                Some(pid) => format!("{stem}.{pid}.html"),
                None => format!("{stem}.html"),
            })
        }
        None => profile.with_file_name(format!("{base}.html")),
    }
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
