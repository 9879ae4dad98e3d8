//! The `heap=dump` engine. Each dump is written by HotSpot's own heap dumper (the one
//! `jcmd GC.heap_dump` and `HotSpotDiagnosticMXBean.dumpHeap` use, after a full GC) into a
//! private temporary file next to the output, then merged into the output record by record
//! (`heap_merge`): thread stacks and every root kind HotSpot writes, at the JVM's own speed,
//! with no per-object table in the agent.
//!
//! Where the JVM's dumper can't be reached (no `jdk.management` module) or fails (the Java
//! heap is exhausted), the dump falls back to the JVMTI heap walk: a full GC, then a walk of
//! every reachable object (FollowReferences in a separate JVMTI environment whose tags number
//! the objects), streamed as heap dump records. Its state is per class, plus the length of
//! each object array, plus the one object being assembled.

use std::collections::HashSet;

use rustc_hash::FxHashMap as HashMap;
use std::io;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use hprof_format::{BasicType, HeapRecord, IdList, IdSize, Value};

use crate::engine::heap_merge::{self, MergeError, Numbering};
use crate::engine::object_sites::Pins;
use crate::engine::{Context, Engine, Peers};
use crate::error::{AgentError, ErrorKind, report};
use crate::jvmti::walk::{HeapVisitor, ReferenceKind, TagUpdate};
use crate::jvmti::{Capabilities, DiagnosticBean, Jni, Jvmti};
use crate::options::Output;
use crate::output::{HeapName, ProfileOutput, ProfileWriter};
use crate::trace_store::{ClassInfo, EMPTY_TRACE_SERIAL, FIRST_TRACE_SERIAL, MAX_TRACES};

/// Tag bit set on objects already written.
const DUMPED: i64 = 1 << 62;
const ID_MASK: i64 = !(DUMPED);

/// Where a field's value goes.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// At this offset of an instance's values.
    Instance { offset: usize },
    /// The n-th static field declared by the class.
    Static { position: usize },
}

/// What the dump needs to know of a class.
#[derive(Debug)]
struct ClassLayout {
    info: Arc<ClassInfo>,
    super_id: u64,
    /// Element type for a primitive array class, `Object` for an object array class.
    array_of: Option<BasicType>,
    instance_fields: Vec<(String, BasicType)>,
    static_fields: Vec<(String, BasicType)>,
    slots: HashMap<i32, Slot>,
    values_len: usize,
}

/// References a class holds, gathered during the walk.
#[derive(Debug, Default)]
struct ClassExtras {
    statics: HashMap<usize, Value>,
    loader: u64,
    signers: u64,
    domain: u64,
    constant_pool: Vec<(u16, Value)>,
}

fn basic_type(signature: &str) -> BasicType {
    match signature.as_bytes().first() {
        Some(b'Z') => BasicType::Boolean,
        Some(b'C') => BasicType::Char,
        Some(b'F') => BasicType::Float,
        Some(b'D') => BasicType::Double,
        Some(b'B') => BasicType::Byte,
        Some(b'S') => BasicType::Short,
        Some(b'I') => BasicType::Int,
        Some(b'J') => BasicType::Long,
        _ => BasicType::Object,
    }
}

fn primitive_type(code: u8) -> BasicType {
    basic_type(std::str::from_utf8(&[code]).unwrap_or("L"))
}

/// Raw fields of one class, before layouts are computed.
struct RawClass {
    info: Arc<ClassInfo>,
    super_id: u64,
    interface_ids: Vec<u64>,
    is_interface: bool,
    /// (name, type, is_static), in GetClassFields order.
    fields: Vec<(String, BasicType, bool)>,
}

/// HotSpot's dumper, looked up once per process (at the first start, so that a dump under
/// memory pressure loads no class).
static BEAN: OnceLock<Result<DiagnosticBean, String>> = OnceLock::new();

/// Serials of the threads' stacks at heap dumps: above every serial the trace table can give.
static NEXT_HEAP_TRACE: std::sync::atomic::AtomicU32 =
    std::sync::atomic::AtomicU32::new(FIRST_TRACE_SERIAL + MAX_TRACES as u32);

/// STRING and STACK FRAME ids of the JVM's dumps: above every id the agent's own writers give.
static NEXT_FOREIGN_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1 << 40);

/// Set (to anything) to always use the JVMTI heap walk (for comparisons and tests).
pub const FORCE_WALK_ENV: &str = "_HPROF_HEAP_WALK";

/// Set (to anything) to print how long each part of a heap dump took (for benchmarks).
pub const TIMES_ENV: &str = "_HPROF_HEAP_TIMES";

/// Set (to anything) to merge the JVM's file only once it is complete.
pub const NO_FOLLOW_ENV: &str = "_HPROF_HEAP_NO_FOLLOW";

/// What a dump's preparation left for its writing.
#[derive(Debug)]
enum Prepared {
    /// The JVM wrote the dump to `path`, inside the private directory `dir`.
    Written {
        dir: tempfile::TempDir,
        path: PathBuf,
        /// The agent's serial of each thread it knows, by `Thread.tid`.
        tids: HashMap<i64, u32>,
        /// Names of the JVM's platform threads, by `Thread.tid`.
        names: HashMap<i64, String>,
        /// The agent's class serials, by name.
        class_serials: std::collections::HashMap<String, u32>,
        /// The objects pinned for the join to allocation sites.
        pins: Option<Pins>,
    },
    /// The JVMTI walk writes the dump, for this reason (`None`: asked for).
    Walk(Option<String>),
    /// The dump is already in the output (merged as the JVM wrote it).
    Merged,
    /// What the output must say of a dump that failed after part of it was merged.
    Failed(String),
}

/// Numbers kept from one dump to the next.
#[derive(Debug, Default)]
struct Kept {
    /// Serials given to classes the trace table does not hold, by name, in order of their
    /// appearance in a dump.
    classes: std::collections::HashMap<String, Vec<u32>>,
    /// Serials given to threads the agent never saw start, by `Thread.tid`.
    threads: HashMap<i64, u32>,
}

/// The engine.
#[derive(Debug, Default)]
pub struct HeapDump {
    prepared: Mutex<Option<Prepared>>,
    kept: Mutex<Kept>,
}

/// The agent's numbering for a merge.
struct AgentNumbering<'a> {
    ctx: &'a Context,
    class_serials: &'a std::collections::HashMap<String, u32>,
    /// The agent's serial of each thread it knows, by `Thread.tid`.
    tids: HashMap<i64, u32>,
    /// Names of the JVM's platform threads, by `Thread.tid`.
    names: HashMap<i64, String>,
    /// Where the threads seen after the JVM's dump come from, while it is being merged.
    later: Option<std::sync::mpsc::Receiver<ThreadsSeen>>,
    kept: &'a mut Kept,
    /// The objects pinned for the join to allocation sites.
    pins: Option<&'a Pins>,
}

/// Threads seen around a dump: serials by tid, names by tid.
type ThreadsSeen = (HashMap<i64, u32>, HashMap<i64, String>);

impl Numbering for AgentNumbering<'_> {
    fn class_serial(&mut self, name: &str, nth: usize) -> u32 {
        let known = self.class_serials.get(name).copied();
        if nth == 0
            && let Some(serial) = known
        {
            return serial;
        }
        let index = nth - usize::from(known.is_some());
        let list = self.kept.classes.entry(name.to_string()).or_default();
        while list.len() <= index {
            let serial = match self.ctx.traces.lock() {
                Ok(mut t) => t.reserve_class_serial(),
                Err(_) => u32::MAX,
            };
            list.push(serial);
        }
        list[index]
    }

    fn thread_serial(&mut self, tid: Option<i64>) -> (u32, Option<String>) {
        if let Some(later) = self.later.take()
            && let Ok((tids, names)) = later.recv()
        {
            self.tids.extend(tids);
            self.names.extend(names);
        }
        if let Some(tid) = tid {
            if let Some(&serial) = self.tids.get(&tid) {
                return (serial, None);
            }
            if let Some(&serial) = self.kept.threads.get(&tid) {
                return (serial, None);
            }
        }
        let serial = match self.ctx.threads.lock() {
            Ok(mut t) => t.reserve_serial(),
            Err(_) => 0,
        };
        if let Some(tid) = tid {
            self.kept.threads.insert(tid, serial);
        }
        let name = tid.and_then(|t| self.names.get(&t).cloned());
        (serial, Some(name.unwrap_or_default()))
    }

    fn trace_serial(&mut self) -> u32 {
        NEXT_HEAP_TRACE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    fn foreign_id(&mut self) -> u64 {
        NEXT_FOREIGN_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    fn pins(&self) -> Option<&Pins> {
        self.pins
    }
}

/// The agent's serial of each thread it knows, by `java.lang.Thread.tid`; and the name of
/// every platform thread of the JVM (for threads the agent does not know), by tid.
fn thread_tids(ctx: &Context, jni: Jni, names: &mut HashMap<i64, String>) -> HashMap<i64, u32> {
    let mut tids = HashMap::default();
    jni.with_local_frame(16, || {
        let Some(class) = jni.find_class(c"java/lang/Thread") else {
            return;
        };
        let Some(field) = jni.field_id(class, c"tid", c"J") else {
            return;
        };
        for thread in ctx.jvmti.all_threads().unwrap_or_default() {
            if let Ok(info) = ctx.jvmti.thread_info(thread) {
                names.insert(jni.long_field(thread, field), info.name);
                jni.delete_local_ref(info.group);
            }
            jni.delete_local_ref(thread);
        }
        let refs = match ctx.threads.lock() {
            Ok(table) => table.local_refs(jni, |_| true),
            Err(_) => return,
        };
        for (serial, thread) in refs {
            if !thread.is_null() {
                tids.insert(jni.long_field(thread, field), serial);
                jni.delete_local_ref(thread);
            }
        }
    });
    tids
}

/// A private (0700) directory for the JVM's file: next to the output file, else in the
/// system's temporary directory. Its path must be UTF-8 (it goes to Java as a String).
fn private_dir(output: &Output) -> io::Result<tempfile::TempDir> {
    let make = |dir: &Path| {
        tempfile::Builder::new()
            .prefix(".hprof-heap-")
            .tempdir_in(dir)
            .and_then(|d| {
                if d.path().to_str().is_some() {
                    Ok(d)
                } else {
                    Err(io::Error::other("the path is not UTF-8"))
                }
            })
    };
    if let Output::File(path) = output {
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if let Ok(dir) = make(&parent) {
            return Ok(dir);
        }
    }
    make(&std::env::temp_dir())
}

/// Merges the JVM's dump from `src` into the output; an unreadable dump is ended and noted.
fn merge_into(src: impl Read, mut numbering: AgentNumbering<'_>, out: &mut ProfileOutput) {
    let started = std::time::Instant::now();
    let mut noted = None;
    out.write(|w| match heap_merge::merge(src, w, &mut numbering) {
        Ok(_) => Ok(()),
        Err(MergeError::Output(e)) => Err(e),
        Err(e @ MergeError::Input(_)) => {
            let note = format!("heap dump incomplete: {e}");
            report(ErrorKind::Dump, &note);
            let written = w.error_note(&note);
            noted = Some(note);
            written
        }
    });
    if let Some(note) = noted {
        out.mark_incomplete(&note);
    }
    if std::env::var_os(TIMES_ENV).is_some() {
        eprintln!(
            "HPROF heap dump: merged in {:.3} s",
            started.elapsed().as_secs_f64()
        );
    }
}

/// A reader that counts what it reads toward the dump's progress.
struct Counted<R>(R);

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.0.read(buf)?;
        crate::progress::advance(n as u64, n as u64);
        Ok(n)
    }
}

/// The read buffer in front of the JVM's file: small records are read through it, segment
/// bodies (up to 1 MB) mostly straight into the merge's own buffer.
const READ_BUFFER: usize = 64 << 10;

/// Frees the part of the JVM's file already read, in pieces of this size.
const FREE_STEP: u64 = 8 << 20;

/// Reads a file the JVM is still writing: at its end, waits for more until `done` says the
/// JVM has returned; frees (punches out of the file) what has been read, so neither the disk
/// nor the page cache holds more than a few pieces of it.
struct Follow<'a> {
    file: std::fs::File,
    done: &'a AtomicBool,
    read: u64,
    freed: u64,
}

impl Read for Follow<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let finished = self.done.load(Ordering::Acquire);
            let n = self.file.read(buf)?;
            if n > 0 {
                crate::progress::advance(n as u64, n as u64);
                self.read += n as u64;
                if self.read - self.freed >= 2 * FREE_STEP {
                    let upto = self.read / FREE_STEP * FREE_STEP - FREE_STEP;
                    if crate::jvmti::free_file_range(&self.file, self.freed, upto - self.freed)
                        .is_ok()
                    {
                        self.freed = upto;
                    }
                }
                return Ok(n);
            }
            if finished {
                return Ok(0);
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}

impl HeapDump {
    /// A heap dump engine.
    pub fn new() -> HeapDump {
        HeapDump::default()
    }

    /// Has the JVM write the dump into a private file, or says why the walk must do it.
    /// `peers` pin the objects whose allocation sites are known.
    fn prepare_file(ctx: &Context, jni: Jni, peers: &dyn Peers) -> Prepared {
        if std::env::var_os(FORCE_WALK_ENV).is_some() {
            return Prepared::Walk(None);
        }
        let bean = match BEAN.get_or_init(|| DiagnosticBean::lookup(jni)) {
            Ok(bean) => bean,
            Err(why) => return Prepared::Walk(Some(why.clone())),
        };
        let dir = match private_dir(&ctx.options.output) {
            Ok(dir) => dir,
            Err(e) => {
                return Prepared::Walk(Some(format!(
                    "no private directory for the JVM's heap dump ({e})"
                )));
            }
        };
        let path = dir.path().join("heap.hprof");
        let mut names = HashMap::default();
        let before = thread_tids(ctx, jni, &mut names);
        let Some(text) = path.to_str() else {
            return Prepared::Walk(Some("the temporary path is not UTF-8".into()));
        };
        let (pins, pinned) = peers.pin_object_sites(jni).unzip();
        let started = std::time::Instant::now();
        let dumped = bean.dump_heap(jni, text);
        if let Some(pinned) = pinned {
            pinned.release(jni);
        }
        if let Err(e) = dumped {
            return Prepared::Walk(Some(format!("the JVM's heap dumper failed ({e})")));
        }
        if std::env::var_os(TIMES_ENV).is_some() {
            eprintln!(
                "HPROF heap dump: the JVM wrote {} bytes in {:.3} s",
                std::fs::metadata(&path).map_or(0, |m| m.len()),
                started.elapsed().as_secs_f64()
            );
        }
        let mut tids = thread_tids(ctx, jni, &mut names);
        for (tid, serial) in before {
            tids.entry(tid).or_insert(serial);
        }
        let class_serials = match ctx.traces.lock() {
            Ok(t) => t.class_serials_by_name(),
            Err(_) => Default::default(),
        };
        Prepared::Written {
            dir,
            path,
            tids,
            names,
            class_serials,
            pins,
        }
    }

    /// Merges the JVM's file into the output.
    fn merge_file(
        &self,
        ctx: &Context,
        path: &Path,
        (tids, names): ThreadsSeen,
        class_serials: &std::collections::HashMap<String, u32>,
        pins: Option<&Pins>,
        out: &mut ProfileOutput,
    ) {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) => {
                let note = format!("heap dump lost: the JVM's file can't be opened ({e})");
                report(ErrorKind::Dump, &note);
                out.note_incomplete(&note);
                return;
            }
        };
        // Nothing is left behind whatever happens next.
        let _ = std::fs::remove_file(path);
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let numbering = AgentNumbering {
            ctx,
            class_serials,
            tids,
            names,
            later: None,
            kept: &mut kept,
            pins,
        };
        merge_into(
            std::io::BufReader::with_capacity(READ_BUFFER, Counted(file)),
            numbering,
            out,
        );
    }

    /// Whether the JVM's file can be merged while the JVM writes it: HotSpot 15 and later
    /// write their dump front to back (earlier ones go back to fix each segment's length),
    /// and the binary format copies segments whole.
    fn can_follow(ctx: &Context) -> bool {
        ctx.options.format == crate::options::Format::Binary
            && ctx.jvmti.feature_version().is_some_and(|v| v >= 15)
            && std::env::var_os(NO_FOLLOW_ENV).is_none()
    }

    /// Has the JVM write the dump while a thread of the agent's merges the file into the
    /// output as it grows, freeing what it has read: the file never holds much, and the two
    /// run side by side. `None` if the JVM's dumper can't be used (the walk must do it).
    /// `peers` pin the objects whose allocation sites are known.
    fn dump_followed(
        &self,
        ctx: &Context,
        jni: Jni,
        bean: &DiagnosticBean,
        output: &Mutex<ProfileOutput>,
        peers: &dyn Peers,
    ) -> Prepared {
        let dir = match private_dir(&ctx.options.output) {
            Ok(dir) => dir,
            Err(e) => {
                return Prepared::Walk(Some(format!(
                    "no private directory for the JVM's heap dump ({e})"
                )));
            }
        };
        let path = dir.path().join("heap.hprof");
        let Some(text) = path.to_str() else {
            return Prepared::Walk(Some("the temporary path is not UTF-8".into()));
        };
        let mut names = HashMap::default();
        let tids = thread_tids(ctx, jni, &mut names);
        let class_serials = match ctx.traces.lock() {
            Ok(t) => t.class_serials_by_name(),
            Err(_) => Default::default(),
        };
        let (pins, pinned) = peers.pin_object_sites(jni).unzip();
        let done = AtomicBool::new(false);
        let (tell, later) = std::sync::mpsc::channel::<ThreadsSeen>();
        let started = std::time::Instant::now();
        let (dumped, merged) = std::thread::scope(|scope| {
            let follower = scope.spawn(|| {
                let file = loop {
                    let finished = done.load(Ordering::Acquire);
                    match std::fs::File::open(&path) {
                        Ok(file) => break file,
                        Err(_) if finished => return false,
                        Err(_) => std::thread::sleep(std::time::Duration::from_millis(2)),
                    }
                };
                let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
                let numbering = AgentNumbering {
                    ctx,
                    class_serials: &class_serials,
                    tids,
                    names: HashMap::default(),
                    later: Some(later),
                    kept: &mut kept,
                    pins: pins.as_ref(),
                };
                let follow = Follow {
                    file,
                    done: &done,
                    read: 0,
                    freed: 0,
                };
                let Ok(mut out) = output.lock() else {
                    return false;
                };
                merge_into(
                    std::io::BufReader::with_capacity(READ_BUFFER, follow),
                    numbering,
                    &mut out,
                );
                true
            });
            let dumped = bean.dump_heap(jni, text);
            if let Some(pinned) = pinned {
                pinned.release(jni);
            }
            if std::env::var_os(TIMES_ENV).is_some() {
                eprintln!(
                    "HPROF heap dump: the JVM wrote its dump in {:.3} s",
                    started.elapsed().as_secs_f64()
                );
            }
            let mut names = names;
            let after = thread_tids(ctx, jni, &mut names);
            done.store(true, Ordering::Release);
            let _ = tell.send((after, names));
            (dumped, follower.join().unwrap_or(true))
        });
        drop(dir);
        match (dumped, merged) {
            (Err(e), false) => Prepared::Walk(Some(format!("the JVM's heap dumper failed ({e})"))),
            (Err(e), true) => {
                let note = format!("heap dump incomplete: the JVM's heap dumper failed ({e})");
                report(ErrorKind::Dump, &note);
                Prepared::Failed(note)
            }
            (Ok(()), _) => Prepared::Merged,
        }
    }

    fn collect_classes(ctx: &Context, jni: Jni) -> HashMap<u64, RawClass> {
        let jvmti = ctx.jvmti;
        let mut raw = HashMap::default();
        let Ok(classes) = jvmti.loaded_classes() else {
            return raw;
        };
        let mut traces = match ctx.traces.lock() {
            Ok(t) => t,
            Err(_) => return raw,
        };
        for class in classes {
            let info = traces.class_info(jvmti, &ctx.ids, class);
            let super_id = match jni.superclass(class) {
                Some(s) => {
                    let id = ctx.ids.of(jvmti, s);
                    jni.delete_local_ref(s);
                    id
                }
                None => 0,
            };
            let interface_ids = jvmti
                .interfaces(class)
                .unwrap_or_default()
                .into_iter()
                .map(|i| {
                    let id = ctx.ids.of(jvmti, i);
                    jni.delete_local_ref(i);
                    id
                })
                .collect();
            let fields = jvmti
                .class_fields(class)
                .unwrap_or_default()
                .into_iter()
                .filter_map(|f| {
                    let (name, sig) = jvmti.field_name(class, f).ok()?;
                    let modifiers = jvmti.field_modifiers(class, f).ok()?;
                    Some((name, basic_type(&sig), modifiers & 0x8 != 0))
                })
                .collect();
            let is_interface = jvmti.is_interface(class).unwrap_or(false);
            raw.insert(
                info.object_id,
                RawClass {
                    info,
                    super_id,
                    interface_ids,
                    is_interface,
                    fields,
                },
            );
            jni.delete_local_ref(class);
        }
        raw
    }

    /// Computes each class's layout, and the JVMTI field indices of its fields: the fields of
    /// every interface it implements come first (counted, not listed), then the fields of
    /// java.lang.Object, ..., then its own, each class's in GetClassFields order.
    fn layouts(raw: &HashMap<u64, RawClass>) -> HashMap<u64, ClassLayout> {
        let chain = |id: u64| -> Vec<&RawClass> {
            let mut out = Vec::new();
            let mut next = id;
            while let Some(c) = raw.get(&next) {
                out.push(c);
                if c.super_id == 0 || out.len() > 4096 {
                    break;
                }
                next = c.super_id;
            }
            out
        };
        let interface_fields = |start: &[u64]| -> usize {
            let mut seen = HashSet::new();
            let mut stack: Vec<u64> = start.to_vec();
            let mut count = 0;
            while let Some(id) = stack.pop() {
                if !seen.insert(id) {
                    continue;
                }
                if let Some(i) = raw.get(&id) {
                    count += i.fields.len();
                    stack.extend(&i.interface_ids);
                }
            }
            count
        };
        let mut layouts = HashMap::default();
        for (&id, class) in raw {
            let levels = chain(id); // class first, java.lang.Object last
            let mut slots = HashMap::default();
            // Instance values: own fields first, then the superclass's, and so on.
            let mut offsets: HashMap<(u64, usize), usize> = HashMap::default();
            let mut values_len = 0;
            for level in &levels {
                for (position, (_, ty, is_static)) in level.fields.iter().enumerate() {
                    if !is_static {
                        offsets.insert((level.info.object_id, position), values_len);
                        values_len += ty.size(IdSize::Eight);
                    }
                }
            }
            let (first_index, counted): (usize, Vec<&RawClass>) = if class.is_interface {
                (interface_fields(&class.interface_ids), vec![class])
            } else {
                let all: Vec<u64> = levels
                    .iter()
                    .flat_map(|l| l.interface_ids.iter().copied())
                    .collect();
                (
                    interface_fields(&all),
                    levels.iter().rev().copied().collect(),
                )
            };
            let mut index = first_index as i32;
            let mut own_static = 0;
            for level in counted {
                for (position, (_, _, is_static)) in level.fields.iter().enumerate() {
                    if *is_static {
                        if level.info.object_id == id {
                            slots.insert(
                                index,
                                Slot::Static {
                                    position: own_static,
                                },
                            );
                            own_static += 1;
                        }
                    } else if let Some(&offset) = offsets.get(&(level.info.object_id, position)) {
                        slots.insert(index, Slot::Instance { offset });
                    }
                    index += 1;
                }
            }
            let name = &class.info.name;
            let array_of = name.strip_suffix("[]").map(|element| match element {
                "boolean" => BasicType::Boolean,
                "char" => BasicType::Char,
                "float" => BasicType::Float,
                "double" => BasicType::Double,
                "byte" => BasicType::Byte,
                "short" => BasicType::Short,
                "int" => BasicType::Int,
                "long" => BasicType::Long,
                _ => BasicType::Object,
            });
            layouts.insert(
                id,
                ClassLayout {
                    info: class.info.clone(),
                    super_id: class.super_id,
                    array_of,
                    instance_fields: class
                        .fields
                        .iter()
                        .filter(|f| !f.2)
                        .map(|f| (f.0.clone(), f.1))
                        .collect(),
                    static_fields: class
                        .fields
                        .iter()
                        .filter(|f| f.2)
                        .map(|f| (f.0.clone(), f.1))
                        .collect(),
                    slots,
                    values_len,
                },
            );
        }
        layouts
    }
}

/// The object being assembled.
enum Current {
    Instance {
        id: u64,
        class_id: u64,
        values: Vec<u8>,
    },
    ObjectArray {
        id: u64,
        class_id: u64,
        elements: Vec<u64>,
    },
}

/// The walk's state; writes records as the walk goes.
struct DumpVisitor<'a> {
    ctx: &'a Context,
    writer: &'a mut dyn ProfileWriter,
    layouts: &'a HashMap<u64, ClassLayout>,
    extras: HashMap<u64, ClassExtras>,
    array_lengths: HashMap<u64, u32>,
    thread_serials: HashMap<u64, u32>,
    current: Option<Current>,
    global_refs: u64,
    error: Option<io::Error>,
}

impl DumpVisitor<'_> {
    fn record(&mut self, record: &HeapRecord<'_>) {
        if self.error.is_none()
            && let Err(e) = self.writer.heap_record(record)
        {
            self.error = Some(e);
        }
    }

    fn flush(&mut self) {
        match self.current.take() {
            Some(Current::Instance {
                id,
                class_id,
                values,
            }) => self.record(&HeapRecord::InstanceDump {
                object_id: id,
                stack_trace_serial: EMPTY_TRACE_SERIAL,
                class_id,
                values: &values,
            }),
            Some(Current::ObjectArray {
                id,
                class_id,
                elements,
            }) => {
                let bytes: Vec<u8> = elements.iter().flat_map(|e| e.to_be_bytes()).collect();
                if let Some(list) = IdList::new(&bytes, IdSize::Eight) {
                    self.record(&HeapRecord::ObjectArrayDump {
                        array_id: id,
                        stack_trace_serial: EMPTY_TRACE_SERIAL,
                        array_class_id: class_id,
                        elements: list,
                    });
                }
            }
            None => {}
        }
    }

    /// Makes `id` (of class `class_id`) the object being assembled.
    fn select(&mut self, id: u64, class_id: u64) {
        let same = match &self.current {
            Some(Current::Instance { id: c, .. } | Current::ObjectArray { id: c, .. }) => *c == id,
            None => false,
        };
        if same {
            return;
        }
        self.flush();
        let layout = self.layouts.get(&class_id);
        self.current = match layout.and_then(|l| l.array_of) {
            Some(BasicType::Object) => {
                let length = self.array_lengths.remove(&id).unwrap_or(0) as usize;
                Some(Current::ObjectArray {
                    id,
                    class_id,
                    elements: vec![0; length],
                })
            }
            // Primitive arrays are written whole by the primitive array callback.
            Some(_) => None,
            None => Some(Current::Instance {
                id,
                class_id,
                values: vec![0; layout.map_or(0, |l| l.values_len)],
            }),
        };
    }

    fn fresh(&self) -> i64 {
        self.ctx.ids.fresh() as i64
    }
}

impl HeapVisitor for DumpVisitor<'_> {
    fn reference(
        &mut self,
        kind: ReferenceKind,
        class_tag: i64,
        referrer_class_tag: i64,
        _size: i64,
        tag: i64,
        referrer_tag: Option<i64>,
        length: i32,
    ) -> TagUpdate {
        let mut update = TagUpdate::default();
        let tag = if tag == 0 {
            let t = self.fresh();
            update.tag = Some(t);
            t
        } else {
            tag
        };
        let id = (tag & ID_MASK) as u64;
        if length >= 0
            && tag & DUMPED == 0
            && self
                .layouts
                .get(&(class_tag as u64))
                .and_then(|l| l.array_of)
                == Some(BasicType::Object)
        {
            self.array_lengths.insert(id, length as u32);
        }
        let Some(referrer) = referrer_tag else {
            let root = match kind {
                ReferenceKind::JniGlobal => {
                    self.global_refs += 1;
                    HeapRecord::RootJniGlobal {
                        object_id: id,
                        jni_global_ref_id: self.global_refs,
                    }
                }
                ReferenceKind::SystemClass => HeapRecord::RootStickyClass { object_id: id },
                ReferenceKind::Monitor => HeapRecord::RootMonitorUsed { object_id: id },
                ReferenceKind::StackLocal { thread_tag, depth } => HeapRecord::RootJavaFrame {
                    object_id: id,
                    thread_serial: self
                        .thread_serials
                        .get(&((thread_tag & ID_MASK) as u64))
                        .copied()
                        .unwrap_or(0),
                    frame_number: depth as u32,
                },
                ReferenceKind::JniLocal { thread_tag, depth } => HeapRecord::RootJniLocal {
                    object_id: id,
                    thread_serial: self
                        .thread_serials
                        .get(&((thread_tag & ID_MASK) as u64))
                        .copied()
                        .unwrap_or(0),
                    frame_number: depth as u32,
                },
                ReferenceKind::Thread => HeapRecord::RootThreadObject {
                    thread_object_id: id,
                    thread_serial: self.thread_serials.get(&id).copied().unwrap_or(0),
                    stack_trace_serial: EMPTY_TRACE_SERIAL,
                },
                _ => HeapRecord::RootUnknown { object_id: id },
            };
            self.record(&root);
            return update;
        };
        let referrer = if referrer == 0 {
            let t = self.fresh();
            update.referrer = Some(t);
            t
        } else {
            referrer
        };
        let referrer_id = (referrer & ID_MASK) as u64;
        if self.layouts.contains_key(&referrer_id) {
            let extras = self.extras.entry(referrer_id).or_default();
            match kind {
                ReferenceKind::StaticField(index) => {
                    if let Some(Slot::Static { position }) =
                        self.layouts[&referrer_id].slots.get(&index)
                    {
                        extras.statics.insert(*position, Value::Object(id));
                    }
                }
                ReferenceKind::ConstantPool(index) => {
                    extras.constant_pool.push((index as u16, Value::Object(id)))
                }
                ReferenceKind::ClassLoader => extras.loader = id,
                ReferenceKind::Signers => extras.signers = id,
                ReferenceKind::ProtectionDomain => extras.domain = id,
                _ => {}
            }
            return update;
        }
        self.select(referrer_id, referrer_class_tag as u64);
        if referrer & DUMPED == 0 {
            update.referrer = Some(update.referrer.unwrap_or(referrer) | DUMPED);
        }
        match (kind, &mut self.current) {
            (
                ReferenceKind::Field(index),
                Some(Current::Instance {
                    class_id, values, ..
                }),
            ) => {
                if let Some(Slot::Instance { offset, .. }) =
                    self.layouts.get(class_id).and_then(|l| l.slots.get(&index))
                    && let Some(slot) = values.get_mut(*offset..*offset + 8)
                {
                    slot.copy_from_slice(&id.to_be_bytes());
                }
            }
            (ReferenceKind::ArrayElement(index), Some(Current::ObjectArray { elements, .. })) => {
                if let Some(e) = elements.get_mut(index as usize) {
                    *e = id;
                }
            }
            _ => {}
        }
        update
    }

    fn primitive_field(
        &mut self,
        is_static: bool,
        index: i32,
        class_tag: i64,
        tag: i64,
        bits: u64,
        ty: u8,
    ) -> Option<i64> {
        let (tag, new) = if tag == 0 {
            let t = self.fresh();
            (t, Some(t))
        } else {
            (tag, None)
        };
        let id = (tag & ID_MASK) as u64;
        let ty = primitive_type(ty);
        if is_static {
            if let Some(Slot::Static { position }) =
                self.layouts.get(&id).and_then(|l| l.slots.get(&index))
            {
                let value = value_from_bits(ty, bits);
                self.extras
                    .entry(id)
                    .or_default()
                    .statics
                    .insert(*position, value);
            }
            return new;
        }
        self.select(id, class_tag as u64);
        if let Some(Current::Instance {
            class_id, values, ..
        }) = &mut self.current
            && let Some(Slot::Instance { offset, .. }) =
                self.layouts.get(class_id).and_then(|l| l.slots.get(&index))
        {
            let size = ty.size(IdSize::Eight);
            let be = bits.to_be_bytes();
            if let Some(slot) = values.get_mut(*offset..*offset + size) {
                slot.copy_from_slice(&be[8 - size..]);
            }
        }
        Some(new.unwrap_or(tag) | DUMPED)
    }

    fn primitive_array(
        &mut self,
        _class_tag: i64,
        _size: i64,
        tag: i64,
        count: i32,
        ty: u8,
        elements: &[u8],
    ) -> Option<i64> {
        self.flush();
        let tag = if tag == 0 { self.fresh() } else { tag };
        let element_type = primitive_type(ty);
        let size = element_type.size(IdSize::Eight);
        // JVMTI gives the elements in the machine's byte order; HPROF is big-endian.
        let mut data = elements.to_vec();
        if cfg!(target_endian = "little") && size > 1 {
            for chunk in data.chunks_exact_mut(size) {
                chunk.reverse();
            }
        }
        self.record(&HeapRecord::PrimitiveArrayDump {
            array_id: (tag & ID_MASK) as u64,
            stack_trace_serial: EMPTY_TRACE_SERIAL,
            element_type,
            length: count.max(0) as u32,
            data: &data,
        });
        Some(tag | DUMPED)
    }
}

fn value_from_bits(ty: BasicType, bits: u64) -> Value {
    match ty {
        BasicType::Boolean => Value::Boolean(bits as u8),
        BasicType::Char => Value::Char(bits as u16),
        BasicType::Float => Value::Float(f32::from_bits(bits as u32)),
        BasicType::Double => Value::Double(f64::from_bits(bits)),
        BasicType::Byte => Value::Byte(bits as u8 as i8),
        BasicType::Short => Value::Short(bits as u16 as i16),
        BasicType::Int => Value::Int(bits as u32 as i32),
        BasicType::Long => Value::Long(bits as i64),
        BasicType::Object => Value::Object(bits),
    }
}

fn zero(ty: BasicType) -> Value {
    value_from_bits(ty, 0)
}

/// Why the JVMTI heap walk must not run in this JVM now, if it must not. JDK 25's
/// FollowReferences visits each `java.lang.VirtualThread` object to report its stack, and
/// reads its continuation without checking for null: a terminated virtual thread that is still
/// reachable (its continuation cleared) crashes the JVM (SIGSEGV in
/// `JvmtiEnvBase::is_vthread_alive` ← `VM_HeapWalkOperation::collect_vthread_stack_refs`).
fn walk_would_crash(ctx: &Context, jni: Jni) -> Option<String> {
    let version = ctx.jvmti.feature_version()?;
    if version < 25 {
        return None;
    }
    let class = jni.find_class(c"java/lang/VirtualThread")?;
    let count = ctx.jvmti.count_instances(class).unwrap_or(1);
    jni.delete_local_ref(class);
    (count > 0).then(|| {
        format!(
            "the heap holds {count} virtual thread objects, and JDK {version}'s JVMTI heap walk crashes the JVM on a terminated one (see docs/compatibility.md)"
        )
    })
}

impl Engine for HeapDump {
    fn dump_message(&self) -> &'static str {
        " Java heap ..."
    }

    fn capabilities(&self, caps: &mut Capabilities) {
        caps.tag_objects = true;
    }

    fn start(&'static self, _ctx: &'static Context, jni: Jni) -> Result<(), AgentError> {
        if std::env::var_os(FORCE_WALK_ENV).is_none() {
            BEAN.get_or_init(|| DiagnosticBean::lookup(jni));
        }
        Ok(())
    }

    fn stop(&self, _ctx: &Context) {}

    fn prepare_with_output(
        &self,
        ctx: &Context,
        jni: Option<Jni>,
        output: &Mutex<ProfileOutput>,
        peers: &dyn Peers,
    ) {
        let Some(jni) = jni else { return };
        let bean = match BEAN.get() {
            Some(Ok(bean))
                if HeapDump::can_follow(ctx) && std::env::var_os(FORCE_WALK_ENV).is_none() =>
            {
                bean
            }
            _ => return self.prepare_written(ctx, jni, peers),
        };
        let progress = crate::progress::Phase::start(
            "writing the heap dump (the JVM's dumper, merged as it writes)",
            "heap dump written and merged",
            None,
        );
        progress.step("merging", Some(crate::progress::Unit::Bytes), 0);
        let prepared = self.dump_followed(ctx, jni, bean, output, peers);
        *self.prepared.lock().unwrap_or_else(|e| e.into_inner()) = Some(prepared);
    }

    fn dump(&self, ctx: &Context, jni: Option<Jni>, out: &mut ProfileOutput) {
        let prepared = self
            .prepared
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        match prepared {
            Some(Prepared::Written {
                dir,
                path,
                tids,
                names,
                class_serials,
                pins,
            }) => {
                let progress = crate::progress::Phase::start(
                    "merging the JVM's heap dump into the profile",
                    "heap dump merged",
                    None,
                );
                progress.step(
                    "merging",
                    Some(crate::progress::Unit::Bytes),
                    std::fs::metadata(&path).map_or(0, |m| m.len()),
                );
                self.merge_file(
                    ctx,
                    &path,
                    (tids, names),
                    &class_serials,
                    pins.as_ref(),
                    out,
                );
                drop(dir);
            }
            Some(Prepared::Merged) => {}
            Some(Prepared::Failed(note)) => out.note_incomplete(&note),
            Some(Prepared::Walk(reason)) => {
                if let Some(reason) = reason {
                    eprintln!("HPROF WARNING: {reason}; the heap dump uses the JVMTI heap walk");
                }
                if let Some(jni) = jni {
                    HeapDump::walk(ctx, jni, out);
                }
            }
            None => {
                if let Some(jni) = jni {
                    HeapDump::walk(ctx, jni, out);
                }
            }
        }
    }
}

impl HeapDump {
    /// Has the JVM write the dump into a private file, merged by the [`Engine::dump`] that
    /// follows (or says why the walk must write it).
    fn prepare_written(&self, ctx: &Context, jni: Jni, peers: &dyn Peers) {
        let progress = crate::progress::Phase::start(
            "writing the heap dump (the JVM's dumper, after a full GC)",
            "heap dump written",
            None,
        );
        progress.step("the JVM writes the heap dump", None, 0);
        let prepared = HeapDump::prepare_file(ctx, jni, peers);
        *self.prepared.lock().unwrap_or_else(|e| e.into_inner()) = Some(prepared);
    }

    /// The JVMTI heap walk: a full GC, then every reachable object, streamed to the output.
    fn walk(ctx: &Context, jni: Jni, out: &mut ProfileOutput) {
        let _progress = crate::progress::Phase::start(
            "writing the heap dump (JVMTI heap walk)",
            "heap dump written",
            None,
        );
        let _ = ctx.jvmti.force_garbage_collection();
        if let Some(reason) = walk_would_crash(ctx, jni) {
            let note = format!("heap dump skipped: {reason}");
            report(ErrorKind::Dump, &note);
            out.note_incomplete(&note);
            return;
        }
        let raw = jni.with_local_frame(64, || HeapDump::collect_classes(ctx, jni));
        let layouts = HeapDump::layouts(&raw);
        drop(raw);
        let Ok(walk_env) = Jvmti::new_tagging_env(ctx.vm) else {
            report(
                ErrorKind::Dump,
                "can't get a JVMTI environment for the heap dump",
            );
            return;
        };
        // Classes and threads keep the ids they have everywhere else in the output.
        let mut thread_serials = HashMap::default();
        jni.with_local_frame(64, || {
            if let Ok(classes) = ctx.jvmti.loaded_classes() {
                for class in classes {
                    let _ = walk_env.set_tag(class, ctx.ids.of(ctx.jvmti, class) as i64);
                    jni.delete_local_ref(class);
                }
            }
        });
        if let Ok(threads) = ctx.threads.lock() {
            for t in threads.live() {
                let _ = walk_env.set_tag(t.thread.get(), t.object_id as i64);
                thread_serials.insert(t.object_id, t.serial);
            }
        }
        out.write(|w| {
            // Every name the CLASS DUMPs use is written before the dump opens.
            let mut names: HashMap<&str, u64> = HashMap::default();
            for layout in layouts.values() {
                w.heap_class(&layout.info)?;
                w.heap_class_layout(&layout.info, layout.super_id, &layout.instance_fields)?;
                for (name, _) in layout.static_fields.iter().chain(&layout.instance_fields) {
                    if !names.contains_key(name.as_str()) {
                        let id = w.heap_string(name)?;
                        names.insert(name, id);
                    }
                }
            }
            fn named<'n>(names: &HashMap<&str, u64>, text: &'n str) -> HeapName<'n> {
                HeapName {
                    id: names.get(text).copied().unwrap_or(0),
                    text,
                }
            }
            w.heap_dump_begin()?;
            let mut visitor = DumpVisitor {
                ctx,
                writer: w,
                layouts: &layouts,
                extras: HashMap::default(),
                array_lengths: HashMap::default(),
                thread_serials,
                current: None,
                global_refs: 0,
                error: None,
            };
            let walked = walk_env.follow_references(&mut visitor);
            visitor.flush();
            if let Some(e) = visitor.error.take() {
                return Err(e);
            }
            if let Err(e) = walked {
                report(ErrorKind::Dump, format!("the heap walk failed ({e})"));
            }
            let extras = std::mem::take(&mut visitor.extras);
            for (&id, layout) in &layouts {
                let extra = extras.get(&id);
                let statics: Vec<(HeapName<'_>, Value)> = layout
                    .static_fields
                    .iter()
                    .enumerate()
                    .map(|(position, (name, ty))| {
                        let value = extra
                            .and_then(|e| e.statics.get(&position))
                            .copied()
                            .unwrap_or(zero(*ty));
                        (named(&names, name), value)
                    })
                    .collect();
                let fields: Vec<(HeapName<'_>, BasicType)> = layout
                    .instance_fields
                    .iter()
                    .map(|(name, ty)| (named(&names, name), *ty))
                    .collect();
                let constant_pool: &[(u16, Value)] = extra.map_or(&[], |e| &e.constant_pool);
                w.heap_class_dump(
                    id,
                    layout.super_id,
                    extra.map_or(0, |e| e.loader),
                    extra.map_or(0, |e| e.signers),
                    extra.map_or(0, |e| e.domain),
                    layout.values_len as u32,
                    constant_pool,
                    &statics,
                    &fields,
                )?;
            }
            w.heap_dump_end()
        });
        walk_env.dispose();
    }
}
