//! Owns what a heap wastes: duplicate strings (one value held by several `String` objects),
//! collections with far more room than elements (empty, sparse, oversized `HashMap`,
//! `HashSet`, `ConcurrentHashMap`, `ArrayList`, `ArrayDeque`) with the bytes a right-sized
//! collection would save, and object arrays mostly null.
//!
//! [`waste`] reads the objects while the references are still at hand (a reference field's
//! target is found among its object's successors), counting only objects that GC roots reach:
//! [`Analysis::new_with`](crate::Analysis::new_with) runs it beside the dominator tree's
//! depth-first search, once the strong paths are known. It keeps nothing per object but, while
//! strings are grouped by value, 16 bytes per `String`.

use std::hash::Hasher;

use hprof_format::shallow::object_array_size as object_array_bytes;
use hprof_format::{BasicType, HeapRecord, IdSize};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHasher};

use crate::dominators::{Csr, NONE};
use crate::graph::{ClassKind, HeapGraph};

/// The collections the report reads, by the JDK class they are or extend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CollectionKind {
    /// `java.util.HashMap` (and `LinkedHashMap`, any subclass).
    HashMap,
    /// `java.util.HashSet` (and `LinkedHashSet`): its `HashMap` is counted with it.
    HashSet,
    /// `java.util.concurrent.ConcurrentHashMap`.
    ConcurrentHashMap,
    /// `java.util.ArrayList`.
    ArrayList,
    /// `java.util.ArrayDeque`.
    ArrayDeque,
}

impl CollectionKind {
    const ALL: [CollectionKind; 5] = [
        CollectionKind::HashMap,
        CollectionKind::HashSet,
        CollectionKind::ConcurrentHashMap,
        CollectionKind::ArrayList,
        CollectionKind::ArrayDeque,
    ];

    /// The JDK class of the kind.
    pub fn class_name(self) -> &'static str {
        match self {
            CollectionKind::HashMap => "java.util.HashMap",
            CollectionKind::HashSet => "java.util.HashSet",
            CollectionKind::ConcurrentHashMap => "java.util.concurrent.ConcurrentHashMap",
            CollectionKind::ArrayList => "java.util.ArrayList",
            CollectionKind::ArrayDeque => "java.util.ArrayDeque",
        }
    }
}

/// How full a collection is: its elements over what its storage holds before it grows (a
/// hash table's length times its load factor, a list's or deque's array length).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fill {
    /// No element.
    Empty,
    /// Less than a quarter full.
    Sparse,
    /// A quarter to half full: more than twice the room it needs.
    Oversized,
    /// Half full or more (growth alone leaves collections there).
    Normal,
}

impl Fill {
    fn of(size: u64, room: f64) -> Fill {
        if size == 0 {
            Fill::Empty
        } else if room <= 0.0 {
            Fill::Normal
        } else {
            let ratio = size as f64 / room;
            if ratio < 0.25 {
                Fill::Sparse
            } else if ratio < 0.5 {
                Fill::Oversized
            } else {
                Fill::Normal
            }
        }
    }

    /// The fill's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Fill::Empty => "empty",
            Fill::Sparse => "sparse",
            Fill::Oversized => "oversized",
            Fill::Normal => "normal",
        }
    }
}

/// The smallest power of two at or above `n` (HashMap's `tableSizeFor`), at least 1.
fn table_size_for(n: u64) -> u64 {
    n.max(1).next_power_of_two()
}

/// One collection as read from the dump.
#[derive(Debug, Clone, Copy)]
struct Collection {
    kind: CollectionKind,
    size: u64,
    fill: Fill,
    /// The collection's bytes: its own, its storage's (and a HashSet's map's).
    bytes: u64,
    /// What a right-sized collection would save.
    saving: u64,
    /// The storage array's node and length (the array may then be mostly null).
    storage: Option<(u32, u64)>,
}

/// Per class: what the scan reads of its instances.
#[derive(Debug, Clone, Copy)]
enum Reader {
    None,
    String {
        value: u32,
        coder: Option<u32>,
    },
    Collection {
        kind: CollectionKind,
        /// table, elementData, elements, or a HashSet's map.
        storage: u32,
        /// size, or ArrayDeque's head.
        size: Option<(u32, BasicType)>,
        /// loadFactor, ArrayDeque's tail, ConcurrentHashMap's baseCount.
        extra: Option<(u32, BasicType)>,
        /// ConcurrentHashMap's counterCells.
        cells: Option<u32>,
    },
    ObjectArray,
}

/// Arrays shorter than this are never "mostly null" (a few empty slots waste little).
const MIN_NULL_ARRAY: u64 = 8;

/// Nodes per unit of parallel work.
const CHUNK: usize = 1 << 14;

/// What one run of nodes contributes.
#[derive(Default)]
struct Part {
    strings: Vec<(u64, u32, u32)>,
    collections: FxHashMap<u32, CollectionWaste>,
    /// Storage arrays that may be mostly null (counted with their collection).
    storage: Vec<u32>,
    /// Object arrays mostly null: (node, length, nulls).
    arrays: Vec<(u32, u64, u64)>,
}

/// What `graph`'s objects that `reachable` accepts waste, with the `top` duplicated values
/// wasting most; `csr` holds the graph's references.
pub fn waste(
    graph: &HeapGraph<'_>,
    csr: Csr<'_>,
    reachable: &(dyn Fn(u32) -> bool + Sync),
    top: usize,
) -> WasteReport {
    let n = graph.len();
    let readers = readers(graph);
    let id_size = graph.header().id_size;
    let cell_value = class_field(
        graph,
        "java.util.concurrent.ConcurrentHashMap$CounterCell",
        "value",
    );
    // A HashSet's map is counted with the set, not again as a HashMap.
    let mut inner: Vec<u32> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .flat_map_iter(|chunk| {
            let range = (chunk * CHUNK)..((chunk + 1) * CHUNK).min(n);
            let readers = &readers;
            range.filter_map(move |v| {
                let v = v as u32;
                let Reader::Collection {
                    kind: CollectionKind::HashSet,
                    storage,
                    ..
                } = readers[graph.class_of(v) as usize]
                else {
                    return None;
                };
                if !reachable(v) {
                    return None;
                }
                let HeapRecord::InstanceDump { values, .. } = graph.record(v)? else {
                    return None;
                };
                target(graph, csr, v, read_id(values, storage, id_size))
            })
        })
        .collect();
    inner.par_sort_unstable();
    let parts: Vec<Part> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|chunk| {
            let mut part = Part::default();
            let first = chunk * CHUNK;
            for v in first..(first + CHUNK).min(n) {
                let v = v as u32;
                let reader = readers[graph.class_of(v) as usize];
                if matches!(reader, Reader::None) || !reachable(v) {
                    continue;
                }
                let Some(record) = graph.record(v) else {
                    continue;
                };
                match (reader, record) {
                    (Reader::String { value, coder }, HeapRecord::InstanceDump { values, .. }) => {
                        if let Some(s) = string_hash(graph, csr, v, values, value, coder, id_size) {
                            part.strings.push(s);
                        }
                    }
                    (
                        Reader::Collection {
                            kind,
                            storage,
                            size,
                            extra,
                            cells,
                        },
                        HeapRecord::InstanceDump { values, .. },
                    ) => {
                        if kind == CollectionKind::HashMap && inner.binary_search(&v).is_ok() {
                            continue;
                        }
                        let fields = CollectionFields {
                            kind,
                            storage,
                            size,
                            extra,
                            cells,
                            cell_value,
                        };
                        if let Some(c) = collection(graph, csr, v, values, &fields, id_size) {
                            part.add(graph.class_of(v), &c);
                        }
                    }
                    (Reader::ObjectArray, HeapRecord::ObjectArrayDump { elements, .. }) => {
                        let length = elements.len() as u64;
                        if length >= MIN_NULL_ARRAY {
                            let nulls = elements.iter().filter(|&id| id == 0).count() as u64;
                            if nulls * 2 > length {
                                part.arrays.push((v, length, nulls));
                            }
                        }
                    }
                    _ => {}
                }
            }
            part
        })
        .collect();
    let mut strings = Vec::new();
    let mut collections: FxHashMap<u32, CollectionWaste> = FxHashMap::default();
    let mut storage = Vec::new();
    let mut arrays = Vec::new();
    for part in parts {
        strings.extend(part.strings);
        storage.extend(part.storage);
        arrays.extend(part.arrays);
        for (class, row) in part.collections {
            match collections.get_mut(&class) {
                Some(r) => r.add(&row),
                None => {
                    collections.insert(class, row);
                }
            }
        }
    }
    let mut collections: Vec<CollectionWaste> = collections.into_values().collect();
    collections.sort_unstable_by_key(|r| {
        (
            std::cmp::Reverse(r.wasted),
            std::cmp::Reverse(r.count),
            r.class,
        )
    });
    storage.sort_unstable();
    WasteReport {
        strings: duplicate_strings(graph, strings, top),
        collections,
        null_arrays: null_arrays(graph, &arrays, &storage),
    }
}

impl Part {
    /// Counts a collection in its class's row.
    fn add(&mut self, class: u32, c: &Collection) {
        let row = self
            .collections
            .entry(class)
            .or_insert_with(|| CollectionWaste {
                class,
                kind: c.kind,
                count: 0,
                elements: 0,
                bytes: 0,
                empty: Tally::default(),
                sparse: Tally::default(),
                oversized: Tally::default(),
                wasted: 0,
            });
        row.count += 1;
        row.elements += c.size;
        row.bytes += c.bytes;
        // The storage arrays that may be mostly null: a hash table's (its entries share
        // slots), a list's or deque's with more room than elements.
        let hashed = matches!(
            c.kind,
            CollectionKind::HashMap | CollectionKind::HashSet | CollectionKind::ConcurrentHashMap
        );
        if let Some((array, length)) = c.storage
            && length >= MIN_NULL_ARRAY
            && (hashed || length.saturating_sub(c.size) * 2 > length)
        {
            self.storage.push(array);
        }
        let tally = match c.fill {
            Fill::Empty => &mut row.empty,
            Fill::Sparse => &mut row.sparse,
            Fill::Oversized => &mut row.oversized,
            Fill::Normal => return,
        };
        tally.count += 1;
        tally.wasted += c.saving;
        row.wasted += c.saving;
    }
}

impl CollectionWaste {
    fn add(&mut self, other: &CollectionWaste) {
        self.count += other.count;
        self.elements += other.elements;
        self.bytes += other.bytes;
        for (a, b) in [
            (&mut self.empty, &other.empty),
            (&mut self.sparse, &other.sparse),
            (&mut self.oversized, &other.oversized),
        ] {
            a.count += b.count;
            a.wasted += b.wasted;
        }
        self.wasted += other.wasted;
    }
}

/// Groups the strings by value (see [`group_copies`]): totals over the values held twice or
/// more, and the `top` wasting most.
fn duplicate_strings(
    graph: &HeapGraph<'_>,
    strings: Vec<(u64, u32, u32)>,
    top: usize,
) -> DuplicateStrings {
    let mut out = DuplicateStrings::default();
    let mut groups: Vec<DuplicateString> = Vec::new();
    group_copies(graph, strings, |members| {
        // Copies sorted by array: distinct arrays are runs.
        let mut bytes = 0;
        let mut arrays = 0;
        let mut last = NONE;
        for &(node, array) in members {
            bytes += graph.shallow(node);
            if array != last {
                bytes += graph.shallow(array);
                arrays += 1;
                last = array;
            }
        }
        let one = graph.shallow(members[0].0) + graph.shallow(members[0].1);
        let wasted = bytes.saturating_sub(one);
        out.values += 1;
        out.copies += members.len() as u64;
        out.wasted += wasted;
        let group = DuplicateString {
            value: String::new(),
            length: 0,
            copies: members.len() as u64,
            arrays,
            bytes,
            wasted,
            example: members[0].0,
        };
        // Only the `top` wasting most are kept.
        if groups.len() < top.max(1).saturating_mul(2) {
            groups.push(group);
        } else if let Some(least) = groups.iter_mut().min_by_key(|g| g.wasted)
            && least.wasted < group.wasted
        {
            *least = group;
        }
    });
    groups.sort_unstable_by_key(|g| (std::cmp::Reverse(g.wasted), g.example));
    groups.truncate(top);
    for g in &mut groups {
        let text = graph.string_value(g.example).unwrap_or_default();
        g.length = text.chars().count() as u64;
        g.value = shorten(&text, 200);
    }
    out.top = groups;
    out
}

/// The object arrays mostly null that are no collection's storage, by class.
fn null_arrays(
    graph: &HeapGraph<'_>,
    arrays: &[(u32, u64, u64)],
    storage: &[u32],
) -> Vec<NullArrays> {
    let mut rows: FxHashMap<u32, NullArrays> = FxHashMap::default();
    for &(node, length, nulls) in arrays {
        if storage.binary_search(&node).is_ok() {
            continue;
        }
        let class = graph.class_of(node);
        let row = rows.entry(class).or_insert_with(|| NullArrays {
            class,
            count: 0,
            length: 0,
            nulls: 0,
            bytes: 0,
            wasted: 0,
            biggest: node,
        });
        row.count += 1;
        row.length += length;
        row.nulls += nulls;
        row.bytes += object_array_bytes(length);
        row.wasted += 4 * nulls;
        if graph.shallow(node) > graph.shallow(row.biggest) {
            row.biggest = node;
        }
    }
    let mut rows: Vec<NullArrays> = rows.into_values().collect();
    rows.sort_unstable_by_key(|r| (std::cmp::Reverse(r.wasted), r.class));
    rows
}

/// What a heap wastes.
#[derive(Debug, Default)]
pub struct WasteReport {
    /// Duplicate strings.
    pub strings: DuplicateStrings,
    /// Collections by class, the most wasteful first.
    pub collections: Vec<CollectionWaste>,
    /// Object arrays mostly null (that are no collection's storage), by class.
    pub null_arrays: Vec<NullArrays>,
}

/// Strings whose value other strings hold too.
#[derive(Debug, Default)]
pub struct DuplicateStrings {
    /// Values held by two String objects or more.
    pub values: u64,
    /// The String objects holding them.
    pub copies: u64,
    /// What the copies beyond one per value take: their String objects and the value arrays
    /// they do not share.
    pub wasted: u64,
    /// The values wasting most, most first.
    pub top: Vec<DuplicateString>,
}

/// One value held by several String objects.
#[derive(Debug, Clone)]
pub struct DuplicateString {
    /// The value (at most 200 characters, then `…`).
    pub value: String,
    /// Its length in characters.
    pub length: u64,
    /// String objects holding it.
    pub copies: u64,
    /// Distinct value arrays among them.
    pub arrays: u64,
    /// Bytes of the copies and their arrays.
    pub bytes: u64,
    /// Bytes beyond one String and one array.
    pub wasted: u64,
    /// One of the String objects.
    pub example: u32,
}

/// Collections of one class in one fill.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Collections.
    pub count: u64,
    /// What right-sized ones would save.
    pub wasted: u64,
}

/// The collections of one class.
#[derive(Debug, Clone)]
pub struct CollectionWaste {
    /// The class index.
    pub class: u32,
    /// What kind of collection.
    pub kind: CollectionKind,
    /// Collections.
    pub count: u64,
    /// Their elements.
    pub elements: u64,
    /// Their bytes: the collections and their storage arrays.
    pub bytes: u64,
    /// Those with no element; a right-sized one has no storage array.
    pub empty: Tally,
    /// Those less than a quarter full.
    pub sparse: Tally,
    /// Those a quarter to half full.
    pub oversized: Tally,
    /// What right-sizing the empty, sparse and oversized ones would save.
    pub wasted: u64,
}

/// The object arrays of one class that are mostly null.
#[derive(Debug, Clone)]
pub struct NullArrays {
    /// The array class index.
    pub class: u32,
    /// Arrays with more null elements than others (of 8 elements or more).
    pub count: u64,
    /// Their elements.
    pub length: u64,
    /// Their null elements.
    pub nulls: u64,
    /// Their bytes.
    pub bytes: u64,
    /// The bytes of their null slots.
    pub wasted: u64,
    /// The biggest of them.
    pub biggest: u32,
}

/// `text` cut to `max` characters, with `…` where it was cut.
fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The offset and type of the instance field `name` of the class named `class`.
fn class_field(graph: &HeapGraph<'_>, class: &str, name: &str) -> Option<(u32, BasicType)> {
    let c = graph.classes().iter().position(|c| c.name == class)?;
    field(graph, c as u32, name)
}

/// The offset and type of the instance field `name` of class `c` (its own first, then its
/// superclasses').
fn field(graph: &HeapGraph<'_>, c: u32, name: &str) -> Option<(u32, BasicType)> {
    graph.classes()[c as usize]
        .fields
        .iter()
        .find(|f| graph.string(f.name_id).is_some_and(|n| n == name))
        .map(|f| (f.offset, f.ty))
}

/// What the scan reads of each class's instances.
fn readers(graph: &HeapGraph<'_>) -> Vec<Reader> {
    let classes = graph.classes();
    // The kind of every class that is or extends one of the collections.
    let kind_of = |c: usize| -> Option<CollectionKind> {
        let mut at = c as u32;
        for _ in 0..64 {
            let class = classes.get(at as usize)?;
            if let Some(k) = CollectionKind::ALL
                .into_iter()
                .find(|k| k.class_name() == class.name)
            {
                return Some(k);
            }
            at = class.super_index;
        }
        None
    };
    (0..classes.len())
        .map(|c| {
            let class = &classes[c];
            match class.kind {
                ClassKind::ObjectArray => return Reader::ObjectArray,
                ClassKind::Instance => {}
                _ => return Reader::None,
            }
            if class.name == "java.lang.String" {
                return match field(graph, c as u32, "value") {
                    Some((value, BasicType::Object)) => Reader::String {
                        value,
                        coder: field(graph, c as u32, "coder")
                            .filter(|f| f.1 == BasicType::Byte)
                            .map(|f| f.0),
                    },
                    _ => Reader::None,
                };
            }
            let Some(kind) = kind_of(c) else {
                return Reader::None;
            };
            let f = |name: &str| field(graph, c as u32, name);
            let object = |name: &str| f(name).filter(|f| f.1 == BasicType::Object).map(|f| f.0);
            let (storage, size, extra, cells) = match kind {
                CollectionKind::HashMap => (object("table"), f("size"), f("loadFactor"), None),
                CollectionKind::HashSet => (object("map"), None, None, None),
                CollectionKind::ConcurrentHashMap => (
                    object("table"),
                    None,
                    f("baseCount"),
                    object("counterCells"),
                ),
                CollectionKind::ArrayList => (object("elementData"), f("size"), None, None),
                CollectionKind::ArrayDeque => (object("elements"), f("head"), f("tail"), None),
            };
            match storage {
                Some(storage) => Reader::Collection {
                    kind,
                    storage,
                    size,
                    extra,
                    cells,
                },
                None => Reader::None,
            }
        })
        .collect()
}

/// The value of a field of primitive type as an integer (floats by their value, rounded
/// down; object references as their id).
fn read_number(values: &[u8], (offset, ty): (u32, BasicType), id_size: IdSize) -> Option<f64> {
    let at = offset as usize;
    let bytes = values.get(at..at + ty.size(id_size))?;
    let be = |b: &[u8]| b.iter().fold(0u64, |acc, &x| (acc << 8) | u64::from(x));
    Some(match ty {
        BasicType::Int => be(bytes) as u32 as i32 as f64,
        BasicType::Long => be(bytes) as i64 as f64,
        BasicType::Short => be(bytes) as u16 as i16 as f64,
        BasicType::Byte => bytes[0] as i8 as f64,
        BasicType::Char => be(bytes) as f64,
        BasicType::Boolean => f64::from(bytes[0]),
        BasicType::Float => f64::from(f32::from_bits(be(bytes) as u32)),
        BasicType::Double => f64::from_bits(be(bytes)),
        BasicType::Object => be(bytes) as f64,
    })
}

fn read_id(values: &[u8], offset: u32, id_size: IdSize) -> u64 {
    let at = offset as usize;
    values.get(at..at + id_size.bytes()).map_or(0, |b| {
        b.iter().fold(0u64, |acc, &x| (acc << 8) | u64::from(x))
    })
}

/// The node `v` refers to by the reference `id` (among its successors), if in the dump.
fn target(graph: &HeapGraph<'_>, csr: Csr<'_>, v: u32, id: u64) -> Option<u32> {
    if id == 0 {
        return None;
    }
    csr.successors(v)
        .iter()
        .copied()
        .find(|&t| graph.id(t) == id)
}

/// A String's (hash of its coder and value bytes, node, value array node).
fn string_hash(
    graph: &HeapGraph<'_>,
    csr: Csr<'_>,
    v: u32,
    values: &[u8],
    value: u32,
    coder: Option<u32>,
    id_size: IdSize,
) -> Option<(u64, u32, u32)> {
    let array = target(graph, csr, v, read_id(values, value, id_size))?;
    let HeapRecord::PrimitiveArrayDump {
        element_type, data, ..
    } = graph.record(array)?
    else {
        return None;
    };
    let coder = coder
        .and_then(|at| values.get(at as usize).copied())
        .unwrap_or(0);
    let mut h = FxHasher::default();
    h.write_u8(element_type as u8);
    h.write_u8(coder);
    h.write(data);
    h.write_usize(data.len());
    Some((h.finish(), v, array))
}

/// A String and its value array.
type Copy = (u32, u32);

/// The bytes of a String's value, its element type and its coder, to compare copies.
fn string_bytes<'a>(graph: &HeapGraph<'a>, v: u32, array: u32) -> Option<(u8, u8, &'a [u8])> {
    let HeapRecord::PrimitiveArrayDump {
        element_type, data, ..
    } = graph.record(array)?
    else {
        return None;
    };
    let coder = match graph.field(v, "coder") {
        Some(hprof_format::Value::Byte(c)) => c as u8,
        _ => 0,
    };
    Some((element_type as u8, coder, data))
}

/// Groups the strings by value: sorted by hash (then array), each run of equal hashes
/// checked byte for byte (a collision splits it). Calls `group` with the (String, array)
/// pairs of each value held twice or more, sorted by array.
fn group_copies(
    graph: &HeapGraph<'_>,
    mut strings: Vec<(u64, u32, u32)>,
    mut group: impl FnMut(&[Copy]),
) {
    strings.par_sort_unstable();
    let mut at = 0;
    while at < strings.len() {
        let hash = strings[at].0;
        let end = at + strings[at..].iter().take_while(|s| s.0 == hash).count();
        if end - at >= 2 {
            // Each distinct value of the run makes a group.
            let mut pending: Vec<Copy> = strings[at..end].iter().map(|s| (s.1, s.2)).collect();
            while !pending.is_empty() {
                let (first, first_array) = pending[0];
                let reference = string_bytes(graph, first, first_array);
                let (same, other): (Vec<Copy>, Vec<Copy>) = pending.iter().partition(|&&(v, a)| {
                    a == first_array || string_bytes(graph, v, a) == reference
                });
                if same.len() >= 2 {
                    group(&same);
                }
                pending = other;
            }
        }
        at = end;
    }
}

/// The ids and fields a collection's reader needs.
struct CollectionFields {
    kind: CollectionKind,
    storage: u32,
    size: Option<(u32, BasicType)>,
    extra: Option<(u32, BasicType)>,
    cells: Option<u32>,
    cell_value: Option<(u32, BasicType)>,
}

/// Reads one collection: its size, its storage's length, how full it is and what a
/// right-sized one would save.
fn collection(
    graph: &HeapGraph<'_>,
    csr: Csr<'_>,
    v: u32,
    values: &[u8],
    f: &CollectionFields,
    id_size: IdSize,
) -> Option<Collection> {
    let storage = target(graph, csr, v, read_id(values, f.storage, id_size));
    let own = graph.shallow(v);
    if f.kind == CollectionKind::HashSet {
        // The set's map, read as a HashMap.
        let map = storage?;
        let HeapRecord::InstanceDump {
            values: map_values, ..
        } = graph.record(map)?
        else {
            return None;
        };
        let c = graph.class_of(map);
        let table = field(graph, c, "table")?;
        let fields = CollectionFields {
            kind: CollectionKind::HashMap,
            storage: table.0,
            size: field(graph, c, "size"),
            extra: field(graph, c, "loadFactor"),
            cells: None,
            cell_value: None,
        };
        let inner = collection(graph, csr, map, map_values, &fields, id_size)?;
        return Some(Collection {
            kind: CollectionKind::HashSet,
            bytes: own + inner.bytes,
            ..inner
        });
    }
    let capacity = match storage.and_then(|s| graph.record(s)) {
        Some(HeapRecord::ObjectArrayDump { elements, .. }) => elements.len() as u64,
        _ => 0,
    };
    let storage_bytes = storage.map_or(0, |s| graph.shallow(s));
    let number =
        |field: Option<(u32, BasicType)>| field.and_then(|f| read_number(values, f, id_size));
    let (size, room, right) = match f.kind {
        CollectionKind::HashMap | CollectionKind::HashSet => {
            let size = number(f.size).unwrap_or(0.0).max(0.0) as u64;
            let load = number(f.extra).filter(|l| *l > 0.0).unwrap_or(0.75);
            let right = if size == 0 {
                0
            } else {
                table_size_for((size as f64 / load).ceil() as u64)
            };
            (size, capacity as f64 * load, right)
        }
        CollectionKind::ConcurrentHashMap => {
            let mut size = number(f.extra).unwrap_or(0.0).max(0.0) as u64;
            if let (Some(cells), Some(value)) = (f.cells, f.cell_value)
                && let Some(cells) = target(graph, csr, v, read_id(values, cells, id_size))
            {
                for &cell in csr.successors(cells) {
                    if let Some(HeapRecord::InstanceDump { values, .. }) = graph.record(cell) {
                        size += read_number(values, value, id_size).unwrap_or(0.0).max(0.0) as u64;
                    }
                }
            }
            let right = if size == 0 {
                0
            } else {
                table_size_for((size as f64 / 0.75).ceil() as u64)
            };
            (size, capacity as f64 * 0.75, right)
        }
        CollectionKind::ArrayList => {
            let size = number(f.size).unwrap_or(0.0).max(0.0) as u64;
            (size, capacity as f64, size)
        }
        CollectionKind::ArrayDeque => {
            let head = number(f.size).unwrap_or(0.0) as i64;
            let tail = number(f.extra).unwrap_or(0.0) as i64;
            let len = capacity as i64;
            let size = if len == 0 {
                0
            } else {
                (tail - head).rem_euclid(len) as u64
            };
            // A deque keeps one slot free.
            (size, (capacity.saturating_sub(1)) as f64, size + 1)
        }
    };
    let right_bytes = if right == 0 || f.kind == CollectionKind::ArrayList && size == 0 {
        0
    } else {
        object_array_bytes(right)
    };
    let saving = if storage.is_some() && right < capacity {
        storage_bytes.saturating_sub(right_bytes)
    } else {
        0
    };
    let fill = Fill::of(size, room);
    Some(Collection {
        kind: f.kind,
        size,
        fill,
        bytes: own + storage_bytes,
        saving,
        storage: storage.map(|s| (s, capacity)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_and_right_sizes() {
        assert_eq!(Fill::of(0, 12.0), Fill::Empty);
        assert_eq!(Fill::of(1, 1000.0), Fill::Sparse);
        assert_eq!(Fill::of(3, 10.0), Fill::Oversized);
        assert_eq!(Fill::of(7, 10.0), Fill::Normal);
        assert_eq!(table_size_for(0), 1);
        assert_eq!(table_size_for(17), 32);
        assert_eq!(table_size_for(16), 16);
        assert_eq!(object_array_bytes(1000), 4016);
        assert_eq!(object_array_bytes(1), 24);
        assert_eq!(object_array_bytes(16), 80);
        assert_eq!(shorten("abcdef", 3), "abc…");
        assert_eq!(shorten("abc", 3), "abc");
    }
}
