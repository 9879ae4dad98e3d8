//! Owns HotSpot's dynamic-attach protocol on Linux, spoken directly (no JDK tools): finding
//! the target JVM's attach socket in its mount namespace and under its namespace pid, waking
//! its attach listener (a trigger file and SIGQUIT) when the socket is not there yet, acting as
//! the target's user when run as root (the JVM accepts only its own user), sending a command,
//! and telling a JVM that exits meanwhile from one that does not answer.

use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::{Gid, Pid, Uid, getegid, geteuid, setegid, seteuid};

/// Why an attach failed; each has its own exit status (see [`AttachError::exit_code`]).
#[derive(Debug)]
pub enum AttachError {
    /// There is no process with that pid.
    NoProcess(i32),
    /// The process runs no HotSpot JVM.
    NotHotSpot(i32, String),
    /// This user may not attach to it.
    Permission(String),
    /// The JVM did not open its attach socket in time (attach disabled, or not answering).
    NoSocket(i32, Duration),
    /// The JVM accepted the connection but did not answer in time.
    Timeout(Duration),
    /// The JVM could not load the agent library.
    AgentNotLoaded(String),
    /// The JVM does not handle SIGQUIT yet (it is starting).
    NotReady(i32),
    /// The JVM exited while the command talked to it.
    Exited(i32),
    /// The JVM closed the connection without an answer, and still runs.
    NoAnswer(i32),
    /// The agent refused the request; its reason.
    Refused(String),
    /// Anything else: the operation and the error.
    Io(String, std::io::Error),
}

impl AttachError {
    /// The exit status `hprof attach` ends with for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            AttachError::NoProcess(_) => 3,
            AttachError::NotHotSpot(..) => 4,
            AttachError::Permission(_) => 5,
            AttachError::NoSocket(..) => 6,
            AttachError::Timeout(_) => 6,
            AttachError::NotReady(_) => 6,
            AttachError::AgentNotLoaded(_) => 7,
            AttachError::Exited(_) => 3,
            AttachError::NoAnswer(_) => 6,
            AttachError::Refused(_) => 8,
            AttachError::Io(..) => 1,
        }
    }
}

impl std::fmt::Display for AttachError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AttachError::NoProcess(pid) => write!(f, "no process with pid {pid}"),
            AttachError::NotHotSpot(pid, what) => {
                write!(f, "process {pid} is not a HotSpot JVM ({what})")
            }
            AttachError::Permission(what) => write!(f, "permission denied: {what}"),
            AttachError::NoSocket(pid, waited) => write!(
                f,
                "JVM {pid} did not open its attach socket within {} s: it was started with \
                 -XX:+DisableAttachMechanism, or it is not responding (still starting, or \
                 stopped)",
                waited.as_secs()
            ),
            AttachError::Timeout(waited) => write!(
                f,
                "the JVM did not answer within {} s (--timeout)",
                waited.as_secs()
            ),
            AttachError::AgentNotLoaded(what) => {
                write!(f, "the JVM could not load the agent: {what}")
            }
            AttachError::NotReady(pid) => write!(
                f,
                "JVM {pid} is still starting (it does not handle SIGQUIT yet); try again"
            ),
            AttachError::Exited(pid) => write!(
                f,
                "JVM {pid} exited while hprof attach was talking to it (no such process now)"
            ),
            AttachError::NoAnswer(pid) => write!(
                f,
                "JVM {pid} closed the attach connection without an answer (it may be shutting \
                 down); try again"
            ),
            AttachError::Refused(why) => write!(f, "the agent refused: {why}"),
            AttachError::Io(what, e) => write!(f, "{what}: {e}"),
        }
    }
}

impl std::error::Error for AttachError {}

/// A JVM to attach to.
#[derive(Debug, Clone)]
pub struct Target {
    /// Its pid, as this process sees it.
    pub pid: i32,
    /// Its pid in its own pid namespace (the name of its socket).
    pub ns_pid: i32,
    /// Its effective user and group.
    pub uid: u32,
    /// See `uid`.
    pub gid: u32,
    /// Its root directory, as this process reaches it (`/proc/PID/root`).
    pub root: PathBuf,
    /// Whether it sees the same root directory, in the same mount namespace, as this process
    /// (no container between).
    pub same_root: bool,
}

impl Target {
    /// Looks process `pid` up: its users, namespace pid and root; checks that it runs HotSpot.
    pub fn find(pid: i32) -> Result<Target, AttachError> {
        let proc_dir = PathBuf::from(format!("/proc/{pid}"));
        let status = match std::fs::read_to_string(proc_dir.join("status")) {
            Ok(s) => s,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(AttachError::NoProcess(pid));
            }
            Err(e) => {
                return Err(AttachError::Io(
                    format!("cannot read /proc/{pid}/status"),
                    e,
                ));
            }
        };
        if exited(&status) {
            return Err(AttachError::Exited(pid));
        }
        let field = |name: &str| -> Vec<i64> {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|rest| {
                    rest.split_whitespace()
                        .filter_map(|v| v.parse().ok())
                        .collect()
                })
                .unwrap_or_default()
        };
        // HotSpot catches SIGQUIT from early in its start-up; before that, the signal that
        // wakes its attach listener would kill the process.
        let caught = status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .is_some_and(|mask| mask & (1 << (libc_sigquit() - 1)) != 0);
        let uid = field("Uid:").get(1).copied().unwrap_or(-1);
        let gid = field("Gid:").get(1).copied().unwrap_or(-1);
        let ns_pid = field("NSpid:").last().copied().unwrap_or(i64::from(pid));
        let maps = match std::fs::read_to_string(proc_dir.join("maps")) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                return Err(AttachError::Permission(format!(
                    "process {pid} belongs to user {uid}; attach as that user or as root"
                )));
            }
            Err(e) => return Err(AttachError::Io(format!("cannot read /proc/{pid}/maps"), e)),
        };
        if !maps.lines().any(|l| l.ends_with("/libjvm.so")) {
            let exe = std::fs::read_link(proc_dir.join("exe"))
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| "unknown program".into());
            return Err(AttachError::NotHotSpot(
                pid,
                format!("{exe} has no libjvm.so loaded"),
            ));
        }
        if !caught {
            return Err(AttachError::NotReady(pid));
        }
        let root = proc_dir.join("root");
        // The same root directory in the same mount namespace: the target's paths are ours.
        // A container may share the root but mount its own /tmp (where the attach socket is).
        let same_file = |a: &Path, b: &Path| match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        };
        let same_root = same_file(&root, Path::new("/"))
            && same_file(&proc_dir.join("ns/mnt"), Path::new("/proc/self/ns/mnt"));
        Ok(Target {
            pid,
            ns_pid: ns_pid as i32,
            uid: uid as u32,
            gid: gid as u32,
            root,
            same_root,
        })
    }

    /// Whether the process still runs (not gone, not a zombie).
    pub fn is_alive(&self) -> bool {
        std::fs::read_to_string(format!("/proc/{}/status", self.pid))
            .is_ok_and(|status| !exited(&status))
    }

    /// `error`, or [`AttachError::Exited`] when the process is gone: what fails while a JVM
    /// exits (its /proc entries, its /tmp, its socket) is told as its exit.
    pub fn explain(&self, error: AttachError) -> AttachError {
        match error {
            AttachError::Io(..)
            | AttachError::Permission(_)
            | AttachError::NoSocket(..)
            | AttachError::AgentNotLoaded(_)
                if !self.is_alive() =>
            {
                AttachError::Exited(self.pid)
            }
            other => other,
        }
    }

    /// The error for a failure of the connection: the JVM exited (looked for during up to
    /// half a second, as an exiting JVM takes a moment to go), or `otherwise`.
    fn exited_or(&self, otherwise: AttachError) -> AttachError {
        let deadline = Instant::now() + Duration::from_millis(500);
        loop {
            if !self.is_alive() {
                return AttachError::Exited(self.pid);
            }
            if Instant::now() >= deadline {
                return otherwise;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A path of the target's file system, as this process reaches it.
    pub fn outside(&self, inside: &str) -> PathBuf {
        if self.same_root {
            PathBuf::from(inside)
        } else {
            self.root.join(inside.trim_start_matches('/'))
        }
    }

    /// Runs `f` as the target's user: as root, with the target's user and group as
    /// effective ids (files made for it are then its own, and its JVM accepts the
    /// connection), given back afterwards; otherwise checks they are ours.
    pub fn as_owner<T>(
        &self,
        f: impl FnOnce() -> Result<T, AttachError>,
    ) -> Result<T, AttachError> {
        let (uid, gid) = (geteuid(), getegid());
        self.act_as_owner()?;
        let result = f();
        if geteuid() != uid {
            let _ = seteuid(uid);
        }
        if getegid() != gid {
            let _ = setegid(gid);
        }
        result
    }

    fn act_as_owner(&self) -> Result<(), AttachError> {
        let (uid, gid) = (Uid::from_raw(self.uid), Gid::from_raw(self.gid));
        if geteuid() == uid && getegid() == gid {
            return Ok(());
        }
        if !geteuid().is_root() {
            return Err(AttachError::Permission(format!(
                "JVM {} runs as user {} (group {}), this command as user {}; run it as that user or as root",
                self.pid,
                self.uid,
                self.gid,
                geteuid()
            )));
        }
        setegid(gid)
            .and_then(|()| seteuid(uid))
            .map_err(|e| AttachError::Permission(format!("cannot act as user {uid}: {e}")))
    }

    fn socket(&self) -> PathBuf {
        self.outside(&format!("/tmp/.java_pid{}", self.ns_pid))
    }

    /// Connects to the JVM's attach listener, starting it if needed: a `.attach_pid` trigger
    /// file in its working directory (or /tmp), then SIGQUIT, then waiting for the socket.
    pub fn connect(&self, timeout: Duration) -> Result<UnixStream, AttachError> {
        self.connect_once(timeout, false)
    }

    fn connect_once(&self, timeout: Duration, retried: bool) -> Result<UnixStream, AttachError> {
        let socket = self.socket();
        if !socket.exists() {
            let name = format!(".attach_pid{}", self.ns_pid);
            let cwd = PathBuf::from(format!("/proc/{}/cwd", self.pid)).join(&name);
            let trigger = [cwd, self.outside(&format!("/tmp/{name}"))]
                .into_iter()
                .find(|p| std::fs::File::create(p).is_ok())
                .ok_or_else(|| {
                    AttachError::Permission(format!(
                        "cannot create the attach trigger file {name} in JVM {}'s working directory or /tmp",
                        self.pid
                    ))
                })?;
            let signalled = kill(Pid::from_raw(self.pid), Signal::SIGQUIT);
            let start = Instant::now();
            let mut pause = Duration::from_millis(20);
            while !socket.exists()
                && signalled.is_ok()
                && start.elapsed() < timeout
                && self.is_alive()
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(200));
            }
            let _ = std::fs::remove_file(&trigger);
            match signalled {
                Err(nix::errno::Errno::ESRCH) => return Err(AttachError::Exited(self.pid)),
                Err(e) => {
                    return Err(AttachError::Permission(format!(
                        "cannot signal process {} ({e})",
                        self.pid
                    )));
                }
                Ok(()) => {}
            }
            if !socket.exists() {
                return Err(self.exited_or(AttachError::NoSocket(self.pid, timeout)));
            }
        }
        match UnixStream::connect(&socket) {
            // A socket left by a JVM that had this pid before: gone, and the listener woken.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused && !retried => {
                let _ = std::fs::remove_file(&socket);
                return self.connect_once(timeout, true);
            }
            other => other,
        }
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::PermissionDenied => {
                AttachError::Permission(format!("cannot connect to {} ({e})", socket.display()))
            }
            _ => self.exited_or(AttachError::Io(
                format!("cannot connect to {}", socket.display()),
                e,
            )),
        })
    }

    /// Sends one attach command with up to three arguments; returns the JVM's result code
    /// and the text that followed it.
    pub fn execute(
        &self,
        command: &str,
        args: &[&str],
        timeout: Duration,
    ) -> Result<(i32, String), AttachError> {
        let mut stream = self.connect(timeout)?;
        let io = |what: &str| {
            let what = what.to_string();
            move |e: std::io::Error| match e.kind() {
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                    self.exited_or(AttachError::Timeout(timeout))
                }
                std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe => {
                    self.exited_or(AttachError::NoAnswer(self.pid))
                }
                _ => self.exited_or(AttachError::Io(what, e)),
            }
        };
        stream
            .set_read_timeout(Some(timeout))
            .and_then(|()| stream.set_write_timeout(Some(timeout)))
            .map_err(io("cannot set the socket's timeout"))?;
        let mut request = Vec::new();
        request.extend_from_slice(b"1\0");
        request.extend_from_slice(command.as_bytes());
        request.push(0);
        for i in 0..3 {
            request.extend_from_slice(args.get(i).copied().unwrap_or("").as_bytes());
            request.push(0);
        }
        stream
            .write_all(&request)
            .map_err(io("cannot send the command"))?;
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .map_err(io("cannot read the JVM's answer"))?;
        if answer.is_empty() {
            // The listener closed the connection unanswered: a JVM on its way out.
            return Err(self.exited_or(AttachError::NoAnswer(self.pid)));
        }
        let (first, rest) = answer.split_once('\n').unwrap_or((answer.as_str(), ""));
        let code = first.trim().parse().map_err(|_| {
            AttachError::Io(
                "unexpected answer from the JVM".into(),
                std::io::Error::other(format!("{answer:?}")),
            )
        })?;
        Ok((code, rest.to_string()))
    }

    /// Loads the agent library `path` (a path in the target's file system) with `options`;
    /// returns the agent's return code (`Agent_OnAttach`'s).
    pub fn load_agent(
        &self,
        path: &str,
        options: &str,
        timeout: Duration,
    ) -> Result<i32, AttachError> {
        let (code, text) = self.execute("load", &[path, "true", options], timeout)?;
        // JDK 11 to 25 answer 0 and "return code: N" once the agent ran; a library that could
        // not be loaded gives another code and the JVM's message.
        if let Some(n) = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("return code: "))
            .and_then(|n| n.trim().parse().ok())
        {
            return Ok(n);
        }
        if code == 0 {
            return Ok(0);
        }
        let text = text.trim();
        Err(AttachError::AgentNotLoaded(if text.is_empty() {
            format!("attach error code {code} for {path}")
        } else {
            text.to_string()
        }))
    }
}

/// Whether a `/proc/PID/status` text is a process that has exited (a zombie, or dead).
fn exited(status: &str) -> bool {
    status
        .lines()
        .find_map(|l| l.strip_prefix("State:"))
        .is_some_and(|state| matches!(state.trim().chars().next(), Some('Z' | 'X')))
}

/// SIGQUIT's number.
fn libc_sigquit() -> u32 {
    Signal::SIGQUIT as u32
}

/// Whether `path` (outside) is a regular file: the agent's files are never followed through
/// a symbolic link.
pub fn is_plain_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zombie_or_dead_process_has_exited() {
        assert!(exited("Name:\tjava\nState:\tZ (zombie)\n"));
        assert!(exited("State:\tX (dead)\n"));
        assert!(!exited("Name:\tjava\nState:\tS (sleeping)\n"));
        assert!(!exited("State:\tR (running)\n"));
    }

    #[test]
    fn every_error_has_its_documented_status() {
        let io = || std::io::Error::other("x");
        let cases = [
            (AttachError::NoProcess(1), 3),
            (AttachError::Exited(1), 3),
            (AttachError::NotHotSpot(1, "x".into()), 4),
            (AttachError::Permission("x".into()), 5),
            (AttachError::NoSocket(1, Duration::from_secs(1)), 6),
            (AttachError::Timeout(Duration::from_secs(1)), 6),
            (AttachError::NoAnswer(1), 6),
            (AttachError::NotReady(1), 6),
            (AttachError::AgentNotLoaded("x".into()), 7),
            (AttachError::Refused("x".into()), 8),
            (AttachError::Io("x".into(), io()), 1),
        ];
        for (error, status) in cases {
            assert_eq!(error.exit_code(), status, "{error}");
        }
    }
}
