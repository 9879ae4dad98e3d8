//! Owns the hprof agent's session protocol over HotSpot's attach mechanism: the options a
//! session starts with, the private directories its files live in (the profile in one made
//! for the session, each answer in one made for the request: 0700, random names, in the
//! JVM's own /tmp), the agent's answers read back, and everything removed when done.

use std::fs::File;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::hotspot::{AttachError, Target, is_plain_file};

/// The options `hprof attach` chooses itself.
const CHOSEN: &[&str] = &["file", "net", "session", "reply"];

/// A JVM to run a profiling session in, and the agent library to load into it.
#[derive(Debug)]
pub struct Session {
    target: Target,
    timeout: Duration,
    /// The agent library, as a path in the target's file system.
    agent: String,
    /// The JVM's /tmp, held open: the session's files are made, read and removed through
    /// it, so they stay reachable while the JVM exits, even in a mount namespace that ends
    /// with it.
    tmp: Arc<File>,
}

/// A session that started.
#[derive(Debug, Clone)]
pub struct Started {
    /// Where its profile collects (a path this process reaches).
    pub profile: PathBuf,
    /// Whether the profile is binary (`format=b`).
    pub binary: bool,
    /// What starting late costs or leaves out (the agent's `note:` lines, without the prefix).
    pub notes: Vec<String>,
    /// Whether it rewrites classes (`cpu=times`/`cpu=old`): ready only once
    /// [`Session::await_rewriting`] says so.
    pub rewrites: bool,
    /// The profile, through the descriptor of the JVM's /tmp: reachable after the JVM
    /// exited too.
    held: PathBuf,
    /// Keeps that descriptor open.
    _tmp: Arc<File>,
}

impl Started {
    /// The session's profile, reachable also after the JVM exited (through the descriptor
    /// of its /tmp held since the start).
    pub fn profile_after_exit(&self) -> PathBuf {
        self.held.clone()
    }
}

/// A profile a dump or a stop left.
#[derive(Debug, Clone)]
pub struct Collected {
    /// The session's profile (a path this process reaches), for the caller to copy.
    pub profile: PathBuf,
    /// Whether it is binary.
    pub binary: bool,
    /// Why the dump just written is incomplete (empty when whole).
    pub incomplete: Vec<String>,
}

impl Session {
    /// Finds JVM `pid`, checks that this user may attach to it, and makes `agent` reachable
    /// from it (a JVM in another mount namespace gets a copy in its own /tmp).
    pub fn open(pid: i32, agent: &Path, timeout: Duration) -> Result<Session, AttachError> {
        let target = Target::find(pid)?;
        target.as_owner(|| Ok(()))?;
        let agent = if target.same_root {
            std::fs::canonicalize(agent)
                .map_err(|e| AttachError::AgentNotLoaded(format!("{}: {e}", agent.display())))?
                .display()
                .to_string()
        } else {
            copy_agent(&target, agent).map_err(|e| target.explain(e))?
        };
        let tmp_path = target.outside("/tmp");
        let tmp = File::open(&tmp_path).map_err(|e| {
            target.explain(AttachError::Io(
                format!("cannot open {}", tmp_path.display()),
                e,
            ))
        })?;
        Ok(Session {
            target,
            timeout: timeout.max(Duration::from_secs(1)),
            agent,
            tmp: Arc::new(tmp),
        })
    }

    /// The JVM's pid, as this process sees it.
    pub fn pid(&self) -> i32 {
        self.target.pid
    }

    /// Whether the JVM still runs.
    pub fn is_alive(&self) -> bool {
        self.target.is_alive()
    }

    /// Starts a session with the agent `options` (defaults added: `cpu=samples` when no
    /// profile is asked for, `depth=64`, `verbose=n`), its profile in a new private
    /// directory of the JVM's /tmp. A refusal (a session already running, bad options) is
    /// [`AttachError::Refused`]; nothing is left behind by a start that fails.
    pub fn start(&self, options: Option<&str>) -> Result<Started, AttachError> {
        self.start_session(options)
            .map_err(|e| self.target.explain(e))
    }

    fn start_session(&self, options: Option<&str>) -> Result<Started, AttachError> {
        let (mut opts, binary, rewrites) = session_options(options)?;
        let dir = self.private_dir("hprof-attach-")?;
        let inside = format!(
            "{}/profile.{}",
            dir.inside,
            if binary { "hprof" } else { "txt" }
        );
        opts.push(format!("file={inside}"));
        let answer = match self.call(&opts.join(",")) {
            Ok(answer) => answer,
            Err(e) => {
                dir.remove();
                return Err(e);
            }
        };
        let profile = match answer.file(&self.target) {
            Some(profile) => profile,
            None => {
                dir.remove();
                return Err(AttachError::Io(
                    "the agent did not say where the profile goes".into(),
                    std::io::Error::other(answer.text.clone()),
                ));
            }
        };
        let held = self.held(&profile);
        Ok(Started {
            profile,
            binary,
            notes: answer.lines("note: "),
            rewrites,
            held,
            _tmp: self.tmp.clone(),
        })
    }

    /// Waits (at most the timeout) until a `cpu=times` session started late has rewritten
    /// the loaded classes; `Ok(message)` once it says it is ready. A failure stops the session.
    pub fn await_rewriting(&self) -> Result<String, AttachError> {
        let deadline = Instant::now() + self.timeout;
        loop {
            let answer = self.call("session=status")?;
            let line = answer
                .lines("cpu=times: ")
                .into_iter()
                .next()
                .unwrap_or_default();
            if let Some(ready) = line.strip_prefix("ready: ") {
                return Ok(ready.to_string());
            }
            if let Some(why) = line.strip_prefix("failed: ") {
                if let Ok(stopped) = self.stop() {
                    self.remove(&stopped.profile);
                }
                return Err(AttachError::Refused(format!(
                    "cpu=times could not start: {why}"
                )));
            }
            if Instant::now() > deadline {
                return Err(AttachError::Refused(format!(
                    "cpu=times did not finish rewriting the loaded classes within {} s \
                     (--timeout); the session goes on",
                    self.timeout.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// What runs in the JVM (the agent's answer).
    pub fn status(&self) -> Result<String, AttachError> {
        Ok(self.call("session=status")?.text)
    }

    /// Asks for a dump of what the session collected since the last one.
    pub fn dump(&self) -> Result<Collected, AttachError> {
        self.collect("session=dump")
    }

    /// Ends the session; its profile is left for the caller to copy and then
    /// [`Session::remove`].
    pub fn stop(&self) -> Result<Collected, AttachError> {
        self.collect("session=stop")
    }

    fn collect(&self, request: &str) -> Result<Collected, AttachError> {
        self.collect_profile(request)
            .map_err(|e| self.target.explain(e))
    }

    fn collect_profile(&self, request: &str) -> Result<Collected, AttachError> {
        let answer = self.call(request)?;
        let profile = answer
            .file(&self.target)
            .map(|p| self.held(&p))
            .filter(|p| is_plain_file(p))
            .ok_or_else(|| {
                AttachError::Io(
                    "the session's profile is missing".into(),
                    std::io::Error::other(answer.text.trim().to_string()),
                )
            })?;
        let binary = profile.extension().is_some_and(|e| e == "hprof");
        Ok(Collected {
            profile,
            binary,
            incomplete: answer.lines("incomplete: "),
        })
    }

    /// Removes a session's profile and its private directory (after a stop, or after the
    /// JVM exited).
    pub fn remove(&self, profile: &Path) {
        let profile = self.held(profile);
        let _ = std::fs::remove_file(&profile);
        if let Some(dir) = profile.parent()
            && dir
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("hprof-attach-"))
        {
            let _ = std::fs::remove_dir(dir);
        }
    }

    /// A path of the JVM's /tmp (as this process reaches it) through the descriptor held
    /// open; other paths as they are.
    fn held(&self, path: &Path) -> PathBuf {
        match path.strip_prefix(self.target.outside("/tmp")) {
            Ok(relative) => fd_path(&self.tmp).join(relative),
            Err(_) => path.to_path_buf(),
        }
    }

    /// Loads the agent with `options` and a reply file of a private directory made for this
    /// request (removed after); the agent's answer, or its refusal.
    fn call(&self, options: &str) -> Result<Answer, AttachError> {
        self.request(options).map_err(|e| self.target.explain(e))
    }

    fn request(&self, options: &str) -> Result<Answer, AttachError> {
        let dir = self.private_dir("hprof-reply-")?;
        let reply_inside = format!("{}/reply", dir.inside);
        let options = if options.is_empty() {
            format!("reply={reply_inside}")
        } else {
            format!("{options},reply={reply_inside}")
        };
        let code = self.target.load_agent(&self.agent, &options, self.timeout);
        let reply_outside = dir.held().join("reply");
        let text = if is_plain_file(&reply_outside) {
            std::fs::read_to_string(&reply_outside).unwrap_or_default()
        } else {
            String::new()
        };
        let _ = std::fs::remove_file(&reply_outside);
        dir.remove();
        match code? {
            0 => Ok(Answer { text }),
            code => {
                let reason = text.trim();
                let reason = reason.strip_prefix("error: ").unwrap_or(reason);
                Err(AttachError::Refused(if reason.is_empty() {
                    format!(
                        "return code {code}, no answer written (the JVM's standard error may \
                         say why)"
                    )
                } else {
                    reason.to_string()
                }))
            }
        }
    }

    /// A new private directory (0700, a random name starting with `prefix`) in the JVM's
    /// /tmp, owned by the JVM's user.
    fn private_dir(&self, prefix: &str) -> Result<PrivateDir, AttachError> {
        use nix::sys::stat::{FchmodatFlags, Mode, fchmodat, mkdirat};
        let private = Mode::from_bits_truncate(0o700);
        for _ in 0..16 {
            let name = format!("{prefix}{}", random_name());
            let made = self.target.as_owner(|| {
                mkdirat(&*self.tmp, name.as_str(), private)
                    // The umask may have taken bits away: exactly 0700.
                    .and_then(|()| {
                        fchmodat(
                            &*self.tmp,
                            name.as_str(),
                            private,
                            FchmodatFlags::NoFollowSymlink,
                        )
                    })
                    .map_err(|e| {
                        AttachError::Io(
                            format!(
                                "cannot create a private directory in {}",
                                self.target.outside("/tmp").display()
                            ),
                            std::io::Error::from(e),
                        )
                    })
            });
            match made {
                Ok(()) => {
                    return Ok(PrivateDir {
                        inside: format!("/tmp/{name}"),
                        name,
                        tmp: self.tmp.clone(),
                    });
                }
                Err(AttachError::Io(_, e)) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Err(AttachError::Io(
            "cannot create a private directory".into(),
            std::io::Error::other("16 names taken"),
        ))
    }
}

/// The path of an open directory, through this process's descriptor of it.
fn fd_path(dir: &File) -> PathBuf {
    use std::os::fd::AsRawFd;
    PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd()))
}

/// 12 characters no other process can foresee: SipHash with this process's random keys
/// over the time and a counter (60 bits).
fn random_name() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.write_u64(NEXT.fetch_add(1, Ordering::Relaxed));
    let bits = hasher.finish();
    (0..12)
        .map(|i| b"abcdefghijklmnopqrstuvwxyz012345"[((bits >> (5 * i)) & 31) as usize] as char)
        .collect()
}

/// The agent options of a session started with `options`: those given, then the defaults
/// (`cpu=samples` when no profile is asked for, `depth=64`, `verbose=n`); whether its profile
/// is binary, and whether it rewrites classes. The options `hprof attach` chooses itself are
/// refused.
fn session_options(options: Option<&str>) -> Result<(Vec<String>, bool, bool), AttachError> {
    let mut opts: Vec<String> = options
        .unwrap_or("")
        .split(',')
        .filter(|o| !o.is_empty())
        .map(str::to_string)
        .collect();
    let name = |o: &str| o.split('=').next().unwrap_or("").to_string();
    if let Some(o) = opts.iter().find(|o| CHOSEN.contains(&name(o).as_str())) {
        return Err(AttachError::Refused(format!(
            "{o}: hprof attach chooses the agent's output itself (leave out file=, net=, \
             session= and reply=)"
        )));
    }
    let has = |n: &str| opts.iter().any(|o| name(o) == n);
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
    let rewrites = opts.iter().any(|o| o == "cpu=times" || o == "cpu=old");
    Ok((opts, binary, rewrites))
}

/// A private directory of the JVM's /tmp: its path inside the JVM's file system, and its
/// name under the descriptor of that /tmp held open.
struct PrivateDir {
    inside: String,
    name: String,
    tmp: Arc<File>,
}

impl PrivateDir {
    /// The directory, as this process reaches it.
    fn held(&self) -> PathBuf {
        fd_path(&self.tmp).join(&self.name)
    }

    /// Removes the directory (and a profile or reply left in it).
    fn remove(self) {
        let _ = std::fs::remove_dir_all(self.held());
    }
}

/// An answer of the agent.
#[derive(Debug)]
struct Answer {
    text: String,
}

impl Answer {
    /// Every line that starts with `prefix`, without it.
    fn lines(&self, prefix: &str) -> Vec<String> {
        self.text
            .lines()
            .filter_map(|l| l.strip_prefix(prefix))
            .map(str::to_string)
            .collect()
    }

    /// The session's profile the answer names (`file: PATH`), as this process reaches it:
    /// only a file of a session directory of the JVM's /tmp.
    fn file(&self, target: &Target) -> Option<PathBuf> {
        let inside = self.lines("file: ").into_iter().next()?;
        let path = Path::new(&inside);
        let dir = path.parent()?;
        let in_session_dir = dir.parent() == Some(Path::new("/tmp"))
            && dir
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("hprof-attach-"));
        in_session_dir.then(|| target.outside(&inside))
    }
}

/// Copies the agent into a per-user private directory of the JVM's /tmp (`/tmp/hprof-UID`,
/// 0700, its user's; refused if anything else is there), named by its contents so that every
/// request of a session loads the same file (a new copy would be a second agent).
fn copy_agent(target: &Target, agent: &Path) -> Result<String, AttachError> {
    let not_loaded =
        |e: std::io::Error| AttachError::AgentNotLoaded(format!("{}: {e}", agent.display()));
    let bytes = std::fs::read(agent).map_err(not_loaded)?;
    // FNV-1a: names the contents, no security rests on it (the directory is private).
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let dir_inside = format!("/tmp/hprof-{}", target.uid);
    let inside = format!("{dir_inside}/libhprof-{hash:016x}.so");
    let (dir, outside) = (target.outside(&dir_inside), target.outside(&inside));
    target.as_owner(|| {
        let io = |what: &str| {
            let what = format!("{what} {}", dir.display());
            move |e| AttachError::Io(what, e)
        };
        shared_private_dir(&dir, target.uid)?;
        if !is_plain_file(&outside) {
            // Written whole under a name of this process, then renamed into place: a racer
            // finds no copy or a complete one, never one still being written.
            let temp = dir.join(format!(".libhprof-{hash:016x}.{}.tmp", std::process::id()));
            let copied = hprof_outfile::create(&temp)
                .and_then(|mut file| std::io::Write::write_all(&mut file, &bytes))
                .and_then(|()| std::fs::rename(&temp, &outside));
            if let Err(e) = copied {
                let _ = std::fs::remove_file(&temp);
                return Err(io("cannot copy the agent to")(e));
            }
        }
        Ok(inside.clone())
    })
}

/// Makes `dir` a directory only `uid` may enter, or checks that it is one: several `hprof`
/// processes may do this at once, so the directory is created with no bits for others
/// (never more open than 0700, not even for the moment before a chmod: a racer that finds it
/// must find it private).
fn shared_private_dir(dir: &Path, uid: u32) -> Result<(), AttachError> {
    use std::os::unix::fs::DirBuilderExt;
    let io = |what: &str| {
        let what = format!("{what} {}", dir.display());
        move |e| AttachError::Io(what, e)
    };
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        // The umask may have taken the owner's bits away: exactly 0700.
        Ok(()) => std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(io("cannot make private"))?,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io("cannot create")(e)),
    }
    let meta = std::fs::symlink_metadata(dir).map_err(io("cannot read"))?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(AttachError::Permission(format!(
            "{} is not a private directory of user {uid} (mode 0700): remove it",
            dir.display(),
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn racers_making_the_shared_private_directory_all_find_it_private() {
        let uid = nix::unistd::getuid().as_raw();
        let root = tempfile::tempdir().unwrap();
        for round in 0..200 {
            let dir = root.path().join(format!("hprof-{round}"));
            let racers: Vec<_> = (0..4)
                .map(|_| {
                    let dir = dir.clone();
                    std::thread::spawn(move || shared_private_dir(&dir, uid))
                })
                .collect();
            for racer in racers {
                let made = racer.join().unwrap();
                assert!(made.is_ok(), "round {round}: {:?}", made.err());
            }
            let mode = std::fs::metadata(&dir).unwrap().mode() & 0o777;
            assert_eq!(mode, 0o700, "round {round}");
        }
        let open = root.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = shared_private_dir(&open, uid).unwrap_err().to_string();
        assert!(err.contains("is not a private directory"), "{err}");
    }

    #[test]
    fn a_session_gets_the_defaults_and_never_the_options_attach_chooses() {
        let (opts, binary, rewrites) = session_options(None).unwrap();
        assert_eq!(opts, ["cpu=samples", "depth=64", "verbose=n"]);
        assert!(!binary && !rewrites);
        let (opts, binary, rewrites) =
            session_options(Some("cpu=times,format=b,depth=8,verbose=y")).unwrap();
        assert_eq!(opts, ["cpu=times", "format=b", "depth=8", "verbose=y"]);
        assert!(binary && rewrites);
        for chosen in ["file=/etc/x", "net=h:1", "session=stop", "reply=/tmp/r"] {
            let err = session_options(Some(&format!("cpu=wall,{chosen}"))).unwrap_err();
            assert_eq!(err.exit_code(), 8, "{err}");
            assert!(err.to_string().contains(chosen), "{err}");
        }
    }

    #[test]
    fn private_names_are_unforeseeable_and_differ() {
        let (a, b) = (random_name(), random_name());
        assert_eq!(a.len(), 12);
        assert_ne!(a, b);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        );
    }

    #[test]
    fn only_a_file_of_a_session_directory_in_tmp_is_taken_from_an_answer() {
        let target = Target {
            pid: 1,
            ns_pid: 1,
            uid: 0,
            gid: 0,
            root: PathBuf::from("/proc/1/root"),
            same_root: true,
        };
        let answer = |file: &str| Answer {
            text: format!("dumped\nfile: {file}\n"),
        };
        assert_eq!(
            answer("/tmp/hprof-attach-abc/profile.txt").file(&target),
            Some(PathBuf::from("/tmp/hprof-attach-abc/profile.txt"))
        );
        for elsewhere in [
            "/etc/shadow",
            "/tmp/profile.txt",
            "/tmp/other/profile.txt",
            "/var/tmp/hprof-attach-abc/profile.txt",
            "/tmp/hprof-attach-abc/sub/profile.txt",
        ] {
            assert_eq!(answer(elsewhere).file(&target), None, "{elsewhere}");
        }
        assert_eq!(
            Answer {
                text: "stopped\n".into()
            }
            .file(&target),
            None
        );
    }
}
