//! The stress suite (its own test target, `cargo test -p hprof-agent --test stress`): SIGQUIT
//! storms under every profiler combination, on every JDK, with allocation-heavy, lock-heavy,
//! CPU-bound loads, thread churn, virtual threads and class unloading (java/src/Stress.java).
//! Each run must end by itself with the program's own status and output, and the profile must
//! be complete and well formed. Every JVM is bounded by `finish`'s two-minute timeout, which
//! fails the test instead of hanging CI. A longer soak for release checks: bench/soak.sh.

#[allow(unused_imports)]
#[path = "support.rs"]
mod support;

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use hprof_format::Records;
use hprof_testkit::java::Lines;
use support::{Jdk, TextProfile, agentpath, finish, java_command, jdks, read_text};

/// How long each program runs, and how often it gets a SIGQUIT meanwhile.
const RUN_MILLIS: u64 = 3000;
const QUIT_EVERY: Duration = Duration::from_millis(250);

/// The profiler combinations and the loads each runs under.
const COMBINATIONS: &[(&str, &[&str])] = &[
    ("heap=sites,cpu=samples", &["alloc", "churn"]),
    ("cpu=samples,monitor=y,thread=y", &["locks", "churn", "cpu"]),
    (
        "heap=all,cpu=samples,monitor=y,thread=y",
        &["alloc", "vthreads", "unload"],
    ),
    (
        "cpu=times,heap=sites,alloc_interval=65536",
        &["cpu", "unload", "churn"],
    ),
    (
        "heap=sites,cpu=samples,format=b",
        &["alloc", "vthreads", "locks"],
    ),
    // cpu=times' tracker grows a thread's arrays while heap=sites takes stacks of sampled
    // allocations: on JDK 21+ a stack waits for every virtual thread's mount or unmount to
    // end, and carriers run the tracker inside theirs (it hung when the tracker allocated
    // under its registry's lock).
    (
        "cpu=times,heap=sites,monitor=y,thread=y",
        &["alloc", "vthreads", "locks", "churn"],
    ),
];

/// Whether process `pid` catches SIGQUIT (its `SigCgt` mask in /proc).
fn catches_sigquit(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|status| {
        status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
            .is_some_and(|mask| mask & (1 << 2) != 0)
    })
}

/// Runs Stress under `options` with `loads`, sending SIGQUIT every [`QUIT_EVERY`] until it
/// ends; checks its status, its output and the profile's shape. Returns the SIGQUITs sent.
fn storm(jdk: &Jdk, options: &str, loads: &[&str]) -> u32 {
    let what = format!("JDK {} {options} {loads:?}", jdk.version);
    let dir = tempfile::tempdir().unwrap();
    let millis = RUN_MILLIS.to_string();
    let mut args = vec![millis.as_str()];
    args.extend_from_slice(loads);
    let mut child = java_command(jdk, dir.path(), &[&agentpath(options)], "Stress", &args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("java starts");
    let pid = child.id();
    // SIGQUITs start once the JVM is up and the loads run (one before VM init would end it).
    let lines = Lines::of(&mut child);
    lines.expect("READY", Duration::from_secs(120));
    let done = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU32::new(0));
    let quitter = {
        let (done, sent) = (done.clone(), sent.clone());
        std::thread::spawn(move || {
            // Starts once the JVM catches SIGQUIT (before that, early in its start, the signal
            // would end it, as any program: a fixed wait is not always enough on a loaded machine).
            while !done.load(Ordering::Acquire) && !catches_sigquit(pid) {
                std::thread::sleep(Duration::from_millis(20));
            }
            while !done.load(Ordering::Acquire) {
                let ok = std::process::Command::new("kill")
                    .args(["-QUIT", &pid.to_string()])
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                if ok {
                    sent.fetch_add(1, Ordering::Relaxed);
                }
                std::thread::sleep(QUIT_EVERY);
            }
        })
    };
    let run = finish(child);
    done.store(true, Ordering::Release);
    quitter.join().unwrap();
    assert_eq!(
        run.code,
        Some(0),
        "{what}: status {:?} {}",
        run.signal,
        run.stderr
    );
    // The JVM prints its thread dumps (one per SIGQUIT) to stdout too, and they may land in
    // the middle of the program's lines (between "done true" and its line break).
    let stdout = lines.rest();
    assert!(stdout.contains("done true"), "{what}: {stdout}");
    // The one error allowed: on JDK 25+, heap dumps are skipped while virtual threads exist
    // (the JVM's heap walk crashes on them; docs/compatibility.md), and each skip says so.
    for line in run.stderr.lines().filter(|l| l.contains("HPROF ERROR")) {
        assert!(
            jdk.version >= 25
                && loads.contains(&"vthreads")
                && line.starts_with("HPROF ERROR: heap dump skipped: the heap holds"),
            "{what}: {}",
            run.stderr
        );
    }
    let sent = sent.load(Ordering::Relaxed);
    assert!(sent >= 4, "{what}: only {sent} SIGQUITs reached the JVM");
    if options.contains("format=b") {
        let bytes = std::fs::read(dir.path().join("java.hprof")).unwrap();
        let (_, mut records) = Records::new(&bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut n = 0;
        while records
            .next()
            .unwrap_or_else(|e| panic!("{what}: {e}"))
            .is_some()
        {
            n += 1;
        }
        assert!(n > 100, "{what}: {n} records");
    } else {
        let text = read_text(&dir.path().join("java.hprof.txt"));
        // The parser checks the header, traces written before use and every section closed.
        let p = TextProfile::parse(&text);
        let last = [
            "CPU SAMPLES END\n",
            "SITES END\n",
            "CPU TIME (ms) END\n",
            "MONITOR TIME END\n",
        ];
        assert!(
            last.iter().any(|end| text.ends_with(end)),
            "{what}: output does not end with a closed section:\n{}",
            &text[text.len().saturating_sub(300)..]
        );
        // At least one dump on top of the one at exit (SIGQUITs that arrive during a dump are
        // served by one more dump, so fewer dumps than signals is expected).
        let dumps = p.cpu.len().max(p.sites.len()).max(p.times.len());
        assert!(dumps >= 2, "{what}: {dumps} dumps for {sent} SIGQUITs");
    }
    sent
}

fn storms_on(version: u32) {
    // (A missing JDK fails the test in CI, and is reported as a skip elsewhere.)
    let Some(jdk) = hprof_testkit::java::jdk(version) else {
        return;
    };
    for (options, loads) in COMBINATIONS {
        storm(&jdk, options, loads);
    }
}

#[test]
fn sigquit_storms_jdk11() {
    storms_on(11);
}

#[test]
fn sigquit_storms_jdk17() {
    storms_on(17);
}

#[test]
fn sigquit_storms_jdk21() {
    storms_on(21);
}

#[test]
fn sigquit_storms_jdk25() {
    storms_on(25);
}

/// One front-end command: `u1 tag, u4 serial, u4 length, body`.
fn frame(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut bytes = vec![tag];
    bytes.extend_from_slice(&1u32.to_be_bytes());
    bytes.extend_from_slice(&(body.len() as u32).to_be_bytes());
    bytes.extend_from_slice(body);
    bytes
}

/// `net=` under load: a front-end sends a command every 50 ms (allocation sites after a GC,
/// heap summaries, CPU samples, traces, a GC, a heap dump now and then) while SIGQUITs arrive
/// too, so the listener thread's dumps meet the dump thread's. The stream must parse whole.
fn front_end_storm(jdk: &Jdk) {
    use std::io::{Read, Write};
    let what = format!("JDK {} net=", jdk.version);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let options = format!("heap=sites,cpu=samples,format=b,net=127.0.0.1:{port}");
    let args = [
        RUN_MILLIS.to_string(),
        "alloc".into(),
        "churn".into(),
        "locks".into(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = java_command(jdk, dir.path(), &[&agentpath(&options)], "Stress", &args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("java starts");
    let pid = child.id();
    let lines = Lines::of(&mut child);
    // The agent connects as it starts (within two minutes, or the test fails).
    listener.set_nonblocking(true).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let (mut stream, _) = loop {
        match listener.accept() {
            Ok(connection) => break connection,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{what}: the agent never connected"
                );
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => panic!("{what}: {e}"),
        }
    };
    stream.set_nonblocking(false).unwrap();
    // Commands and SIGQUITs start once the JVM is up and the loads run.
    lines.expect("READY", Duration::from_secs(120));
    stream
        .set_read_timeout(Some(Duration::from_secs(150)))
        .unwrap();
    let mut commands = stream.try_clone().unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let sender = {
        let done = done.clone();
        std::thread::spawn(move || {
            let cutoff = 0.0f32.to_bits().to_be_bytes();
            let mut sites = 0x4u16.to_be_bytes().to_vec();
            sites.extend_from_slice(&cutoff);
            let mut cpu = 0u16.to_be_bytes().to_vec();
            cpu.extend_from_slice(&cutoff);
            let script = [
                frame(0x03, &sites),
                frame(0x04, &[]),
                frame(0x07, &cpu),
                frame(0x06, &[]),
                frame(0x01, &[]),
            ];
            let mut n = 0usize;
            while !done.load(Ordering::Acquire) {
                let command = if n % 20 == 19 {
                    frame(0x02, &[])
                } else {
                    script[n % script.len()].clone()
                };
                if commands.write_all(&command).is_err() {
                    return;
                }
                if n.is_multiple_of(5) {
                    let _ = std::process::Command::new("kill")
                        .args(["-QUIT", &pid.to_string()])
                        .stderr(Stdio::null())
                        .status();
                }
                n += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stream.read_to_end(&mut bytes);
        bytes
    });
    let run = finish(child);
    done.store(true, Ordering::Release);
    sender.join().unwrap();
    let bytes = reader.join().unwrap();
    assert_eq!(run.code, Some(0), "{what}: {:?} {}", run.signal, run.stderr);
    assert!(
        !run.stderr.contains("HPROF ERROR"),
        "{what}: {}",
        run.stderr
    );
    let (_, mut records) = Records::new(&bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
    let mut tags = std::collections::HashSet::new();
    while let Some((_, record)) = records.next().unwrap_or_else(|e| panic!("{what}: {e}")) {
        tags.insert(record.tag());
    }
    for tag in [
        hprof_format::Tag::AllocSites,
        hprof_format::Tag::CpuSamples,
        hprof_format::Tag::HeapSummary,
    ] {
        assert!(tags.contains(&tag), "{what}: no {tag:?} in the stream");
    }
}

#[test]
fn front_end_commands_under_sigquits() {
    for jdk in jdks() {
        front_end_storm(&jdk);
    }
}
