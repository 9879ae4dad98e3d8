//! heap=dump in the text layout: HEAP DUMP BEGIN … END with ROOT, OBJ, ARR and CLS lines for
//! java/src/HeapPopulation.java's known population (the binary dump is checked against jcmd
//! in crates/cli/tests/e2e_heap_dump.rs).

use std::process::Stdio;

use hprof_testkit::java::start_until_ready;

use crate::support::{agentpath, finish, java_command, jdk17, read_text, text_output};

#[test]
fn text_heap_dump_lists_roots_objects_arrays_and_classes() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = java_command(
        &jdk17(),
        dir.path(),
        &[&agentpath("heap=dump")],
        "HeapPopulation",
        &[],
    );
    command.stdin(Stdio::piped()).stderr(Stdio::piped());
    let (mut child, _) = start_until_ready(command);
    drop(child.stdin.take()); // HeapPopulation returns when its input closes
    let run = finish(child);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains("Dumping Java heap ... done."),
        "{}",
        run.stderr
    );
    let text = read_text(&text_output(dir.path()));
    let lines: Vec<&str> = text.lines().collect();
    let begin = lines
        .iter()
        .position(|l| l.starts_with("HEAP DUMP BEGIN ("))
        .expect("HEAP DUMP BEGIN");
    let end = lines
        .iter()
        .position(|l| *l == "HEAP DUMP END")
        .expect("HEAP DUMP END");
    let dump = &lines[begin + 1..end];
    let objects = dump
        .iter()
        .filter(|l| l.starts_with("OBJ ") || l.starts_with("ARR "))
        .count();
    let counts: Vec<u64> = lines[begin]
        .trim_start_matches("HEAP DUMP BEGIN (")
        .split([' ', ','])
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(counts[0], objects as u64, "{}", lines[begin]);

    // Roots first, then objects and arrays, then classes.
    let last_root = dump.iter().rposition(|l| l.starts_with("ROOT ")).unwrap();
    let first_object = dump
        .iter()
        .position(|l| l.starts_with("OBJ ") || l.starts_with("ARR "))
        .unwrap();
    let last_object = dump
        .iter()
        .rposition(|l| l.starts_with("OBJ ") || l.starts_with("ARR "))
        .unwrap();
    let first_class = dump.iter().position(|l| l.starts_with("CLS ")).unwrap();
    assert!(last_root < first_object && last_object < first_class);
    // At exit main has ended; the thread that runs the exit is still a root.
    assert!(
        dump.iter()
            .any(|l| l.starts_with("ROOT ") && l.contains("(kind=<thread>, id=2000")),
        "a thread root"
    );
    assert!(
        dump.iter()
            .any(|l| l.contains("(kind=<system class>, name=java.lang.Object)"))
    );

    // 12345 Nodes of 56 bytes, each with its `leaf` reference (and `next` but for the last).
    let nodes: Vec<usize> = dump
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("OBJ ") && l.contains("class=HeapPopulation$Node@"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(nodes.len(), 12345);
    assert!(nodes.iter().all(|&i| dump[i].contains("(sz=56, ")));
    assert!(nodes.iter().all(|&i| {
        dump[i + 1..]
            .iter()
            .take(2)
            .any(|l| l.starts_with("\tleaf\t\t"))
    }));
    assert_eq!(
        nodes
            .iter()
            .filter(|&&i| dump[i + 1..]
                .iter()
                .take(2)
                .any(|l| l.starts_with("\tnext\t\t")))
            .count(),
        12344
    );

    // 50 Node[7] arrays with 3 elements set: true length, trailing nulls included.
    let arrays: Vec<usize> = dump
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("ARR ") && l.contains("elem type=HeapPopulation$Node[]@"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(arrays.len(), 50);
    for &i in &arrays {
        assert!(dump[i].contains(", nelems=7, "), "{}", dump[i]);
        let elements: Vec<&&str> = dump[i + 1..]
            .iter()
            .take_while(|l| l.starts_with("\t["))
            .collect();
        assert_eq!(elements.len(), 3, "{elements:?}");
    }
    // Primitive arrays with their real size: HeapPopulation's 100 int[10] (56 bytes each),
    // among the JDK's own.
    let ints = dump
        .iter()
        .filter(|l| l.starts_with("ARR ") && l.ends_with(", nelems=10, elem type=int[])"))
        .count();
    assert!(ints >= 100, "{ints}");
    assert!(
        dump.iter()
            .filter(|l| l.ends_with(", nelems=10, elem type=int[])"))
            .all(|l| l.contains("(sz=56, "))
    );

    // The program's class, with its static references.
    let cls = dump
        .iter()
        .position(|l| l.starts_with("CLS ") && l.contains("(name=HeapPopulation, "))
        .unwrap();
    let body: Vec<&&str> = dump[cls + 1..]
        .iter()
        .take_while(|l| l.starts_with('\t'))
        .collect();
    assert!(
        body.iter()
            .any(|l| l.starts_with("\tstatic staticString\t")),
        "{body:?}"
    );
    assert!(
        body.iter().any(|l| l.starts_with("\tsuper\t\t")),
        "{body:?}"
    );
}
