//! `hprof analyze` and `hprof path` on real `jcmd GC.heap_dump` files of
//! java/src/RetainedShapes.java: the leak suspect and its path, retained sizes against
//! VisualVM's heap library, gzip input, and the HTML page in headless Chromium.

use std::path::Path;

use hprof_heap::{Analysis, HeapGraph};

use crate::support::java::{JavaProcess, chromium_dom, jdks, visualvm_retained};
use crate::support::{class_row, hprof_ok, summary_json, temp_dir, write_file};

fn analyze_json(file: &Path) -> serde_json::Value {
    let text = hprof_ok(&["analyze", "--json", file.to_str().unwrap()]);
    serde_json::from_str(&text).expect("analyze --json prints JSON")
}

/// Dumps RetainedShapes (2000 byte[1000] in its static map) with jcmd: live objects,
/// `-all`, and gzip-compressed.
fn dumps(jdk: &crate::support::java::Jdk, dir: &Path) -> [std::path::PathBuf; 3] {
    let [live, all, gz, _] = dumps_with_ours(jdk, dir, false);
    [live, all, gz]
}

/// As [`dumps`], and with `ours` the agent's own heap dump (heap=dump, format=b) of the same
/// JVM, written when it ends (SIGTERM) after jcmd's: the fourth path.
fn dumps_with_ours(
    jdk: &crate::support::java::Jdk,
    dir: &Path,
    ours: bool,
) -> [std::path::PathBuf; 4] {
    let agent_file = dir.join("agent.hprof");
    let agent = format!(
        "-agentpath:{}=heap=dump,format=b,file={}",
        crate::support::java::libhprof().display(),
        agent_file.display()
    );
    let mut options = vec!["-Xmx256m", "-XX:+UseSerialGC"];
    if ours {
        options.push(&agent);
    }
    let mut program = JavaProcess::start(jdk, &options, "RetainedShapes");
    let live = dir.join("live.hprof");
    let all = dir.join("all.hprof");
    let gz = dir.join("live.hprof.gz");
    // -all first: the live dump's full GC would collect the program's garbage.
    program.jcmd(jdk, &["GC.heap_dump", "-all", all.to_str().unwrap()]);
    program.jcmd(jdk, &["GC.heap_dump", live.to_str().unwrap()]);
    if jdk.version >= 17 {
        program.jcmd(jdk, &["GC.heap_dump", "-gz=1", gz.to_str().unwrap()]);
    }
    if ours {
        crate::support::java::kill(program.pid, "-TERM");
        // (At most two minutes, then a failure.)
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while program.child.try_wait().unwrap().is_none() {
            assert!(
                std::time::Instant::now() < deadline,
                "JDK {}: the dump at exit did not end",
                jdk.version
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    [live, all, gz, agent_file]
}

#[test]
fn the_static_map_is_the_suspect_with_its_path_on_every_jdk() {
    for jdk in jdks() {
        let dir = temp_dir();
        // jcmd's dumps, and the agent's own (analyze and path on what our agent writes).
        let [live, _, gz, ours] = dumps_with_ours(&jdk, dir.path(), true);
        let files: Vec<&Path> = if jdk.version >= 17 {
            vec![&live, &gz, &ours]
        } else {
            vec![&live, &ours]
        };
        for file in files {
            let report = analyze_json(file);
            let suspects = report["suspects"]["objects"].as_array().unwrap();
            let map = &suspects[0];
            assert_eq!(
                map["class"], "java.util.HashMap",
                "JDK {}: {map}",
                jdk.version
            );
            // 2000 byte[1000] (1016 bytes each) and their nodes and boxed keys.
            let retained = map["retained"].as_u64().unwrap();
            assert!(retained > 2000 * 1016, "JDK {}: {retained}", jdk.version);
            let steps = map["path"]["steps"].as_array().unwrap();
            let last = steps.last().unwrap();
            assert_eq!(last["via"], "static CACHE", "JDK {}", jdk.version);
            assert_eq!(last["id"], map["id"]);
            let holder = &steps[steps.len() - 2];
            assert_eq!(
                holder["class"], "class RetainedShapes",
                "JDK {}",
                jdk.version
            );
            assert_eq!(
                map["accumulation_point"]["class"], "java.util.HashMap$Node[]",
                "JDK {}",
                jdk.version
            );
            assert_eq!(map["accumulated_in"], 2000, "JDK {}", jdk.version);
            // Only the map: the byte[] class is held by it, not a separate suspect.
            assert_eq!(suspects.len(), 1, "JDK {}: {suspects:?}", jdk.version);
            assert!(
                report["suspects"]["classes"].as_array().unwrap().is_empty(),
                "JDK {}",
                jdk.version
            );
            let byte_arrays = report["classes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["class"] == "byte[]")
                .unwrap();
            assert!(byte_arrays["retained"].as_u64().unwrap() >= 2000 * 1016);

            // hprof path finds the same path, and the text names the static field.
            let id = map["id"].as_str().unwrap();
            let text = hprof_ok(&["path", file.to_str().unwrap(), id]);
            assert!(
                text.contains(".static CACHE -> java.util.HashMap @ "),
                "{text}"
            );
            assert!(text.starts_with("GC root: "), "{text}");
        }
        if jdk.version >= 17 {
            // summary and print read the gzip-compressed dump too (file and standard input).
            let summary = summary_json(&gz);
            let (nodes, _) = class_row(&summary, "RetainedShapes$Node").unwrap();
            assert!(nodes >= 114, "JDK {}: {nodes}", jdk.version);
            let printed = hprof_ok(&["print", gz.to_str().unwrap()]);
            assert!(printed.starts_with("JAVA PROFILE 1.0.1, created"));
            assert!(printed.contains("RetainedShapes$Node"));
            let out = crate::support::hprof()
                .args(["summary", "--json", "-"])
                .stdin(std::fs::File::open(&gz).unwrap())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let piped: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(piped["totals"], summary["totals"]);
        }
    }
}

/// Our shallow and retained size of every object of `file`, by id.
fn our_sizes(file: &Path) -> std::collections::HashMap<u64, (u64, u64, String)> {
    let bytes = std::fs::read(file).unwrap();
    let mut graph = HeapGraph::build(&bytes, &()).unwrap();
    let (analysis, _strong) = Analysis::new(&mut graph, &());
    (0..graph.len() as u32)
        .map(|v| {
            (
                graph.id(v),
                (
                    graph.shallow(v),
                    analysis.retained[v as usize],
                    graph.class(v).name.clone(),
                ),
            )
        })
        .collect()
}

/// Class retained sizes of `file` as computed, and by their definition: the retained sizes of
/// the instances with no instance of their class among their dominators.
fn class_retained_both_ways(file: &Path) -> (Vec<u64>, Vec<u64>) {
    let bytes = std::fs::read(file).unwrap();
    let mut graph = HeapGraph::build(&bytes, &()).unwrap();
    let (analysis, _strong) = Analysis::new(&mut graph, &());
    let n = graph.len();
    let mut naive = vec![0u64; graph.classes().len()];
    for v in 0..n as u32 {
        if !analysis.is_reachable(v) {
            continue;
        }
        let class = graph.class_of(v);
        let mut d = analysis.idom[v as usize];
        while (d as usize) < n && graph.class_of(d) != class {
            d = analysis.idom[d as usize];
        }
        if d as usize == n {
            naive[class as usize] += analysis.retained[v as usize];
        }
    }
    (analysis.class_retained, naive)
}

#[test]
fn shallow_and_retained_sizes_agree_with_visualvm() {
    for jdk in jdks() {
        let dir = temp_dir();
        let [live, all, _] = dumps(&jdk, dir.path());
        // The -all dump holds the 1000 pairs of Nodes the program dropped.
        let garbage = analyze_json(&all)["totals"]["unreachable_objects"]
            .as_u64()
            .unwrap();
        assert!(garbage >= 2000, "JDK {}: {garbage}", jdk.version);
        for file in [&live, &all] {
            let (computed, naive) = class_retained_both_ways(file);
            assert_eq!(computed, naive, "JDK {}: class retained sizes", jdk.version);
            let theirs = visualvm_retained(file);
            let ours = our_sizes(file);
            assert!(theirs.len() > 5000, "JDK {}: {}", jdk.version, theirs.len());
            let mut differ = Vec::new();
            for (id, &(shallow, retained)) in &theirs {
                let (our_shallow, our_retained, class) = &ours[id];
                assert_eq!(
                    *our_shallow, shallow,
                    "JDK {}: shallow of {id:#x} ({class})",
                    jdk.version
                );
                if *our_retained != retained {
                    differ.push((class.clone(), *id, retained, *our_retained));
                }
            }
            // Every object agrees but a handful, and those of the program agree exactly
            // except the 100-node chain above the node a local variable also holds: VisualVM
            // counts that node twice (its retained size and every one above it is larger by
            // the node's own 144 bytes; see docs/formats.md). In the -all dump VisualVM also
            // lets garbage objects' references count against dominance, so objects the JDK's
            // garbage refers to retain less there: those differences only go that way.
            let with_garbage = file == &all;
            let mut others = 0;
            for (class, id, theirs, ours) in &differ {
                if class == "RetainedShapes$Node" {
                    assert_eq!(theirs - ours, 144, "JDK {}: {id:#x}", jdk.version);
                    continue;
                }
                let leak_map = class == "java.util.HashMap" && *ours > 2000 * 1016;
                assert!(
                    !class.starts_with("RetainedShapes") && !leak_map,
                    "JDK {}: retained size of {id:#x} ({class}): VisualVM {theirs}, ours {ours}",
                    jdk.version
                );
                if with_garbage {
                    assert!(theirs < ours, "JDK {}: {id:#x} ({class})", jdk.version);
                } else {
                    assert!(
                        !class.starts_with("java.util.HashMap"),
                        "JDK {}: retained size of {id:#x} ({class}): VisualVM {theirs}, ours {ours}",
                        jdk.version
                    );
                }
                others += 1;
            }
            assert!(
                with_garbage || (differ.len() <= 101 + 10 && others <= 10),
                "JDK {}: {} of {} differ: {differ:?}",
                jdk.version,
                differ.len(),
                theirs.len()
            );
        }
    }
}

#[test]
fn the_html_page_loads_in_chromium_and_shows_the_suspect() {
    if hprof_testkit::require::chromium(hprof_testkit::require::Skipped::Test).is_none() {
        return;
    }
    let jdk = jdks().into_iter().next().unwrap();
    let dir = temp_dir();
    let [live, _, _] = dumps(&jdk, dir.path());
    let page = dir.path().join("report.html");
    hprof_ok(&[
        "analyze",
        "--depth",
        "3",
        "--html",
        page.to_str().unwrap(),
        live.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "self-contained"
    );
    let (dom, log) = chromium_dom(&page);
    assert!(!log.contains("Uncaught"), "{log}");
    assert!(dom.contains("id=\"suspects\""), "{dom}");
    assert!(dom.contains("<b>java.util.HashMap @ 0x"), "{dom}");
    assert!(
        dom.contains(".static CACHE -&gt; java.util.HashMap"),
        "{dom}"
    );
    assert!(
        dom.contains("<details><summary>"),
        "collapsible dominator tree"
    );
}

#[test]
fn files_that_are_not_binary_dumps_get_clear_errors() {
    let dir = temp_dir();
    let text = write_file(
        dir.path(),
        "java.hprof.txt",
        b"JAVA PROFILE 1.0.1, created Tue Nov 24 14:37:38 2026\n\nHEAP DUMP BEGIN\n",
    );
    let mut gz = Vec::new();
    {
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(&mut gz, flate2::Compression::fast());
        // Well-formed HPROF records, so that only the gzip stream's end is wrong.
        let header = hprof_format::Header {
            version: hprof_format::Version::V1_0_2,
            id_size: hprof_format::IdSize::Eight,
            timestamp_ms: 0,
        };
        let mut w = hprof_format::Writer::new(Vec::new(), header).unwrap();
        for id in 0..5000u64 {
            w.utf8(0, id, format!("string {id}").as_bytes()).unwrap();
        }
        enc.write_all(&w.finish().unwrap()).unwrap();
        enc.finish().unwrap();
    }
    gz.truncate(gz.len() / 2);
    let cut = write_file(dir.path(), "cut.hprof.gz", &gz);
    let cases = [
        (
            text.to_str().unwrap(),
            "a text profile, not a heap dump (its header, at byte offset 0, is a line of text): \
             use `hprof convert` or open it as text",
        ),
        (cut.to_str().unwrap(), "gzip data ends early"),
        (dir.path().to_str().unwrap(), "is a directory"),
    ];
    // Each command gets a temporary directory of its own, where the decompression of a gzip
    // file writes its plain copy: nothing may be left there after the failure.
    for (file, message) in cases {
        for command in ["analyze", "summary", "print"] {
            let tmp = temp_dir();
            let out = crate::support::hprof()
                .env("TMPDIR", tmp.path())
                .args([command, file])
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{command} {file}: {stderr}");
            assert!(stderr.contains(message), "{command} {file}: {stderr}");
            if file.ends_with(".gz") {
                // Where the compressed data ends, and how much of it decompressed.
                let end = format!("at compressed byte offset {}", gz.len());
                assert!(stderr.contains(&end), "{command} {file}: {stderr}");
                assert!(
                    stderr.contains("at decompressed byte offset"),
                    "{command} {file}: {stderr}"
                );
            }
            let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert!(leftovers.is_empty(), "{command} {file} left {leftovers:?}");
        }
    }
    // The check can fail: the decompression writes its copy in TMPDIR (an unusable one is
    // named in the error), so the directories checked above are the ones it used.
    let header = hprof_format::Header {
        version: hprof_format::Version::V1_0_2,
        id_size: hprof_format::IdSize::Eight,
        timestamp_ms: 0,
    };
    let plain = hprof_format::Writer::new(Vec::new(), header)
        .unwrap()
        .finish()
        .unwrap();
    let mut gz = Vec::new();
    {
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(&mut gz, flate2::Compression::fast());
        enc.write_all(&plain).unwrap();
        enc.finish().unwrap();
    }
    let whole = write_file(dir.path(), "whole.hprof.gz", &gz);
    let missing = dir.path().join("no-such-dir");
    let out = crate::support::hprof()
        .env("TMPDIR", &missing)
        .args(["summary", whole.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "cannot create a temporary file for the input in {}",
            missing.display()
        )),
        "{stderr}"
    );
}

/// The native half of java/src/HeldRoots.java: a JNI global reference that is never deleted.
const HELD_ROOTS_C: &str = r#"
#include <jni.h>

static jobject held;

JNIEXPORT void JNICALL Java_HeldRoots_hold(JNIEnv *env, jclass cls, jobject object) {
    (void) cls;
    held = (*env)->NewGlobalRef(env, object);
}
"#;

/// Compiles HELD_ROOTS_C into `dir` with the system C compiler and JDK 17's JNI headers.
fn held_roots_library(dir: &Path) -> std::path::PathBuf {
    let source = write_file(dir, "heldroots.c", HELD_ROOTS_C.as_bytes());
    let library = dir.join("libheldroots.so");
    let include = crate::support::java::jdk17().home.join("include");
    let out = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-Wall", "-Werror", "-o"])
        .arg(&library)
        .arg(format!("-I{}", include.display()))
        .arg(format!("-I{}", include.join("linux").display()))
        .arg(&source)
        .output()
        .expect("the C compiler (cc) runs");
    assert!(
        out.status.success(),
        "cc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    library
}

/// `hprof path --json` to the only instance of `class`: its id and the path.
fn path_to_only_instance(file: &Path, class: &str) -> (String, serde_json::Value) {
    let bytes = std::fs::read(file).unwrap();
    let graph = HeapGraph::build(&bytes, &()).unwrap();
    let nodes: Vec<u32> = (0..graph.len() as u32)
        .filter(|&v| graph.class(v).name == class)
        .collect();
    assert_eq!(nodes.len(), 1, "one {class} in {}", file.display());
    let id = format!("{:#x}", graph.id(nodes[0]));
    let text = hprof_ok(&["path", "--json", file.to_str().unwrap(), &id]);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    (id, json["path"].clone())
}

#[test]
fn objects_held_by_a_jni_global_and_by_a_thread_frame_have_their_roots_named() {
    let dir = temp_dir();
    let library = held_roots_library(dir.path());
    let source =
        std::fs::read_to_string(crate::support::java::repo_root().join("java/src/HeldRoots.java"))
            .unwrap();
    let sleep_line = source
        .lines()
        .position(|l| l.contains("Thread.sleep(Long.MAX_VALUE)"))
        .unwrap()
        + 1;
    for jdk in jdks() {
        let property = format!("-Dheldroots.lib={}", library.display());
        let mut options = vec!["-Xmx128m", &property];
        if jdk.version >= 21 {
            // Without it JDK 24+ warns that System.load is a restricted method.
            options.push("--enable-native-access=ALL-UNNAMED");
        }
        let program = JavaProcess::start(&jdk, &options, "HeldRoots");
        let file = dir.path().join(format!("held-{}.hprof", jdk.version));
        program.jcmd(&jdk, &["GC.heap_dump", file.to_str().unwrap()]);
        drop(program);

        // Held only by the JNI global reference: the path is the root and the object.
        let (jni_id, path) = path_to_only_instance(&file, "HeldRoots$JniHeld");
        assert_eq!(
            path["root"]["kind"], "JNI global",
            "JDK {}: {path}",
            jdk.version
        );
        let steps = path["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 1, "JDK {}: {path}", jdk.version);
        assert_eq!(steps[0]["id"], jni_id.as_str());

        // Held only by a local variable of holdOnStack on the thread "stack-holder".
        let (stack_id, path) = path_to_only_instance(&file, "HeldRoots$StackHeld");
        let root = &path["root"];
        assert_eq!(root["kind"], "Java frame", "JDK {}: {path}", jdk.version);
        assert_eq!(
            root["thread"], "stack-holder",
            "JDK {}: {path}",
            jdk.version
        );
        assert_eq!(
            root["frame"],
            format!("HeldRoots.holdOnStack (HeldRoots.java:{sleep_line})"),
            "JDK {}: {path}",
            jdk.version
        );
        assert_eq!(path["steps"].as_array().unwrap().len(), 1);
        let text = hprof_ok(&["path", file.to_str().unwrap(), &stack_id]);
        assert!(
            text.starts_with(&format!(
                "GC root: Java frame, thread \"stack-holder\", frame HeldRoots.holdOnStack (HeldRoots.java:{sleep_line})\n"
            )),
            "JDK {}: {text}",
            jdk.version
        );

        // Each retains itself and its byte[] (16 + the array's header and elements, in
        // 8-byte units), as VisualVM's heap library says too.
        let theirs = visualvm_retained(&file);
        let ours = our_sizes(&file);
        for (id, length) in [(&jni_id, 12345u64), (&stack_id, 23456)] {
            let id = u64::from_str_radix(id.trim_start_matches("0x"), 16).unwrap();
            let expected = 16 + (16 + length).div_ceil(8) * 8;
            assert_eq!(ours[&id].1, expected, "JDK {}: {id:#x}", jdk.version);
            assert_eq!(
                theirs[&id].1, expected,
                "JDK {}: VisualVM, {id:#x}",
                jdk.version
            );
        }
    }
}
