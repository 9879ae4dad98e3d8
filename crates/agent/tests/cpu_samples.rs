//! cpu=samples: the hot method leads, a thread blocked in accept() gets nothing, and the
//! trace options shape the TRACE blocks.

use crate::support::{TextProfile, jdk17, jdks, profile, read_text, text_output};

#[test]
fn the_hot_method_ranks_first_on_every_jdk() {
    for jdk in jdks() {
        let (run, dir) = profile(&jdk, "cpu=samples,thread=y", "CpuHot", &["1500"]);
        assert_eq!(run.code, Some(0), "JDK {}: {}", jdk.version, run.stderr);
        assert!(
            run.stderr
                .contains("Dumping CPU usage by sampling running threads ... done."),
            "{}",
            run.stderr
        );
        let p = TextProfile::parse(&read_text(&text_output(dir.path())));
        assert_eq!(p.cpu.len(), 1, "JDK {}", jdk.version);
        let cpu = &p.cpu[0];
        // One sample per 10 ms of a thread's CPU, never more (+1: main runs on a moment after
        // it reads its CPU time; how many samples the machine's load leaves is measured in
        // bench/rates.py).
        let main = p.thread("main").expect("main started");
        let of_main = cpu_of(&p, main);
        assert!(
            of_main >= 1 && of_main <= main_cpu_millis(&run.stdout) / 10 + 1,
            "JDK {}: {of_main} samples of main; {}",
            jdk.version,
            run.stdout
        );
        assert_eq!(
            cpu.rows[0].method, "CpuHot.hot",
            "JDK {}: {cpu:?}",
            jdk.version
        );
        let hot: u64 = cpu
            .rows
            .iter()
            .filter(|r| r.method == "CpuHot.hot")
            .map(|r| r.count)
            .sum();
        assert!(
            hot * 10 >= cpu.total * 8,
            "JDK {}: hot {hot} of {}",
            jdk.version,
            cpu.total
        );
        assert_eq!(cpu.rows.iter().map(|r| r.count).sum::<u64>(), cpu.total);
        assert!(
            cpu.rows
                .windows(2)
                .all(|w| w[0].count >= w[1].count && w[1].rank == w[0].rank + 1)
        );
        // The acceptor thread was blocked in accept() all along: no sample is its.
        let acceptor = p.thread("acceptor").expect("acceptor thread started");
        for row in &cpu.rows {
            let trace = &p.traces[&row.trace];
            assert_ne!(
                trace.thread,
                Some(acceptor),
                "JDK {}: acceptor sampled: {trace:?}",
                jdk.version
            );
            // (Lambdas named `accept` are fine; the socket's accept is not.)
            assert!(
                trace
                    .frames
                    .iter()
                    .all(|f| !f.contains("ServerSocket.accept") && !f.contains("Net.accept")),
                "{trace:?}"
            );
        }
        let top = &p.traces[&cpu.rows[0].trace];
        assert!(
            top.frames[0].starts_with("CpuHot.hot(CpuHot.java:"),
            "{top:?}"
        );
        assert!(
            top.frames
                .iter()
                .any(|f| f.starts_with("CpuHot.main(CpuHot.java:")),
            "{top:?}"
        );
        assert_eq!(top.thread, p.thread("main"));
    }
}

#[test]
fn lineno_n_and_depth_shape_the_traces() {
    let jdk = jdk17();
    // (native=n: Java frames only, as the original's traces; native frames come above them.)
    let (run, dir) = profile(
        &jdk,
        "cpu=samples,lineno=n,depth=1,native=n",
        "CpuHot",
        &["600"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let p = TextProfile::parse(&read_text(&text_output(dir.path())));
    assert!(!p.traces.is_empty());
    for (serial, trace) in &p.traces {
        assert_eq!(trace.frames.len(), 1, "{serial}: {trace:?}");
        assert!(trace.frames[0].ends_with(":Unknown line)"), "{trace:?}");
        assert_eq!(trace.thread, None);
    }
    assert_eq!(p.cpu[0].rows[0].method, "CpuHot.hot");
    // With lineno=n the one-frame traces of hot() collapse into one.
    assert_eq!(
        p.cpu[0]
            .rows
            .iter()
            .filter(|r| r.method == "CpuHot.hot")
            .count(),
        1
    );
}

#[test]
fn depth_zero_records_no_samples() {
    let (run, dir) = profile(&jdk17(), "cpu=samples,depth=0", "CpuHot", &["300"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let text = read_text(&text_output(dir.path()));
    let p = TextProfile::parse(&text);
    assert_eq!(
        p.cpu,
        [crate::support::CpuSection {
            total: 0,
            rows: vec![]
        }]
    );
    assert!(
        text.contains("\nCPU SAMPLES BEGIN (total = 0) ") && text.ends_with("CPU SAMPLES END\n"),
        "{text}"
    );
}

/// Samples of the last CPU SAMPLES section charged to thread `serial`.
fn cpu_of(p: &TextProfile, serial: u32) -> u64 {
    p.cpu
        .last()
        .expect("a CPU SAMPLES section")
        .rows
        .iter()
        .filter(|r| p.traces[&r.trace].thread == Some(serial))
        .map(|r| r.count)
        .sum()
}

/// The CPU time CpuHot's main thread had, from its `cpu <ms>` line.
fn main_cpu_millis(stdout: &str) -> u64 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("cpu ")?.parse().ok())
        .unwrap_or_else(|| panic!("no cpu line: {stdout}"))
}

#[test]
fn the_interval_is_the_cpu_time_between_samples() {
    // A thread is sampled once per `interval` of its own CPU time: never more often than its
    // CPU time over the interval (a 100 ms interval taken for 10 ms would give ten times
    // more). How close to that the sampler gets on a loaded machine is measured in
    // bench/rates.py, not asserted here.
    for interval in [100, 10] {
        let options = format!("cpu=samples,interval={interval},thread=y");
        let (run, dir) = profile(&jdk17(), &options, "CpuHot", &["1000"]);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let p = TextProfile::parse(&read_text(&text_output(dir.path())));
        let main = p.thread("main").expect("main started");
        let cpu = main_cpu_millis(&run.stdout);
        let samples = cpu_of(&p, main);
        // (+1: main runs on a moment after it reads its CPU time.)
        assert!(
            samples <= cpu / interval + 1,
            "interval={interval}: {samples} samples of main in {cpu} ms of its CPU"
        );
        assert!(
            samples >= 1 || cpu < interval,
            "interval={interval}: {cpu} ms"
        );
    }
}

#[test]
fn cutoff_drops_small_rows() {
    // One frame without line numbers: one trace per method, and hot()'s holds > 80 %.
    let (run, dir) = profile(
        &jdk17(),
        "cpu=samples,cutoff=0.5,depth=1,lineno=n",
        "CpuHot",
        &["600"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let p = TextProfile::parse(&read_text(&text_output(dir.path())));
    let cpu = &p.cpu[0];
    assert!(cpu.rows.iter().all(|r| r.count * 2 >= cpu.total), "{cpu:?}");
    assert_eq!(cpu.rows.len(), 1, "{cpu:?}");
    assert_eq!(cpu.rows[0].method, "CpuHot.hot", "{cpu:?}");
}
