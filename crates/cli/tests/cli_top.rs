//! `hprof top` on the agent's own profiles, text and binary, on JDK 11/17/21/25: its totals
//! are the sections', its methods ranked, its `--by trace` rows the section's rows.

use std::path::Path;
use std::process::Stdio;

use hprof_testkit::java::{Jdk, finish, java_command, jdks, libhprof};

use crate::support::{hprof_ok, temp_dir};

/// Runs `program args` on `jdk` under the agent with `options` in `dir`.
fn profile(jdk: &Jdk, dir: &Path, options: &str, program: &str, args: &[&str]) {
    let agent = format!("-agentpath:{}={options}", libhprof().display());
    let child = java_command(jdk, dir, &[&agent], program, args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let run = finish(child);
    assert_eq!(run.code, Some(0), "JDK {}: {}", jdk.version, run.stderr);
}

/// `hprof top FILE --json -n 100000 EXTRA` (every method).
fn top_json(file: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["top", file.to_str().unwrap(), "--json", "-n", "100000"];
    args.extend_from_slice(extra);
    serde_json::from_str(&hprof_ok(&args)).expect("top --json prints JSON")
}

/// The rows of the last section of a text profile that starts with `begin`: (count, trace,
/// method), and the section's total.
fn section(text: &str, begin: &str, end: &str, count: usize) -> (u64, Vec<(u64, u32, String)>) {
    let start = text.rfind(begin).unwrap_or_else(|| panic!("no {begin}"));
    let total = text[start + begin.len()..]
        .split(')')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let rows = text[start..]
        .lines()
        .skip(1)
        .take_while(|l| *l != end)
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|c| c.first().is_some_and(|r| r.parse::<u32>().is_ok()))
        .map(|c| {
            (
                c[count].parse().unwrap(),
                c[count + 1].parse().unwrap(),
                c[count + 2..].join(" "),
            )
        })
        .collect();
    (total, rows)
}

/// Checks what every `top --json` must hold: self within total, methods ranked by self, and
/// every method's self adding up to the total.
fn assert_ranked(json: &serde_json::Value, what: &str) {
    let total = json["total"].as_u64().unwrap();
    let methods = json["methods"].as_array().unwrap();
    let selfs: Vec<u64> = methods
        .iter()
        .map(|m| m["self"].as_u64().unwrap())
        .collect();
    assert!(selfs.windows(2).all(|w| w[0] >= w[1]), "{what}: {json}");
    assert_eq!(selfs.iter().sum::<u64>(), total, "{what}: {json}");
    for m in methods {
        let (s, t) = (m["self"].as_u64().unwrap(), m["total"].as_u64().unwrap());
        assert!(s <= t && t <= total, "{what}: {m}");
        // Its heaviest stack, leaf first, goes through it.
        assert!(
            m["stack"].as_array().unwrap().contains(&m["method"]),
            "{what}: {m}"
        );
    }
}

#[test]
fn top_of_cpu_samples_text_and_binary_on_every_jdk() {
    for jdk in jdks() {
        let v = jdk.version;
        let dir = temp_dir();
        // (1,500 ms of main's CPU: at 800 ms the JVM's start-up can weigh a fifth of the
        // samples on JDK 11, and hot()'s 80 % below is of the whole.)
        profile(
            &jdk,
            dir.path(),
            "cpu=samples,thread=y",
            "CpuHot",
            &["1500"],
        );
        let file = dir.path().join("java.hprof.txt");
        let text = std::fs::read_to_string(&file).unwrap();
        let (total, rows) = section(&text, "CPU SAMPLES BEGIN (total = ", "CPU SAMPLES END", 3);
        let json = top_json(&file, &[]);
        assert_eq!(json["section"], "CPU SAMPLES", "JDK {v}");
        assert_eq!(json["unit"], "samples", "JDK {v}");
        assert_eq!(json["total"].as_u64(), Some(total), "JDK {v}");
        assert_ranked(&json, &format!("JDK {v}"));
        let first = &json["methods"][0];
        assert_eq!(first["method"], "CpuHot.hot", "JDK {v}: {json}");
        assert!(
            first["self"].as_u64().unwrap() * 10 >= total * 8,
            "JDK {v}: {json}"
        );
        assert_eq!(first["stack"][1], "CpuHot.main", "JDK {v}: {json}");
        // By trace: the section's own rows, every one of them.
        let by_trace = hprof_ok(&[
            "top",
            file.to_str().unwrap(),
            "--by",
            "trace",
            "-n",
            "100000",
        ]);
        let listed: Vec<(u64, String)> = by_trace
            .lines()
            .skip(2)
            .filter_map(|l| {
                let c: Vec<&str> = l.split_whitespace().collect();
                c.first()?.parse::<u32>().ok()?;
                Some((c[2].parse().ok()?, c[3..].join(" ")))
            })
            .collect();
        // (top names the agent's pseudo-frames without their `<hprof>.` class; rows of equal
        // counts may come in either order.) Ranked as the section is.
        assert!(
            listed.windows(2).all(|w| w[0].0 >= w[1].0),
            "JDK {v}: {by_trace}"
        );
        let mut expected: Vec<(u64, String)> = rows
            .iter()
            .map(|(n, _, m)| (*n, m.trim_start_matches("<hprof>.").to_string()))
            .collect();
        let mut listed = listed;
        for list in [&mut listed, &mut expected] {
            list.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        }
        assert_eq!(listed, expected, "JDK {v}: {by_trace}");
        // The text report: its header and the hot method first.
        let report = hprof_ok(&["top", file.to_str().unwrap(), "-n", "1", "--stacks"]);
        let lines: Vec<&str> = report.lines().collect();
        assert_eq!(
            lines[0],
            format!("CPU SAMPLES: {total} samples, by method"),
            "JDK {v}"
        );
        assert!(lines[2].ends_with("  CpuHot.hot"), "JDK {v}: {report}");
        assert_eq!(lines[3].trim(), "CpuHot.hot", "JDK {v}: {report}");
        assert_eq!(lines[4].trim(), "CpuHot.main", "JDK {v}: {report}");

        // Binary output of the same kind of run.
        let bin = temp_dir();
        profile(&jdk, bin.path(), "cpu=samples,format=b", "CpuHot", &["800"]);
        let json = top_json(&bin.path().join("java.hprof"), &[]);
        assert_ranked(&json, &format!("JDK {v} binary"));
        assert_eq!(
            json["methods"][0]["method"], "CpuHot.hot",
            "JDK {v}: {json}"
        );
    }
}

#[test]
fn top_of_allocation_sites_on_every_jdk() {
    for jdk in jdks() {
        let v = jdk.version;
        let dir = temp_dir();
        profile(
            &jdk,
            dir.path(),
            "heap=sites,depth=8,cutoff=0",
            "AllocSites",
            &[],
        );
        let file = dir.path().join("java.hprof.txt");
        let text = std::fs::read_to_string(&file).unwrap();
        // SITES rows: rank, self, accum, live bytes, live objs, alloc bytes, alloc objs, ...
        let start = text.rfind("SITES BEGIN").unwrap();
        let alloc_bytes: u64 = text[start..]
            .lines()
            .take_while(|l| *l != "SITES END")
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter(|c| c.len() > 8 && c[0].parse::<u32>().is_ok())
            .map(|c| c[5].parse::<u64>().unwrap())
            .sum();
        let json = top_json(&file, &["--alloc"]);
        assert_eq!(json["unit"], "bytes", "JDK {v}");
        assert_eq!(json["total"].as_u64(), Some(alloc_bytes), "JDK {v}");
        assert_ranked(&json, &format!("JDK {v}"));
        // The allocated class is the leaf: AllocSites' points, made in makePoints, are there.
        assert!(
            json["methods"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["method"] == "AllocSites$Point"
                    && m["stack"][1] == "AllocSites.makePoints"),
            "JDK {v}: {json}"
        );
    }
}
