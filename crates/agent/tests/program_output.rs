//! The program's standard streams are left alone: java/src/Chatter.java, which writes to
//! standard output and standard error alternately from its first instruction, prints the same
//! bytes in the same order with `heap=sites` (whose fast mode rewrites classes as the JVM
//! starts) as without the agent, read through one pipe for both streams and through one
//! terminal; its descriptors 1 and 2 never point anywhere else while the agent starts
//! (watched from outside through /proc); and a program killed early has written exactly what
//! it wrote, in order.

use std::collections::BTreeSet;
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hprof_testkit::java::{Jdk, java_command, jdk17, jdks};

use crate::support::agentpath;

/// Where both streams of the program go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sink {
    /// One pipe for standard output and standard error.
    Pipe,
    /// One pseudo-terminal for standard input, output and error.
    Terminal,
}

/// When the program is killed (SIGKILL).
#[derive(Debug, Clone, Copy)]
enum Kill {
    /// Never: it runs to its end.
    Never,
    /// This long after it was started.
    AfterStart(Duration),
    /// This long after its first line ("out first": the agent's own lines come before).
    AfterOutput(Duration),
}

/// What a run printed and what its descriptors 1 and 2 pointed to meanwhile.
struct Captured {
    bytes: Vec<u8>,
    /// Every target of /proc/PID/fd/1 and /proc/PID/fd/2 seen while it ran.
    targets: BTreeSet<String>,
    /// The target both should have: the pipe or the terminal the test gave it.
    expected: String,
}

impl Captured {
    /// What the program wrote: the output without the agent's own lines (its start and
    /// dump messages, `HPROF...` and `Dumping ...`, each written whole).
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes)
            .split_inclusive('\n')
            .filter(|l| !l.starts_with("HPROF") && !l.starts_with("Dumping "))
            .collect()
    }
}

/// Runs `Chatter args` with `jvm` options in `dir`, its output into `sink`, killed as `kill`
/// says (at most two minutes in any case).
fn run(jdk: &Jdk, dir: &Path, jvm: &[&str], args: &[&str], sink: Sink, kill: Kill) -> Captured {
    let mut command = java_command(jdk, dir, jvm, "Chatter", args);
    // Our ends: the reader of the pipe or the terminal's master; the program's: a descriptor
    // whose /proc target names what it is.
    let (reader, theirs): (std::fs::File, OwnedFd) = match sink {
        Sink::Pipe => {
            let (reader, writer) = std::io::pipe().unwrap();
            (std::fs::File::from(OwnedFd::from(reader)), writer.into())
        }
        Sink::Terminal => {
            let pty = nix::pty::openpty(None, None).unwrap();
            (std::fs::File::from(pty.master), pty.slave)
        }
    };
    let expected = std::fs::read_link(format!("/proc/self/fd/{}", theirs.as_raw_fd()))
        .unwrap()
        .display()
        .to_string();
    let stdin = match sink {
        Sink::Pipe => Stdio::null(),
        Sink::Terminal => Stdio::from(theirs.try_clone().unwrap()),
    };
    command
        .stdin(stdin)
        .stdout(Stdio::from(theirs.try_clone().unwrap()))
        .stderr(Stdio::from(theirs));
    let started = Instant::now();
    let mut child: Child = command.spawn().expect("java starts");
    // The program's descriptors are all that hold the pipe or terminal open now.
    drop(command);
    let pid = child.id();
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut seen = BTreeSet::new();
            while !done.load(Ordering::Acquire) {
                for fd in [1, 2] {
                    if let Ok(t) = std::fs::read_link(format!("/proc/{pid}/fd/{fd}")) {
                        seen.insert(t.display().to_string());
                    }
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            seen
        })
    };
    let first_line = Arc::new(std::sync::OnceLock::<Instant>::new());
    let reading = {
        let first_line = first_line.clone();
        let mut reader = reader;
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                match reader.read(&mut buf) {
                    // A terminal's master reads EIO once no one holds the other side.
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        bytes.extend_from_slice(&buf[..n]);
                        if bytes.windows(10).any(|w| w == b"out first\n") {
                            let _ = first_line.set(Instant::now());
                        }
                    }
                }
            }
            bytes
        })
    };
    let deadline = started + Duration::from_secs(120);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        let now = Instant::now();
        let due = match kill {
            Kill::Never => false,
            Kill::AfterStart(d) => now >= started + d,
            Kill::AfterOutput(d) => first_line.get().is_some_and(|&t| now >= t + d),
        };
        if due {
            let _ = child.kill();
        }
        if now > deadline {
            let _ = child.kill();
            panic!("Chatter did not end within two minutes");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let _ = child.wait();
    done.store(true, Ordering::Release);
    Captured {
        bytes: reading.join().unwrap(),
        targets: watcher.join().unwrap(),
        expected,
    }
}

/// Runs Chatter without the agent and under `heap=sites` (output file in `dir`).
fn both(jdk: &Jdk, args: &[&str], sink: Sink, kill: Kill) -> (Captured, Captured) {
    let plain_dir = tempfile::tempdir().unwrap();
    let plain = run(jdk, plain_dir.path(), &[], args, sink, kill);
    let dir = tempfile::tempdir().unwrap();
    let agent = agentpath("heap=sites");
    let profiled = run(jdk, dir.path(), &[&agent], args, sink, kill);
    for c in [&plain, &profiled] {
        assert_eq!(
            c.targets,
            BTreeSet::from([c.expected.clone()]),
            "JDK {}: descriptors 1 and 2 pointed elsewhere",
            jdk.version
        );
    }
    (plain, profiled)
}

/// The lines Chatter writes, in order (without the descriptor lines, which depend on where
/// its output goes), ended by a newline in the sink's way.
fn expected_lines(pairs: usize, newline: &str) -> Vec<String> {
    let mut lines = vec![format!("out first{newline}"), format!("err first{newline}")];
    for i in 0..pairs {
        lines.push(format!("out {i}{newline}"));
        lines.push(format!("err {i}{newline}"));
    }
    lines
}

#[test]
fn both_streams_through_one_pipe_are_byte_identical_with_heap_sites() {
    for jdk in jdks() {
        let v = jdk.version;
        let (plain, profiled) = both(&jdk, &["500"], Sink::Pipe, Kill::Never);
        let text = plain.text();
        assert!(
            text.contains("fd 1 pipe\n") && text.contains("fd 2 pipe\n"),
            "JDK {v}: {text}"
        );
        assert!(
            text.ends_with("out 499\nerr 499\nout last\nerr last\n"),
            "JDK {v}: {text}"
        );
        // Compared as bytes; on a difference, where it starts.
        let same = profiled.text();
        let at = text
            .bytes()
            .zip(same.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        assert!(
            same == text,
            "JDK {v}: outputs differ from byte {at}: {:?} vs {:?}",
            &text[at.saturating_sub(40)..(at + 40).min(text.len())],
            &same[at.saturating_sub(40)..(at + 40).min(same.len())]
        );
    }
}

#[test]
fn a_terminal_stays_a_terminal_and_its_output_is_byte_identical() {
    let jdk = jdk17();
    let (plain, profiled) = both(&jdk, &["500"], Sink::Terminal, Kill::Never);
    let text = plain.text();
    // The terminal turns each "\n" into "\r\n".
    for fd in 0..=2 {
        assert!(text.contains(&format!("fd {fd} terminal\r\n")), "{text}");
    }
    assert!(text.contains("console true\r\n"), "{text}");
    assert!(text.ends_with("out last\r\nerr last\r\n"), "{text}");
    assert!(profiled.text() == text, "{}", profiled.text());
}

/// Checks that `text`, cut anywhere, is what Chatter writes: its lines in order, the last
/// one perhaps unfinished.
fn a_prefix_of_what_chatter_writes(text: &str, what: &str) {
    let expected = expected_lines(1_000_000, "\n");
    let lines: Vec<&str> = text
        .split_inclusive('\n')
        .filter(|l| !l.starts_with("fd ") && !l.starts_with("console "))
        .collect();
    for (i, line) in lines.iter().enumerate() {
        let want = &expected[i];
        if i + 1 == lines.len() {
            assert!(want.starts_with(line), "{what}: line {i} {line:?}");
        } else {
            assert_eq!(line, want, "{what}: line {i}");
        }
    }
}

#[test]
fn a_program_killed_early_has_written_exactly_what_it_wrote() {
    let jdk = jdk17();
    // Killed 100 ms after the JVM started (while the agent may still be starting), and 100 ms
    // after its first line (while it writes).
    for kill in [
        Kill::AfterStart(Duration::from_millis(100)),
        Kill::AfterOutput(Duration::from_millis(100)),
    ] {
        let (plain, profiled) = both(&jdk, &["forever"], Sink::Pipe, kill);
        a_prefix_of_what_chatter_writes(&plain.text(), &format!("no agent, {kill:?}"));
        a_prefix_of_what_chatter_writes(&profiled.text(), &format!("heap=sites, {kill:?}"));
        if let Kill::AfterOutput(_) = kill {
            for c in [&plain, &profiled] {
                assert!(
                    c.text().starts_with("out first\n"),
                    "{kill:?}: {}",
                    c.text()
                );
            }
        }
    }
}
