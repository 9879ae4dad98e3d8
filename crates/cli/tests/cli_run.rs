//! `hprof run`: the agent on a real JVM, the report, the exit status, and `hprof print` of
//! the agent's binary output.

use std::process::Stdio;

use hprof_testkit::java::{classes, jdk17, jdks, libhprof};

use crate::support::hprof;

fn run_in(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    run_with(&jdk17(), dir, args)
}

/// `hprof run ARGS` in `dir` with `jdk` as JAVA_HOME.
fn run_with(
    jdk: &hprof_testkit::java::Jdk,
    dir: &std::path::Path,
    args: &[&str],
) -> (Option<i32>, String, String) {
    let out = hprof()
        .current_dir(dir)
        .env("HPROF_AGENT", libhprof())
        .env("JAVA_HOME", &jdk.home)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn java() -> String {
    jdk17().bin("java").display().to_string()
}

#[test]
fn run_profiles_a_program_and_reports_its_hot_methods_on_stderr() {
    for jdk in hprof_testkit::java::jdks() {
        // (Shown with the assertion that fails.)
        eprintln!("JDK {}", jdk.version);
        runs_and_reports(&jdk);
    }
}

fn runs_and_reports(jdk: &hprof_testkit::java::Jdk) {
    let dir = crate::support::temp_dir();
    let cp = classes().display().to_string();
    let java = jdk.bin("java").display().to_string();
    let (code, stdout, stderr) = run_with(
        jdk,
        dir.path(),
        &[
            "run", "--top", "3", "--", &java, "-cp", &cp, "CpuHot", "800",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    // The program's own output alone on stdout.
    assert!(stdout.starts_with("done "), "{stdout}");
    assert!(!stdout.contains("CPU SAMPLES"), "{stdout}");
    assert!(
        stderr.contains("Profile written to ./java.hprof.txt"),
        "{stderr}"
    );
    let rows: Vec<&str> = stderr
        .lines()
        .skip_while(|l| !l.starts_with("CPU SAMPLES: "))
        .collect();
    assert_eq!(rows[1], "rank   self  total  method");
    assert!(
        rows[2].trim_start().starts_with("1 ") && rows[2].ends_with("  CpuHot.hot"),
        "{stderr}"
    );
    // A flame graph beside the profile.
    assert!(
        stderr.contains("Flame graph: ./java.hprof.html"),
        "{stderr}"
    );
    let html = std::fs::read_to_string(dir.path().join("java.hprof.html")).unwrap();
    assert!(html.contains("CpuHot.hot"));
}

#[test]
fn run_passes_on_the_exit_status_and_binary_output_is_reported() {
    for jdk in jdks() {
        // (Shown with the assertion that fails.)
        eprintln!("JDK {}", jdk.version);
        let java = jdk.bin("java").display().to_string();
        let dir = crate::support::temp_dir();
        let cp = classes().display().to_string();
        let (code, _, stderr) = run_with(
            &jdk,
            dir.path(),
            &[
                "run",
                "--format",
                "b",
                "-o",
                "out.hprof",
                "--no-flame",
                "--",
                &java,
                "-cp",
                &cp,
                "ExitPaths",
                "exit-from-thread",
            ],
        );
        assert_eq!(code, Some(3), "{stderr}");
        assert!(
            stderr.contains("Profile written to ./out.hprof"),
            "{stderr}"
        );
        assert!(
            stderr
                .lines()
                .any(|l| l.ends_with("  ExitPaths.spin") && l.trim_start().starts_with("1 ")),
            "{stderr}"
        );
        assert!(!dir.path().join("out.html").exists());
    }
}

#[test]
fn run_without_a_program_profiles_the_bundled_demo_and_leaves_no_temporary_files() {
    let dir = crate::support::temp_dir();
    let tmp = crate::support::temp_dir();
    let out = hprof()
        .current_dir(dir.path())
        .env("HPROF_AGENT", libhprof())
        .env("JAVA_HOME", jdk17().home)
        .env("TMPDIR", tmp.path())
        .args(["run", "--top", "5"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("Demo: "), "{stdout}");
    assert!(
        stderr.lines().any(|l| l.ends_with("  Demo.countPrimes")),
        "{stderr}"
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind in TMPDIR: {left:?}");
}

#[test]
fn run_profiles_launchers_that_are_not_java_through_java_tool_options() {
    let dir = crate::support::temp_dir();
    // javac refuses -agentpath on its command line; the agent goes in through the JVM's
    // JAVA_TOOL_OPTIONS instead.
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/Hello.java"),
        "public class Hello { public static void main(String[] a) { System.out.println(\"hi\"); } }\n",
    )
    .unwrap();
    let javac = jdk17().bin("javac").display().to_string();
    let (code, _, stderr) = run_in(
        dir.path(),
        &[
            "run",
            "--top",
            "3",
            "--",
            &javac,
            "-d",
            "out",
            "src/Hello.java",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(dir.path().join("out/Hello.class").exists());
    assert!(
        stderr.contains("Profile written to ./java.hprof.txt"),
        "{stderr}"
    );
    // The report lists three methods (or pseudo-frames), ranked; the profile is javac's:
    // its compile method is on the stacks of the samples.
    let rows: Vec<&str> = stderr
        .lines()
        .skip_while(|l| !l.starts_with("CPU SAMPLES: "))
        .skip(2)
        .take_while(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert_eq!(rows.len(), 3, "{stderr}");
    for (rank, row) in rows.iter().enumerate() {
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols[0], (rank + 1).to_string(), "{row}");
        assert!(cols[1].ends_with('%') && cols[2].ends_with('%'), "{row}");
        let method = cols[3..].join(" ");
        assert!(
            (method.contains('.') && !method.contains(' '))
                || method.starts_with('<')
                // Code that is not Java: stubs, the kernel, libraries (C++ names may hold
                // spaces: `[stub].I2C/C2I adapters`).
                || method.starts_with('[')
                || method.contains(".so."),
            "{row}"
        );
    }
    let text = std::fs::read_to_string(dir.path().join("java.hprof.txt")).unwrap();
    assert!(
        text.contains("\tcom.sun.tools.javac.main.JavaCompiler.compile("),
        "{text}"
    );
    // Stacks are 64 frames deep by default (the agent's own default is 4).
    let deepest = text
        .split("\nTRACE ")
        .map(|t| {
            t.lines()
                .skip(1)
                .take_while(|l| l.starts_with('\t'))
                .count()
        })
        .max()
        .unwrap_or(0);
    assert!(deepest > 4, "deepest trace {deepest} frames");
    // A shell script that starts two JVMs: one profile each, none lost, the status kept.
    let cp = classes().display().to_string();
    let script = dir.path().join("launch.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n{java} -cp {cp} CpuHot 300 || exit 9\n{java} -cp {cp} CpuHot 300\nexit 5\n",
            java = java()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let launch = dir.path().join("two");
    std::fs::create_dir(&launch).unwrap();
    let (code, _, stderr) = run_in(
        &launch,
        &["run", "--top", "2", "--", script.to_str().unwrap()],
    );
    assert_eq!(code, Some(5), "{stderr}");
    let reports = stderr.matches("Profile written to").count();
    assert_eq!(reports, 2, "{stderr}");
    assert_eq!(stderr.matches("  CpuHot.hot").count(), 2, "{stderr}");
    let profiles: Vec<String> = std::fs::read_dir(&launch)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".txt"))
        .collect();
    assert_eq!(profiles.len(), 2, "{profiles:?}");
}

#[test]
fn run_whose_agent_wrote_nothing_reports_no_stale_profile() {
    let dir = crate::support::temp_dir();
    let cp = classes().display().to_string();
    let (code, _, stderr) = run_in(
        dir.path(),
        &["run", "--", &java(), "-cp", &cp, "CpuHot", "300"],
    );
    assert_eq!(code, Some(0), "{stderr}");
    // Now a run whose agent refuses its options: the old profile must not be shown.
    let (code, _, stderr) = run_in(
        dir.path(),
        &[
            "run",
            "--agent-opts",
            "bogus=1",
            "--",
            &java(),
            "-cp",
            &cp,
            "CpuHot",
            "300",
        ],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("hprof option error"), "{stderr}");
    assert!(stderr.contains("the agent wrote no profile"), "{stderr}");
    assert!(!stderr.contains("Profile written"), "{stderr}");
}

#[test]
fn print_of_binary_output_has_the_sections_of_text_output() {
    for jdk in jdks() {
        // (Shown with the assertion that fails.)
        eprintln!("JDK {}", jdk.version);
        let java = jdk.bin("java").display().to_string();
        // Sampled every millisecond of CPU time: the workers' work gives TRACE blocks in both.
        let cp = classes().display().to_string();
        let text_dir = crate::support::temp_dir();
        let (code, _, stderr) = run_with(
            &jdk,
            text_dir.path(),
            &[
                "run",
                "--agent-opts",
                "interval=1",
                "--",
                &java,
                "-cp",
                &cp,
                "ManyThreads",
            ],
        );
        assert_eq!(code, Some(0), "{stderr}");
        let binary_dir = crate::support::temp_dir();
        let (code, _, stderr) = run_with(
            &jdk,
            binary_dir.path(),
            &[
                "run",
                "--format",
                "b",
                "--agent-opts",
                "interval=1",
                "--",
                &java,
                "-cp",
                &cp,
                "ManyThreads",
            ],
        );
        assert_eq!(code, Some(0), "{stderr}");
        let printed = crate::support::hprof_ok(&[
            "print",
            binary_dir.path().join("java.hprof").to_str().unwrap(),
        ]);
        let text = std::fs::read_to_string(text_dir.path().join("java.hprof.txt")).unwrap();
        // The same kinds of lines and sections (TRACE blocks included: the binary file defines
        // the empty trace 300000 up front, for its thread records).
        let kinds = |t: &str| -> Vec<String> {
            let mut seen: Vec<String> = Vec::new();
            for line in t.lines().skip_while(|l| *l != "--------") {
                let kind = line.split([' ', '(']).take(2).collect::<Vec<_>>().join(" ");
                if ["THREAD START", "THREAD END", "CPU SAMPLES", "TRACE"]
                    .iter()
                    .any(|k| kind.starts_with(k))
                {
                    let kind = if kind.starts_with("TRACE") {
                        "TRACE".to_string()
                    } else {
                        kind
                    };
                    if !seen.contains(&kind) {
                        seen.push(kind);
                    }
                }
            }
            seen
        };
        // Threads start and end concurrently with the sampler, so only the set of kinds is
        // compared, and that both end with the CPU SAMPLES section.
        let sorted = |mut k: Vec<String>| {
            k.sort();
            k
        };
        assert_eq!(sorted(kinds(&printed)), sorted(kinds(&text)));
        assert!(printed.ends_with("CPU SAMPLES END\n") && text.ends_with("CPU SAMPLES END\n"));
        assert!(
            kinds(&printed).contains(&"TRACE".to_string())
                && kinds(&text).contains(&"TRACE".to_string())
        );
        // The same 200 worker threads start and end in both.
        for t in [&printed, &text] {
            let starts = t
                .lines()
                .filter(|l| l.starts_with("THREAD START") && l.contains("name=\"worker-"))
                .count();
            assert_eq!(starts, 200);
            assert!(t.contains("CPU SAMPLES END"));
        }
        assert!(printed.contains("\nTRACE 300000:\n\t<empty>\n"));
    }
}

/// SITES rows of a text profile, each with the frames of its trace:
/// (class, live bytes, live objects, allocated bytes, allocated objects, frames).
fn sites_with_frames(text: &str) -> Vec<(String, u64, u64, u64, u64, Vec<String>)> {
    let mut traces = std::collections::HashMap::new();
    let mut rows = Vec::new();
    let mut lines = text.lines().skip_while(|l| *l != "--------").peekable();
    let mut in_sites = false;
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix("TRACE ") {
            let serial: u32 = rest.split(':').next().unwrap().parse().unwrap();
            let mut frames = Vec::new();
            while let Some(frame) = lines.peek().and_then(|l| l.strip_prefix('\t')) {
                frames.push(frame.to_string());
                lines.next();
            }
            traces.insert(serial, frames);
        } else if line.starts_with("SITES BEGIN") {
            in_sites = true;
        } else if line == "SITES END" {
            in_sites = false;
        } else if in_sites && line.trim_start().starts_with(|c: char| c.is_ascii_digit()) {
            let c: Vec<&str> = line.split_whitespace().collect();
            let trace: u32 = c[7].parse().unwrap();
            rows.push((
                c[8..].join(" "),
                c[3].parse().unwrap(),
                c[4].parse().unwrap(),
                c[5].parse().unwrap(),
                c[6].parse().unwrap(),
                traces[&trace].clone(),
            ));
        }
    }
    rows
}

#[test]
fn print_of_binary_alloc_sites_equals_the_text_sites() {
    let cp = classes().display().to_string();
    let args = |format: &'static str| -> Vec<String> {
        [
            "run",
            "--heap",
            "sites",
            "--format",
            format,
            "--agent-opts",
            // Exact per-object sites: the two runs' live counts must agree to the object (the
            // fast mode's live figures are estimates from samples, different in each run).
            "depth=8,cutoff=0,sites=exact",
            "--",
            &java(),
            "-cp",
            &cp,
            "AllocSites",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let text_dir = crate::support::temp_dir();
    let a: Vec<String> = args("a");
    let (code, _, stderr) = run_in(
        text_dir.path(),
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(code, Some(0), "{stderr}");
    let binary_dir = crate::support::temp_dir();
    let b: Vec<String> = args("b");
    let (code, _, stderr) = run_in(
        binary_dir.path(),
        &b.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(code, Some(0), "{stderr}");
    let printed = crate::support::hprof_ok(&[
        "print",
        binary_dir.path().join("java.hprof").to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(text_dir.path().join("java.hprof.txt")).unwrap();
    // The program's own allocation points (top frame in AllocSites.make*) are the same in
    // both runs, with the same counts and traces; JDK-internal sites vary from run to run.
    let ours = |t: &str| {
        let mut rows: Vec<_> = sites_with_frames(t)
            .into_iter()
            .filter(|r| r.5[0].starts_with("AllocSites.make"))
            .collect();
        rows.sort();
        rows
    };
    let (from_binary, from_text) = (ours(&printed), ours(&text));
    assert!(from_text.len() >= 12, "{} rows", from_text.len());
    for (b, t) in from_binary.iter().zip(&from_text) {
        assert_eq!(b, t);
    }
    assert_eq!(from_binary.len(), from_text.len());
    assert!(
        from_text
            .iter()
            .any(|r| r.0 == "AllocSites$Point" && r.4 == 10000)
    );
}
