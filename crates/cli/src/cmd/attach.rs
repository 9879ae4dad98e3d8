//! `hprof attach`: profiles a JVM that is already running. The attach mechanism and the
//! session protocol are `hprof-attach`'s; this module reads the command line, says what
//! happens, and writes the session's profile where the user asked.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use hprof_attach::{AttachError, Collected, Session, Target};

/// Arguments of `hprof attach`.
#[derive(Debug, Args)]
#[command(
    about = "Profile a JVM that is already running (HotSpot, JDK 11 to 25)",
    long_about = "Loads the hprof agent into a running JVM through HotSpot's attach mechanism \
(no JDK tools needed) and profiles it while it runs on. Without an action it records for \
--duration seconds (Ctrl-C stops early), writes the profile (-o; its extension may ask for a \
flame graph .html, folded stacks .collapsed or pprof .pb.gz) and reports the hottest methods. \
`start` begins a session that goes on after this command returns; `dump` writes what it \
collected so far; `stop` ends it and writes the profile; `status` says what runs. Agent \
options are those of -agentpath (default cpu=samples, 64 frames deep); cpu=times rewrites the \
loaded classes and gives them back their own code at stop; monitor=y lists no owned monitors. \
As root, it acts as the JVM's user; a JVM in a container is reached through \
/proc/PID/root.\n\nExit status: 0 done, 1 other error, 2 bad usage, 3 no such process, 4 not a \
HotSpot JVM, 5 permission denied, 6 attach disabled or the JVM not answering, 7 agent library \
not loaded, 8 the agent refused (a session already running, none running, bad options).",
    after_help = "Examples:\n  hprof attach 4242 -d 30 -o flame.html\n  hprof attach 4242 \
cpu=wall,interval=5 -d 10\n  hprof attach 4242 start heap=sites,alloc_interval=512k\n  hprof \
attach 4242 dump -o now.txt\n  hprof attach 4242 stop -o profile.txt\n  hprof attach 4242 status"
)]
pub struct AttachArgs {
    /// The JVM's process id.
    pub pid: i32,
    /// `start`, `dump`, `stop` or `status`; or agent options (then: record for --duration).
    #[arg(value_name = "ACTION|OPTIONS")]
    pub first: Option<String>,
    /// Agent options after an action (`start cpu=samples,interval=5`).
    #[arg(value_name = "OPTIONS")]
    pub second: Option<String>,
    /// How long to record, in seconds (without an action).
    #[arg(short, long, default_value_t = 10, value_name = "SECONDS")]
    pub duration: u64,
    /// Where the profile goes (default hprof-PID.txt, or hprof-PID.hprof with format=b).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// How long to wait for the JVM to answer, in seconds.
    #[arg(long, default_value_t = 10, value_name = "SECONDS")]
    pub timeout: u64,
}

/// What the command does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Record,
    Start,
    Dump,
    Stop,
    Status,
}

/// Runs `hprof attach`; returns the exit status.
pub fn run(args: &AttachArgs) -> Result<i32> {
    let (action, options) = match args.first.as_deref() {
        Some("start") => (Action::Start, args.second.clone()),
        Some("dump") => (Action::Dump, args.second.clone()),
        Some("stop") => (Action::Stop, args.second.clone()),
        Some("status") => (Action::Status, args.second.clone()),
        Some(opts) if args.second.is_none() => (Action::Record, Some(opts.to_string())),
        Some(other) => bail!("unknown action {other:?}: expected start, dump, stop or status"),
        None => (Action::Record, None),
    };
    if options.is_some() && matches!(action, Action::Dump | Action::Stop | Action::Status) {
        bail!(
            "agent options go with start or a recording, not with {:?}",
            args.first.as_deref().unwrap_or("")
        );
    }
    let timeout = Duration::from_secs(args.timeout);
    let session = match crate::agent_lib::find_agent() {
        Ok(agent) => Session::open(args.pid, &agent, timeout),
        // The process's own errors come first: a missing agent matters only for a JVM.
        Err(e) => {
            Target::find(args.pid).and_then(|_| Err(AttachError::AgentNotLoaded(format!("{e:#}"))))
        }
    };
    let result = session.and_then(|session| act(&session, action, options.as_deref(), args));
    match result {
        Ok(code) => Ok(code),
        Err(e) => {
            eprintln!("hprof: error: {e}");
            Ok(i32::from(e.exit_code()))
        }
    }
}

fn act(
    session: &Session,
    action: Action,
    options: Option<&str>,
    args: &AttachArgs,
) -> Result<i32, AttachError> {
    let pid = session.pid();
    match action {
        Action::Status => {
            print!("{}", session.status()?);
            Ok(0)
        }
        Action::Start => {
            let started = start(session, options)?;
            eprintln!(
                "Profiling JVM {pid} (its profile collects in {}); `hprof attach {pid} dump` \
                 writes what it has, `hprof attach {pid} stop` ends it.",
                started.profile.display()
            );
            Ok(0)
        }
        Action::Dump => {
            let collected = session.dump()?;
            finish(&collected, args, pid, false)
        }
        Action::Stop => {
            let collected = session.stop()?;
            let code = finish(&collected, args, pid, true);
            session.remove(&collected.profile);
            code
        }
        Action::Record => record(session, options, args),
    }
}

/// Starts a session and says what starting late costs; a `cpu=times` session is waited for
/// until its classes are rewritten.
fn start(session: &Session, options: Option<&str>) -> Result<hprof_attach::Started, AttachError> {
    let started = session.start(options)?;
    for note in &started.notes {
        eprintln!("hprof: note: {note}");
    }
    if started.rewrites {
        let ready = session.await_rewriting()?;
        eprintln!("hprof: cpu=times: {ready}");
    }
    Ok(started)
}

/// Records for `--duration` (Ctrl-C stops early), then stops the session and writes its
/// profile. A JVM that exits meanwhile wrote its profile at its exit: that is written.
fn record(session: &Session, options: Option<&str>, args: &AttachArgs) -> Result<i32, AttachError> {
    let pid = session.pid();
    let started = start(session, options)?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    eprintln!(
        "Profiling JVM {pid} for {} s (Ctrl-C stops early)...",
        args.duration
    );
    let end = Instant::now() + Duration::from_secs(args.duration);
    while Instant::now() < end && !stop.load(Ordering::SeqCst) && session.is_alive() {
        std::thread::sleep(Duration::from_millis(50));
    }
    let exited = |session: &Session| {
        let collected = Collected {
            profile: started.profile_after_exit(),
            binary: started.binary,
            incomplete: Vec::new(),
        };
        eprintln!(
            "hprof: JVM {pid} exited during the recording; its profile holds what it collected \
             until its exit"
        );
        let code = finish(&collected, args, pid, true);
        session.remove(&collected.profile);
        code
    };
    if !session.is_alive() {
        return exited(session);
    }
    match session.stop() {
        Ok(collected) => {
            let code = finish(&collected, args, pid, true);
            session.remove(&collected.profile);
            code
        }
        Err(AttachError::Exited(_)) => exited(session),
        Err(e) => Err(e),
    }
}

/// Writes the session's profile to the output (after `stop`, every dump of the session
/// added up when it is converted); says when the dump is incomplete. The exit status.
fn finish(
    collected: &Collected,
    args: &AttachArgs,
    pid: i32,
    whole: bool,
) -> Result<i32, AttachError> {
    let output = args.output.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "hprof-{pid}.{}",
            if collected.binary { "hprof" } else { "txt" }
        ))
    });
    for why in &collected.incomplete {
        eprintln!("hprof: warning: the dump is incomplete: {why}");
    }
    match write_output(&collected.profile, &output, whole) {
        Ok(()) => Ok(0),
        Err(e) => {
            eprintln!("hprof: error: {e:#}");
            Ok(1)
        }
    }
}

/// Writes the session's profile to `output`: converted when its extension names a format
/// of `hprof convert` (every dump of the session added up for `whole`, else the last), else
/// as it is, followed by the report of `hprof run`.
fn write_output(source: &Path, output: &Path, whole: bool) -> Result<()> {
    use crate::profiles::{ProfileArgs, convert};
    if let Some(format) = hprof_profile::Format::from_extension(output) {
        let mut profile = ProfileArgs::of(source);
        profile.select.all = whole;
        convert(&profile, output, format, None)?;
        eprintln!("Profile written to {}", output.display());
        return Ok(());
    }
    let bytes =
        std::fs::read(source).with_context(|| format!("cannot read {}", source.display()))?;
    let mut file = hprof_outfile::create(output)
        .with_context(|| format!("cannot create {}", output.display()))?;
    std::io::Write::write_all(&mut file, &bytes)
        .with_context(|| format!("cannot write {}", output.display()))?;
    drop(file);
    // The report is a courtesy: a profile it cannot summarise (a heap dump alone) is still
    // written.
    if let Err(e) = crate::profiles::report(output, None, 10, &mut std::io::stderr()) {
        eprintln!("Profile written to {} ({e:#})", output.display());
    }
    Ok(())
}
