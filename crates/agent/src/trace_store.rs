//! Owns the trace table: stack traces deduplicated into serial numbers (from 300001; 300000 is
//! the empty trace), the methods, classes and frames they are made of, and the per-trace
//! sample counters engines record into and writers read.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use hprof_format::java_class_name;

use crate::jvmti::{Jni, Jvmti, jlocation, jmethodID, jobject};

/// Object tags are shared by two users: the object ids of [`ObjectIds`] (below `1 << 36`) and
/// heap=sites' allocation tags, `(site + 1) << ALLOCATION_TAG_SIZE_BITS | size`.
pub const ALLOCATION_TAG_SIZE_BITS: u32 = 36;

/// Whether an object tag is an allocation tag (site and size) rather than an object id.
pub fn is_allocation_tag(tag: i64) -> bool {
    (tag as u64) >> ALLOCATION_TAG_SIZE_BITS != 0
}

/// Serial of the empty trace.
pub const EMPTY_TRACE_SERIAL: u32 = 300_000;
/// The first serial of a real trace.
pub const FIRST_TRACE_SERIAL: u32 = 300_001;
/// At most this many distinct traces are kept; further new traces count as overflow.
pub const MAX_TRACES: usize = 1 << 20;
/// At most this many distinct methods are resolved and kept.
pub const MAX_METHODS: usize = 1 << 20;

/// The class of the pseudo-methods ([`TraceStore::pseudo_method`]).
pub const PSEUDO_CLASS: &str = "<hprof>";

/// Hands out object ids (JVMTI tags), shared by every part of the agent that names objects.
#[derive(Debug)]
pub struct ObjectIds {
    next: AtomicU64,
}

impl Default for ObjectIds {
    fn default() -> Self {
        ObjectIds::new()
    }
}

impl ObjectIds {
    /// Ids start where the original's did, so they look familiar in text output.
    pub fn new() -> ObjectIds {
        ObjectIds {
            next: AtomicU64::new(0x5000_0001),
        }
    }

    /// A fresh id.
    pub fn fresh(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// The id of `object`: its tag, or a fresh id it is tagged with (replacing an
    /// allocation tag of heap=sites, which is no id).
    pub fn of(&self, jvmti: Jvmti, object: jobject) -> u64 {
        match jvmti.tag(object) {
            Ok(tag) if tag != 0 && !is_allocation_tag(tag) => tag as u64,
            Ok(_) => {
                let id = self.fresh();
                let _ = jvmti.set_tag(object, id as i64);
                id
            }
            Err(_) => self.fresh(),
        }
    }
}

/// A class as traces name it.
#[derive(Debug)]
pub struct ClassInfo {
    /// Class serial (binary LOAD CLASS), from 1.
    pub serial: u32,
    /// Object id of the class object.
    pub object_id: u64,
    /// Dotted name (`java.lang.String`, `int[]`).
    pub name: String,
    /// Source file name, if the class has one.
    pub source: Option<String>,
}

/// What code a frame runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    /// A Java method (or one of the agent's pseudo-frames).
    Java,
    /// Native code in user space: a JNI library, libc, the JVM itself (`libjvm.so`).
    Native,
    /// The kernel.
    Kernel,
}

/// A method as traces name it.
#[derive(Debug)]
pub struct MethodInfo {
    /// Declaring class.
    pub class: Arc<ClassInfo>,
    /// Method name.
    pub name: String,
    /// JVM signature, `(I)V`.
    pub signature: String,
    /// Whether it is native.
    pub native: bool,
    /// What code it is: a Java method, or a function of native code or of the kernel, whose
    /// class is its library (`libc.so.6`, `[kernel]`) with the library's path as its source.
    pub code: Code,
    lines: Vec<(jlocation, i32)>,
}

impl MethodInfo {
    /// The source line of `location`, or -1 when unknown (native, no table, location < 0).
    pub fn line_at(&self, location: jlocation) -> i32 {
        if self.native || location < 0 {
            return -1;
        }
        self.lines
            .iter()
            .filter(|(start, _)| *start <= location)
            .max_by_key(|(start, _)| *start)
            .map_or(-1, |&(_, line)| line)
    }
}

/// One frame: a method at a location.
#[derive(Debug)]
pub struct Frame {
    /// Frame id (binary STACK FRAME).
    pub id: u64,
    /// The method.
    pub method: Arc<MethodInfo>,
    /// Source line, -1 when unknown or when `lineno=n`.
    pub line: i32,
}

/// A stack trace, innermost frame first.
#[derive(Debug)]
pub struct Trace {
    /// Trace serial.
    pub serial: u32,
    /// Thread serial when traces are per thread (`thread=y`), else 0.
    pub thread: u32,
    /// Frames.
    pub frames: Vec<Arc<Frame>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct TraceKey {
    frames: Box<[(usize, jlocation)]>,
    thread: u32,
}

#[derive(Debug)]
struct TraceEntry {
    trace: Arc<Trace>,
    hits: u64,
}

/// The trace table.
#[derive(Debug)]
pub struct TraceStore {
    lineno: bool,
    per_thread: bool,
    methods: HashMap<usize, Arc<MethodInfo>>,
    classes: HashMap<u64, Arc<ClassInfo>>,
    frames: HashMap<(usize, jlocation), Arc<Frame>>,
    keys: HashMap<TraceKey, usize>,
    entries: Vec<TraceEntry>,
    empty: Arc<Trace>,
    next_class_serial: u32,
    next_frame_id: u64,
    /// Keys handed out by [`TraceStore::pseudo_method`] and [`TraceStore::code_method`]: the
    /// n-th is n (no real jmethodID is that small).
    pseudo_keys_given: usize,
    /// Keys of the pseudo-methods by name.
    pseudo_keys: HashMap<String, usize>,
    /// The class of the pseudo-methods, once one was made.
    pseudo_class: Option<Arc<ClassInfo>>,
    /// Keys of the functions of native and kernel code ([`TraceStore::code_method`]), by
    /// what code, library path and function; they share the pseudo-methods' keys.
    code_keys: HashMap<(Code, Arc<str>, Arc<str>), usize>,
    /// The classes that stand for libraries, by path.
    libraries: HashMap<Arc<str>, Arc<ClassInfo>>,
    /// New traces not kept because the table was full.
    pub overflow: u64,
}

impl TraceStore {
    /// An empty table; `lineno=n` makes every line unknown, `thread=y` keys traces by thread.
    pub fn new(lineno: bool, per_thread: bool) -> TraceStore {
        TraceStore {
            lineno,
            per_thread,
            methods: HashMap::new(),
            classes: HashMap::new(),
            frames: HashMap::new(),
            keys: HashMap::new(),
            entries: Vec::new(),
            empty: Arc::new(Trace {
                serial: EMPTY_TRACE_SERIAL,
                thread: 0,
                frames: Vec::new(),
            }),
            next_class_serial: 1,
            next_frame_id: 1,
            pseudo_keys_given: 0,
            pseudo_keys: HashMap::new(),
            pseudo_class: None,
            code_keys: HashMap::new(),
            libraries: HashMap::new(),
            overflow: 0,
        }
    }

    /// The empty trace, 300000.
    pub fn empty(&self) -> Arc<Trace> {
        self.empty.clone()
    }

    /// Counts `count` samples of `frames` taken on thread `thread`; returns the trace, or
    /// `None` if the stack is empty or the table is full.
    pub fn record(
        &mut self,
        jvmti: Jvmti,
        jni: Jni,
        ids: &ObjectIds,
        frames: &[(jmethodID, jlocation)],
        thread: u32,
        count: u64,
    ) -> Option<Arc<Trace>> {
        if frames.is_empty() {
            return None;
        }
        let key = TraceKey {
            frames: frames
                .iter()
                .map(|&(m, l)| (m as usize, if self.lineno { l } else { -1 }))
                .collect(),
            thread: if self.per_thread { thread } else { 0 },
        };
        if let Some(&index) = self.keys.get(&key) {
            let entry = &mut self.entries[index];
            entry.hits += count;
            return Some(entry.trace.clone());
        }
        if self.entries.len() >= MAX_TRACES {
            self.overflow += 1;
            return None;
        }
        let mut resolved = Vec::with_capacity(frames.len());
        for &(method, location) in frames {
            resolved.push(self.frame(jvmti, jni, ids, method, location));
        }
        let serial = FIRST_TRACE_SERIAL + self.entries.len() as u32;
        let trace = Arc::new(Trace {
            serial,
            thread: key.thread,
            frames: resolved,
        });
        self.keys.insert(key, self.entries.len());
        self.entries.push(TraceEntry {
            trace: trace.clone(),
            hits: count,
        });
        Some(trace)
    }

    fn frame(
        &mut self,
        jvmti: Jvmti,
        jni: Jni,
        ids: &ObjectIds,
        method: jmethodID,
        location: jlocation,
    ) -> Arc<Frame> {
        let location = if self.lineno { location } else { -1 };
        if let Some(frame) = self.frames.get(&(method as usize, location)) {
            return frame.clone();
        }
        let info = self.method(jvmti, jni, ids, method);
        let line = if info.code != Code::Java {
            // A native method, as binary STACK FRAMEs mark one.
            -3
        } else if self.lineno {
            info.line_at(location)
        } else {
            -1
        };
        let frame = Arc::new(Frame {
            id: self.next_frame_id,
            method: info,
            line,
        });
        self.next_frame_id += 1;
        self.frames
            .insert((method as usize, location), frame.clone());
        frame
    }

    fn method(
        &mut self,
        jvmti: Jvmti,
        jni: Jni,
        ids: &ObjectIds,
        method: jmethodID,
    ) -> Arc<MethodInfo> {
        if let Some(info) = self.methods.get(&(method as usize)) {
            return info.clone();
        }
        let (name, signature) = jvmti
            .method_name(method)
            .unwrap_or_else(|_| ("<Unknown Method>".into(), String::new()));
        let class = match jvmti.method_class(method) {
            Ok(class) => {
                let info = self.class_info(jvmti, ids, class);
                jni.delete_local_ref(class);
                info
            }
            Err(_) => self.unknown_class(ids),
        };
        let native = jvmti.is_native(method).unwrap_or(false);
        let lines = if native || !self.lineno {
            Vec::new()
        } else {
            jvmti.line_numbers(method).unwrap_or_default()
        };
        let info = Arc::new(MethodInfo {
            class,
            name,
            signature,
            native,
            code: Code::Java,
            lines,
        });
        if self.methods.len() < MAX_METHODS {
            self.methods.insert(method as usize, info.clone());
        }
        info
    }

    /// The serial of each class name that names exactly one class of the table (what a heap
    /// dump written by the JVM, which names classes by address, is matched against).
    pub fn class_serials_by_name(&self) -> HashMap<String, u32> {
        let mut by_name: HashMap<String, Option<u32>> = HashMap::new();
        for info in self.classes.values() {
            by_name
                .entry(info.name.clone())
                .and_modify(|s| *s = None)
                .or_insert(Some(info.serial));
        }
        by_name
            .into_iter()
            .filter_map(|(name, serial)| Some((name, serial?)))
            .collect()
    }

    /// A new class serial, for a class the table does not hold.
    pub fn reserve_class_serial(&mut self) -> u32 {
        let serial = self.next_class_serial;
        self.next_class_serial += 1;
        serial
    }

    /// The class `class` (a reference the caller owns), named and numbered on first sight.
    pub fn class_info(&mut self, jvmti: Jvmti, ids: &ObjectIds, class: jobject) -> Arc<ClassInfo> {
        let id = ids.of(jvmti, class);
        self.class_info_with_id(jvmti, id, class)
    }

    /// [`TraceStore::class_info`] for a class whose object id the caller already has.
    pub fn class_info_with_id(&mut self, jvmti: Jvmti, id: u64, class: jobject) -> Arc<ClassInfo> {
        if let Some(info) = self.classes.get(&id) {
            return info.clone();
        }
        let signature = jvmti.class_signature(class).unwrap_or_default();
        let info = Arc::new(ClassInfo {
            serial: self.next_class_serial,
            object_id: id,
            name: class_name_from_signature(&signature),
            source: jvmti.source_file(class).ok().filter(|s| !s.is_empty()),
        });
        self.next_class_serial += 1;
        self.classes.insert(id, info.clone());
        info
    }

    /// The trace of `frames` on thread `thread`, without counting a sample: the empty trace
    /// for no frames, `None` if the table is full.
    pub fn intern(
        &mut self,
        jvmti: Jvmti,
        jni: Jni,
        ids: &ObjectIds,
        frames: &[(jmethodID, jlocation)],
        thread: u32,
    ) -> Option<Arc<Trace>> {
        if frames.is_empty() {
            return Some(self.empty());
        }
        self.record(jvmti, jni, ids, frames, thread, 0)
    }

    /// A method that stands for no Java method: a reason a stack could not be walked
    /// (`<GC active>`) or a thread's state in a wall-clock sample (`<SLEEPING>`). Its frames
    /// print as `<hprof>.NAME(<Unknown Source>:Unknown line)`. Returns the key to use as its
    /// jmethodID in [`TraceStore::record`].
    pub fn pseudo_method(&mut self, ids: &ObjectIds, name: &str) -> jmethodID {
        if let Some(&key) = self.pseudo_keys.get(name) {
            return key as jmethodID;
        }
        let class = match &self.pseudo_class {
            Some(class) => class.clone(),
            None => {
                let info = Arc::new(ClassInfo {
                    serial: self.next_class_serial,
                    object_id: ids.fresh(),
                    name: PSEUDO_CLASS.into(),
                    source: None,
                });
                self.next_class_serial += 1;
                self.pseudo_class = Some(info.clone());
                info
            }
        };
        self.pseudo_keys_given += 1;
        let key = self.pseudo_keys_given;
        self.pseudo_keys.insert(name.to_string(), key);
        self.methods.insert(
            key,
            Arc::new(MethodInfo {
                class,
                name: name.to_string(),
                signature: "()V".into(),
                native: false,
                code: Code::Java,
                lines: Vec::new(),
            }),
        );
        key as jmethodID
    }

    /// A function of native or kernel code, `function` of the library `library` (its file
    /// name, `libc.so.6`, or `[kernel]`) at `path`: its frames print as
    /// `libc.so.6.memcpy(Native method)` or `[kernel].do_syscall_64(Kernel)`, and are binary
    /// STACK FRAMEs of a class named after the library, with the library's path as their
    /// source file and line -3 (a native method). Returns the key to use as its jmethodID in
    /// [`TraceStore::record`].
    pub fn code_method(
        &mut self,
        ids: &ObjectIds,
        code: Code,
        library: &str,
        path: &str,
        function: &str,
    ) -> jmethodID {
        let path: Arc<str> = Arc::from(path);
        let function: Arc<str> = Arc::from(function);
        let key = (code, path.clone(), function.clone());
        if let Some(&index) = self.code_keys.get(&key) {
            return index as jmethodID;
        }
        let class = match self.libraries.get(&path) {
            Some(class) => class.clone(),
            None => {
                let info = Arc::new(ClassInfo {
                    serial: self.next_class_serial,
                    object_id: ids.fresh(),
                    name: library.into(),
                    source: Some(path.to_string()),
                });
                self.next_class_serial += 1;
                self.libraries.insert(path, info.clone());
                info
            }
        };
        self.pseudo_keys_given += 1;
        let index = self.pseudo_keys_given;
        self.methods.insert(
            index,
            Arc::new(MethodInfo {
                class,
                name: function.to_string(),
                signature: String::new(),
                native: true,
                code,
                lines: Vec::new(),
            }),
        );
        self.code_keys.insert(key, index);
        index as jmethodID
    }

    /// Whether `method` is a key [`TraceStore::code_method`] gave.
    pub fn is_code_method(&self, method: jmethodID) -> bool {
        self.methods
            .get(&(method as usize))
            .is_some_and(|m| m.code != Code::Java)
            && (method as usize) <= self.pseudo_keys_given
    }

    fn unknown_class(&mut self, ids: &ObjectIds) -> Arc<ClassInfo> {
        let info = Arc::new(ClassInfo {
            serial: self.next_class_serial,
            object_id: ids.fresh(),
            name: "<Unknown Class>".into(),
            source: None,
        });
        self.next_class_serial += 1;
        info
    }

    /// Traces with samples since the last [`TraceStore::clear_hits`], with their counts.
    pub fn hits(&self) -> Vec<(Arc<Trace>, u64)> {
        self.entries
            .iter()
            .filter(|e| e.hits > 0)
            .map(|e| (e.trace.clone(), e.hits))
            .collect()
    }

    /// Starts a new interval: every count back to zero.
    pub fn clear_hits(&mut self) {
        for entry in &mut self.entries {
            entry.hits = 0;
        }
    }

    /// Forgets the classes whose object ids are not in `live` (the JVM unloaded them) and
    /// returns them, in serial order, so writers can record the unloads.
    pub fn unload_classes_not_in(&mut self, live: &HashSet<u64>) -> Vec<Arc<ClassInfo>> {
        let gone: Vec<u64> = self
            .classes
            .iter()
            .filter(|(id, _)| !live.contains(id))
            .map(|(&id, _)| id)
            .collect();
        let mut unloaded: Vec<_> = gone
            .into_iter()
            .filter_map(|id| self.classes.remove(&id))
            .collect();
        unloaded.sort_by_key(|c| c.serial);
        unloaded
    }

    /// The trace with serial `serial`, if it exists.
    pub fn by_serial(&self, serial: u32) -> Option<Arc<Trace>> {
        if serial == EMPTY_TRACE_SERIAL {
            return Some(self.empty());
        }
        let index = serial.checked_sub(FIRST_TRACE_SERIAL)? as usize;
        self.entries.get(index).map(|e| e.trace.clone())
    }

    /// Every trace, in serial order.
    pub fn all(&self) -> Vec<Arc<Trace>> {
        self.entries.iter().map(|e| e.trace.clone()).collect()
    }

    /// Number of distinct traces.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no trace was recorded.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// `Ljava/lang/String;` → `java.lang.String`, `[I` → `int[]`.
pub fn class_name_from_signature(signature: &str) -> String {
    match signature
        .strip_prefix('L')
        .and_then(|s| s.strip_suffix(';'))
    {
        Some(plain) => java_class_name(plain),
        None => java_class_name(signature),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names_from_signatures() {
        assert_eq!(
            class_name_from_signature("Ljava/lang/String;"),
            "java.lang.String"
        );
        assert_eq!(class_name_from_signature("[I"), "int[]");
        assert_eq!(
            class_name_from_signature("[[Ljava/lang/Object;"),
            "java.lang.Object[][]"
        );
    }

    #[test]
    fn lines_come_from_the_table() {
        let class = Arc::new(ClassInfo {
            serial: 1,
            object_id: 1,
            name: "X".into(),
            source: None,
        });
        let m = MethodInfo {
            class,
            name: "f".into(),
            signature: "()V".into(),
            native: false,
            code: Code::Java,
            lines: vec![(0, 10), (5, 11), (9, 14)],
        };
        assert_eq!(m.line_at(0), 10);
        assert_eq!(m.line_at(7), 11);
        assert_eq!(m.line_at(100), 14);
        assert_eq!(m.line_at(-1), -1);
    }
}
