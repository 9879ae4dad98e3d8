//! Progress lines of long dumps (`HPROF: dump: ...` on stderr): a dump phase that runs past
//! its threshold (1 s; `_HPROF_PROGRESS_MS=0` here, so that every phase reports) names its
//! steps, gives their figures (never going back) and ends with the time it took; a short dump
//! prints none of them (java/src/ManyLive.java keeps a known number of objects live).

use crate::support::{Jdk, jdk17, jdks, profile_with_env};

/// Runs ManyLive keeping `objects` live under the agent with `options`; `after_ms` sets the
/// progress threshold. Returns the run's stderr and its directory.
fn run(jdk: &Jdk, options: &str, objects: u32, after_ms: u32) -> (String, tempfile::TempDir) {
    let n = objects.to_string();
    let after = after_ms.to_string();
    let (run, dir) = profile_with_env(
        jdk,
        &["-Xmx1g"],
        options,
        "ManyLive",
        &[&n],
        &[("_HPROF_PROGRESS_MS", &after)],
    );
    let v = jdk.version;
    assert_eq!(run.code, Some(0), "JDK {v}: {}", run.stderr);
    let sum = u64::from(objects) * u64::from(objects.saturating_sub(1)) / 2;
    assert_eq!(
        run.stdout.trim(),
        format!("kept {objects} sum {sum}"),
        "JDK {v}"
    );
    (run.stderr, dir)
}

/// The `HPROF: dump: ` lines of `stderr`, without the prefix.
fn progress_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("HPROF: dump: "))
        .collect()
}

/// The figures of the lines of step `step`: (percent if any, amount), in order.
fn figures(lines: &[&str], step: &str) -> Vec<(Option<u64>, u64)> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix(step))
        .filter(|rest| {
            rest.starts_with(": ")
                || rest.starts_with(' ') && rest[1..].starts_with(char::is_numeric)
        })
        .map(|rest| {
            let number = |text: &str| -> u64 {
                let digits: String = text.chars().filter(char::is_ascii_digit).collect();
                digits
                    .parse()
                    .unwrap_or_else(|_| panic!("no number in {text:?}"))
            };
            if let Some(amount) = rest.strip_prefix(": ") {
                (None, number(amount))
            } else {
                let (percent, amount) = rest
                    .trim()
                    .split_once("% (")
                    .unwrap_or_else(|| panic!("bad figures {rest:?}"));
                (Some(number(percent)), number(amount))
            }
        })
        .collect()
}

/// Whether the phase `title` opens the lines and `ended ... in X s` closes them.
fn framed(lines: &[&str], title: &str, ended: &str) -> bool {
    lines.first() == Some(&format!("{title}...").as_str())
        && lines.last().is_some_and(|l| {
            l.strip_prefix(ended)
                .and_then(|t| t.strip_prefix(" in "))
                .and_then(|t| t.strip_suffix(" s"))
                .is_some_and(|t| t.parse::<f64>().is_ok())
        })
}

#[test]
fn counting_live_objects_reports_its_steps_and_a_monotonic_heap_walk() {
    for jdk in jdks() {
        let v = jdk.version;
        let (stderr, _dir) = run(&jdk, "heap=sites,verbose=n", 300_000, 0);
        let lines = progress_lines(&stderr);
        assert!(
            framed(
                &lines,
                "counting live objects (full GC, heap walks)",
                "live objects counted"
            ),
            "JDK {v}: {stderr}"
        );
        assert!(lines.contains(&"full GC..."), "JDK {v}: {stderr}");
        assert!(
            lines.contains(&"composing the sites..."),
            "JDK {v}: {stderr}"
        );
        // The walk of every object: the 300,000 cells and their 300 arrays at least; its
        // percentage (of the heap's bytes) and its count never go back; it ends at 100%.
        let walk = figures(&lines, "heap walk");
        let (last_percent, last_count) = *walk.last().unwrap_or_else(|| panic!("{stderr}"));
        assert_eq!(last_percent, Some(100), "JDK {v}: {stderr}");
        assert!(last_count >= 300_300, "JDK {v}: {stderr}");
        assert!(
            walk.windows(2)
                .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1),
            "JDK {v}: {stderr}"
        );
        // Every line is a phase's, a step's or its figures.
        let other = stderr
            .lines()
            .filter(|l| !l.starts_with("HPROF: dump: "))
            .collect::<Vec<_>>();
        assert!(other.is_empty(), "JDK {v}: {other:?}");
    }
}

#[test]
fn the_exact_mode_reports_its_walk_of_the_tagged_objects() {
    let (stderr, _dir) = run(&jdk17(), "heap=sites,sites=exact,verbose=n", 50_000, 0);
    let lines = progress_lines(&stderr);
    assert!(
        framed(
            &lines,
            "counting live objects (full GC, heap walks)",
            "live objects counted"
        ),
        "{stderr}"
    );
    // Every allocation is tagged: the walk finds the 50,000 cells at least, with no
    // percentage (only the tagged objects reach the agent).
    let walk = figures(&lines, "heap walk (tagged objects)");
    assert!(
        walk.last()
            .is_some_and(|&(p, n)| p.is_none() && n >= 50_050),
        "{stderr}"
    );
}

#[test]
fn heap_dumps_report_their_merge() {
    let jdk = jdk17();
    // Text: the JVM writes its file, then the agent merges it (a percentage of the file).
    let (stderr, _dir) = run(&jdk, "heap=dump,verbose=n", 200_000, 0);
    let lines = progress_lines(&stderr);
    let merge_at = lines
        .iter()
        .position(|l| *l == "merging the JVM's heap dump into the profile...")
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        framed(
            &lines[..merge_at],
            "writing the heap dump (the JVM's dumper, after a full GC)",
            "heap dump written"
        ),
        "{stderr}"
    );
    assert!(
        framed(
            &lines[merge_at..],
            "merging the JVM's heap dump into the profile",
            "heap dump merged"
        ),
        "{stderr}"
    );
    let merged = figures(&lines, "merging");
    assert_eq!(merged.last().map(|f| f.0), Some(Some(100)), "{stderr}");
    // 200,000 objects of 16 bytes at least: more than 3 MB of instance dumps.
    assert!(merged.last().is_some_and(|f| f.1 >= 3), "{stderr}");
    assert!(
        merged
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1),
        "{stderr}"
    );
    // Binary on JDK 15+: merged as the JVM writes it (no total: megabytes only).
    let (stderr, _dir) = run(&jdk, "heap=dump,format=b,verbose=n", 200_000, 0);
    let lines = progress_lines(&stderr);
    assert!(
        framed(
            &lines,
            "writing the heap dump (the JVM's dumper, merged as it writes)",
            "heap dump written and merged"
        ),
        "{stderr}"
    );
    let merged = figures(&lines, "merging");
    assert!(
        merged.last().is_some_and(|&(p, mb)| p.is_none() && mb >= 3),
        "{stderr}"
    );
    assert!(merged.windows(2).all(|w| w[0].1 <= w[1].1), "{stderr}");
}

#[test]
fn short_dumps_print_no_progress() {
    // A threshold far above these dumps' length (the default, 1 s, is above it too, and
    // every other test's stderr shows it): stderr is only the agent's usual `Dumping ... done.`.
    let jdk = jdk17();
    let (stderr, _dir) = run(&jdk, "heap=all", 1_000, 60_000);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].starts_with("HPROF: heap=sites counts allocations in bytecode"));
    assert_eq!(lines[1], "Dumping Java heap ... allocation sites ... done.");
}
