//! `hprof summary` on real `jcmd GC.heap_dump` files agrees with the program's known
//! population, with `jcmd GC.class_histogram`, and with VisualVM's heap library.

use crate::support::java::{JavaProcess, jdks, parse_histogram, visualvm};
use crate::support::{class_row, run_hprof, summary_json, temp_dir, write_file};

/// HeapPopulation's classes and their exact instance counts (see java/src/HeapPopulation.java).
const KNOWN: &[(&str, u64)] = &[
    ("HeapPopulation$Node", 12345),
    ("HeapPopulation$Leaf", 678),
    ("HeapPopulation$Leaf[]", 1),
    ("HeapPopulation$Node[]", 50),
    ("HeapPopulation$EmptyMarker", 9),
    ("HeapPopulation$Derived", 4),
    ("long[][]", 3),
];

#[test]
fn summary_of_a_jcmd_dump_matches_the_program_and_the_class_histogram() {
    for jdk in jdks() {
        let dir = temp_dir();
        let dump = dir.path().join("heap.hprof");
        let program = JavaProcess::start(&jdk, &["-Xmx256m", "-XX:+UseSerialGC"], "HeapPopulation");
        program.jcmd(&jdk, &["GC.heap_dump", dump.to_str().unwrap()]);
        let histogram = parse_histogram(&program.jcmd(&jdk, &["GC.class_histogram"]));
        drop(program);

        let summary = summary_json(&dump);
        for &(class, count) in KNOWN {
            let (instances, bytes) = class_row(&summary, class)
                .unwrap_or_else(|| panic!("JDK {}: no {class}", jdk.version));
            assert_eq!(instances, count, "JDK {}: {class}", jdk.version);
            assert_eq!(
                histogram.get(class),
                Some(&(instances, bytes)),
                "JDK {}: {class} vs jcmd",
                jdk.version
            );
        }
        // Node has one field of each primitive type and two references: 12 + 1+1+2+2+4+8+4+8 + 4+4 = 50 -> 56.
        assert_eq!(
            class_row(&summary, "HeapPopulation$Node").unwrap().1,
            12345 * 56
        );
        // Every application class and array class of the program agrees with jcmd too.
        for (name, &(instances, bytes)) in &histogram {
            if name.starts_with("HeapPopulation") {
                assert_eq!(
                    class_row(&summary, name),
                    Some((instances, bytes)),
                    "JDK {}: {name}",
                    jdk.version
                );
            }
        }

        // VisualVM's heap library reads the same dump and agrees.
        let report = visualvm(&dump).expect("VisualVM opens the jcmd dump");
        for &(class, count) in KNOWN {
            assert_eq!(
                report.per_class.get(class),
                Some(&count),
                "JDK {}: VisualVM {class}",
                jdk.version
            );
        }
        assert_eq!(
            report.instances,
            summary["totals"]["instances"].as_u64().unwrap(),
            "JDK {}",
            jdk.version
        );
        assert_eq!(
            report.classes,
            summary["heap_records"]["CLASS DUMP"].as_u64().unwrap(),
            "JDK {}",
            jdk.version
        );

        // A truncated copy is rejected by both readers.
        let bytes = std::fs::read(&dump).unwrap();
        let cut = write_file(dir.path(), "cut.hprof", &bytes[..bytes.len() * 2 / 3]);
        let out = run_hprof(&["summary", cut.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("truncated") && stderr.contains("at offset 0x"),
            "{stderr}"
        );
        assert!(
            visualvm(&cut).is_err(),
            "VisualVM accepted a truncated dump"
        );
    }
}
