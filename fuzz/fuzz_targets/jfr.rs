//! Fuzz target: feeds arbitrary bytes to the JFR reader, and to the profile reader that
//! builds profiles from it. Neither may panic, loop forever or allocate from a length field.
//!
//! Run with `cargo fuzz run jfr` from the repository root (needs a nightly toolchain); the
//! recordings in `crates/cli/tests/data/async-profiler` make a good seed corpus.

#![no_main]

use hprof_jfr::{Value, chunks};
use libfuzzer_sys::fuzz_target;

fn read_all(data: &[u8]) -> Option<usize> {
    let mut n = 0;
    let mut values = Vec::new();
    for chunk in chunks(data) {
        let chunk = chunk.ok()?;
        for event in chunk.events() {
            let event = event.ok()?;
            chunk.read_event(&event, &mut values).ok()?;
            for v in &values {
                if let Value::Ref { class, key } = v {
                    chunk.constant(*class, *key).ok()?;
                }
            }
            n += 1;
        }
    }
    Some(n)
}

fuzz_target!(|data: &[u8]| {
    let events = read_all(data);
    if let Ok(recording) = hprof_profile::Recording::read(data) {
        for kind in hprof_profile::Kind::ALL {
            let _ = recording.profile(kind, hprof_profile::Selection::All, true);
        }
    } else if data.starts_with(b"FLR\0") {
        // The profile reader reads every event: it fails only where the JFR reader does.
        assert!(events.is_none(), "the profile reader rejects a recording the reader accepts");
    }
});
