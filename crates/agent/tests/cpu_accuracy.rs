//! CPU samples in proportion to CPU time, on the hard cases: a kernel in 1 ms bursts (shorter
//! than the kernel's 4 ms tick) that reads System.nanoTime at every step, garbage
//! collection, intrinsic stubs, and an oversubscribed machine (two profiled JVMs on two cores)
//! (`java/src/FourKernels.java`, whose threads each print their own CPU time).
//!
//! A thread's share of the samples is its share of the CPU time: the clock's accuracy (each
//! kernel's thread does nothing else). A kernel's share of the samples whose stack holds its
//! frame is the same: the walk's accuracy too.

use std::collections::HashMap;
use std::process::Stdio;

use crate::support::{
    JavaRun, Jdk, TextProfile, agentpath, finish, java_command, jdks, read_text, text_output,
};

const KERNELS: [&str; 4] = ["math", "sort", "hashmap", "trig"];

/// The method of kernel `name`'s frame.
fn method(name: &str) -> &'static str {
    match name {
        "math" => "FourKernels.kernelMath(",
        "sort" => "FourKernels.kernelSort(",
        "hashmap" => "FourKernels.kernelHashMap(",
        _ => "FourKernels.kernelTrig(",
    }
}

const OPTIONS: &str = "cpu=samples,interval=1,thread=y,depth=64";

/// What profiled runs of FourKernels gave, per kernel: the CPU time its thread measured (ns),
/// its thread's samples, and the samples whose stack holds its frame.
#[derive(Debug, Default)]
struct Counts {
    cpu: HashMap<&'static str, f64>,
    thread: HashMap<&'static str, u64>,
    frames: HashMap<&'static str, u64>,
}

/// Per kernel, percents of the four: its share of their CPU time, its thread's share of their
/// samples, and the share of their samples whose stack holds its frame; and their samples.
#[derive(Debug)]
struct Shares {
    measured: HashMap<&'static str, f64>,
    thread: HashMap<&'static str, f64>,
    frames: HashMap<&'static str, f64>,
    samples: u64,
}

impl Counts {
    /// Adds the run `run` whose profile is `p`.
    fn add(&mut self, run: &JavaRun, p: &TextProfile) {
        let cpu: HashMap<&str, f64> = run
            .stdout
            .lines()
            .filter_map(|l| {
                let mut words = l.strip_prefix("kernel ")?.split(' ');
                Some((words.next()?, words.next()?.parse().ok()?))
            })
            .collect();
        assert_eq!(cpu.len(), 4, "{}", run.stdout);
        for kernel in KERNELS {
            *self.cpu.entry(kernel).or_default() += cpu[kernel];
        }
        let serials: HashMap<u32, &'static str> = KERNELS
            .iter()
            .map(|&k| (p.thread(k).unwrap_or_else(|| panic!("thread {k}")), k))
            .collect();
        let section = p.cpu.last().expect("a CPU SAMPLES section");
        for row in &section.rows {
            let trace = &p.traces[&row.trace];
            let Some(&kernel) = trace.thread.and_then(|t| serials.get(&t)) else {
                continue;
            };
            *self.thread.entry(kernel).or_default() += row.count;
            if trace.frames.iter().any(|f| f.starts_with(method(kernel))) {
                *self.frames.entry(kernel).or_default() += row.count;
            }
        }
    }

    fn samples(&self) -> u64 {
        self.thread.values().sum()
    }

    fn shares(&self) -> Shares {
        let samples = self.samples();
        let cpu_total: f64 = self.cpu.values().sum();
        let percent = |n: Option<&u64>| *n.unwrap_or(&0) as f64 * 100.0 / samples.max(1) as f64;
        let each = |f: &dyn Fn(&'static str) -> f64| KERNELS.iter().map(|&k| (k, f(k))).collect();
        Shares {
            measured: each(&|k| self.cpu.get(k).copied().unwrap_or(0.0) * 100.0 / cpu_total),
            thread: each(&|k| percent(self.thread.get(k))),
            frames: each(&|k| percent(self.frames.get(k))),
            samples,
        }
    }
}

/// Runs `jvms` profiled JVMs of FourKernels at once on `jdk`, for 4 s, again (at most three
/// times) until each has [`MIN_SAMPLES`] (a loaded machine gives the JVMs little CPU time);
/// the shares of each JVM.
fn run(jdk: &Jdk, jvms: usize) -> Vec<Shares> {
    let mut counts: Vec<Counts> = (0..jvms).map(|_| Counts::default()).collect();
    for _ in 0..3 {
        let dirs: Vec<tempfile::TempDir> =
            (0..jvms).map(|_| tempfile::tempdir().unwrap()).collect();
        let agent = agentpath(OPTIONS);
        let children: Vec<_> = dirs
            .iter()
            .map(|dir| {
                java_command(jdk, dir.path(), &[&agent], "FourKernels", &["4"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("java starts")
            })
            .collect();
        let runs: Vec<JavaRun> = children.into_iter().map(finish).collect();
        for ((run, dir), counts) in runs.iter().zip(&dirs).zip(&mut counts) {
            assert_eq!(run.code, Some(0), "JDK {}: {}", jdk.version, run.stderr);
            assert!(
                run.stdout.contains("done") && !run.stderr.contains("HPROF ERROR"),
                "JDK {}: {}",
                jdk.version,
                run.stderr
            );
            counts.add(
                run,
                &TextProfile::parse(&read_text(&text_output(dir.path()))),
            );
        }
        if counts.iter().all(|c| c.samples() >= MIN_SAMPLES) {
            break;
        }
    }
    counts.iter().map(Counts::shares).collect()
}

/// Asserts that each of `kernels` got, by `got`, its measured share within `points`.
fn assert_within(
    jdk: &Jdk,
    what: &str,
    shares: &Shares,
    got: &HashMap<&'static str, f64>,
    kernels: &[&str],
    points: f64,
) {
    for &kernel in kernels {
        let (truth, share) = (shares.measured[kernel], got[kernel]);
        assert!(
            (share - truth).abs() <= points,
            "JDK {}: {what}: {kernel} sampled {share:.2} %, measured {truth:.2} % ({shares:?})",
            jdk.version
        );
    }
}

/// The least samples of the four threads each JVM must have: 4 s at 1 ms on two cores give
/// about 6,000 on an idle machine (3,000 each when two JVMs share it), from 120 to 700 on a
/// machine loaded ten times over. Each thread's count is its CPU time in intervals to within a
/// sample or two, so 500 keep the shares within 0.5 point of the truth.
const MIN_SAMPLES: u64 = 500;

#[test]
fn each_threads_share_of_samples_is_its_share_of_cpu_time_alone_and_two_jvms_at_once() {
    for jdk in jdks() {
        for (jvms, points) in [(1, 1.0), (2, 2.0)] {
            for shares in run(&jdk, jvms) {
                assert!(
                    shares.samples >= MIN_SAMPLES,
                    "JDK {}: {shares:?}",
                    jdk.version
                );
                let what = format!("{jvms} JVM(s), by thread");
                assert_within(&jdk, &what, &shares, &shares.thread, &KERNELS, points);
            }
        }
    }
}

#[test]
fn four_kernels_get_their_shares_by_frame_alone_and_two_jvms_at_once() {
    for jdk in jdks() {
        for (jvms, points) in [(1, 1.0), (2, 2.0)] {
            for shares in run(&jdk, jvms) {
                assert!(
                    shares.samples >= MIN_SAMPLES,
                    "JDK {}: {shares:?}",
                    jdk.version
                );
                let what = format!("{jvms} JVM(s), by frame");
                assert_within(&jdk, &what, &shares, &shares.frames, &KERNELS, points);
            }
        }
    }
}
