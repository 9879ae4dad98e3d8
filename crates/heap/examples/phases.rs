//! Times the phases of building and analysing a dump's graph, and of its summary for `hprof
//! diff`, and prints the peak RSS after each (from /proc/self/status, less the file's own
//! pages), to see where time and memory go.
//!   cargo run --release -p hprof-heap --example phases FILE

use std::sync::Mutex;
use std::time::Instant;

use hprof_heap::{Analysis, HeapGraph, Progress};

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .unwrap_or(0)
}

/// CPU seconds (user and system, every thread) the process has used, from /proc/self/stat.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    let fields: Vec<u64> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    let ticks = fields.get(11).unwrap_or(&0) + fields.get(12).unwrap_or(&0);
    ticks as f64 / 100.0
}

struct Phases {
    start: Instant,
    last: Mutex<(Instant, String, f64)>,
}

impl Phases {
    fn report(&self, next: &str) {
        let mut last = self.last.lock().unwrap();
        let cpu = cpu_seconds();
        eprintln!(
            "{:8.2} s (+{:.2}, CPU +{:.2}) peak {} MiB, anonymous now {} MiB: {}",
            self.start.elapsed().as_secs_f64(),
            last.0.elapsed().as_secs_f64(),
            cpu - last.2,
            status_kib("VmHWM:") / 1024,
            status_kib("RssAnon:") / 1024,
            last.1
        );
        *last = (Instant::now(), next.to_string(), cpu);
    }
}

impl Progress for Phases {
    fn phase(&self, name: &str, _total: u64) {
        self.report(name);
    }
    fn advance(&self, _done: u64) {}
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: phases FILE");
    // Read into memory (the file's pages are anonymous memory here: subtract its size).
    let bytes = std::fs::read(&path).expect("readable file");
    eprintln!("file {} MiB", bytes.len() >> 20);
    let phases = Phases {
        start: Instant::now(),
        last: Mutex::new((Instant::now(), "start".to_string(), cpu_seconds())),
    };
    let mut graph = HeapGraph::build(&bytes, &phases).expect("valid HPROF");
    eprintln!(
        "{} objects, {} references, {} classes, {} GC roots",
        graph.len(),
        graph.csr().targets.len(),
        graph.classes().len(),
        graph.roots().len()
    );
    let (analysis, strong) = Analysis::new(&mut graph, &phases);
    // What `hprof diff` adds: the dump's summary, its reference chains.
    let summary = hprof_heap::HeapSummary::new(&graph, &analysis, &strong, &phases);
    phases.report("");
    eprintln!("{} reference chains", summary.chains.chains.len());
    let extra = (status_kib("VmHWM:") * 1024).saturating_sub(bytes.len() as u64);
    println!(
        "{} objects, {} reachable bytes, peak beyond the file {:.1} bytes per object",
        graph.len(),
        analysis.reachable_bytes,
        extra as f64 / graph.len() as f64
    );
}
