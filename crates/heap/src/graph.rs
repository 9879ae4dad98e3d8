//! Owns the object graph of a heap dump: node numbering, classes and their layouts,
//! shallow sizes, references in CSR form and GC roots, built from a file held in memory.

use std::borrow::Cow;

use hprof_format::{
    BasicType, Header, HeapDumpBody, HeapRecord, IdSize, Record, Records, Symbols, Value,
    java_class_name, primitive_array_name, shallow,
};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::anomalies::Anomalies;
use crate::compact::{ClassOf, IdIndex, MAX_FILE, Offsets, mapped_capacity, zeroed};
use crate::dominators::{Csr, Edges, NONE};
use crate::progress::Progress;

/// What a GC root is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RootKind {
    /// ROOT JNI GLOBAL.
    JniGlobal,
    /// ROOT JNI LOCAL.
    JniLocal,
    /// ROOT JAVA FRAME: a local variable of a Java method.
    JavaFrame,
    /// ROOT NATIVE STACK.
    NativeStack,
    /// ROOT STICKY CLASS: a class the JVM never unloads.
    StickyClass,
    /// ROOT THREAD BLOCK.
    ThreadBlock,
    /// ROOT MONITOR USED.
    MonitorUsed,
    /// ROOT THREAD OBJECT: a live thread.
    ThreadObject,
    /// ROOT UNKNOWN.
    Unknown,
}

impl RootKind {
    /// The kind's name as MAT and VisualVM show it.
    pub fn name(self) -> &'static str {
        match self {
            RootKind::JniGlobal => "JNI global",
            RootKind::JniLocal => "JNI local",
            RootKind::JavaFrame => "Java frame",
            RootKind::NativeStack => "native stack",
            RootKind::StickyClass => "sticky class",
            RootKind::ThreadBlock => "thread block",
            RootKind::MonitorUsed => "busy monitor",
            RootKind::ThreadObject => "thread object",
            RootKind::Unknown => "unknown",
        }
    }

    /// True for roots that belong to a thread's stack (they name a thread, some a frame).
    pub fn is_stack(self) -> bool {
        matches!(
            self,
            RootKind::JniLocal
                | RootKind::JavaFrame
                | RootKind::NativeStack
                | RootKind::ThreadBlock
        )
    }
}

/// One GC root record whose object is in the dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Root {
    /// The object.
    pub node: u32,
    /// The root's kind.
    pub kind: RootKind,
    /// The thread's serial number for stack roots and thread objects, else 0.
    pub thread_serial: u32,
    /// The frame's depth in the thread's stack trace (`u32::MAX` for none).
    pub frame: u32,
}

/// What kind of objects a class describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassKind {
    /// Plain instances (INSTANCE DUMP).
    Instance,
    /// Arrays of references.
    ObjectArray,
    /// Arrays of one primitive type (a pseudo-class with no CLASS DUMP).
    PrimitiveArray(BasicType),
    /// Objects whose class is not in the dump.
    Unknown,
}

/// One instance field in the flattened layout of a class (its fields, then its superclass's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The STRING id of the field's name.
    pub name_id: u64,
    /// The field's type.
    pub ty: BasicType,
    /// The field's offset in an INSTANCE DUMP's values.
    pub offset: u32,
}

/// A class of the dump.
#[derive(Debug, Clone)]
pub struct Class {
    /// The class object's id (0 for pseudo-classes).
    pub id: u64,
    /// The Java name (`java.util.HashMap`, `int[]`).
    pub name: String,
    /// The kind of objects.
    pub kind: ClassKind,
    /// The superclass's index in [`HeapGraph::classes`], or [`NONE`].
    pub super_index: u32,
    /// The node of the class object, or [`NONE`].
    pub node: u32,
    /// Every instance field, this class's first.
    pub fields: Vec<Field>,
    /// The byte length of an instance's field values.
    pub values_len: u32,
    /// Shallow size of an instance.
    pub instance_size: u32,
    /// For subclasses of java.lang.ref.Reference: the offset of `referent`.
    pub referent_offset: Option<u32>,
    /// The id of the class loader object that defined the class (0: the boot loader, and
    /// pseudo-classes).
    pub loader: u64,
}

impl Class {
    /// True for java.lang.ref.Reference and its subclasses.
    pub fn is_reference(&self) -> bool {
        self.referent_offset.is_some()
    }
}

/// A frame of a STACK TRACE, resolved to names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameInfo {
    /// `pkg.Class.method`.
    pub method: String,
    /// Source file and line, as `File.java:12`, or what is known.
    pub location: String,
}

/// A heap dump's objects and references, indexed for graph algorithms.
///
/// Nodes are numbered `0..len()` in increasing object id; the number `len()` stands for the
/// virtual super-root above every GC root.
#[derive(Debug)]
pub struct HeapGraph<'a> {
    bytes: &'a [u8],
    header: Header,
    index: IdIndex,
    offsets: Offsets,
    class_of: ClassOf,
    edges: Edges,
    roots: Vec<Root>,
    classes: Vec<Class>,
    class_index: FxHashMap<u64, u32>,
    java_lang_class: u32,
    symbols: Symbols<'a>,
    threads: FxHashMap<u32, (u64, u32)>,
    /// Heap dumps in the file (the graph is the last one's).
    dumps: u32,
    /// Byte offset of the last heap dump's first record.
    dump_offset: u64,
    /// What the dump holds that does not add up.
    anomalies: Anomalies,
}

/// Errors while building the graph.
pub type Result<T> = std::result::Result<T, hprof_format::Error>;

/// What pass 1 finds in a run of heap dump bodies.
#[derive(Default)]
struct Found {
    objects: Vec<(u64, u64)>,
    /// Where each body's objects are in `objects`, each range sorted by id.
    runs: Vec<(usize, usize)>,
    class_dumps: Vec<u64>,
    roots: Vec<(u64, RootKind, u32, u32)>,
    threads: Vec<(u32, u64, u32)>,
}

impl<'a> HeapGraph<'a> {
    /// Reads the whole file `bytes` and builds the graph of its last heap dump (a profile can
    /// hold several, one per SIGQUIT, each with ids of its own), telling `progress` what it
    /// does.
    pub fn build(bytes: &'a [u8], progress: &dyn Progress) -> Result<HeapGraph<'a>> {
        progress.phase("reading records", bytes.len() as u64);
        let (header, mut records) = Records::new(bytes)?;
        if bytes.len() as u64 >= MAX_FILE {
            return Err(too_large(0));
        }
        let id_size = header.id_size;
        let mut symbols = Symbols::new();
        let mut bodies: Vec<HeapDumpBody<'a>> = Vec::new();
        // Heap dumps seen; whether the last one has ended (a later body starts another).
        let mut dumps = 0u32;
        let mut ended = true;
        let mut reported = 0u64;
        while let Some((head, record)) = records.next()? {
            let offset = head.offset;
            symbols.add(&record);
            match record {
                Record::HeapDumpSegment(body) => {
                    if ended {
                        bodies.clear();
                        dumps += 1;
                        ended = false;
                    }
                    bodies.push(body);
                }
                Record::HeapDump(body) => {
                    // A whole heap dump in one record.
                    bodies.clear();
                    dumps += 1;
                    ended = true;
                    bodies.push(body);
                }
                Record::HeapDumpEnd => ended = true,
                _ => {}
            }
            if offset - reported >= 1 << 24 {
                progress.advance(offset - reported);
                reported = offset;
            }
        }

        let dump_offset = bodies
            .first()
            .map_or(0, |b| b.offset - hprof_format::RECORD_HEADER_LEN as u64);
        let body_bytes: u64 = bodies.iter().map(|b| b.data.len() as u64).sum();
        progress.phase("indexing objects", body_bytes);
        // A few big runs of bodies rather than one per body (jcmd writes a segment per
        // few megabytes): the allocator returns big blocks to the system when they are
        // freed, but keeps thousands of small ones resident.
        let runs = 4 * rayon::current_num_threads().max(1);
        let per_run = body_bytes.div_ceil(runs as u64).max(1);
        let mut groups: Vec<&[HeapDumpBody<'a>]> = Vec::with_capacity(runs + 1);
        let mut first = 0usize;
        let mut bytes_in = 0u64;
        for (i, body) in bodies.iter().enumerate() {
            bytes_in += body.data.len() as u64;
            if bytes_in >= per_run || i + 1 == bodies.len() {
                groups.push(&bodies[first..=i]);
                first = i + 1;
                bytes_in = 0;
            }
        }
        let found: Vec<Found> = groups
            .par_iter()
            .map(|group| -> Result<Found> {
                let mut found = Found {
                    objects: Vec::with_capacity(mapped_capacity::<(u64, u64)>(0)),
                    ..Found::default()
                };
                for body in group.iter() {
                    let start = found.objects.len();
                    scan_body(body, id_size, progress, &mut found)?;
                    let run = &mut found.objects[start..];
                    if !run.is_sorted_by_key(|&(id, _)| id) {
                        run.sort_unstable_by_key(|&(id, _)| id);
                    }
                    if !run.is_empty() {
                        found.runs.push((start, found.objects.len()));
                    }
                }
                Ok(found)
            })
            .collect::<Result<_>>()?;
        drop(groups);
        let mut class_dumps = Vec::new();
        let mut raw_roots = Vec::new();
        let mut threads = FxHashMap::default();
        for f in &found {
            class_dumps.extend_from_slice(&f.class_dumps);
            raw_roots.extend_from_slice(&f.roots);
            for &(serial, object, trace) in &f.threads {
                threads.insert(serial, (object, trace));
            }
        }
        let mut objects = merge_runs(found);
        progress.phase("sorting objects", 0);
        if !objects.is_sorted_by_key(|&(id, _)| id) {
            objects.par_sort_unstable_by_key(|&(id, _)| id);
        }
        objects.dedup_by_key(|&mut (id, _)| id);
        if objects.len() >= NONE as usize {
            return Err(too_large(objects[NONE as usize].1));
        }
        let offsets = Offsets::new(objects.par_iter().map(|&(_, off)| off));
        let index = IdIndex::new(&|i| objects[i].0, objects.len());
        drop(objects);

        let mut graph = HeapGraph {
            bytes,
            header,
            index,
            offsets,
            class_of: ClassOf::default(),
            edges: Edges::default(),
            roots: Vec::new(),
            classes: Vec::new(),
            class_index: FxHashMap::default(),
            java_lang_class: NONE,
            symbols,
            threads,
            dumps,
            dump_offset,
            anomalies: Anomalies::default(),
        };
        graph.read_classes(&class_dumps)?;
        graph.roots = raw_roots
            .into_iter()
            .filter_map(|(id, kind, thread_serial, frame)| {
                Some(Root {
                    node: graph.node(id)?,
                    kind,
                    thread_serial,
                    frame,
                })
            })
            .collect();

        graph.read_references(progress)?;
        // From now on ids are read from the file (at a record's offset + 1) and found by
        // binary search over the offsets: the index's 6 bytes per object are freed.
        graph.index = IdIndex::default();
        Ok(graph)
    }

    /// Builds the class table from the CLASS DUMPs at `offsets`.
    fn read_classes(&mut self, offsets: &[u64]) -> Result<()> {
        let id_size = self.header.id_size;
        struct Raw {
            id: u64,
            super_id: u64,
            loader: u64,
            own: Vec<(u64, BasicType)>,
        }
        let mut raws = Vec::with_capacity(offsets.len());
        for &offset in offsets {
            if let HeapRecord::ClassDump(dump) = self.record_at(offset)? {
                let named = self
                    .symbols
                    .class_name_id(dump.class_id)
                    .and_then(|n| self.symbols.text(n))
                    .is_some();
                if !named {
                    self.anomalies.unnamed_class.note(offset, dump.class_id);
                }
                raws.push(Raw {
                    id: dump.class_id,
                    super_id: dump.super_class_id,
                    loader: dump.class_loader_id,
                    own: dump.instance_fields().collect(),
                });
            }
        }
        let mut by_id: FxHashMap<u64, u32> = FxHashMap::default();
        for (i, raw) in raws.iter().enumerate() {
            by_id.insert(raw.id, i as u32);
        }
        let mut classes = Vec::with_capacity(raws.len() + 10);
        for raw in &raws {
            let raw_name = self
                .symbols
                .class_name_id(raw.id)
                .and_then(|n| self.symbols.text(n))
                .map(Cow::into_owned)
                .unwrap_or_else(|| format!("class@{:#x}", raw.id));
            // jcmd names array classes by signature (`[Ljava/lang/String;`), the agent's dumps
            // in the Java form (`java/lang/String[]`).
            let kind = if raw_name.starts_with('[') || raw_name.ends_with("[]") {
                ClassKind::ObjectArray
            } else {
                ClassKind::Instance
            };
            // Flatten the fields: this class's, then each superclass's.
            let mut fields = Vec::new();
            let mut offset = 0u32;
            let mut field_bytes = 0u64;
            let mut referent_offset = None;
            let mut at = Some(raw);
            let mut guard = 0;
            while let Some(c) = at {
                let is_reference = self
                    .symbols
                    .class_name_id(c.id)
                    .and_then(|n| self.symbols.string(n))
                    .is_some_and(|t| t == b"java/lang/ref/Reference");
                for &(name_id, ty) in &c.own {
                    if is_reference && self.symbols.string(name_id) == Some(&b"referent"[..]) {
                        referent_offset = Some(offset);
                    }
                    fields.push(Field {
                        name_id,
                        ty,
                        offset,
                    });
                    offset += ty.size(id_size) as u32;
                    field_bytes += shallow::field_bytes(ty);
                }
                guard += 1;
                at = by_id.get(&c.super_id).map(|&i| &raws[i as usize]);
                if guard > 1000 {
                    break;
                }
            }
            classes.push(Class {
                id: raw.id,
                name: java_class_name(&raw_name),
                kind,
                super_index: by_id.get(&raw.super_id).copied().unwrap_or(NONE),
                node: self.node(raw.id).unwrap_or(NONE),
                fields,
                values_len: offset,
                instance_size: saturate(shallow::instance_size(field_bytes)),
                referent_offset,
                loader: raw.loader,
            });
        }
        for ty in PRIMITIVES {
            classes.push(Class {
                id: 0,
                name: primitive_array_name(ty),
                kind: ClassKind::PrimitiveArray(ty),
                super_index: NONE,
                node: NONE,
                fields: Vec::new(),
                values_len: 0,
                instance_size: 0,
                referent_offset: None,
                loader: 0,
            });
        }
        classes.push(Class {
            id: 0,
            name: "(unknown class)".to_string(),
            kind: ClassKind::Unknown,
            super_index: NONE,
            node: NONE,
            fields: Vec::new(),
            values_len: 0,
            instance_size: 0,
            referent_offset: None,
            loader: 0,
        });
        self.java_lang_class = classes
            .iter()
            .position(|c| c.name == "java.lang.Class")
            .map_or(classes.len() as u32 - 1, |i| i as u32);
        self.classes = classes;
        self.class_index = by_id;
        Ok(())
    }
}

/// The primitive types, in the order of their pseudo-classes after the real classes.
const PRIMITIVES: [BasicType; 8] = [
    BasicType::Boolean,
    BasicType::Char,
    BasicType::Float,
    BasicType::Double,
    BasicType::Byte,
    BasicType::Short,
    BasicType::Int,
    BasicType::Long,
];

/// The objects of every run of bodies as one list, sorted by id in most dumps without a
/// full sort: each body's objects are sorted, and the bodies form a few chains of disjoint,
/// increasing id ranges. jcmd writes one body of class objects spread over the whole heap,
/// then the heap in address order; the biggest chain is moved together in place and the
/// others are merged into it from the back. Otherwise the list is returned as found, to be
/// sorted.
fn merge_runs(mut found: Vec<Found>) -> Vec<(u64, u64)> {
    let total: usize = found.iter().map(|f| f.objects.len()).sum();
    // The groups' lists end to end, in file order, and each body's place in the result.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut objects: Vec<(u64, u64)> = Vec::new();
    for f in &mut found {
        let base = objects.len();
        runs.extend(f.runs.iter().map(|&(s, e)| (base + s, base + e)));
        if objects.is_empty() {
            objects = std::mem::take(&mut f.objects);
            objects.reserve_exact(total - objects.len());
        } else {
            objects.extend_from_slice(&f.objects);
            f.objects = Vec::new();
        }
    }
    drop(found);
    // Chains of bodies by first id: a body goes to the chain whose last id is the highest
    // below its first, else starts a chain. (last id, bodies in id order, objects)
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_unstable_by_key(|&r| objects[runs[r].0].0);
    let mut chains: Vec<(u64, Vec<usize>, usize)> = Vec::new();
    for r in order {
        let (start, end) = runs[r];
        let (first, last) = (objects[start].0, objects[end - 1].0);
        let fits = chains
            .iter()
            .enumerate()
            .filter(|(_, c)| c.0 < first)
            .max_by_key(|(_, c)| c.0);
        match fits.map(|(c, _)| c) {
            Some(c) => {
                let chain = &mut chains[c];
                chain.0 = last;
                chain.1.push(r);
                chain.2 += end - start;
            }
            None if chains.len() < 64 => chains.push((last, vec![r], end - start)),
            // Too interleaved: sort.
            None => return objects,
        }
    }
    let Some(main) = (0..chains.len()).max_by_key(|&c| chains[c].2) else {
        return objects;
    };
    let outside = total - chains[main].2;
    let in_file_order = chains[main].1.windows(2).all(|w| w[0] < w[1]);
    if !in_file_order {
        if outside > 0 {
            return objects;
        }
        // Disjoint bodies out of order: copy them in order.
        let mut sorted = Vec::with_capacity(total);
        for &r in &chains[main].1 {
            sorted.extend_from_slice(&objects[runs[r].0..runs[r].1]);
        }
        return sorted;
    }
    if outside > total / 4 {
        return objects;
    }
    let mut side: Vec<(u64, u64)> = Vec::with_capacity(outside);
    for (c, chain) in chains.iter().enumerate() {
        if c != main {
            for &r in &chain.1 {
                side.extend_from_slice(&objects[runs[r].0..runs[r].1]);
            }
        }
    }
    side.sort_unstable_by_key(|&(id, _)| id);
    // The main chain's bodies to the front, in order (each moves down, never over one
    // still to move).
    let mut write = 0usize;
    for &r in &chains[main].1 {
        let (start, end) = runs[r];
        objects.copy_within(start..end, write);
        write += end - start;
    }
    // Merge the rest in from the back: slot k - 1 is always at or above i.
    let (mut i, mut j) = (write, side.len());
    let mut k = total;
    while j > 0 {
        if i > 0 && objects[i - 1].0 > side[j - 1].0 {
            objects[k - 1] = objects[i - 1];
            i -= 1;
        } else {
            objects[k - 1] = side[j - 1];
            j -= 1;
        }
        k -= 1;
    }
    objects
}

/// Adds the objects, CLASS DUMPs and roots of one heap dump body to `found`.
fn scan_body(
    body: &HeapDumpBody<'_>,
    id_size: IdSize,
    progress: &dyn Progress,
    found: &mut Found,
) -> Result<()> {
    let mut records = body.records(id_size);
    let mut reported = body.offset;
    while let Some((offset, record)) = records.next()? {
        if offset - reported >= 1 << 22 {
            progress.advance(offset - reported);
            reported = offset;
        }
        match record {
            HeapRecord::InstanceDump { object_id, .. } => found.objects.push((object_id, offset)),
            HeapRecord::ObjectArrayDump { array_id, .. }
            | HeapRecord::PrimitiveArrayDump { array_id, .. } => {
                found.objects.push((array_id, offset))
            }
            HeapRecord::ClassDump(class) => {
                found.objects.push((class.class_id, offset));
                found.class_dumps.push(offset);
            }
            HeapRecord::RootUnknown { object_id } => {
                found.roots.push((object_id, RootKind::Unknown, 0, NONE))
            }
            HeapRecord::RootJniGlobal { object_id, .. } => {
                found.roots.push((object_id, RootKind::JniGlobal, 0, NONE))
            }
            HeapRecord::RootJniLocal {
                object_id,
                thread_serial,
                frame_number,
            } => found
                .roots
                .push((object_id, RootKind::JniLocal, thread_serial, frame_number)),
            HeapRecord::RootJavaFrame {
                object_id,
                thread_serial,
                frame_number,
            } => found
                .roots
                .push((object_id, RootKind::JavaFrame, thread_serial, frame_number)),
            HeapRecord::RootNativeStack {
                object_id,
                thread_serial,
            } => found
                .roots
                .push((object_id, RootKind::NativeStack, thread_serial, NONE)),
            HeapRecord::RootStickyClass { object_id } => {
                found
                    .roots
                    .push((object_id, RootKind::StickyClass, 0, NONE))
            }
            HeapRecord::RootThreadBlock {
                object_id,
                thread_serial,
            } => found
                .roots
                .push((object_id, RootKind::ThreadBlock, thread_serial, NONE)),
            HeapRecord::RootMonitorUsed { object_id } => {
                found
                    .roots
                    .push((object_id, RootKind::MonitorUsed, 0, NONE))
            }
            HeapRecord::RootThreadObject {
                thread_object_id,
                thread_serial,
                stack_trace_serial,
            } => {
                found.roots.push((
                    thread_object_id,
                    RootKind::ThreadObject,
                    thread_serial,
                    NONE,
                ));
                found
                    .threads
                    .push((thread_serial, thread_object_id, stack_trace_serial));
            }
        }
    }
    progress.advance(body.offset + body.data.len() as u64 - reported);
    Ok(())
}

/// What one unit of parallel work finds when references are read: each node's reference
/// count, the references, and what does not add up.
type Run = (Vec<u32>, Vec<u32>, Anomalies);

/// Nodes per unit of parallel work when references are read.
const CHUNK: usize = 1 << 14;

impl<'a> HeapGraph<'a> {
    /// Reads every object's class and references in one pass, in waves of runs of nodes
    /// read in parallel, each run listing its references on its own; the runs' lists are
    /// then appended in order to the CSR arrays, whose exact size is only known at the end
    /// (their unused capacity is never touched, and is given back).
    fn read_references(&mut self, progress: &dyn Progress) -> Result<()> {
        const WAVE: usize = 32 * CHUNK;
        let n = self.len();
        progress.phase("reading references", n as u64);
        let mut class_of: Vec<u32> = zeroed(n);
        let mut starts: Vec<u32> = Vec::with_capacity(mapped_capacity::<u32>(n + 1));
        starts.push(0);
        let mut targets: Vec<u32> = Vec::with_capacity(mapped_capacity::<u32>(2 * n));
        let this = &*self;
        let mut anomalies = Anomalies::default();
        for (wave, classes) in class_of.chunks_mut(WAVE).enumerate() {
            let runs: Vec<Result<Run>> = classes
                .par_chunks_mut(CHUNK)
                .enumerate()
                .map(|(chunk, class_of)| {
                    let first = wave * WAVE + chunk * CHUNK;
                    let mut counts = Vec::with_capacity(class_of.len());
                    let mut run = Vec::with_capacity(2 * class_of.len());
                    let mut found = Anomalies::default();
                    for (i, slot) in class_of.iter_mut().enumerate() {
                        let offset = this.offsets.get(first + i);
                        let record = this.record_at(offset)?;
                        let class = this.class_for(&record);
                        *slot = class;
                        this.check_class(&record, class, offset, &mut found);
                        let before = run.len();
                        this.for_each_reference_id(&record, class, true, |_, id| {
                            match this.node(id) {
                                Some(target) => run.push(target),
                                None => found.dangling.note(offset, id),
                            }
                        });
                        counts.push((run.len() - before) as u32);
                    }
                    progress.advance(class_of.len() as u64);
                    Ok((counts, run, found))
                })
                .collect();
            for result in runs {
                let (counts, run, found) = result?;
                anomalies.add(&found);
                let mut at = *starts.last().unwrap_or(&0);
                for count in counts {
                    at = at
                        .checked_add(count)
                        .ok_or_else(|| too_large(self.offsets.get(starts.len() - 1)))?;
                    starts.push(at);
                }
                targets.extend_from_slice(&run);
            }
        }
        targets.shrink_to_fit();
        self.anomalies.add(&anomalies);
        self.class_of = ClassOf::new(class_of, self.classes.len());
        self.edges = Edges { starts, targets };
        Ok(())
    }

    /// The sub-record at `offset` (the offset of its tag byte).
    fn record_at(&self, offset: u64) -> Result<HeapRecord<'a>> {
        let body = HeapDumpBody {
            data: &self.bytes[offset as usize..],
            offset,
        };
        match body.records(self.header.id_size).next()? {
            Some((_, record)) => Ok(record),
            None => Err(hprof_format::Error::new(
                offset,
                hprof_format::ErrorKind::Truncated {
                    what: "heap dump",
                    needed: 1,
                    available: 0,
                },
            )),
        }
    }

    /// Notes, in `found`, an object record (at `offset`, of class index `class`) whose class
    /// is not in the dump, or whose field bytes do not fit its class's fields.
    #[inline]
    fn check_class(&self, record: &HeapRecord<'_>, class: u32, offset: u64, found: &mut Anomalies) {
        let unknown = self.classes.len() as u32 - 1;
        match *record {
            HeapRecord::InstanceDump {
                class_id, values, ..
            } => match self.classes.get(class as usize) {
                _ if class == unknown => found.unknown_class.note(offset, class_id),
                Some(c) if c.values_len as usize != values.len() => {
                    found.bad_layout.note(offset, class_id)
                }
                _ => {}
            },
            HeapRecord::ObjectArrayDump { array_class_id, .. } if class == unknown => {
                found.unknown_class.note(offset, array_class_id)
            }
            _ => {}
        }
    }

    /// The class index of an object's record.
    fn class_for(&self, record: &HeapRecord<'_>) -> u32 {
        let unknown = self.classes.len() as u32 - 1;
        match *record {
            HeapRecord::InstanceDump { class_id, .. } => {
                self.class_index.get(&class_id).copied().unwrap_or(unknown)
            }
            HeapRecord::ObjectArrayDump { array_class_id, .. } => self
                .class_index
                .get(&array_class_id)
                .copied()
                .unwrap_or(unknown),
            HeapRecord::PrimitiveArrayDump { element_type, .. } => {
                let pos = PRIMITIVES
                    .iter()
                    .position(|&t| t == element_type)
                    .unwrap_or(0);
                unknown - 8 + pos as u32
            }
            HeapRecord::ClassDump(_) => self.java_lang_class,
            _ => unknown,
        }
    }

    /// The shallow size of the object of class `class` whose record is at `offset`, read
    /// from the record's header (the record was parsed when the graph was built).
    #[inline]
    fn shallow_at(&self, offset: u64, class: u32) -> u64 {
        let at = offset as usize;
        let id = self.header.id_size.bytes();
        let be32 = |from: usize| {
            self.bytes
                .get(from..from + 4)
                .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        };
        match self.bytes[at] {
            // INSTANCE DUMP
            0x21 => match self.classes.get(class as usize) {
                Some(c) if c.kind != ClassKind::Unknown => u64::from(c.instance_size),
                _ => 16,
            },
            // OBJECT ARRAY DUMP: id, stack trace serial, length, class id, elements.
            0x22 => u64::from(saturate(shallow::object_array_size(u64::from(be32(
                at + 1 + id + 4,
            ))))),
            // PRIMITIVE ARRAY DUMP: id, stack trace serial, length, element type, elements.
            0x23 => {
                let length = u64::from(be32(at + 1 + id + 4));
                let element = self
                    .bytes
                    .get(at + 1 + id + 8)
                    .and_then(|&t| BasicType::from_u8(t))
                    .unwrap_or(BasicType::Byte);
                u64::from(saturate(shallow::primitive_array_size(element, length)))
            }
            _ => 0,
        }
    }

    /// Calls `f(slot, id)` for every non-null reference of an object, whether or not the
    /// dump holds its target (see [`HeapGraph::for_each_reference`]).
    fn for_each_reference_id(
        &self,
        record: &HeapRecord<'_>,
        class: u32,
        with_referent: bool,
        mut f: impl FnMut(u32, u64),
    ) {
        let id_size = self.header.id_size;
        match *record {
            HeapRecord::InstanceDump { values, .. } => {
                let Some(class) = self.classes.get(class as usize) else {
                    return;
                };
                let referent = if with_referent {
                    None
                } else {
                    class.referent_offset
                };
                for (slot, field) in class.fields.iter().enumerate() {
                    if field.ty != BasicType::Object || Some(field.offset) == referent {
                        continue;
                    }
                    let id = read_id(values, field.offset as usize, id_size);
                    if id != 0 {
                        f(slot as u32, id);
                    }
                }
            }
            HeapRecord::ObjectArrayDump { elements, .. } => {
                for (slot, id) in elements.iter().enumerate() {
                    if id != 0 {
                        f(slot as u32, id);
                    }
                }
            }
            HeapRecord::ClassDump(dump) => {
                for (slot, (_, value)) in dump.static_fields().enumerate() {
                    if let Value::Object(id) = value
                        && id != 0
                    {
                        f(slot as u32, id);
                    }
                }
            }
            _ => {}
        }
    }

    /// Calls `f(slot, target)` for every reference of an object to an object in the dump:
    /// `slot` is the index of the instance field in the class's flattened fields, the array
    /// element's index, or the index of the static field. The `referent` of
    /// java.lang.ref.Reference objects is left out unless `with_referent`: like MAT and
    /// VisualVM, the graph holds strong references only.
    fn for_each_reference(
        &self,
        record: &HeapRecord<'_>,
        class: u32,
        with_referent: bool,
        mut f: impl FnMut(u32, u32),
    ) {
        self.for_each_reference_id(record, class, with_referent, |slot, id| {
            if let Some(target) = self.node(id) {
                f(slot, target);
            }
        });
    }

    /// The node of the object `id`.
    #[inline]
    pub fn node(&self, id: u64) -> Option<u32> {
        if !self.index.is_empty() {
            return self.index.find(id);
        }
        // Binary search over the offsets, reading each id from the file.
        let (mut lo, mut hi) = (0usize, self.offsets.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.id_at(self.offsets.get(mid)).cmp(&id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid as u32),
            }
        }
        None
    }

    /// The object id of the sub-record at `offset` (every object's record starts with it).
    #[inline]
    fn id_at(&self, offset: u64) -> u64 {
        read_id(self.bytes, offset as usize + 1, self.header.id_size)
    }

    /// Heap dumps in the file; the graph is the last one's.
    pub fn dumps(&self) -> u32 {
        self.dumps
    }

    /// What the dump holds that does not add up (objects of classes not in it, references to
    /// objects not in it, ...), each with the offset of the first record that shows it.
    pub fn anomalies(&self) -> &Anomalies {
        &self.anomalies
    }

    /// The byte offset of the first record (HEAP DUMP or HEAP DUMP SEGMENT) of the heap dump
    /// the graph was built from (0 when the file has none).
    pub fn dump_offset(&self) -> u64 {
        self.dump_offset
    }

    /// The number of objects (class objects included).
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// True if the dump holds no object.
    pub fn is_empty(&self) -> bool {
        self.offsets.len() == 0
    }

    /// The file's header.
    pub fn header(&self) -> Header {
        self.header
    }

    /// The object id of a node.
    pub fn id(&self, node: u32) -> u64 {
        self.id_at(self.offsets.get(node as usize))
    }

    /// The shallow size of a node.
    pub fn shallow(&self, node: u32) -> u64 {
        self.shallow_at(self.offsets.get(node as usize), self.class_of(node))
    }

    /// The class index of a node.
    pub fn class_of(&self, node: u32) -> u32 {
        self.class_of.get(node as usize)
    }

    /// The class of a node.
    pub fn class(&self, node: u32) -> &Class {
        &self.classes[self.class_of(node) as usize]
    }

    /// Every class, pseudo-classes for primitive arrays and unknown classes last.
    pub fn classes(&self) -> &[Class] {
        &self.classes
    }

    /// True if the node is a class object (a CLASS DUMP).
    pub fn is_class_object(&self, node: u32) -> bool {
        matches!(
            self.record_at(self.offsets.get(node as usize)),
            Ok(HeapRecord::ClassDump(_))
        )
    }

    /// The class a class object describes, if `node` is one.
    pub fn described_class(&self, node: u32) -> Option<&Class> {
        let id = self.id(node);
        self.class_index
            .get(&id)
            .map(|&c| &self.classes[c as usize])
    }

    /// Every reference (a Reference's `referent` included) as a CSR graph.
    pub fn csr(&self) -> Csr<'_> {
        self.edges.csr()
    }

    /// Takes the references out of the graph (for the dominator computation, which frees
    /// them once it has built their reverse); [`HeapGraph::csr`] is empty afterwards.
    pub fn take_references(&mut self) -> Edges {
        std::mem::take(&mut self.edges)
    }

    /// The GC roots whose objects are in the dump.
    pub fn roots(&self) -> &[Root] {
        &self.roots
    }

    /// The text of a STRING record.
    pub fn string(&self, id: u64) -> Option<String> {
        self.symbols.text(id).map(Cow::into_owned)
    }

    /// The target of a Reference's `referent` field, if `node` is a Reference with one.
    pub fn referent(&self, node: u32) -> Option<u32> {
        let offset = self.class(node).referent_offset?;
        match self.record_at(self.offsets.get(node as usize)).ok()? {
            HeapRecord::InstanceDump { values, .. } => {
                let id = read_id(values, offset as usize, self.header.id_size);
                if id == 0 { None } else { self.node(id) }
            }
            _ => None,
        }
    }

    /// How `from` refers to `to`: `field name`, `[index]` or `static name`.
    pub fn reference_name(&self, from: u32, to: u32) -> String {
        let Ok(record) = self.record_at(self.offsets.get(from as usize)) else {
            return "?".to_string();
        };
        let class = self.class_of(from);
        let mut found = None;
        self.for_each_reference(&record, class, true, |slot, target| {
            if target == to && found.is_none() {
                found = Some(slot);
            }
        });
        match found {
            Some(slot) => self.slot_name(&record, class, slot),
            None => "?".to_string(),
        }
    }

    /// The name of reference slot `slot` of the object whose record is `record` (of class
    /// `class`): the field's name, `[slot]` or `static name`.
    fn slot_name(&self, record: &HeapRecord<'_>, class: u32, slot: u32) -> String {
        match record {
            HeapRecord::InstanceDump { .. } => self.classes[class as usize]
                .fields
                .get(slot as usize)
                .and_then(|field| self.string(field.name_id))
                .unwrap_or_else(|| "?".to_string()),
            HeapRecord::ObjectArrayDump { .. } => format!("[{slot}]"),
            HeapRecord::ClassDump(dump) => {
                let name = dump
                    .static_fields()
                    .nth(slot as usize)
                    .and_then(|(name, _)| self.string(name))
                    .unwrap_or_else(|| "?".to_string());
                format!("static {name}")
            }
            _ => "?".to_string(),
        }
    }

    /// Calls `f(slot, id)` for every non-null reference of `node`, the `referent` of
    /// references included, whether or not the dump holds its target (no id is looked up).
    pub(crate) fn reference_ids(&self, node: u32, f: impl FnMut(u32, u64)) {
        if let Ok(record) = self.record_at(self.offsets.get(node as usize)) {
            self.for_each_reference_id(&record, self.class_of(node), true, f);
        }
    }

    /// The name of reference slot `slot` of `node` (see [`HeapGraph::reference_name`]).
    pub(crate) fn reference_slot_name(&self, node: u32, slot: u32) -> String {
        match self.record_at(self.offsets.get(node as usize)) {
            Ok(record) => self.slot_name(&record, self.class_of(node), slot),
            Err(_) => "?".to_string(),
        }
    }

    /// True if `node` is an array of references (its record an OBJECT ARRAY DUMP).
    pub(crate) fn is_object_array(&self, node: u32) -> bool {
        self.bytes.get(self.offsets.get(node as usize) as usize) == Some(&0x22)
    }

    /// The class index of java.lang.Class: the class of every class object.
    pub(crate) fn class_class(&self) -> u32 {
        self.java_lang_class
    }

    /// The value of the instance field `name` of `node`.
    pub fn field(&self, node: u32, name: &str) -> Option<Value> {
        let class = self.class(node);
        let HeapRecord::InstanceDump { values, .. } =
            self.record_at(self.offsets.get(node as usize)).ok()?
        else {
            return None;
        };
        let field = class
            .fields
            .iter()
            .find(|f| self.symbols.string(f.name_id) == Some(name.as_bytes()))?;
        let at = field.offset as usize;
        let b = values.get(at..at + field.ty.size(self.header.id_size))?;
        Some(match field.ty {
            BasicType::Object => Value::Object(read_id(values, at, self.header.id_size)),
            BasicType::Boolean => Value::Boolean(b[0]),
            BasicType::Byte => Value::Byte(b[0] as i8),
            BasicType::Char => Value::Char(u16::from_be_bytes([b[0], b[1]])),
            BasicType::Short => Value::Short(i16::from_be_bytes([b[0], b[1]])),
            BasicType::Int => Value::Int(i32::from_be_bytes([b[0], b[1], b[2], b[3]])),
            BasicType::Float => Value::Float(f32::from_be_bytes([b[0], b[1], b[2], b[3]])),
            BasicType::Long => Value::Long(i64::from_be_bytes(b.try_into().ok()?)),
            BasicType::Double => Value::Double(f64::from_be_bytes(b.try_into().ok()?)),
        })
    }

    /// The text of a java.lang.String object (Latin-1 or UTF-16 `byte[]`, or `char[]`).
    pub fn string_value(&self, node: u32) -> Option<String> {
        if self.class(node).name != "java.lang.String" {
            return None;
        }
        let Value::Object(value_id) = self.field(node, "value")? else {
            return None;
        };
        let coder = match self.field(node, "coder") {
            Some(Value::Byte(c)) => c,
            _ => 0,
        };
        let array = self.node(value_id)?;
        let HeapRecord::PrimitiveArrayDump {
            element_type, data, ..
        } = self.record_at(self.offsets.get(array as usize)).ok()?
        else {
            return None;
        };
        Some(match (element_type, coder) {
            (BasicType::Char, _) => String::from_utf16_lossy(
                &data
                    .chunks_exact(2)
                    .map(|c| u16::from_be_bytes([c[0], c[1]]))
                    .collect::<Vec<u16>>(),
            ),
            // A UTF-16 String's byte[] holds chars in the JVM's native order (little-endian
            // on the platforms HotSpot dumps from).
            (BasicType::Byte, 1) => String::from_utf16_lossy(
                &data
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .collect::<Vec<u16>>(),
            ),
            (BasicType::Byte, _) => data.iter().map(|&b| char::from(b)).collect(),
            _ => return None,
        })
    }

    /// The name of the thread with serial number `serial` (its Thread object's `name`).
    pub fn thread_name(&self, serial: u32) -> Option<String> {
        let &(object, _) = self.threads.get(&serial)?;
        let node = self.node(object)?;
        let Value::Object(name) = self.field(node, "name")? else {
            return None;
        };
        self.string_value(self.node(name)?)
    }

    /// The frame at `depth` of the stack trace of the thread with serial number `serial`.
    pub fn thread_frame(&self, serial: u32, depth: u32) -> Option<FrameInfo> {
        let &(_, trace) = self.threads.get(&serial)?;
        let frame_id = self.symbols.trace(trace)?.frames.get(depth as usize)?;
        self.frame(frame_id)
    }

    /// The frames of the STACK TRACE with serial number `serial`, innermost first.
    pub fn trace_frames(&self, serial: u32) -> Option<Vec<FrameInfo>> {
        let frames = self.symbols.trace(serial)?.frames;
        Some(frames.iter().filter_map(|f| self.frame(f)).collect())
    }

    /// The whole file the graph was built from.
    pub fn file(&self) -> &'a [u8] {
        self.bytes
    }

    /// The index in [`HeapGraph::classes`] of the class whose class object is `id`.
    pub fn class_by_id(&self, id: u64) -> Option<u32> {
        self.class_index.get(&id).copied()
    }

    /// The sub-record of a node (its INSTANCE, OBJECT ARRAY, PRIMITIVE ARRAY or CLASS DUMP).
    pub fn record(&self, node: u32) -> Option<HeapRecord<'a>> {
        self.record_at(self.offsets.get(node as usize)).ok()
    }

    /// A STACK FRAME, resolved to names.
    fn frame(&self, frame_id: u64) -> Option<FrameInfo> {
        let frame = self.symbols.frame(frame_id)?;
        let (method, source, line) = (frame.method_name_id, frame.source_file_id, frame.line);
        let class = self
            .symbols
            .class_name_by_serial(frame.class_serial)
            .unwrap_or_default();
        let method = format!(
            "{class}.{}",
            self.string(method).unwrap_or_else(|| "?".to_string())
        );
        let source = self.string(source).unwrap_or_default();
        let location = match line {
            l if l > 0 => format!("{source}:{l}"),
            -2 => "compiled method".to_string(),
            -3 => "native method".to_string(),
            _ if source.is_empty() => "unknown location".to_string(),
            _ => source,
        };
        Some(FrameInfo { method, location })
    }
}

/// The error for dumps beyond what the graph's compact arrays hold (files of 1 TiB, 2^32
/// objects or references).
fn too_large(offset: u64) -> hprof_format::Error {
    hprof_format::Error::new(
        offset,
        hprof_format::ErrorKind::Io(
            std::io::ErrorKind::FileTooLarge,
            std::io::ErrorKind::FileTooLarge.to_string(),
        ),
    )
}

fn saturate(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[inline]
fn read_id(values: &[u8], at: usize, id_size: IdSize) -> u64 {
    let n = id_size.bytes();
    values.get(at..at + n).map_or(0, |b| {
        b.iter().fold(0u64, |acc, &x| (acc << 8) | u64::from(x))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Groups of bodies, each body a sorted list of ids (offsets are the ids doubled).
    fn found(groups: &[&[&[u64]]]) -> Vec<Found> {
        groups
            .iter()
            .map(|bodies| {
                let mut f = Found::default();
                for body in bodies.iter() {
                    let start = f.objects.len();
                    f.objects.extend(body.iter().map(|&id| (id, 2 * id)));
                    f.runs.push((start, f.objects.len()));
                }
                f
            })
            .collect()
    }

    fn sorted_ids(groups: &[&[&[u64]]]) -> Vec<u64> {
        let mut ids: Vec<u64> = groups
            .iter()
            .flat_map(|g| g.iter().flat_map(|b| b.iter().copied()))
            .collect();
        ids.sort_unstable();
        ids
    }

    #[test]
    fn bodies_are_joined_in_id_order() {
        let cases: [&[&[&[u64]]]; 4] = [
            // jcmd: class objects spread over the heap first, then the heap in order.
            &[
                &[&[5, 95, 399], &[10, 20, 30]],
                &[&[40, 50], &[60, 90, 100]],
                &[&[200, 300, 400], &[500, 501, 502, 503]],
            ],
            // Disjoint bodies out of order.
            &[&[&[300, 310], &[10, 20]], &[&[100, 200]]],
            // In order already, one body, nothing.
            &[&[&[1, 2], &[3, 4]], &[&[5]]],
            &[],
        ];
        for groups in cases {
            let objects = merge_runs(found(groups));
            let ids: Vec<u64> = objects.iter().map(|&(id, _)| id).collect();
            assert_eq!(ids, sorted_ids(groups), "{groups:?}");
            assert!(objects.iter().all(|&(id, offset)| offset == 2 * id));
        }
        // Interleaved bodies are returned whole, for the caller to sort.
        let interleaved: &[&[&[u64]]] = &[&[&[1, 5, 9], &[2, 6, 10]], &[&[3, 7, 11], &[4, 8, 12]]];
        let mut ids: Vec<u64> = merge_runs(found(interleaved))
            .iter()
            .map(|&(id, _)| id)
            .collect();
        ids.sort_unstable();
        assert_eq!(ids, sorted_ids(interleaved));
    }
}
