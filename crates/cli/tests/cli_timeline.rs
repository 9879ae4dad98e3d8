//! The timeline of the HTML flame graph page, in headless Chromium, on a synthetic recording
//! whose intervals the page gets packed both ways (dense: most stacks in each interval, some
//! values past a nibble; sparse: a few stacks now and then): the flame graph of every range
//! holds what `convert --from --to` gives for it, drawn of its callees or of its callers, and
//! a search there matches the value of that range's samples with a matching frame.

use std::collections::BTreeMap;
use std::path::Path;

use hprof_jfr::pools::{FRAME_JIT, FrameRef, Pools};
use hprof_jfr::schema::{self, id};
use hprof_jfr::writer::{self, Put};
use hprof_testkit::browser;
use hprof_testkit::require::{self, Skipped};

use crate::support::{hprof_ok, temp_dir};

const START_NANOS: i64 = 1_700_000_000_000_000_000;

/// Eight seconds on two threads: the first four, every 10 ms, an execution sample of each of
/// eight stacks but one (in turn), twenty of the first, and an allocation sample of 1 MiB
/// from each of them; the
/// last four, a sample of one stack every 50 ms and of another every 130 ms, with an
/// allocation sample of a few bytes.
fn recording() -> Vec<u8> {
    let mut pools = Pools::new();
    let class = pools.class("Work");
    let main = pools.method(class, "main", "()V");
    let frame = |method| FrameRef {
        method,
        line: 1,
        bci: 0,
        kind: FRAME_JIT,
    };
    let stacks: Vec<i64> = (0..8)
        .map(|s| {
            let leaf = pools.method(class, &format!("leaf{s}"), "()V");
            let middle = pools.method(class, &format!("middle{}", s % 3), "()V");
            // Leaf first; stack 5 calls main again (a name twice in one stack).
            let mut frames = vec![frame(leaf), frame(middle), frame(main)];
            if s == 5 {
                frames.insert(1, frame(main));
            }
            pools.stack(&frames, false)
        })
        .collect();
    let threads = [pools.thread(1, 101, "main"), pools.thread(2, 102, "worker")];
    let bytes = pools.class("[B");
    let mut events = Vec::new();
    let mut body = Vec::new();
    let mut sample = |events: &mut Vec<u8>, at: i64, stack: i64, thread: i64| {
        body.clear();
        body.long(at);
        body.long(thread);
        body.long(stack);
        body.long(0);
        writer::event(events, id::EXECUTION_SAMPLE, &body);
    };
    for step in 0..400i64 {
        let at = step * 10_000_000 + 3_000_000;
        for (s, &stack) in stacks.iter().enumerate() {
            if s as i64 == step % 8 {
                continue;
            }
            let copies = if s == 0 { 20 } else { 1 };
            for _ in 0..copies {
                sample(&mut events, at, stack, threads[s % 2]);
            }
            let mut alloc = Vec::new();
            alloc.long(at + 1_000_000);
            alloc.long(threads[0]);
            alloc.long(stack);
            alloc.long(bytes);
            alloc.long((1 << 20) + s as i64);
            writer::event(&mut events, id::OBJECT_ALLOCATION_SAMPLE, &alloc);
        }
    }
    for step in 0..80i64 {
        sample(
            &mut events,
            4_000_000_000 + step * 50_000_000 + 7_000_000,
            stacks[1],
            threads[1],
        );
    }
    for step in 0..30i64 {
        let at = 4_000_000_000 + step * 130_000_000 + 9_000_000;
        sample(&mut events, at, stacks[7], threads[0]);
        let mut alloc = Vec::new();
        alloc.long(at);
        alloc.long(threads[1]);
        alloc.long(stacks[3]);
        alloc.long(bytes);
        alloc.long(3 + step);
        writer::event(&mut events, id::OBJECT_ALLOCATION_SAMPLE, &alloc);
    }
    writer::chunk(
        START_NANOS,
        8_000_000_000,
        0,
        1_000_000_000,
        &events,
        pools.constant_pools(),
        &schema::metadata(),
    )
}

/// Each frame's value in the flame graph of folded `lines`: a frame's value summed over the
/// stacks through it (a frame twice in a stack counts twice), as the page's `rangeFrames`.
fn frame_values(lines: &str) -> BTreeMap<String, f64> {
    let mut values = BTreeMap::new();
    for (frames, value) in folded_lines(lines) {
        for frame in frames {
            *values.entry(frame).or_default() += value;
        }
    }
    values
}

/// The page's flame graph of each range (`(from, to)` seconds) after `hprofTimeline.select`.
fn page_ranges(page: &Path, ranges: &[(&str, &str)]) -> Vec<BTreeMap<String, f64>> {
    let selects: Vec<String> = ranges
        .iter()
        .map(|(from, to)| {
            format!("t.select({from}, {to}); out.push(JSON.stringify(t.rangeFrames()));")
        })
        .collect();
    let probe = browser::probe(
        page,
        "window.hprofTimeline",
        &format!(
            "var t = window.hprofTimeline, out = []; {} return out.join(\"\\n\");",
            selects.join(" ")
        ),
    );
    assert!(probe.errors.is_empty(), "{:?}", probe.errors);
    let ranges: Vec<BTreeMap<String, f64>> = probe
        .result
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    ranges
}

/// A directory holding the synthetic recording, and the recording's path; none without a
/// browser (the skip recorded).
fn recorded() -> Option<(tempfile::TempDir, String)> {
    require::chromium(Skipped::Test)?;
    let dir = temp_dir();
    let jfr = dir.path().join("work.jfr");
    std::fs::write(&jfr, recording()).unwrap();
    let jfr = jfr.to_str().unwrap().to_string();
    Some((dir, jfr))
}

#[test]
fn every_range_of_the_timeline_draws_what_convert_gives_for_it() {
    let Some((dir, jfr)) = recorded() else {
        return;
    };
    let jfr = jfr.as_str();
    // Whole, the dense half, the sparse half, across both, one interval.
    let ranges = [
        ("0", "8"),
        ("0", "4"),
        ("4", "8"),
        ("1.5", "6"),
        ("2", "2.02"),
    ];
    for kind in ["--cpu", "--alloc"] {
        let page = dir.path().join(format!("work{kind}.html"));
        hprof_ok(&["convert", jfr, page.to_str().unwrap(), kind]);
        // (Both packings are in the page.)
        let html = std::fs::read_to_string(&page).unwrap();
        let data = html.split("id=\"tl-data\">").nth(1).unwrap();
        let data: serde_json::Value =
            serde_json::from_str(data.split("</script>").next().unwrap()).unwrap();
        let dense = data["dense"].as_array().unwrap();
        assert!(
            dense.contains(&0.into()) && dense.contains(&1.into()),
            "{kind}: {dense:?}"
        );
        let drawn = page_ranges(&page, &ranges);
        assert_eq!(drawn.len(), ranges.len(), "{kind}");
        for ((from, to), drawn) in ranges.iter().zip(drawn) {
            let folded = dir.path().join("range.collapsed");
            let path = folded.to_str().unwrap();
            hprof_ok(&["convert", jfr, path, kind, "--from", from, "--to", to]);
            let want = frame_values(&std::fs::read_to_string(&folded).unwrap());
            assert!(!want.is_empty(), "{kind} {from}-{to}");
            assert_eq!(drawn, want, "{kind} {from}-{to}");
        }
    }
}

/// The lines of a folded file: each stack's frames (root first) and value.
fn folded_lines(text: &str) -> Vec<(Vec<String>, f64)> {
    text.lines()
        .map(|line| {
            let (stack, value) = line.rsplit_once(' ').expect("a folded line");
            (
                stack.split(';').map(str::to_string).collect(),
                value.parse().expect("a value"),
            )
        })
        .collect()
}

#[test]
fn a_ranges_callers_and_searches_hold_what_convert_gives_for_it() {
    let Some((dir, jfr)) = recorded() else {
        return;
    };
    let jfr = jfr.as_str();
    let ranges = [("0", "8"), ("0", "4"), ("4", "8"), ("1.5", "6")];
    // Each search, and which frames it matches: a regular expression, a name that is twice in
    // one stack (its samples count once), and text that is no regular expression (searched
    // as plain text).
    type Matches = fn(&str) -> bool;
    let searches: [(&str, Matches); 4] = [
        ("middle1", |f| f.contains("middle1")),
        ("leaf[25]$", |f| {
            f.ends_with("leaf2") || f.ends_with("leaf5")
        }),
        ("main", |f| f.contains("main")),
        ("leaf(", |f| f.contains("leaf(")),
    ];
    let page = dir.path().join("work.html");
    hprof_ok(&["convert", jfr, page.to_str().unwrap(), "--cpu"]);
    let texts: Vec<String> = searches
        .iter()
        .map(|(text, _)| serde_json::to_string(text).unwrap())
        .collect();
    let body: String = ranges
        .iter()
        .map(|(from, to)| {
            format!(
                "t.select({from}, {to}); t.callers(false); \
                 out.push(JSON.stringify([{texts}].map(function (s) {{ return t.search(s); }}))); \
                 t.search(''); t.callers(true); \
                 out.push(JSON.stringify(t.rootFrames())); out.push(JSON.stringify(t.rangeFrames())); \
                 t.callers(false); out.push(JSON.stringify(t.rootFrames()));",
                texts = texts.join(",")
            )
        })
        .collect();
    let probe = browser::probe(
        &page,
        "window.hprofTimeline",
        &format!("var t = window.hprofTimeline, out = []; {body} return out.join(\"\\n\");"),
    );
    assert!(probe.errors.is_empty(), "{:?}", probe.errors);
    let lines: Vec<&str> = probe.result.lines().collect();
    assert_eq!(lines.len(), 4 * ranges.len(), "{}", probe.result);
    for ((from, to), got) in ranges.iter().zip(lines.chunks(4)) {
        let folded = dir.path().join("range.collapsed");
        let path = folded.to_str().unwrap();
        hprof_ok(&["convert", jfr, path, "--cpu", "--from", from, "--to", to]);
        let text = std::fs::read_to_string(&folded).unwrap();
        let stacks = folded_lines(&text);
        assert!(!stacks.is_empty(), "{from}-{to}");
        let want_matches: Vec<f64> = searches
            .iter()
            .map(|(_, matches)| {
                stacks
                    .iter()
                    .filter(|(frames, _)| frames.iter().any(|f| matches(f)))
                    .map(|(_, v)| v)
                    .sum()
            })
            .collect();
        let got_matches: Vec<f64> = serde_json::from_str(got[0]).unwrap();
        assert_eq!(got_matches, want_matches, "{from}-{to}: searches");
        // (leaf2 and leaf5 run in the first four seconds only.)
        let first_half = *from == "0" || *from == "1.5";
        assert!(
            want_matches[0] > 0.0
                && (want_matches[1] > 0.0) == first_half
                && want_matches[2] == stacks.iter().map(|(_, v)| v).sum::<f64>()
                && want_matches[3] == 0.0,
            "{from}-{to}: {want_matches:?}"
        );
        let by = |frame: fn(&[String]) -> &String| {
            let mut values = BTreeMap::new();
            for (frames, v) in &stacks {
                *values.entry(frame(frames).clone()).or_insert(0.0) += v;
            }
            values
        };
        let callers_root: BTreeMap<String, f64> = serde_json::from_str(got[1]).unwrap();
        assert_eq!(
            callers_root,
            by(|f| f.last().unwrap()),
            "{from}-{to}: the callers' bottom row is the leaves"
        );
        let callers_frames: BTreeMap<String, f64> = serde_json::from_str(got[2]).unwrap();
        assert_eq!(callers_frames, frame_values(&text), "{from}-{to}: callers");
        let callees_root: BTreeMap<String, f64> = serde_json::from_str(got[3]).unwrap();
        assert_eq!(
            callees_root,
            by(|f| f.first().unwrap()),
            "{from}-{to}: the callees' bottom row is the roots"
        );
    }
}
