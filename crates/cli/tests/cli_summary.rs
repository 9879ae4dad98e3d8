//! `hprof summary` on files built by our writer: counts, histogram, JSON, errors.

use hprof_format::{IdSize, Version};

use crate::support::synthetic::{Options, known, population};
use crate::support::{class_row, hprof, run_hprof, summary_json, temp_dir, write_file};

fn all_layouts() -> Vec<Options> {
    let mut all = Vec::new();
    for version in [Version::V1_0_1, Version::V1_0_2] {
        for id_size in [IdSize::Four, IdSize::Eight] {
            all.push(Options {
                version,
                id_size,
                ..Options::default()
            });
        }
    }
    all
}

#[test]
fn counts_every_record_kind_and_class() {
    let dir = temp_dir();
    for options in all_layouts() {
        let path = write_file(dir.path(), "pop.hprof", &population(options));
        let s = summary_json(&path);
        assert_eq!(
            s["header"]["id_size"],
            options.id_size.bytes() as u64,
            "{options:?}"
        );
        assert_eq!(s["header"]["version"], options.version.as_str());
        assert_eq!(s["header"]["timestamp_ms"], 1_795_000_000_000u64);
        assert_eq!(s["records"]["STRING"], 19);
        assert_eq!(s["records"]["LOAD CLASS"], 7);
        assert_eq!(s["records"]["STACK FRAME"], 2);
        assert_eq!(s["records"]["STACK TRACE"], 2);
        assert_eq!(s["records"]["START THREAD"], 1);
        assert_eq!(s["records"]["END THREAD"], 1);
        assert_eq!(s["records"]["CPU SAMPLES"], 1);
        assert_eq!(s["records"]["ALLOC SITES"], 1);
        assert_eq!(s["records"]["HEAP SUMMARY"], 1);
        assert_eq!(s["records"]["CONTROL SETTINGS"], 1);
        match options.version {
            Version::V1_0_1 => assert_eq!(s["records"]["HEAP DUMP"], 1),
            Version::V1_0_2 => {
                assert_eq!(s["records"]["HEAP DUMP SEGMENT"], 1);
                assert_eq!(s["records"]["HEAP DUMP END"], 1);
            }
        }
        assert_eq!(s["heap_records"]["CLASS DUMP"], 7);
        assert_eq!(
            s["heap_records"]["INSTANCE DUMP"],
            known::POINTS + known::POINTS3 + known::SEGMENTS
        );
        assert_eq!(s["heap_records"]["OBJECT ARRAY DUMP"], known::POINT_ARRAYS);
        assert_eq!(
            s["heap_records"]["PRIMITIVE ARRAY DUMP"],
            known::INT_ARRAYS + known::BYTE_ARRAYS
        );
        for root in [
            "ROOT UNKNOWN",
            "ROOT JNI GLOBAL",
            "ROOT JNI LOCAL",
            "ROOT JAVA FRAME",
            "ROOT NATIVE STACK",
            "ROOT STICKY CLASS",
            "ROOT THREAD BLOCK",
            "ROOT MONITOR USED",
            "ROOT THREAD OBJECT",
        ] {
            assert_eq!(s["gc_roots"][root], 1, "{root}");
        }
        assert_eq!(s["gc_roots"].as_object().unwrap().len(), 9);
        assert_eq!(
            class_row(&s, "demo.Point"),
            Some((known::POINTS, known::POINTS * known::POINT_SIZE))
        );
        assert_eq!(
            class_row(&s, "demo.Point3"),
            Some((known::POINTS3, known::POINTS3 * known::POINT3_SIZE))
        );
        assert_eq!(
            class_row(&s, "demo.Segment"),
            Some((known::SEGMENTS, known::SEGMENTS * known::SEGMENT_SIZE))
        );
        assert_eq!(
            class_row(&s, "demo.Point[]"),
            Some((
                known::POINT_ARRAYS,
                known::POINT_ARRAYS * known::POINT_ARRAY_SIZE
            ))
        );
        assert_eq!(
            class_row(&s, "int[]"),
            Some((known::INT_ARRAYS, known::INT_ARRAYS * known::INT_ARRAY_SIZE))
        );
        assert_eq!(
            class_row(&s, "byte[]"),
            Some((
                known::BYTE_ARRAYS,
                known::BYTE_ARRAYS * known::BYTE_ARRAY_SIZE
            ))
        );
        let instances = known::POINTS
            + known::POINTS3
            + known::SEGMENTS
            + known::POINT_ARRAYS
            + known::INT_ARRAYS
            + known::BYTE_ARRAYS;
        assert_eq!(s["totals"]["instances"], instances);
        assert_eq!(s["totals"]["classes"], 6);
        assert_eq!(s["totals"]["shallow_bytes"], 4520);
        // Biggest first: Point (2400) then Segment (1280).
        assert_eq!(s["classes"][0]["name"], "demo.Point");
        assert_eq!(s["classes"][1]["name"], "demo.Segment");
    }
}

#[test]
fn top_limits_the_histogram_but_not_the_totals() {
    let dir = temp_dir();
    let path = write_file(dir.path(), "pop.hprof", &population(Options::default()));
    let out =
        crate::support::hprof_ok(&["summary", "--json", "--top", "2", path.to_str().unwrap()]);
    let s: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(s["classes"].as_array().unwrap().len(), 2);
    assert_eq!(s["totals"]["classes"], 6);
    assert_eq!(s["totals"]["shallow_bytes"], 4520);
}

#[test]
fn text_output_lists_counts_and_classes() {
    let dir = temp_dir();
    let path = write_file(dir.path(), "pop.hprof", &population(Options::default()));
    let text = crate::support::hprof_ok(&["summary", path.to_str().unwrap()]);
    assert!(
        text.contains("JAVA PROFILE 1.0.2, identifier size 8"),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().eq(["INSTANCE", "DUMP", "150"])),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().eq(["ROOT", "JAVA", "FRAME", "1"])),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().eq(["100", "2400", "demo.Point"])),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l
            .split_whitespace()
            .eq(["164", "4520", "total", "(6", "classes)"])),
        "{text}"
    );
}

#[test]
fn standard_input_gives_the_same_summary() {
    use std::io::Write;
    use std::process::Stdio;
    let bytes = population(Options {
        segment_limit: 512,
        ..Options::default()
    });
    let dir = temp_dir();
    let path = write_file(dir.path(), "pop.hprof", &bytes);
    let from_file = summary_json(&path);
    let mut child = hprof()
        .args(["summary", "--json", "--top", "0", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let mut from_stdin: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(from_stdin["file"], "-");
    from_stdin["file"] = from_file["file"].clone();
    assert_eq!(from_stdin, from_file);
    assert!(from_file["records"]["HEAP DUMP SEGMENT"].as_u64().unwrap() > 3);
}

#[test]
fn truncated_files_fail_with_the_offset_and_record_kind() {
    let bytes = population(Options::default());
    let dir = temp_dir();
    let mut cuts_in_heap_dump = 0;
    // Every 7th prefix: each must fail cleanly (exit 1, one line naming an offset) or, at a
    // record boundary, succeed.
    for len in (0..bytes.len()).step_by(7) {
        let path = write_file(dir.path(), "cut.hprof", &bytes[..len]);
        let out = run_hprof(&["summary", path.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
        if out.status.success() {
            continue;
        }
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with("hprof: error: "), "{stderr}");
        if len >= 31 {
            assert!(stderr.contains("at offset 0x"), "{len}: {stderr}");
        }
        if stderr.contains("HEAP DUMP SEGMENT") || stderr.contains("INSTANCE DUMP") {
            cuts_in_heap_dump += 1;
        }
    }
    assert!(cuts_in_heap_dump > 100, "{cuts_in_heap_dump}");
}

#[test]
fn a_file_that_is_not_hprof_is_rejected() {
    let dir = temp_dir();
    let path = write_file(
        dir.path(),
        "notes.txt",
        b"JAVA PROFILE 9.9.9\0 not really a profile at all",
    );
    let out = run_hprof(&["summary", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("notes.txt"), "{stderr}");
    let missing = run_hprof(&["summary", "/nonexistent/x.hprof"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot open /nonexistent/x.hprof"));
}

#[test]
fn partial_reads_a_file_cut_inside_a_record_up_to_the_last_complete_one() {
    let bytes = population(Options::default());
    let dir = temp_dir();
    // Cut inside the heap dump segment: strict reading fails, --partial reports what came before.
    let (_, mut records) = hprof_format::Records::new(&bytes).unwrap();
    let mut segment_at = 0;
    while let Some((rh, record)) = records.next().unwrap() {
        if let hprof_format::Record::HeapDumpSegment(_) = record {
            segment_at = rh.offset as usize;
        }
    }
    let path = write_file(dir.path(), "cut.hprof", &bytes[..segment_at + 50]);
    assert_eq!(
        run_hprof(&["summary", path.to_str().unwrap()])
            .status
            .code(),
        Some(1)
    );
    let out = run_hprof(&["summary", "--partial", "--json", path.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("stopped at the last complete record"));
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["records"]["STRING"], 19);
    assert!(s["records"].get("HEAP DUMP SEGMENT").is_none());
    let print = run_hprof(&["print", "--partial", path.to_str().unwrap()]);
    assert!(print.status.success());
    assert!(String::from_utf8_lossy(&print.stdout).contains("CPU SAMPLES END"));
}
