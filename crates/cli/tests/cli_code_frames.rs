//! Frames of native and kernel code in `hprof top` and `hprof convert`: grouped and coloured
//! apart from Java methods, on a real profile of `java/src/KernelCalls.java` (a thread in
//! write() system calls), the flame graph checked in headless Chromium.

use std::path::Path;
use std::process::Stdio;

use hprof_testkit::browser;
use hprof_testkit::java::{finish, java_command, jdk17, libhprof};

use crate::support::{hprof_ok, temp_dir};

/// Whether the kernel lets this process sample the kernel's code with perf events.
fn kernel_sampling_allowed() -> bool {
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or(3);
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .is_some_and(|ids| ids.split_whitespace().nth(1) == Some("0"))
    });
    paranoid < 2 || (root && paranoid < 3)
}

/// Profiles KernelCalls (1 s of CPU time per thread) into `dir` (`java.hprof.txt`, or with `extra` options such as
/// `,format=b`, where they say).
fn profile_kernel_calls(dir: &Path, extra: &str) {
    let agent = format!(
        "-agentpath:{}=cpu=samples,interval=1,depth=48{extra}",
        libhprof().display()
    );
    let child = java_command(&jdk17(), dir, &[&agent], "KernelCalls", &["1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let run = finish(child);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

/// (r, g, b) of `rgb(r,g,b)`.
fn rgb(text: &str) -> (u8, u8, u8) {
    let inner = text
        .trim()
        .strip_prefix("rgb(")
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or_else(|| panic!("not rgb(): {text}"));
    let v: Vec<u8> = inner
        .split(',')
        .map(|c| c.trim().parse().unwrap())
        .collect();
    (v[0], v[1], v[2])
}

#[test]
fn top_and_the_flame_graph_tell_kernel_native_and_java_frames_apart() {
    if !kernel_sampling_allowed() {
        println!("SKIPPED: the kernel's code cannot be sampled here");
        return;
    }
    let dir = temp_dir();
    profile_kernel_calls(dir.path(), "");
    let text = dir.path().join("java.hprof.txt");
    let text = text.to_str().unwrap();

    // top: a group line, and each method's kind in JSON.
    let table = hprof_ok(&["top", text, "-n", "5"]);
    let groups = table
        .lines()
        .find(|l| l.starts_with("self by kind: "))
        .unwrap_or_else(|| panic!("no group line: {table}"));
    assert!(
        groups.contains("Java ") && groups.contains("kernel "),
        "{groups}"
    );
    assert!(
        !table.contains('\x1b'),
        "colour when not on a terminal: {table}"
    );
    let coloured = hprof_ok(&["top", text, "-n", "50", "--color", "always"]);
    assert!(
        coloured.contains("\x1b[35m[kernel]."),
        "kernel functions in magenta: {coloured}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&hprof_ok(&["top", text, "--json", "-n", "200"])).unwrap();
    assert!(json["kinds"]["kernel"].as_i64().unwrap() > 0, "{json}");
    assert!(json["kinds"]["Java"].as_i64().unwrap() > 0, "{json}");
    let methods = json["methods"].as_array().unwrap();
    for m in methods {
        let name = m["method"].as_str().unwrap();
        let kind = m["kind"].as_str().unwrap();
        if name.starts_with("[kernel].") {
            assert_eq!(kind, "kernel", "{m}");
        } else if name.starts_with("KernelCalls.") || name.starts_with("java.") {
            assert_eq!(kind, "Java", "{m}");
        }
    }

    // Folded stacks: kernel functions carry the `_[k]` mark, above the Java frames.
    let collapsed = dir.path().join("k.collapsed");
    hprof_ok(&["convert", text, collapsed.to_str().unwrap()]);
    let folded = std::fs::read_to_string(&collapsed).unwrap();
    assert!(
        folded.lines().any(|l| {
            let (stack, _) = l.rsplit_once(' ').unwrap();
            let frames: Vec<&str> = stack.split(';').collect();
            let first_kernel = frames.iter().position(|f| f.ends_with("_[k]"));
            first_kernel.is_some_and(|k| {
                frames[..k]
                    .iter()
                    .any(|f| f.starts_with("java.io.FileOutputStream."))
                    && frames[k..].iter().all(|f| f.ends_with("_[k]"))
            })
        }),
        "{folded}"
    );

    // The flame graph, in a browser: kernel frames drawn in the kernel's colour, Java frames
    // in theirs, and the legend names both.
    let html = dir.path().join("flame.html");
    hprof_ok(&["convert", text, html.to_str().unwrap()]);
    let probe = browser::probe(
        &html,
        browser::FLAME_CALLEES_DRAWN,
        r##"
    var d = document.getElementById("callees").contentWindow.document;
    var fills = function (prefix) {
      return Array.from(d.querySelectorAll("#frames > g")).filter(function (g) {
        return g.querySelector("title").textContent.indexOf(prefix) === 0;
      }).map(function (g) { return g.querySelector("rect").getAttribute("fill"); });
    };
    var legend = function (kind) {
      var s = document.querySelector(".legend .kind-" + kind);
      return s ? s.textContent + "=" + s.style.background : "none";
    };
    return fills("[kernel].").join(";") + "|" +
      fills("KernelCalls.").join(";") + "|" + legend("kernel") + "|" + legend("java");
"##,
    );
    let result = &probe.result;
    let fields: Vec<&str> = result.split('|').collect();
    assert_eq!(fields.len(), 4, "{result}");
    let kernel: Vec<_> = fields[0]
        .split(';')
        .filter(|f| !f.is_empty())
        .map(rgb)
        .collect();
    let java: Vec<_> = fields[1]
        .split(';')
        .filter(|f| !f.is_empty())
        .map(rgb)
        .collect();
    assert!(!kernel.is_empty() && !java.is_empty(), "{result}");
    // Kernel: violets (blue 225); application methods: warm reds (blue 50).
    assert!(
        kernel.iter().all(|&(r, _, b)| b == 225 && r >= 165),
        "{result}"
    );
    assert!(
        java.iter().all(|&(r, _, b)| b == 50 && r >= 200),
        "{result}"
    );
    assert!(fields[2].starts_with("kernel=rgb("), "{result}");
    assert!(fields[3].starts_with("application=rgb("), "{result}");
}

#[test]
fn print_renders_binary_kernel_frames_as_the_agents_text_does() {
    if !kernel_sampling_allowed() {
        println!("SKIPPED: the kernel's code cannot be sampled here");
        return;
    }
    let dir = temp_dir();
    profile_kernel_calls(dir.path(), ",format=b");
    let binary = dir.path().join("java.hprof");
    let text = hprof_ok(&["print", binary.to_str().unwrap()]);
    let kernel: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("\t[kernel]."))
        .collect();
    assert!(!kernel.is_empty(), "{text}");
    assert!(kernel.iter().all(|l| l.ends_with("(Kernel)")), "{kernel:?}");
    // The Java frames keep their source files and lines.
    assert!(
        text.lines()
            .any(|l| l.starts_with("\tKernelCalls.writeBytes(KernelCalls.java:")),
        "{text}"
    );
}

/// `hprof top --json`'s (method, kind) rows of `file`.
fn method_kinds(file: &Path) -> Vec<(String, String)> {
    let json: serde_json::Value = serde_json::from_str(&hprof_ok(&[
        "top",
        file.to_str().unwrap(),
        "--json",
        "-n",
        "1000",
    ]))
    .unwrap();
    json["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let text = |k: &str| m[k].as_str().unwrap().to_string();
            (text("method"), text("kind"))
        })
        .collect()
}

#[test]
fn a_jfr_recording_keeps_kernel_native_and_java_frames_apart() {
    if !kernel_sampling_allowed() {
        println!("SKIPPED: the kernel's code cannot be sampled here");
        return;
    }
    let dir = temp_dir();
    let file = dir.path().join("k.jfr");
    profile_kernel_calls(dir.path(), &format!(",format=jfr,file={}", file.display()));
    let kinds = method_kinds(&file);
    assert!(
        kinds.iter().any(|(m, _)| m.starts_with("[kernel].")),
        "{kinds:?}"
    );
    for (method, kind) in &kinds {
        let want = if method.starts_with("[kernel].") {
            "kernel"
        } else if method.starts_with("libjvm.so.") || method.starts_with("[stub].") {
            "JVM"
        } else if method.starts_with("KernelCalls.") || method.starts_with("java.") {
            "Java"
        } else if method.contains(".so") {
            "native"
        } else {
            continue;
        };
        assert_eq!(kind, want, "{method}: {kinds:?}");
    }
    // The JDK's tool reads the library as the class, as async-profiler writes it: `[kernel]`
    // without its brackets (JDK Mission Control takes a class name that starts with `[` for
    // an array's descriptor and fails on it), so no frame's class starts with `[`.
    let out = std::process::Command::new("timeout")
        .args(["120", jdk17().bin("jfr").to_str().unwrap(), "print"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let printed = String::from_utf8_lossy(&out.stdout);
    let frames: Vec<&str> = printed
        .lines()
        .map(str::trim)
        .filter(|l| l.ends_with("line: 0") || l.contains(" line: "))
        .collect();
    assert!(
        frames.iter().any(|f| f.starts_with("kernel.")),
        "no kernel frame in jfr print"
    );
    assert!(
        frames.iter().all(|f| !f.starts_with('[')),
        "a frame's class starts with [: {:?}",
        frames.iter().find(|f| f.starts_with('['))
    );
}

#[test]
fn async_profilers_jvm_and_native_frames_keep_their_kinds() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/async-profiler/cpuhot-cpu.jfr");
    let kinds = method_kinds(&file);
    // Its C++ frames (libjvm.so's functions) are the JVM's, CpuHot's methods Java.
    let jvm: Vec<_> = kinds
        .iter()
        .filter(|(m, _)| m.starts_with("libjvm.so."))
        .collect();
    assert!(!jvm.is_empty(), "{kinds:?}");
    assert!(jvm.iter().all(|(_, k)| k == "JVM"), "{kinds:?}");
    assert!(
        kinds.iter().any(|(m, k)| m == "CpuHot.hot" && k == "Java"),
        "{kinds:?}"
    );
    // No library's function is a Java method.
    assert!(
        !kinds.iter().any(|(m, k)| m.contains(".so.") && k == "Java"),
        "{kinds:?}"
    );
}
