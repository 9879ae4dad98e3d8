//! `hprof top` and `convert` on JDK Flight Recorder recordings: made in the test by JDK 11,
//! 17, 21 and 25 (`-XX:StartFlightRecording`) of programs whose profile is known, and by
//! async-profiler (recordings kept in `tests/data/async-profiler`); time ranges, threads,
//! damaged files.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use hprof_testkit::java::{Jdk, finish, java_command, jdk17, jdks};
use serde_json::Value;

use crate::support::{hprof_ok, run_hprof, temp_dir};

/// Records `program args` on `jdk` with JFR's `profile` settings (and `extra` settings) into
/// `dir/name`.
fn record(jdk: &Jdk, dir: &Path, name: &str, extra: &str, program: &str, args: &[&str]) -> PathBuf {
    record_with_output(jdk, dir, name, extra, program, args).0
}

/// [`record`], and what the program printed.
fn record_with_output(
    jdk: &Jdk,
    dir: &Path,
    name: &str,
    extra: &str,
    program: &str,
    args: &[&str],
) -> (PathBuf, String) {
    let file = dir.join(name);
    let option = format!(
        "-XX:StartFlightRecording=filename={},settings=profile{extra}",
        file.display()
    );
    let child = java_command(jdk, dir, &[&option], program, args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let run = finish(child);
    assert_eq!(run.code, Some(0), "JDK {}: {}", jdk.version, run.stderr);
    assert!(file.is_file(), "JDK {} wrote no recording", jdk.version);
    (file, run.stdout)
}

/// The epoch milliseconds Phases printed when it switched from first() to second().
fn switch_millis(stdout: &str) -> i64 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("switch "))
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or_else(|| panic!("Phases printed no switch time: {stdout}"))
}

/// An RFC 3339 time (UTC) of epoch milliseconds, as --from takes it.
fn rfc3339(millis: i64) -> String {
    chrono::DateTime::from_timestamp_millis(millis)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// `hprof top --json` of `file` with `extra` options.
fn top(file: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["top", "--json", "-n", "1000", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    serde_json::from_str(&hprof_ok(&args)).expect("top prints JSON")
}

/// The methods of a `top --json` ranking, in order.
fn methods(top: &Value) -> Vec<String> {
    top["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["method"].as_str().unwrap().to_string())
        .collect()
}

/// A method's self value in a `top --json` ranking (0 when absent).
fn self_value(top: &Value, method: &str) -> i64 {
    top["methods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["method"] == method)
        .map_or(0, |m| m["self"].as_i64().unwrap())
}

/// A method's total value in a `top --json` ranking (0 when absent).
fn total_value(top: &Value, method: &str) -> i64 {
    top["methods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["method"] == method)
        .map_or(0, |m| m["total"].as_i64().unwrap())
}

/// The stack (leaf first) of the first trace of a `top --by trace --json` ranking.
fn first_trace(top: &Value) -> Vec<String> {
    top["traces"][0]["stack"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_jdks_recording_puts_the_hot_method_first() {
    let dir = temp_dir();
    for jdk in jdks() {
        // JDK 25's CPU-time sampler, where it exists, is what --cpu reads.
        let extra = if jdk.version >= 25 {
            ",jdk.CPUTimeSample#enabled=true"
        } else {
            ""
        };
        let name = format!("cpuhot-{}.jfr", jdk.version);
        let file = record(&jdk, dir.path(), &name, extra, "CpuHot", &["1500"]);
        let ranking = top(&file, &[]);
        assert_eq!(ranking["section"], "CPU SAMPLES", "JDK {}", jdk.version);
        let names = methods(&ranking);
        assert_eq!(names[0], "CpuHot.hot", "JDK {}: {names:?}", jdk.version);
        // The same samples as the JDK's own tool reads: in total, and with CpuHot.hot on top.
        let event = if jdk.version >= 25 {
            "jdk.CPUTimeSample"
        } else {
            "jdk.ExecutionSample"
        };
        let (events, hot) = jdk_top_frames(&jdk, &file, event, "CpuHot", "hot");
        assert_eq!(
            ranking["total"].as_i64(),
            Some(events),
            "JDK {}",
            jdk.version
        );
        assert_eq!(
            self_value(&ranking, "CpuHot.hot"),
            hot,
            "JDK {}: {ranking}",
            jdk.version
        );
        // The acceptor thread is in native code (accept) the whole run: JFR's native-method
        // samples, as wall time, under its state.
        let wall = top(&file, &["--wall", "--threads=acceptor"]);
        let wall_names = methods(&wall);
        assert!(
            wall_names[0].to_lowercase().contains("accept"),
            "JDK {}: {wall_names:?}",
            jdk.version
        );
        assert!(
            !wall_names.iter().any(|m| m == "CpuHot.hot"),
            "JDK {}: {wall_names:?}",
            jdk.version
        );
        if jdk.version == 17 {
            // gzip-compressed, the same profile.
            let gz = dir.path().join("cpuhot-17.jfr.gz");
            let status = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("gzip -c {} > {}", file.display(), gz.display()))
                .status()
                .unwrap();
            assert!(status.success());
            assert_eq!(top(&gz, &[]), ranking);
            // Only the main thread: the same hot method; no thread named so: no samples.
            let main = top(&file, &["--threads=^main$"]);
            assert_eq!(methods(&main)[0], "CpuHot.hot");
            let none = top(&file, &["--threads=^no such thread$"]);
            assert_eq!(none["total"], 0, "{none}");
        }
    }
}

#[test]
fn allocation_samples_name_the_allocated_class_and_the_allocating_method() {
    let dir = temp_dir();
    for jdk in jdks() {
        let name = format!("allochot-{}.jfr", jdk.version);
        let file = record(&jdk, dir.path(), &name, "", "AllocHot", &["1500"]);
        let ranking = top(&file, &["--alloc", "--by", "trace"]);
        let stack = first_trace(&ranking);
        assert_eq!(
            &stack[..2],
            ["byte[]", "AllocHot.fill"],
            "JDK {}: {ranking}",
            jdk.version
        );
        assert_eq!(ranking["unit"], "bytes", "JDK {}", jdk.version);
    }
}

/// The number of `event` events in `file`, and of those whose top frame is `class.method`, as
/// the JDK's `jfr print --json` gives them.
fn jdk_top_frames(jdk: &Jdk, file: &Path, event: &str, class: &str, method: &str) -> (i64, i64) {
    let out = std::process::Command::new("timeout")
        .arg("120")
        .arg(jdk.bin("jfr"))
        .args(["print", "--json", "--stack-depth", "1", "--events", event])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let events = doc["recording"]["events"].as_array().unwrap();
    let top = events
        .iter()
        .filter(|e| {
            let m = &e["values"]["stackTrace"]["frames"][0]["method"];
            m["type"]["name"] == class && m["name"] == method
        })
        .count();
    (events.len() as i64, top as i64)
}

/// The number of `jdk.JavaMonitorEnter` events on `class` in `file`, and their durations'
/// sum in nanoseconds, as the JDK's `jfr print --json` gives them.
/// The value of the traces of a `top --by trace --json` ranking whose leaf is `leaf` (for
/// MONITOR TIME, the monitor's class).
fn value_of_traces_on(ranking: &Value, leaf: &str) -> i64 {
    ranking["traces"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["stack"][0] == leaf)
        .map(|t| t["value"].as_i64().unwrap())
        .sum()
}

fn jdk_monitor_enters(jdk: &Jdk, file: &Path, class: &str) -> (i64, i64) {
    let out = std::process::Command::new("timeout")
        .arg("120")
        .arg(jdk.bin("jfr"))
        .args(["print", "--json", "--events", "jdk.JavaMonitorEnter"])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut n = 0;
    let mut nanos = 0;
    for e in doc["recording"]["events"].as_array().unwrap() {
        let values = &e["values"];
        if values["monitorClass"]["name"] != class {
            continue;
        }
        // An ISO-8601 duration: PT0.014958765S (or PT1M2.5S).
        let text = values["duration"].as_str().unwrap();
        let body = text.trim_start_matches("PT").trim_end_matches('S');
        let (minutes, seconds) = match body.split_once('M') {
            Some((m, s)) => (m.parse::<f64>().unwrap(), s),
            None => (0.0, body),
        };
        let seconds: f64 = if seconds.is_empty() {
            0.0
        } else {
            seconds.parse().unwrap()
        };
        nanos += ((minutes * 60.0 + seconds) * 1e9).round() as i64;
        n += 1;
    }
    (n, nanos)
}

#[test]
fn contended_monitors_carry_their_durations() {
    let dir = temp_dir();
    // JDK 17 and later take event settings on the command line.
    for jdk in jdks().into_iter().filter(|j| j.version >= 17) {
        let name = format!("locks-{}.jfr", jdk.version);
        let file = record(
            &jdk,
            dir.path(),
            &name,
            ",jdk.JavaMonitorEnter#threshold=0ms",
            "LockContention",
            &[],
        );
        let ranking = top(&file, &["--lock", "--by", "trace"]);
        let stack = first_trace(&ranking);
        assert_eq!(
            stack[0], "LockContention$Lock",
            "JDK {}: {ranking}",
            jdk.version
        );
        assert_eq!(ranking["unit"], "nanoseconds");
        // The same events and durations as the JDK's own tool reads.
        let (events, nanos) = jdk_monitor_enters(&jdk, &file, "LockContention$Lock");
        assert!(events > 0, "JDK {}: no contended entries", jdk.version);
        let ours = value_of_traces_on(&ranking, "LockContention$Lock");
        assert!(
            (ours - nanos).abs() <= events * 1_000,
            "JDK {}: {ours} ns against the JDK's {nanos} ns over {events} entries",
            jdk.version
        );
        // Four workers each hold the lock 20 times for 5 ms: others wait most of that.
        assert!(ours >= 100_000_000, "JDK {}: {ours} ns", jdk.version);
    }
}

fn async_profiler_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/async-profiler")
        .join(name)
}

#[test]
fn async_profiler_recordings_read_as_the_jdks() {
    let cpu = top(&async_profiler_file("cpuhot-cpu.jfr"), &[]);
    assert_eq!(methods(&cpu)[0], "CpuHot.hot", "{cpu}");
    let alloc = top(
        &async_profiler_file("allochot-alloc.jfr"),
        &["--alloc", "--by", "trace"],
    );
    assert_eq!(
        &first_trace(&alloc)[..2],
        ["byte[]", "AllocHot.fill"],
        "{alloc}"
    );
    let lock = top(
        &async_profiler_file("lockcontention-lock.jfr"),
        &["--lock", "--by", "trace"],
    );
    assert_eq!(first_trace(&lock)[0], "LockContention$Lock", "{lock}");
    assert!(lock["total"].as_i64().unwrap() >= 100_000_000, "{lock}");
    // Wall-clock samples, gzip-compressed: every thread, the hot method among them, each
    // stack under its thread's state.
    let wall_file = async_profiler_file("cpuhot-wall.jfr.gz");
    let wall = top(&wall_file, &["--wall"]);
    assert!(self_value(&wall, "CpuHot.hot") > 0, "{wall}");
    let dir = temp_dir();
    let folded = dir.path().join("wall.collapsed");
    hprof_ok(&[
        "convert",
        wall_file.to_str().unwrap(),
        folded.to_str().unwrap(),
        "--wall",
    ]);
    let text = std::fs::read_to_string(&folded).unwrap();
    assert!(
        text.lines().all(|l| l.starts_with('<')),
        "a stack without its state: {text}"
    );
}

#[test]
fn a_time_range_keeps_only_its_samples() {
    let dir = temp_dir();
    let (file, stdout) =
        record_with_output(&jdk17(), dir.path(), "phases.jfr", "", "Phases", &["2000"]);
    // The recording starts before main: its first two seconds are first()'s.
    let early = top(&file, &["--from", "0", "--to", "2"]);
    assert!(total_value(&early, "Phases.first") > 0, "{early}");
    assert_eq!(total_value(&early, "Phases.second"), 0, "{early}");
    // From a wall-clock time just after the switch: second()'s only.
    let after_switch = rfc3339(switch_millis(&stdout) + 50);
    let late = top(&file, &["--from", &after_switch]);
    assert!(total_value(&late, "Phases.second") > 0, "{late}");
    assert_eq!(total_value(&late, "Phases.first"), 0, "{late}");
    // Times outside the recording keep nothing; a range backwards is refused.
    let after = top(&file, &["--from", "3600"]);
    assert_eq!(after["total"], 0, "{after}");
    let out = run_hprof(&["top", file.to_str().unwrap(), "--from", "3", "--to", "1"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--from must come before --to"));
}

#[test]
fn damaged_recordings_give_errors_with_offsets() {
    let dir = temp_dir();
    let whole = std::fs::read(async_profiler_file("cpuhot-cpu.jfr")).unwrap();
    for (name, bytes) in [
        ("cut-header.jfr", whole[..40].to_vec()),
        ("cut-middle.jfr", whole[..whole.len() / 2].to_vec()),
        ("cut-end.jfr", whole[..whole.len() - 1].to_vec()),
        ("zeroed.jfr", {
            let mut b = whole.clone();
            let at = b.len() / 2;
            b[at..at + 64].fill(0xff);
            b
        }),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let out = run_hprof(&["top", path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains("byte offset"), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
}

#[test]
fn randomly_damaged_recordings_never_panic() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for name in [
        "cpuhot-cpu.jfr",
        "allochot-alloc.jfr",
        "lockcontention-lock.jfr",
    ] {
        let whole = std::fs::read(async_profiler_file(name)).unwrap();
        for _ in 0..300 {
            let mut bytes = whole.clone();
            for _ in 0..1 + next() % 8 {
                let at = (next() % bytes.len() as u64) as usize;
                bytes[at] = next() as u8;
            }
            if next() % 4 == 0 {
                bytes.truncate((next() % bytes.len() as u64) as usize);
            }
            if let Ok(recording) = hprof_profile::Recording::read(&bytes) {
                for kind in hprof_profile::Kind::ALL {
                    let _ = recording.profile(kind, hprof_profile::Selection::All, true);
                }
            }
        }
    }
}

/// Loads the flame graph page `page` in headless Chromium, drags across its timeline from
/// `from` to `to` seconds from the start (JavaScript expressions, `t` the page's timeline
/// object), and returns the frames (and values) of the range's flame graph.
fn dragged_range(page: &Path, from: &str, to: &str) -> serde_json::Map<String, Value> {
    let body = format!(
        r##"
    var t = window.hprofTimeline, c = document.getElementById("tl-canvas");
    var y = c.getBoundingClientRect().top + 10;
    c.dispatchEvent(new MouseEvent("mousedown", {{clientX: t.xOf({from}), clientY: y, bubbles: true}}));
    window.dispatchEvent(new MouseEvent("mousemove", {{clientX: t.xOf({to}), clientY: y, bubbles: true}}));
    window.dispatchEvent(new MouseEvent("mouseup", {{clientX: t.xOf({to}), clientY: y, bubbles: true}}));
    var shown = document.getElementById("range-view").style.display;
    return shown + "|" + JSON.stringify(t.rangeFrames());
"##
    );
    let probe = hprof_testkit::browser::probe(
        page,
        r##"window.hprofTimeline && document.getElementById("tl-canvas")"##,
        &body,
    );
    let result = probe.result;
    let (shown, frames) = result
        .split_once('|')
        .unwrap_or_else(|| panic!("probe: {result}"));
    assert_eq!(
        shown, "block",
        "the range's flame graph is not shown: {result}"
    );
    serde_json::from_str::<Value>(frames)
        .unwrap_or_else(|e| panic!("{e}: {frames}"))
        .as_object()
        .unwrap()
        .clone()
}

#[test]
fn the_timelines_dragged_range_shows_only_its_samples() {
    let dir = temp_dir();
    let (jfr, jfr_stdout) =
        record_with_output(&jdk17(), dir.path(), "phases.jfr", "", "Phases", &["2000"]);
    // The agent's binary output too: its samples carry their times.
    let binary = dir.path().join("phases.hprof");
    let binary_stdout = run_agent(
        &jdk17(),
        dir.path(),
        &format!("cpu=samples,format=b,file={}", binary.display()),
        "Phases",
        &["2000"],
    );
    for (input, stdout) in [(jfr, jfr_stdout), (binary, binary_stdout)] {
        let page = input.with_extension("html");
        hprof_ok(&["convert", input.to_str().unwrap(), page.to_str().unwrap()]);
        // Both start before main: their first two seconds are first()'s.
        let early = dragged_range(&page, "0", "2");
        assert!(early.contains_key("Phases.first"), "{input:?}: {early:?}");
        assert!(!early.contains_key("Phases.second"), "{input:?}: {early:?}");
        // From just after the switch (by the wall clock) to the end: second()'s.
        let switch = format!("t.secondsOf({})", switch_millis(&stdout) + 50);
        let late = dragged_range(&page, &switch, "1e6");
        assert!(late.contains_key("Phases.second"), "{input:?}: {late:?}");
        assert!(!late.contains_key("Phases.first"), "{input:?}: {late:?}");
    }
}

/// Runs `program args` on `jdk` under the agent with `options` in `dir`; returns its stdout.
fn run_agent(jdk: &Jdk, dir: &Path, options: &str, program: &str, args: &[&str]) -> String {
    let agent = format!(
        "-agentpath:{}={options}",
        hprof_testkit::java::libhprof().display()
    );
    let child = java_command(jdk, dir, &[&agent], program, args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let run = finish(child);
    assert_eq!(run.code, Some(0), "JDK {}: {}", jdk.version, run.stderr);
    run.stdout
}

/// Runs the JDK's `jfr` tool of `jdk` with `args` on `file`; fails the test if it fails.
fn jfr_tool(jdk: &Jdk, args: &[&str], file: &Path) -> String {
    let out = std::process::Command::new("timeout")
        .arg("120")
        .arg(jdk.bin("jfr"))
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "JDK {} jfr {args:?} {}: {text}{}",
        jdk.version,
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The count of `event` in a `jfr summary` table.
fn summary_count(summary: &str, event: &str) -> i64 {
    summary
        .lines()
        .find(|l| l.split_whitespace().next() == Some(event))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[test]
fn the_agents_recording_is_read_by_the_jdks_jfr_tool() {
    let dir = temp_dir();
    let jdk = jdk17();
    let file = dir.path().join("cpuhot.jfr");
    // A file named .jfr is a recording; CPU samples by default.
    run_agent(
        &jdk,
        dir.path(),
        &format!("file={}", file.display()),
        "CpuHot",
        &["1500"],
    );
    let ours = top(&file, &[]);
    let total = ours["total"].as_i64().unwrap();
    assert_eq!(methods(&ours)[0], "CpuHot.hot", "{ours}");
    // Every JDK's tool reads it: the same samples, the hot method first in its own view.
    for tool in jdks() {
        let summary = jfr_tool(&tool, &["summary"], &file);
        assert_eq!(
            summary_count(&summary, "jdk.ExecutionSample"),
            total,
            "JDK {}: {summary}",
            tool.version
        );
        jfr_tool(&tool, &["print"], &file);
        // The sampling's settings as the JDK records its own (JDK Mission Control's
        // hot-methods analysis needs the period): on, every 10 ms (the default interval).
        let settings = jfr_tool(&tool, &["print", "--events", "jdk.ActiveSetting"], &file);
        for (name, value) in [("enabled", "true"), ("period", "10 ms")] {
            assert!(
                settings.contains(&format!(
                    "id = 100\n  name = \"{name}\"\n  value = \"{value}\""
                )),
                "JDK {}: no {name} = {value} for jdk.ExecutionSample (id 100): {settings}",
                tool.version
            );
        }
        if tool.version >= 21 {
            let view = jfr_tool(&tool, &["view", "hot-methods"], &file);
            let first = view
                .lines()
                .skip_while(|l| !l.starts_with("---"))
                .nth(1)
                .unwrap_or("");
            assert!(
                first.starts_with("CpuHot.hot("),
                "JDK {}: {view}",
                tool.version
            );
        }
    }
}

/// The exit paths of ExitPaths with the status each ends with (DiesAtOnce's main throws on its
/// first line, before any sample): one that throws after work, `System.exit` from another
/// thread, a normal return, and SIGTERM while it spins.
const EXIT_PATHS: [(&str, i32); 5] = [
    ("dies-at-once", 1),
    ("uncaught", 1),
    ("exit-from-thread", 3),
    ("normal", 0),
    ("wait", 143),
];

#[test]
fn every_exit_path_leaves_a_recording_the_jdks_jfr_tool_reads() {
    let jdk = jdk17();
    for (mode, code) in EXIT_PATHS {
        let dir = temp_dir();
        let file = dir.path().join("java.jfr");
        let agent = format!(
            "-agentpath:{}=format=jfr,file={}",
            hprof_testkit::java::libhprof().display(),
            file.display()
        );
        let mut command = if mode == "dies-at-once" {
            java_command(&jdk, dir.path(), &[&agent], "DiesAtOnce", &[])
        } else {
            java_command(&jdk, dir.path(), &[&agent], "ExitPaths", &[mode])
        };
        command.stdin(Stdio::null()).stderr(Stdio::piped());
        let run = if mode == "wait" {
            let (child, pid, lines) = hprof_testkit::java::start_with_lines(command);
            lines
                .expect("WARM ", std::time::Duration::from_secs(120))
                .parse::<u64>()
                .unwrap();
            hprof_testkit::java::kill(pid, "-TERM");
            finish(child)
        } else {
            finish(command.stdout(Stdio::piped()).spawn().unwrap())
        };
        assert_eq!(run.code, Some(code), "{mode}: {}", run.stderr);
        // The JDK's tool reads the whole recording; it has the samples of the work done.
        let summary = jfr_tool(&jdk, &["summary"], &file);
        jfr_tool(&jdk, &["print"], &file);
        let samples = summary_count(&summary, "jdk.ExecutionSample");
        if mode == "dies-at-once" {
            // No work done (rarely a sample): the chunk holds at least the agent's settings.
            assert!(
                summary_count(&summary, "hprof.Settings") >= 1,
                "{mode}: {summary}"
            );
        } else {
            assert!(samples > 0, "{mode}: {summary}");
            let ours = top(&file, &[]);
            assert!(
                methods(&ours).iter().any(|m| m == "ExitPaths.spin"),
                "{mode}: {ours}"
            );
        }
    }
}

#[test]
fn the_agents_recording_has_sites_contended_enters_and_wall_samples() {
    let dir = temp_dir();
    let jdk = jdk17();
    // Contended monitors: each enter an event with its duration, as the JDK's are.
    let locks = dir.path().join("locks.jfr");
    run_agent(
        &jdk,
        dir.path(),
        &format!("monitor=y,file={}", locks.display()),
        "LockContention",
        &[],
    );
    let ranking = top(&locks, &["--lock", "--by", "trace"]);
    assert_eq!(first_trace(&ranking)[0], "LockContention$Lock", "{ranking}");
    // The enters of LockContention$Lock as the JDK's tool reads them (the JVM's own
    // monitors, such as ThreadGroup's as threads end, are contended now and then too).
    let (events, nanos) = jdk_monitor_enters(&jdk, &locks, "LockContention$Lock");
    assert!(events > 0);
    let ours = value_of_traces_on(&ranking, "LockContention$Lock");
    assert!(
        (ours - nanos).abs() <= events * 1_000,
        "{ranking} against {nanos} ns"
    );
    // Allocation sites with their exact counts.
    let sites = dir.path().join("sites.jfr");
    run_agent(
        &jdk,
        dir.path(),
        &format!("heap=sites,file={}", sites.display()),
        "AllocSites",
        &[],
    );
    let alloc = top(&sites, &["--alloc", "--by", "trace"]);
    let points: i64 = alloc["traces"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["stack"][0] == "AllocSites$Point" && t["stack"][1] == "AllocSites.makePoints")
        .map(|t| t["value"].as_i64().unwrap())
        .sum();
    // 10,000 points of 16 bytes (compressed class pointers) or 24.
    assert!(
        points == 160_000 || points == 240_000,
        "makePoints' bytes: {points}: {alloc}"
    );
    jfr_tool(&jdk, &["print", "--events", "hprof.AllocationSite"], &sites);
    // Wall-clock samples: each under its thread's state.
    let wall = dir.path().join("wall.jfr");
    run_agent(
        &jdk,
        dir.path(),
        &format!("cpu=wall,file={}", wall.display()),
        "CpuHot",
        &["1000"],
    );
    let folded = dir.path().join("wall.collapsed");
    hprof_ok(&[
        "convert",
        wall.to_str().unwrap(),
        folded.to_str().unwrap(),
        "--threads=acceptor",
    ]);
    let text = std::fs::read_to_string(&folded).unwrap();
    // The acceptor waits in accept() for the whole run: its samples are RUNNABLE in native,
    // in accept. Before its first accept it runs a moment in the JVM (resolving the classes
    // of the call: one sample of 111 in a fresh-clone run), as RUNNABLE without "in native",
    // which is its true state then.
    let count = |l: &str| -> u64 { l.rsplit(' ').next().unwrap().parse().unwrap() };
    let all: u64 = text.lines().map(count).sum();
    let in_native: u64 = text
        .lines()
        .filter(|l| l.starts_with("acceptor;<RUNNABLE in native>;"))
        .inspect(|l| assert!(l.contains(".accept"), "{l}"))
        .map(count)
        .sum();
    assert!(
        all > 0 && text.lines().all(|l| l.starts_with("acceptor;")),
        "{text}"
    );
    assert!(in_native * 100 >= all * 95, "{in_native} of {all}: {text}");
    let printed = jfr_tool(&jdk, &["print", "--events", "ExecutionSample"], &wall);
    assert!(printed.contains("STATE_IN_NATIVE"), "{printed}");
}

#[test]
fn rotated_chunks_are_each_a_valid_recording() {
    let dir = temp_dir();
    let jdk = jdk17();
    for (name, chunk) in [("by-time.jfr", "1s"), ("by-size.jfr", "512")] {
        let file = dir.path().join(name);
        run_agent(
            &jdk,
            dir.path(),
            &format!(
                "cpu=samples,interval=1,chunk={chunk},file={}",
                file.display()
            ),
            "Phases",
            &["1500"],
        );
        let bytes = std::fs::read(&file).unwrap();
        let chunks: Vec<(u64, u64)> = hprof_jfr::chunks(&bytes)
            .map(|c| {
                let c = c.unwrap();
                (c.offset, c.header.size)
            })
            .collect();
        assert!(chunks.len() >= 3, "{name}: {} chunks", chunks.len());
        let mut sum = 0;
        for (i, (offset, size)) in chunks.iter().enumerate() {
            let part = dir.path().join(format!("{name}.{i}.jfr"));
            std::fs::write(&part, &bytes[*offset as usize..(offset + size) as usize]).unwrap();
            let summary = jfr_tool(&jdk, &["summary"], &part);
            sum += summary_count(&summary, "jdk.ExecutionSample");
        }
        let whole = top(&file, &[]);
        assert_eq!(sum, whole["total"].as_i64().unwrap(), "{name}");
        assert_eq!(
            summary_count(&jfr_tool(&jdk, &["summary"], &file), "jdk.ExecutionSample"),
            sum
        );
    }
}

#[test]
fn visualvm_reads_a_binary_profile_with_timed_samples() {
    let dir = temp_dir();
    let file = dir.path().join("both.hprof");
    run_agent(
        &jdk17(),
        dir.path(),
        &format!("heap=dump,cpu=samples,format=b,file={}", file.display()),
        "CpuHot",
        &["800"],
    );
    let bytes = std::fs::read(&file).unwrap();
    let (_, mut records) = hprof_format::Records::new(&bytes).unwrap();
    let mut timed = 0;
    while let Some((_, record)) = records.next().unwrap() {
        if let hprof_format::Record::TimedSamples(list) = record {
            timed += list.len();
        }
    }
    assert!(timed > 0, "no TIMED SAMPLES");
    // An independent reader skips the extension's records and reads the heap dump.
    let report = hprof_testkit::java::visualvm(&file).expect("VisualVM reads the file");
    assert!(
        report.classes > 100 && report.instances > 1000,
        "{}",
        report.instances
    );
}
