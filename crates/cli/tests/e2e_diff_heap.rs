//! `hprof diff` on heap dumps of java/src/LeakHold.java, a static map that grows on command:
//! the chain from the static field first, its growth what the program added (within 1 %), on
//! every JDK, jcmd's dumps gzip-compressed or not and the agent's; text, JSON, the HTML page in
//! headless Chromium, the gate's exit statuses; a dump against itself; a dump against a profile.

use std::io::{BufRead, BufReader, Lines, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use hprof_testkit::java::{Jdk, chromium_dom, java_command, jdk17, jdks, libhprof};

use crate::support::{hprof_ok, run_hprof, temp_dir, write_file};

/// LeakHold, driven through its standard input, killed after two minutes or when dropped.
struct Leaker {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    pid: u32,
    entries: u64,
    /// Dropping it stops the watchdog.
    _stop: mpsc::Sender<()>,
}

impl Leaker {
    fn start(jdk: &Jdk, dir: &Path, options: &[&str]) -> Leaker {
        let mut all = vec!["-Xmx512m", "-XX:+UseSerialGC"];
        all.extend_from_slice(options);
        let mut child = java_command(jdk, dir, &all, "LeakHold", &[])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("java starts");
        let (stop, stopped) = mpsc::channel::<()>();
        let pid = child.id();
        std::thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) =
                stopped.recv_timeout(Duration::from_secs(120))
            {
                let _ = std::process::Command::new("kill")
                    .args(["-9", &pid.to_string()])
                    .status();
            }
        });
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = lines.next().expect("READY").unwrap();
        assert!(ready.starts_with("READY "), "{ready}");
        Leaker {
            stdin: child.stdin.take(),
            child,
            lines,
            pid,
            entries: 0,
            _stop: stop,
        }
    }

    /// Adds `n` entries of `size` bytes and waits until the program says it did.
    fn grow(&mut self, n: u64, size: u64) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "grow {n} {size}").unwrap();
        stdin.flush().unwrap();
        let line = self
            .lines
            .next()
            .expect("GREW (the program ended or was killed)")
            .unwrap();
        self.entries += n;
        assert_eq!(line, format!("GREW {}", self.entries));
    }

    fn jcmd_dump(&self, jdk: &Jdk, file: &Path, gz: bool) {
        let mut command = std::process::Command::new(jdk.bin("jcmd"));
        command.arg(self.pid.to_string()).arg("GC.heap_dump");
        if gz {
            command.arg("-gz=1");
        }
        let out = command.arg(file).output().unwrap();
        assert!(
            out.status.success(),
            "jcmd: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }

    /// Closes standard input (the program ends) and waits for the JVM to exit.
    fn end(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}");
    }
}

impl Drop for Leaker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// HashMap's table length once it holds `entries` (it doubles past three quarters full).
fn table_length(entries: u64) -> u64 {
    let mut length = 16;
    while entries > length * 3 / 4 {
        length *= 2;
    }
    length
}

/// The bytes LeakHold adds going from `before` to `after` entries of `size`-byte arrays, as
/// HotSpot lays them out (compressed oops): per entry a byte[size], a HashMap$Node (12-byte
/// header, hash, key, value, next: 32) and an Integer (16), and the table's growth.
fn added(before: u64, after: u64, size: u64) -> u64 {
    let align = |n: u64| n.div_ceil(8) * 8;
    let entry = align(16 + size) + 32 + 16;
    let table = |n: u64| align(16 + 4 * table_length(n));
    (after - before) * entry + table(after) - table(before)
}

const SIZE: u64 = 10_000;
const CHAIN: &str = "static LeakHold.CACHE → java.util.HashMap";

fn diff_json(old: &Path, new: &Path) -> serde_json::Value {
    let text = hprof_ok(&[
        "diff",
        "--json",
        old.to_str().unwrap(),
        new.to_str().unwrap(),
    ]);
    serde_json::from_str(&text).expect("diff --json prints JSON")
}

/// Checks that the first chain is the map's, grown by what LeakHold added.
fn check_growth(doc: &serde_json::Value, expected: u64, context: &str) {
    let first = &doc["chains"][0];
    assert_eq!(first["chain"], CHAIN, "{context}: {doc:#}");
    let growth = first["retained"]["change"].as_i64().unwrap();
    let error = (growth - expected as i64).unsigned_abs() as f64 / expected as f64;
    assert!(
        error <= 0.01,
        "{context}: grew {growth}, the program added {expected}"
    );
    // Where it grows: down to the arrays, one more per entry.
    let end = &first["accumulation"];
    assert!(
        end["chain"]
            .as_str()
            .unwrap()
            .ends_with("java.util.HashMap$Node.value → byte[]"),
        "{context}: {end}"
    );
}

/// Two dumps of LeakHold on `jdk`, 1,000 then 3,000 entries: OLD from jcmd (gzip-compressed
/// from JDK 17 on), NEW from jcmd.
fn dumps(jdk: &Jdk, dir: &Path) -> (PathBuf, PathBuf) {
    let gz = jdk.version >= 17;
    let old = dir.join(if gz { "old.hprof.gz" } else { "old.hprof" });
    let new = dir.join("new.hprof");
    let mut program = Leaker::start(jdk, dir, &[]);
    program.grow(1000, SIZE);
    program.jcmd_dump(jdk, &old, gz);
    program.grow(2000, SIZE);
    program.jcmd_dump(jdk, &new, false);
    program.end();
    (old, new)
}

#[test]
fn a_leaking_static_map_is_the_first_chain_with_its_growth_on_every_jdk() {
    for jdk in jdks() {
        let dir = temp_dir();
        let (old, new) = dumps(&jdk, dir.path());
        let doc = diff_json(&old, &new);
        check_growth(
            &doc,
            added(1000, 3000, SIZE),
            &format!("JDK {}", jdk.version),
        );
        // The arrays the program added are those where the chain grows; the heap's byte[]
        // count as a whole also moves with the JVM's own (one more in a run on JDK 17).
        let end = &doc["chains"][0]["accumulation"];
        assert_eq!(end["objects"]["change"], 2000, "JDK {}: {end}", jdk.version);
        if jdk.version != 17 {
            continue;
        }
        let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
        // Text: the chain is the first row.
        let text = hprof_ok(&["diff", old, new]);
        let at = text.find("Retained memory by reference chain").unwrap();
        let row = text[at..].lines().nth(2).unwrap();
        assert!(row.ends_with(CHAIN), "{text}");
        assert!(
            text[at..].lines().nth(3).unwrap().contains("grows in: …"),
            "{text}"
        );
        // The gate: 20 MB grew; 10 MB and 50 % of OLD's heap (about 5 MB) are passed, 30 MB
        // is not.
        for (limit, status) in [("10MB", 1), ("30MB", 0), ("50%", 1), ("500%", 0)] {
            let out = run_hprof(&["diff", old, new, "--fail-above", limit]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(status), "{limit}: {err}");
            if status == 1 {
                assert!(
                    err.contains(&format!("retained size of {CHAIN} grew +")),
                    "{err}"
                );
            }
        }
        // The page, in a browser: the chain first in its table.
        let html = dir.path().join("diff.html");
        hprof_ok(&["diff", old, new, "--html", html.to_str().unwrap()]);
        let (dom, _) = chromium_dom(&html);
        let table = dom.split("id=\"chains\"").nth(1).unwrap();
        let first = table.split("<tr>").nth(2).unwrap();
        assert!(
            first.contains(CHAIN) && first.contains("grows in"),
            "{first}"
        );
        assert!(dom.contains("id=\"tree\"") && dom.contains("<details>"));
    }
}

#[test]
fn the_agents_dump_against_jcmds_and_a_dump_against_itself() {
    let jdk = jdk17();
    let dir = temp_dir();
    let ours = dir.path().join("java.hprof");
    let old = dir.path().join("jcmd.hprof.gz");
    let agent = format!(
        "-agentpath:{}=heap=dump,format=b,file={}",
        libhprof().display(),
        ours.display()
    );
    let mut program = Leaker::start(&jdk, dir.path(), &[&agent]);
    program.grow(500, SIZE);
    program.jcmd_dump(&jdk, &old, true);
    program.grow(1500, SIZE);
    // The agent dumps the heap as the JVM exits.
    program.end();
    let doc = diff_json(&old, &ours);
    check_growth(&doc, added(500, 2000, SIZE), "jcmd's against the agent's");

    // A dump against itself: no change, and the strictest gate passes.
    let same = diff_json(&ours, &ours);
    assert!(same["chains"].as_array().unwrap().is_empty(), "{same:#}");
    assert!(same["classes"].as_array().unwrap().is_empty(), "{same:#}");
    assert_eq!(same["change"]["reachable_bytes"], 0);
    let ours_path = ours.to_str().unwrap();
    let out = run_hprof(&["diff", ours_path, ours_path, "--fail-above", "0"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("  no change").count(), 2, "{text}");
    // Options of profiles are refused for heap dumps.
    let out = run_hprof(&["diff", ours_path, ours_path, "--stacks"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("are for profiles"));

    // A heap dump against a profile: a clear error, status 2. jcmd's dump holds no profile.
    let profile = write_file(
        dir.path(),
        "cpu.txt",
        b"JAVA PROFILE 1.0.1, created Tue Nov 24 14:00:00 2026\n\nTRACE 300001:\n\tA.hot(A.java:1)\n\
CPU SAMPLES BEGIN (total = 1) Tue Nov 24 14:00:01 2026\nrank   self  accum   count trace method\n\
   1 100.00% 100.00%       1 300001 A.hot\nCPU SAMPLES END\n",
    );
    let out = run_hprof(&["diff", profile.to_str().unwrap(), old.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is a heap dump, the other file is a profile"),
        "{err}"
    );
}
