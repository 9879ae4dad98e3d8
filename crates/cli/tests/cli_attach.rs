//! `hprof attach`: the agent loaded into JVMs that are already running (JDK 11 to 25), the
//! session's actions, and every error with its exit status.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use hprof_testkit::java::{Jdk, classes, jdk17, jdks, libhprof, wait_for_cpu};
use hprof_testkit::require::{Skipped, skip};

use crate::support::{hprof, temp_dir};

/// A JVM running `LongRunning`, killed when dropped.
struct Target {
    child: Child,
    /// The pid `hprof attach` is given.
    pid: u32,
}

impl Target {
    fn start(jdk: &Jdk, jvm_options: &[&str], millis: u64) -> Target {
        Target::spawn(
            hprof_testkit::java::java_launcher(jdk),
            jvm_options,
            millis,
            |_, pid| pid,
        )
    }

    fn spawn(
        mut command: Command,
        jvm_options: &[&str],
        millis: u64,
        host_pid: impl Fn(&Child, u32) -> u32,
    ) -> Target {
        let mut child = command
            .args(jvm_options)
            .arg("-cp")
            .arg(classes())
            .arg("LongRunning")
            .arg(millis.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("java starts");
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .expect("read stdout");
        let ns_pid: u32 = line
            .trim()
            .strip_prefix("READY ")
            .unwrap_or_else(|| panic!("expected READY, got {line:?}"))
            .parse()
            .unwrap();
        let pid = host_pid(&child, ns_pid);
        Target { child, pid }
    }

    /// Waits (at most a minute) for the program to end; its status, stdout and stderr.
    fn finish(mut self) -> (Option<i32>, String, String) {
        use std::io::Read;
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "the program did not end in a minute"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut out = String::new();
        let mut err = String::new();
        let _ = self.child.stdout.take().unwrap().read_to_string(&mut out);
        let _ = self.child.stderr.take().unwrap().read_to_string(&mut err);
        (status.code(), out, err)
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `hprof attach ARGS` in `dir` (the command gives up after --timeout on its own; a
/// command still running after two minutes is killed and fails the test).
fn attach(dir: &Path, args: &[&str]) -> Output {
    let child = hprof()
        .current_dir(dir)
        .env("HPROF_AGENT", libhprof())
        .arg("attach")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let run = hprof_testkit::java::finish(child);
    Output {
        status: std::os::unix::process::ExitStatusExt::from_raw(match (run.code, run.signal) {
            (Some(code), _) => code << 8,
            (None, Some(signal)) => signal,
            (None, None) => unreachable!("a finished process has a code or a signal"),
        }),
        stdout: run.stdout.into_bytes(),
        stderr: run.stderr.into_bytes(),
    }
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The method of the first CPU SAMPLES row of the last section of a text profile.
fn top_method(profile: &str) -> String {
    let section = &profile[profile.rfind("CPU SAMPLES BEGIN").expect("CPU SAMPLES")..];
    let row = section.lines().nth(2).expect("a row");
    row.split_whitespace().last().unwrap().to_string()
}

#[test]
fn a_running_program_is_recorded_and_keeps_running_to_its_own_end() {
    for jdk in jdks() {
        let dir = temp_dir();
        let target = Target::start(&jdk, &[], 5000);
        let pid = target.pid.to_string();
        let out = attach(dir.path(), &[&pid, "-d", "2", "-o", "profile.txt"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "JDK {}: {}",
            jdk.version,
            text(&out)
        );
        let profile = std::fs::read_to_string(dir.path().join("profile.txt")).unwrap();
        assert_eq!(
            top_method(&profile),
            "LongRunning.hot",
            "JDK {}",
            jdk.version
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("LongRunning.hot"), "the report: {stderr}");
        // The program goes on to its own end, with its own status and output.
        let (code, stdout, stderr) = target.finish();
        assert_eq!(code, Some(3), "JDK {}: {stderr}", jdk.version);
        assert!(stdout.contains("finished "), "{stdout}");
        assert!(
            !stderr.contains("HPROF ERROR"),
            "JDK {}: {stderr}",
            jdk.version
        );
        assert!(!stderr.contains("Dumping"), "JDK {}: {stderr}", jdk.version);
    }
}

#[test]
fn start_dump_status_stop_and_a_second_session() {
    for jdk in jdks() {
        // (Shown with the assertion that fails.)
        eprintln!("JDK {}", jdk.version);
        let dir = temp_dir();
        let target = Target::start(&jdk, &[], 60_000);
        let pid = target.pid.to_string();
        let run = |args: &[&str]| attach(dir.path(), args);

        let out = run(&[&pid, "start", "cpu=samples,interval=5"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let out = run(&[&pid, "status"]);
        let status = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(status.contains("running: yes"), "{status}");
        assert!(status.contains("cpu=samples,interval=5"), "{status}");
        // Two sessions never run at once.
        let out = run(&[&pid, "start"]);
        assert_eq!(out.status.code(), Some(8), "{}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("already running"),
            "{}",
            text(&out)
        );
        // (Samples follow CPU time: 500 ms of it is about 50 at interval=5, nearly all in hot().)
        wait_for_cpu(target.pid, Duration::from_millis(500));
        let out = run(&[&pid, "dump", "-o", "dump.txt"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let dump = std::fs::read_to_string(dir.path().join("dump.txt")).unwrap();
        assert_eq!(top_method(&dump), "LongRunning.hot");
        wait_for_cpu(target.pid, Duration::from_millis(200));
        let out = run(&[&pid, "stop", "-o", "stop.collapsed"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let folded = std::fs::read_to_string(dir.path().join("stop.collapsed")).unwrap();
        assert!(
            folded.lines().any(|l| l.contains("LongRunning.hot ")),
            "{folded}"
        );
        let out = run(&[&pid, "status"]);
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("running: no"),
            "{}",
            text(&out)
        );
        let out = run(&[&pid, "stop"]);
        assert_eq!(out.status.code(), Some(8), "{}", text(&out));

        // A new session with other options.
        let out = run(&[&pid, "cpu=wall,thread=y", "-d", "1", "-o", "wall.txt"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let wall = std::fs::read_to_string(dir.path().join("wall.txt")).unwrap();
        assert!(wall.contains("<hprof>.<RUNNABLE>("), "{wall}");
        // The JVM's own threads, running before the attach, are sampled too.
        assert!(wall.contains("name=\"main\""), "{wall}");
        assert!(wall.contains("java.lang.ref.Reference"), "{wall}");
        drop(target);
    }
}

#[test]
fn a_refused_option_says_so_in_the_command_output() {
    let jdk = jdk17();
    let dir = temp_dir();
    let target = Target::start(&jdk, &[], 3000);
    let out = attach(dir.path(), &[&target.pid.to_string(), "start", "depth=x"]);
    assert_eq!(out.status.code(), Some(8), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("depth option value must be decimal"),
        "{}",
        text(&out)
    );
    let (code, _, stderr) = target.finish();
    assert_eq!(code, Some(3));
    assert!(!stderr.contains("HPROF"), "{stderr}");
}

#[test]
fn each_error_has_its_exit_status_and_message() {
    let dir = temp_dir();
    // No such process (pids never exceed 2^22 on Linux).
    let out = attach(dir.path(), &["4194305", "status"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no process with pid 4194305"));
    // Not a JVM.
    let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
    let out = attach(dir.path(), &[&sleeper.id().to_string(), "status"]);
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a HotSpot JVM"));
    // Attach disabled.
    let jdk = jdk17();
    let target = Target::start(&jdk, &["-XX:+DisableAttachMechanism"], 30_000);
    // (How soon --timeout gives up is measured in bench/rates.py.)
    let out = attach(
        dir.path(),
        &[&target.pid.to_string(), "status", "--timeout", "2"],
    );
    assert_eq!(out.status.code(), Some(6), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("DisableAttachMechanism"));
    drop(target);
    // The agent library missing.
    let target = Target::start(&jdk, &[], 30_000);
    let out = hprof()
        .current_dir(dir.path())
        .env("HPROF_AGENT", "/nonexistent/libhprof.so")
        .args(["attach", &target.pid.to_string(), "status"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/libhprof.so"));
    // Another user's JVM, attached to without root: permission denied.
    if needs_root_and_setpriv(Skipped::Part, "another user's JVM refused") {
        let out = Command::new("/usr/bin/setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_hprof"))
            .env("HPROF_AGENT", libhprof())
            .args(["attach", &target.pid.to_string(), "status"])
            .current_dir("/")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(5), "{}", text(&out));
        assert!(String::from_utf8_lossy(&out.stderr).contains("permission denied"));
    }
}

/// Whether this test can run programs as another user (root, util-linux's setpriv, and Java
/// classes that other users may read); if not, a skip of `skipped` that says so (a failure in
/// CI).
fn needs_root_and_setpriv(skipped: Skipped, what: &str) -> bool {
    if hprof_testkit::require::euid() != 0 {
        skip(
            skipped,
            format!("root is missing: {what} needs it to run a JVM as another user"),
        );
        return false;
    }
    if !Path::new("/usr/bin/setpriv").exists() {
        skip(
            skipped,
            format!("/usr/bin/setpriv is missing (util-linux): {what} needs it"),
        );
        return false;
    }
    // Another user's JVM reads the classes: every directory above them must let it through.
    let classes = classes();
    for dir in classes.ancestors() {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir).map_or(0, |m| m.permissions().mode());
        if mode & 0o005 != 0o005 {
            skip(
                skipped,
                format!(
                    "a checkout other users can read is missing: {} is mode {:o}; {what} runs a JVM as nobody",
                    dir.display(),
                    mode & 0o777
                ),
            );
            return false;
        }
    }
    true
}

#[test]
fn a_jvm_run_by_another_user_is_attached_to_as_that_user() {
    if !needs_root_and_setpriv(Skipped::Test, "attaching to another user's JVM") {
        return;
    }
    let jdk = jdk17();
    let dir = temp_dir();
    let mut command = Command::new("/usr/bin/setpriv");
    command
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(jdk.bin("java"))
        .current_dir("/tmp");
    let target = Target::spawn(command, &[], 4000, |_, pid| pid);
    let out = attach(
        dir.path(),
        &[&target.pid.to_string(), "-d", "1", "-o", "nobody.txt"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let profile = std::fs::read_to_string(dir.path().join("nobody.txt")).unwrap();
    assert_eq!(top_method(&profile), "LongRunning.hot");
    let (code, _, stderr) = target.finish();
    assert_eq!(code, Some(3), "{stderr}");
}

/// `LongRunning` started by `unshare` with `namespaces` (and `--fork --kill-child`), after
/// the shell command `setup` runs in them; `None` (with a line saying so) where this machine
/// does not allow those namespaces. The JVM is pid 1 in its pid namespace.
fn in_namespaces(namespaces: &[&str], setup: &str) -> Option<Target> {
    let probe = Command::new("unshare")
        .args(namespaces)
        .args(["--fork", "sh", "-c", setup])
        .output();
    match probe {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            skip(
                Skipped::Test,
                format!(
                    "namespaces are refused here: `unshare {namespaces:?}` failed ({}): {}",
                    o.status,
                    String::from_utf8_lossy(&o.stderr).trim()
                ),
            );
            return None;
        }
        Err(e) => {
            skip(Skipped::Test, format!("unshare is missing: {e}"));
            return None;
        }
    }
    let mut command = Command::new("unshare");
    command
        .args(namespaces)
        .args(["--fork", "--kill-child", "sh", "-c"])
        .arg(format!(r#"{setup} && exec "$0" "$@""#))
        .arg(jdk17().bin("java"));
    // unshare's child is the JVM: find its pid out here.
    Some(Target::spawn(command, &[], 5000, |child, ns_pid| {
        assert_eq!(ns_pid, 1, "the JVM's pid in its namespace");
        let children =
            std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", child.id())).unwrap();
        children.split_whitespace().next().unwrap().parse().unwrap()
    }))
}

#[test]
fn a_jvm_in_another_pid_namespace_is_attached_to() {
    // The JVM is pid 1 in its namespace and shares this /tmp: another test run on this machine
    // doing the same at once has a pid 1 JVM too, whose files there have the same names
    // (`hsperfdata_root/1`, locked: "Cannot use file ... locked by another process" came in
    // place of READY; `.java_pid1`). One such JVM at a time, across processes.
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open("/tmp/hprof-test-pid-namespace.lock")
        .unwrap();
    lock.lock().unwrap();
    let Some(target) = in_namespaces(&["--pid"], "true") else {
        return;
    };
    let dir = temp_dir();
    let out = attach(
        dir.path(),
        &[&target.pid.to_string(), "-d", "1", "-o", "ns.txt"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let profile = std::fs::read_to_string(dir.path().join("ns.txt")).unwrap();
    assert_eq!(top_method(&profile), "LongRunning.hot");
}

#[test]
fn a_jvm_with_its_own_tmp_in_another_mount_and_pid_namespace_is_attached_to() {
    // As in a container: the JVM's /tmp (its attach socket, the session's files) is a tmpfs
    // of its own mount namespace, reached from here only through /proc/PID/root/tmp. The
    // host's /tmp stays reachable in there at /mnt, and the Java classes (under /tmp when the
    // checkout is) are mounted back at their own path.
    let classes = classes();
    let keep = match classes.strip_prefix("/tmp") {
        Ok(rel) => format!(
            " && mkdir -p '/tmp/{0}' && mount --bind '/mnt/{0}' '/tmp/{0}'",
            rel.display()
        ),
        Err(_) => String::new(),
    };
    let setup = format!("mount --bind /tmp /mnt && mount -t tmpfs hprof-test /tmp{keep}");
    let Some(target) = in_namespaces(&["--pid", "--mount"], &setup) else {
        return;
    };
    let dir = temp_dir();
    let pid = target.pid.to_string();
    let out = attach(dir.path(), &[&pid, "-d", "1", "-o", "container.txt"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let profile = std::fs::read_to_string(dir.path().join("container.txt")).unwrap();
    assert_eq!(top_method(&profile), "LongRunning.hot");
    assert!(
        std::fs::metadata(format!("/proc/{pid}/root/tmp/.java_pid1")).is_ok(),
        "the attach socket in the JVM's own /tmp"
    );
}

#[test]
fn heap_sites_and_heap_dump_start_late() {
    for jdk in jdks() {
        // (Shown with the assertion that fails.)
        eprintln!("JDK {}", jdk.version);
        let dir = temp_dir();
        let target = Target::start(&jdk, &[], 60_000);
        let pid = target.pid.to_string();
        // Sampled allocation sites, started in the running JVM: LongRunning allocates a byte[1024]
        // per round in main, a round taking about a millisecond of CPU (462 rounds in 0.49 s):
        // 2 s of the main thread's CPU (not the process's: the JIT's and GC's threads may take
        // most of that after the agent's start) allocate about 2 MB, some 30 samples at 64 KB
        // (the chance of none, e^-30, is nil).
        let out = attach(
            dir.path(),
            &[&pid, "start", "heap=sites,alloc_interval=64k"],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        hprof_testkit::java::wait_for_thread_cpu(target.pid, "java", Duration::from_millis(2000));
        let out = attach(dir.path(), &[&pid, "stop", "-o", "late.collapsed"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let folded = std::fs::read_to_string(dir.path().join("late.collapsed")).unwrap();
        assert!(
            folded
                .lines()
                .any(|l| l.starts_with("LongRunning.main;byte[] ")),
            "{folded}"
        );
        // A heap dump, in a second session.
        let out = attach(
            dir.path(),
            &[&pid, "heap=dump,format=b", "-d", "0", "-o", "late.hprof"],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let summary = hprof()
            .args(["summary", "--json"])
            .arg(dir.path().join("late.hprof"))
            .output()
            .unwrap();
        assert!(summary.status.success(), "{}", text(&summary));
        let json = String::from_utf8_lossy(&summary.stdout);
        // A whole heap: its segments and the JDK's classes with their instances.
        assert!(json.contains("\"HEAP DUMP SEGMENT\""), "{json}");
        assert!(json.contains("\"java.lang.String\""), "{json}");
        drop(target);
    }
}

#[test]
fn ctrl_c_ends_a_recording_early_with_its_profile_and_the_jvmti_sampler_starts_late() {
    let jdk = jdk17();
    let dir = temp_dir();
    let target = Target::start(&jdk, &[], 60_000);
    let pid = target.pid.to_string();
    let mut recording = hprof()
        .current_dir(dir.path())
        .env("HPROF_AGENT", libhprof())
        .args([
            "attach",
            &pid,
            "cpu=samples,sampler=jvmti",
            "-d",
            "60",
            "-o",
            "cut.txt",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Recording (its Ctrl-C handler set) once it says so; then samples, which follow the
    // target's CPU time.
    let mut said = String::new();
    let mut stderr = BufReader::new(recording.stderr.take().unwrap());
    while !said.contains("Ctrl-C stops early") {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            panic!("hprof attach ended before it recorded: {said}");
        }
        said.push_str(&line);
    }
    wait_for_cpu(target.pid, Duration::from_millis(500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(recording.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = recording.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = recording.kill();
            panic!("hprof attach did not stop within 30 s of Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "{said}");
    let profile = std::fs::read_to_string(dir.path().join("cut.txt")).unwrap();
    assert_eq!(top_method(&profile), "LongRunning.hot");
    // The session ended: another may start.
    let out = attach(dir.path(), &[&pid, "status"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("running: no"),
        "{}",
        text(&out)
    );
    drop(target);
}

/// A JVM running `LateCalls`, which does what it is told on its standard input; killed when
/// dropped.
struct Commanded {
    child: Child,
    pid: String,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Commanded {
    fn start(jdk: &Jdk) -> Commanded {
        let mut child = hprof_testkit::java::java_launcher(jdk)
            // For the `probe` command, which reads the tracker's `off` state by reflection.
            .arg("--add-opens=java.base/java.lang=ALL-UNNAMED")
            .arg("-cp")
            .arg(classes())
            .arg("LateCalls")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("java starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut target = Commanded {
            child,
            pid: String::new(),
            lines,
        };
        target.pid = target.expect("READY ");
        target
    }

    /// The rest of the next line of the program's output that starts with `prefix`
    /// (within a minute).
    fn expect(&mut self, prefix: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(rest) = line.strip_prefix(prefix) {
                        return rest.trim().to_string();
                    }
                }
                Err(e) => panic!("no line starting with {prefix:?} from LateCalls: {e}"),
            }
        }
    }

    /// Sends a command and waits for its answer.
    fn command(&mut self, command: &str, answer: &str) -> String {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{command}").unwrap();
        stdin.flush().unwrap();
        self.expect(answer)
    }

    /// Asks the program to exit; its status and standard error (within a minute).
    fn finish(mut self) -> (Option<i32>, String) {
        use std::io::Read;
        self.command("exit", "finished ");
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "LateCalls did not end");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        let _ = self.child.stderr.take().unwrap().read_to_string(&mut err);
        (status.code(), err)
    }
}

impl Drop for Commanded {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The calls of `method` in the last CPU TIME section of a text profile (rows of every
/// trace whose top frame it is).
fn calls_in_last_cpu_time(profile: &str, method: &str) -> u64 {
    let start = profile
        .rfind("CPU TIME (ms) BEGIN")
        .expect("a CPU TIME section");
    let section = &profile[start..];
    let section = &section[..section.find("CPU TIME (ms) END").expect("its end")];
    section
        .lines()
        .skip(2)
        .filter_map(|row| {
            let cols: Vec<&str> = row.split_whitespace().collect();
            (cols.len() == 6 && cols[5] == method).then(|| cols[3].parse::<u64>().unwrap())
        })
        .sum()
}

#[test]
fn cpu_times_started_late_counts_calls_exactly_from_the_attach_on_and_stop_restores_the_code() {
    for jdk in jdks() {
        let v = jdk.version;
        let dir = temp_dir();
        let mut target = Commanded::start(&jdk);
        let pid = target.pid.clone();
        assert_eq!(
            target.command("probe", "probe "),
            "-1",
            "JDK {v}: no tracker yet"
        );
        // Calls before the attach are not counted.
        target.command("run 1000", "ran ");
        // (Rewriting every loaded class may take longer than attach's default 10 s on a
        // loaded machine: 2 minutes bound it here, a bound for hangs, not a timing.)
        let out = attach(
            dir.path(),
            &[&pid, "start", "cpu=times,cutoff=0", "--timeout", "120"],
        );
        assert_eq!(out.status.code(), Some(0), "JDK {v}: {}", text(&out));
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("classes rewritten in"), "JDK {v}: {said}");
        assert!(
            said.contains("note: cpu=times started late"),
            "JDK {v}: {said}"
        );
        target.command("run 100000", "ran ");
        let out = attach(dir.path(), &[&pid, "dump", "-o", "dump.txt"]);
        assert_eq!(out.status.code(), Some(0), "JDK {v}: {}", text(&out));
        let dump = std::fs::read_to_string(dir.path().join("dump.txt")).unwrap();
        assert_eq!(
            calls_in_last_cpu_time(&dump, "LateCalls.counted"),
            100_000,
            "JDK {v}: {dump}"
        );
        // The next interval counts the next calls.
        target.command("run 5", "ran ");
        let out = attach(dir.path(), &[&pid, "stop", "-o", "stop.txt"]);
        assert_eq!(out.status.code(), Some(0), "JDK {v}: {}", text(&out));
        let stopped = std::fs::read_to_string(dir.path().join("stop.txt")).unwrap();
        assert_eq!(
            calls_in_last_cpu_time(&stopped, "LateCalls.counted"),
            5,
            "JDK {v}: {stopped}"
        );
        // Stopped, the classes have their own code back: calls made now run no probe (a
        // probe left in place would count on the tracker's shared `off` state).
        let before: i64 = target.command("probe", "probe ").parse().unwrap();
        assert!(before >= 0, "JDK {v}: the tracker is defined ({before})");
        target.command("run 100000", "ran ");
        let after: i64 = target.command("probe", "probe ").parse().unwrap();
        assert_eq!(after, before, "JDK {v}: probes ran after stop");
        // A second session counts its own calls.
        let out = attach(
            dir.path(),
            &[&pid, "start", "cpu=times,cutoff=0", "--timeout", "120"],
        );
        assert_eq!(out.status.code(), Some(0), "JDK {v}: {}", text(&out));
        target.command("run 11", "ran ");
        let out = attach(dir.path(), &[&pid, "stop", "-o", "again.txt"]);
        assert_eq!(out.status.code(), Some(0), "JDK {v}: {}", text(&out));
        let again = std::fs::read_to_string(dir.path().join("again.txt")).unwrap();
        assert_eq!(
            calls_in_last_cpu_time(&again, "LateCalls.counted"),
            11,
            "JDK {v}"
        );
        // The program runs to its own end, with nothing of ours on its standard error.
        let (code, err) = target.finish();
        assert_eq!(code, Some(3), "JDK {v}: {err}");
        assert!(!err.contains("HPROF"), "JDK {v}: {err}");
        assert!(!err.contains("jni,resolve"), "JDK {v}: {err}");
    }
}

#[test]
fn monitor_started_late_records_contention_and_says_what_it_leaves_out() {
    for jdk in jdks() {
        // (Shown with the assertion that fails.)
        eprintln!("JDK {}", jdk.version);
        let dir = temp_dir();
        let mut target = Commanded::start(&jdk);
        let pid = target.pid.clone();
        let out = attach(dir.path(), &[&pid, "start", "monitor=y"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains("monitor=y started late") && said.contains("not the monitors they own"),
            "{said}"
        );
        target.command("contend 20", "contended ");
        let out = attach(dir.path(), &[&pid, "stop", "-o", "monitors.txt"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let profile = std::fs::read_to_string(dir.path().join("monitors.txt")).unwrap();
        let section = &profile[profile.find("MONITOR TIME BEGIN").expect("MONITOR TIME")..];
        let section = &section[..section.find("MONITOR TIME END").unwrap()];
        // Each contender waits for the other to leave LateCalls$Lock.
        assert!(section.contains("LateCalls$Lock"), "{section}");
        assert!(profile.contains("MONITOR DUMP BEGIN"), "{profile}");
        assert!(profile.contains("name=\"contender-0\""), "{profile}");
        let (code, err) = target.finish();
        assert_eq!(code, Some(3), "{err}");
        assert!(!err.contains("HPROF"), "{err}");
    }
}
