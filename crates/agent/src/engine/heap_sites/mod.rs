//! The `heap=sites` engine: every allocation (or, with `alloc_interval`, a sample of them) is
//! counted against its site, the pair (class, allocation trace), and the objects still live
//! are counted per site when the sites are listed.
//!
//! In the fast mode (`sites=fast`, the default; see [`fast_mode`]) the exact counts come from
//! the allocating bytecode (`alloc_counts/`) and this engine samples allocations every
//! 16 KB (`FAST_SAMPLE_INTERVAL`): a listing shares each bytecode site's exact count among the
//! traces sampled at it, and each class's live objects (counted by a heap walk) among its
//! sites. Without the fast mode, with `sites=exact` (every allocation) or `alloc_interval=`
//! (sampled), the event-fed table is all there is.
//!
//! This module holds the engine (its state, the site table and its counters, the [`Engine`]
//! hooks); each job is a file of its own:
//! - `sampled.rs`: SampledObjectAlloc, the per-thread site cache and the sampler's warm-up;
//! - `live.rs`: allocation tags, tracked clones and the count of live objects;
//! - `compose.rs`: the fast mode's sites, its exact counts joined to the sampled traces;
//! - `estimate.rs`: the arithmetic of shares and live estimates;
//! - `report.rs`: ALLOC SITES and HEAP SUMMARY;
//! - `object_pins.rs`: the objects tracked and pinned for heap=dump's OBJECT SITES;
//! - `alloc_counts/`: the fast mode's counters in bytecode.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::engine::object_sites::{Pinned, Pins};
use crate::engine::{Context, Engine, Hook, Probe, ProbeAnswer, Started};
use crate::error::AgentError;
use crate::jvmti::{Capabilities, Event, Jni, jclass, jobject, jthread};
use crate::output::{ProfileOutput, Site, SiteTotals};
use crate::trace_store::{ClassInfo, Trace};

mod alloc_counts;
mod compose;
mod estimate;
mod live;
mod object_pins;
mod report;
mod sampled;

use alloc_counts::AllocCounts;
use live::{MIN_CLONE_PURGE, TrackedClone};
use object_pins::TrackedObjects;
use report::FORCE_GC;
use sampled::{clear_thread_cache, note_early_sample, warm_up_sampler};

/// Sites per chunk of counters, and the most chunks (about four million sites).
const CHUNK: usize = 4096;
const MAX_CHUNKS: usize = 1024;

/// Counters of one site: allocations, added with atomics by allocating threads; live
/// objects, set by each listing's count.
#[derive(Debug, Default)]
struct Counters {
    allocated_objects: AtomicU64,
    allocated_bytes: AtomicU64,
    live_objects: AtomicU64,
    live_bytes: AtomicU64,
    /// Whether the site's allocations are made by `Object.clone()`.
    clones: AtomicBool,
}

/// What a site is, for output.
#[derive(Debug)]
struct SiteInfo {
    class: Arc<ClassInfo>,
    trace: Arc<Trace>,
}

/// The sites: an index from (class, trace) to a site number, and the counters by number.
#[derive(Debug)]
struct SiteTable {
    index: HashMap<(u64, u32), u32>,
    infos: Vec<SiteInfo>,
}

/// The sampling interval of the fast mode: its samples give bytecode sites their deeper
/// frames and every site its live estimate.
const FAST_SAMPLE_INTERVAL: u64 = 16 * 1024;

/// Whether heap=sites runs in its fast mode (counts in bytecode): `sites=fast` (the
/// default) without `alloc_interval`, loaded with the JVM (a running JVM's
/// `java.lang.Thread` can get no field) and without `-Xshare:on` (which forbids the early
/// class hook that adds it).
pub fn fast_mode(options: &crate::options::Options, late: bool) -> bool {
    options.heap_sites
        && !options.sites_exact
        && options.alloc_interval == 0
        && !late
        && !crate::vm_options::sharing_required()
}

/// The engine.
#[derive(Debug)]
pub struct HeapSites {
    interval: u64,
    /// The fast mode's exact counts (`None`: every allocation is an event, or sampled).
    fast: Option<AllocCounts>,
    /// The fast mode's sites at the last count.
    fast_sites: Mutex<Vec<Site>>,
    /// The fast mode: live objects and bytes by class (tag) at the last count.
    class_live: Mutex<HashMap<u64, (u64, u64)>>,
    /// The fast mode could not start: the sampled allocations are all there is.
    fast_failed: AtomicBool,
    table: Mutex<SiteTable>,
    chunks: Box<[OnceLock<Box<[Counters]>>]>,
    class_class: OnceLock<u64>,
    /// Allocations not counted because the site or trace tables were full.
    dropped: AtomicU64,
    /// Objects made by `clone()`, tracked by weak references, and the length at which the list
    /// is next purged of dead ones.
    clones: Mutex<(Vec<TrackedClone>, usize)>,
    /// (class, trace, allocated objects) of every site at the last listing, for incremental
    /// listings.
    last_listed: Mutex<Vec<(u64, u32, u64)>>,
    /// The objects tracked for heap=dump's OBJECT SITES.
    objects: TrackedObjects,
    /// Set once started.
    started: Started,
}

impl HeapSites {
    /// `alloc_interval`: 0 counts every allocation, else the mean sampling interval in bytes.
    pub fn new(alloc_interval: u64) -> HeapSites {
        HeapSites::with_mode(alloc_interval, false)
    }

    /// The fast mode (see [`fast_mode`]) with `fast`, else as [`HeapSites::new`].
    pub fn with_mode(alloc_interval: u64, fast: bool) -> HeapSites {
        HeapSites {
            interval: if fast {
                std::env::var("HPROF_FAST_SAMPLE_INTERVAL")
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(FAST_SAMPLE_INTERVAL)
            } else {
                alloc_interval
            },
            fast: fast.then(AllocCounts::default),
            fast_sites: Mutex::new(Vec::new()),
            class_live: Mutex::new(HashMap::new()),
            fast_failed: AtomicBool::new(false),
            table: Mutex::new(SiteTable {
                index: HashMap::new(),
                infos: Vec::new(),
            }),
            chunks: (0..MAX_CHUNKS).map(|_| OnceLock::new()).collect(),
            class_class: OnceLock::new(),
            dropped: AtomicU64::new(0),
            clones: Mutex::new((Vec::new(), MIN_CLONE_PURGE)),
            last_listed: Mutex::new(Vec::new()),
            objects: TrackedObjects::new(),
            started: Started::new(),
        }
    }

    /// How many objects and bytes one recorded allocation of `size` bytes stands for: 1 when
    /// every allocation is recorded; when sampling every `interval` bytes on average, an
    /// object is sampled with probability about size / interval, so it stands for
    /// interval / size objects (at least one).
    fn weight(&self, size: u64) -> u64 {
        if self.interval == 0 || size == 0 || size >= self.interval {
            1
        } else {
            (self.interval + size / 2) / size
        }
    }

    fn counters(&self, site: u32) -> Option<&Counters> {
        let site = site as usize;
        self.chunks
            .get(site / CHUNK)?
            .get()
            .map(|chunk| &chunk[site % CHUNK])
    }

    /// The site of (class, trace), created if new; `None` when the table is full.
    fn site(&self, table: &mut SiteTable, class: Arc<ClassInfo>, trace: Arc<Trace>) -> Option<u32> {
        let key = (class.object_id, trace.serial);
        if let Some(&site) = table.index.get(&key) {
            return Some(site);
        }
        let site = table.infos.len();
        if site >= CHUNK * MAX_CHUNKS {
            return None;
        }
        self.chunks[site / CHUNK].get_or_init(|| (0..CHUNK).map(|_| Counters::default()).collect());
        table.infos.push(SiteInfo { class, trace });
        table.index.insert(key, site as u32);
        Some(site as u32)
    }

    /// The class and trace of a site of the event-fed table (for the heap dump's join).
    fn site_info(&self, site: u32) -> Option<(Arc<ClassInfo>, Arc<Trace>)> {
        let table = self.table.lock().ok()?;
        let info = table.infos.get(site as usize)?;
        Some((info.class.clone(), info.trace.clone()))
    }

    /// Whether the fast mode runs (objects from before counting began are tagged).
    fn is_fast(&self) -> bool {
        self.fast.is_some() && !self.fast_failed.load(Ordering::Acquire)
    }
}

impl Engine for HeapSites {
    fn hooks(&self) -> &'static [Hook] {
        if self.fast.is_some() {
            &[
                Hook::VmInit,
                Hook::ThreadEnd,
                Hook::ClassFileLoad,
                Hook::SampledObjectAlloc,
                Hook::VmObjectAlloc,
                Hook::Probe,
                Hook::Sites,
                Hook::ObjectSites,
            ]
        } else {
            &[
                Hook::VmInit,
                Hook::ThreadEnd,
                Hook::SampledObjectAlloc,
                Hook::Sites,
                Hook::ObjectSites,
            ]
        }
    }

    fn vm_init(&self, ctx: &Context, jni: Jni) {
        if ctx.options.alloc_interval == 0 && !fast_mode(&ctx.options, false) {
            warm_up_sampler(jni);
        }
    }

    /// The ending thread's site cache goes; the fast mode keeps its counts.
    fn thread_end(&self, _ctx: &Context, jni: Jni, thread: jthread) {
        clear_thread_cache(jni);
        if self.started.get().is_some()
            && let Some(fast) = &self.fast
        {
            fast.thread_end(jni, thread);
        }
    }

    fn class_file_load(
        &self,
        _ctx: &Context,
        name: Option<&[u8]>,
        class: &[u8],
    ) -> Option<Vec<u8>> {
        self.fast.as_ref()?.transform(name, class)
    }

    /// After cpu=times: the fast mode counts allocations in what cpu=times made of the class.
    fn class_file_order(&self) -> u8 {
        1
    }

    fn sampled_object_alloc(
        &self,
        ctx: &Context,
        jni: Jni,
        thread: jthread,
        object: jobject,
        class: jclass,
        size: i64,
    ) {
        if alloc_counts::in_agent() {
            return;
        }
        if ctx.is_running() && self.started.get().is_some() {
            self.on_alloc(ctx, jni, thread, object, class, size);
        } else {
            note_early_sample();
        }
    }

    /// VMObjectAlloc, in the allocating thread: the fast mode counts objects the VM made.
    fn vm_object_alloc(&self, ctx: &Context, jni: Jni, object: jobject, class: jclass, size: i64) {
        let Some(fast) = &self.fast else { return };
        if fast.is_running() {
            fast.note_vm_alloc(jni, object);
        }
        if self.started.get().is_some() {
            fast.on_vm_alloc(ctx, jni, class, size, self.class_class.get().copied());
        }
    }

    fn probe(&self, _ctx: &Context, jni: Jni, probe: Probe) -> Option<ProbeAnswer> {
        if let Probe::NativeAlloc { object, kind } = probe
            && let Some(fast) = &self.fast
            && fast.is_running()
        {
            fast.on_native_alloc(self.started.get(), jni, object, kind);
        }
        None
    }

    fn pin_object_sites(&self, ctx: &Context, jni: Jni) -> Option<(Pins, Pinned)> {
        self.pin_objects(ctx, jni)
    }

    fn alloc_sites(&self, ctx: &Context, flags: u16, cutoff: f64) {
        if self.started.get().is_some() {
            self.settle_live_counts(ctx.jvmti, ctx.vm.jni(), flags & FORCE_GC != 0);
            ctx.with_output(|out| self.write_sites(out, flags, cutoff));
        }
    }

    fn heap_summary(&self, ctx: &Context) -> Option<SiteTotals> {
        self.started.get()?;
        Some(self.totals(ctx, ctx.vm.jni()))
    }

    fn set_tracking(&self, ctx: &Context, on: bool) {
        if self.started.get().is_some() {
            HeapSites::set_tracking(self, ctx, on);
        }
    }

    fn clear_sites(&self, _ctx: &Context) {
        if self.started.get().is_some() {
            self.clear();
        }
    }

    fn dump_message(&self) -> &'static str {
        " allocation sites ..."
    }

    fn capabilities(&self, caps: &mut Capabilities) {
        caps.tag_objects = true;
        caps.sampled_object_alloc = true;
        if self.fast.is_some() {
            caps.class_hooks = true;
            caps.early_class_hooks = true;
            caps.vm_object_alloc = true;
            caps.constant_pool = true;
        }
    }

    fn on_load(&self, ctx: &Context) -> Result<(), AgentError> {
        let jvmti = ctx.jvmti;
        if let Some(fast) = &self.fast {
            fast.request_early();
            jvmti
                .set_event(Event::ClassFileLoadHook, true)
                .map_err(|e| {
                    AgentError::loading(format!("can't enable class file load hooks ({e})"))
                })?;
            jvmti.set_event(Event::VmObjectAlloc, true).map_err(|e| {
                AgentError::loading(format!("can't enable VMObjectAlloc events ({e})"))
            })?;
        }
        // Each thread computes its next sampling point from the interval in force when it
        // last sampled, so the interval is set before any thread allocates.
        let interval = i32::try_from(self.interval).unwrap_or(i32::MAX);
        jvmti.set_heap_sampling_interval(interval).map_err(|e| {
            AgentError::loading(format!("can't set the heap sampling interval ({e})"))
        })?;
        jvmti
            .set_event(Event::SampledObjectAlloc, true)
            .map_err(|e| {
                AgentError::loading(format!("can't enable SampledObjectAlloc events ({e})"))
            })
    }

    fn start(&'static self, ctx: &'static Context, jni: Jni) -> Result<(), AgentError> {
        let jvmti = ctx.jvmti;
        if let Some(class) = jni.find_class(c"java/lang/Class") {
            let _ = self.class_class.set(ctx.ids.of(jvmti, class));
            jni.delete_local_ref(class);
        }
        self.objects.enable(ctx);
        if !self.started.set(ctx) {
            return Err(AgentError::starting("heap=sites was started twice"));
        }
        if let Some(fast) = &self.fast
            && let Err(why) = fast.start(ctx, jni)
        {
            self.fast_failed.store(true, Ordering::Release);
            // Nothing counts the VM's allocations now: the samples stand for them.
            let _ = jvmti.set_event(Event::VmObjectAlloc, false);
            return Err(AgentError::starting(format!(
                "{why}; heap=sites estimates from allocations sampled every {} KB instead",
                self.interval / 1024
            )));
        }
        if ctx.options.verbose {
            let mode = match &self.fast {
                Some(fast) => format!(
                    "heap=sites counts allocations in bytecode (sites=fast): {} classes rewritten ({} sites) in {} ms; deeper frames and live objects from allocations sampled every {} KB",
                    fast.classes.load(Ordering::Relaxed),
                    fast.sites.load(Ordering::Relaxed),
                    fast.install_ms.load(Ordering::Relaxed),
                    self.interval / 1024
                ),
                None if self.interval == 0 => {
                    "heap=sites records every allocation and object (sites=exact)".to_string()
                }
                None => format!(
                    "heap=sites samples allocations every {} bytes (alloc_interval)",
                    self.interval
                ),
            };
            eprintln!("HPROF: {mode}");
        }
        Ok(())
    }

    fn stop(&self, ctx: &Context) {
        let _ = ctx.jvmti.set_event(Event::SampledObjectAlloc, false);
        if self.fast.is_some() {
            let _ = ctx.jvmti.set_event(Event::VmObjectAlloc, false);
        }
    }

    fn prepare(&self, ctx: &Context, jni: Option<Jni>) {
        let _progress = crate::progress::Phase::start(
            "counting live objects (full GC, heap walks)",
            "live objects counted",
            Some(ctx.vm),
        );
        self.settle_live_counts(ctx.jvmti, jni, true);
    }

    fn dump(&self, ctx: &Context, _jni: Option<Jni>, out: &mut ProfileOutput) {
        self.write_sites(out, FORCE_GC, ctx.options.cutoff);
    }
}

impl HeapSites {
    /// Turns allocation tracking on or off (the front-end's CONTROL 1 and 2).
    pub fn set_tracking(&self, ctx: &Context, on: bool) {
        let _ = ctx.jvmti.set_event(Event::SampledObjectAlloc, on);
    }

    /// Forgets every count (the front-end's "clear sites"); objects still live are no longer
    /// counted when freed.
    pub fn clear(&self) {
        if let (Some(fast), Some(ctx)) = (&self.fast, self.started.get()) {
            fast.clear(ctx.jvmti, ctx.vm.jni());
        }
        let Ok(table) = self.table.lock() else { return };
        for index in 0..table.infos.len() {
            if let Some(c) = self.counters(index as u32) {
                c.allocated_objects.store(0, Ordering::Relaxed);
                c.allocated_bytes.store(0, Ordering::Relaxed);
                c.live_objects.store(0, Ordering::Relaxed);
                c.live_bytes.store(0, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampled_allocations_stand_for_interval_over_size_objects() {
        let exact = HeapSites::new(0);
        assert_eq!(exact.weight(24), 1);
        let sampled = HeapSites::new(512 * 1024);
        assert_eq!(sampled.weight(1 << 20), 1);
        assert_eq!(sampled.weight(1024), 512);
        assert_eq!(sampled.weight(24), 21845);
    }
}
