//! `hprof print` renders binary files in the java.hprof.txt layout.

use hprof_format::{IdSize, Version};
use hprof_text::ctime_from_millis;

use crate::support::synthetic::{Options, population};
use crate::support::{hprof_ok, run_hprof, temp_dir, write_file};

fn print(options: Options) -> String {
    let dir = temp_dir();
    let path = write_file(dir.path(), "pop.hprof", &population(options));
    hprof_ok(&["print", path.to_str().unwrap()])
}

/// The lines between the first line starting with `begin` and the next `end` line, inclusive.
fn section<'a>(text: &'a str, begin: &str, end: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with(begin))
        .unwrap_or_else(|| panic!("no {begin} in\n{text}"));
    let stop = start
        + lines[start..]
            .iter()
            .position(|l| *l == end)
            .expect("section end");
    lines[start..=stop].to_vec()
}

#[test]
fn renders_every_section_in_the_text_layout() {
    let text = print(Options::default());
    let created = ctime_from_millis(1_795_000_000_000);
    assert!(
        text.starts_with(&format!("JAVA PROFILE 1.0.1, created {created}\n\n")),
        "{text}"
    );
    assert!(text.contains("\n--------\n\n"));
    let body = &text[text.find("\n--------\n\n").unwrap() + 11..];
    let lines: Vec<&str> = body.lines().collect();
    assert_eq!(lines[0], "TRACE 300000:");
    assert_eq!(lines[1], "\t<empty>");
    assert_eq!(lines[2], "TRACE 300001: (thread=200001)");
    assert_eq!(lines[3], "\tdemo.Point.run(Point.java:42)");
    assert_eq!(
        lines[4],
        "\tdemo.Segment.run(<Unknown Source>:Native method)"
    );
    assert_eq!(
        lines[5],
        "THREAD START (obj=7000, id = 200001, name=\"main\", group=\"main\")"
    );
    let cpu_date = ctime_from_millis(1_795_000_000_002);
    assert_eq!(
        section(body, "CPU SAMPLES BEGIN", "CPU SAMPLES END"),
        [
            format!("CPU SAMPLES BEGIN (total = 10) {cpu_date}").as_str(),
            "rank   self  accum   count trace method",
            "   1 70.00% 70.00%       7 300001 demo.Point.run",
            "   2 30.00% 100.00%       3 300000 <empty trace>",
            "CPU SAMPLES END",
        ]
    );
    let sites = section(body, "SITES BEGIN", "SITES END");
    assert_eq!(
        sites[0],
        format!(
            "SITES BEGIN (ordered by live bytes) {}",
            ctime_from_millis(1_795_000_000_003)
        )
    );
    assert_eq!(
        sites[3],
        "    1 65.22% 65.22%      2400  100      4800   200 300001 demo.Point"
    );
    assert_eq!(
        sites[4],
        "    2 34.78% 100.00%      1280   40      2560    80 300001 demo.Segment"
    );
    assert_eq!(sites.len(), 6);
    let heap = section(body, "HEAP DUMP BEGIN", "HEAP DUMP END");
    assert_eq!(
        heap[0],
        format!(
            "HEAP DUMP BEGIN (164 objects, 4520 bytes) {}",
            ctime_from_millis(1_795_000_000_004)
        )
    );
    let roots: Vec<&str> = heap
        .iter()
        .copied()
        .filter(|l| l.starts_with("ROOT "))
        .collect();
    assert_eq!(
        roots,
        [
            "ROOT 7000 (kind=<thread>, id=200001, trace=300001)",
            "ROOT 20000 (kind=<Java stack>, thread=200001, frame=0)",
            "ROOT 20010 (kind=<JNI local ref>, thread=200001, frame=1)",
            "ROOT 20020 (kind=<JNI global ref>, id=77, trace=0)",
            "ROOT 20030 (kind=<native stack>, thread=200001)",
            "ROOT 1000 (kind=<system class>, name=java.lang.Object)",
            "ROOT 20040 (kind=<thread block>, thread=200001)",
            "ROOT 20050 (kind=<busy monitor>)",
            "ROOT 20060 (kind=<unknown>)",
        ]
    );
    // Roots come first, then objects, then classes.
    let first_obj = heap.iter().position(|l| l.starts_with("OBJ ")).unwrap();
    let first_cls = heap.iter().position(|l| l.starts_with("CLS ")).unwrap();
    assert!(first_obj > 9 && first_cls > first_obj);
    assert_eq!(heap.iter().filter(|l| l.starts_with("OBJ ")).count(), 150);
    assert_eq!(heap.iter().filter(|l| l.starts_with("ARR ")).count(), 14);
    assert_eq!(heap.iter().filter(|l| l.starts_with("CLS ")).count(), 7);
    assert!(heap.contains(&"OBJ 20000 (sz=24, trace=300001, class=demo.Point@1100)"));
    // The first Segment (id 0x206e0) references points 0 and 1; the second only point 1.
    let seg = heap
        .iter()
        .position(|l| *l == "OBJ 206e0 (sz=32, trace=300001, class=demo.Segment@1300)")
        .unwrap();
    assert_eq!(
        heap[seg + 1..seg + 4],
        [
            "\ta\t\t20000",
            "\tb\t\t20010",
            "OBJ 206f0 (sz=32, trace=300001, class=demo.Segment@1300)"
        ]
    );
    assert_eq!(heap[seg + 4], "\ta\t\t20010");
    let arr = heap
        .iter()
        .position(|l| l.starts_with("ARR 20960 "))
        .unwrap();
    assert_eq!(
        heap[arr],
        "ARR 20960 (sz=32, trace=300001, nelems=3, elem type=demo.Point[]@1400)"
    );
    assert_eq!(heap[arr + 1], "\t[0]\t\t20000");
    assert!(heap.contains(&"ARR 209b0 (sz=56, trace=300001, nelems=10, elem type=int[])"));
    assert!(heap.contains(&"ARR 20a20 (sz=24, trace=300001, nelems=5, elem type=byte[])"));
    let cls = heap
        .iter()
        .position(|l| *l == "CLS 1300 (name=demo.Segment, trace=300000)")
        .unwrap();
    assert_eq!(
        heap[cls + 1..cls + 3],
        ["\tsuper\t\t1000", "\tconstant pool entry 3\t20000"]
    );
    assert!(
        body.ends_with("HEAP DUMP END\nTHREAD END (id = 200001)\n"),
        "{body}"
    );
}

#[test]
fn layouts_and_segmentation_do_not_change_the_text() {
    let reference = print(Options::default());
    for version in [Version::V1_0_1, Version::V1_0_2] {
        for id_size in [IdSize::Four, IdSize::Eight] {
            for segment_limit in [64 << 20, 300] {
                let options = Options {
                    version,
                    id_size,
                    segment_limit,
                };
                assert_eq!(print(options), reference, "{options:?}");
            }
        }
    }
}

#[test]
fn output_option_writes_the_same_text_to_a_file() {
    let dir = temp_dir();
    let path = write_file(dir.path(), "pop.hprof", &population(Options::default()));
    let out_path = dir.path().join("pop.txt");
    let stdout = hprof_ok(&[
        "print",
        path.to_str().unwrap(),
        "-o",
        out_path.to_str().unwrap(),
    ]);
    assert!(stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(&out_path).unwrap(),
        hprof_ok(&["print", path.to_str().unwrap()])
    );
}

#[test]
fn truncated_file_is_an_error() {
    let bytes = population(Options::default());
    let dir = temp_dir();
    let path = write_file(dir.path(), "cut.hprof", &bytes[..bytes.len() - 40]);
    let out = run_hprof(&["print", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("at offset 0x"), "{stderr}");
}

#[test]
fn output_files_are_private_and_never_written_through_a_symbolic_link() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let dir = temp_dir();
    let input = write_file(dir.path(), "pop.hprof", &population(Options::default()));
    // print -o: a new file is 0600; an existing one readable by all is replaced by a private one.
    let out = dir.path().join("out.txt");
    std::fs::write(&out, "old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o666)).unwrap();
    hprof_ok(&[
        "print",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .starts_with("JAVA PROFILE 1.0.1")
    );
    // A link (to a file, or dangling) is refused with a clear error; nothing is written.
    let precious = write_file(dir.path(), "precious", b"keep me");
    let link = dir.path().join("link.txt");
    symlink(&precious, &link).unwrap();
    let dangling = dir.path().join("dangling.txt");
    symlink(dir.path().join("nowhere"), &dangling).unwrap();
    for path in [&link, &dangling] {
        let result = run_hprof(&[
            "print",
            input.to_str().unwrap(),
            "-o",
            path.to_str().unwrap(),
        ]);
        assert!(!result.status.success());
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert!(stderr.contains("is a symbolic link"), "{stderr}");
    }
    assert_eq!(std::fs::read(&precious).unwrap(), b"keep me");
    assert!(!dir.path().join("nowhere").exists());
    // hprof listen -o: refused before it waits for an agent.
    let result = run_hprof(&["listen", "--port", "0", "-o", link.to_str().unwrap()]);
    assert!(!result.status.success());
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(stderr.contains("is a symbolic link"), "{stderr}");
    assert_eq!(std::fs::read(&precious).unwrap(), b"keep me");
}

#[test]
fn every_dump_of_a_file_is_printed_when_dumps_span_several_segments() {
    let options = Options {
        version: Version::V1_0_2,
        id_size: IdSize::Eight,
        segment_limit: 300,
    };
    let one = population(options);
    // The same records again after the first file's: a second heap dump in several segments.
    let header = one.iter().position(|&b| b == 0).unwrap() + 1 + 12;
    let mut two = one.clone();
    two.extend_from_slice(&one[header..]);
    let dir = temp_dir();
    let path = write_file(dir.path(), "two.hprof", &two);
    let text = hprof_ok(&["print", path.to_str().unwrap()]);
    let dumps: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("HEAP DUMP BEGIN"))
        .collect();
    assert_eq!(dumps.len(), 2, "{text}");
    assert_eq!(dumps[0], dumps[1]);
}
