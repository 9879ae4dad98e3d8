//! The rewriter never panics, whatever the bytes: real class files (the repository's Java
//! programs) with bytes flipped, truncated or spliced either instrument, or fail with an
//! error that has an offset.

use hprof_classfile::{TRACKER_CLASS, TRACKER_PROBES, instrument, tracker_class};

/// xorshift64*: deterministic, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The class files the tests' Java programs compile to, and the tracker class.
fn samples() -> Vec<Vec<u8>> {
    let dir = hprof_testkit::java::classes();
    let mut out = vec![tracker_class(TRACKER_CLASS)];
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (run scripts/build-java.sh)", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "class"))
        .collect();
    names.sort();
    for path in names {
        out.push(std::fs::read(path).unwrap());
    }
    out
}

#[test]
fn mutated_class_files_never_panic() {
    let samples = samples();
    assert!(samples.len() > 20, "{} samples", samples.len());
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut rewritten = 0;
    for round in 0..20000 {
        let original = &samples[round % samples.len()];
        let mut bytes = original.clone();
        match rng.below(4) {
            // Flip a few bytes anywhere.
            0 | 1 => {
                for _ in 0..1 + rng.below(4) {
                    let at = rng.below(bytes.len());
                    bytes[at] ^= 1 << rng.below(8);
                }
            }
            // Cut it short.
            2 => bytes.truncate(rng.below(bytes.len())),
            // Copy a stretch of it over another place.
            _ => {
                let len = 1 + rng.below(16);
                let from = rng.below(bytes.len().saturating_sub(len));
                let to = rng.below(bytes.len().saturating_sub(len));
                let piece = bytes[from..from + len.min(bytes.len() - from)].to_vec();
                let end = (to + piece.len()).min(bytes.len());
                bytes[to..end].copy_from_slice(&piece[..end - to]);
            }
        }
        match instrument(&bytes, &TRACKER_PROBES, |m| Some(m.index as u32 + 1)) {
            Ok(outcome) => {
                if outcome.bytes.is_some() {
                    rewritten += 1;
                }
            }
            Err(e) => assert!(e.offset <= bytes.len() + 65_536, "round {round}: {e}"),
        }
    }
    // Many mutations leave a class rewritable (a flipped bit in a string, say).
    assert!(rewritten > 100, "{rewritten}");
}
