//! Merges a heap dump the JVM wrote (HotSpot's own dumper, as `jcmd GC.heap_dump` uses) into
//! the agent's output, record by record, in bounded memory.
//!
//! Object ids stay the JVM's (addresses at the dump). What the agent numbers itself is
//! renumbered into its own spaces, through tables keyed by class, thread or name, never by
//! object:
//! - class serials: a class keeps the serial the agent gave it (matched by name), so LOAD
//!   CLASS, STACK FRAME and SITES agree; LOAD CLASS is written again for each dump, with the
//!   class's address in that dump;
//! - thread serials: each thread object's `java.lang.Thread.tid` (read from its INSTANCE DUMP)
//!   gives the agent's serial of that thread (its START THREAD); a thread the agent never saw
//!   start (a virtual thread) gets a new serial and a START THREAD record;
//! - stack traces: the JVM's per-thread traces get new serials; the JVM's empty trace (the
//!   allocation site of every object) becomes the agent's empty trace 300000;
//! - STRING and STACK FRAME ids get new ids out of the agent's own range (the JVM's STRING ids
//!   are its symbols' addresses, which a later dump may give to another name).
//!
//! Roots that name a thread are held back (a few per thread) until the thread objects have
//! been read, then written at the end of the heap dump, with the threads' stacks.
//!
//! The text format's merge (every sub-record parsed and written again) is here; the binary
//! format's (segments copied whole, rewritten in place) is `raw.rs`.

mod raw;

use std::io::{self, Read};
use std::sync::Arc;

use hprof_format::{BasicType, Event, HeapRecord, IdSize, Record, StreamReader, java_class_name};
use rustc_hash::FxHashMap as HashMap;

use crate::engine::object_sites::{Pins, groups_of};
use crate::output::{HeapFrame, HeapName, ProfileWriter};
use crate::threads::ThreadStart;
use crate::trace_store::{ClassInfo, EMPTY_TRACE_SERIAL};
use raw::merge_raw;

/// How the merge numbers what the agent numbers.
pub trait Numbering {
    /// The serial of the `nth` (from 0) class named `name` (dotted) in this dump.
    fn class_serial(&mut self, name: &str, nth: usize) -> u32;
    /// The serial of the thread whose `tid` this is (`None`: its object was not found), and
    /// for a thread the output has not named yet, its name (its START THREAD is written;
    /// empty if unknown).
    fn thread_serial(&mut self, tid: Option<i64>) -> (u32, Option<String>);
    /// A new trace serial.
    fn trace_serial(&mut self) -> u32;
    /// A new STRING or STACK FRAME id.
    fn foreign_id(&mut self) -> u64;
    /// The objects pinned for this dump's join to allocation sites, whose JNI global roots
    /// the merge takes out (see [`crate::engine::object_sites`]).
    fn pins(&self) -> Option<&Pins> {
        None
    }
}

/// What a merge wrote.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct MergeStats {
    /// Instances and arrays.
    pub objects: u64,
    /// Threads with a ROOT THREAD OBJECT.
    pub threads: usize,
    /// Of those, threads the agent had not seen start.
    pub new_threads: usize,
}

/// Why a merge stopped.
#[derive(Debug)]
pub enum MergeError {
    /// The JVM's file could not be read or is not what HotSpot writes.
    Input(String),
    /// The output could not be written.
    Output(io::Error),
}

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MergeError::Input(e) => write!(f, "the JVM's heap dump can't be read: {e}"),
            MergeError::Output(e) => write!(f, "{e}"),
        }
    }
}

impl From<io::Error> for MergeError {
    fn from(e: io::Error) -> MergeError {
        MergeError::Output(e)
    }
}

impl From<hprof_format::Error> for MergeError {
    fn from(e: hprof_format::Error) -> MergeError {
        MergeError::Input(e.to_string())
    }
}

/// A root that names a thread, held back until thread serials are known.
#[derive(Debug, Clone, Copy)]
enum Held {
    Thread { id: u64, thread: u32, trace: u32 },
    JavaFrame { id: u64, thread: u32, frame: u32 },
    JniLocal { id: u64, thread: u32, frame: u32 },
    NativeStack { id: u64, thread: u32 },
    ThreadBlock { id: u64, thread: u32 },
}

/// A class's own instance fields: (the JVM's name id, type).
type Fields = Vec<(u64, BasicType)>;

struct Merge<'a> {
    w: &'a mut dyn ProfileWriter,
    ids: &'a mut dyn Numbering,
    /// The JVM's STRING id → (the output's id, text).
    strings: HashMap<u64, (u64, Box<str>)>,
    /// Class address → class.
    classes: HashMap<u64, Arc<ClassInfo>>,
    /// The JVM's class serial → class.
    by_serial: HashMap<u32, Arc<ClassInfo>>,
    name_counts: HashMap<String, usize>,
    /// The JVM's frame id → frame.
    frames: HashMap<u64, HeapFrame>,
    /// The JVM's traces: (serial, thread serial, frame ids).
    traces: Vec<(u32, u32, Vec<u64>)>,
    /// Class address → (superclass address, own instance fields).
    layouts: HashMap<u64, (u64, Fields)>,
    /// `java.lang.Thread`'s address.
    thread_class: Option<u64>,
    /// Thread class address → offset of `tid` in its instances' values (`None`: to be found
    /// again, a class was dumped since).
    tid_offsets: Option<HashMap<u64, usize>>,
    /// Thread object address → (tid, class address).
    thread_objects: HashMap<u64, (i64, u64)>,
    held: Vec<Held>,
    /// Pinned objects found in the dump: (object id, pin group).
    joined: Vec<(u64, u32)>,
    begun: bool,
    stats: MergeStats,
}

fn name_of(strings: &HashMap<u64, (u64, Box<str>)>, id: u64) -> HeapName<'_> {
    match strings.get(&id) {
        Some((our, text)) => HeapName { id: *our, text },
        None => HeapName { id: 0, text: "" },
    }
}

impl Merge<'_> {
    fn class(&mut self, address: u64) -> Arc<ClassInfo> {
        if let Some(info) = self.classes.get(&address) {
            return info.clone();
        }
        // A class the JVM dumped without its LOAD CLASS: named by its address.
        let name = format!("<unknown class 0x{address:x}>");
        let info = Arc::new(ClassInfo {
            serial: self.ids.class_serial(&name, 0),
            object_id: address,
            name,
            source: None,
        });
        self.classes.insert(address, info.clone());
        info
    }

    fn record(&mut self, record: Record<'_>) -> Result<(), MergeError> {
        match record {
            Record::Utf8 { id, text } => {
                let our = self.ids.foreign_id();
                self.w.heap_utf8(our, text)?;
                let text: Box<str> = String::from_utf8_lossy(text).into();
                self.strings.insert(id, (our, text));
            }
            Record::LoadClass {
                class_serial,
                class_id,
                name_id,
                ..
            } => {
                let internal = name_of(&self.strings, name_id).text;
                let dotted = java_class_name(internal);
                // LOAD CLASS names classes in Java form, as the agent's own records do.
                let name_id = if dotted == internal {
                    name_of(&self.strings, name_id).id
                } else {
                    let id = self.ids.foreign_id();
                    self.w.heap_utf8(id, dotted.as_bytes())?;
                    id
                };
                let nth = self.name_counts.entry(dotted.clone()).or_insert(0);
                let serial = self.ids.class_serial(&dotted, *nth);
                *nth += 1;
                if dotted == "java.lang.Thread" {
                    self.thread_class = Some(class_id);
                }
                let info = Arc::new(ClassInfo {
                    serial,
                    object_id: class_id,
                    name: dotted,
                    source: None,
                });
                self.w.heap_load_class(&info, name_id)?;
                self.classes.insert(class_id, info.clone());
                self.by_serial.insert(class_serial, info);
            }
            Record::StackFrame {
                frame_id,
                method_name_id,
                signature_id,
                source_file_id,
                class_serial,
                line,
            } => {
                let Some(class) = self.by_serial.get(&class_serial).cloned() else {
                    return Ok(());
                };
                let text = |id: u64| {
                    let n = name_of(&self.strings, id);
                    (n.id, n.text.to_string())
                };
                let frame = HeapFrame {
                    id: self.ids.foreign_id(),
                    class,
                    method: text(method_name_id),
                    signature: text(signature_id),
                    source: text(source_file_id),
                    line,
                };
                self.frames.insert(frame_id, frame);
            }
            Record::StackTrace {
                serial,
                thread_serial,
                frames,
            } if thread_serial != 0 => {
                self.traces
                    .push((serial, thread_serial, frames.iter().collect()));
            }
            _ => {}
        }
        Ok(())
    }

    /// The offset of `java.lang.Thread.tid` in the values of an instance of `class`, if the
    /// class is `java.lang.Thread` or a subclass.
    fn tid_offset(&mut self, class: u64) -> Option<usize> {
        if self.tid_offsets.is_none() {
            let offsets = self.thread_classes();
            self.tid_offsets = Some(offsets);
        }
        self.tid_offsets.as_ref()?.get(&class).copied()
    }

    /// Every class dumped so far that is `java.lang.Thread` or a subclass, with the offset of
    /// `tid` in its instances' values.
    fn thread_classes(&self) -> HashMap<u64, usize> {
        let mut out = HashMap::default();
        let Some(thread) = self.thread_class else {
            return out;
        };
        for &class in self.layouts.keys() {
            let mut offset = 0;
            let mut next = class;
            for _ in 0..4096 {
                let Some((super_id, fields)) = self.layouts.get(&next) else {
                    break;
                };
                if next == thread {
                    let mut at = offset;
                    for (name, ty) in fields {
                        if name_of(&self.strings, *name).text == "tid" && *ty == BasicType::Long {
                            out.insert(class, at);
                            break;
                        }
                        at += ty.size(IdSize::Eight);
                    }
                    break;
                }
                offset += fields
                    .iter()
                    .map(|(_, ty)| ty.size(IdSize::Eight))
                    .sum::<usize>();
                if *super_id == 0 {
                    break;
                }
                next = *super_id;
            }
        }
        out
    }

    /// Learns a class's layout from its CLASS DUMP.
    fn learn_class(&mut self, class_id: u64, super_id: u64, fields: Fields) {
        self.layouts.insert(class_id, (super_id, fields));
        // Thread classes are found again at the next instance.
        self.tid_offsets = None;
    }

    /// Notes a thread object's tid, if `class` is a thread class.
    fn note_instance(&mut self, object_id: u64, class_id: u64, values: &[u8]) {
        if let Some(at) = self.tid_offset(class_id)
            && let Some(bytes) = values.get(at..at + 8)
        {
            let mut be = [0u8; 8];
            be.copy_from_slice(bytes);
            self.thread_objects
                .insert(object_id, (i64::from_be_bytes(be), class_id));
        }
    }

    /// A root that names a thread, as held back; `None` for every other record.
    fn held(record: &HeapRecord<'_>) -> Option<Held> {
        Some(match *record {
            HeapRecord::RootThreadObject {
                thread_object_id,
                thread_serial,
                stack_trace_serial,
            } => Held::Thread {
                id: thread_object_id,
                thread: thread_serial,
                trace: stack_trace_serial,
            },
            HeapRecord::RootJavaFrame {
                object_id,
                thread_serial,
                frame_number,
            } => Held::JavaFrame {
                id: object_id,
                thread: thread_serial,
                frame: frame_number,
            },
            HeapRecord::RootJniLocal {
                object_id,
                thread_serial,
                frame_number,
            } => Held::JniLocal {
                id: object_id,
                thread: thread_serial,
                frame: frame_number,
            },
            HeapRecord::RootNativeStack {
                object_id,
                thread_serial,
            } => Held::NativeStack {
                id: object_id,
                thread: thread_serial,
            },
            HeapRecord::RootThreadBlock {
                object_id,
                thread_serial,
            } => Held::ThreadBlock {
                id: object_id,
                thread: thread_serial,
            },
            _ => return None,
        })
    }

    /// Writes a CLASS DUMP, its names renumbered (their STRING records precede the dump).
    fn class_dump(&mut self, c: &hprof_format::ClassDump<'_>) -> Result<(), MergeError> {
        let fields: Fields = c.instance_fields().collect();
        let info = self.class(c.class_id);
        let named: Vec<(String, BasicType)> = fields
            .iter()
            .map(|(n, t)| (name_of(&self.strings, *n).text.to_string(), *t))
            .collect();
        self.w.heap_class_layout(&info, c.super_class_id, &named)?;
        let statics: Vec<(HeapName<'_>, hprof_format::Value)> = c
            .static_fields()
            .map(|(n, v)| (name_of(&self.strings, n), v))
            .collect();
        let instance: Vec<(HeapName<'_>, BasicType)> = fields
            .iter()
            .map(|(n, t)| (name_of(&self.strings, *n), *t))
            .collect();
        let constant_pool: Vec<(u16, hprof_format::Value)> = c.constant_pool().collect();
        self.w.heap_class_dump(
            c.class_id,
            c.super_class_id,
            c.class_loader_id,
            c.signers_id,
            c.protection_domain_id,
            c.instance_size,
            &constant_pool,
            &statics,
            &instance,
        )?;
        self.learn_class(c.class_id, c.super_class_id, fields);
        Ok(())
    }

    fn heap_record(&mut self, record: HeapRecord<'_>) -> Result<(), MergeError> {
        if let Some(held) = Merge::held(&record) {
            self.held.push(held);
            return Ok(());
        }
        if let HeapRecord::RootJniGlobal {
            object_id,
            jni_global_ref_id,
        } = record
            && let Some(group) = self.ids.pins().and_then(|p| p.group(jni_global_ref_id))
        {
            self.joined.push((object_id, group));
            return Ok(());
        }
        let rewritten = match record {
            HeapRecord::ClassDump(c) => return self.class_dump(&c),
            HeapRecord::InstanceDump {
                object_id,
                class_id,
                values,
                ..
            } => {
                self.stats.objects += 1;
                self.note_instance(object_id, class_id, values);
                HeapRecord::InstanceDump {
                    object_id,
                    stack_trace_serial: EMPTY_TRACE_SERIAL,
                    class_id,
                    values,
                }
            }
            HeapRecord::ObjectArrayDump {
                array_id,
                array_class_id,
                elements,
                ..
            } => {
                self.stats.objects += 1;
                HeapRecord::ObjectArrayDump {
                    array_id,
                    stack_trace_serial: EMPTY_TRACE_SERIAL,
                    array_class_id,
                    elements,
                }
            }
            HeapRecord::PrimitiveArrayDump {
                array_id,
                element_type,
                length,
                data,
                ..
            } => {
                self.stats.objects += 1;
                HeapRecord::PrimitiveArrayDump {
                    array_id,
                    stack_trace_serial: EMPTY_TRACE_SERIAL,
                    element_type,
                    length,
                    data,
                }
            }
            other => other,
        };
        self.w.heap_record(&rewritten)?;
        Ok(())
    }

    /// Opens the output's heap dump at the JVM's first segment.
    fn begin(&mut self) -> Result<(), MergeError> {
        if !self.begun {
            self.w.heap_dump_begin()?;
            self.begun = true;
        }
        Ok(())
    }

    /// Writes what was held back: new threads, the roots that name threads, the threads'
    /// stacks; then ends the heap dump.
    fn finish(&mut self) -> Result<(), MergeError> {
        // The JVM's thread serial → (the output's thread serial, the output's trace serial).
        let mut threads: HashMap<u32, (u32, u32)> = HashMap::default();
        let held = std::mem::take(&mut self.held);
        for h in &held {
            let Held::Thread { id, thread, trace } = *h else {
                continue;
            };
            let object = self.thread_objects.get(&id).copied();
            let (serial, new) = self.ids.thread_serial(object.map(|(tid, _)| tid));
            self.stats.threads += 1;
            if let Some(name) = new {
                self.stats.new_threads += 1;
                let class = object
                    .and_then(|(_, class)| self.classes.get(&class))
                    .map_or("java.lang.Thread", |c| c.name.as_str());
                self.w.thread_start(&ThreadStart {
                    serial,
                    object_id: id,
                    name: if name.is_empty() {
                        format!("<{class}>")
                    } else {
                        name
                    },
                    group: String::new(),
                    parent_group: String::new(),
                })?;
            }
            let trace_serial = self.ids.trace_serial();
            threads.insert(thread, (serial, trace_serial));
            // Traces are found by their JVM serial below.
            self.traces
                .iter_mut()
                .filter(|t| t.0 == trace && t.1 == thread)
                .for_each(|t| t.0 = trace_serial | TRACE_MAPPED);
        }
        let serial_of = |t: u32| threads.get(&t).map_or(0, |s| s.0);
        for h in held {
            let record = match h {
                Held::Thread { id, thread, .. } => {
                    let (serial, trace) = threads.get(&thread).copied().unwrap_or((0, 0));
                    HeapRecord::RootThreadObject {
                        thread_object_id: id,
                        thread_serial: serial,
                        stack_trace_serial: if trace == 0 {
                            EMPTY_TRACE_SERIAL
                        } else {
                            trace
                        },
                    }
                }
                Held::JavaFrame { id, thread, frame } => HeapRecord::RootJavaFrame {
                    object_id: id,
                    thread_serial: serial_of(thread),
                    frame_number: frame,
                },
                Held::JniLocal { id, thread, frame } => HeapRecord::RootJniLocal {
                    object_id: id,
                    thread_serial: serial_of(thread),
                    frame_number: frame,
                },
                Held::NativeStack { id, thread } => HeapRecord::RootNativeStack {
                    object_id: id,
                    thread_serial: serial_of(thread),
                },
                Held::ThreadBlock { id, thread } => HeapRecord::RootThreadBlock {
                    object_id: id,
                    thread_serial: serial_of(thread),
                },
            };
            self.w.heap_record(&record)?;
        }
        for (serial, thread, frame_ids) in std::mem::take(&mut self.traces) {
            if serial & TRACE_MAPPED == 0 {
                continue;
            }
            let frames: Vec<HeapFrame> = frame_ids
                .iter()
                .filter_map(|f| self.frames.get(f).cloned())
                .collect();
            self.w
                .heap_thread_trace(serial & !TRACE_MAPPED, serial_of(thread), &frames)?;
        }
        self.w.heap_dump_end()?;
        if let Some(pins) = self.ids.pins() {
            let groups = groups_of(&mut self.joined);
            let groups: Vec<(&crate::engine::object_sites::Group, &[u64])> = groups
                .iter()
                .filter_map(|(g, ids)| Some((pins.groups.get(*g as usize)?, &ids[..])))
                .collect();
            self.w
                .object_sites((pins.flags, pins.interval, pins.stride), &groups)?;
        }
        Ok(())
    }
}

/// Marks a trace whose serial was replaced by the output's (serials stay far below it).
const TRACE_MAPPED: u32 = 1 << 31;

/// Merges the heap dump `src` (a whole HPROF file as HotSpot writes it) into `w` as one heap
/// dump. On an input error after the heap dump has begun, the dump is ended so the output
/// stays well-formed, and the error is returned.
pub fn merge(
    src: impl Read,
    w: &mut dyn ProfileWriter,
    ids: &mut dyn Numbering,
) -> Result<MergeStats, MergeError> {
    let raw = w.takes_raw_segments();
    let mut m = Merge {
        w,
        ids,
        strings: HashMap::default(),
        classes: HashMap::default(),
        by_serial: HashMap::default(),
        name_counts: HashMap::default(),
        frames: HashMap::default(),
        traces: Vec::new(),
        layouts: HashMap::default(),
        thread_class: None,
        tid_offsets: None,
        thread_objects: HashMap::default(),
        held: Vec::new(),
        joined: Vec::new(),
        begun: false,
        stats: MergeStats::default(),
    };
    let result = if raw {
        merge_raw(src, &mut m)
    } else {
        merge_parsed(src, &mut m)
    };
    match result {
        Ok(()) => {
            if !m.begun {
                m.w.heap_dump_begin()?;
                m.begun = true;
            }
            m.finish()?;
            Ok(m.stats)
        }
        Err(MergeError::Input(e)) => {
            if m.begun {
                m.w.heap_dump_end()?;
            }
            Err(MergeError::Input(e))
        }
        Err(e) => Err(e),
    }
}

/// Every sub-record parsed and written again (the text format's way).
fn merge_parsed(src: impl Read, m: &mut Merge<'_>) -> Result<(), MergeError> {
    let mut reader = StreamReader::new(src)?;
    if reader.header().id_size != IdSize::Eight {
        return Err(MergeError::Input(
            "identifiers are not 8 bytes (a 32-bit JVM)".into(),
        ));
    }
    while let Some(event) = reader.next_event()? {
        match event {
            Event::Record(_, record) => m.record(record)?,
            Event::HeapDumpStart(_) => m.begin()?,
            Event::HeapRecord(_, record) => m.heap_record(record)?,
            Event::HeapDumpFinish => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hprof_format::{Header, Records, Value, Version, Writer};

    /// A dump as HotSpot writes one: names, classes (Thread with its `tid`, a subclass), a
    /// thread's stack, and in the heap a class dump per class, the thread object, its roots.
    fn hotspot_dump(split: bool) -> Vec<u8> {
        let header = Header {
            version: Version::V1_0_2,
            id_size: IdSize::Eight,
            timestamp_ms: 0,
        };
        let mut w = Writer::new(Vec::new(), header).unwrap();
        for (id, text) in [
            (0x7000, "java/lang/Thread"),
            (0x7001, "Worker"),
            (0x7002, "tid"),
            (0x7003, "name"),
            (0x7004, "run"),
            (0x7005, "()V"),
            (0x7006, "Worker.java"),
            (0x7007, "count"),
        ] {
            w.utf8(0, id, text.as_bytes()).unwrap();
        }
        w.load_class(0, 1, 0x1000, 1, 0x7000).unwrap();
        w.load_class(0, 2, 0x2000, 1, 0x7001).unwrap();
        w.stack_trace(0, 1, 0, &[]).unwrap();
        w.stack_frame(0, 1, 0x7004, 0x7005, 0x7006, 2, 12).unwrap();
        w.stack_trace(0, 2, 1, &[1]).unwrap();
        w.begin_heap_dump(0).unwrap();
        w.class_dump(
            0x1000,
            1,
            0,
            0,
            0,
            0,
            16,
            &[],
            &[],
            &[(0x7003, BasicType::Object), (0x7002, BasicType::Long)],
        )
        .unwrap();
        w.class_dump(
            0x2000,
            1,
            0x1000,
            0,
            0,
            0,
            4,
            &[],
            &[(0x7007, Value::Int(3))],
            &[(0x7007, BasicType::Int)],
        )
        .unwrap();
        if split {
            w.end_heap_dump().unwrap();
            w.begin_heap_dump(0).unwrap();
        }
        w.root(&HeapRecord::RootThreadObject {
            thread_object_id: 0x3000,
            thread_serial: 1,
            stack_trace_serial: 2,
        })
        .unwrap();
        w.root(&HeapRecord::RootJavaFrame {
            object_id: 0x4000,
            thread_serial: 1,
            frame_number: 0,
        })
        .unwrap();
        // Worker's own int, then Thread's name and tid.
        let mut values = 7i32.to_be_bytes().to_vec();
        values.extend(0x4000u64.to_be_bytes());
        values.extend(42i64.to_be_bytes());
        w.instance_dump(0x3000, 1, 0x2000, &values).unwrap();
        w.primitive_array(0x4000, 1, BasicType::Byte, 1, &[9])
            .unwrap();
        w.end_heap_dump().unwrap();
        w.finish().unwrap()
    }

    struct Fixed;

    impl Numbering for Fixed {
        fn class_serial(&mut self, name: &str, _nth: usize) -> u32 {
            if name == "java.lang.Thread" { 5 } else { 6 }
        }
        fn thread_serial(&mut self, tid: Option<i64>) -> (u32, Option<String>) {
            assert_eq!(tid, Some(42));
            (200_005, None)
        }
        fn trace_serial(&mut self) -> u32 {
            1_400_000
        }
        fn foreign_id(&mut self) -> u64 {
            static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1 << 40);
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        }
    }

    fn merged(split: bool) -> Vec<u8> {
        let crate::options::Parsed::Run(options) =
            crate::options::Options::parse("heap=dump,format=b", None).unwrap()
        else {
            panic!("options");
        };
        let mut out = Vec::new();
        {
            let mut w = crate::output::binary::BinaryWriter::new(&mut out, &options).unwrap();
            let stats = merge(&hotspot_dump(split)[..], &mut w, &mut Fixed).unwrap();
            assert_eq!(
                stats,
                MergeStats {
                    objects: 2,
                    threads: 1,
                    new_threads: 0
                }
            );
            ProfileWriter::flush(&mut w).unwrap();
        }
        out
    }

    #[test]
    fn threads_classes_traces_and_names_get_the_agents_numbers() {
        for split in [false, true] {
            let out = merged(split);
            let (_, mut records) = Records::new(&out).unwrap();
            let mut strings = std::collections::HashMap::new();
            let (mut roots, mut classes, mut serials) = (Vec::new(), Vec::new(), Vec::new());
            let mut traces = Vec::new();
            while let Some((_, record)) = records.next().unwrap() {
                match record {
                    Record::Utf8 { id, text } => {
                        assert!(id >= 1 << 40);
                        strings.insert(id, String::from_utf8_lossy(text).into_owned());
                    }
                    Record::LoadClass {
                        class_serial,
                        class_id,
                        name_id,
                        ..
                    } => classes.push((class_serial, class_id, strings[&name_id].clone())),
                    Record::StackTrace {
                        serial,
                        thread_serial,
                        frames,
                    } => traces.push((serial, thread_serial, frames.len())),
                    Record::HeapDumpSegment(body) => {
                        let mut heap = body.records(IdSize::Eight);
                        while let Some((_, sub)) = heap.next().unwrap() {
                            match sub {
                                HeapRecord::ClassDump(c) => {
                                    for (name, _) in c.instance_fields() {
                                        assert!(strings.contains_key(&name), "{name:x}");
                                    }
                                    serials.push(c.stack_trace_serial);
                                }
                                HeapRecord::InstanceDump {
                                    stack_trace_serial, ..
                                }
                                | HeapRecord::PrimitiveArrayDump {
                                    stack_trace_serial, ..
                                } => serials.push(stack_trace_serial),
                                root => roots.push(root.to_owned_root()),
                            }
                        }
                    }
                    _ => {}
                }
            }
            assert_eq!(
                classes,
                vec![
                    (5, 0x1000, "java.lang.Thread".to_string()),
                    (6, 0x2000, "Worker".to_string())
                ]
            );
            assert!(
                serials.iter().all(|s| *s == EMPTY_TRACE_SERIAL),
                "{serials:?}"
            );
            assert_eq!(
                roots,
                vec![
                    (0x08, 0x3000, 200_005, 1_400_000),
                    (0x03, 0x4000, 200_005, 0)
                ]
            );
            // The empty trace the writer starts with, and the thread's stack of one frame.
            assert!(traces.contains(&(1_400_000, 200_005, 1)), "{traces:?}");
        }
    }

    trait OwnedRoot {
        fn to_owned_root(&self) -> (u8, u64, u32, u32);
    }

    impl OwnedRoot for HeapRecord<'_> {
        fn to_owned_root(&self) -> (u8, u64, u32, u32) {
            match *self {
                HeapRecord::RootThreadObject {
                    thread_object_id,
                    thread_serial,
                    stack_trace_serial,
                } => (0x08, thread_object_id, thread_serial, stack_trace_serial),
                HeapRecord::RootJavaFrame {
                    object_id,
                    thread_serial,
                    frame_number,
                } => (0x03, object_id, thread_serial, frame_number),
                ref other => panic!("unexpected {other:?}"),
            }
        }
    }
}
