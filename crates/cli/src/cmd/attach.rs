//! `hprof attach`: profiles a JVM that is already running: loads the agent into it through
//! HotSpot's attach protocol, and starts, dumps, stops or reports on a profiling session.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::hotspot_attach::{AttachError, Target, is_plain_file};

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

/// Exit status when the agent refused the request.
const REFUSED: i32 = 8;

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
    match Session::open(args) {
        Ok(session) => session.act(action, options.as_deref(), args),
        Err(e) => fail(&e),
    }
}

fn fail(e: &AttachError) -> Result<i32> {
    eprintln!("hprof: error: {e}");
    Ok(i32::from(e.exit_code()))
}

/// A JVM and the files of its profiling session.
struct Session {
    target: Target,
    timeout: Duration,
    /// The agent library, as a path in the target's file system.
    agent: String,
}

impl Session {
    fn open(args: &AttachArgs) -> Result<Session, AttachError> {
        let target = Target::find(args.pid)?;
        target.as_owner(|| Ok(()))?;
        let agent = crate::profiles::find_agent()
            .map_err(|e| AttachError::AgentNotLoaded(format!("{e:#}")))?;
        let agent = if target.same_root {
            std::fs::canonicalize(&agent)
                .map_err(|e| AttachError::AgentNotLoaded(format!("{}: {e}", agent.display())))?
                .display()
                .to_string()
        } else {
            // A JVM in another mount namespace cannot see our file: a copy goes to its /tmp.
            let inside = format!("/tmp/hprof-{}-libhprof.so", target.uid);
            let outside = target.outside(&inside);
            let bytes = std::fs::read(&agent)
                .map_err(|e| AttachError::AgentNotLoaded(format!("{}: {e}", agent.display())))?;
            let mut file = hprof_outfile::create(&outside).map_err(|e| {
                AttachError::Io(format!("cannot copy the agent to {}", outside.display()), e)
            })?;
            std::io::Write::write_all(&mut file, &bytes).map_err(|e| {
                AttachError::Io(format!("cannot copy the agent to {}", outside.display()), e)
            })?;
            inside
        };
        Ok(Session {
            target,
            timeout: Duration::from_secs(args.timeout.max(1)),
            agent,
        })
    }

    /// The session's profile (in the target's /tmp), inside and outside names.
    fn profile_file(&self, binary: bool) -> (String, PathBuf) {
        let inside = format!(
            "/tmp/hprof-attach-{}.{}",
            self.target.ns_pid,
            if binary { "hprof" } else { "txt" }
        );
        let outside = self.target.outside(&inside);
        (inside, outside)
    }

    /// Loads the agent with `options` plus a reply file; returns its return code and reply.
    fn call(&self, options: &str) -> Result<(i32, String), AttachError> {
        let inside = format!("/tmp/hprof-attach-{}.reply", self.target.ns_pid);
        let outside = self.target.outside(&inside);
        let _ = std::fs::remove_file(&outside);
        let options = if options.is_empty() {
            format!("reply={inside}")
        } else {
            format!("{options},reply={inside}")
        };
        let code = self
            .target
            .load_agent(&self.agent, &options, self.timeout)?;
        let reply = if is_plain_file(&outside) {
            std::fs::read_to_string(&outside).unwrap_or_default()
        } else {
            String::new()
        };
        let _ = std::fs::remove_file(&outside);
        Ok((code, reply))
    }

    fn act(&self, action: Action, options: Option<&str>, args: &AttachArgs) -> Result<i32> {
        match action {
            Action::Status => match self.call("session=status") {
                Ok((_, reply)) => {
                    print!("{reply}");
                    Ok(0)
                }
                Err(e) => fail(&e),
            },
            Action::Start => match self.start(options)? {
                Ok(binary) => {
                    let (_, outside) = self.profile_file(binary);
                    eprintln!(
                        "Profiling JVM {} (its profile collects in {}); `hprof attach {} dump` \
                         writes what it has, `hprof attach {} stop` ends it.",
                        self.target.pid,
                        outside.display(),
                        self.target.pid,
                        self.target.pid
                    );
                    Ok(0)
                }
                Err(code) => Ok(code),
            },
            Action::Dump => self.finish("session=dump", args, false),
            Action::Stop => self.finish("session=stop", args, true),
            Action::Record => {
                let binary = match self.start(options)? {
                    Ok(binary) => binary,
                    Err(code) => return Ok(code),
                };
                let stop = Arc::new(AtomicBool::new(false));
                let flag = stop.clone();
                let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
                eprintln!(
                    "Profiling JVM {} for {} s (Ctrl-C stops early)...",
                    self.target.pid, args.duration
                );
                let end = Instant::now() + Duration::from_secs(args.duration);
                while Instant::now() < end && !stop.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(50));
                }
                let _ = binary;
                self.finish("session=stop", args, true)
            }
        }
    }

    /// Starts a session; `Ok(binary)` once it runs, `Err(exit status)` when refused.
    fn start(&self, options: Option<&str>) -> Result<std::result::Result<bool, i32>> {
        let mut opts: Vec<String> = options
            .unwrap_or("")
            .split(',')
            .filter(|o| !o.is_empty())
            .map(str::to_string)
            .collect();
        let has = |name: &str| opts.iter().any(|o| o.split('=').next() == Some(name));
        if opts.iter().any(|o| {
            o.starts_with("file=")
                || o.starts_with("net=")
                || o.starts_with("session=")
                || o.starts_with("reply=")
        }) {
            bail!(
                "hprof attach chooses the agent's output itself: leave out file=, net=, session= and reply="
            );
        }
        let (profiles, deep, verbose) = (
            has("cpu") || has("heap") || has("monitor"),
            has("depth"),
            has("verbose"),
        );
        if !profiles {
            opts.push("cpu=samples".into());
        }
        if !deep {
            opts.push("depth=64".into());
        }
        // The agent's "Dumping ..." lines would go to the application's standard error.
        if !verbose {
            opts.push("verbose=n".into());
        }
        let binary = opts.iter().any(|o| o == "format=b");
        let times = opts.iter().any(|o| o == "cpu=times" || o == "cpu=old");
        // (A file left by an earlier session is replaced when the agent opens it; one of a
        // session still running must stay.)
        let (inside, _) = self.profile_file(binary);
        opts.push(format!("file={inside}"));
        match self.call(&opts.join(",")) {
            Ok((0, reply)) => {
                // What starting late costs or leaves out, engine by engine.
                for note in reply.lines().filter(|l| l.starts_with("note: ")) {
                    eprintln!("hprof: {note}");
                }
                if times {
                    return self.await_rewriting(binary);
                }
                Ok(Ok(binary))
            }
            Ok((code, reply)) => {
                eprintln!(
                    "hprof: error: the agent refused to start (return code {code}): {}",
                    reply_text(&reply)
                );
                Ok(Err(REFUSED))
            }
            Err(e) => Ok(Err(fail(&e)?)),
        }
    }

    /// cpu=times started late rewrites every loaded class on an agent thread once the agent
    /// is loaded: waits (at most --timeout) until it says it is ready, so that the calls made
    /// after this command returns are counted. `Ok(binary)`, or the exit status.
    fn await_rewriting(&self, binary: bool) -> Result<std::result::Result<bool, i32>> {
        let deadline = Instant::now() + self.timeout;
        loop {
            let reply = match self.call("session=status") {
                Ok((_, reply)) => reply,
                Err(e) => return Ok(Err(fail(&e)?)),
            };
            let line = reply
                .lines()
                .find_map(|l| l.strip_prefix("cpu=times: "))
                .unwrap_or("")
                .to_string();
            if let Some(ready) = line.strip_prefix("ready: ") {
                eprintln!("hprof: cpu=times: {ready}");
                return Ok(Ok(binary));
            }
            if let Some(why) = line.strip_prefix("failed: ") {
                eprintln!("hprof: error: cpu=times could not start: {why}");
                let _ = self.call("session=stop");
                return Ok(Err(REFUSED));
            }
            if Instant::now() > deadline {
                eprintln!(
                    "hprof: error: cpu=times did not finish rewriting the loaded classes within {} s (--timeout); the session goes on",
                    self.timeout.as_secs()
                );
                return Ok(Err(REFUSED));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Asks for a dump (or the last one, `stop`), then writes the session's profile to the
    /// output.
    fn finish(&self, request: &str, args: &AttachArgs, last: bool) -> Result<i32> {
        match self.call(request) {
            Ok((0, _)) => {}
            Ok((code, reply)) => {
                eprintln!(
                    "hprof: error: the agent refused (return code {code}): {}",
                    reply_text(&reply)
                );
                return Ok(REFUSED);
            }
            Err(e) => return fail(&e),
        }
        let (_, text) = self.profile_file(false);
        let (_, binary) = self.profile_file(true);
        let (source, is_binary) = if is_plain_file(&text) {
            (text, false)
        } else if is_plain_file(&binary) {
            (binary, true)
        } else {
            bail!(
                "the session's profile is missing (looked for {})",
                text.display()
            );
        };
        let output = args.output.clone().unwrap_or_else(|| {
            PathBuf::from(format!(
                "hprof-{}.{}",
                self.target.pid,
                if is_binary { "hprof" } else { "txt" }
            ))
        });
        write_output(&source, &output, last)?;
        if last {
            let _ = std::fs::remove_file(&source);
        }
        Ok(0)
    }
}

/// The agent's reply, for a message: its `error:` text, or all of it.
fn reply_text(reply: &str) -> String {
    let reply = reply.trim();
    let reply = reply.strip_prefix("error: ").unwrap_or(reply);
    if reply.is_empty() {
        "no reason given (see the JVM's standard error)".into()
    } else {
        reply.to_string()
    }
}

/// Writes the session's profile to `output`: converted when its extension names a format
/// of `hprof convert` (every dump of the session added up for `whole`, else the last), else
/// as it is, followed by the report of `hprof run`.
fn write_output(source: &Path, output: &Path, whole: bool) -> Result<()> {
    use crate::profiles::{ProfileArgs, convert};
    if let Some(format) = hprof_profile::Format::from_extension(output) {
        let profile = ProfileArgs {
            all: whole,
            ..ProfileArgs::of(source)
        };
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
