//! Running Java under the agent and reading its text output.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use hprof_testkit::java::{
    JavaRun, Jdk, finish, java_command, jdk17, jdks, libhprof, run_java,
};

/// `-agentpath:<built libhprof.so>=<options>`.
pub fn agentpath(options: &str) -> String {
    if options.is_empty() {
        format!("-agentpath:{}", libhprof().display())
    } else {
        format!("-agentpath:{}={options}", libhprof().display())
    }
}

/// Runs `main_class args` under the agent with `options` in a fresh directory; returns the
/// run and the directory (which holds the output).
pub fn profile(
    jdk: &Jdk,
    options: &str,
    main_class: &str,
    args: &[&str],
) -> (JavaRun, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let run = run_java(jdk, dir.path(), &[&agentpath(options)], main_class, args);
    (run, dir)
}

/// Runs `main_class args` under the agent with `options` in a fresh directory, after the JVM
/// options `jvm_options`, with the environment variables `env` set; returns the run and the
/// directory (which holds the output).
pub fn profile_with_env(
    jdk: &Jdk,
    jvm_options: &[&str],
    options: &str,
    main_class: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (JavaRun, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let agent = agentpath(options);
    let mut all: Vec<&str> = jvm_options.to_vec();
    all.push(&agent);
    let mut command = java_command(jdk, dir.path(), &all, main_class, args);
    command
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    (finish(command.spawn().expect("java starts")), dir)
}

/// Reads a text output file.
pub fn read_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The default text output in `dir`.
pub fn text_output(dir: &Path) -> PathBuf {
    dir.join("java.hprof.txt")
}

/// A TRACE block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceBlock {
    pub thread: Option<u32>,
    pub frames: Vec<String>,
}

/// One row of a CPU SAMPLES section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuRow {
    pub rank: u32,
    pub count: u64,
    pub trace: u32,
    pub method: String,
}

/// A CPU SAMPLES section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuSection {
    pub total: u64,
    pub rows: Vec<CpuRow>,
}

/// One row of a CPU TIME (ms) section.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeRow {
    pub rank: u32,
    /// Self time, percent of the section's total.
    pub self_percent: f64,
    /// Calls.
    pub count: u64,
    pub trace: u32,
    pub method: String,
}

/// A CPU TIME (ms) section.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeSection {
    /// Self milliseconds of every trace.
    pub total: u64,
    pub rows: Vec<TimeRow>,
}

impl TimeSection {
    /// Calls of every row whose top method is `method` (`Class.method`).
    pub fn calls(&self, method: &str) -> u64 {
        self.rows
            .iter()
            .filter(|r| r.method == method)
            .map(|r| r.count)
            .sum()
    }

    /// Self milliseconds of every row whose top method is `method`, from the percentages.
    pub fn self_millis(&self, method: &str) -> f64 {
        self.rows
            .iter()
            .filter(|r| r.method == method)
            .map(|r| r.self_percent * self.total as f64 / 100.0)
            .sum()
    }
}

/// One row of a SITES section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteRow {
    pub live_bytes: u64,
    pub live_objects: u64,
    pub allocated_bytes: u64,
    pub allocated_objects: u64,
    pub trace: u32,
    pub class: String,
}

impl SiteRow {
    /// (allocated objects, allocated bytes, live objects, live bytes) summed over `rows`.
    pub fn totals(rows: &[&SiteRow]) -> (u64, u64, u64, u64) {
        rows.iter().fold((0, 0, 0, 0), |t, r| {
            (
                t.0 + r.allocated_objects,
                t.1 + r.allocated_bytes,
                t.2 + r.live_objects,
                t.3 + r.live_bytes,
            )
        })
    }
}

/// What a text profile holds.
#[derive(Debug, Default)]
pub struct TextProfile {
    pub thread_starts: Vec<(u32, String)>,
    pub thread_ends: Vec<u32>,
    pub traces: HashMap<u32, TraceBlock>,
    pub cpu: Vec<CpuSection>,
    pub times: Vec<TimeSection>,
    pub sites: Vec<Vec<SiteRow>>,
}

impl TextProfile {
    /// The last CPU SAMPLES section's first `n` rows, each its count and its trace's frames
    /// (for assertion messages: where the samples went).
    pub fn top_rows(&self, n: usize) -> Vec<String> {
        self.cpu.last().map_or_else(Vec::new, |cpu| {
            cpu.rows
                .iter()
                .take(n)
                .map(|r| format!("{} {:?}", r.count, self.traces[&r.trace].frames))
                .collect()
        })
    }

    /// Parses a text profile, checking its structure as it goes: the header, each trace
    /// written once and before the first section that uses it, sections closed.
    pub fn parse(text: &str) -> TextProfile {
        assert!(
            text.starts_with("JAVA PROFILE 1.0.1, created "),
            "bad header: {}",
            &text[..text.len().min(80)]
        );
        let body = &text[text.find("\n--------\n\n").expect("header separator") + 11..];
        let mut profile = TextProfile::default();
        let mut lines = body.lines().peekable();
        while let Some(line) = lines.next() {
            if let Some(rest) = line.strip_prefix("THREAD START (") {
                let serial = field(rest, "id = ").parse().unwrap();
                let name = rest
                    .split("name=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
                    .to_string();
                profile.thread_starts.push((serial, name));
            } else if let Some(rest) = line.strip_prefix("THREAD END (id = ") {
                profile
                    .thread_ends
                    .push(rest.trim_end_matches(')').parse().unwrap());
            } else if let Some(rest) = line.strip_prefix("TRACE ") {
                let (serial, tail) = rest.split_once(':').unwrap();
                let serial: u32 = serial.parse().unwrap();
                let thread = tail
                    .strip_prefix(" (thread=")
                    .map(|t| t.trim_end_matches(')').parse().unwrap());
                let mut frames = Vec::new();
                while let Some(frame) = lines.peek().and_then(|l| l.strip_prefix('\t')) {
                    frames.push(frame.to_string());
                    lines.next();
                }
                assert!(
                    profile
                        .traces
                        .insert(serial, TraceBlock { thread, frames })
                        .is_none(),
                    "TRACE {serial} written twice"
                );
            } else if let Some(rest) = line.strip_prefix("CPU SAMPLES BEGIN (total = ") {
                let total = rest.split(')').next().unwrap().parse().unwrap();
                let rows = cost_rows(&mut lines, "CPU SAMPLES END", &profile.traces)
                    .into_iter()
                    .map(|r| CpuRow {
                        rank: r.rank,
                        count: r.count,
                        trace: r.trace,
                        method: r.method,
                    })
                    .collect();
                profile.cpu.push(CpuSection { total, rows });
            } else if let Some(rest) = line.strip_prefix("CPU TIME (ms) BEGIN (total = ") {
                let total = rest.split(')').next().unwrap().parse().unwrap();
                let rows = cost_rows(&mut lines, "CPU TIME (ms) END", &profile.traces);
                profile.times.push(TimeSection { total, rows });
            } else if line.starts_with("SITES BEGIN (ordered by live bytes) ") {
                assert_eq!(
                    lines.next(),
                    Some("          percent          live          alloc'ed  stack class")
                );
                assert_eq!(
                    lines.next(),
                    Some(" rank   self  accum     bytes objs     bytes  objs trace name")
                );
                let mut rows = Vec::new();
                loop {
                    let row = lines.next().expect("SITES END");
                    if row == "SITES END" {
                        break;
                    }
                    let cols: Vec<&str> = row.split_whitespace().collect();
                    let trace: u32 = cols[7].parse().unwrap();
                    assert!(
                        profile.traces.contains_key(&trace),
                        "trace {trace} used before it was written"
                    );
                    assert_eq!(cols[0].parse::<usize>().unwrap(), rows.len() + 1);
                    rows.push(SiteRow {
                        live_bytes: cols[3].parse().unwrap(),
                        live_objects: cols[4].parse().unwrap(),
                        allocated_bytes: cols[5].parse().unwrap(),
                        allocated_objects: cols[6].parse().unwrap(),
                        trace,
                        class: cols[8..].join(" "),
                    });
                }
                profile.sites.push(rows);
            }
        }
        profile
    }

    /// The rows of the last SITES section for `class` whose trace has a frame of `method`
    /// (`Class.method`).
    pub fn sites_at(&self, class: &str, method: &str) -> Vec<&SiteRow> {
        let Some(rows) = self.sites.last() else {
            return Vec::new();
        };
        rows.iter()
            .filter(|r| {
                r.class == class
                    && self.traces[&r.trace]
                        .frames
                        .iter()
                        .any(|f| f.starts_with(&format!("{method}(")))
            })
            .collect()
    }

    /// The serial of the thread named `name`.
    pub fn thread(&self, name: &str) -> Option<u32> {
        self.thread_starts
            .iter()
            .find(|(_, n)| n == name)
            .map(|(s, _)| *s)
    }
}

/// The rows of a CPU SAMPLES or CPU TIME section up to its `end` line, checking ranks and
/// that each trace was written before.
fn cost_rows<'a>(
    lines: &mut impl Iterator<Item = &'a str>,
    end: &str,
    traces: &HashMap<u32, TraceBlock>,
) -> Vec<TimeRow> {
    let mut rows = Vec::new();
    loop {
        let row = lines.next().unwrap_or_else(|| panic!("no {end}"));
        if row == end {
            return rows;
        }
        if row.starts_with("rank ") {
            continue;
        }
        let cols: Vec<&str> = row.split_whitespace().collect();
        let trace: u32 = cols[4].parse().unwrap();
        assert!(
            traces.contains_key(&trace),
            "trace {trace} used before it was written"
        );
        assert_eq!(cols[0].parse::<usize>().unwrap(), rows.len() + 1);
        rows.push(TimeRow {
            rank: cols[0].parse().unwrap(),
            self_percent: cols[1].trim_end_matches('%').parse().unwrap_or(0.0),
            count: cols[3].parse().unwrap(),
            trace,
            method: cols[5..].join(" "),
        });
    }
}

fn field<'a>(text: &'a str, key: &str) -> &'a str {
    text.split(key)
        .nth(1)
        .unwrap()
        .split([',', ')'])
        .next()
        .unwrap()
}

/// Why this machine cannot open a perf event on the task clock of a thread of its own, as the
/// agent would (user time only if the kernel refuses more), if it cannot.
pub fn perf_events_refused_here() -> Option<String> {
    use perf_event_open_sys as perf;
    let mut last = None;
    for exclude_kernel in [0, 1] {
        let mut attr = perf::bindings::perf_event_attr {
            type_: perf::bindings::PERF_TYPE_SOFTWARE,
            size: std::mem::size_of::<perf::bindings::perf_event_attr>() as u32,
            config: u64::from(perf::bindings::PERF_COUNT_SW_TASK_CLOCK),
            ..Default::default()
        };
        attr.__bindgen_anon_1.sample_period = 10_000_000;
        attr.set_disabled(1);
        attr.set_exclude_kernel(exclude_kernel);
        // SAFETY: a complete perf_event_attr for a counting event on this thread.
        let fd = unsafe { perf::perf_event_open(&mut attr, 0, -1, -1, 0) };
        if fd >= 0 {
            // SAFETY: closes the descriptor just opened.
            unsafe { libc::close(fd) };
            return None;
        }
        last = Some(std::io::Error::last_os_error());
    }
    let paranoid =
        std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap_or_default();
    Some(format!(
        "perf_event_open refused ({}; perf_event_paranoid {})",
        last.unwrap(),
        paranoid.trim()
    ))
}
