//! Times the phases of building and analysing a dump's graph and prints the peak RSS after
//! each (from /proc/self/status), to see where time and memory go.

use std::time::Instant;

use hprof_heap::{Analysis, HeapGraph};

fn peak_rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb / 1024)
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: phases FILE");
    let file = std::fs::File::open(&path).expect("readable file");
    let bytes = std::fs::read(&path).expect("readable file");
    drop(file);
    let start = Instant::now();
    let last = std::sync::Mutex::new(Instant::now());
    let phase = |name: &str| {
        let mut last = last.lock().unwrap();
        eprintln!(
            "{:8.2} s (+{:.2}) peak {} MiB: {name}",
            start.elapsed().as_secs_f64(),
            last.elapsed().as_secs_f64(),
            peak_rss_mib()
        );
        *last = Instant::now();
    };
    let mut graph = HeapGraph::build(&bytes, &phase).expect("valid HPROF");
    let (analysis, _strong) = Analysis::new(&mut graph, &phase);
    phase("done");
    println!(
        "{} objects, {} reachable bytes",
        graph.len(),
        analysis.reachable_bytes
    );
}
