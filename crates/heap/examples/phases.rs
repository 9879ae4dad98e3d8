//! Times the phases of building and analysing a dump's graph and prints the peak RSS after
//! each (from /proc/self/status, less the file's own pages), to see where time and memory go.
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

struct Phases {
    start: Instant,
    last: Mutex<(Instant, String)>,
}

impl Phases {
    fn report(&self, next: &str) {
        let mut last = self.last.lock().unwrap();
        eprintln!(
            "{:8.2} s (+{:.2}) peak {} MiB, anonymous now {} MiB: {}",
            self.start.elapsed().as_secs_f64(),
            last.0.elapsed().as_secs_f64(),
            status_kib("VmHWM:") / 1024,
            status_kib("RssAnon:") / 1024,
            last.1
        );
        *last = (Instant::now(), next.to_string());
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
        last: Mutex::new((Instant::now(), "start".to_string())),
    };
    let mut graph = HeapGraph::build(&bytes, &phases).expect("valid HPROF");
    eprintln!(
        "{} objects, {} references, {} classes, {} GC roots",
        graph.len(),
        graph.csr().targets.len(),
        graph.classes().len(),
        graph.roots().len()
    );
    let (analysis, _strong) = Analysis::new(&mut graph, &phases);
    phases.report("");
    let extra = (status_kib("VmHWM:") * 1024).saturating_sub(bytes.len() as u64);
    println!(
        "{} objects, {} reachable bytes, peak beyond the file {:.1} bytes per object",
        graph.len(),
        analysis.reachable_bytes,
        extra as f64 / graph.len() as f64
    );
}
