//! Inputs that once made `hprof` misbehave (issue 26): endless inputs read without bound, heap
//! dumps cut short analysed as if whole, the agent's gzip profiles refused, numbers out of
//! range dropped. Every command ends with a clear answer, in bounded time and memory.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::support::java::{JavaProcess, jdk17, jdks, libhprof, run_java};
use crate::support::{hprof, temp_dir, write_file};

/// The most virtual memory a command may map while it reads an endless input (`ulimit -v`,
/// in KiB): far below what an unbounded read reaches (gigabytes in seconds), with room for
/// the threads' stacks.
const MEMORY_KIB: u64 = 512 << 10;

/// Runs `hprof args` with standard input from `stdin` (a file) or none, its address space
/// limited to [`MEMORY_KIB`], failing the test if it runs for more than `limit`.
pub(crate) fn bounded(args: &[&str], stdin: Option<&Path>, limit: Duration) -> Output {
    let exe = hprof().get_program().to_owned();
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("ulimit -v {MEMORY_KIB} && exec \"$0\" \"$@\""))
        .arg(exe)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match stdin {
        Some(path) => command.stdin(std::fs::File::open(path).unwrap()),
        None => command.stdin(Stdio::null()),
    };
    output_within(command.spawn().expect("hprof runs"), args, limit)
}

/// Waits for `child` (at most `limit`, then kills it and fails) and collects its output, read
/// while it runs (a full pipe would stall it).
fn output_within(child: std::process::Child, args: &[&str], limit: Duration) -> Output {
    let pid = child.id();
    let (tell, done) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tell.send(child.wait_with_output());
    });
    match done.recv_timeout(limit) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("hprof {args:?} still ran after {limit:?}");
        }
    }
}

/// A FIFO fed by a thread with `head` and then zeros until the reader goes away.
pub(crate) fn fifo_of_zeros(dir: &Path, name: &str, head: &'static [u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    let status = Command::new("mkfifo").arg(&path).status().unwrap();
    assert!(status.success());
    let writer = path.clone();
    std::thread::spawn(move || {
        use std::io::Write;
        let Ok(mut fifo) = std::fs::OpenOptions::new().write(true).open(&writer) else {
            return;
        };
        let zeros = vec![0u8; 1 << 16];
        if fifo.write_all(head).is_err() {
            return;
        }
        while fifo.write_all(&zeros).is_ok() {}
    });
    path
}

/// The commands that read a file, with `FILE` where the input goes.
const READERS: &[&[&str]] = &[
    &["top", "FILE"],
    &["convert", "FILE", "OUT.html"],
    &["summary", "FILE"],
    &["print", "FILE"],
    &["analyze", "FILE"],
    &["path", "FILE", "0x1"],
];

#[test]
fn endless_inputs_end_at_once_with_an_error_that_names_the_offset() {
    let dir = temp_dir();
    let out = dir.path().join("out.html");
    // A valid header (binary, then text) followed by zeros: the first bad byte is the error.
    const BINARY: &[u8] = b"JAVA PROFILE 1.0.2\0\0\0\0\x08\0\0\0\0\0\0\0\0";
    const TEXT: &[u8] = b"JAVA PROFILE 1.0.1, created Tue Nov 24 14:00:00 2026\n";
    for (i, command) in READERS.iter().enumerate() {
        let inputs = [
            ("/dev/zero".to_string(), None),
            ("-".to_string(), Some(Path::new("/dev/zero"))),
            (
                fifo_of_zeros(dir.path(), &format!("zeros{i}"), b"")
                    .display()
                    .to_string(),
                None,
            ),
            (
                fifo_of_zeros(dir.path(), &format!("binary{i}"), BINARY)
                    .display()
                    .to_string(),
                None,
            ),
            (
                fifo_of_zeros(dir.path(), &format!("text{i}"), TEXT)
                    .display()
                    .to_string(),
                None,
            ),
        ];
        for (input, stdin) in inputs {
            let args: Vec<&str> = command
                .iter()
                .map(|&a| match a {
                    "FILE" => input.as_str(),
                    "OUT.html" => out.to_str().unwrap(),
                    other => other,
                })
                .collect();
            let run = bounded(&args, stdin, Duration::from_secs(30));
            let stderr = String::from_utf8_lossy(&run.stderr);
            assert_eq!(run.status.code(), Some(1), "{args:?}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
            assert!(stderr.starts_with("hprof: error: "), "{args:?}: {stderr}");
            assert!(stderr.contains("offset"), "{args:?}: no offset in {stderr}");
            // Never "truncated" for an input that does not end.
            assert!(!stderr.contains("truncated"), "{args:?}: {stderr}");
        }
    }
    assert!(!out.exists());
}

#[test]
fn an_endless_well_formed_input_stops_at_the_size_limit_with_its_offset() {
    let dir = temp_dir();
    // Lines of a text profile forever: only the size limit can end it.
    let fifo = dir.path().join("lines");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let writer = fifo.clone();
    std::thread::spawn(move || {
        use std::io::Write;
        let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&writer) else {
            return;
        };
        let _ = f.write_all(b"JAVA PROFILE 1.0.1, created Tue Nov 24 14:00:00 2026\n");
        let lines = "THREAD END (id = 1)\n".repeat(4096);
        while f.write_all(lines.as_bytes()).is_ok() {}
    });
    let run = bounded(
        &["--max-input", "8M", "top", fifo.to_str().unwrap()],
        None,
        Duration::from_secs(60),
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("more than 8388608 bytes at byte offset 8388608"),
        "{stderr}"
    );
}

/// A `jcmd GC.heap_dump` of HeapPopulation on `jdk`, and its top-level records as (offset,
/// tag, length).
fn jcmd_dump(jdk: &crate::support::java::Jdk, dir: &Path) -> (Vec<u8>, Vec<(usize, u8, usize)>) {
    let path = dir.join("whole.hprof");
    let program = JavaProcess::start(jdk, &["-Xmx128m"], "HeapPopulation");
    program.jcmd(jdk, &["GC.heap_dump", path.to_str().unwrap()]);
    drop(program);
    let bytes = std::fs::read(&path).unwrap();
    let mut records = Vec::new();
    let mut at = bytes.iter().position(|&b| b == 0).unwrap() + 1 + 12;
    while at < bytes.len() {
        let len = u32::from_be_bytes(bytes[at + 5..at + 9].try_into().unwrap()) as usize;
        records.push((at, bytes[at], len));
        at += 9 + len;
    }
    (bytes, records)
}

#[test]
fn a_heap_dump_cut_short_is_reported_by_every_command_unless_allowed() {
    for jdk in jdks() {
        let dir = temp_dir();
        let (bytes, records) = jcmd_dump(&jdk, dir.path());
        let segments: Vec<_> = records.iter().filter(|r| r.1 == 0x1c).collect();
        let end = records.last().unwrap();
        assert_eq!(
            end.1, 0x2c,
            "JDK {}: the dump ends with HEAP DUMP END",
            jdk.version
        );
        let first = segments[0];
        let cuts = [
            // After its first segment; before any heap record; without HEAP DUMP END alone;
            // inside the first segment.
            ("one-segment", first.0 + 9 + first.2, "no HEAP DUMP END"),
            ("no-heap", first.0, "no heap dump record"),
            ("no-end", end.0, "no HEAP DUMP END"),
            ("inside", first.0 + 1000, "truncated HEAP DUMP SEGMENT"),
        ];
        for (what, len, problem) in cuts {
            let path = write_file(dir.path(), &format!("{what}.hprof"), &bytes[..len]);
            let file = path.to_str().unwrap();
            for command in [
                vec!["summary", file],
                vec!["print", file],
                vec!["analyze", file],
                vec!["path", file, "0x1"],
            ] {
                let context = format!("JDK {} {what}: {command:?}", jdk.version);
                let run = bounded(&command, None, Duration::from_secs(120));
                let stderr = String::from_utf8_lossy(&run.stderr);
                assert_eq!(run.status.code(), Some(1), "{context}: {stderr}");
                assert!(stderr.contains(problem), "{context}: {stderr}");
                assert!(stderr.contains("--allow-truncated"), "{context}: {stderr}");
                let mut allowed = command.clone();
                allowed.insert(1, "--allow-truncated");
                let run = bounded(&allowed, None, Duration::from_secs(120));
                let stderr = String::from_utf8_lossy(&run.stderr);
                assert!(
                    stderr.contains("hprof: warning: ") && stderr.contains(problem),
                    "{context} allowed: {stderr}"
                );
                // `path` still fails: object 0x1 is in no dump.
                if command[0] != "path" {
                    assert_eq!(run.status.code(), Some(0), "{context} allowed: {stderr}");
                }
            }
            // analyze's report says how much of the file it read, and what is missing.
            let run = bounded(
                &["analyze", "--allow-truncated", "--json", file],
                None,
                Duration::from_secs(120),
            );
            let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
            let input = &report["input"];
            assert_eq!(input["complete"], false, "{what}: {input}");
            assert_eq!(input["file_bytes"], len as u64, "{what}: {input}");
            let read = input["bytes_read"].as_u64().unwrap();
            let expected = if what == "inside" { first.0 } else { len };
            assert_eq!(read, expected as u64, "{what}: {input}");
            assert!(
                input["incomplete"].as_str().unwrap().contains(problem),
                "{what}: {input}"
            );
        }
        // The whole dump is whole.
        let whole = dir.path().join("whole.hprof");
        let run = bounded(
            &["analyze", whole.to_str().unwrap()],
            None,
            Duration::from_secs(120),
        );
        let text = String::from_utf8_lossy(&run.stdout);
        assert_eq!(run.status.code(), Some(0), "JDK {}: {text}", jdk.version);
        assert!(
            text.contains(&format!(
                "Read: {} of {} bytes (100.0 %), the whole dump",
                bytes.len(),
                bytes.len()
            )),
            "JDK {}: {text}",
            jdk.version
        );
    }
}

#[test]
fn the_agents_gzip_profiles_are_read_wherever_plain_ones_are() {
    let jdk = jdk17();
    let dir = temp_dir();
    let run = run_java(
        &jdk,
        dir.path(),
        &[&format!(
            "-agentpath:{}=cpu=samples,file=z.txt.gz",
            libhprof().display()
        )],
        "CpuHot",
        &["1500"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let gz = dir.path().join("z.txt.gz");
    let gz = gz.to_str().unwrap();
    let plain = dir.path().join("z.txt");
    let text = {
        use std::io::Read;
        let mut text = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(gz).unwrap())
            .read_to_string(&mut text)
            .unwrap();
        text
    };
    std::fs::write(&plain, &text).unwrap();
    let plain = plain.to_str().unwrap();
    let top = |file: &str| bounded(&["top", "--json", file], None, Duration::from_secs(60));
    let (from_gz, from_plain) = (top(gz), top(plain));
    assert_eq!(
        from_gz.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&from_gz.stderr)
    );
    let (a, b): (serde_json::Value, serde_json::Value) = (
        serde_json::from_slice(&from_gz.stdout).unwrap(),
        serde_json::from_slice(&from_plain.stdout).unwrap(),
    );
    assert_eq!(a["methods"], b["methods"]);
    assert!(a["total"].as_i64().unwrap() > 0, "{a}");
    for (input, output) in [(gz, "gz.collapsed"), (plain, "plain.collapsed")] {
        let out = dir.path().join(output);
        let run = bounded(
            &["convert", input, out.to_str().unwrap()],
            None,
            Duration::from_secs(60),
        );
        assert_eq!(
            run.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
    assert_eq!(
        std::fs::read(dir.path().join("gz.collapsed")).unwrap(),
        std::fs::read(dir.path().join("plain.collapsed")).unwrap()
    );
    // From standard input too.
    let run = bounded(
        &["top", "--json", "-"],
        Some(Path::new(gz)),
        Duration::from_secs(60),
    );
    let c: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(c["methods"], b["methods"]);
}

#[test]
fn a_count_out_of_range_is_an_error_with_its_line() {
    let dir = temp_dir();
    let text = "JAVA PROFILE 1.0.1, created Tue Nov 24 14:00:00 2026\n\n\
TRACE 300001: (thread=200001)\n\tCpuHot.hot(CpuHot.java:12)\n\
TRACE 300002: (thread=200001)\n\tCpuHot.main(CpuHot.java:30)\n\
CPU SAMPLES BEGIN (total = 100000000000000000000000) Tue Nov 24 14:00:01 2026\n\
rank   self  accum   count trace method\n\
   1 70.00% 70.00%       7 300001 CpuHot.hot\n\
   2 30.00% 100.00% 18446744073709551617 300002 CpuHot.main\n\
CPU SAMPLES END\n";
    let bad_total = write_file(dir.path(), "total.txt", text.as_bytes());
    let bad_count = write_file(
        dir.path(),
        "count.txt",
        text.replace("100000000000000000000000", "10").as_bytes(),
    );
    let out = dir.path().join("x.collapsed");
    for (file, line, problem) in [
        (&bad_total, "line 7:", "total is not a number"),
        (
            &bad_count,
            "line 10:",
            "\"18446744073709551617\" is not a number",
        ),
    ] {
        for command in [
            vec!["top", file.to_str().unwrap()],
            vec!["convert", file.to_str().unwrap(), out.to_str().unwrap()],
        ] {
            let run = bounded(&command, None, Duration::from_secs(30));
            let stderr = String::from_utf8_lossy(&run.stderr);
            assert_eq!(run.status.code(), Some(1), "{command:?}: {stderr}");
            assert!(
                stderr.contains(line) && stderr.contains(problem),
                "{command:?}: {stderr}"
            );
        }
    }
    assert!(!out.exists());
}

#[test]
fn run_passes_on_the_status_of_a_jvm_killed_by_a_signal_and_says_why_there_is_no_profile() {
    let jdk = jdk17();
    let classes = crate::support::java::classes();
    let cp = classes.to_str().unwrap();
    let java = jdk.bin("java");
    let java = java.to_str().unwrap();
    // SIGKILL from outside, once the program runs.
    let dir = temp_dir();
    let mut command = hprof();
    command
        .current_dir(dir.path())
        .env("HPROF_AGENT", libhprof())
        .args(["run", "--", java, "-cp", cp, "ExitPaths", "wait"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    let (child, pid) = crate::support::java::start_until_ready(command);
    let killer = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killer.success());
    let run = output_within(child, &["run", "(killed)"], Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(137), "{stderr}");
    assert!(
        stderr.contains(
            "the JVM was killed by SIGKILL (exit status 137): its profile could not be written"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("not a profile"), "{stderr}");
    assert!(!dir.path().join("java.hprof.txt").exists(), "{stderr}");

    // A JVM crash: HotSpot's error handler aborts the process (SIGABRT, 134).
    let dir = temp_dir();
    let run = bounded_in(
        dir.path(),
        &["run", "--", java, "-cp", cp, "ExitPaths", "crash"],
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(134), "{stderr}");
    assert!(
        stderr.contains("the JVM was killed by SIGABRT (exit status 134)"),
        "{stderr}"
    );
    // With core dumps off, HotSpot's error handler exits 1 instead, which runs the exit
    // handlers (the agent's may write its last dump, or not finish it): the status is still
    // the answer, with the report or the reason there is none.
    let dir = temp_dir();
    let run = bounded_in(
        dir.path(),
        &[
            "run",
            "--",
            java,
            "-XX:-CreateCoredumpOnCrash",
            "-cp",
            cp,
            "ExitPaths",
            "crash",
        ],
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    let reported = stderr.contains("Profile written to");
    assert!(
        reported
            || stderr.contains("the program exited with status 1 before its profile was complete"),
        "{stderr}"
    );
    assert!(!stderr.contains("hprof: error"), "{stderr}");
    if reported {
        assert!(dir.path().join("java.hprof.txt").exists(), "{stderr}");
    }
}

/// Runs `hprof args` in `dir` with the agent (at most two minutes).
fn bounded_in(dir: &Path, args: &[&str]) -> Output {
    let child = hprof()
        .current_dir(dir)
        .env("HPROF_AGENT", libhprof())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    output_within(child, args, Duration::from_secs(120))
}

/// Where [`jvm_with_its_own_tmp`] puts the program's classes in the JVM's /tmp.
const TEST_CLASSES: &str = "test-classes";

/// A JVM running `LongRunning` for `millis`, whose /tmp is `tmp` (a mount namespace of its
/// own, as a container has): what it and `hprof attach` leave in its /tmp is all in `tmp`.
/// Panics where namespaces are not allowed (in CI), else `None`.
fn jvm_with_its_own_tmp(tmp: &Path, millis: u64) -> Option<(std::process::Child, u32)> {
    let probe = Command::new("unshare")
        .args(["--mount", "--fork", "sh", "-c"])
        .arg(format!("mount --bind '{}' /tmp", tmp.display()))
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        assert!(
            std::env::var_os("CI").is_none(),
            "unshare --mount is not allowed here"
        );
        eprintln!("unshare --mount is not allowed here: this test needs it");
        return None;
    }
    // The program's classes go into that /tmp: the checkout (and its compiled classes) may
    // itself lie under the /tmp the mount hides (a fresh clone in /tmp/x, say).
    let classes = tmp.join(TEST_CLASSES);
    std::fs::create_dir_all(&classes).unwrap();
    for entry in std::fs::read_dir(crate::support::java::classes()).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("LongRunning") && name.ends_with(".class") {
            std::fs::copy(entry.path(), classes.join(&name)).unwrap();
        }
    }
    let mut command = Command::new("unshare");
    command
        .args(["--mount", "--fork", "--kill-child", "sh", "-c"])
        .arg(format!(
            "mount --bind '{}' /tmp && exec \"$0\" \"$@\"",
            tmp.display()
        ))
        .arg(jdk17().bin("java"))
        .arg("-cp")
        .arg(format!("/tmp/{TEST_CLASSES}"))
        .args(["LongRunning", &millis.to_string()])
        .stdin(Stdio::piped())
        .stderr(Stdio::null());
    let (child, pid) = crate::support::java::start_until_ready(command);
    Some((child, pid))
}

/// What is left in a JVM's /tmp but its attach socket, its performance data and the agent's
/// copy (the JVM keeps it loaded; every session loads that same file).
fn leftovers(tmp: &Path) -> Vec<String> {
    let mut left: Vec<String> = std::fs::read_dir(tmp)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n != TEST_CLASSES
                && !n.starts_with(".java_pid")
                && !n.starts_with("hprof-0")
                && !n.starts_with("hsperfdata_")
        })
        .collect();
    left.sort();
    left
}

fn attach_in(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["attach"];
    all.extend_from_slice(args);
    bounded_in(dir, &all)
}

#[test]
fn attaching_to_a_jvm_that_exits_gives_a_documented_status_and_leaves_nothing_behind() {
    use std::io::BufRead;
    let dir = temp_dir();
    for round in 0..3 {
        let tmp = tempfile::tempdir().unwrap();
        let Some((mut jvm, pid)) = jvm_with_its_own_tmp(tmp.path(), 120_000) else {
            return;
        };
        let pid = pid.to_string();
        // A recording the JVM's exit ends (its standard input closed: LongRunning exits):
        // the profile it wrote at its exit is the output.
        let out = format!("exit{round}.txt");
        let mut recording = hprof()
            .current_dir(dir.path())
            .env("HPROF_AGENT", libhprof())
            .args(["attach", &pid, "-d", "60", "-o", &out])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut said = String::new();
        let mut stderr = std::io::BufReader::new(recording.stderr.take().unwrap());
        while !said.contains("Profiling JVM") {
            assert!(
                stderr.read_line(&mut said).unwrap() > 0,
                "round {round}: {said}"
            );
        }
        std::thread::sleep(Duration::from_millis(300 * round));
        drop(jvm.stdin.take());
        let (tell, done) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = std::io::Read::read_to_string(&mut stderr, &mut said);
            let _ = tell.send((recording.wait(), said));
        });
        let (status, said) = done
            .recv_timeout(Duration::from_secs(60))
            .expect("the recording ends when the JVM does");
        assert_eq!(status.unwrap().code(), Some(0), "round {round}: {said}");
        assert!(said.contains("exited during the recording"), "{said}");
        let profile = std::fs::read_to_string(dir.path().join(&out)).unwrap();
        assert!(profile.contains("CPU SAMPLES END"), "{profile}");
        let _ = jvm.wait();
        assert_eq!(leftovers(tmp.path()), Vec::<String>::new(), "round {round}");
    }
    // Requests sent while a JVM exits: each ends with a documented status (0 answered,
    // 3 no such process, 8 no session), never permission denied, an empty answer or the
    // whole timeout.
    let tmp = tempfile::tempdir().unwrap();
    let Some((mut jvm, pid)) = jvm_with_its_own_tmp(tmp.path(), 120_000) else {
        return;
    };
    let pid_text = pid.to_string();
    let started = attach_in(dir.path(), &[&pid_text, "start"]);
    assert_eq!(
        started.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    let stdin = jvm.stdin.take();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        drop(stdin);
    });
    let mut codes = Vec::new();
    while Path::new(&format!("/proc/{pid}")).exists() && codes.len() < 200 {
        let began = std::time::Instant::now();
        let action = ["status", "dump", "stop", "start"][codes.len() % 4];
        let run = attach_in(
            dir.path(),
            &[&pid_text, action, "--timeout", "5", "-o", "x.txt"],
        );
        let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
        let code = run.status.code();
        assert!(
            matches!(code, Some(0 | 3 | 8)),
            "{action}: {code:?} after {:?}: {stderr}",
            began.elapsed()
        );
        assert!(!stderr.contains("permission denied"), "{stderr}");
        assert!(!stderr.contains("unexpected answer"), "{stderr}");
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "{action}: {stderr}"
        );
        if code == Some(3) {
            assert!(
                stderr.contains("exited") || stderr.contains("no process"),
                "{stderr}"
            );
        }
        codes.push(code);
    }
    let _ = jvm.wait();
    let gone = attach_in(dir.path(), &[&pid_text, "status"]);
    assert_eq!(gone.status.code(), Some(3), "{codes:?}");
    // A session started and not stopped left its last dump in its own directory: that is
    // its output (announced at start), and nothing else is left.
    let left = leftovers(tmp.path());
    assert!(
        left.iter().all(|n| n.starts_with("hprof-attach-")),
        "{left:?}"
    );
}

#[test]
fn attach_files_are_private_unpredictable_and_never_followed() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
    let dir = temp_dir();
    let tmp = tempfile::tempdir().unwrap();
    let Some((mut jvm, pid)) = jvm_with_its_own_tmp(tmp.path(), 60_000) else {
        return;
    };
    // Another user's traps at the names this command once used.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "untouched").unwrap();
    for name in [
        format!("hprof-attach-{pid}.txt"),
        format!("hprof-attach-{pid}.reply"),
        format!("hprof-attach-{pid}.hprof"),
    ] {
        symlink(&victim, tmp.path().join(name)).unwrap();
    }
    let pid = pid.to_string();
    let start = attach_in(dir.path(), &[&pid, "start"]);
    let stderr = String::from_utf8_lossy(&start.stderr);
    assert_eq!(start.status.code(), Some(0), "{stderr}");
    let profile = stderr
        .split("its profile collects in ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .expect("the profile's path")
        .to_string();
    let session_dir = Path::new(&profile).parent().unwrap().to_path_buf();
    let meta = std::fs::symlink_metadata(&session_dir).unwrap();
    assert!(meta.is_dir(), "{profile}");
    assert_eq!(meta.mode() & 0o777, 0o700, "{profile}");
    assert_eq!(
        std::fs::metadata(&profile).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let name = session_dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        name.starts_with("hprof-attach-") && !name.contains(&pid),
        "{name}"
    );
    std::thread::sleep(Duration::from_millis(500));
    let stop = attach_in(dir.path(), &[&pid, "stop", "-o", "p.txt"]);
    assert_eq!(
        stop.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&stop.stderr)
    );
    assert!(
        std::fs::read_to_string(dir.path().join("p.txt"))
            .unwrap()
            .contains("CPU SAMPLES END")
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
    let mut left = leftovers(tmp.path());
    left.retain(|n| !n.starts_with(&format!("hprof-attach-{pid}.")));
    assert_eq!(left, Vec::<String>::new());
    let _ = jvm.kill();
    let _ = jvm.wait();
}

#[test]
fn of_two_starts_at_once_the_loser_is_told_a_session_runs() {
    let dir = temp_dir();
    let tmp = tempfile::tempdir().unwrap();
    let Some((mut jvm, pid)) = jvm_with_its_own_tmp(tmp.path(), 120_000) else {
        return;
    };
    let pid = pid.to_string();
    for round in 0..5 {
        let racers: Vec<_> = (0..2)
            .map(|_| {
                let (dir, pid) = (dir.path().to_path_buf(), pid.clone());
                std::thread::spawn(move || attach_in(&dir, &[&pid, "start"]))
            })
            .collect();
        let mut results: Vec<(Option<i32>, String)> = racers
            .into_iter()
            .map(|r| {
                let out = r.join().unwrap();
                (
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr).into_owned(),
                )
            })
            .collect();
        results.sort();
        assert_eq!(results[0].0, Some(0), "round {round}: {results:?}");
        assert_eq!(results[1].0, Some(8), "round {round}: {results:?}");
        assert!(
            results[1]
                .1
                .contains("a profiling session is already running in this JVM"),
            "round {round}: {results:?}"
        );
        let stop = attach_in(dir.path(), &[&pid, "stop", "-o", "race.txt"]);
        assert_eq!(
            stop.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&stop.stderr)
        );
        assert_eq!(leftovers(tmp.path()), Vec::<String>::new(), "round {round}");
    }
    let _ = jvm.kill();
    let _ = jvm.wait();
}
