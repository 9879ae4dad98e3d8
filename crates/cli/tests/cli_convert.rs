//! `hprof convert` on real profiles: folded stacks whose counts are the section's totals,
//! pprof read by `go tool pprof`, the HTML flame graph loaded in headless Chromium.

use std::path::Path;
use std::process::Stdio;

use hprof_testkit::browser;
use hprof_testkit::java::{finish, java_command, jdk17, jdks, libhprof};
use hprof_testkit::require::{self, Skipped};

use crate::support::{go_pprof_top, hprof_ok, run_hprof, temp_dir};

/// Profiles CpuHot (one hot method, `CpuHot.hot`, called from `main`) with `options`.
fn profile(dir: &Path, options: &str) {
    profile_on(&jdk17(), dir, options);
}

/// Profiles CpuHot on `jdk` with `options`.
fn profile_on(jdk: &hprof_testkit::java::Jdk, dir: &Path, options: &str) {
    // 1,500 ms of main's CPU time, as the agent's own tests of CpuHot: at 800 ms the JVM's
    // start-up (class loading, ServerSocket's set-up) weighed 21 of 98 samples on JDK 11 in a
    // fresh-clone run, and hot() fell under the 80 % the tests below ask.
    profile_program_on(jdk, dir, options, "CpuHot", &["1500"]);
}

/// Runs `program` under the agent with `options` in `dir`.
fn profile_program(dir: &Path, options: &str, program: &str, args: &[&str]) {
    profile_program_on(&jdk17(), dir, options, program, args);
}

/// Runs `program` on `jdk` under the agent with `options` in `dir`.
fn profile_program_on(
    jdk: &hprof_testkit::java::Jdk,
    dir: &Path,
    options: &str,
    program: &str,
    args: &[&str],
) {
    let agent = format!("-agentpath:{}={options}", libhprof().display());
    let child = java_command(jdk, dir, &[&agent], program, args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let run = finish(child);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

/// The folded lines of `file` converted with `extra` options: (stack, count).
fn folded(file: &Path, extra: &[&str]) -> Vec<(String, i64)> {
    let out = file.with_extension("collapsed");
    let mut args = vec!["convert", file.to_str().unwrap(), out.to_str().unwrap()];
    args.extend_from_slice(extra);
    hprof_ok(&args);
    std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| {
            let (stack, n) = l.rsplit_once(' ').unwrap();
            (stack.to_string(), n.parse().unwrap())
        })
        .collect()
}

/// The totals of the text file's CPU SAMPLES sections.
fn section_totals(text: &str) -> Vec<i64> {
    text.lines()
        .filter_map(|l| l.strip_prefix("CPU SAMPLES BEGIN (total = "))
        .map(|r| r.split(')').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn folded_stacks_of_text_and_binary_profiles_add_up_to_the_sections() {
    for jdk in jdks() {
        // (Shown with the assertion that fails.)
        eprintln!("JDK {}", jdk.version);
        let dir = temp_dir();
        profile_on(&jdk, dir.path(), "cpu=samples,depth=16");
        let text_file = dir.path().join("java.hprof.txt");
        let totals = section_totals(&std::fs::read_to_string(&text_file).unwrap());
        let lines = folded(&text_file, &[]);
        assert_eq!(
            lines.iter().map(|l| l.1).sum::<i64>(),
            *totals.last().unwrap()
        );
        let hot: i64 = lines
            .iter()
            .filter(|(s, _)| s.ends_with("CpuHot.main;CpuHot.hot"))
            .map(|l| l.1)
            .sum();
        assert!(
            hot * 10 > totals[0] * 8,
            "CpuHot.hot has {hot} of {totals:?}: {lines:?}"
        );
        // Binary output of the same kind of run.
        let bin = temp_dir();
        profile_on(&jdk, bin.path(), "cpu=samples,depth=16,format=b");
        let lines = folded(&bin.path().join("java.hprof"), &[]);
        let total: i64 = lines.iter().map(|l| l.1).sum();
        let hot: i64 = lines
            .iter()
            .filter(|(s, _)| s.ends_with("CpuHot.main;CpuHot.hot"))
            .map(|l| l.1)
            .sum();
        assert!(total > 20 && hot * 10 > total * 8, "{lines:?}");
        // --threads puts the thread first; --exclude drops frames.
        let lines = folded(&text_file, &["--threads"]);
        assert!(
            lines.iter().all(|(s, _)| !s.starts_with("CpuHot")),
            "{lines:?}"
        );
        let lines = folded(&text_file, &["--exclude", "^CpuHot\\.main$"]);
        assert!(
            lines.iter().any(|(s, _)| s.starts_with("CpuHot.hot")),
            "{lines:?}"
        );
    }
}

#[test]
fn errors_name_the_problem() {
    let dir = temp_dir();
    let input = dir.path().join("x.txt");
    std::fs::write(&input, "hello").unwrap();
    let out = dir.path().join("x.collapsed");
    let result = run_hprof(&["convert", input.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(!result.status.success());
    let err = String::from_utf8_lossy(&result.stderr);
    assert!(
        err.contains("not a profile written by hprof") && err.contains("offset 0"),
        "{err}"
    );
    let result = run_hprof(&["convert", input.to_str().unwrap(), "x.unknown"]);
    assert!(String::from_utf8_lossy(&result.stderr).contains("can't tell the format"));
    profile(dir.path(), "cpu=samples");
    let text_file = dir.path().join("java.hprof.txt");
    let result = run_hprof(&[
        "convert",
        text_file.to_str().unwrap(),
        out.to_str().unwrap(),
        "--alloc",
    ]);
    assert!(String::from_utf8_lossy(&result.stderr).contains("no SITES section"));
    // A file cut in a section: the offset of the section.
    let text = std::fs::read_to_string(&text_file).unwrap();
    let cut = dir.path().join("cut.txt");
    std::fs::write(&cut, &text[..text.len() - 10]).unwrap();
    let result = run_hprof(&["convert", cut.to_str().unwrap(), out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&result.stderr);
    assert!(
        err.contains("cut short") && err.contains("byte offset"),
        "{err}"
    );
}

#[test]
fn pprof_is_read_by_go_tool_pprof_with_the_hot_method_first() {
    if require::go(Skipped::Test).is_none() {
        return;
    }
    let dir = temp_dir();
    profile(dir.path(), "cpu=samples,depth=16");
    let out = dir.path().join("cpu.pb.gz");
    hprof_ok(&[
        "convert",
        dir.path().join("java.hprof.txt").to_str().unwrap(),
        out.to_str().unwrap(),
    ]);
    let text = go_pprof_top(&out, &[]);
    assert!(text.contains("Type: samples"), "{text}");
    // Every sample of the section, in pprof too.
    let totals =
        section_totals(&std::fs::read_to_string(dir.path().join("java.hprof.txt")).unwrap());
    assert_eq!(pprof_total(&out, "samples"), *totals.last().unwrap());
    let first = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"))
        .nth(1)
        .unwrap_or_default();
    assert!(first.ends_with("CpuHot.hot"), "{text}");
}

#[test]
fn the_flame_graph_loads_in_a_browser_and_its_search_and_zoom_work() {
    if require::chromium(Skipped::Test).is_none() {
        return;
    }
    let dir = temp_dir();
    profile(dir.path(), "cpu=samples,depth=16");
    let html = dir.path().join("flame.html");
    hprof_ok(&[
        "convert",
        dir.path().join("java.hprof.txt").to_str().unwrap(),
        html.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(&html).unwrap();
    // Self-contained: no script, style or frame loaded from elsewhere.
    assert!(
        !page.contains("src=\"http") && !page.contains("href=\"http"),
        "the page loads from the network"
    );
    // A probe: once the callees view has drawn its frames, search for the hot method (the
    // matched share is shown), zoom into it, and switch to the inverted view.
    let probe = browser::probe(
        &html,
        browser::FLAME_CALLEES_DRAWN,
        r##"
    var w = document.getElementById("callees").contentWindow, d = w.document;
    var titles = Array.from(d.getElementsByTagName("title")).map(function (t) { return t.textContent; });
    var hot = titles.filter(function (t) { return t.indexOf("CpuHot.hot (") === 0; })[0] || "none";
    w.search("CpuHot\\.hot");
    var matched = d.getElementById("matched").textContent;
    var g = Array.from(d.querySelectorAll("#frames > g")).filter(function (g) {
      return g.querySelector("title").textContent.indexOf("CpuHot.hot (") === 0; })[0];
    w.zoom(g);
    var unzoom = !d.getElementById("unzoom").classList.contains("hide");
    document.getElementById("toggle").click();
    var inverted = document.getElementById("callers").style.display !== "none";
    return hot + "|" + matched + "|" + unzoom + "|" + inverted;
"##,
    );
    let result = &probe.result;
    let fields: Vec<&str> = result.split('|').collect();
    assert!(fields[0].starts_with("CpuHot.hot ("), "{result}");
    assert!(fields[0].contains("samples"), "{result}");
    assert!(
        fields[1].starts_with("Matched: ") && fields[1] != "Matched: 0%",
        "{result}"
    );
    assert_eq!(fields[2], "true", "zoom: {result}");
    assert_eq!(fields[3], "true", "inverted view: {result}");
    assert!(probe.errors.is_empty(), "script errors: {:?}", probe.errors);
}

/// The rows of the last section starting with `begin` (up to `end`) whose first column is a rank.
fn last_rows(text: &str, begin: &str, end: &str) -> Vec<Vec<String>> {
    let start = text.rfind(begin).unwrap_or_else(|| panic!("no {begin}"));
    text[start..]
        .lines()
        .skip(1)
        .take_while(|l| *l != end)
        .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .filter(|c| c.first().is_some_and(|r| r.parse::<u32>().is_ok()))
        .collect()
}

/// The total `go tool pprof -top` reports for `file`'s `sample_index`, in the sample type's own
/// unit (bytes as bytes, milliseconds as milliseconds, counts as counts).
fn pprof_total(file: &Path, sample_index: &str) -> i64 {
    let unit = match sample_index {
        "alloc_space" | "inuse_space" => "-unit=B",
        "cpu" | "delay" => "-unit=ms",
        _ => "-unit=minimum",
    };
    let text = go_pprof_top(file, &[&format!("-sample_index={sample_index}"), unit]);
    // "Showing nodes accounting for 1234, 100% of 1234 total" (with the unit after the number).
    let line = text
        .lines()
        .find(|l| l.contains(" total"))
        .unwrap_or_else(|| panic!("{text}"));
    let total = line
        .rsplit(" of ")
        .next()
        .unwrap()
        .trim_end_matches(" total")
        .trim_end_matches(|c: char| c.is_ascii_alphabetic());
    total.parse().unwrap_or_else(|_| panic!("{line}"))
}

#[test]
fn alloc_and_live_profiles_add_up_to_the_sites_with_the_class_as_the_leaf() {
    let dir = temp_dir();
    profile_program(dir.path(), "heap=sites,depth=8,cutoff=0", "AllocSites", &[]);
    let text_file = dir.path().join("java.hprof.txt");
    let text = std::fs::read_to_string(&text_file).unwrap();
    let rows = last_rows(&text, "SITES BEGIN", "SITES END");
    assert!(rows.len() > 10, "{rows:?}");
    let col = |i: usize| {
        rows.iter()
            .map(|r| r[i].parse::<i64>().unwrap())
            .sum::<i64>()
    };
    let (live_bytes, alloc_bytes) = (col(3), col(5));
    let alloc = folded(&text_file, &["--alloc"]);
    assert_eq!(alloc.iter().map(|l| l.1).sum::<i64>(), alloc_bytes);
    assert!(
        alloc
            .iter()
            .any(|(s, _)| s.ends_with("AllocSites.makePoints;AllocSites$Point")),
        "{alloc:?}"
    );
    let live = folded(&text_file, &["--live"]);
    assert_eq!(live.iter().map(|l| l.1).sum::<i64>(), live_bytes);
    // pprof, as `go tool pprof` reads it: every sample type of both kinds is the sites'
    // column.
    if require::go(Skipped::Part).is_none() {
        return;
    }
    let (live_objects, alloc_objects) = (col(4), col(6));
    for (kind, types) in [
        (
            "--alloc",
            [
                ("alloc_space", alloc_bytes),
                ("alloc_objects", alloc_objects),
            ],
        ),
        (
            "--live",
            [("inuse_space", live_bytes), ("inuse_objects", live_objects)],
        ),
    ] {
        let out = dir.path().join(format!("{}.pb.gz", &kind[2..]));
        hprof_ok(&[
            "convert",
            text_file.to_str().unwrap(),
            out.to_str().unwrap(),
            kind,
        ]);
        for (sample_index, total) in types {
            assert_eq!(
                pprof_total(&out, sample_index),
                total,
                "{kind} {sample_index}"
            );
        }
    }
}

#[test]
fn times_and_lock_profiles_carry_exact_calls_and_contentions() {
    if require::go(Skipped::Test).is_none() {
        return;
    }
    let dir = temp_dir();
    profile_program(dir.path(), "cpu=times,cutoff=0,depth=8", "CallCounts", &[]);
    let text_file = dir.path().join("java.hprof.txt");
    let text = std::fs::read_to_string(&text_file).unwrap();
    let rows = last_rows(&text, "CPU TIME (ms) BEGIN", "CPU TIME (ms) END");
    let calls: i64 = rows.iter().map(|r| r[3].parse::<i64>().unwrap()).sum();
    let out = dir.path().join("times.pb.gz");
    hprof_ok(&[
        "convert",
        text_file.to_str().unwrap(),
        out.to_str().unwrap(),
        "--times",
    ]);
    assert_eq!(pprof_total(&out, "calls"), calls);
    // Folded stacks carry self milliseconds (a row whose share rounds to 0 ms has none); every
    // stack ends in a method the section lists. pprof's milliseconds are the same.
    let lines = folded(&text_file, &["--times"]);
    assert!(!lines.is_empty());
    assert_eq!(
        pprof_total(&out, "cpu"),
        lines.iter().map(|l| l.1).sum::<i64>()
    );
    let methods: Vec<&String> = rows.iter().map(|r| &r[5]).collect();
    for (stack, _) in &lines {
        let leaf = stack.rsplit(';').next().unwrap().to_string();
        assert!(methods.contains(&&leaf), "{leaf} not in {methods:?}");
    }

    let dir = temp_dir();
    profile_program(dir.path(), "monitor=y,depth=8", "LockContention", &[]);
    let text_file = dir.path().join("java.hprof.txt");
    let text = std::fs::read_to_string(&text_file).unwrap();
    let rows = last_rows(&text, "MONITOR TIME BEGIN", "MONITOR TIME END");
    assert!(!rows.is_empty(), "no contention recorded");
    let contentions: i64 = rows.iter().map(|r| r[3].parse::<i64>().unwrap()).sum();
    let out = dir.path().join("lock.pb.gz");
    hprof_ok(&[
        "convert",
        text_file.to_str().unwrap(),
        out.to_str().unwrap(),
        "--lock",
    ]);
    assert_eq!(pprof_total(&out, "contentions"), contentions);
    let lines = folded(&text_file, &["--lock"]);
    assert!(!lines.is_empty());
    assert_eq!(
        pprof_total(&out, "delay"),
        lines.iter().map(|l| l.1).sum::<i64>()
    );
}

/// Loads a flame graph page in Chromium with a probe that records script errors and lists
/// the titles of the frames drawn in its callees view (`name (value unit, share)`); returns
/// those titles and the errors.
fn flame_titles(page: &Path) -> (Vec<String>, String) {
    let probe = browser::probe(
        page,
        browser::FLAME_CALLEES_DRAWN,
        r##"
    var d = document.getElementById("callees").contentWindow.document;
    return Array.from(d.querySelectorAll("#frames > g > title")).map(function (t) { return t.textContent; }).join("|");
"##,
    );
    let titles = probe.result.split('|').map(str::to_string).collect();
    (titles, probe.errors.join(";"))
}

#[test]
fn every_kind_of_flame_graph_loads_in_a_browser_with_its_frames() {
    if require::chromium(Skipped::Test).is_none() {
        return;
    }
    // (kind option, agent options, program, a frame the graph must draw, the unit its frames
    // are counted in). For cpu=times the frame is spin, 300 ms of CPU time however loaded the
    // machine, not fib: its few milliseconds get what the timing thread credits at the ticks
    // that land in them (3 runs by hand: 4 ms, 0, 0; a fresh clone drew no fib frame).
    let cases: [(&str, &str, &str, &str, &str); 5] = [
        (
            "",
            "cpu=samples,depth=16",
            "CpuHot",
            "CpuHot.hot (",
            "samples",
        ),
        (
            "--times",
            "cpu=times,cutoff=0,depth=8",
            "CallCounts",
            "CallCounts.spin (",
            "milliseconds",
        ),
        (
            "--alloc",
            "heap=sites,depth=8,cutoff=0",
            "AllocSites",
            "AllocSites$Point (",
            "bytes",
        ),
        (
            "--live",
            "heap=sites,depth=8,cutoff=0",
            "AllocSites",
            "AllocSites$Point (",
            "bytes",
        ),
        (
            "--lock",
            "monitor=y,depth=8",
            "LockContention",
            "LockContention",
            "milliseconds",
        ),
    ];
    for (kind, options, program, frame, unit) in cases {
        let dir = temp_dir();
        let args: &[&str] = if program == "CpuHot" { &["800"] } else { &[] };
        profile_program(dir.path(), options, program, args);
        let page = dir.path().join("flame.html");
        let text = dir.path().join("java.hprof.txt");
        let mut convert = vec!["convert", text.to_str().unwrap(), page.to_str().unwrap()];
        if !kind.is_empty() {
            convert.push(kind);
        }
        hprof_ok(&convert);
        let (titles, errors) = flame_titles(&page);
        assert_eq!(errors, "", "{kind}: script errors");
        let drawn: Vec<&String> = titles.iter().filter(|t| t.starts_with(frame)).collect();
        assert!(!drawn.is_empty(), "{kind}: no {frame} frame in {titles:?}");
        assert!(
            drawn.iter().all(|t| t.contains(&format!(" {unit}"))),
            "{kind}: {drawn:?} not counted in {unit}"
        );
    }
}
