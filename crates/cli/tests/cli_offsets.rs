//! Every error on a corrupt or foreign input names the byte offset where it is (issue 26),
//! or for what a file lacks, where the file, read to its end, ends: one crafted input per
//! kind of error the mutation fuzzer (fuzz/mutate.py) found without one.

use std::path::Path;

use hprof_format::{BasicType, Header, HeapRecord, IdSize, Version, Writer};

use crate::support::{run_hprof, temp_dir, write_file};

/// Runs `hprof args`, which must fail with status 1; its standard error.
fn fails(args: &[&str]) -> String {
    let out = run_hprof(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "hprof {args:?}: {stderr}");
    stderr
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

const HEADER: Header = Header {
    version: Version::V1_0_2,
    id_size: IdSize::Eight,
    timestamp_ms: 0,
};

/// A heap dump: class java/lang/Object (0x10) and class Node (0x20, one reference field
/// `next`); Node 0x100 (held by a JNI global) refers to `next`; 0x200, an instance of a
/// class with no CLASS DUMP. Returns the file and the offset of its first heap dump record.
fn heap_dump(next: u64) -> (Vec<u8>, u64) {
    let mut w = Writer::new(Vec::new(), HEADER).unwrap();
    w.utf8(0, 1, b"java/lang/Object").unwrap();
    w.utf8(0, 2, b"Node").unwrap();
    w.utf8(0, 3, b"next").unwrap();
    w.load_class(0, 1, 0x10, 0, 1).unwrap();
    w.load_class(0, 2, 0x20, 0, 2).unwrap();
    w.begin_heap_dump(0).unwrap();
    w.class_dump(0x10, 0, 0, 0, 0, 0, 0, &[], &[], &[]).unwrap();
    w.class_dump(
        0x20,
        0,
        0x10,
        0,
        0,
        0,
        8,
        &[],
        &[],
        &[(3, BasicType::Object)],
    )
    .unwrap();
    w.instance_dump(0x100, 0, 0x20, &next.to_be_bytes())
        .unwrap();
    w.instance_dump(0x200, 0, 0x30, &[]).unwrap();
    w.root(&HeapRecord::RootJniGlobal {
        object_id: 0x100,
        jni_global_ref_id: 1,
    })
    .unwrap();
    w.end_heap_dump().unwrap();
    let bytes = w.finish().unwrap();
    let (_, records) = hprof_format::Records::new(&bytes).unwrap();
    let dump_at = records
        .map(|r| r.unwrap().0)
        .find(|head| head.tag == hprof_format::Tag::HeapDumpSegment)
        .unwrap()
        .offset;
    (bytes, dump_at)
}

#[test]
fn foreign_and_empty_files_are_refused_at_their_offset() {
    let dir = temp_dir();
    let (dump, dump_at) = heap_dump(0);
    let dump = write_file(dir.path(), "heap.hprof", &dump);
    // A heap dump where a profile is wanted: its first heap dump record.
    for command in ["top", "convert"] {
        let mut args = vec![command, path(&dump)];
        let out = dir.path().join("out.collapsed");
        if command == "convert" {
            args.push(path(&out));
        }
        let stderr = fails(&args);
        assert!(stderr.contains("a heap dump with no profile"), "{stderr}");
        assert!(
            stderr.contains(&format!("at byte offset {dump_at}")),
            "{dump_at}: {stderr}"
        );
    }
    // An empty file, and a text profile with no section (read to its end).
    let empty = write_file(dir.path(), "empty.txt", b"");
    let stderr = fails(&["top", path(&empty)]);
    assert!(
        stderr.contains("an empty file (it ends at byte offset 0)"),
        "{stderr}"
    );
    let bare = b"JAVA PROFILE 1.0.1, created Tue Nov 24 14:00:00 2026\n\nglossary\n";
    let bare_file = write_file(dir.path(), "bare.txt", bare);
    let stderr = fails(&["top", path(&bare_file)]);
    let end = format!("(read to its end, at byte offset {})", bare.len());
    assert!(
        stderr.contains("no CPU SAMPLES, CPU TIME, SITES or MONITOR TIME section"),
        "{stderr}"
    );
    assert!(stderr.contains(&end), "{stderr}");
    // A NUL byte in a text profile: its line and offset.
    let mut nul = bare.to_vec();
    nul.extend_from_slice(b"CPU SAMPLES BEGIN (total = 1)\nx\0y\n");
    let nul_file = write_file(dir.path(), "nul.txt", &nul);
    let stderr = fails(&["top", path(&nul_file)]);
    let at = nul.iter().position(|&b| b == 0).unwrap();
    assert!(
        stderr.contains(&format!("line 5: a NUL byte at byte offset {at}")),
        "{stderr}"
    );
}

#[test]
fn damaged_gzip_names_its_compressed_and_decompressed_offsets() {
    use std::io::Write;
    let dir = temp_dir();
    let (dump, _) = heap_dump(0);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&dump).unwrap();
    let mut gz = gz.finish().unwrap();
    // The first deflate block (after the 10-byte gzip header) of a type that does not exist.
    gz[10] = 0xff;
    let dump_gz = write_file(dir.path(), "heap.hprof.gz", &gz);
    for command in ["summary", "analyze", "top"] {
        let stderr = fails(&[command, path(&dump_gz)]);
        assert!(stderr.contains("corrupt gzip data"), "{command}: {stderr}");
        assert!(
            stderr.contains("at compressed byte offset 1"),
            "{command}: {stderr}"
        );
        // Inside the first MiB (read to tell the format): the decompressed offset too.
        assert!(
            stderr.contains("(at decompressed byte offset 0, which is at compressed byte offset 1"),
            "{command}: {stderr}"
        );
    }
}

#[test]
fn an_object_not_in_the_dump_names_the_dump_searched() {
    let dir = temp_dir();
    let (dump, dump_at) = heap_dump(0);
    let dump = write_file(dir.path(), "heap.hprof", &dump);
    let stderr = fails(&["path", path(&dump), "0x999"]);
    assert!(
        stderr.contains(&format!(
            "no object with id 0x999 in the heap dump at offset {dump_at:#x} (4 objects)"
        )),
        "{stderr}"
    );
}

#[test]
fn analyze_reports_what_does_not_add_up_with_the_offset_of_its_first_record() {
    let dir = temp_dir();
    let (bytes, _) = heap_dump(0x999);
    let dump = write_file(dir.path(), "heap.hprof", &bytes);
    let out = run_hprof(&["analyze", path(&dump)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The records of 0x100 and 0x200, found as the file holds them.
    let find = |id: u64, class: u64| {
        let mut record = vec![0x21];
        record.extend_from_slice(&id.to_be_bytes());
        record.extend_from_slice(&0u32.to_be_bytes());
        record.extend_from_slice(&class.to_be_bytes());
        bytes
            .windows(record.len())
            .position(|w| w == record)
            .unwrap()
    };
    let dangling = format!(
        "references to objects not in the dump: 1 (the first in the record at offset {:#x}, \
         which refers to 0x999)",
        find(0x100, 0x20)
    );
    let unknown = format!(
        "objects of a class not in the dump: 1 (the first in the record at offset {:#x}, \
         which names class 0x30)",
        find(0x200, 0x30)
    );
    assert!(text.contains(&dangling), "{text}");
    assert!(text.contains(&unknown), "{text}");
    let out = run_hprof(&["analyze", "--json", path(&dump)]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["input"]["anomalies"],
        serde_json::json!([unknown, dangling])
    );
}

#[test]
fn gzip_on_standard_input_is_named_as_a_file_is() {
    use std::io::Write;
    use std::process::Stdio;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b"not a heap dump at all").unwrap();
    let gz = gz.finish().unwrap();
    let summary_of_stdin = |input: &[u8]| {
        let mut child = crate::support::hprof()
            .args(["summary", "-"])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        stderr
    };
    let stderr = summary_of_stdin(&gz);
    assert!(
        stderr.contains(
            "standard input (gzip-compressed: its byte offsets count decompressed bytes): not an HPROF file"
        ),
        "{stderr}"
    );
    // Damaged deflate data on standard input: the decoder's offsets, both of them, as for a
    // file (the reader's error once kept only the kind of the I/O error).
    let mut damaged = gz[..10].to_vec();
    damaged.extend_from_slice(b"\xffgarbage that is no deflate stream");
    let stderr = summary_of_stdin(&damaged);
    assert!(
        stderr.contains(
            "corrupt gzip data: corrupt deflate stream (at decompressed byte offset 0, which is at compressed byte offset 11)"
        ),
        "{stderr}"
    );
}
