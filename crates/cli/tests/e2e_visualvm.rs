//! Files written by our writer open in VisualVM's heap library with the counts
//! `hprof summary` reports; truncated ones are rejected by both.
//!
//! Only 8-byte identifiers are checked here: VisualVM 2.1.5 (Debian's) resolves class
//! names wrongly in any file with 4-byte identifiers that holds an instance, even a
//! minimal one of a single class and object. The agent and jcmd write 8-byte
//! identifiers; 4-byte files are covered by our own round-trip tests.

use hprof_format::{IdSize, Version};

use crate::support::java::visualvm;
use crate::support::synthetic::{Options, known, population};
use crate::support::{run_hprof, summary_json, temp_dir, write_file};

#[test]
fn our_files_open_in_visualvm_with_the_same_counts() {
    let dir = temp_dir();
    for (version, id_size, segment_limit) in [
        (Version::V1_0_2, IdSize::Eight, 64 << 20),
        (Version::V1_0_2, IdSize::Eight, 400),
        (Version::V1_0_1, IdSize::Eight, 64 << 20),
    ] {
        let options = Options {
            version,
            id_size,
            segment_limit,
        };
        let path = write_file(dir.path(), "pop.hprof", &population(options));
        let summary = summary_json(&path);
        let report = visualvm(&path).unwrap_or_else(|e| panic!("{options:?}: {e}"));
        assert_eq!(
            report.instances,
            summary["totals"]["instances"].as_u64().unwrap(),
            "{options:?}"
        );
        for (name, count) in [
            ("demo.Point", known::POINTS),
            ("demo.Point3", known::POINTS3),
            ("demo.Segment", known::SEGMENTS),
            ("demo.Point[]", known::POINT_ARRAYS),
            ("int[]", known::INT_ARRAYS),
            ("byte[]", known::BYTE_ARRAYS),
        ] {
            assert_eq!(
                report.per_class.get(name),
                Some(&count),
                "{options:?}: {name} in {:?}",
                report.per_class
            );
        }

        let bytes = std::fs::read(&path).unwrap();
        let cut = write_file(dir.path(), "cut.hprof", &bytes[..bytes.len() - 100]);
        assert!(
            visualvm(&cut).is_err(),
            "{options:?}: VisualVM accepted a truncated file"
        );
        assert_eq!(
            run_hprof(&["summary", cut.to_str().unwrap()]).status.code(),
            Some(1)
        );
    }
}
