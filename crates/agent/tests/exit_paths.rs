//! The profile is complete however the JVM ends, and the exit status is the JVM's own.

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use hprof_testkit::java::{kill, start_with_lines, wait_until_contains};

use crate::support::{
    TextProfile, agentpath, finish, java_command, jdks, profile, read_text, text_output,
};

fn assert_complete(text: &str, sections: usize, what: &str) {
    assert!(
        text.ends_with("CPU SAMPLES END\n"),
        "{what}: output does not end with a section:\n{}",
        &text[text.len().saturating_sub(300)..]
    );
    let p = TextProfile::parse(text);
    assert_eq!(p.cpu.len(), sections, "{what}");
    assert!(p.cpu.iter().all(|s| s.total > 0), "{what}: {:?}", p.cpu);
    // Each section's total is the sum of its rows (no row left out, none counted twice).
    for s in &p.cpu {
        assert_eq!(
            s.rows.iter().map(|r| r.count).sum::<u64>(),
            s.total,
            "{what}"
        );
    }
    assert!(
        p.cpu[0].rows.iter().any(|r| r.method == "ExitPaths.spin"),
        "{what}: {:?}",
        p.cpu
    );
}

#[test]
fn normal_return_exit_from_a_thread_and_uncaught_exception() {
    for jdk in jdks() {
        for (mode, code) in [("normal", 0), ("exit-from-thread", 3), ("uncaught", 1)] {
            let (run, dir) = profile(&jdk, "cpu=samples", "ExitPaths", &[mode]);
            assert_eq!(
                run.code,
                Some(code),
                "JDK {} {mode}: {}",
                jdk.version,
                run.stderr
            );
            assert_complete(
                &read_text(&text_output(dir.path())),
                1,
                &format!("JDK {} {mode}", jdk.version),
            );
        }
    }
}

/// Starts ExitPaths in `mode` under the agent (cpu=samples) and waits until it has warmed up:
/// its `WARM <calls>` line, printed once each of its busy threads has had 100 ms of CPU (so the
/// sampler, one sample per 10 ms of a thread's CPU, has sampled it). Returns the child, its pid,
/// and the calls of `spin` it made warming up.
fn start_warm(
    jdk: &crate::support::Jdk,
    options: &str,
    mode: &str,
    dir: &std::path::Path,
) -> (std::process::Child, u32, u64) {
    let mut command = java_command(jdk, dir, &[&agentpath(options)], "ExitPaths", &[mode]);
    command.stdin(Stdio::piped()).stderr(Stdio::piped());
    let (child, pid, lines) = start_with_lines(command);
    let calls = lines
        .expect("WARM ", Duration::from_secs(120))
        .parse()
        .unwrap();
    (child, pid, calls)
}

#[test]
fn sigterm_and_sigint_leave_a_complete_file_and_the_usual_status() {
    for jdk in jdks() {
        for (signal, code) in [("-TERM", 143), ("-INT", 130)] {
            let dir = tempfile::tempdir().unwrap();
            let (child, pid, _) = start_warm(&jdk, "cpu=samples", "wait", dir.path());
            kill(pid, signal);
            let run = finish(child);
            let what = format!("JDK {} {signal}", jdk.version);
            assert_eq!(run.code, Some(code), "{what}: {}", run.stderr);
            assert_complete(&read_text(&text_output(dir.path())), 1, &what);
        }
    }
}

/// Samples of `section` whose trace has a frame of `method` (`Class.method`).
fn samples_in(p: &TextProfile, section: usize, method: &str) -> u64 {
    p.cpu[section]
        .rows
        .iter()
        .filter(|r| {
            p.traces[&r.trace]
                .frames
                .iter()
                .any(|f| f.starts_with(&format!("{method}(")))
        })
        .map(|r| r.count)
        .sum()
}

#[test]
fn sigquit_dumps_mid_run_with_counts_per_interval() {
    for jdk in jdks() {
        let what = format!("JDK {} SIGQUIT", jdk.version);
        let dir = tempfile::tempdir().unwrap();
        // Two threads warm up in ExitPaths.before, then wait without using CPU while the
        // SIGQUIT dump is written; after it each spends 300 ms of CPU in ExitPaths.after.
        let (mut child, pid, _) = start_warm(&jdk, "cpu=samples", "dump-wait", dir.path());
        kill(pid, "-QUIT");
        // The dump is written when the JVM handles the signal; wait until it is in the file.
        let path = text_output(dir.path());
        wait_until_contains(&path, "CPU SAMPLES END");
        let first = TextProfile::parse(&read_text(&path));
        assert_eq!(first.cpu.len(), 1, "{what}: no dump after SIGQUIT");
        child.stdin.take().unwrap().write_all(b"go\n").unwrap();
        let run = finish(child);
        assert_eq!(run.code, Some(0), "{what}: {}", run.stderr);
        let text = read_text(&path);
        assert_complete(&text, 2, &what);
        let p = TextProfile::parse(&text);
        // Each section counts only its own interval: the warm-up is in the first and never in
        // the second (a cumulative second section would repeat it), the work after the dump
        // only in the second. (Each thread's 100 ms of warm-up is about 10 samples, its 300 ms
        // after the dump about 30, whatever the load: the sampler follows each thread's CPU.)
        assert!(
            samples_in(&p, 0, "ExitPaths.before") > 0,
            "{what}: {:?}",
            p.cpu
        );
        assert_eq!(
            samples_in(&p, 0, "ExitPaths.after"),
            0,
            "{what}: {:?}",
            p.cpu
        );
        assert_eq!(
            samples_in(&p, 1, "ExitPaths.before"),
            0,
            "{what}: {:?}",
            p.cpu
        );
        assert!(
            samples_in(&p, 1, "ExitPaths.after") > 0,
            "{what}: {:?}",
            p.cpu
        );
        // Traces written for the first section are not written again for the second.
        for row in &p.cpu[0].rows {
            assert_eq!(
                text.matches(&format!("TRACE {}:", row.trace)).count(),
                1,
                "{what}"
            );
        }
    }
}

#[test]
fn doe_n_leaves_out_the_dump_at_exit_but_not_those_asked_for() {
    for jdk in jdks() {
        let what = format!("JDK {} doe=n", jdk.version);
        // A normal end: no dump, only the file's header.
        let (run, dir) = profile(&jdk, "cpu=samples,doe=n", "ExitPaths", &["normal"]);
        assert_eq!(run.code, Some(0), "{what}: {}", run.stderr);
        let text = read_text(&text_output(dir.path()));
        let p = TextProfile::parse(&text);
        assert!(p.cpu.is_empty(), "{what}: {:?}", p.cpu);
        assert!(!run.stderr.contains("Dumping"), "{what}: {}", run.stderr);
        // A SIGQUIT still dumps, and the exit after it adds nothing.
        let dir = tempfile::tempdir().unwrap();
        let (mut child, pid, _) = start_warm(&jdk, "cpu=samples,doe=n", "dump-wait", dir.path());
        kill(pid, "-QUIT");
        let path = text_output(dir.path());
        wait_until_contains(&path, "CPU SAMPLES END");
        child.stdin.take().unwrap().write_all(b"go\n").unwrap();
        let run = finish(child);
        assert_eq!(run.code, Some(0), "{what}: {}", run.stderr);
        let text = read_text(&path);
        let p = TextProfile::parse(&text);
        assert_eq!(p.cpu.len(), 1, "{what}");
        assert!(p.cpu[0].total > 0, "{what}: {:?}", p.cpu);
        // After the SIGQUIT's section, only threads starting and ending (DestroyJavaVM's).
        let after = &text[text.find("CPU SAMPLES END\n").unwrap() + 16..];
        assert!(
            after
                .lines()
                .all(|l| l.starts_with("THREAD END (id = ") || l.starts_with("THREAD START (")),
            "{what}: {after}"
        );
    }
}
