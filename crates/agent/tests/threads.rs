//! THREAD START / THREAD END records.

use crate::support::{TextProfile, jdk17, profile, read_text, text_output};

#[test]
fn two_hundred_short_lived_threads_each_start_and_end() {
    let (run, dir) = profile(&jdk17(), "cpu=samples", "ManyThreads", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let p = TextProfile::parse(&read_text(&text_output(dir.path())));
    let workers: Vec<u32> = p
        .thread_starts
        .iter()
        .filter(|(_, n)| n.starts_with("worker-"))
        .map(|(s, _)| *s)
        .collect();
    assert_eq!(workers.len(), 200);
    for n in 0..200 {
        assert!(p.thread(&format!("worker-{n}")).is_some(), "worker-{n}");
    }
    for serial in &workers {
        assert_eq!(
            p.thread_ends.iter().filter(|s| *s == serial).count(),
            1,
            "{serial}"
        );
    }
    // Serials are unique and main, seen at VM init, is 200001.
    let mut serials: Vec<u32> = p.thread_starts.iter().map(|(s, _)| *s).collect();
    serials.sort();
    serials.dedup();
    assert_eq!(serials.len(), p.thread_starts.len());
    assert_eq!(p.thread("main"), Some(200001));
    // Threads running before the agent's VM init are listed too.
    assert!(p.thread("Reference Handler").is_some() && p.thread("Signal Dispatcher").is_some());
}
