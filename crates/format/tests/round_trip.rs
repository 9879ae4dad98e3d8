//! Write, read, write again: values survive and bytes are identical, for every record kind,
//! both versions and both identifier sizes.

use hprof_format::{Header, HeapRecord, Record, Records, SubTag, Tag, Version, Writer};

use crate::sample::{every_kind, layouts, slice_events, stream_events};

/// Re-encodes every record the slice reader yields, heap sub-records one by one.
fn rewrite(bytes: &[u8], segment_limit: usize) -> Vec<u8> {
    let (header, mut records) = Records::new(bytes).unwrap();
    let mut w = Writer::new(Vec::new(), header).unwrap();
    w.set_segment_limit(segment_limit);
    let mut open = false;
    while let Some((rh, record)) = records.next().unwrap() {
        match record {
            Record::HeapDump(body) | Record::HeapDumpSegment(body) => {
                if !open {
                    w.begin_heap_dump(rh.time_us).unwrap();
                    open = true;
                }
                let mut heap = body.records(header.id_size);
                while let Some((_, sub)) = heap.next().unwrap() {
                    w.heap_record(&sub).unwrap();
                }
                if matches!(record, Record::HeapDump(_)) {
                    w.end_heap_dump().unwrap();
                    open = false;
                }
            }
            Record::HeapDumpEnd => {
                w.end_heap_dump().unwrap();
                open = false;
            }
            other => w.write_record(rh.time_us, &other).unwrap(),
        }
    }
    w.finish().unwrap()
}

/// Copies every record as-is with `write_record`, heap dump bodies included.
fn copy_records(bytes: &[u8]) -> Vec<u8> {
    let (header, mut records) = Records::new(bytes).unwrap();
    let mut w = Writer::new(Vec::new(), header).unwrap();
    while let Some((rh, record)) = records.next().unwrap() {
        w.write_record(rh.time_us, &record).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn every_kind_round_trips_byte_for_byte() {
    for (version, id_size) in layouts() {
        for limit in [64 << 20, 200] {
            let bytes = every_kind(version, id_size, limit);
            assert_eq!(
                rewrite(&bytes, limit),
                bytes,
                "{version:?} {id_size:?} limit {limit}"
            );
            assert_eq!(
                copy_records(&bytes),
                bytes,
                "{version:?} {id_size:?} limit {limit}"
            );
        }
    }
}

#[test]
fn both_readers_see_the_same_records() {
    for (version, id_size) in layouts() {
        let bytes = every_kind(version, id_size, 300);
        let from_slice = slice_events(&bytes).unwrap();
        assert_eq!(
            stream_events(&bytes).unwrap(),
            from_slice,
            "{version:?} {id_size:?}"
        );
        // A reader that gets one byte at a time still sees the same.
        let mut reader = hprof_format::StreamReader::new(OneByte(&bytes)).unwrap();
        let mut n = 1;
        while reader.next_event().unwrap().is_some() {
            n += 1;
        }
        assert_eq!(n, from_slice.len());
    }
}

#[test]
fn every_tag_and_sub_tag_is_present() {
    for (version, id_size) in layouts() {
        let bytes = every_kind(version, id_size, 64 << 20);
        let (header, mut records) = Records::new(&bytes).unwrap();
        let (mut tags, mut sub_tags) = (Vec::new(), Vec::new());
        while let Some((_, record)) = records.next().unwrap() {
            tags.push(record.tag());
            if let Record::HeapDump(body) | Record::HeapDumpSegment(body) = record {
                let mut heap = body.records(header.id_size);
                while let Some((_, sub)) = heap.next().unwrap() {
                    sub_tags.push(sub.sub_tag());
                }
            }
        }
        let (dump_tags, absent): (&[Tag], &[Tag]) = match version {
            Version::V1_0_1 => (&[Tag::HeapDump], &[Tag::HeapDumpSegment, Tag::HeapDumpEnd]),
            Version::V1_0_2 => (&[Tag::HeapDumpSegment, Tag::HeapDumpEnd], &[Tag::HeapDump]),
        };
        for tag in Tag::ALL {
            assert_eq!(
                tags.contains(tag),
                !absent.contains(tag),
                "{tag:?} {version:?}"
            );
        }
        assert!(dump_tags.iter().all(|t| tags.contains(t)));
        for sub in SubTag::ALL {
            assert!(sub_tags.contains(sub), "{sub:?}");
        }
    }
}

#[test]
fn object_sites_read_back_and_split_into_records() {
    let header = Header {
        version: Version::V1_0_2,
        id_size: hprof_format::IdSize::Eight,
        timestamp_ms: 0,
    };
    let big: Vec<u64> = (1..=9_000_000u64).map(|i| i * 8).collect();
    let mut w = Writer::new(Vec::new(), header).unwrap();
    w.object_sites(0, 0, 0, 4, &[(7, 300002, &big[..]), (0, 0, &[0x10][..])])
        .unwrap();
    let bytes = w.finish().unwrap();
    let (_, mut records) = Records::new(&bytes).unwrap();
    let mut groups = Vec::new();
    let mut count = 0;
    while let Some((rh, record)) = records.next().unwrap() {
        let Record::ObjectSites(sites) = record else {
            panic!("{record:?}")
        };
        assert!(rh.length <= 64 << 20, "{}", rh.length);
        assert_eq!((sites.flags, sites.interval, sites.stride), (0, 0, 4));
        count += 1;
        for g in sites.groups() {
            groups.push((
                g.class_serial,
                g.stack_trace_serial,
                g.objects.iter().collect::<Vec<_>>(),
            ));
        }
    }
    assert_eq!(count, 2, "72 MB of ids take two records");
    let ids: Vec<u64> = groups
        .iter()
        .filter(|g| g.0 == 7)
        .flat_map(|g| g.2.iter().copied())
        .collect();
    assert_eq!(ids, big);
    assert_eq!(groups.last().unwrap(), &(0, 0, vec![0x10]));
}

#[test]
fn values_read_back_exactly() {
    let bytes = every_kind(Version::V1_0_2, hprof_format::IdSize::Eight, 64 << 20);
    let (header, mut records) = Records::new(&bytes).unwrap();
    assert_eq!(
        header,
        Header {
            version: Version::V1_0_2,
            id_size: hprof_format::IdSize::Eight,
            timestamp_ms: 0x0123_4567_89ab
        }
    );
    let mut seen_class = false;
    while let Some((_, record)) = records.next().unwrap() {
        if let Record::AllocSites(sites) = record
            && sites.flags == 0x2
        {
            {
                assert_eq!(sites.cutoff, 0.0001f32);
                assert_eq!(sites.total_bytes_allocated, 1 << 40);
                let all: Vec<_> = sites.sites().collect();
                assert_eq!(all.len(), 2);
                assert_eq!(all[0].bytes_allocated, u32::MAX);
                assert_eq!(all[1].array_type, 8);
            }
        }
        if let Record::HeapDumpSegment(body) = record {
            let mut heap = body.records(header.id_size);
            while let Some((_, sub)) = heap.next().unwrap() {
                if let HeapRecord::ClassDump(class) = sub
                    && class.class_id == 0x200
                {
                    {
                        seen_class = true;
                        assert_eq!(class.instance_size, 40);
                        assert_eq!(class.class_loader_id, 0x500);
                        let statics: Vec<_> = class.static_fields().collect();
                        assert_eq!(statics.len(), 10);
                        assert!(
                            statics[4]
                                .1
                                .same_bits(&hprof_format::Value::Float(f32::from_bits(
                                    0x7fc0_0001
                                )))
                        );
                        assert!(statics[5].1.same_bits(&hprof_format::Value::Double(-0.0)));
                        assert_eq!(statics[2].1, hprof_format::Value::Boolean(0x7f));
                        assert_eq!(
                            class.constant_pool().map(|(i, _)| i).collect::<Vec<_>>(),
                            (1..=10).collect::<Vec<u16>>()
                        );
                        assert_eq!(class.instance_fields().count(), 10);
                    }
                }
            }
        }
    }
    assert!(seen_class);
}

/// A reader that hands out one byte per read call.
struct OneByte<'a>(&'a [u8]);

impl std::io::Read for OneByte<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match (self.0.split_first(), buf.is_empty()) {
            (Some((&b, rest)), false) => {
                buf[0] = b;
                self.0 = rest;
                Ok(1)
            }
            _ => Ok(0),
        }
    }
}
