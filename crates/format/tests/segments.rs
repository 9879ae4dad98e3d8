//! The writer splits heap dumps into HEAP DUMP SEGMENTs and ends them with HEAP DUMP END.

use hprof_format::{Header, IdSize, Record, Records, Version, Writer};

use crate::sample::{every_kind, slice_events};

fn segment_lengths(bytes: &[u8]) -> (Vec<u32>, usize) {
    let (_, mut records) = Records::new(bytes).unwrap();
    let (mut lengths, mut ends) = (Vec::new(), 0);
    while let Some((rh, record)) = records.next().unwrap() {
        match record {
            Record::HeapDumpSegment(_) => lengths.push(rh.length),
            Record::HeapDumpEnd => {
                ends += 1;
                assert!(!lengths.is_empty(), "HEAP DUMP END before any segment");
            }
            _ => {}
        }
    }
    (lengths, ends)
}

#[test]
fn a_small_limit_gives_several_segments_with_the_same_contents() {
    let whole = every_kind(Version::V1_0_2, IdSize::Eight, 64 << 20);
    // Limits are clamped to at least 1 KiB.
    let split = every_kind(Version::V1_0_2, IdSize::Eight, 256);
    let (one, ends) = segment_lengths(&whole);
    assert_eq!((one.len(), ends), (1, 1));
    let (many, ends) = segment_lengths(&split);
    assert_eq!(ends, 1);
    assert!(many.len() >= 3, "{many:?}");
    assert!(many.iter().all(|&len| len <= 1024), "{many:?}");
    assert_eq!(
        many.iter().map(|&l| u64::from(l)).sum::<u64>(),
        u64::from(one[0])
    );
    // The same sub-records, in the same order.
    let subs = |events: Vec<String>| -> Vec<String> {
        events
            .into_iter()
            .filter(|e| e.chars().next().is_some_and(|c| c.is_ascii_digit()))
            .map(|e| e.split_once(' ').unwrap().1.to_string())
            .collect()
    };
    assert_eq!(
        subs(slice_events(&split).unwrap()),
        subs(slice_events(&whole).unwrap())
    );
}

#[test]
fn a_sub_record_bigger_than_the_limit_gets_a_segment_of_its_own() {
    let header = Header {
        version: Version::V1_0_2,
        id_size: IdSize::Eight,
        timestamp_ms: 0,
    };
    let mut w = Writer::new(Vec::new(), header).unwrap();
    w.set_segment_limit(1024);
    w.begin_heap_dump(0).unwrap();
    w.primitive_array(1, 0, hprof_format::BasicType::Byte, 10, &[0; 10])
        .unwrap();
    w.primitive_array(2, 0, hprof_format::BasicType::Byte, 2000, &[7; 2000])
        .unwrap();
    w.primitive_array(3, 0, hprof_format::BasicType::Byte, 10, &[0; 10])
        .unwrap();
    w.end_heap_dump().unwrap();
    let bytes = w.finish().unwrap();
    let (lengths, ends) = segment_lengths(&bytes);
    assert_eq!(ends, 1);
    assert_eq!(lengths, [28, 2018, 28]);
}

#[test]
fn records_outside_a_dump_are_refused_while_it_is_open() {
    let header = Header {
        version: Version::V1_0_2,
        id_size: IdSize::Eight,
        timestamp_ms: 0,
    };
    let mut w = Writer::new(Vec::new(), header).unwrap();
    w.begin_heap_dump(0).unwrap();
    assert!(w.utf8(0, 1, b"x").is_err());
    let mut w = Writer::new(Vec::new(), header).unwrap();
    w.begin_heap_dump(0).unwrap();
    assert!(w.finish().is_err());
}

#[test]
fn four_byte_identifiers_that_do_not_fit_are_an_error() {
    let header = Header {
        version: Version::V1_0_2,
        id_size: IdSize::Four,
        timestamp_ms: 0,
    };
    let mut w = Writer::new(Vec::new(), header).unwrap();
    assert!(w.utf8(0, 1 << 32, b"x").is_err());
    assert!(w.utf8(0, u64::from(u32::MAX), b"x").is_ok());
}

#[test]
fn a_raw_segment_follows_the_buffered_records_as_a_segment_of_its_own() {
    let header = Header {
        version: Version::V1_0_2,
        id_size: IdSize::Eight,
        timestamp_ms: 0,
    };
    // The sub-records of a second writer's dump, copied as one raw body.
    let mut other = Writer::new(Vec::new(), header).unwrap();
    other.begin_heap_dump(0).unwrap();
    other
        .primitive_array(
            0x20,
            7,
            hprof_format::BasicType::Int,
            2,
            &[0, 0, 0, 1, 0, 0, 0, 2],
        )
        .unwrap();
    other
        .root(&hprof_format::HeapRecord::RootStickyClass { object_id: 0x30 })
        .unwrap();
    other.end_heap_dump().unwrap();
    let other = other.finish().unwrap();
    let (_, mut records) = Records::new(&other).unwrap();
    let body = loop {
        if let (_, Record::HeapDumpSegment(body)) = records.next().unwrap().unwrap() {
            break body.data.to_vec();
        }
    };

    let mut w = Writer::new(Vec::new(), header).unwrap();
    w.begin_heap_dump(0).unwrap();
    w.root(&hprof_format::HeapRecord::RootUnknown { object_id: 0x10 })
        .unwrap();
    w.heap_segment(&body).unwrap();
    w.end_heap_dump().unwrap();
    let bytes = w.finish().unwrap();
    let (lengths, ends) = segment_lengths(&bytes);
    assert_eq!(lengths, vec![9, body.len() as u32]);
    assert_eq!(ends, 1);
    // Outside a heap dump it is refused.
    let mut w = Writer::new(Vec::new(), header).unwrap();
    assert!(w.heap_segment(&body).is_err());
}
