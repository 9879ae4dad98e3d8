//! The join of a small dump's objects to allocation sites (OBJECT SITES and ALLOC SITES as the
//! agent writes them): exact where joined, the rest shared by the samples found in the same
//! part of the heap with ALLOC SITES as prior; frames ranked nearest the allocation first.

use hprof_format::{AllocSite, BasicType, Header, HeapRecord, IdSize, Version, Writer};
use hprof_heap::{Analysis, HeapGraph, SiteJoin};

const OBJECT: u64 = 0x100;
const HOLDER: u64 = 0x110;
const ITEM: u64 = 0x120;
const ARRAY: u64 = 0x130;
/// Trace serials: `fill` and `other`, each called from `main`.
const FILL: u32 = 300_001;
const OTHER: u32 = 300_002;
/// Sampled every this many bytes: each 16-byte Item sampled stands for 99 more.
const INTERVAL: u32 = 1600;

/// Two holders, each an array of 100 Items (16 bytes each): of the first's, 8 were sampled
/// at `fill` and 2 at `other`; of the second's, 10 at `other`. ALLOC SITES gives each site
/// 100 live Items.
fn dump() -> Vec<u8> {
    let header = Header {
        version: Version::V1_0_2,
        id_size: IdSize::Eight,
        timestamp_ms: 0,
    };
    let mut w = Writer::new(Vec::new(), header).unwrap();
    let names: [&[u8]; 8] = [
        b"java/lang/Object",
        b"Holder",
        b"Item",
        b"[Ljava/lang/Object;",
        b"items",
        b"fill",
        b"other",
        b"main",
    ];
    for (i, name) in names.iter().enumerate() {
        w.utf8(0, i as u64 + 1, name).unwrap();
    }
    w.utf8(0, 20, b"Items.java").unwrap();
    for (serial, (id, name)) in [(OBJECT, 1), (HOLDER, 2), (ITEM, 3), (ARRAY, 4)]
        .into_iter()
        .enumerate()
    {
        w.load_class(0, serial as u32 + 1, id, 0, name).unwrap();
    }
    w.stack_frame(0, 0x901, 6, 0, 20, 2, 10).unwrap();
    w.stack_frame(0, 0x902, 7, 0, 20, 2, 20).unwrap();
    w.stack_frame(0, 0x903, 8, 0, 20, 2, 30).unwrap();
    w.stack_trace(0, FILL, 0, &[0x901, 0x903]).unwrap();
    w.stack_trace(0, OTHER, 0, &[0x902, 0x903]).unwrap();
    w.begin_heap_dump(0).unwrap();
    w.class_dump(OBJECT, 0, 0, 0, 0, 0, 0, &[], &[], &[])
        .unwrap();
    w.class_dump(
        HOLDER,
        0,
        OBJECT,
        0,
        0,
        0,
        0,
        &[],
        &[],
        &[(5, BasicType::Object)],
    )
    .unwrap();
    w.class_dump(ITEM, 0, OBJECT, 0, 0, 0, 0, &[], &[], &[])
        .unwrap();
    w.class_dump(ARRAY, 0, OBJECT, 0, 0, 0, 0, &[], &[], &[])
        .unwrap();
    for (holder, array, first) in [(0x1000u64, 0x2000u64, 0x3000u64), (0x1100, 0x2100, 0x5000)] {
        w.instance_dump(holder, 0, HOLDER, &array.to_be_bytes())
            .unwrap();
        let items: Vec<u64> = (0..100).map(|i| first + 16 * i).collect();
        w.object_array(array, 0, ARRAY, &items).unwrap();
        for &item in &items {
            w.instance_dump(item, 0, ITEM, &[]).unwrap();
        }
        w.root(&HeapRecord::RootJniGlobal {
            object_id: holder,
            jni_global_ref_id: 1,
        })
        .unwrap();
    }
    w.end_heap_dump().unwrap();
    let site = |trace| AllocSite {
        array_type: 0,
        class_serial: 3,
        stack_trace_serial: trace,
        live_bytes: 1600,
        live_instances: 100,
        bytes_allocated: 1600,
        instances_allocated: 100,
    };
    w.alloc_sites(
        0,
        0x4,
        0.0,
        3200,
        200,
        3200,
        200,
        &[site(FILL), site(OTHER)],
    )
    .unwrap();
    let fill: Vec<u64> = (0..8).map(|i| 0x3000 + 16 * i).collect();
    let other: Vec<u64> = (8..10)
        .map(|i| 0x3000 + 16 * i)
        .chain((0..10).map(|i| 0x5000 + 16 * i))
        .collect();
    w.object_sites(
        0,
        hprof_format::ObjectSites::SAMPLED,
        INTERVAL,
        1,
        &[(3, FILL, &fill[..]), (3, OTHER, &other[..])],
    )
    .unwrap();
    w.finish().unwrap()
}

#[test]
fn joined_objects_are_exact_and_the_others_follow_the_samples_near_them() {
    let bytes = dump();
    let mut graph = HeapGraph::build(&bytes, &()).unwrap();
    let (analysis, _) = Analysis::new(&mut graph, &());
    let mut join = SiteJoin::read(&graph)
        .unwrap()
        .expect("the file has OBJECT SITES");
    join.prepare(&graph, &analysis);
    assert!(join.sampled);
    assert_eq!(join.interval, u64::from(INTERVAL));
    assert_eq!(join.joined, 20);
    let holder = graph.node(0x1000).unwrap();
    let b = join.breakdown(&graph, &analysis, &[holder]);
    // The holder (16), its array (16 + 4 × 100) and 100 Items.
    assert_eq!(b.bytes, 16 + 416 + 1600);
    assert_eq!(b.samples, 10);
    let row = |trace: u32| {
        *b.rows
            .iter()
            .find(|r| join.sites[r.site as usize].trace_serial == trace)
            .unwrap()
    };
    let (fill, other) = (row(FILL), row(OTHER));
    assert_eq!(
        (fill.exact_objects, fill.exact_bytes, fill.samples),
        (8, 128, 8)
    );
    assert_eq!(
        (other.exact_objects, other.exact_bytes, other.samples),
        (2, 32, 2)
    );
    // The 90 Items not joined (1,440 bytes) follow the 8:2 samples, each standing for 1,584
    // bytes, with the prior (ALLOC SITES less what is joined: 1,472 and 1,408 of the 2,880
    // bytes not joined) worth one sample of 1,600: 1,440 × (8 × 1,584 + 1,600 × 1,472 /
    // 2,880) / (10 × 1,584 + 1,600) = 1,114.
    assert_eq!(fill.estimated_bytes, 1114);
    assert_eq!(other.estimated_bytes, 326);
    assert_eq!(fill.bytes() + other.bytes(), 1600);
    assert_eq!(fill.objects() + other.objects(), 100);
    // Two standard errors: 2 × 1,440 × √(p (1 − p) / 11), p = 0.7735.
    let p = 1114.0 / 1440.0;
    let expected = 2.0 * 1440.0 * (p * (1.0 - p) / 11.0f64).sqrt();
    assert!(
        (fill.error_bytes as f64 - expected).abs() < 2.0,
        "{} {expected}",
        fill.error_bytes
    );
    // Holder and array classes have no site.
    let unattributed: u64 = b.unattributed.iter().map(|u| u.1).sum();
    assert_eq!(unattributed, 16 + 416);
    // Frames: main covers both sites; fill, nearer, covers its own and is kept; so is other.
    let frames: Vec<(&str, u64)> = b
        .frames
        .iter()
        .map(|f| (f.frame.method.as_str(), f.bytes))
        .collect();
    assert_eq!(
        frames,
        [
            ("Holder.main", 1600),
            ("Holder.fill", 1242),
            ("Holder.other", 358)
        ]
    );

    // The second holder: all its samples at `other`, so its 90 other Items go there but for
    // the prior's one sample's worth (1,440 × 1,600 × 0.511 / 17,440 = 68 bytes to `fill`):
    // `other` covers 96 % of what `main` does, and both are listed.
    let second = join.breakdown(&graph, &analysis, &[graph.node(0x1100).unwrap()]);
    let frames: Vec<(&str, u64)> = second
        .frames
        .iter()
        .map(|f| (f.frame.method.as_str(), f.bytes))
        .collect();
    assert_eq!(
        frames,
        [
            ("Holder.main", 1600),
            ("Holder.other", 1532),
            ("Holder.fill", 68)
        ]
    );
}
