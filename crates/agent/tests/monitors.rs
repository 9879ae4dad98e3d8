//! monitor=y: WAIT/WAITED lines, MONITOR TIME with real contention in ms, MONITOR DUMP with
//! owners and waiters (java/src/LockContention.java).

use hprof_testkit::java::{kill, start_until_ready, wait_until_contains};
use std::io::Write;
use std::process::Stdio;

use crate::support::{
    TextProfile, agentpath, finish, java_command, jdks, profile, read_text, text_output,
};

#[test]
fn waits_and_contention_are_recorded() {
    for jdk in jdks() {
        let v = jdk.version;
        let (run, dir) = profile(&jdk, "monitor=y", "LockContention", &[]);
        assert_eq!(run.code, Some(0), "JDK {v}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("Dumping contended monitor usage ... done."),
            "{}",
            run.stderr
        );
        let text = read_text(&text_output(dir.path()));
        let p = TextProfile::parse(&text);
        let consumer = p.thread("consumer").expect("consumer thread");
        let waits: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("WAIT: MONITOR LLockContention$Mailbox;"))
            .collect();
        let waited: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("WAITED: MONITOR LLockContention$Mailbox;"))
            .collect();
        assert_eq!(waits.len(), 10, "JDK {v}: {waits:?}");
        assert_eq!(waited.len(), 10, "JDK {v}");
        assert!(
            waits.iter().all(|l| *l
                == format!("WAIT: MONITOR LLockContention$Mailbox;, timeout=0, thread {consumer}")),
            "{waits:?}"
        );
        assert!(
            waited
                .iter()
                .all(|l| l.ends_with(&format!(", thread {consumer}"))
                    && l.contains(", time_waited="))
        );
        // MONITOR TIME: 80 enters of the lock, each made while main held it for 5 ms more.
        let section: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("MONITOR TIME BEGIN"))
            .take_while(|l| *l != "MONITOR TIME END")
            .collect();
        let total: u64 = section[0]
            .split("total = ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!((320..=5000).contains(&total), "JDK {v}: {section:?}");
        assert_eq!(section[1], "rank   self  accum   count trace monitor");
        let first: Vec<&str> = section[2].split_whitespace().collect();
        assert_eq!(
            &first[5..],
            ["LockContention$Lock", "(Java)"],
            "JDK {v}: {section:?}"
        );
        let count: u64 = first[3].parse().unwrap();
        assert_eq!(count, 80, "JDK {v}: {section:?}");
        let trace = &p.traces[&first[4].parse().unwrap()];
        assert!(
            trace.frames[0].starts_with("LockContention.lambda$contend$0("),
            "{trace:?}"
        );
        assert!(text.contains("\nMONITOR DUMP BEGIN\n") && text.contains("\nMONITOR DUMP END\n"));
    }
}

#[test]
fn monitor_dump_names_the_owner_and_the_waiters() {
    for jdk in jdks() {
        // (Shown with the assertion that fails.)
        eprintln!("JDK {}", jdk.version);
        let dir = tempfile::tempdir().unwrap();
        let mut command = java_command(
            &jdk,
            dir.path(),
            &[&agentpath("monitor=y")],
            "LockContention",
            &["hold"],
        );
        command.stdin(Stdio::piped()).stderr(Stdio::piped());
        let (mut child, pid) = start_until_ready(command);
        kill(pid, "-QUIT");
        let path = text_output(dir.path());
        wait_until_contains(&path, "MONITOR DUMP END");
        let text = read_text(&path);
        child.stdin.take().unwrap().write_all(b"go\n").unwrap();
        let run = finish(child);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let p = TextProfile::parse(&text);
        let (holder, b1, b2) = (
            p.thread("holder").unwrap(),
            p.thread("blocked-1").unwrap(),
            p.thread("blocked-2").unwrap(),
        );
        let dump: Vec<&str> = text
            .lines()
            .skip_while(|l| *l != "MONITOR DUMP BEGIN")
            .take_while(|l| *l != "MONITOR DUMP END")
            .collect();
        let status = |serial: u32| {
            dump.iter()
                .find(|l| l.starts_with(&format!("    THREAD {serial}, ")))
                .map(|l| l.rsplit("status: ").next().unwrap().to_string())
        };
        assert_eq!(status(b1).as_deref(), Some("MW"), "{dump:#?}");
        assert_eq!(status(b2).as_deref(), Some("MW"));
        assert_eq!(status(holder).as_deref(), Some("CW"));
        // JDK 21 loads java.lang.VirtualThread at start-up, and asking it for owned monitors
        // with that class loaded could crash it: no MONITOR lines there, and one warning
        // (docs/compatibility.md).
        if jdk.version == 21 {
            assert!(
                !dump.iter().any(|l| l.starts_with("    MONITOR ")),
                "{dump:#?}"
            );
            assert_eq!(
                run.stderr
                    .matches("HPROF WARNING: MONITOR DUMP lists no owned monitors")
                    .count(),
                1,
                "{}",
                run.stderr
            );
            continue;
        }
        let at = dump
            .iter()
            .position(|l| *l == "    MONITOR LLockContention$Lock;")
            .unwrap_or_else(|| panic!("the held lock: {dump:#?}"));
        assert_eq!(
            dump[at + 1],
            format!("\towner: thread {holder}, entry count: 1")
        );
        let waiting = dump[at + 2].strip_prefix("\twaiting to enter:").unwrap();
        let mut serials: Vec<u32> = waiting
            .split(',')
            .map(|s| s.trim().trim_start_matches("thread ").parse().unwrap())
            .collect();
        serials.sort();
        let mut expected = vec![b1, b2];
        expected.sort();
        assert_eq!(serials, expected);
        assert_eq!(dump[at + 3], "\twaiting to be notified:");
        // Every THREAD line's trace was written before the dump.
        for l in dump.iter().filter(|l| l.starts_with("    THREAD ")) {
            let trace: u32 = l
                .split("trace ")
                .nth(1)
                .unwrap()
                .split(',')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(trace == 300000 || p.traces.contains_key(&trace), "{l}");
        }
    }
}
