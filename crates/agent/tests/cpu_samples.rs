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
        // 1.5 s at one sample per 10 ms of CPU.
        assert!(
            (60..=200).contains(&cpu.total),
            "JDK {}: total {}",
            jdk.version,
            cpu.total
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

#[test]
fn a_longer_interval_takes_fewer_samples() {
    // Samples follow CPU time, which a loaded machine gives the program less of: the check is
    // relative to a run at the default 10 ms, not a count of its own.
    let (run, dir) = profile(&jdk17(), "cpu=samples,interval=100", "CpuHot", &["1000"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let slow = TextProfile::parse(&read_text(&text_output(dir.path())));
    let (run, dir) = profile(&jdk17(), "cpu=samples,interval=10", "CpuHot", &["1000"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let fast = TextProfile::parse(&read_text(&text_output(dir.path())));
    let (slow, fast) = (slow.cpu[0].total, fast.cpu[0].total);
    // At most about 1 s of CPU at 100 ms; about ten times fewer than at 10 ms.
    assert!((1..=20).contains(&slow), "{slow} samples at 100 ms");
    assert!(
        fast >= 4 * slow,
        "{fast} samples at 10 ms, {slow} at 100 ms"
    );
}

#[test]
fn cutoff_drops_small_rows() {
    let (run, dir) = profile(&jdk17(), "cpu=samples,cutoff=0.5", "CpuHot", &["600"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let p = TextProfile::parse(&read_text(&text_output(dir.path())));
    let cpu = &p.cpu[0];
    assert!(cpu.rows.iter().all(|r| r.count * 2 >= cpu.total), "{cpu:?}");
    assert_eq!(cpu.rows.len(), 1);
}
