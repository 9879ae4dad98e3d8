//! `hprof listen` with the agent's `net=` over loopback: each command shows its effect in the
//! received stream, and the program ends (or runs on) as it should.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use hprof_format::{Record, Records};
use hprof_testkit::java::{JavaRun, finish, java_command, jdk17, libhprof};

use crate::support::{hprof, temp_dir};

/// Starts `hprof listen` with `commands`; returns it, the port and the output path.
fn listen(dir: &Path, commands: &[&str]) -> (Child, u16, PathBuf) {
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
        .stdin(Stdio::null())
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
        .unwrap()
        .split(';')
        .next()
        .unwrap();
    let port = address.rsplit(':').next().unwrap().parse().unwrap();
    (child, port, output)
}

fn agent(options: &str, port: u16) -> String {
    format!(
        "-agentpath:{}={options},net=127.0.0.1:{port}",
        libhprof().display()
    )
}

fn run_java(dir: &Path, options: &str, port: u16, class: &str, args: &[&str]) -> JavaRun {
    let child = java_command(&jdk17(), dir, &[&agent(options, port)], class, args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    finish(child)
}

/// What a binary stream holds: its record tags, the length of each trace, the CPU SAMPLES
/// (total and (count, trace) pairs) and the flags of each ALLOC SITES.
struct Stream {
    tags: Vec<hprof_format::Tag>,
    traces: HashMap<u32, usize>,
    samples: Vec<(u32, Vec<(u32, u32)>)>,
    sites: Vec<u16>,
}

fn records(path: &Path) -> Stream {
    let bytes = std::fs::read(path).unwrap();
    let (_, mut records) = Records::new(&bytes).unwrap();
    let (mut tags, mut traces, mut samples, mut sites) =
        (Vec::new(), HashMap::new(), Vec::new(), Vec::new());
    while let Some((_, record)) = records.next().unwrap() {
        tags.push(record.tag());
        match record {
            Record::StackTrace { serial, frames, .. } => {
                traces.insert(serial, frames.len());
            }
            Record::CpuSamples {
                total,
                traces: list,
            } => samples.push((total, list.iter().collect())),
            Record::AllocSites(s) => sites.push(s.flags),
            _ => {}
        }
    }
    Stream {
        tags,
        traces,
        samples,
        sites,
    }
}

#[test]
fn cpu_samples_and_depth_commands() {
    let dir = temp_dir();
    let (listener, port, output) =
        listen(dir.path(), &["sleep 600", "cpu", "depth 1", "sleep 300"]);
    let run = run_java(
        dir.path(),
        "cpu=samples,format=b,depth=6",
        port,
        "CpuHot",
        &["1500"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out = listener.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("received "));
    let Stream {
        traces, samples, ..
    } = records(&output);
    // One CPU SAMPLES for the command, one at exit.
    assert_eq!(samples.len(), 2, "{samples:?}");
    assert!(samples[0].0 > 10 && samples[1].0 > 10, "{samples:?}");
    // After `depth 1`, the traces sampled are one frame deep (a tick between the `cpu` and
    // `depth` commands may still take one deeper sample).
    assert!(
        samples[0].1.iter().any(|&(_, t)| traces[&t] > 1),
        "{samples:?}"
    );
    let (shallow, total): (u32, u32) = samples[1].1.iter().fold((0, 0), |(s, t), &(n, trace)| {
        (s + if traces[&trace] == 1 { n } else { 0 }, t + n)
    });
    assert!(shallow * 10 >= total * 9, "{samples:?} {traces:?}");
    assert_eq!(traces[&samples[1].1[0].1], 1, "{samples:?}");
}

#[test]
fn sites_summary_and_traces_commands() {
    let dir = temp_dir();
    let (listener, port, output) = listen(
        dir.path(),
        &[
            "sleep 1500",
            "sites --by-alloc",
            "summary",
            "traces",
            "sleep 200",
        ],
    );
    let mut java = java_command(
        &jdk17(),
        dir.path(),
        &[&agent("heap=sites,format=b", port)],
        "AllocSites",
        &["wait"],
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut line = String::new();
    BufReader::new(java.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("READY"), "{line}");
    let mut stdin = java.stdin.take().unwrap();
    let out = listener.wait_with_output_after(|| {
        stdin.write_all(b"go\n").unwrap();
    });
    let run = finish(java);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(out.status.success());
    let Stream { tags, sites, .. } = records(&output);
    // The command's ALLOC SITES (by allocation, after a GC), then the one at exit.
    assert_eq!(sites, [0x6, 0x4]);
    // HEAP SUMMARY: one for the command, one with each ALLOC SITES.
    assert_eq!(
        tags.iter()
            .filter(|t| **t == hprof_format::Tag::HeapSummary)
            .count(),
        3
    );
}

/// Waits for the listener after running `f` once it has sent its commands (it sleeps at
/// the end of its script, so `f` runs while it still listens).
trait WaitAfter {
    fn wait_with_output_after(self, f: impl FnOnce()) -> std::process::Output;
}

impl WaitAfter for Child {
    fn wait_with_output_after(self, f: impl FnOnce()) -> std::process::Output {
        std::thread::sleep(std::time::Duration::from_millis(1800));
        f();
        self.wait_with_output().unwrap()
    }
}

#[test]
fn exit_vm_ends_the_program_with_status_0_and_a_complete_text_stream() {
    let dir = temp_dir();
    let (listener, port, output) = listen(dir.path(), &["sleep 600", "exit-vm"]);
    let run = run_java(dir.path(), "cpu=samples", port, "ExitPaths", &["wait"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("HPROF: received exit event, exiting ..."),
        "{}",
        run.stderr
    );
    assert!(listener.wait_with_output().unwrap().status.success());
    let text = std::fs::read_to_string(&output).unwrap();
    assert!(text.starts_with("JAVA PROFILE 1.0.1, created "));
    assert!(
        text.ends_with("CPU SAMPLES END\n"),
        "{}",
        &text[text.len().saturating_sub(200)..]
    );
    assert!(text.contains(" ExitPaths.spin\n"));
}

#[test]
fn the_program_runs_on_when_the_front_end_quits() {
    let dir = temp_dir();
    let (listener, port, _) = listen(dir.path(), &["sleep 300", "quit"]);
    let run = run_java(dir.path(), "cpu=samples", port, "CpuHot", &["1200"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.starts_with("done "), "{}", run.stdout);
    assert!(
        run.stderr
            .lines()
            .filter(|l| l.starts_with("HPROF ERROR"))
            .count()
            <= 1,
        "{}",
        run.stderr
    );
    assert!(listener.wait_with_output().unwrap().status.success());
}

#[test]
fn dump_heap_command_yields_a_heap_dump_visualvm_opens() {
    let dir = temp_dir();
    let (listener, port, output) =
        listen(dir.path(), &["sleep 1200", "dump", "sleep 300", "exit-vm"]);
    // HeapPopulation waits while its standard input stays open; exit-vm ends it.
    let mut java = java_command(
        &jdk17(),
        dir.path(),
        &[&agent("cpu=samples,format=b", port)],
        "HeapPopulation",
        &[],
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let stdin = java.stdin.take();
    let run = finish(java);
    drop(stdin);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(listener.wait_with_output().unwrap().status.success());
    let Stream { tags, .. } = records(&output);
    assert!(
        tags.contains(&hprof_format::Tag::HeapDumpSegment)
            && tags.contains(&hprof_format::Tag::HeapDumpEnd)
    );
    let summary = crate::support::summary_json(&output);
    assert_eq!(
        crate::support::class_row(&summary, "HeapPopulation$Node").map(|r| r.0),
        Some(12345)
    );
    let report = hprof_testkit::java::visualvm(&output).expect("VisualVM opens the received dump");
    assert_eq!(report.per_class.get("HeapPopulation$Node"), Some(&12345));
}

#[test]
fn sampling_and_clear_commands() {
    let dir = temp_dir();
    let (listener, port, output) = listen(
        dir.path(),
        &[
            "sleep 500",
            "sampling off",
            "clear cpu",
            "sleep 400",
            "cpu",
            "sampling on",
            "sleep 300",
        ],
    );
    let run = run_java(
        dir.path(),
        "cpu=samples,format=b",
        port,
        "CpuHot",
        &["1600"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(listener.wait_with_output().unwrap().status.success());
    let Stream { samples, .. } = records(&output);
    // Sampling off and the counts cleared: the command's listing is empty; back on, the
    // listing at exit has samples again.
    assert_eq!(samples.len(), 2, "{samples:?}");
    // (A tick already under way when sampling stops may still land one sample.)
    assert!(samples[0].0 <= 1, "{samples:?}");
    assert!(samples[1].0 > 10, "{samples:?}");
}
