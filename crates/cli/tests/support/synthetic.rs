//! Builds small HPROF files with a known population through `hprof_format::Writer`.

use hprof_format::{AllocSite, BasicType, Header, HeapRecord, IdSize, Value, Version, Writer};

/// Known contents of [`population`], for assertions.
pub mod known {
    pub const POINTS: u64 = 100;
    pub const POINTS3: u64 = 10;
    pub const SEGMENTS: u64 = 40;
    pub const POINT_ARRAYS: u64 = 5; // length 3 each
    pub const INT_ARRAYS: u64 = 7; // length 10 each
    pub const BYTE_ARRAYS: u64 = 2; // length 5 each
    /// Shallow sizes: Point = align8(12 + 4 + 4), Point3 = align8(12 + 12),
    /// Segment = align8(12 + 4 + 4 + 8), Point[3] = align8(16 + 12), int[10] = 56, byte[5] = 24.
    pub const POINT_SIZE: u64 = 24;
    pub const POINT3_SIZE: u64 = 24;
    pub const SEGMENT_SIZE: u64 = 32;
    pub const POINT_ARRAY_SIZE: u64 = 32;
    pub const INT_ARRAY_SIZE: u64 = 56;
    pub const BYTE_ARRAY_SIZE: u64 = 24;
}

const OBJECT: u64 = 0x1000;
const POINT: u64 = 0x1100;
const POINT3: u64 = 0x1200;
const SEGMENT: u64 = 0x1300;
const POINT_ARRAY: u64 = 0x1400;
const INT_ARRAY: u64 = 0x1500;
const BYTE_ARRAY: u64 = 0x1600;

/// Name string ids.
const S_OBJECT: u64 = 1;
const S_POINT: u64 = 2;
const S_POINT3: u64 = 3;
const S_SEGMENT: u64 = 4;
const S_POINT_ARRAY: u64 = 5;
const S_X: u64 = 6;
const S_Y: u64 = 7;
const S_Z: u64 = 8;
const S_A: u64 = 9;
const S_B: u64 = 10;
const S_LABEL: u64 = 11;
const S_MAIN: u64 = 12;
const S_GROUP: u64 = 13;
const S_RUN: u64 = 14;
const S_SOURCE: u64 = 15;
const S_SIG: u64 = 16;
const S_INT_ARRAY: u64 = 17;
const S_BYTE_ARRAY: u64 = 18;
const S_COUNTER: u64 = 19;

/// Which optional parts a file carries.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub version: Version,
    pub id_size: IdSize,
    /// Segment limit for 1.0.2 heap dumps (small values force several segments).
    pub segment_limit: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            version: Version::V1_0_2,
            id_size: IdSize::Eight,
            segment_limit: 64 << 20,
        }
    }
}

fn id_bytes(id: u64, size: IdSize) -> Vec<u8> {
    match size {
        IdSize::Four => (id as u32).to_be_bytes().to_vec(),
        IdSize::Eight => id.to_be_bytes().to_vec(),
    }
}

/// A file with threads, traces, sites, CPU samples and one heap dump of the known population.
pub fn population(options: Options) -> Vec<u8> {
    let header = Header {
        version: options.version,
        id_size: options.id_size,
        timestamp_ms: 1_795_000_000_000,
    };
    let mut w = Writer::new(Vec::new(), header).unwrap();
    w.set_segment_limit(options.segment_limit);
    for (id, text) in [
        (S_OBJECT, "java/lang/Object"),
        (S_POINT, "demo/Point"),
        (S_POINT3, "demo/Point3"),
        (S_SEGMENT, "demo/Segment"),
        (S_POINT_ARRAY, "[Ldemo/Point;"),
        (S_X, "x"),
        (S_Y, "y"),
        (S_Z, "z"),
        (S_A, "a"),
        (S_B, "b"),
        (S_LABEL, "label"),
        (S_MAIN, "main"),
        (S_GROUP, "main"),
        (S_RUN, "run"),
        (S_SOURCE, "Point.java"),
        (S_SIG, "()V"),
        (S_INT_ARRAY, "[I"),
        (S_BYTE_ARRAY, "[B"),
        (S_COUNTER, "counter"),
    ] {
        w.utf8(0, id, text.as_bytes()).unwrap();
    }
    w.control_settings(0, 0x2, 4).unwrap();
    for (serial, class, name) in [
        (1, OBJECT, S_OBJECT),
        (2, POINT, S_POINT),
        (3, POINT3, S_POINT3),
        (4, SEGMENT, S_SEGMENT),
        (5, POINT_ARRAY, S_POINT_ARRAY),
        (6, INT_ARRAY, S_INT_ARRAY),
        (7, BYTE_ARRAY, S_BYTE_ARRAY),
    ] {
        w.load_class(0, serial, class, 0, name).unwrap();
    }
    w.stack_frame(0, 0x9001, S_RUN, S_SIG, S_SOURCE, 2, 42)
        .unwrap();
    w.stack_frame(0, 0x9002, S_RUN, S_SIG, 0, 4, -3).unwrap();
    w.stack_trace(0, 300000, 0, &[]).unwrap();
    w.stack_trace(0, 300001, 200001, &[0x9001, 0x9002]).unwrap();
    w.start_thread(1000, 200001, 0x7000, 300001, S_MAIN, S_GROUP, 0)
        .unwrap();
    w.cpu_samples(2000, 10, &[(7, 300001), (3, 300000)])
        .unwrap();
    let site = |class_serial, live_bytes, live_instances| AllocSite {
        array_type: 0,
        class_serial,
        stack_trace_serial: 300001,
        live_bytes,
        live_instances,
        bytes_allocated: live_bytes * 2,
        instances_allocated: live_instances * 2,
    };
    w.alloc_sites(
        3000,
        0,
        0.0001,
        3680,
        140,
        7360,
        280,
        &[site(2, 2400, 100), site(4, 1280, 40)],
    )
    .unwrap();
    w.heap_summary(3000, 3680, 140, 7360, 280).unwrap();

    let ids = options.id_size;
    w.begin_heap_dump(4000).unwrap();
    let no_fields: &[(u64, BasicType)] = &[];
    w.class_dump(OBJECT, 300000, 0, 0, 0, 0, 0, &[], &[], no_fields)
        .unwrap();
    w.class_dump(
        POINT,
        300000,
        OBJECT,
        0,
        0,
        0,
        8,
        &[],
        &[(S_COUNTER, Value::Int(5))],
        &[(S_X, BasicType::Int), (S_Y, BasicType::Int)],
    )
    .unwrap();
    w.class_dump(
        POINT3,
        300000,
        POINT,
        0,
        0,
        0,
        4,
        &[],
        &[],
        &[(S_Z, BasicType::Int)],
    )
    .unwrap();
    let ref_size = ids.bytes() as u32;
    w.class_dump(
        SEGMENT,
        300000,
        OBJECT,
        0,
        0,
        0,
        2 * ref_size + 8,
        &[(3, Value::Object(0x2_0000))],
        &[],
        &[
            (S_A, BasicType::Object),
            (S_B, BasicType::Object),
            (S_LABEL, BasicType::Long),
        ],
    )
    .unwrap();
    w.class_dump(POINT_ARRAY, 300000, OBJECT, 0, 0, 0, 0, &[], &[], no_fields)
        .unwrap();
    w.class_dump(INT_ARRAY, 300000, OBJECT, 0, 0, 0, 0, &[], &[], no_fields)
        .unwrap();
    w.class_dump(BYTE_ARRAY, 300000, OBJECT, 0, 0, 0, 0, &[], &[], no_fields)
        .unwrap();
    let mut next_id = 0x2_0000u64;
    let mut points = Vec::new();
    for n in 0..known::POINTS {
        let mut values = Vec::new();
        values.extend_from_slice(&(n as i32).to_be_bytes());
        values.extend_from_slice(&(-(n as i32)).to_be_bytes());
        w.instance_dump(next_id, 300001, POINT, &values).unwrap();
        points.push(next_id);
        next_id += 0x10;
    }
    for n in 0..known::POINTS3 {
        let mut values = Vec::new();
        values.extend_from_slice(&(n as i32).to_be_bytes()); // z, Point3's own field first
        values.extend_from_slice(&1i32.to_be_bytes());
        values.extend_from_slice(&2i32.to_be_bytes());
        w.instance_dump(next_id, 300001, POINT3, &values).unwrap();
        next_id += 0x10;
    }
    for n in 0..known::SEGMENTS {
        let mut values = id_bytes(points[n as usize], ids);
        values.extend(id_bytes(
            if n % 2 == 0 {
                points[n as usize + 1]
            } else {
                0
            },
            ids,
        ));
        values.extend_from_slice(&(n as i64).to_be_bytes());
        w.instance_dump(next_id, 300001, SEGMENT, &values).unwrap();
        next_id += 0x10;
    }
    for n in 0..known::POINT_ARRAYS {
        w.object_array(next_id, 300001, POINT_ARRAY, &[points[n as usize], 0, 0])
            .unwrap();
        next_id += 0x10;
    }
    for n in 0..known::INT_ARRAYS {
        let data: Vec<u8> = (0..10i32)
            .flat_map(|k| (k * n as i32).to_be_bytes())
            .collect();
        w.primitive_array(next_id, 300001, BasicType::Int, 10, &data)
            .unwrap();
        next_id += 0x10;
    }
    for _ in 0..known::BYTE_ARRAYS {
        w.primitive_array(next_id, 300001, BasicType::Byte, 5, b"hello")
            .unwrap();
        next_id += 0x10;
    }
    let roots = [
        HeapRecord::RootThreadObject {
            thread_object_id: 0x7000,
            thread_serial: 200001,
            stack_trace_serial: 300001,
        },
        HeapRecord::RootJavaFrame {
            object_id: points[0],
            thread_serial: 200001,
            frame_number: 0,
        },
        HeapRecord::RootJniLocal {
            object_id: points[1],
            thread_serial: 200001,
            frame_number: 1,
        },
        HeapRecord::RootJniGlobal {
            object_id: points[2],
            jni_global_ref_id: 0x77,
        },
        HeapRecord::RootNativeStack {
            object_id: points[3],
            thread_serial: 200001,
        },
        HeapRecord::RootStickyClass { object_id: OBJECT },
        HeapRecord::RootThreadBlock {
            object_id: points[4],
            thread_serial: 200001,
        },
        HeapRecord::RootMonitorUsed {
            object_id: points[5],
        },
        HeapRecord::RootUnknown {
            object_id: points[6],
        },
    ];
    for root in &roots {
        w.root(root).unwrap();
    }
    w.end_heap_dump().unwrap();
    w.end_thread(5000, 200001).unwrap();
    w.finish().unwrap()
}
