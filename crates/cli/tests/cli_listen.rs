//! `hprof listen` with the agent's `net=` over loopback, on every JDK: each command shows its
//! effect in the received stream, and the program ends (or runs on) as it should.
//!
//! Nothing here waits a fixed time: the listener's scripts pause at `wait` until the test
//! writes a line to its standard input, which the test does when the program says it is ready
//! (a line on its standard output) or when the stream shows the previous command's answer.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use hprof_format::{Record, Records, Tag};
use hprof_testkit::java::{JavaRun, Jdk, Lines, finish, java_command, jdks, libhprof};

use crate::support::{hprof, temp_dir};

/// A running `hprof listen`: its process, port and output file.
struct Listener {
    child: Child,
    port: u16,
    output: PathBuf,
}

impl Listener {
    /// Starts `hprof listen` with the script `commands`.
    fn start(dir: &Path, commands: &[&str]) -> Listener {
        let output = dir.join("net.out");
        let mut args = vec![
            "listen".to_string(),
            "--port".into(),
            "0".into(),
            "-o".into(),
            output.display().to_string(),
        ];
        for c in commands {
            args.push("--command".into());
            args.push(c.to_string());
        }
        let mut child = hprof()
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stderr.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let address = line
            .split("listening on ")
            .nth(1)
            .unwrap_or_else(|| panic!("hprof listen said {line:?}"))
            .split(';')
            .next()
            .unwrap();
        let port = address.rsplit(':').next().unwrap().parse().unwrap();
        Listener {
            child,
            port,
            output,
        }
    }

    /// Lets the script go on past its next `wait`.
    fn go_on(&mut self) {
        let stdin = self.child.stdin.as_mut().expect("the listener's stdin");
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Closes its standard input (every later `wait` goes on at once) and waits (at most two
    /// minutes) for it to end; its output.
    fn finish(mut self) -> std::process::Output {
        drop(self.child.stdin.take());
        finish_within(self.child, "hprof listen")
    }

    /// The agent option that connects to it.
    fn agent(&self, options: &str) -> String {
        format!(
            "-agentpath:{}={options},net=127.0.0.1:{}",
            libhprof().display(),
            self.port
        )
    }
}

/// Waits at most two minutes for `child` to end (killing it and failing the test after
/// that); its output.
fn finish_within(mut child: Child, what: &str) -> std::process::Output {
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what} did not end within two minutes");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A Java program under the agent, with its standard input to drive it and its output lines.
struct Program {
    child: Child,
    lines: Lines,
}

impl Program {
    /// Starts `class args` on `jdk` with `agent` and waits for its `READY` line.
    fn start(jdk: &Jdk, dir: &Path, agent: &str, class: &str, args: &[&str]) -> Program {
        let mut command = java_command(jdk, dir, &[agent], class, args);
        command.stdin(Stdio::piped()).stderr(Stdio::piped());
        let (child, _, lines) = hprof_testkit::java::start_with_lines(command);
        Program { child, lines }
    }

    /// Writes `line` to its standard input.
    fn say(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().expect("the program's stdin");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Waits for its line starting with `prefix` (at most two minutes).
    fn expect(&self, prefix: &str) {
        self.lines.expect(prefix, Duration::from_secs(120));
    }

    /// Closes its standard input and waits for it to end (at most two minutes).
    fn finish(mut self) -> JavaRun {
        drop(self.child.stdin.take());
        finish(self.child)
    }
}

/// What a binary stream holds: its record tags, the length of each trace, the CPU SAMPLES
/// (total and (count, trace) pairs) and the flags of each ALLOC SITES.
struct Stream {
    tags: Vec<Tag>,
    traces: HashMap<u32, usize>,
    samples: Vec<(u32, Vec<(u32, u32)>)>,
    sites: Vec<u16>,
}

/// The whole records received so far in `path` (a record still arriving is left out).
fn records(path: &Path) -> Stream {
    let bytes = std::fs::read(path).unwrap_or_default();
    let mut stream = Stream {
        tags: Vec::new(),
        traces: HashMap::new(),
        samples: Vec::new(),
        sites: Vec::new(),
    };
    let Ok((_, mut records)) = Records::new(&bytes) else {
        return stream;
    };
    while let Ok(Some((_, record))) = records.next() {
        stream.tags.push(record.tag());
        match record {
            Record::StackTrace { serial, frames, .. } => {
                stream.traces.insert(serial, frames.len());
            }
            Record::CpuSamples { total, traces } => {
                stream.samples.push((total, traces.iter().collect()))
            }
            Record::AllocSites(s) => stream.sites.push(s.flags),
            _ => {}
        }
    }
    stream
}

/// The stream in `path` once it is whole (the program has ended): every record parses.
fn whole_records(path: &Path) -> Stream {
    let bytes = std::fs::read(path).unwrap();
    let (_, mut records) = Records::new(&bytes).unwrap();
    while records.next().unwrap().is_some() {}
    self::records(path)
}

/// Waits (at most two minutes) until the stream in `path` holds `n` records tagged `tag`.
fn wait_for_records(path: &Path, tag: Tag, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while records(path).tags.iter().filter(|t| **t == tag).count() < n {
        assert!(
            Instant::now() < deadline,
            "{} never held {n} {tag:?} records",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn cpu_samples_and_depth_commands() {
    for jdk in jdks() {
        let v = jdk.version;
        let dir = temp_dir();
        let mut listener = Listener::start(dir.path(), &["wait", "cpu", "depth 1", "cpu", "wait"]);
        // (native=n: `depth` counts Java frames, and the native and kernel frames above
        // them would come in addition.)
        let agent = listener.agent("cpu=samples,format=b,depth=6,native=n");
        // ExitPaths dump-wait: two threads warm up (100 ms of CPU each), print WARM and wait,
        // using no CPU, for a line on stdin; then each spends 300 ms of CPU and main returns.
        let mut program = Program::start(&jdk, dir.path(), &agent, "ExitPaths", &["dump-wait"]);
        program.expect("WARM ");
        // The warm-up's samples, listed; depth 1 from now on (the second listing's answer
        // says the agent has taken the command before the program goes on).
        listener.go_on();
        wait_for_records(&listener.output, Tag::CpuSamples, 2);
        program.say("go");
        let run = program.finish();
        assert_eq!(run.code, Some(0), "JDK {v}: {}", run.stderr);
        let out = listener.finish();
        assert!(
            out.status.success(),
            "JDK {v}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).starts_with("received "));
        let Stream {
            traces, samples, ..
        } = whole_records(&dir.path().join("net.out"));
        // The two listings the script asked for, then the one at exit.
        assert_eq!(samples.len(), 3, "JDK {v}: {samples:?}");
        // Each thread's 100 ms of warm-up is about 10 samples at 10 ms; at least half of the
        // 20 are there, taken at depth 6.
        assert!(samples[0].0 >= 10, "JDK {v}: {samples:?}");
        assert!(
            samples[0].1.iter().any(|&(_, t)| traces[&t] > 1),
            "JDK {v}: {samples:?}"
        );
        // After `depth 1`, every sample is one frame deep.
        assert!(samples[2].0 >= 10, "JDK {v}: {samples:?}");
        assert!(
            samples[2].1.iter().all(|&(_, t)| traces[&t] == 1),
            "JDK {v}: {samples:?} {traces:?}"
        );
    }
}

#[test]
fn sites_summary_and_traces_commands() {
    for jdk in jdks() {
        let v = jdk.version;
        let dir = temp_dir();
        let mut listener = Listener::start(
            dir.path(),
            &["wait", "sites --by-alloc", "summary", "traces", "wait"],
        );
        let agent = listener.agent("heap=sites,format=b");
        // AllocSites wait: prints READY once its allocations are made, and returns after a
        // line on stdin.
        let mut program = Program::start(&jdk, dir.path(), &agent, "AllocSites", &["wait"]);
        listener.go_on();
        // The command's ALLOC SITES and HEAP SUMMARY (one with the sites, one for `summary`).
        wait_for_records(&listener.output, Tag::HeapSummary, 2);
        program.say("go");
        let run = program.finish();
        assert_eq!(run.code, Some(0), "JDK {v}: {}", run.stderr);
        assert!(listener.finish().status.success(), "JDK {v}");
        let Stream { tags, sites, .. } = whole_records(&dir.path().join("net.out"));
        // The command's ALLOC SITES (by allocation, after a GC), then the one at exit.
        assert_eq!(sites, [0x6, 0x4], "JDK {v}");
        // HEAP SUMMARY: one for the command, one with each ALLOC SITES.
        assert_eq!(
            tags.iter().filter(|t| **t == Tag::HeapSummary).count(),
            3,
            "JDK {v}"
        );
    }
}

#[test]
fn exit_vm_ends_the_program_with_status_0_and_a_complete_text_stream() {
    for jdk in jdks() {
        let v = jdk.version;
        let dir = temp_dir();
        let mut listener = Listener::start(dir.path(), &["wait", "exit-vm"]);
        let agent = listener.agent("cpu=samples");
        // ExitPaths wait: computes until it is told to end.
        let program = Program::start(&jdk, dir.path(), &agent, "ExitPaths", &["wait"]);
        program.expect("WARM ");
        listener.go_on();
        let run = program.finish();
        assert_eq!(run.code, Some(0), "JDK {v}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("HPROF: received exit event, exiting ..."),
            "JDK {v}: {}",
            run.stderr
        );
        assert!(listener.finish().status.success(), "JDK {v}");
        let text = std::fs::read_to_string(dir.path().join("net.out")).unwrap();
        assert!(text.starts_with("JAVA PROFILE 1.0.1, created "), "JDK {v}");
        assert!(
            text.ends_with("CPU SAMPLES END\n"),
            "JDK {v}: {}",
            &text[text.len().saturating_sub(200)..]
        );
        assert!(text.contains(" ExitPaths.spin\n"), "JDK {v}: {text}");
    }
}

#[test]
fn the_program_runs_on_when_the_front_end_quits() {
    for jdk in jdks() {
        let v = jdk.version;
        let dir = temp_dir();
        let mut listener = Listener::start(dir.path(), &["wait", "quit"]);
        let agent = listener.agent("cpu=samples");
        let mut program = Program::start(&jdk, dir.path(), &agent, "ExitPaths", &["dump-wait"]);
        program.expect("WARM ");
        listener.go_on();
        // The front-end has gone; the program goes on to its own end.
        assert!(listener.finish().status.success(), "JDK {v}");
        program.say("go");
        let run = program.finish();
        assert_eq!(run.code, Some(0), "JDK {v}: {}", run.stderr);
        let errors: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.starts_with("HPROF ERROR"))
            .collect();
        assert!(errors.len() <= 1, "JDK {v}: {}", run.stderr);
    }
}

#[test]
fn dump_heap_command_yields_a_heap_dump_visualvm_opens() {
    for jdk in jdks() {
        let v = jdk.version;
        let dir = temp_dir();
        let mut listener = Listener::start(dir.path(), &["wait", "dump", "exit-vm"]);
        let agent = listener.agent("cpu=samples,format=b");
        // HeapPopulation prints READY once its objects are made, then waits while its
        // standard input stays open; exit-vm ends it.
        let program = Program::start(&jdk, dir.path(), &agent, "HeapPopulation", &[]);
        listener.go_on();
        let run = finish_within(program.child, "HeapPopulation");
        assert_eq!(run.status.code(), Some(0), "JDK {v}");
        assert!(listener.finish().status.success(), "JDK {v}");
        let output = dir.path().join("net.out");
        let Stream { tags, .. } = whole_records(&output);
        assert!(
            tags.contains(&Tag::HeapDumpSegment) && tags.contains(&Tag::HeapDumpEnd),
            "JDK {v}"
        );
        let summary = crate::support::summary_json(&output);
        assert_eq!(
            crate::support::class_row(&summary, "HeapPopulation$Node").map(|r| r.0),
            Some(12345),
            "JDK {v}"
        );
        let report =
            hprof_testkit::java::visualvm(&output).expect("VisualVM opens the received dump");
        assert_eq!(
            report.per_class.get("HeapPopulation$Node"),
            Some(&12345),
            "JDK {v}"
        );
    }
}

#[test]
fn sampling_and_clear_commands() {
    for jdk in jdks() {
        let v = jdk.version;
        let dir = temp_dir();
        let mut listener = Listener::start(
            dir.path(),
            &[
                "wait",
                "sampling off",
                "clear cpu",
                "cpu",
                "wait",
                "sampling on",
                "cpu",
                "wait",
            ],
        );
        let agent = listener.agent("cpu=samples,format=b");
        // LateCalls: `spin MS` computes until main has had MS ms more of CPU.
        let mut program = Program::start(&jdk, dir.path(), &agent, "LateCalls", &[]);
        program.say("spin 200");
        program.expect("spun ");
        // Sampling off and the counts cleared: the listing is empty.
        listener.go_on();
        wait_for_records(&listener.output, Tag::CpuSamples, 1);
        // Computing while sampling is off adds nothing.
        program.say("spin 200");
        program.expect("spun ");
        listener.go_on();
        wait_for_records(&listener.output, Tag::CpuSamples, 2);
        // Back on: the listing at exit has samples again.
        program.say("spin 200");
        program.expect("spun ");
        program.say("exit");
        let run = program.finish();
        assert_eq!(run.code, Some(3), "JDK {v}: {}", run.stderr);
        assert!(listener.finish().status.success(), "JDK {v}");
        let Stream { samples, .. } = whole_records(&dir.path().join("net.out"));
        assert_eq!(samples.len(), 3, "JDK {v}: {samples:?}");
        assert_eq!(samples[0].0, 0, "JDK {v}: {samples:?}");
        // Main's CPU timer runs on while sampling is off: back on, it may fire once for the
        // time it had counted, as main goes back to reading its input (one sample at most).
        assert!(samples[1].0 <= 1, "JDK {v}: {samples:?}");
        // 200 ms of main's CPU: about 20 samples at 10 ms; at least half.
        assert!(samples[2].0 >= 10, "JDK {v}: {samples:?}");
    }
}
