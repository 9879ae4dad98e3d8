//! A file holding every record kind and every heap sub-record kind, and a way to list what a
//! reader sees in it.

use hprof_format::{
    AllocSite, BasicType, Event, Header, HeapRecord, IdSize, Record, Records, StreamReader, Value,
    Version, Writer,
};

/// Every (version, identifier size) pair.
pub fn layouts() -> Vec<(Version, IdSize)> {
    let mut all = Vec::new();
    for version in [Version::V1_0_1, Version::V1_0_2] {
        for id_size in [IdSize::Four, IdSize::Eight] {
            all.push((version, id_size));
        }
    }
    all
}

fn id(bytes: u64, size: IdSize) -> Vec<u8> {
    match size {
        IdSize::Four => (bytes as u32).to_be_bytes().to_vec(),
        IdSize::Eight => bytes.to_be_bytes().to_vec(),
    }
}

/// Writes every kind of record and sub-record, with a heap dump split into segments of at
/// most `segment_limit` bytes (1.0.2).
pub fn every_kind(version: Version, id_size: IdSize, segment_limit: usize) -> Vec<u8> {
    let header = Header {
        version,
        id_size,
        timestamp_ms: 0x0123_4567_89ab,
    };
    let mut w = Writer::new(Vec::new(), header).unwrap();
    w.set_segment_limit(segment_limit);
    w.control_settings(1, 0x3, 8).unwrap();
    w.utf8(2, 1, b"java/lang/Object").unwrap();
    w.utf8(2, 2, "caf\u{e9}/\u{1F600}".as_bytes()).unwrap();
    w.utf8(2, 3, b"").unwrap();
    w.load_class(3, 1, 0x100, 300001, 1).unwrap();
    w.load_class(3, 2, 0x200, 300001, 2).unwrap();
    w.unload_class(4, 2).unwrap();
    w.stack_frame(5, 0x10, 1, 2, 3, 1, 17).unwrap();
    w.stack_frame(5, 0x11, 1, 2, 0, 1, -3).unwrap();
    w.stack_trace(6, 300001, 200001, &[0x10, 0x11]).unwrap();
    w.stack_trace(6, 300000, 0, &[]).unwrap();
    let site = |array_type| AllocSite {
        array_type,
        class_serial: 1,
        stack_trace_serial: 300001,
        live_bytes: 48,
        live_instances: 2,
        bytes_allocated: u32::MAX,
        instances_allocated: 7,
    };
    w.alloc_sites(
        7,
        0x2,
        0.0001,
        48,
        2,
        1 << 40,
        7,
        &[site(0), site(BasicType::Byte as u8)],
    )
    .unwrap();
    w.alloc_sites(7, 0, 0.5, 0, 0, 0, 0, &[]).unwrap();
    w.heap_summary(8, 48, 2, u64::MAX, 7).unwrap();
    w.start_thread(9, 200001, 0x300, 300001, 1, 2, 3).unwrap();
    w.cpu_samples(10, 12, &[(10, 300001), (2, 300000)]).unwrap();
    w.cpu_samples(10, 0, &[]).unwrap();
    w.timed_samples(
        11,
        &[
            hprof_format::TimedSample {
                time_ns: 1_500_000,
                trace_serial: 300001,
                thread_serial: 1,
                weight: 2,
                flags: 0,
            },
            hprof_format::TimedSample {
                time_ns: u64::MAX,
                trace_serial: 300000,
                thread_serial: 0,
                weight: 1,
                flags: 1,
            },
        ],
    )
    .unwrap();
    w.timed_samples(11, &[]).unwrap();

    w.begin_heap_dump(11).unwrap();
    let roots = [
        HeapRecord::RootUnknown { object_id: 0x400 },
        HeapRecord::RootJniGlobal {
            object_id: 0x401,
            jni_global_ref_id: 0x999,
        },
        HeapRecord::RootJniLocal {
            object_id: 0x402,
            thread_serial: 200001,
            frame_number: u32::MAX,
        },
        HeapRecord::RootJavaFrame {
            object_id: 0x403,
            thread_serial: 200001,
            frame_number: 2,
        },
        HeapRecord::RootNativeStack {
            object_id: 0x404,
            thread_serial: 200001,
        },
        HeapRecord::RootStickyClass { object_id: 0x100 },
        HeapRecord::RootThreadBlock {
            object_id: 0x405,
            thread_serial: 200001,
        },
        HeapRecord::RootMonitorUsed { object_id: 0x406 },
        HeapRecord::RootThreadObject {
            thread_object_id: 0x300,
            thread_serial: 200001,
            stack_trace_serial: 300001,
        },
    ];
    for root in &roots {
        w.root(root).unwrap();
    }
    let every_value = [
        Value::Object(0x401),
        Value::Boolean(1),
        Value::Boolean(0x7f),
        Value::Char(0xe9),
        Value::Float(f32::from_bits(0x7fc0_0001)),
        Value::Double(-0.0),
        Value::Byte(-1),
        Value::Short(i16::MIN),
        Value::Int(i32::MAX),
        Value::Long(i64::MIN),
    ];
    let pool: Vec<(u16, Value)> = every_value
        .iter()
        .enumerate()
        .map(|(i, v)| (i as u16 + 1, *v))
        .collect();
    let statics: Vec<(u64, Value)> = every_value.iter().map(|v| (2, *v)).collect();
    let fields: Vec<(u64, BasicType)> = every_value.iter().map(|v| (1, v.basic_type())).collect();
    w.class_dump(0x100, 300001, 0, 0, 0, 0, 0, &[], &[], &[])
        .unwrap();
    w.class_dump(
        0x200, 300001, 0x100, 0x500, 0x501, 0x502, 40, &pool, &statics, &fields,
    )
    .unwrap();
    let values: Vec<u8> = [
        id(0x401, id_size),
        vec![1, 0x7f, 0, 0xe9],
        vec![0x7f, 0xc0, 0, 1],
        (-0.0f64).to_be_bytes().to_vec(),
        vec![0xff, 0x80, 0],
        i32::MAX.to_be_bytes().to_vec(),
        i64::MIN.to_be_bytes().to_vec(),
    ]
    .concat();
    for n in 0..20u64 {
        w.instance_dump(0x1000 + n, 300001, 0x200, &values).unwrap();
    }
    w.instance_dump(0x2000, 300000, 0x100, &[]).unwrap();
    w.object_array(0x3000, 300001, 0x100, &[0x1000, 0, 0x1001, 0])
        .unwrap();
    w.object_array(0x3001, 300001, 0x100, &[]).unwrap();
    let arrays: [(BasicType, u32, Vec<u8>); 8] = [
        (BasicType::Boolean, 3, vec![1, 0, 1]),
        (BasicType::Char, 2, vec![0, 0x41, 0x20, 0xac]),
        (BasicType::Float, 1, 1.5f32.to_be_bytes().to_vec()),
        (BasicType::Double, 1, 2.25f64.to_be_bytes().to_vec()),
        (BasicType::Byte, 4, vec![1, 2, 3, 4]),
        (BasicType::Short, 1, vec![0x80, 0]),
        (
            BasicType::Int,
            2,
            [7i32.to_be_bytes(), (-7i32).to_be_bytes()].concat(),
        ),
        (BasicType::Long, 0, vec![]),
    ];
    for (n, (ty, len, data)) in arrays.iter().enumerate() {
        w.primitive_array(0x4000 + n as u64, 300001, *ty, *len, data)
            .unwrap();
    }
    w.end_heap_dump().unwrap();
    w.object_sites(
        12,
        hprof_format::ObjectSites::SAMPLED,
        16384,
        1,
        &[
            (2, 300001, &[0x1000, 0x1001][..]),
            (0, 0, &[0x2000][..]),
            (1, 300001, &[][..]),
        ],
    )
    .unwrap();
    w.end_thread(12, 200001).unwrap();
    w.finish().unwrap()
}

/// What the slice reader sees, one line per record or sub-record.
pub fn slice_events(bytes: &[u8]) -> Result<Vec<String>, hprof_format::Error> {
    let (header, mut records) = Records::new(bytes)?;
    let mut out = vec![format!("{header:?}")];
    while let Some((rh, record)) = records.next()? {
        match record {
            Record::HeapDump(body) | Record::HeapDumpSegment(body) => {
                out.push(format!("start {:?} at {}", rh.tag, rh.offset));
                let mut heap = body.records(header.id_size);
                while let Some((offset, sub)) = heap.next()? {
                    out.push(format!("{offset} {sub:?}"));
                }
                out.push("finish".into());
            }
            other => out.push(format!("{rh:?} {other:?}")),
        }
    }
    Ok(out)
}

/// What the stream reader sees, in the same form as [`slice_events`].
pub fn stream_events(bytes: &[u8]) -> Result<Vec<String>, hprof_format::Error> {
    let mut reader = StreamReader::new(bytes)?;
    let mut out = vec![format!("{:?}", reader.header())];
    while let Some(event) = reader.next_event()? {
        out.push(match event {
            Event::Record(rh, record) => format!("{rh:?} {record:?}"),
            Event::HeapDumpStart(rh) => format!("start {:?} at {}", rh.tag, rh.offset),
            Event::HeapRecord(offset, sub) => format!("{offset} {sub:?}"),
            Event::HeapDumpFinish => "finish".into(),
        });
    }
    Ok(out)
}
