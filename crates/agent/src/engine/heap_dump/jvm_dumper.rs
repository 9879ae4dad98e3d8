//! HotSpot's own heap dumper and its file: the diagnostic bean, the private directory the JVM
//! writes into, the file followed as it grows (or merged once complete), the threads' ids
//! around the dump and the agent's numbering (`AgentNumbering`) that [`merge`](super::merge)
//! renumbers it with.

use rustc_hash::FxHashMap as HashMap;
use std::io;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::engine::heap_dump::merge::{self, MergeError, Numbering};
use crate::engine::heap_dump::{
    FORCE_WALK_ENV, HeapDump, Kept, NO_FOLLOW_ENV, Prepared, TIMES_ENV,
};
use crate::engine::object_sites::Pins;
use crate::engine::{Context, Peers};
use crate::error::{ErrorKind, report};
use crate::jvmti::{DiagnosticBean, Jni};
use crate::options::Output;
use crate::output::ProfileOutput;
use crate::trace_store::{FIRST_TRACE_SERIAL, MAX_TRACES};

/// HotSpot's dumper, looked up once per process (at the first start, so that a dump under
/// memory pressure loads no class).
pub(super) static BEAN: OnceLock<Result<DiagnosticBean, String>> = OnceLock::new();

/// Serials of the threads' stacks at heap dumps: above every serial the trace table can give.
static NEXT_HEAP_TRACE: std::sync::atomic::AtomicU32 =
    std::sync::atomic::AtomicU32::new(FIRST_TRACE_SERIAL + MAX_TRACES as u32);

/// STRING and STACK FRAME ids of the JVM's dumps: above every id the agent's own writers give.
static NEXT_FOREIGN_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1 << 40);

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
    out.write(|w| match merge::merge(src, w, &mut numbering) {
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
    /// Has the JVM write the dump into a private file, or says why the walk must do it.
    /// `peers` pin the objects whose allocation sites are known.
    pub(super) fn prepare_file(ctx: &Context, jni: Jni, peers: &dyn Peers) -> Prepared {
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
    pub(super) fn merge_file(
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
    pub(super) fn can_follow(ctx: &Context) -> bool {
        ctx.options.format == crate::options::Format::Binary
            && ctx.jvmti.feature_version().is_some_and(|v| v >= 15)
            && std::env::var_os(NO_FOLLOW_ENV).is_none()
    }

    /// Has the JVM write the dump while a thread of the agent's merges the file into the
    /// output as it grows, freeing what it has read: the file never holds much, and the two
    /// run side by side. `None` if the JVM's dumper can't be used (the walk must do it).
    /// `peers` pin the objects whose allocation sites are known.
    pub(super) fn dump_followed(
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
}
