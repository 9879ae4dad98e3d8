//! Small heap dumps written with hprof-format: the graph, retained sizes, class retained
//! sizes, paths (weak references skipped or followed), accumulation points and suspects.
//! Every dump analysed here also has its retained sizes checked against a brute-force
//! computation from their definition (what becomes unreachable when an object is removed),
//! which shares nothing with the dominator tree; random dumps too.

use hprof_format::{BasicType, Header, HeapRecord, IdSize, Value, Version, Writer};
use hprof_heap::{Analysis, HeapGraph, Paths, RootKind};

const OBJECT: u64 = 0x100;
const NODE: u64 = 0x108;
const REFERENCE: u64 = 0x110;
const WEAK: u64 = 0x118;
const CLASS: u64 = 0x120;
const HOLDER: u64 = 0x128;
const ARRAY: u64 = 0x130;
const THREAD: u64 = 0x138;
const STRING: u64 = 0x140;

/// Strings: 1 java/lang/Object, 2 Node, 3 java/lang/ref/Reference, 4 WeakReference,
/// 5 java/lang/Class, 6 Holder, 7 [Ljava/lang/Object;, 8 left, 9 right, 10 referent,
/// 11 CACHE, 12 java/lang/Thread, 13 java/lang/String, 14 name, 15 value, 16 coder, 17 run,
/// 18 Worker.java.
fn dump(build: impl FnOnce(&mut Writer<Vec<u8>>)) -> Vec<u8> {
    let header = Header {
        version: Version::V1_0_2,
        id_size: IdSize::Eight,
        timestamp_ms: 0,
    };
    let mut w = Writer::new(Vec::new(), header).unwrap();
    let names: [&[u8]; 18] = [
        b"java/lang/Object",
        b"Node",
        b"java/lang/ref/Reference",
        b"java/lang/ref/WeakReference",
        b"java/lang/Class",
        b"Holder",
        b"[Ljava/lang/Object;",
        b"left",
        b"right",
        b"referent",
        b"CACHE",
        b"java/lang/Thread",
        b"java/lang/String",
        b"name",
        b"value",
        b"coder",
        b"run",
        b"Worker.java",
    ];
    for (i, name) in names.iter().enumerate() {
        w.utf8(0, i as u64 + 1, name).unwrap();
    }
    let classes = [
        (OBJECT, 1),
        (NODE, 2),
        (REFERENCE, 3),
        (WEAK, 4),
        (CLASS, 5),
        (HOLDER, 6),
        (ARRAY, 7),
        (THREAD, 12),
        (STRING, 13),
    ];
    for (serial, &(id, name)) in classes.iter().enumerate() {
        w.load_class(0, serial as u32 + 1, id, 0, name).unwrap();
    }
    w.stack_frame(0, 0x900, 17, 0, 18, 2, 42).unwrap();
    w.stack_trace(0, 1, 1, &[0x900]).unwrap();
    w.begin_heap_dump(0).unwrap();
    let class = |w: &mut Writer<Vec<u8>>,
                 id: u64,
                 sup: u64,
                 statics: &[(u64, Value)],
                 fields: &[(u64, BasicType)]| {
        w.class_dump(id, 0, sup, 0, 0, 0, 0, &[], statics, fields)
            .unwrap();
    };
    class(&mut w, OBJECT, 0, &[], &[]);
    class(
        &mut w,
        NODE,
        OBJECT,
        &[],
        &[(8, BasicType::Object), (9, BasicType::Object)],
    );
    class(&mut w, REFERENCE, OBJECT, &[], &[(10, BasicType::Object)]);
    class(&mut w, WEAK, REFERENCE, &[], &[]);
    class(&mut w, CLASS, OBJECT, &[], &[]);
    class(&mut w, ARRAY, OBJECT, &[], &[]);
    class(&mut w, THREAD, OBJECT, &[], &[(14, BasicType::Object)]);
    class(
        &mut w,
        STRING,
        OBJECT,
        &[],
        &[(15, BasicType::Object), (16, BasicType::Byte)],
    );
    build(&mut w);
    w.end_heap_dump().unwrap();
    w.finish().unwrap()
}

/// A Node instance with `left` and `right`.
fn node(w: &mut Writer<Vec<u8>>, id: u64, left: u64, right: u64) {
    let mut values = left.to_be_bytes().to_vec();
    values.extend_from_slice(&right.to_be_bytes());
    w.instance_dump(id, 0, NODE, &values).unwrap();
}

/// A thread object named "worker" (a String 0x2000 over a byte[] 0x2100) with serial 1, and a
/// Node 0x2300 held by its frame 0.
fn worker_thread(w: &mut Writer<Vec<u8>>) {
    let mut name = 0x2100u64.to_be_bytes().to_vec();
    name.push(0);
    w.instance_dump(0x2000, 0, STRING, &name).unwrap();
    w.primitive_array(0x2100, 0, BasicType::Byte, 6, b"worker")
        .unwrap();
    w.instance_dump(0x2200, 0, THREAD, &0x2000u64.to_be_bytes())
        .unwrap();
    w.root(&HeapRecord::RootThreadObject {
        thread_object_id: 0x2200,
        thread_serial: 1,
        stack_trace_serial: 1,
    })
    .unwrap();
    node(w, 0x2300, 0, 0);
    w.root(&HeapRecord::RootJavaFrame {
        object_id: 0x2300,
        thread_serial: 1,
        frame_number: 0,
    })
    .unwrap();
}

fn root(w: &mut Writer<Vec<u8>>, id: u64) {
    w.root(&HeapRecord::RootJniGlobal {
        object_id: id,
        jni_global_ref_id: 1,
    })
    .unwrap();
}

struct Built<'a> {
    graph: HeapGraph<'a>,
    analysis: Analysis,
    strong: Paths,
    weak: Paths,
}

fn analyse(bytes: &[u8]) -> Built<'_> {
    check_by_brute_force(bytes);
    let mut graph = HeapGraph::build(bytes, &()).unwrap();
    let weak = Paths::new(&graph, true);
    let (analysis, strong) = Analysis::new(&mut graph, &());
    Built {
        graph,
        analysis,
        strong,
        weak,
    }
}

impl Built<'_> {
    fn n(&self, id: u64) -> u32 {
        self.graph.node(id).unwrap()
    }
    fn retained(&self, id: u64) -> u64 {
        self.analysis.retained[self.n(id) as usize]
    }
    fn idom(&self, id: u64) -> u64 {
        let d = self.analysis.idom[self.n(id) as usize];
        if d as usize == self.graph.len() {
            0
        } else {
            self.graph.id(d)
        }
    }
}

/// Node's shallow size: 12 bytes of header and two 4-byte references.
const NODE_SIZE: u64 = 24;

#[test]
fn diamonds_cycles_and_garbage() {
    let bytes = dump(|w| {
        // Diamond: A -> B, C; B, C -> D; D -> E.
        node(w, 0xa0, 0xb0, 0xc0);
        node(w, 0xb0, 0xd0, 0);
        node(w, 0xc0, 0xd0, 0);
        node(w, 0xd0, 0xe0, 0);
        node(w, 0xe0, 0, 0);
        root(w, 0xa0);
        // Cycle X -> Y -> Z -> X held by X.
        node(w, 0x1a0, 0x1b0, 0);
        node(w, 0x1b0, 0x1c0, 0);
        node(w, 0x1c0, 0x1a0, 0);
        root(w, 0x1a0);
        // Garbage, pointing into the diamond.
        node(w, 0x2a0, 0xd0, 0);
        // A reference to an object missing from the dump is ignored.
        node(w, 0x3a0, 0x999, 0);
        root(w, 0x3a0);
    });
    let b = analyse(&bytes);
    assert_eq!(b.graph.shallow(b.n(0xa0)), NODE_SIZE);
    assert_eq!(b.idom(0xd0), 0xa0);
    assert_eq!(b.idom(0xe0), 0xd0);
    assert_eq!(b.idom(0xa0), 0);
    assert_eq!(b.retained(0xa0), 5 * NODE_SIZE);
    assert_eq!(b.retained(0xb0), NODE_SIZE);
    assert_eq!(b.retained(0xd0), 2 * NODE_SIZE);
    assert_eq!(b.retained(0x1a0), 3 * NODE_SIZE);
    assert_eq!(b.retained(0x1b0), 2 * NODE_SIZE);
    assert_eq!(b.retained(0x2a0), 0);
    assert!(!b.analysis.is_reachable(b.n(0x2a0)));
    assert_eq!(b.analysis.reachable_objects, 9);
    assert_eq!(b.analysis.reachable_bytes, 9 * NODE_SIZE);
    // Class retained: the diamond's and the cycle's tops only (nested Nodes are inside).
    let node_class = b.graph.class_of(b.n(0xa0)) as usize;
    assert_eq!(b.analysis.class_retained[node_class], 9 * NODE_SIZE);
    assert_eq!(b.analysis.class_count[node_class], 9);
    assert_eq!(b.analysis.class_shallow[node_class], 10 * NODE_SIZE);
    // Paths: the shortest one, with field names.
    let path = b.strong.path(b.n(0xe0)).unwrap();
    let ids: Vec<u64> = path.iter().map(|&v| b.graph.id(v)).collect();
    assert_eq!(ids, [0xa0, 0xb0, 0xd0, 0xe0]);
    assert_eq!(b.graph.reference_name(path[0], path[1]), "left");
    assert!(b.strong.path(b.n(0x2a0)).is_none());
    assert_eq!(b.graph.roots()[0].kind, RootKind::JniGlobal);
}

#[test]
fn weak_referents_retain_nothing_and_are_left_out_of_paths_by_default() {
    let bytes = dump(|w| {
        // W is a WeakReference to R; R -> S. Only W is a root.
        w.instance_dump(0x500, 0, WEAK, &0x510u64.to_be_bytes())
            .unwrap();
        node(w, 0x510, 0x520, 0);
        node(w, 0x520, 0, 0);
        root(w, 0x500);
        // Q is held both strongly (by root P) and weakly (by W2).
        w.instance_dump(0x600, 0, WEAK, &0x620u64.to_be_bytes())
            .unwrap();
        node(w, 0x610, 0x620, 0);
        node(w, 0x620, 0, 0);
        root(w, 0x600);
        root(w, 0x610);
    });
    let b = analyse(&bytes);
    let reference_size = 16; // 12 + one reference
    assert_eq!(b.retained(0x500), reference_size);
    assert_eq!(b.retained(0x510), 0);
    assert_eq!(b.retained(0x520), 0);
    assert_eq!(b.analysis.weakly_reachable_objects, 2);
    assert!(b.strong.path(b.n(0x510)).is_none());
    let path = b.weak.path(b.n(0x520)).unwrap();
    assert_eq!(path.len(), 3);
    assert_eq!(b.graph.reference_name(path[0], path[1]), "referent");
    // Q: strongly reachable, its path goes through P's field, not W2's referent.
    let path = b.strong.path(b.n(0x620)).unwrap();
    assert_eq!(b.graph.id(path[0]), 0x610);
    assert_eq!(b.retained(0x620), NODE_SIZE);
}

#[test]
fn a_static_map_is_the_suspect_and_its_array_the_accumulation_point() {
    let bytes = dump(|w| {
        // class Holder { static Object CACHE = M; } M -> table (Object[10]) -> 10 Nodes,
        // each with a 1000-byte array.
        w.class_dump(
            HOLDER,
            0,
            OBJECT,
            0,
            0,
            0,
            0,
            &[],
            &[(11, Value::Object(0x700))],
            &[],
        )
        .unwrap();
        w.root(&HeapRecord::RootStickyClass { object_id: HOLDER })
            .unwrap();
        node(w, 0x700, 0x710, 0);
        let entries: Vec<u64> = (0..10).map(|i| 0x800 + i * 0x10).collect();
        w.object_array(0x710, 0, ARRAY, &entries).unwrap();
        for (i, &e) in entries.iter().enumerate() {
            node(w, e, 0x1000 + i as u64 * 0x10, 0);
            w.primitive_array(
                0x1000 + i as u64 * 0x10,
                0,
                BasicType::Byte,
                1000,
                &[0; 1000],
            )
            .unwrap();
        }
        // Something small elsewhere, held by a thread's stack.
        worker_thread(w);
    });
    let b = analyse(&bytes);
    let array_size = 1016;
    let table_size = 16 + 4 * 10;
    assert_eq!(
        b.retained(0x700),
        NODE_SIZE + table_size + 10 * (NODE_SIZE + array_size)
    );
    let threshold = b.analysis.reachable_bytes / 10;
    let suspects = b.analysis.suspects(&b.graph, threshold);
    let ids: Vec<u64> = suspects.iter().map(|&v| b.graph.id(v)).collect();
    assert_eq!(ids, [0x700], "the map, not the class holding it");
    assert_eq!(
        b.graph.id(b.analysis.accumulation_point(suspects[0])),
        0x710
    );
    let path = b.strong.path(suspects[0]).unwrap();
    assert_eq!(b.graph.id(path[0]), HOLDER);
    assert!(b.graph.is_class_object(path[0]));
    assert_eq!(b.graph.described_class(path[0]).unwrap().name, "Holder");
    assert_eq!(b.graph.reference_name(path[0], path[1]), "static CACHE");
    let table_path = b.strong.path(b.n(0x820)).unwrap();
    assert_eq!(b.graph.reference_name(table_path[2], table_path[3]), "[2]");
    // The byte[] class retains 10 arrays; the class suspect would be byte[].
    let bytes_class = b.graph.class_of(b.n(0x1000)) as usize;
    assert_eq!(b.graph.classes()[bytes_class].name, "byte[]");
    assert_eq!(
        b.analysis.class_retained[bytes_class],
        10 * array_size + 8 + 16
    );
    let outside = b.analysis.class_retained_excluding(&b.graph, &suspects);
    assert_eq!(outside[bytes_class], 8 + 16);
    // The stack root names its thread and frame.
    let frame_root = b
        .graph
        .roots()
        .iter()
        .find(|r| r.kind == RootKind::JavaFrame)
        .unwrap();
    assert_eq!(
        b.graph.thread_name(frame_root.thread_serial).unwrap(),
        "worker"
    );
    let frame = b.graph.thread_frame(frame_root.thread_serial, 0).unwrap();
    assert_eq!(frame.method, "Node.run");
    assert_eq!(frame.location, "Worker.java:42");
}

#[test]
fn corrupt_dumps_give_errors_not_panics() {
    let bytes = dump(|w| {
        node(w, 0xa0, 0xb0, 0);
        node(w, 0xb0, 0, 0);
        root(w, 0xa0);
    });
    for cut in [10, bytes.len() / 2, bytes.len() - 3] {
        let err = HeapGraph::build(&bytes[..cut], &()).unwrap_err();
        assert!(
            err.to_string().contains(" offset 0x"),
            "cut at {cut}: {err}"
        );
    }
    let err = HeapGraph::build(b"not a dump", &()).unwrap_err();
    assert!(err.to_string().contains("at offset 0x0"), "{err}");
}

/// The offset of the sub-record of the object (or class) `id` in `bytes`.
fn record_offset(bytes: &[u8], id: u64) -> u64 {
    let (header, records) = hprof_format::Records::new(bytes).unwrap();
    for item in records {
        if let (_, hprof_format::Record::HeapDumpSegment(body)) = item.unwrap() {
            let mut subs = body.records(header.id_size);
            while let Some((offset, record)) = subs.next().unwrap() {
                let of = match record {
                    HeapRecord::InstanceDump { object_id, .. } => object_id,
                    HeapRecord::ObjectArrayDump { array_id, .. } => array_id,
                    HeapRecord::ClassDump(class) => class.class_id,
                    _ => continue,
                };
                if of == id {
                    return offset;
                }
            }
        }
    }
    panic!("no record of {id:#x}")
}

#[test]
fn inconsistencies_are_read_through_and_counted_with_their_first_records_offset() {
    const UNNAMED: u64 = 0x170;
    let bytes = dump(|w| {
        // A Node whose `left` is no object of the dump, and another whose `right` is not.
        node(w, 0xa0, 0xbad0, 0);
        node(w, 0xb0, 0xa0, 0xbad8);
        // An instance and an array of classes that have no CLASS DUMP.
        w.instance_dump(0xc0, 0, 0xdead, &[]).unwrap();
        w.object_array(0xc8, 0, 0xdeaf, &[0xa0]).unwrap();
        // A Node with one field's bytes where its class has two.
        w.instance_dump(0xd0, 0, NODE, &0xa0u64.to_be_bytes())
            .unwrap();
        // A class with no LOAD CLASS (so no name).
        w.class_dump(UNNAMED, 0, OBJECT, 0, 0, 0, 0, &[], &[], &[])
            .unwrap();
        root(w, 0xb0);
    });
    let graph = HeapGraph::build(&bytes, &()).unwrap();
    let found = graph.anomalies();
    let at = |id| record_offset(&bytes, id);
    assert_eq!(found.dangling.count, 2);
    assert_eq!(found.dangling.first, Some((at(0xa0), 0xbad0)));
    assert_eq!(found.unknown_class.count, 2);
    assert_eq!(found.unknown_class.first, Some((at(0xc0), 0xdead)));
    assert_eq!(found.bad_layout.count, 1);
    assert_eq!(found.bad_layout.first, Some((at(0xd0), NODE)));
    assert_eq!(found.unnamed_class.count, 1);
    assert_eq!(found.unnamed_class.first, Some((at(UNNAMED), UNNAMED)));
    let lines = found.lines();
    assert_eq!(lines.len(), 4, "{lines:?}");
    let first = format!(
        "references to objects not in the dump: 2 (the first in the record at offset {:#x}, \
         which refers to 0xbad0)",
        at(0xa0)
    );
    assert!(lines.contains(&first), "{lines:?}");
    // The objects are read all the same: the array's reference is followed.
    let c8 = graph.node(0xc8).unwrap();
    assert_eq!(graph.class(c8).name, "(unknown class)");
    assert_eq!(graph.csr().successors(c8), [graph.node(0xa0).unwrap()]);
    // A consistent dump has none.
    let clean = dump(|w| {
        node(w, 0xa0, 0xb0, 0);
        node(w, 0xb0, 0, 0);
        root(w, 0xa0);
    });
    assert!(
        HeapGraph::build(&clean, &())
            .unwrap()
            .anomalies()
            .is_empty()
    );
}

#[test]
fn dumps_without_objects_or_roots_are_analysed() {
    // No heap dump at all, and a heap dump with no object.
    let header = Header {
        version: Version::V1_0_2,
        id_size: IdSize::Eight,
        timestamp_ms: 0,
    };
    let mut w = Writer::new(Vec::new(), header).unwrap();
    w.utf8(0, 1, b"unused").unwrap();
    let empty = w.finish().unwrap();
    let mut w = Writer::new(Vec::new(), header).unwrap();
    w.begin_heap_dump(0).unwrap();
    w.end_heap_dump().unwrap();
    let no_objects = w.finish().unwrap();
    for bytes in [&empty, &no_objects] {
        let b = analyse(bytes);
        assert_eq!(b.graph.len(), 0);
        assert_eq!(b.analysis.objects, 0);
        assert_eq!(b.analysis.reachable_bytes, 0);
        assert!(b.analysis.children(b.analysis.super_root()).is_empty());
        assert_eq!(b.analysis.suspects(&b.graph, 0), Vec::<u32>::new());
    }
    // Objects but no GC root: all garbage.
    let bytes = dump(|w| {
        node(w, 0xa0, 0xb0, 0);
        node(w, 0xb0, 0xa0, 0);
    });
    let b = analyse(&bytes);
    assert_eq!(b.analysis.reachable_objects, 0);
    assert!(!b.analysis.is_reachable(b.n(0xa0)));
    assert_eq!(b.retained(0xa0), 0);
    assert!(b.strong.path(b.n(0xb0)).is_none());
    assert!(b.weak.path(b.n(0xb0)).is_none());
}

#[test]
fn a_file_of_several_heap_dumps_is_analysed_as_its_last_dump() {
    // Each dump has ids of its own: 0xb0 exists only in the first, and 0xa0 is another
    // object in the second.
    let bytes = dump(|w| {
        node(w, 0xa0, 0xb0, 0);
        node(w, 0xb0, 0, 0);
        root(w, 0xa0);
        w.end_heap_dump().unwrap();
        w.begin_heap_dump(0).unwrap();
        w.class_dump(OBJECT, 0, 0, 0, 0, 0, 0, &[], &[], &[])
            .unwrap();
        w.class_dump(
            NODE,
            0,
            OBJECT,
            0,
            0,
            0,
            0,
            &[],
            &[],
            &[(8, BasicType::Object), (9, BasicType::Object)],
        )
        .unwrap();
        node(w, 0xa0, 0, 0);
        node(w, 0xc0, 0xa0, 0);
        root(w, 0xc0);
    });
    let built = analyse(&bytes);
    assert_eq!(built.graph.dumps(), 2);
    assert!(
        built.graph.node(0xb0).is_none(),
        "an object of the first dump"
    );
    assert_eq!(built.idom(0xa0), 0xc0);
    assert_eq!(built.retained(0xc0), 2 * NODE_SIZE);
    assert_eq!(built.analysis.reachable_objects, 2);
}

/// The objects reached from `roots` along `edges` (every reference, or the strong ones) when
/// the objects `removed` says are taken out of the graph.
fn reached(edges: &[Vec<u32>], roots: &[u32], removed: &dyn Fn(u32) -> bool) -> Vec<bool> {
    let mut seen = vec![false; edges.len()];
    let mut stack: Vec<u32> = roots.iter().copied().filter(|&r| !removed(r)).collect();
    while let Some(v) = stack.pop() {
        if std::mem::replace(&mut seen[v as usize], true) {
            continue;
        }
        stack.extend(
            edges[v as usize]
                .iter()
                .copied()
                .filter(|&w| !removed(w) && !seen[w as usize]),
        );
    }
    seen
}

/// Checks the retained size of every object and class of `bytes` against their definition,
/// by brute force. An object's retained size is the shallow size of the objects that the GC
/// roots no longer reach once it is removed (itself included), counting only objects that
/// strong references reach (those reached only through a Reference's `referent` retain
/// nothing, as in VisualVM; unreachable objects neither). A class's retained size is that of
/// the union of what each of its instances retains.
fn check_by_brute_force(bytes: &[u8]) {
    let graph = HeapGraph::build(bytes, &()).unwrap();
    let n = graph.len();
    let csr = graph.csr();
    let all: Vec<Vec<u32>> = (0..n as u32).map(|v| csr.successors(v).to_vec()).collect();
    // Strong references: all but each Reference's `referent`.
    let strong: Vec<Vec<u32>> = (0..n as u32)
        .map(|v| {
            let mut out = all[v as usize].clone();
            if let Some(referent) = graph.referent(v)
                && let Some(i) = out.iter().position(|&w| w == referent)
            {
                out.remove(i);
            }
            out
        })
        .collect();
    let roots: Vec<u32> = graph.roots().iter().map(|r| r.node).collect();
    let reachable = reached(&all, &roots, &|_| false);
    let strongly = reached(&strong, &roots, &|_| false);
    // What removing v frees: the reachable objects no longer reached.
    let freed = |v: u32| -> Vec<bool> {
        let left = reached(&all, &roots, &|w| w == v);
        (0..n).map(|w| reachable[w] && !left[w]).collect()
    };
    let size_of = |set: &[bool]| -> u64 {
        (0..n as u32)
            .filter(|&w| set[w as usize] && strongly[w as usize])
            .map(|w| graph.shallow(w))
            .sum()
    };
    let mut expected = vec![0u64; n];
    let mut class_sets = vec![vec![false; n]; graph.classes().len()];
    for v in 0..n as u32 {
        if !reachable[v as usize] {
            continue;
        }
        let set = freed(v);
        expected[v as usize] = size_of(&set);
        let class_set = &mut class_sets[graph.class_of(v) as usize];
        for w in 0..n {
            class_set[w] |= set[w];
        }
    }
    let class_expected: Vec<u64> = class_sets.iter().map(|set| size_of(set)).collect();
    let mut graph = HeapGraph::build(bytes, &()).unwrap();
    let (analysis, _) = Analysis::new(&mut graph, &());
    for v in 0..n as u32 {
        assert_eq!(
            analysis.retained[v as usize],
            expected[v as usize],
            "retained size of {:#x} ({})",
            graph.id(v),
            graph.class(v).name
        );
        assert_eq!(
            analysis.is_reachable(v),
            reachable[v as usize],
            "{:#x}",
            graph.id(v)
        );
    }
    assert_eq!(
        analysis.class_retained, class_expected,
        "class retained sizes"
    );
}

/// A random heap: Nodes whose fields point at other Nodes (or null), weak references to some
/// of them, an object array holding others, and a few GC roots.
fn random_dump(
    nodes: &[(Option<u8>, Option<u8>)],
    weak: &[u8],
    array: &[u8],
    roots: &[u8],
) -> Vec<u8> {
    let n = nodes.len() as u64;
    let id = |i: u8| 0x1000 + u64::from(i) % n.max(1) * 0x10;
    dump(|w| {
        for (i, &(left, right)) in nodes.iter().enumerate() {
            node(
                w,
                0x1000 + i as u64 * 0x10,
                left.map_or(0, id),
                right.map_or(0, id),
            );
        }
        for (i, &target) in weak.iter().enumerate() {
            w.instance_dump(0x9000 + i as u64 * 0x10, 0, WEAK, &id(target).to_be_bytes())
                .unwrap();
        }
        let elements: Vec<u64> = array.iter().map(|&i| id(i)).collect();
        w.object_array(0x8000, 0, ARRAY, &elements).unwrap();
        for &r in roots {
            // Roots at Nodes, at the array, and at the weak references.
            let object = match r % 8 {
                0 => 0x8000,
                1 if !weak.is_empty() => 0x9000 + u64::from(r) % weak.len() as u64 * 0x10,
                _ => id(r),
            };
            root(w, object);
        }
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    #[test]
    fn retained_sizes_of_random_dumps_match_the_brute_force(
        nodes in proptest::collection::vec(
            (proptest::option::of(0u8..=255), proptest::option::of(0u8..=255)),
            1..30,
        ),
        weak in proptest::collection::vec(0u8..=255, 0..5),
        array in proptest::collection::vec(0u8..=255, 0..6),
        roots in proptest::collection::vec(0u8..=255, 0..5),
    ) {
        check_by_brute_force(&random_dump(&nodes, &weak, &array, &roots));
    }
}

/// Holder.CACHE -> Node M, M.left -> table (Object[entries]) -> Nodes, each `left` a
/// byte[1000]; the first Node's `right` a chained Node holding a byte[10]. A thread object
/// with its name, and a Node held by a frame of that thread.
fn static_map(entries: u64) -> Vec<u8> {
    dump(|w| {
        w.class_dump(
            HOLDER,
            0,
            OBJECT,
            0,
            0,
            0,
            0,
            &[],
            &[(11, Value::Object(0x700))],
            &[],
        )
        .unwrap();
        w.root(&HeapRecord::RootStickyClass { object_id: HOLDER })
            .unwrap();
        node(w, 0x700, 0x710, 0);
        let ids: Vec<u64> = (0..entries).map(|i| 0x10_000 + i * 0x10).collect();
        w.object_array(0x710, 0, ARRAY, &ids).unwrap();
        for (i, &e) in ids.iter().enumerate() {
            let right = if i == 0 { 0x900 } else { 0 };
            node(w, e, 0x100_000 + i as u64 * 0x10, right);
            w.primitive_array(
                0x100_000 + i as u64 * 0x10,
                0,
                BasicType::Byte,
                1000,
                &[0; 1000],
            )
            .unwrap();
        }
        node(w, 0x900, 0x910, 0);
        w.primitive_array(0x910, 0, BasicType::Byte, 10, &[0; 10])
            .unwrap();
        worker_thread(w);
    })
}

/// The chains of a dump: description to (objects, retained).
fn chains_of(b: &Built<'_>) -> std::collections::HashMap<String, (u64, u64)> {
    let chains = hprof_heap::Chains::new(&b.graph, &b.analysis, &b.strong, &());
    (1..chains.chains.len() as u32)
        .map(|c| {
            let chain = &chains.chains[c as usize];
            (chains.describe(c), (chain.objects, chain.retained))
        })
        .collect()
}

fn summary(b: &Built<'_>) -> hprof_heap::HeapSummary {
    hprof_heap::HeapSummary::new(&b.graph, &b.analysis, &b.strong, &())
}

#[test]
fn chains_name_static_fields_fields_and_roots_and_fold_recursion() {
    let bytes = static_map(10);
    let b = analyse(&bytes);
    let chains = chains_of(&b);
    let array = 1016;
    let table = 16 + 4 * 10;
    let small = 32; // byte[10]
    let all = NODE_SIZE + table + 10 * (NODE_SIZE + array) + NODE_SIZE + small;
    assert_eq!(chains["class Holder"], (1, all));
    // The map and every Node below it (the entries, the chained one): one chain.
    assert_eq!(chains["static Holder.CACHE → Node"], (12, all));
    assert_eq!(
        chains["static Holder.CACHE → Node.left → java.lang.Object[]"],
        (1, all - NODE_SIZE)
    );
    assert_eq!(
        chains["static Holder.CACHE → Node.left → byte[]"],
        (11, 10 * array + small)
    );
    // Roots: a thread object (its name's String and bytes on their own chains), a frame.
    let string = 24; // 12 + a reference + a byte, aligned
    assert_eq!(
        chains["thread object: java.lang.Thread"],
        (1, 16 + string + 24)
    );
    assert_eq!(
        chains["thread object: java.lang.Thread.name → java.lang.String.value → byte[]"],
        (1, 24)
    );
    assert_eq!(chains["Java frame in Node.run: Node"], (1, NODE_SIZE));
    assert_eq!(chains.len(), 8, "{chains:#?}");
}

#[test]
fn two_dumps_compare_by_chain_and_class() {
    let (small, big) = (static_map(10), static_map(20));
    let (old, new) = (analyse(&small), analyse(&big));
    let diff = hprof_heap::HeapDiff::new(&summary(&old), &summary(&new));
    let rows = diff.chain_rows();
    let first = &diff.chains[rows[0]];
    // Ten more entries, each a Node and a byte[1000], and ten more table slots.
    let growth = 10 * (NODE_SIZE + 1016) + 40;
    assert_eq!(first.describe(), "static Holder.CACHE → Node");
    assert_eq!(first.retained.delta(), growth as i64);
    assert_eq!(
        diff.chains[first.accumulation].describe(),
        "static Holder.CACHE → Node.left → java.lang.Object[]"
    );
    let second = &diff.chains[rows[1]];
    assert_eq!(
        (
            second.describe().as_str(),
            second.retained.delta(),
            second.objects.delta()
        ),
        ("static Holder.CACHE → Node.left → byte[]", 10 * 1016, 10)
    );
    assert_eq!(
        rows.len(),
        2,
        "{:?}",
        rows.iter()
            .map(|&r| diff.chains[r].describe())
            .collect::<Vec<_>>()
    );
    let bytes = diff.classes.iter().find(|c| c.name == "byte[]").unwrap();
    assert_eq!(bytes.instances.delta(), 10);
    assert_eq!(
        diff.classes[0].retained.delta(),
        growth as i64,
        "{:?}",
        diff.classes[0]
    );
    // A dump against itself: nothing changed.
    let same = hprof_heap::HeapDiff::new(&summary(&old), &summary(&old));
    assert!(same.chain_rows().is_empty());
    assert!(
        same.classes
            .iter()
            .all(|c| c.retained.delta() == 0 && c.instances.delta() == 0)
    );
}

#[test]
fn a_linked_list_is_one_chain_and_what_its_nodes_hold_another() {
    // A JNI global holds a list of 1,000 Nodes (each `left` the next, the last `right` a
    // byte[100]), and one Node whose `right` is a list of 3 and whose `left` holds a byte[10]
    let bytes = dump(|w| {
        for i in 0..1000u64 {
            let next = if i < 999 {
                0x10_000 + (i + 1) * 0x10
            } else {
                0
            };
            let right = if i == 999 { 0x900 } else { 0 };
            node(w, 0x10_000 + i * 0x10, next, right);
        }
        w.primitive_array(0x900, 0, BasicType::Byte, 100, &[0; 100])
            .unwrap();
        root(w, 0x10_000);
        node(w, 0xa00, 0xa10, 0xb00);
        node(w, 0xa10, 0, 0xa20);
        w.primitive_array(0xa20, 0, BasicType::Byte, 10, &[0; 10])
            .unwrap();
        node(w, 0xb00, 0xb10, 0);
        node(w, 0xb10, 0xb20, 0);
        node(w, 0xb20, 0, 0);
        root(w, 0xa00);
    });
    let b = analyse(&bytes);
    let chains = chains_of(&b);
    let list = 1000 * NODE_SIZE + 120;
    let other = 5 * NODE_SIZE + 32;
    // Both roots start the same chain; the first holds everything of its list.
    assert_eq!(
        chains["JNI global: Node"],
        (1005, list + other),
        "{chains:#?}"
    );
    assert_eq!(chains["JNI global: Node.right → byte[]"], (2, 120 + 32));
    assert_eq!(chains.len(), 2, "{chains:#?}");
}
