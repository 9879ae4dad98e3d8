//! Golden files (`tests/golden/*.hex`), written by hand from the format document rather than by
//! our writer: the independent oracle for every record and sub-record kind. Each file is read by
//! both readers and every field checked against the values its comments give; then the writer
//! writes those values and must give the file's bytes exactly.

use std::path::Path;

use hprof_format::{
    AllocSite, BasicType, Header, HeapRecord, IdSize, Record, Records, Tag, TimedSample, Value,
    Version, Writer,
};

use crate::sample::{slice_events, stream_events};

/// The bytes of `tests/golden/<name>`: whole bytes in hexadecimal, `#` comments.
fn golden(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut bytes = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split('#').next().unwrap();
        for group in code.split_whitespace() {
            assert!(
                group.len().is_multiple_of(2) && group.bytes().all(|b| b.is_ascii_hexdigit()),
                "{name}:{}: {group:?} is not whole bytes in hexadecimal",
                n + 1
            );
            for i in (0..group.len()).step_by(2) {
                bytes.push(u8::from_str_radix(&group[i..i + 2], 16).unwrap());
            }
        }
    }
    bytes
}

/// The header of every golden file but `id4.hex`.
fn header(version: Version) -> Header {
    Header {
        version,
        id_size: IdSize::Eight,
        timestamp_ms: 0x0000_018C_1234_5678,
    }
}

/// The values a CLASS DUMP holds.
#[derive(Debug, Clone, PartialEq)]
struct ClassValues {
    class_id: u64,
    stack_trace_serial: u32,
    super_class_id: u64,
    class_loader_id: u64,
    signers_id: u64,
    protection_domain_id: u64,
    instance_size: u32,
    constant_pool: Vec<(u16, Value)>,
    static_fields: Vec<(u64, Value)>,
    instance_fields: Vec<(u64, BasicType)>,
}

/// One sub-record a golden heap dump holds.
#[derive(Debug, Clone)]
enum Sub<'a> {
    Plain(HeapRecord<'a>),
    Class(ClassValues),
}

/// One thing a golden file holds: a record and its time, or a heap dump (one HEAP DUMP in 1.0.1,
/// one HEAP DUMP SEGMENT and HEAP DUMP END in 1.0.2).
#[derive(Debug, Clone)]
enum Item<'a> {
    Record(u32, Record<'a>),
    Dump(u32, Vec<Sub<'a>>),
}

/// The first offset where `a` and `b` differ, with the bytes around it, for messages.
fn first_difference(a: &[u8], b: &[u8]) -> String {
    let at = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let around = |v: &[u8]| format!("{:02X?}", &v[at.saturating_sub(4)..(at + 8).min(v.len())]);
    format!(
        "lengths {} and {}, first difference at byte {at}: {} vs {}",
        a.len(),
        b.len(),
        around(a),
        around(b)
    )
}

/// Reads `name` with the slice reader (every field against `items`) and the stream reader
/// (the same events), and writes `items` with the writer (the same bytes).
fn check(name: &str, header: Header, items: &[Item<'_>]) {
    let bytes = golden(name);

    // The slice reader.
    let (read_header, mut records) = Records::new(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(read_header, header, "{name}");
    let mut next = || {
        records
            .next()
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .unwrap_or_else(|| panic!("{name}: fewer records than expected"))
    };
    for item in items {
        match item {
            Item::Record(time, expected) => {
                let (rh, record) = next();
                assert_eq!(rh.time_us, *time, "{name}: {expected:?}");
                assert_eq!(&record, expected, "{name}");
            }
            Item::Dump(time, subs) => {
                let (rh, record) = next();
                assert_eq!(rh.time_us, *time, "{name}");
                let body = match (header.version, record) {
                    (Version::V1_0_1, Record::HeapDump(body))
                    | (Version::V1_0_2, Record::HeapDumpSegment(body)) => body,
                    other => panic!("{name}: {other:?} where a heap dump was expected"),
                };
                let mut heap = body.records(header.id_size);
                for sub in subs {
                    let (_, read) = heap
                        .next()
                        .unwrap_or_else(|e| panic!("{name}: {e}"))
                        .unwrap_or_else(|| panic!("{name}: fewer sub-records than expected"));
                    match (sub, read) {
                        (Sub::Plain(expected), read) => assert_eq!(&read, expected, "{name}"),
                        (Sub::Class(expected), HeapRecord::ClassDump(c)) => {
                            let read = ClassValues {
                                class_id: c.class_id,
                                stack_trace_serial: c.stack_trace_serial,
                                super_class_id: c.super_class_id,
                                class_loader_id: c.class_loader_id,
                                signers_id: c.signers_id,
                                protection_domain_id: c.protection_domain_id,
                                instance_size: c.instance_size,
                                constant_pool: c.constant_pool().collect(),
                                static_fields: c.static_fields().collect(),
                                instance_fields: c.instance_fields().collect(),
                            };
                            assert_eq!((c.reserved1, c.reserved2), (0, 0), "{name}");
                            assert_eq!(&read, expected, "{name}");
                        }
                        (Sub::Class(_), other) => panic!("{name}: {other:?} for a CLASS DUMP"),
                    }
                }
                assert!(
                    heap.next().unwrap().is_none(),
                    "{name}: more sub-records than expected"
                );
                if header.version == Version::V1_0_2 {
                    let (rh, record) = next();
                    assert_eq!((rh.time_us, record), (*time, Record::HeapDumpEnd), "{name}");
                }
            }
        }
    }
    assert!(
        records.next().unwrap().is_none(),
        "{name}: more records than expected"
    );

    // The stream reader sees the same.
    assert_eq!(
        stream_events(&bytes).unwrap(),
        slice_events(&bytes).unwrap(),
        "{name}"
    );

    // The writer gives the same bytes.
    let mut w = Writer::new(Vec::new(), header).unwrap();
    for item in items {
        match item {
            Item::Record(time, record) => w.write_record(*time, record).unwrap(),
            Item::Dump(time, subs) => {
                w.begin_heap_dump(*time).unwrap();
                for sub in subs {
                    match sub {
                        Sub::Plain(record) => w.heap_record(record).unwrap(),
                        Sub::Class(c) => w
                            .class_dump(
                                c.class_id,
                                c.stack_trace_serial,
                                c.super_class_id,
                                c.class_loader_id,
                                c.signers_id,
                                c.protection_domain_id,
                                c.instance_size,
                                &c.constant_pool,
                                &c.static_fields,
                                &c.instance_fields,
                            )
                            .unwrap(),
                    }
                }
                w.end_heap_dump().unwrap();
            }
        }
    }
    let written = w.finish().unwrap();
    assert!(
        written == bytes,
        "{name}: the writer's bytes differ from the golden file: {}",
        first_difference(&written, &bytes)
    );
}

/// A one-kind file: the 1.0.1 header, then `items`.
fn check_v101(name: &str, items: &[Item<'_>]) {
    check(name, header(Version::V1_0_1), items);
}

#[test]
fn string() {
    check_v101(
        "string.hex",
        &[
            Item::Record(
                42,
                Record::Utf8 {
                    id: 1,
                    text: b"main",
                },
            ),
            Item::Record(
                0,
                Record::Utf8 {
                    id: 0x1_0000_0002,
                    text: &[0x61, 0xC0, 0x80, 0xC3, 0xA9],
                },
            ),
            Item::Record(0, Record::Utf8 { id: 3, text: b"" }),
        ],
    );
}

#[test]
fn load_class() {
    check_v101(
        "load_class.hex",
        &[Item::Record(
            0,
            Record::LoadClass {
                class_serial: 1,
                class_id: 0x7F00_0000_1000,
                stack_trace_serial: 3,
                name_id: 2,
            },
        )],
    );
}

#[test]
fn unload_class() {
    check_v101(
        "unload_class.hex",
        &[Item::Record(16, Record::UnloadClass { class_serial: 1 })],
    );
}

#[test]
fn stack_frame() {
    let frame = |frame_id, method_name_id, signature_id, source_file_id, class_serial, line| {
        Item::Record(
            0,
            Record::StackFrame {
                frame_id,
                method_name_id,
                signature_id,
                source_file_id,
                class_serial,
                line,
            },
        )
    };
    check_v101(
        "stack_frame.hex",
        &[
            frame(0x64, 0x10, 0x11, 0x12, 1, 42),
            frame(0x65, 0x13, 0x14, 0x12, 1, 0),
            frame(0x66, 0x13, 0x14, 0, 2, -1),
            frame(0x67, 0x15, 0x16, 0, 2, -3),
        ],
    );
}

#[test]
fn stack_trace() {
    let frames = [0x64u64.to_be_bytes(), 0x65u64.to_be_bytes()].concat();
    check_v101(
        "stack_trace.hex",
        &[
            Item::Record(
                0,
                Record::StackTrace {
                    serial: 7,
                    thread_serial: 1,
                    frames: hprof_format::IdList::new(&frames, IdSize::Eight).unwrap(),
                },
            ),
            Item::Record(
                0,
                Record::StackTrace {
                    serial: 8,
                    thread_serial: 0,
                    frames: hprof_format::IdList::new(&[], IdSize::Eight).unwrap(),
                },
            ),
        ],
    );
    // The frames as the reader gives them, innermost first.
    let bytes = golden("stack_trace.hex");
    let (_, mut records) = Records::new(&bytes).unwrap();
    let Some((_, Record::StackTrace { frames, .. })) = records.next().unwrap() else {
        panic!("a STACK TRACE");
    };
    assert_eq!(frames.iter().collect::<Vec<_>>(), [0x64, 0x65]);
}

/// The ALLOC SITES records of `alloc_sites.hex`, written through the writer's own method
/// (not `write_record`) as the agent writes them.
#[test]
fn alloc_sites() {
    let bytes = golden("alloc_sites.hex");
    let (header, mut records) = Records::new(&bytes).unwrap();
    assert_eq!(header, self::header(Version::V1_0_1));
    let sites = [
        AllocSite {
            array_type: 0,
            class_serial: 1,
            stack_trace_serial: 7,
            live_bytes: 144,
            live_instances: 6,
            bytes_allocated: 3600,
            instances_allocated: 150,
        },
        AllocSite {
            array_type: BasicType::Int as u8,
            class_serial: 2,
            stack_trace_serial: 8,
            live_bytes: 256,
            live_instances: 4,
            bytes_allocated: 3200,
            instances_allocated: 50,
        },
    ];
    let Some((rh, Record::AllocSites(first))) = records.next().unwrap() else {
        panic!("ALLOC SITES");
    };
    assert_eq!(rh.time_us, 0);
    assert_eq!(
        (
            first.flags,
            first.cutoff,
            first.total_live_bytes,
            first.total_live_instances,
            first.total_bytes_allocated,
            first.total_instances_allocated
        ),
        (0x2, 0.0001, 400, 10, 6800, 200)
    );
    assert_eq!(first.sites().collect::<Vec<_>>(), sites);
    let Some((_, Record::AllocSites(second))) = records.next().unwrap() else {
        panic!("ALLOC SITES");
    };
    assert_eq!(
        (
            second.flags,
            second.cutoff,
            second.total_live_bytes,
            second.total_live_instances,
            second.total_bytes_allocated,
            second.total_instances_allocated,
            second.len()
        ),
        (0x1, 0.5, 0, 0, 0, 0, 0)
    );
    assert!(records.next().unwrap().is_none());
    assert_eq!(
        stream_events(&bytes).unwrap(),
        slice_events(&bytes).unwrap()
    );
    let mut w = Writer::new(Vec::new(), header).unwrap();
    w.alloc_sites(0, 0x2, 0.0001, 400, 10, 6800, 200, &sites)
        .unwrap();
    w.alloc_sites(0, 0x1, 0.5, 0, 0, 0, 0, &[]).unwrap();
    let written = w.finish().unwrap();
    assert!(written == bytes, "{}", first_difference(&written, &bytes));
    // And copied record by record.
    let (_, records) = Records::new(&bytes).unwrap();
    let items: Vec<Item<'_>> = records
        .map(|r| {
            let (rh, record) = r.unwrap();
            Item::Record(rh.time_us, record)
        })
        .collect();
    check_v101("alloc_sites.hex", &items);
}

#[test]
fn heap_summary() {
    check_v101(
        "heap_summary.hex",
        &[Item::Record(
            0,
            Record::HeapSummary {
                live_bytes: 400,
                live_instances: 10,
                bytes_allocated: 0x1_0000_1A90,
                instances_allocated: 200,
            },
        )],
    );
}

#[test]
fn start_thread() {
    check_v101(
        "start_thread.hex",
        &[Item::Record(
            0,
            Record::StartThread {
                thread_serial: 1,
                thread_object_id: 0x7F00_0000_2000,
                stack_trace_serial: 5,
                name_id: 0x20,
                group_name_id: 0x21,
                parent_group_name_id: 0x22,
            },
        )],
    );
}

#[test]
fn end_thread() {
    check_v101(
        "end_thread.hex",
        &[Item::Record(1000, Record::EndThread { thread_serial: 1 })],
    );
}

#[test]
fn cpu_samples() {
    let bytes = golden("cpu_samples.hex");
    let (header, mut records) = Records::new(&bytes).unwrap();
    let Some((_, Record::CpuSamples { total, traces })) = records.next().unwrap() else {
        panic!("CPU SAMPLES");
    };
    assert_eq!(
        (total, traces.iter().collect::<Vec<_>>()),
        (100, vec![(80, 7), (20, 8)])
    );
    let Some((_, Record::CpuSamples { total, traces })) = records.next().unwrap() else {
        panic!("CPU SAMPLES");
    };
    assert_eq!((total, traces.len()), (0, 0));
    assert!(records.next().unwrap().is_none());
    assert_eq!(
        stream_events(&bytes).unwrap(),
        slice_events(&bytes).unwrap()
    );
    // Written through the writer's own method, as the agent writes them.
    let mut w = Writer::new(Vec::new(), header).unwrap();
    w.cpu_samples(0, 100, &[(80, 7), (20, 8)]).unwrap();
    w.cpu_samples(0, 0, &[]).unwrap();
    let written = w.finish().unwrap();
    assert!(written == bytes, "{}", first_difference(&written, &bytes));
}

#[test]
fn timed_samples() {
    let bytes = golden("timed_samples.hex");
    let (header, mut records) = Records::new(&bytes).unwrap();
    let Some((_, Record::TimedSamples(samples))) = records.next().unwrap() else {
        panic!("TIMED SAMPLES");
    };
    let expected = [
        TimedSample {
            time_ns: 1_000_000,
            trace_serial: 7,
            thread_serial: 1,
            weight: 1,
            flags: 0,
        },
        TimedSample {
            time_ns: 10_000_000,
            trace_serial: 8,
            thread_serial: 2,
            weight: 3,
            flags: 0x1,
        },
    ];
    assert_eq!(samples.iter().collect::<Vec<_>>(), expected);
    assert!(records.next().unwrap().is_none());
    assert_eq!(
        stream_events(&bytes).unwrap(),
        slice_events(&bytes).unwrap()
    );
    let mut w = Writer::new(Vec::new(), header).unwrap();
    w.timed_samples(0, &expected).unwrap();
    let written = w.finish().unwrap();
    assert!(written == bytes, "{}", first_difference(&written, &bytes));
}

#[test]
fn object_sites() {
    let bytes = golden("object_sites.hex");
    let (header, mut records) = Records::new(&bytes).unwrap();
    let Some((_, Record::ObjectSites(sites))) = records.next().unwrap() else {
        panic!("OBJECT SITES");
    };
    assert_eq!(
        (sites.flags, sites.interval, sites.stride),
        (hprof_format::ObjectSites::SAMPLED, 16384, 1)
    );
    let groups: Vec<(u32, u32, Vec<u64>)> = sites
        .groups()
        .map(|g| {
            (
                g.class_serial,
                g.stack_trace_serial,
                g.objects.iter().collect(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        vec![(5, 7, vec![0xA01, 0xA02]), (0, 0, vec![0xA03])]
    );
    assert!(records.next().unwrap().is_none());
    assert_eq!(
        stream_events(&bytes).unwrap(),
        slice_events(&bytes).unwrap()
    );
    let mut w = Writer::new(Vec::new(), header).unwrap();
    w.object_sites(
        0,
        hprof_format::ObjectSites::SAMPLED,
        16384,
        1,
        &[(5, 7, &[0xA01, 0xA02]), (0, 0, &[0xA03])],
    )
    .unwrap();
    let written = w.finish().unwrap();
    assert!(written == bytes, "{}", first_difference(&written, &bytes));
}

#[test]
fn control_settings() {
    check_v101(
        "control_settings.hex",
        &[Item::Record(
            0,
            Record::ControlSettings {
                flags: 0x3,
                stack_trace_depth: 4,
            },
        )],
    );
}

/// The sub-records of `heap_dump.hex` and `heap_dump_segment.hex`.
fn heap_subs() -> Vec<Sub<'static>> {
    use HeapRecord::*;
    let plain = Sub::Plain;
    vec![
        plain(RootUnknown { object_id: 0xA01 }),
        plain(RootJniGlobal {
            object_id: 0xA02,
            jni_global_ref_id: 0xB01,
        }),
        plain(RootJniLocal {
            object_id: 0xA03,
            thread_serial: 1,
            frame_number: 0,
        }),
        plain(RootJavaFrame {
            object_id: 0xA04,
            thread_serial: 1,
            frame_number: u32::MAX,
        }),
        plain(RootNativeStack {
            object_id: 0xA05,
            thread_serial: 1,
        }),
        plain(RootStickyClass { object_id: 0x1100 }),
        plain(RootThreadBlock {
            object_id: 0xA06,
            thread_serial: 2,
        }),
        plain(RootMonitorUsed { object_id: 0xA07 }),
        plain(RootThreadObject {
            thread_object_id: 0x2000,
            thread_serial: 1,
            stack_trace_serial: 5,
        }),
        Sub::Class(ClassValues {
            class_id: 0x1100,
            stack_trace_serial: 0,
            super_class_id: 0x1000,
            class_loader_id: 0,
            signers_id: 0,
            protection_domain_id: 0,
            instance_size: 8,
            constant_pool: vec![(3, Value::Int(7))],
            static_fields: vec![
                (0x30, Value::Object(0xA01)),
                (0x31, Value::Boolean(1)),
                (0x32, Value::Char(u16::from(b'A'))),
                (0x33, Value::Float(1.5)),
                (0x34, Value::Double(3.5)),
                (0x35, Value::Byte(-1)),
                (0x36, Value::Short(i16::MAX)),
                (0x37, Value::Int(i32::MIN)),
                (0x38, Value::Long(-2)),
            ],
            instance_fields: vec![(0x40, BasicType::Int), (0x41, BasicType::Int)],
        }),
        plain(InstanceDump {
            object_id: 0xA01,
            stack_trace_serial: 7,
            class_id: 0x1100,
            values: &[0, 0, 0, 3, 0xFF, 0xFF, 0xFF, 0xFC],
        }),
        plain(ObjectArrayDump {
            array_id: 0xA02,
            stack_trace_serial: 0,
            array_class_id: 0x1400,
            elements: hprof_format::IdList::new(
                &[
                    0, 0, 0, 0, 0, 0, 0xA, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xA, 1,
                ],
                IdSize::Eight,
            )
            .unwrap(),
        }),
        plain(PrimitiveArrayDump {
            array_id: 0xA03,
            stack_trace_serial: 0,
            element_type: BasicType::Int,
            length: 3,
            data: &[0, 0, 0, 1, 0, 0, 0, 2, 0xFF, 0xFF, 0xFF, 0xFF],
        }),
        plain(PrimitiveArrayDump {
            array_id: 0xA04,
            stack_trace_serial: 0,
            element_type: BasicType::Char,
            length: 2,
            data: b"\0h\0i",
        }),
        plain(PrimitiveArrayDump {
            array_id: 0xA05,
            stack_trace_serial: 0,
            element_type: BasicType::Long,
            length: 1,
            data: &[0, 0, 0, 0, 0, 0, 0, 1],
        }),
        plain(PrimitiveArrayDump {
            array_id: 0xA06,
            stack_trace_serial: 0,
            element_type: BasicType::Boolean,
            length: 0,
            data: &[],
        }),
        plain(PrimitiveArrayDump {
            array_id: 0xA07,
            stack_trace_serial: 0,
            element_type: BasicType::Byte,
            length: 3,
            data: &[1, 2, 0xFD],
        }),
        plain(PrimitiveArrayDump {
            array_id: 0xA08,
            stack_trace_serial: 0,
            element_type: BasicType::Short,
            length: 1,
            data: &[0xFF, 0xFF],
        }),
        plain(PrimitiveArrayDump {
            array_id: 0xA09,
            stack_trace_serial: 0,
            element_type: BasicType::Float,
            length: 1,
            data: &[0x3F, 0x80, 0, 0],
        }),
        plain(PrimitiveArrayDump {
            array_id: 0xA0A,
            stack_trace_serial: 0,
            element_type: BasicType::Double,
            length: 1,
            data: &[0x3F, 0xF0, 0, 0, 0, 0, 0, 0],
        }),
    ]
}

#[test]
fn heap_dump_with_every_sub_record() {
    check_v101("heap_dump.hex", &[Item::Dump(100, heap_subs())]);
}

#[test]
fn heap_dump_segment_and_end() {
    check(
        "heap_dump_segment.hex",
        header(Version::V1_0_2),
        &[Item::Dump(100, heap_subs())],
    );
}

#[test]
fn four_byte_identifiers() {
    use HeapRecord::*;
    let header = Header {
        version: Version::V1_0_1,
        id_size: IdSize::Four,
        timestamp_ms: 0,
    };
    let frames = 0x64u32.to_be_bytes();
    let elements = [0xA01u32.to_be_bytes(), [0; 4]].concat();
    check(
        "id4.hex",
        header,
        &[
            Item::Record(
                0,
                Record::Utf8 {
                    id: 1,
                    text: b"main",
                },
            ),
            Item::Record(
                0,
                Record::LoadClass {
                    class_serial: 1,
                    class_id: 0x1000,
                    stack_trace_serial: 0,
                    name_id: 1,
                },
            ),
            Item::Record(
                0,
                Record::StackFrame {
                    frame_id: 0x64,
                    method_name_id: 1,
                    signature_id: 1,
                    source_file_id: 1,
                    class_serial: 1,
                    line: 7,
                },
            ),
            Item::Record(
                0,
                Record::StackTrace {
                    serial: 1,
                    thread_serial: 1,
                    frames: hprof_format::IdList::new(&frames, IdSize::Four).unwrap(),
                },
            ),
            Item::Record(
                0,
                Record::StartThread {
                    thread_serial: 1,
                    thread_object_id: 0x2000,
                    stack_trace_serial: 1,
                    name_id: 1,
                    group_name_id: 0,
                    parent_group_name_id: 0,
                },
            ),
            Item::Dump(
                0,
                vec![
                    Sub::Plain(RootJniGlobal {
                        object_id: 0xA01,
                        jni_global_ref_id: 0xB01,
                    }),
                    Sub::Class(ClassValues {
                        class_id: 0x1000,
                        stack_trace_serial: 0,
                        super_class_id: 0,
                        class_loader_id: 0,
                        signers_id: 0,
                        protection_domain_id: 0,
                        instance_size: 4,
                        constant_pool: vec![],
                        static_fields: vec![(1, Value::Object(0xA01))],
                        instance_fields: vec![(1, BasicType::Object)],
                    }),
                    Sub::Plain(InstanceDump {
                        object_id: 0xA01,
                        stack_trace_serial: 0,
                        class_id: 0x1000,
                        values: &[0, 0, 0x0A, 0x02],
                    }),
                    Sub::Plain(ObjectArrayDump {
                        array_id: 0xA02,
                        stack_trace_serial: 0,
                        array_class_id: 0x1400,
                        elements: hprof_format::IdList::new(&elements, IdSize::Four).unwrap(),
                    }),
                ],
            ),
        ],
    );
}

/// Every record kind and sub-record kind the format document lists has a golden file.
#[test]
fn every_kind_has_a_golden_file() {
    let mut tags = std::collections::HashSet::new();
    let mut sub_tags = std::collections::HashSet::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "hex") {
            continue;
        }
        let bytes = golden(path.file_name().unwrap().to_str().unwrap());
        let (header, mut records) = Records::new(&bytes).unwrap();
        while let Some((_, record)) = records.next().unwrap() {
            tags.insert(record.tag());
            if let Record::HeapDump(body) | Record::HeapDumpSegment(body) = record {
                let mut heap = body.records(header.id_size);
                while let Some((_, sub)) = heap.next().unwrap() {
                    sub_tags.insert(sub.sub_tag());
                }
            }
        }
    }
    for tag in Tag::ALL {
        assert!(tags.contains(tag), "no golden file holds {tag:?}");
    }
    for sub in hprof_format::SubTag::ALL {
        assert!(sub_tags.contains(sub), "no golden file holds {sub:?}");
    }
}
