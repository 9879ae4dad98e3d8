//! Random and mutated files: both readers return Ok or Err, never panic, and terminate.

use hprof_format::{IdSize, Version};
use proptest::prelude::*;

use crate::sample::{every_kind, slice_events, stream_events};

fn check(bytes: &[u8]) {
    let slice = slice_events(bytes);
    let stream = stream_events(bytes);
    // Both readers share their parsers: they agree on success. On failure they may name
    // different offsets: the slice reader checks a segment's length before its contents,
    // the stream reader parses the contents as they arrive.
    match (&slice, &stream) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(_), Err(_)) => {}
        _ => panic!("readers disagree: {slice:?} / {stream:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes(tail in proptest::collection::vec(any::<u8>(), 0..400), id8 in any::<bool>()) {
        let mut bytes = b"JAVA PROFILE 1.0.2\0".to_vec();
        bytes.extend_from_slice(&(if id8 { 8u32 } else { 4 }).to_be_bytes());
        bytes.extend_from_slice(&[0; 8]);
        bytes.extend_from_slice(&tail);
        check(&bytes);
    }

    #[test]
    fn mutated_valid_files(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        id8 in any::<bool>(),
        v2 in any::<bool>(),
    ) {
        let version = if v2 { Version::V1_0_2 } else { Version::V1_0_1 };
        let id_size = if id8 { IdSize::Eight } else { IdSize::Four };
        let mut bytes = every_kind(version, id_size, 300);
        for (index, value) in flips {
            let at = index.index(bytes.len());
            bytes[at] = value;
        }
        check(&bytes);
    }
}
