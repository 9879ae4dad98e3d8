//! The profile is complete however the JVM ends, and the exit status is the JVM's own.

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use hprof_testkit::java::{kill, start_until_ready, wait_until_contains};

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

/// Starts ExitPaths in `mode` under the agent and waits for READY.
fn start_waiting(
    jdk: &crate::support::Jdk,
    mode: &str,
    dir: &std::path::Path,
) -> (std::process::Child, u32) {
    let mut command = java_command(jdk, dir, &[&agentpath("cpu=samples")], "ExitPaths", &[mode]);
    command.stdin(Stdio::piped()).stderr(Stdio::piped());
    start_until_ready(command)
}

#[test]
fn sigterm_and_sigint_leave_a_complete_file_and_the_usual_status() {
    for jdk in jdks() {
        for (signal, code) in [("-TERM", 143), ("-INT", 130)] {
            let dir = tempfile::tempdir().unwrap();
            let (child, pid) = start_waiting(&jdk, "wait", dir.path());
            std::thread::sleep(Duration::from_millis(400));
            kill(pid, signal);
            let run = finish(child);
            let what = format!("JDK {} {signal}", jdk.version);
            assert_eq!(run.code, Some(code), "{what}: {}", run.stderr);
            assert_complete(&read_text(&text_output(dir.path())), 1, &what);
        }
    }
}

#[test]
fn sigquit_dumps_mid_run_with_counts_per_interval() {
    for jdk in jdks() {
        let what = format!("JDK {} SIGQUIT", jdk.version);
        let dir = tempfile::tempdir().unwrap();
        let (mut child, pid) = start_waiting(&jdk, "dump-wait", dir.path());
        std::thread::sleep(Duration::from_millis(500));
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
        // The second section counts only what happened after the first dump: about 300 ms
        // of main plus the spinner, not the whole run again.
        assert!(p.cpu[1].total < p.cpu[0].total + 120, "{what}: {:?}", p.cpu);
        // (Some samples: the main thread computes for 300 ms; fewer than 30 on a loaded machine.)
        assert!(p.cpu[1].total >= 3, "{what}: {:?}", p.cpu);
        // Traces written for the first section are not written again for the second.
        assert_eq!(
            text.matches(&format!("TRACE {}:", p.cpu[0].rows[0].trace))
                .count(),
            1,
            "{what}"
        );
    }
}
