//! `hprof diff` on profiles of java/src/DiffWork.java, whose NEW version spends twice the time
//! in `b()`: the method named first with the right points (against the program's own CPU
//! time, and against `go tool pprof -normalize -diff_base`), in text, JSON and the HTML flame
//! graph (in headless Chromium), the gate's exit statuses, every input format mixed; and the
//! errors for mismatched inputs.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use hprof_testkit::browser;
use hprof_testkit::java::{finish, java_command, jdk17, libhprof};

use crate::support::synthetic::{self, Options};
use crate::support::{go_pprof_top, hprof, hprof_ok, run_hprof, temp_dir, write_file};

/// A CPU profile of DiffWork with b's slice `percent` % of the others', and the shares of
/// b's CPU time in the program's own measure, in percent.
struct Run {
    profile: PathBuf,
    b_share: f64,
}

/// Profiles DiffWork in `dir/<percent>` at 1 ms for 2.5 s of its CPU time.
fn profile(dir: &Path, percent: u32) -> Run {
    let dir = dir.join(percent.to_string());
    std::fs::create_dir_all(&dir).unwrap();
    // (native=n: Java frames only, so that b, a leaf method, has its self share as its
    // total: a sample at a safepoint poll in b has the JVM's frames above it otherwise.
    // lineno=n: one stack per method, as the comparisons below (folded lines, pprof's
    // rounding per stack) assume; the agent's walk gives every line of a loop its samples.)
    let agent = format!(
        "-agentpath:{}=cpu=samples,interval=1,depth=16,native=n,lineno=n",
        libhprof().display()
    );
    let child = java_command(
        &jdk17(),
        &dir,
        &[&agent],
        "DiffWork",
        &[&percent.to_string(), "2500"],
    )
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let run = finish(child);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let cpu = |what: &str| -> f64 {
        run.stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("cpu {what} ")))
            .unwrap_or_else(|| panic!("no cpu {what}: {}", run.stdout))
            .parse()
            .unwrap()
    };
    Run {
        profile: dir.join("java.hprof.txt"),
        b_share: cpu("b") * 100.0 / cpu("all"),
    }
}

/// How many rows of the CPU SAMPLES of the text profile `file` are `method`'s.
fn traces_ending_in(file: &Path, method: &str) -> usize {
    let text = std::fs::read_to_string(file).unwrap();
    let at = text.find("CPU SAMPLES BEGIN").expect("CPU SAMPLES");
    text[at..]
        .lines()
        .filter(|l| l.split_whitespace().nth(5) == Some(method))
        .count()
}

fn diff_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["diff", "--json", "-n", "0"];
    all.extend_from_slice(args);
    serde_json::from_str(&hprof_ok(&all)).expect("diff --json prints JSON")
}

fn method<'a>(doc: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    doc["methods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["method"] == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

/// The sampling noise of a change of share between two profiles of about 2,500 samples each
/// is at most sqrt(0.5 * 0.5 / 2500 * 2) = 1.4 points (one standard deviation); 4.5 points
/// is over three of them.
const NOISE: f64 = 4.5;

#[test]
fn the_method_that_doubled_comes_first_with_its_points_and_the_gate_fails() {
    let dir = temp_dir();
    let (base, new, small) = (
        profile(dir.path(), 100),
        profile(dir.path(), 200),
        profile(dir.path(), 125),
    );
    let (base_file, new_file) = (
        base.profile.to_str().unwrap(),
        new.profile.to_str().unwrap(),
    );
    let truth = new.b_share - base.b_share;
    assert!(truth > 10.0, "DiffWork's own measure: {truth} points");

    // Text: b first in both tables, with its points.
    let text = hprof_ok(&["diff", base_file, new_file]);
    let first_row = |table: &str| -> Vec<String> {
        let at = text
            .find(table)
            .unwrap_or_else(|| panic!("no {table}: {text}"));
        text[at..]
            .lines()
            .nth(2)
            .unwrap()
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    for table in [
        "Methods by change in self share",
        "Methods by change in total share",
    ] {
        let row = first_row(table);
        assert_eq!(row.last().unwrap(), "DiffWork.b", "{table}: {text}");
        let points: f64 = row[0].parse().unwrap();
        assert!(
            (points - truth).abs() < NOISE,
            "{points} vs {truth}: {text}"
        );
    }

    // JSON: the same, and BASE's and NEW's shares add up.
    let doc = diff_json(&[base_file, new_file]);
    assert_eq!(doc["methods"][0]["method"], "DiffWork.b", "{doc:#}");
    let b = method(&doc, "DiffWork.b");
    let points = b["self_points"].as_f64().unwrap();
    assert!((points - truth).abs() < NOISE, "{points} vs {truth}");
    let shares = b["new_self_percent"].as_f64().unwrap() - b["base_self_percent"].as_f64().unwrap();
    assert!((shares - points).abs() < 1e-9);
    // b calls nothing, but the kernel's frames (an interrupt, a page fault) sit above it in a
    // few samples: its total share is its self share and those, the CPU time its thread spent
    // in it, as DiffWork measures it.
    let total_points = b["total_points"].as_f64().unwrap();
    let shares =
        b["new_total_percent"].as_f64().unwrap() - b["base_total_percent"].as_f64().unwrap();
    assert!((shares - total_points).abs() < 1e-9);
    assert!(
        (total_points - truth).abs() < NOISE,
        "{total_points} vs {truth}"
    );
    assert!(method(&doc, "DiffWork.a")["self_points"].as_f64().unwrap() < 0.0);
    assert_eq!(doc["base"]["total"].as_i64(), Some(b_total(&doc, "base")));

    // The same points as go tool pprof's normalised difference of the same profiles: pprof
    // scales each of BASE's samples (one per trace) to NEW's total and rounds it to a whole
    // count, half a sample at most for each of BASE's traces that end in b, and prints
    // percents to 0.01.
    let (base_pb, new_pb) = (dir.path().join("base.pb.gz"), dir.path().join("new.pb.gz"));
    hprof_ok(&["convert", base_file, base_pb.to_str().unwrap()]);
    hprof_ok(&["convert", new_file, new_pb.to_str().unwrap()]);
    let pprof = go_pprof_flat_percent(&base_pb, &new_pb, "DiffWork.b");
    let rounding = traces_ending_in(&base.profile, "DiffWork.b") as f64 * 0.5 * 100.0
        / doc["new"]["total"].as_f64().unwrap()
        + 0.005;
    assert!(
        (pprof - points).abs() <= rounding,
        "pprof {pprof} vs ours {points} (pprof's rounding: {rounding})"
    );

    // The gate: b grew past 10 points; a change of a quarter is under it.
    let out = run_hprof(&["diff", base_file, new_file, "--fail-above", "10"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("self share of DiffWork.b grew +") && err.lines().count() == 2,
        "{err}"
    );
    let out = run_hprof(&["diff", base_file, new_file, "--fail-above-total", "10"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("total share of DiffWork.b"));
    let small_file = small.profile.to_str().unwrap();
    let smaller = small.b_share - base.b_share;
    assert!(smaller + NOISE < 10.0, "{smaller}");
    let out = run_hprof(&["diff", base_file, small_file, "--fail-above", "10"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Every input format, in any mix, gives the same comparison.
    let (base_folded, new_folded) = (
        dir.path().join("base.collapsed"),
        dir.path().join("new.collapsed"),
    );
    hprof_ok(&["convert", base_file, base_folded.to_str().unwrap()]);
    hprof_ok(&["convert", new_file, new_folded.to_str().unwrap()]);
    // `hprof convert` reads what it writes: folded stacks and pprof come back the same.
    for input in [&new_folded, &new_pb] {
        let again = dir.path().join("again.collapsed");
        hprof_ok(&["convert", input.to_str().unwrap(), again.to_str().unwrap()]);
        let mut lines: Vec<String> = std::fs::read_to_string(&again)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        let mut expected: Vec<String> = std::fs::read_to_string(&new_folded)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        lines.sort();
        expected.sort();
        assert_eq!(lines, expected, "{}", input.display());
    }
    for (b, n) in [
        (base_pb.as_path(), new_folded.as_path()),
        (base_folded.as_path(), new_pb.as_path()),
    ] {
        let mixed = diff_json(&[b.to_str().unwrap(), n.to_str().unwrap()]);
        let m = method(&mixed, "DiffWork.b");
        assert!(
            (m["self_points"].as_f64().unwrap() - points).abs() < 1e-9,
            "{m}"
        );
        assert_eq!(mixed["methods"][0]["method"], "DiffWork.b");
    }

    // -o diff.collapsed: `stack BASE NEW`, BASE scaled to NEW's total.
    let folded = dir.path().join("diff.collapsed");
    hprof_ok(&["diff", base_file, new_file, "-o", folded.to_str().unwrap()]);
    let lines = std::fs::read_to_string(&folded).unwrap();
    let (mut base_sum, mut new_sum) = (0i64, 0i64);
    let mut b_line = None;
    for line in lines.lines() {
        let mut parts = line.rsplitn(3, ' ');
        let n: i64 = parts.next().unwrap().parse().unwrap();
        let b: i64 = parts.next().unwrap().parse().unwrap();
        let stack = parts.next().unwrap();
        (base_sum, new_sum) = (base_sum + b, new_sum + n);
        if stack == "DiffWork.main;DiffWork.b" {
            b_line = Some((b, n));
        }
    }
    let new_total = doc["new"]["total"].as_i64().unwrap();
    assert_eq!(new_sum, new_total);
    // Rounding each scaled line moves the sum by at most half a sample per line.
    assert!((base_sum - new_total).abs() <= lines.lines().count() as i64);
    let (b_base, b_new) = b_line.expect("the stack of b");
    let folded_points = (b_new - b_base) as f64 * 100.0 / new_total as f64;
    assert!(
        (folded_points - points).abs() < 0.1,
        "{folded_points} vs {points}"
    );

    // -o diff.html in a browser.
    let html = dir.path().join("diff.html");
    hprof_ok(&["diff", base_file, new_file, "-o", html.to_str().unwrap()]);
    browser_checks(&html, points);
}

/// BASE's total from its methods' self values (every sample has a leaf).
fn b_total(doc: &serde_json::Value, side: &str) -> i64 {
    doc["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m[format!("{side}_self")].as_i64().unwrap())
        .sum()
}

/// `go tool pprof -top -normalize -diff_base BASE NEW`'s flat percentage for `function`.
fn go_pprof_flat_percent(base: &Path, new: &Path, function: &str) -> f64 {
    let diff_base = format!("-diff_base={}", base.display());
    let text = go_pprof_top(new, &["-normalize", &diff_base]);
    // "      flat  flat%   sum%        cum   cum%" rows: the second column is flat%.
    let row = text
        .lines()
        .find(|l| l.trim_end().ends_with(&format!(" {function}")))
        .unwrap_or_else(|| panic!("{function} not in {text}"));
    row.split_whitespace()
        .nth(1)
        .unwrap()
        .trim_end_matches('%')
        .parse()
        .unwrap()
}

/// Loads the page with a probe: the titles and fills of b's and a's frames, search, zoom, the
/// colour switch, the callers view; script errors.
fn browser_checks(html: &Path, points: f64) {
    let page = std::fs::read_to_string(html).unwrap();
    assert!(
        !page.contains("src=\"http") && !page.contains("href=\"http"),
        "the page loads from the network"
    );
    let probe = browser::probe(
        html,
        browser::FLAME_CALLEES_DRAWN,
        r##"
    var view = function (id) { return document.getElementById(id).contentWindow; };
    var w = view("callees"), d = w.document;
    var frame = function (doc, name) {
      return Array.from(doc.querySelectorAll("#frames > g")).filter(function (g) {
        return g.querySelector("title").textContent.indexOf(name + " (") === 0; })[0];
    };
    var b = frame(d, "DiffWork.b"), a = frame(d, "DiffWork.a");
    var title = b.querySelector("title").textContent;
    var fillB = b.querySelector("rect").getAttribute("fill");
    var fillA = a.querySelector("rect").getAttribute("fill");
    document.getElementById("colour-by").click();
    var switched = b.querySelector("rect").getAttribute("fill") === b.querySelector("rect").getAttribute("data-total")
      && document.getElementById("colour-by").textContent.indexOf("self") >= 0;
    w.search("DiffWork\\.b");
    var matched = d.getElementById("matched").textContent;
    w.zoom(b);
    var unzoom = !d.getElementById("unzoom").classList.contains("hide");
    document.getElementById("toggle").click();
    var inverted = document.getElementById("callers").style.display !== "none";
    var callers = frame(view("callers").document, "DiffWork.b");
    var callersTitle = callers ? callers.querySelector("title").textContent : "none";
    return [title, fillB, fillA, switched, matched, unzoom, inverted, callersTitle].join("|");
"##,
    );
    let result = &probe.result;
    let fields: Vec<&str> = result.split('|').collect();
    assert!(fields.len() >= 8, "{result}");
    // b's tooltip: both values, both changes; its self change is the method's.
    let title = fields[0];
    assert!(
        title.contains("(new ") && title.contains("; base ") && title.contains(" samples"),
        "{title}"
    );
    let self_points: f64 = title
        .split("self ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!((self_points - points).abs() < 0.006, "{title} vs {points}");
    let rgb = |fill: &str| -> Vec<u32> {
        fill.trim_start_matches("rgb(")
            .trim_end_matches(')')
            .split(',')
            .map(|c| c.parse().unwrap())
            .collect()
    };
    let (b, a) = (rgb(fields[1]), rgb(fields[2]));
    assert!(b[0] > b[2] + 100, "b grew: red, {result}");
    assert!(a[2] > a[0], "a shrank: blue, {result}");
    assert_eq!(fields[3], "true", "colour switch: {result}");
    assert!(
        fields[4].starts_with("Matched: ") && fields[4] != "Matched: 0%",
        "{result}"
    );
    assert_eq!(fields[5], "true", "zoom: {result}");
    assert_eq!(fields[6], "true", "callers view: {result}");
    assert!(fields[7].starts_with("DiffWork.b (new "), "{result}");
    assert!(probe.errors.is_empty(), "script errors: {:?}", probe.errors);
}

/// A text profile holding one CPU SAMPLES section, or one SITES section.
fn text_profile(sites: bool) -> String {
    let mut t = String::from(
        "JAVA PROFILE 1.0.1, created Tue Nov 24 14:00:00 2026\n\n\
TRACE 300001:\n\tA.hot(A.java:1)\n\tA.main(A.java:2)\n",
    );
    if sites {
        t.push_str(
            "SITES BEGIN (ordered by live bytes) Tue Nov 24 14:00:01 2026\n\
          percent          live          alloc'ed  stack class\n\
 rank   self  accum     bytes objs     bytes  objs trace name\n\
    1 100.00% 100.00%       160   10       160    10 300001 byte[]\n\
SITES END\n",
        );
    } else {
        t.push_str(
            "CPU SAMPLES BEGIN (total = 10) Tue Nov 24 14:00:01 2026\n\
rank   self  accum   count trace method\n\
   1 100.00% 100.00%      10 300001 A.hot\nCPU SAMPLES END\n",
        );
    }
    t
}

#[test]
fn mismatched_inputs_get_clear_errors_and_status_2() {
    let dir = temp_dir();
    let cpu = write_file(dir.path(), "cpu.txt", text_profile(false).as_bytes());
    let sites = write_file(dir.path(), "sites.txt", text_profile(true).as_bytes());
    let wide = synthetic::population(Options::default());
    let narrow = synthetic::population(Options {
        id_size: hprof_format::IdSize::Four,
        ..Options::default()
    });
    let wide = write_file(dir.path(), "wide.hprof", &wide);
    let narrow = write_file(dir.path(), "narrow.hprof", &narrow);
    let junk = write_file(dir.path(), "junk.bin", b"\x00\x01 not a profile at all");
    let path = |p: &PathBuf| p.to_str().unwrap().to_string();
    let cases: [(Vec<String>, &str); 6] = [
        // The synthetic dump holds CPU samples too: a kind flag makes it a profile.
        (
            vec![path(&cpu), path(&wide), "--heap".into()],
            "holds no heap dump",
        ),
        (vec![path(&cpu), path(&sites)], "holds CPU SAMPLES, "),
        (
            vec![path(&cpu), path(&sites), "--cpu".into()],
            "no CPU SAMPLES section",
        ),
        (vec![path(&wide), path(&narrow)], "8-byte identifiers"),
        (
            vec![path(&cpu), path(&junk)],
            "not a profile written by hprof",
        ),
        (
            vec![path(&cpu), path(&cpu), "--fail-above".into(), "lots".into()],
            "--fail-above",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["diff"];
        all.extend(args.iter().map(String::as_str));
        let out = run_hprof(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {err}");
        assert!(err.contains(expected), "{all:?}: {err}");
    }
    // (A heap dump with no profile against a profile: e2e_diff_heap.rs, on a jcmd dump.)
    let sites_json = diff_json(&[path(&sites).as_str(), path(&sites).as_str()]);
    assert_eq!(sites_json["section"], "SITES");
    assert!(sites_json["offences"].as_array().unwrap().is_empty());
}

/// A text profile whose SITES section allocates `bytes` bytes of byte[] at A.hot and 1,000 bytes
/// of java.lang.String at A.main.
fn sites_profile(bytes: u64) -> String {
    format!(
        "JAVA PROFILE 1.0.1, created Tue Nov 24 14:00:00 2026\n\n\
TRACE 300001:\n\tA.hot(A.java:1)\n\tA.main(A.java:2)\nTRACE 300002:\n\tA.main(A.java:3)\n\
SITES BEGIN (ordered by live bytes) Tue Nov 24 14:00:01 2026\n\
          percent          live          alloc'ed  stack class\n\
 rank   self  accum     bytes objs     bytes  objs trace name\n\
    1 50.00% 50.00%      {bytes}   10      {bytes}    10 300001 byte[]\n\
    2 50.00% 100.00%     1000   10      1000    10 300002 java.lang.String\n\
SITES END\n"
    )
}

#[test]
fn allocation_sites_compare_by_allocated_class() {
    let dir = temp_dir();
    let base = write_file(dir.path(), "base.txt", sites_profile(1000).as_bytes());
    let new = write_file(dir.path(), "new.txt", sites_profile(3000).as_bytes());
    let doc = diff_json(&["--alloc", base.to_str().unwrap(), new.to_str().unwrap()]);
    assert_eq!(doc["section"], "SITES");
    assert_eq!(doc["unit"], "bytes");
    // The allocated class is the leaf frame: byte[] went from half to three quarters.
    let first = &doc["methods"][0];
    assert_eq!(first["method"], "byte[]", "{doc:#}");
    assert!((first["self_points"].as_f64().unwrap() - 25.0).abs() < 1e-9);
    let string = method(&doc, "java.lang.String");
    assert!((string["self_points"].as_f64().unwrap() + 25.0).abs() < 1e-9);
    // --live reads the live columns, the same figures here.
    let live = diff_json(&["--live", base.to_str().unwrap(), new.to_str().unwrap()]);
    assert_eq!(live["methods"][0]["method"], "byte[]");
}

#[test]
fn endless_inputs_on_either_side_end_at_once_naming_the_side_and_the_offset() {
    use crate::cli_reliability::{bounded, fifo_of_zeros};
    const TEXT: &[u8] = b"JAVA PROFILE 1.0.1, created Tue Nov 24 14:00:00 2026\n";
    const BINARY: &[u8] = b"JAVA PROFILE 1.0.2\0\0\0\0\x08\0\0\0\0\0\0\0\0";
    let dir = temp_dir();
    let cpu = write_file(dir.path(), "cpu.txt", text_profile(false).as_bytes());
    let cpu = cpu.to_str().unwrap();
    let fifo = |name: &str, head: &'static [u8]| {
        fifo_of_zeros(dir.path(), name, head).display().to_string()
    };
    let (text, binary) = (fifo("text", TEXT), fifo("binary", BINARY));
    let zero = Some(Path::new("/dev/zero"));
    let cases: [([&str; 2], Option<&Path>, &str); 5] = [
        (["/dev/zero", cpu], None, "BASE"),
        ([cpu, "/dev/zero"], None, "NEW"),
        ([cpu, "-"], zero, "NEW"),
        ([&text, cpu], None, "BASE"),
        ([cpu, &binary], None, "NEW"),
    ];
    for (inputs, stdin, side) in cases {
        let args = ["diff", inputs[0], inputs[1]];
        let run = bounded(&args, stdin, std::time::Duration::from_secs(30));
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with(&format!("hprof: error: {side}: ")),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("offset"), "{args:?}: no offset in {stderr}");
    }
    // A profile from standard input is read as from a file.
    let out = hprof()
        .args(["diff", "--json", "-", cpu])
        .stdin(std::fs::File::open(cpu).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["methods"][0]["method"], "A.hot");
    let both = run_hprof(&["diff", "-", "-"]);
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn a_heap_dump_cut_short_on_either_side_is_named_with_its_offset() {
    let dir = temp_dir();
    let whole = synthetic::population(Options {
        segment_limit: 256,
        ..Options::default()
    });
    // Cut in the middle of the heap dump's second segment.
    let mut at = whole.iter().position(|&b| b == 0).unwrap() + 1 + 12;
    let mut segments = 0;
    let cut_at = loop {
        let len = u32::from_be_bytes(whole[at + 5..at + 9].try_into().unwrap()) as usize;
        if whole[at] == 0x1c {
            segments += 1;
            if segments == 2 {
                break at + 9 + len / 2;
            }
        }
        at += 9 + len;
    };
    let cut = write_file(dir.path(), "cut.hprof", &whole[..cut_at]);
    // And before its first heap record.
    let header_len = whole.iter().position(|&b| b == 0).unwrap() + 1 + 12;
    let early = write_file(dir.path(), "early.hprof", &whole[..header_len + 20]);
    let whole = write_file(dir.path(), "whole.hprof", &whole);
    let (cut, whole) = (cut.to_str().unwrap(), whole.to_str().unwrap());
    let early = early.to_str().unwrap();
    for (inputs, side, cut) in [
        ([whole, cut], "NEW", cut),
        ([cut, whole], "BASE", cut),
        ([early, whole], "BASE", early),
    ] {
        let out = run_hprof(&["diff", inputs[0], inputs[1]]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{inputs:?}: {err}");
        assert!(
            err.starts_with(&format!("hprof: error: {side}: {cut}: ")),
            "{inputs:?}: {err}"
        );
        assert!(err.contains("offset"), "{inputs:?}: {err}");
        assert!(err.contains("--allow-truncated"), "{inputs:?}: {err}");
    }
    // --allow-truncated compares what was read, and says what is missing.
    let out = run_hprof(&["diff", "--allow-truncated", "--json", whole, cut]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(&format!("warning: {cut} is incomplete")),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.is_object(), "{doc}");
    // It is for heap dumps only.
    let cpu = write_file(dir.path(), "cpu.txt", text_profile(false).as_bytes());
    let cpu = cpu.to_str().unwrap();
    let out = run_hprof(&["diff", "--allow-truncated", cpu, cpu]);
    assert_eq!(out.status.code(), Some(2));
}
