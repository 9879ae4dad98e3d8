//! The `heap=dump` engine. Each dump is written by HotSpot's own heap dumper (the one
//! `jcmd GC.heap_dump` and `HotSpotDiagnosticMXBean.dumpHeap` use, after a full GC) into a
//! private temporary file next to the output, then merged into the output record by record
//! (`merge/`): thread stacks and every root kind HotSpot writes, at the JVM's own speed,
//! with no per-object table in the agent.
//!
//! Where the JVM's dumper can't be reached (no `jdk.management` module) or fails (the Java
//! heap is exhausted), the dump falls back to the JVMTI heap walk: a full GC, then a walk of
//! every reachable object (FollowReferences in a separate JVMTI environment whose tags number
//! the objects), streamed as heap dump records. Its state is per class, plus the length of
//! each object array, plus the one object being assembled.
//!
//! This module holds the engine (its state, the [`Engine`] hooks and the dump's entry
//! points); each job is a file of its own:
//! - `jvm_dumper.rs`: HotSpot's dumper, its private file (followed as it grows or merged once
//!   complete) and the agent's numbering for the merge;
//! - `merge/`: the JVM's dump merged into the output record by record (`raw.rs` there: the
//!   binary format's segments, rewritten in place);
//! - `walk.rs`: the JVMTI heap walk (class layouts, the walk's visitor, values).

mod jvm_dumper;
pub mod merge;
mod walk;

use rustc_hash::FxHashMap as HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use crate::engine::heap_dump::jvm_dumper::BEAN;
use crate::engine::object_sites::Pins;
use crate::engine::{Context, Engine, Peers};
use crate::error::AgentError;
use crate::jvmti::{Capabilities, DiagnosticBean, Jni};
use crate::output::ProfileOutput;

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

impl HeapDump {
    /// A heap dump engine.
    pub fn new() -> HeapDump {
        HeapDump::default()
    }
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
}
