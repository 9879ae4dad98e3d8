//! `hprof analyze`'s answers to the next questions, on real JVMs: where a leak was allocated
//! (java/src/LeakGrow.java under the agent's heap=all, every JDK), what is wasted
//! (java/src/WasteShapes.java: duplicate strings, empty and sparse collections, with their
//! counts and bytes against the known truth), which class loaders hold what
//! (java/src/LoaderLeak.java), and the HTML page's treemap and suspects in headless Chromium.

use std::path::{Path, PathBuf};

use crate::support::java::{JavaProcess, Jdk, jdk17, jdks, libhprof, run_java};
use crate::support::{hprof_ok, temp_dir};
use hprof_testkit::browser;

fn analyze_json(file: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["analyze", "--json"];
    args.extend_from_slice(extra);
    args.push(file.to_str().unwrap());
    serde_json::from_str(&hprof_ok(&args)).expect("analyze --json prints JSON")
}

/// `actual` is within 1 % of `truth`.
fn within_one_percent(actual: u64, truth: u64, what: &str) {
    let diff = actual.abs_diff(truth) as f64;
    assert!(
        diff <= truth as f64 / 100.0,
        "{what}: {actual}, the truth is {truth}"
    );
}

/// The line of java/src/`file` holding `marker`.
fn line_of(file: &str, marker: &str) -> usize {
    let source = std::fs::read_to_string(
        crate::support::java::repo_root()
            .join("java/src")
            .join(file),
    )
    .unwrap();
    source.lines().position(|l| l.contains(marker)).unwrap() + 1
}

/// Runs LeakGrow to its end under the agent with `options` (heap dump at exit).
fn leak_profile(jdk: &Jdk, dir: &Path, options: &str) -> PathBuf {
    let file = dir.join(format!("leak-{}.hprof", jdk.version));
    let agent = format!(
        "-agentpath:{}={options},file={}",
        libhprof().display(),
        file.display()
    );
    let run = run_java(jdk, dir, &[&agent, "-Xmx512m"], "LeakGrow", &[]);
    assert_eq!(run.code, Some(0), "JDK {}: {}", jdk.version, run.stderr);
    assert!(run.stdout.starts_with("GROW 100000"), "{}", run.stdout);
    file
}

#[test]
fn the_leak_names_the_method_and_line_that_allocated_it_on_every_jdk() {
    let line = line_of("LeakGrow.java", "// GROW");
    let expected = format!("LeakGrow.grow (LeakGrow.java:{line})");
    for jdk in jdks() {
        let dir = temp_dir();
        let file = leak_profile(&jdk, dir.path(), "heap=all,format=b");
        let report = analyze_json(&file, &[]);
        let suspect = &report["suspects"]["objects"][0];
        assert_eq!(suspect["class"], "java.util.HashMap", "JDK {}", jdk.version);
        let allocated = &suspect["allocated"];
        let top = &allocated["allocated_in"][0];
        assert_eq!(
            top["frame"],
            expected.as_str(),
            "JDK {}: {allocated}",
            jdk.version
        );
        // 100,000 byte[512], their nodes, boxed keys and the table, all made under grow.
        let share = top["share"].as_f64().unwrap();
        assert!(share >= 95.0, "JDK {}: {share}% {allocated}", jdk.version);
        // Sampled every 16 KB: some thousands joined, the rest estimated, with a bound.
        let samples = allocated["samples"].as_u64().unwrap();
        assert!(samples > 1000, "JDK {}: {samples}", jdk.version);
        let error = top["error_bytes"].as_u64().unwrap();
        assert!(
            error < suspect["retained"].as_u64().unwrap() / 20,
            "JDK {}: {error}",
            jdk.version
        );
        let sites = report["allocation_sites"].clone();
        assert_eq!(sites["sampled"], true, "JDK {}", jdk.version);
        assert_eq!(sites["sampling_interval"], 16384, "JDK {}", jdk.version);
        // The byte arrays' own site: the line of the put, called from main.
        let arrays = allocated["sites"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["class"] == "byte[]")
            .unwrap();
        assert_eq!(
            arrays["frames"][0],
            expected.as_str(),
            "JDK {}",
            jdk.version
        );
        within_one_percent(
            arrays["objects"].as_u64().unwrap(),
            100_000,
            "byte[] objects of the put",
        );
        // The pins are gone from the output: no JNI global root holds a byte[512].
        let summary = crate::support::summary_json(&file);
        assert!(
            summary["gc_roots"]["ROOT JNI GLOBAL"].as_u64().unwrap_or(0) < 1000,
            "JDK {}: {}",
            jdk.version,
            summary["gc_roots"]
        );
        if jdk.version == 17 {
            // Other readers skip the OBJECT SITES record.
            let visualvm = crate::support::java::visualvm(&file).expect("VisualVM opens it");
            assert!(visualvm.instances > 300_000, "{}", visualvm.instances);
        }
    }
}

#[test]
fn the_join_holds_under_every_collector() {
    // JDK 21: ZGC in both modes, Shenandoah, Parallel and Serial (G1, the default, is above).
    // The dump is taken on SIGQUIT: at VM death HotSpot has stopped the concurrent
    // collectors' threads, and a collection asked for then never ends.
    let Some(jdk) = jdks().into_iter().find(|j| j.version == 21) else {
        assert!(std::env::var_os("CI").is_none(), "JDK 21 is missing");
        return;
    };
    let line = line_of("LeakGrow.java", "// GROW");
    let expected = format!("LeakGrow.grow (LeakGrow.java:{line})");
    for gc in [
        &["-XX:+UseZGC"][..],
        &["-XX:+UseZGC", "-XX:+ZGenerational"],
        &["-XX:+UseShenandoahGC"],
        &["-XX:+UseParallelGC"],
        &["-XX:+UseSerialGC"],
    ] {
        let dir = temp_dir();
        let file = dir.path().join("leak.hprof");
        let agent = format!(
            "-agentpath:{}=heap=all,format=b,doe=n,file={}",
            libhprof().display(),
            file.display()
        );
        let stderr = dir.path().join("stderr");
        let mut options = gc.to_vec();
        options.extend(["-Xmx512m", &agent]);
        let mut command =
            crate::support::java::java_command(&jdk, dir.path(), &options, "LeakGrow", &["wait"]);
        command
            .stdin(std::process::Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap());
        let (mut child, _) = start_after_grow(command);
        crate::support::java::kill(child.id(), "-QUIT");
        wait_for_text(&stderr, "done.", 120);
        let _ = child.kill();
        let _ = child.wait();
        let report = analyze_json(&file, &[]);
        let allocated = &report["suspects"]["objects"][0]["allocated"];
        let top = &allocated["allocated_in"][0];
        assert_eq!(top["frame"], expected.as_str(), "{gc:?}: {allocated}");
        assert!(
            top["share"].as_f64().unwrap() >= 95.0,
            "{gc:?}: {allocated}"
        );
        assert!(
            allocated["samples"].as_u64().unwrap() > 1000,
            "{gc:?}: {allocated}"
        );
    }
}

/// Waits (at most `seconds`) until the file at `path` contains `needle`.
fn wait_for_text(path: &Path, needle: &str, seconds: u64) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while std::time::Instant::now() < deadline {
        if std::fs::read_to_string(path).is_ok_and(|t| t.contains(needle)) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!(
        "{} never contained {needle:?}: {}",
        path.display(),
        std::fs::read_to_string(path).unwrap_or_default()
    );
}

/// Starts `command` (LeakGrow with `wait`) and waits (at most two minutes) for its READY line.
fn start_after_grow(mut command: std::process::Command) -> (std::process::Child, u32) {
    use std::io::BufRead;
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("java starts");
    let stdout = child.stdout.take().unwrap();
    let (tell, ready) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if let Some(pid) = line.strip_prefix("READY ") {
                let _ = tell.send(pid.trim().parse::<u32>().unwrap_or(0));
            }
        }
    });
    match ready.recv_timeout(std::time::Duration::from_secs(120)) {
        Ok(pid) => (child, pid),
        Err(_) => {
            let _ = child.kill();
            panic!("LeakGrow did not print READY within two minutes");
        }
    }
}

#[test]
fn with_sites_exact_every_object_of_the_leak_is_joined_exactly() {
    let jdk = jdk17();
    let dir = temp_dir();
    let file = leak_profile(&jdk, dir.path(), "heap=all,sites=exact,format=b");
    let report = analyze_json(&file, &[]);
    let sites = &report["allocation_sites"];
    assert_eq!(sites["sampled"], false);
    let allocated = &report["suspects"]["objects"][0]["allocated"];
    let line = line_of("LeakGrow.java", "// GROW");
    let top = &allocated["allocated_in"][0];
    assert_eq!(
        top["frame"],
        format!("LeakGrow.grow (LeakGrow.java:{line})").as_str()
    );
    assert!(top["share"].as_f64().unwrap() >= 99.0, "{allocated}");
    // Every object the map retains was tracked and joined: nothing estimated.
    let objects = allocated["objects"].as_u64().unwrap();
    let samples = allocated["samples"].as_u64().unwrap();
    assert!(samples + 10 >= objects, "{samples} of {objects}");
    let arrays = allocated["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["class"] == "byte[]")
        .unwrap();
    assert_eq!(arrays["objects"], 100_000);
    assert_eq!(arrays["estimated_bytes"], 0);
}

/// Dumps WasteShapes with jcmd; returns the dump and the duplicated value it printed.
fn waste_dump(jdk: &Jdk, dir: &Path) -> (PathBuf, String) {
    let program = JavaProcess::start(jdk, &["-Xmx512m"], "WasteShapes");
    let file = dir.join(format!("waste-{}.hprof", jdk.version));
    program.jcmd(jdk, &["GC.heap_dump", file.to_str().unwrap()]);
    (file, "waste-20026-copies".to_string())
}

#[test]
fn duplicate_strings_and_wasteful_collections_match_the_truth_on_every_jdk() {
    for jdk in jdks() {
        let dir = temp_dir();
        let (file, value) = waste_dump(&jdk, dir.path());
        let report = analyze_json(&file, &[]);
        let waste = &report["waste"];
        // 50,000 Strings of 18 Latin-1 characters, each with its own byte[]: every copy
        // beyond one wastes 24 + 40 bytes.
        let top = &waste["duplicate_strings"]["top"][0];
        assert_eq!(top["value"], value.as_str(), "JDK {}: {top}", jdk.version);
        assert_eq!(top["length"], 18);
        within_one_percent(top["copies"].as_u64().unwrap(), 50_000, "copies");
        within_one_percent(top["wasted"].as_u64().unwrap(), 49_999 * 64, "wasted");
        assert_eq!(top["arrays"], top["copies"], "JDK {}", jdk.version);
        let row = |class: &str| {
            waste["collections"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["class"] == class)
                .unwrap_or_else(|| panic!("JDK {}: no {class} in {waste}", jdk.version))
                .clone()
        };
        // 10,000 empty HashMaps, each with the 16-slot table of its put: 80 bytes a
        // right-sized (tableless) map would not take.
        let maps = row("java.util.HashMap");
        within_one_percent(
            maps["empty"]["count"].as_u64().unwrap(),
            10_000,
            "empty maps",
        );
        within_one_percent(
            maps["empty"]["wasted"].as_u64().unwrap(),
            800_000,
            "their waste",
        );
        // 5,000 ArrayLists of capacity 1,000 holding one element: 4,016 bytes of array
        // where 24 would do.
        let lists = row("java.util.ArrayList");
        within_one_percent(
            lists["sparse"]["count"].as_u64().unwrap(),
            5_000,
            "sparse lists",
        );
        within_one_percent(
            lists["sparse"]["wasted"].as_u64().unwrap(),
            5_000 * 3_992,
            "their waste",
        );
        // The text report says the same in human units.
        let text = hprof_ok(&["analyze", file.to_str().unwrap()]);
        assert!(text.contains(&format!("\"{value}\"")), "{text}");
        assert!(text.contains("50,000"), "{text}");
        assert!(text.contains("19.0 MB"), "{text}");
    }
}

#[test]
fn a_class_loader_leak_shows_its_loaders() {
    for jdk in jdks() {
        let dir = temp_dir();
        let program = JavaProcess::start(&jdk, &["-Xmx256m"], "LoaderLeak");
        let file = dir.path().join(format!("loaders-{}.hprof", jdk.version));
        program.jcmd(&jdk, &["GC.heap_dump", file.to_str().unwrap()]);
        drop(program);
        let report = analyze_json(&file, &["--top", "0"]);
        // The static list holds 40 plugins of 256 KB, each made by its own loader.
        let suspect = &report["suspects"]["objects"][0];
        assert_eq!(
            suspect["class"], "java.util.ArrayList",
            "JDK {}",
            jdk.version
        );
        let loader = &suspect["class_loaders"][0];
        assert_eq!(
            loader["loader"], "LoaderLeak$PluginLoader",
            "JDK {}: {suspect}",
            jdk.version
        );
        assert_eq!(loader["loaders"], 40, "JDK {}", jdk.version);
        assert!(loader["share"].as_f64().unwrap() > 95.0, "{loader}");
        let loaders = report["class_loaders"]["loaders"].as_array().unwrap();
        let plugins: Vec<&serde_json::Value> = loaders
            .iter()
            .filter(|l| {
                l["loader"]
                    .as_str()
                    .unwrap()
                    .starts_with("LoaderLeak$PluginLoader \"plugin-")
            })
            .collect();
        assert_eq!(plugins.len(), 40, "JDK {}: {loaders:?}", jdk.version);
        for p in plugins {
            assert!(p["classes"].as_u64().unwrap() >= 1, "{p}");
            assert_eq!(p["instances"], 1, "{p}");
            assert!(p["retained"].as_u64().unwrap() > 256 * 1024, "{p}");
        }
        let duplicates = report["class_loaders"]["duplicate_classes"]
            .as_array()
            .unwrap();
        let plugin = duplicates
            .iter()
            .find(|d| d["class"] == "LoaderLeak$Plugin")
            .unwrap_or_else(|| panic!("JDK {}: {duplicates:?}", jdk.version));
        assert_eq!(plugin["loaders"], 40);
        assert_eq!(plugin["instances"], 40);
        let text = hprof_ok(&["analyze", file.to_str().unwrap()]);
        assert!(
            text.contains("40 loaders LoaderLeak$PluginLoader"),
            "JDK {}: {text}",
            jdk.version
        );
    }
}

#[test]
fn the_html_treemap_zooms_and_shows_the_suspect_and_where_it_was_allocated() {
    let jdk = jdk17();
    let dir = temp_dir();
    let file = leak_profile(&jdk, dir.path(), "heap=all,format=b");
    let page = dir.path().join("report.html");
    hprof_ok(&[
        "analyze",
        "--html",
        page.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://") && !html.contains(" src="),
        "self-contained"
    );
    let probe = browser::probe(
        &page,
        r##"window.hprofTreemap && document.querySelectorAll("#treemap .tm-node").length > 0"##,
        r##"
    var d = document, out = [];
    var nodes = d.querySelectorAll("#treemap .tm-node");
    out.push(nodes.length);
    var suspect = d.querySelector("#treemap .tm-node.suspect");
    out.push(suspect ? suspect.getAttribute("data-label") : "none");
    var r = suspect ? suspect.getBoundingClientRect() : {width: 0, height: 0};
    out.push(Math.round(r.width * r.height) > 10000);
    suspect.dispatchEvent(new MouseEvent("mousemove", {clientX: 10, clientY: 10, bubbles: true}));
    var tip = d.getElementById("tip");
    out.push(!tip.hidden && tip.textContent.indexOf("retains") >= 0 && tip.textContent.indexOf("leak suspect") >= 0);
    suspect.click();
    out.push(window.hprofTreemap.depth());
    out.push(d.querySelectorAll("#crumbs a").length);
    d.querySelector("#crumbs a").click();
    out.push(window.hprofTreemap.depth());
    var input = d.querySelector("input[data-table=classes]");
    input.value = "HashMap$Node";
    input.dispatchEvent(new Event("input"));
    var shown = Array.prototype.filter.call(d.getElementById("classes").tBodies[0].rows,
      function (row) { return row.style.display !== "none"; });
    out.push(shown.length > 0 && shown.every(function (row) { return row.textContent.indexOf("HashMap$Node") >= 0; }));
    out.push(d.getElementById("suspects").textContent.indexOf("LeakGrow.grow (LeakGrow.java:") >= 0);
    return out.join("|");
"##,
    );
    assert!(!probe.log.contains("Uncaught"), "{}", probe.log);
    let result = &probe.result;
    let fields: Vec<&str> = result.split('|').collect();
    assert!(fields[0].parse::<u32>().unwrap_or(0) >= 3, "{result}");
    assert_eq!(
        fields[1], "java.util.HashMap",
        "the suspect is outlined: {result}"
    );
    assert_eq!(fields[2], "true", "the suspect is big: {result}");
    assert_eq!(fields[3], "true", "hover shows its values: {result}");
    // Clicking the suspect zooms into it: heap > class LeakGrow > HashMap.
    assert_eq!(fields[4], "3", "zoomed: {result}");
    assert_eq!(fields[5], "2", "the path back: {result}");
    assert_eq!(fields[6], "1", "zoomed out: {result}");
    assert_eq!(fields[7], "true", "search: {result}");
    assert_eq!(
        fields[8], "true",
        "where the suspect was allocated: {result}"
    );
}
