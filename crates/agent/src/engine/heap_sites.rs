//! The `heap=sites` engine: every allocation (or, with `alloc_interval`, a sample of them) is
//! counted against its site, the pair (class, allocation trace), and the objects still live
//! are counted per site when the sites are listed.
//!
//! In the fast mode (`sites=fast`, the default; see [`fast_mode`]) the exact counts come from
//! the allocating bytecode ([`super::alloc_counts`]) and this engine samples allocations every
//! [`FAST_SAMPLE_INTERVAL`] bytes: a listing shares each bytecode site's exact count among the
//! traces sampled at it, and each class's live objects (counted by a heap walk) among its
//! sites. What follows describes the event-fed table, which is all there is with
//! `sites=exact` (every allocation) or `alloc_interval=` (sampled).
//!
//! Allocations arrive through JVMTI SampledObjectAlloc (sampling interval 0 reports each
//! one, whatever made it: `new`, arrays, `clone()`, reflection, JNI, string concatenation).
//! Each tracked object is tagged with its site and size; a listing walks the tagged objects
//! still in the heap (IterateThroughHeap, after a full GC: live means reachable) and counts
//! them by their tags. ObjectFree events are never used: with them enabled, JDK 17+ can
//! deadlock when its Service Thread posts them while another thread flushes them (VM death
//! does) and a safepoint is requested (see docs/compatibility.md).
//!
//! Objects made by `clone()` are the exception: the JVM reports them before it copies the
//! original's header over theirs, and on JDK 21+ (whose tag map finds an object by its
//! identity hash) that copy hides their tags from every lookup. They are tracked by JNI weak
//! references instead, purged of dead ones as they accumulate (at most twice the clones live
//! at the last purge, and 64K).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::engine::alloc_counts::{AllocCounts, BASELINE_TAG, display_name};
use crate::engine::{Context, Engine, Hook, Probe, ProbeAnswer, Started};
use crate::error::AgentError;
use crate::jvmti::{
    Capabilities, Event, Jni, Jvmti, WeakRef, jclass, jobject, jthread, jvmtiFrameInfo,
};
use crate::output::{ProfileOutput, Site, SiteTotals};
use crate::trace_store::{ClassInfo, Trace};

/// Object tags at or above this are allocation tags: `(site + 1) << SIZE_BITS | size`.
/// Smaller tags are the object ids of [`crate::trace_store::ObjectIds`].
const SIZE_BITS: u32 = crate::trace_store::ALLOCATION_TAG_SIZE_BITS;
const SIZE_MASK: u64 = (1 << SIZE_BITS) - 1;
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

/// A clone tracked by a weak reference: its site, its size and the reference.
#[derive(Debug)]
struct TrackedClone {
    site: u32,
    size: u64,
    object: WeakRef,
}

/// Clones tracked at the least before the list is purged of dead ones.
const MIN_CLONE_PURGE: usize = 1 << 16;

/// What a site is, for output.
#[derive(Debug)]
struct SiteInfo {
    class: Arc<ClassInfo>,
    trace: Arc<Trace>,
}

/// A per-thread cache of recent sites, so repeated allocations at one place skip the
/// shared tables and their locks.
struct SiteCache {
    frames: Vec<jvmtiFrameInfo>,
    key: Vec<(usize, i64)>,
    entries: Vec<Option<CachedSite>>,
}

struct CachedSite {
    /// A weak reference to the class: the cache must not keep classes from unloading.
    class: WeakRef,
    thread: u32,
    frames: Vec<(usize, i64)>,
    site: u32,
}

const CACHE_SLOTS: usize = 256;

impl SiteCache {
    fn slot(&self, thread: u32) -> usize {
        let mut h = u64::from(thread).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for &(method, location) in &self.key {
            h = (h.rotate_left(5) ^ method as u64 ^ (location as u64).wrapping_mul(31))
                .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
        (h >> 56) as usize % CACHE_SLOTS
    }
}

thread_local! {
    static SITE_CACHE: std::cell::RefCell<SiteCache> = std::cell::RefCell::new(SiteCache {
        frames: Vec::new(),
        key: Vec::new(),
        entries: (0..CACHE_SLOTS).map(|_| None).collect(),
    });
}

/// Frees the calling thread's site cache (its class references); called as the thread ends.
pub fn clear_thread_cache(jni: Jni) {
    let _ = SITE_CACHE.try_with(|cache| {
        if let Ok(mut cache) = cache.try_borrow_mut() {
            for entry in cache.entries.iter_mut().filter_map(Option::take) {
                jni.delete_weak_ref(entry.class);
            }
        }
    });
}

/// The sites: an index from (class, trace) to a site number, and the counters by number.
#[derive(Debug)]
struct SiteTable {
    index: HashMap<(u64, u32), u32>,
    infos: Vec<SiteInfo>,
}

pub use crate::trace_store::is_allocation_tag;

/// Set when an allocation is sampled before the engine runs (see [`warm_up_sampler`]).
static EARLY_SAMPLE: AtomicBool = AtomicBool::new(false);

/// Notes a sampled allocation that came before the engine started.
pub fn note_early_sample() {
    EARLY_SAMPLE.store(true, Ordering::Release);
}

/// Makes the calling thread (the VM init thread, which runs `main`) report every
/// allocation from now on. HotSpot gives each thread a first sampling point drawn with the
/// default 512 KiB interval before an agent can set its own, so the thread allocates
/// throw-away arrays until one is sampled; from then on its interval is the agent's.
pub fn warm_up_sampler(jni: Jni) {
    EARLY_SAMPLE.store(false, Ordering::Release);
    for _ in 0..64 {
        jni.allocate_garbage(1 << 20);
        if EARLY_SAMPLE.load(Ordering::Acquire) {
            return;
        }
    }
}

/// The engine of this session, once started, for heap=dump's OBJECT SITES
/// ([`crate::engine::object_sites::pin`]), which name the sites of the objects the dump holds.
static ENGINE: crate::engine::Current<(&'static Context, &'static HeapSites)> =
    crate::engine::Current::new();

/// The running engine and its context, if `heap=sites` is on.
pub(crate) fn running() -> Option<(&'static Context, &'static HeapSites)> {
    ENGINE.get()
}

/// Forgets the engine of the session that stopped (see [`crate::engine::forget_running`]).
pub(crate) fn forget_running() {
    ENGINE.clear();
}

/// The sampling interval of the fast mode: its samples give bytecode sites their deeper
/// frames and every site its live estimate.
pub const FAST_SAMPLE_INTERVAL: u64 = 16 * 1024;

/// Whether heap=sites runs in its fast mode (counts in bytecode): `sites=fast` (the
/// default) without `alloc_interval`, loaded with the JVM (a running JVM's
/// `java.lang.Thread` can get no field) and without `-Xshare:on` (which forbids the early
/// class hook that adds it).
pub fn fast_mode(options: &crate::options::Options, late: bool) -> bool {
    options.heap_sites
        && !options.sites_exact
        && options.alloc_interval == 0
        && !late
        && !crate::engine::cpu_times::sharing_required()
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
    pub dropped: AtomicU64,
    /// Objects made by `clone()`, tracked by weak references, and the length at which the list
    /// is next purged of dead ones.
    clones: Mutex<(Vec<TrackedClone>, usize)>,
    /// (class, trace, allocated objects) of every site at the last listing, for incremental
    /// listings.
    last_listed: Mutex<Vec<(u64, u32, u64)>>,
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

    /// SampledObjectAlloc, in the allocating thread.
    pub fn on_alloc(
        &self,
        ctx: &Context,
        jni: Jni,
        thread: jthread,
        object: jobject,
        class: jclass,
        size: i64,
    ) {
        let jvmti = ctx.jvmti;
        let size = size.max(0) as u64 & SIZE_MASK;
        let thread_serial = if ctx.options.thread {
            jvmti.thread_local(thread).unwrap_or(0) as u32
        } else {
            0
        };
        // Most allocations repeat a recent (place, class): the per-thread cache recognises
        // them by their frames and the class reference, without touching the JVM's tag map.
        let site = SITE_CACHE.with(|cache| {
            let mut cache = cache.borrow_mut();
            let cache = &mut *cache;
            let n = jvmti
                .current_stack_trace(ctx.depth(), &mut cache.frames)
                .unwrap_or(0);
            cache.key.clear();
            cache.key.extend(
                cache.frames[..n]
                    .iter()
                    .map(|f| (f.method as usize, f.location)),
            );
            let slot = cache.slot(thread_serial);
            if let Some(entry) = &cache.entries[slot]
                && entry.thread == thread_serial
                && entry.frames == cache.key
                && jni.is_same_object(entry.class.get(), class)
            {
                return Some(Some(entry.site));
            }
            let class_id = ctx.ids.of(jvmti, class);
            if Some(&class_id) == self.class_class.get() {
                // Class objects are not allocation sites (the original counted one per class).
                return None;
            }
            let frames: Vec<_> = cache.frames[..n]
                .iter()
                .map(|f| (f.method, f.location))
                .collect();
            let site = self.site_of(ctx, jni, class, class_id, &frames, thread_serial);
            if let Some(site) = site {
                let entry = CachedSite {
                    class: jni.new_weak_ref(class),
                    thread: thread_serial,
                    frames: cache.key.clone(),
                    site,
                };
                if let Some(old) = cache.entries[slot].replace(entry) {
                    jni.delete_weak_ref(old.class);
                }
            }
            Some(site)
        });
        let site = match site {
            None => return,
            Some(None) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                return;
            }
            Some(Some(site)) => site,
        };
        let Some(counters) = self.counters(site) else {
            return;
        };
        let weight = self.weight(size);
        counters
            .allocated_objects
            .fetch_add(weight, Ordering::Relaxed);
        counters
            .allocated_bytes
            .fetch_add(weight * size, Ordering::Relaxed);
        crate::engine::object_sites::track(jni, object, site);
        if counters.clones.load(Ordering::Relaxed) {
            self.track_clone(jni, site, size, object);
            return;
        }
        let tag = (u64::from(site) + 1) << SIZE_BITS | size;
        let _ = jvmti.set_tag(object, tag as i64);
    }

    /// The class and trace of a site of the event-fed table (for the heap dump's join).
    pub fn site_info(&self, site: u32) -> Option<(Arc<ClassInfo>, Arc<Trace>)> {
        let table = self.table.lock().ok()?;
        let info = table.infos.get(site as usize)?;
        Some((info.class.clone(), info.trace.clone()))
    }

    /// The mean interval in bytes of the sampled allocations (0: every allocation).
    pub fn sampling_interval(&self) -> u64 {
        self.interval
    }

    /// Whether the fast mode runs (objects from before counting began are tagged).
    pub fn is_fast(&self) -> bool {
        self.fast.is_some() && !self.fast_failed.load(Ordering::Acquire)
    }

    /// Tracks a clone by a weak reference; purges dead ones when the list has doubled.
    fn track_clone(&self, jni: Jni, site: u32, size: u64, object: jobject) {
        let Ok(mut clones) = self.clones.lock() else {
            return;
        };
        let (list, purge_at) = &mut *clones;
        if list.len() >= *purge_at {
            purge_clones(list, jni, |_| {});
            *purge_at = (list.len() * 2).max(MIN_CLONE_PURGE);
        }
        list.push(TrackedClone {
            site,
            size,
            object: jni.new_weak_ref(object),
        });
    }

    fn site_of(
        &self,
        ctx: &Context,
        jni: Jni,
        class: jclass,
        class_id: u64,
        frames: &[(crate::jvmti::jmethodID, i64)],
        thread: u32,
    ) -> Option<u32> {
        let (class_info, trace) = {
            let mut traces = ctx.traces.lock().ok()?;
            let trace = traces.intern(ctx.jvmti, jni, &ctx.ids, frames, thread)?;
            (traces.class_info_with_id(ctx.jvmti, class_id, class), trace)
        };
        let clone = frames
            .first()
            .is_some_and(|&(method, _)| is_object_clone(ctx.jvmti, jni, method));
        let mut table = self.table.lock().ok()?;
        let site = self.site(&mut table, class_info, trace)?;
        if clone && let Some(counters) = self.counters(site) {
            counters.clones.store(true, Ordering::Relaxed);
        }
        Some(site)
    }

    /// Counts the objects of every site still live into the live counters: after a full GC
    /// with `collect`, the tagged objects found by a heap walk and the tracked clones whose
    /// weak references still hold. Runs JVM operations that wait for a safepoint: the caller
    /// holds no lock that an event callback may want. `jni` (the calling thread's) purges dead
    /// clones; without it they are not counted.
    pub fn settle_live_counts(&self, jvmti: Jvmti, jni: Option<Jni>, collect: bool) {
        // The fast mode's walk counts objects by class right after the collection, and
        // nothing that calls Java may run in between (see below): every class gets its id
        // (its tag) and the heap's size (for the walk's progress) is read first.
        let mut heap_used = 0;
        if self.fast.is_some()
            && let (Some(jni), Some(ctx)) = (jni, self.started.get())
        {
            if let Ok(classes) = jvmti.loaded_classes() {
                for class in classes {
                    ctx.ids.of(jvmti, class);
                    jni.delete_local_ref(class);
                }
            }
            heap_used = jni.heap_used().unwrap_or(0);
        }
        if collect {
            let _ = jvmti.force_garbage_collection();
        }
        let mut live: Vec<(u64, u64)> = Vec::new();
        let mut add = |site: usize, size: u64| {
            if site >= live.len() {
                live.resize(site + 1, (0, 0));
            }
            let weight = self.weight(size);
            live[site].0 += weight;
            live[site].1 += weight * size;
        };
        let mut site_tag = |tag: i64| {
            let tag = tag as u64;
            let site = tag >> SIZE_BITS;
            if site != 0 {
                add((site - 1) as usize, tag & SIZE_MASK);
            }
        };
        let walked = if self.fast.is_some() {
            // The fast mode also counts every class's live objects, in the same walk, right
            // after the collection: objects allocated in between would add the unused ends of
            // the allocating threads' buffers, which the walk sees as filler int[]s on JDK
            // 11-20 (a JNI call into Java from the dumping thread took a 0.5 MB one). The
            // objects the heap held when counting began are passed over.
            let mut by_class: HashMap<u64, (u64, u64)> = HashMap::new();
            let walked = jvmti.iterate_objects(heap_used, &mut |class, size, tag| {
                if tag == BASELINE_TAG {
                    return;
                }
                if tag != 0 {
                    site_tag(tag);
                }
                if class != 0 {
                    let e = by_class.entry(class as u64).or_default();
                    e.0 += 1;
                    e.1 += size.max(0) as u64;
                }
            });
            if let Ok(mut live) = self.class_live.lock() {
                *live = by_class;
            }
            walked
        } else {
            jvmti.iterate_tagged(&mut |tag, _size| site_tag(tag))
        };
        if walked.is_err() {
            return;
        }
        if let (Some(jni), Ok(mut clones)) = (jni, self.clones.lock()) {
            let (list, purge_at) = &mut *clones;
            purge_clones(list, jni, |c| add(c.site as usize, c.size));
            *purge_at = (list.len() * 2).max(MIN_CLONE_PURGE);
        }
        let sites = self.table.lock().map(|t| t.infos.len()).unwrap_or(0);
        for site in 0..sites.max(live.len()) {
            if let Some(c) = self.counters(site as u32) {
                let (objects, bytes) = live.get(site).copied().unwrap_or((0, 0));
                c.live_objects.store(objects, Ordering::Relaxed);
                c.live_bytes.store(bytes, Ordering::Relaxed);
            }
        }
        if let (Some(fast), Some(jni), Some(ctx), false) = (
            &self.fast,
            jni,
            self.started.get(),
            self.fast_failed.load(Ordering::Acquire),
        ) {
            let sites = jni.with_local_frame(256, || self.compose_fast(ctx, jni, fast));
            if let Ok(mut cached) = self.fast_sites.lock() {
                *cached = sites;
            }
        }
    }

    /// The fast mode's sites: each bytecode site's exact counts, shared among the full
    /// traces sampled at it in proportion to their sampled bytes (a site no sample saw keeps
    /// a one-frame trace), with live counts estimated as the exact count times the sampled
    /// objects' live fraction; and the VM's allocations (VMObjectAlloc), exact by (class,
    /// trace), with the same live estimate.
    fn compose_fast(&self, ctx: &Context, jni: Jni, fast: &AllocCounts) -> Vec<Site> {
        crate::progress::step("composing the sites", None, 0);
        let sampled = self.sampled_snapshot();
        let lineno = ctx.options.lineno;
        type Key = (String, String, String, String, i32);
        let key_of = |s: &Site| -> Option<Key> {
            let top = s.trace.frames.first()?;
            Some((
                s.class.name.clone(),
                top.method.class.name.clone(),
                top.method.name.clone(),
                top.method.signature.clone(),
                if lineno { top.line } else { -1 },
            ))
        };
        let mut groups: HashMap<Key, Vec<&Site>> = HashMap::new();
        let mut sizes: HashMap<String, u64> = HashMap::new();
        let mut by_site: HashMap<(u64, u32), &Site> = HashMap::new();
        for s in &sampled {
            if let Some(k) = key_of(s) {
                groups.entry(k).or_default().push(s);
            }
            if s.array_type == 0 && s.allocated_objects > 0 {
                sizes.insert(
                    s.class.name.clone(),
                    s.allocated_bytes / s.allocated_objects,
                );
            }
            by_site.insert((s.class.object_id, s.trace.serial), s);
        }
        let exact = fast.exact(ctx.jvmti, jni, |sig| sizes.get(&display_name(sig)).copied());
        let mut classes: Option<HashMap<String, crate::jvmti::jclass>> = None;
        let mut out: HashMap<(u64, u32), Site> = HashMap::new();
        // Sites whose live estimate comes from samples of their own, with the variances of
        // their (objects, bytes) estimates.
        let mut estimated: HashMap<(u64, u32), (f64, f64)> = HashMap::new();
        let mut add = |site: Site, variance: Option<(f64, f64)>| {
            if let Some((vo, vb)) = variance {
                let e = estimated
                    .entry((site.class.object_id, site.trace.serial))
                    .or_default();
                e.0 += vo;
                e.1 += vb;
            }
            let e = out
                .entry((site.class.object_id, site.trace.serial))
                .or_insert_with(|| Site {
                    live_bytes: 0,
                    live_objects: 0,
                    allocated_bytes: 0,
                    allocated_objects: 0,
                    ..site.clone()
                });
            e.live_bytes += site.live_bytes;
            e.live_objects += site.live_objects;
            e.allocated_bytes += site.allocated_bytes;
            e.allocated_objects += site.allocated_objects;
        };
        let live_share = |n: u64, live: u64, sampled: u64| -> u64 {
            if sampled == 0 {
                0
            } else {
                ((u128::from(n) * u128::from(live.min(sampled)) + u128::from(sampled) / 2)
                    / u128::from(sampled)) as u64
            }
        };
        for e in &exact {
            let key: Key = (
                display_name(&e.signature),
                display_name(&format!("L{};", e.class)),
                e.method.clone(),
                e.descriptor.clone(),
                if lineno { e.line } else { -1 },
            );
            // Each trace's live estimate: its share of the site's exact counts times the live
            // fraction of the objects sampled with that trace (traces of one site can keep
            // different shares: a helper called from two places), with its variance.
            let pooled = groups.get(&key).map(|m| Pooled::of(m, self.interval));
            let live = |n: u64, b: u64| pooled.map_or((0, 0), |p| p.live(n, b));
            let variance = |n: u64, b: u64| pooled.map(|p| p.variance(n, b));
            match groups.get(&key) {
                Some(matches) if !matches.is_empty() => {
                    let weights: Vec<u64> =
                        matches.iter().map(|s| s.allocated_bytes.max(1)).collect();
                    let objects = apportion(e.objects, &weights);
                    let bytes = apportion(e.bytes, &weights);
                    for ((s, n), b) in matches.iter().zip(objects).zip(bytes) {
                        let own = Pooled::of(&[s], self.interval);
                        let (live_objects, live_bytes) = own.live(n, b);
                        let variance = |n: u64, b: u64| Some(own.variance(n, b));
                        add(
                            Site {
                                class: s.class.clone(),
                                trace: s.trace.clone(),
                                array_type: s.array_type,
                                live_objects,
                                live_bytes,
                                allocated_objects: n,
                                allocated_bytes: b,
                            },
                            variance(n, b),
                        );
                    }
                }
                _ => {
                    let classes =
                        classes.get_or_insert_with(|| AllocCounts::classes_by_signature(ctx.jvmti));
                    if let Some((class, trace)) = fast.site_of(ctx, jni, e, classes) {
                        let (live_objects, live_bytes) = live(e.objects, e.bytes);
                        add(
                            Site {
                                array_type: array_type(&class.name),
                                class,
                                trace,
                                live_objects,
                                live_bytes,
                                allocated_objects: e.objects,
                                allocated_bytes: e.bytes,
                            },
                            variance(e.objects, e.bytes),
                        );
                    } else {
                        self.dropped.fetch_add(e.objects, Ordering::Relaxed);
                    }
                }
            }
        }
        // A lambda's object may also reach VMObjectAlloc (Unsafe.allocateInstance, on some
        // JDKs): its call site counted it already.
        let lambdas: std::collections::HashSet<String> = exact
            .iter()
            .filter(|e| e.signature.contains("$$Lambda"))
            .map(|e| display_name(&e.signature))
            .collect();
        let vm_sites = fast.vm_sites();
        let vm_keys: std::collections::HashSet<(u64, u32)> = vm_sites
            .iter()
            .map(|(c, t, _, _)| (c.object_id, t.serial))
            .collect();
        // What neither bytecode nor VMObjectAlloc sees is estimated from the samples whose
        // allocating frame is a native method (JNI's NewObject and AllocObject, for which
        // HotSpot posts no VMObjectAlloc) or in a hidden class (no class file load hook
        // shows it, and it can't be retransformed).
        for s in &sampled {
            // The natives whose calls from bytecode are counted (AllocCounts::exact) are not
            // estimated again; natives otherwise (JNI's) and hidden classes are.
            let unseen = s.trace.frames.first().is_some_and(|f| {
                (f.method.native
                    && !crate::engine::alloc_counts::counted_native(
                        &f.method.class.name,
                        &f.method.name,
                        &f.method.signature,
                    ))
                    || is_hidden_class(&f.method.class.name)
            });
            if unseen
                && !vm_keys.contains(&(s.class.object_id, s.trace.serial))
                && !lambdas.contains(&s.class.name)
            {
                let v = jvmti_variance(s, self.interval, s.allocated_objects, s.allocated_bytes);
                add(s.clone(), Some(v));
            }
        }
        for (class, trace, n, b) in vm_sites {
            if lambdas.contains(&class.name) {
                continue;
            }
            let s = by_site.get(&(class.object_id, trace.serial));
            add(
                Site {
                    array_type: array_type(&class.name),
                    live_objects: s
                        .map_or(0, |s| live_share(n, s.live_objects, s.allocated_objects)),
                    live_bytes: s.map_or(0, |s| live_share(b, s.live_bytes, s.allocated_bytes)),
                    class,
                    trace,
                    allocated_objects: n,
                    allocated_bytes: b,
                },
                s.map(|s| jvmti_variance(s, self.interval, n, b)),
            );
        }
        if let Some(classes) = classes {
            for class in classes.into_values() {
                jni.delete_local_ref(class);
            }
        }
        let mut sites: Vec<Site> = out.into_values().collect();
        self.share_live_by_class(&mut sites, &estimated);
        sites
    }

    /// Reconciles the sites' live estimates with each class's live objects and bytes,
    /// counted by the walk of [`HeapSites::settle_live_counts`] (what the heap held when
    /// counting began passed over): see [`reconcile`]. A class allocated at one site gets its
    /// exact live count; no site gets more live than it allocated.
    fn share_live_by_class(&self, sites: &mut [Site], estimated: &HashMap<(u64, u32), (f64, f64)>) {
        let mut by_class: HashMap<u64, Vec<usize>> = HashMap::new();
        for (i, s) in sites.iter().enumerate() {
            by_class.entry(s.class.object_id).or_default().push(i);
        }
        // Each class's live objects, counted by the walk of `settle_live_counts`.
        let Ok(live) = self.class_live.lock() else {
            return;
        };
        for (class, members) in by_class {
            let (objects, bytes) = live.get(&class).copied().unwrap_or((0, 0));
            let array = sites[members[0]].array_type != 0;
            if let [only] = members[..] {
                // One site: the class's live objects are its (those of allocations no counter
                // saw aside, which the cap bounds).
                let s = &mut sites[only];
                s.live_objects = objects.min(s.allocated_objects);
                s.live_bytes = bytes.min(s.allocated_bytes);
            } else {
                let variance: Vec<Option<(f64, f64)>> = members
                    .iter()
                    .map(|&i| {
                        estimated
                            .get(&(sites[i].class.object_id, sites[i].trace.serial))
                            .copied()
                    })
                    .collect();
                let estimates = |estimate: &dyn Fn(&Site) -> u64,
                                 allocated: &dyn Fn(&Site) -> u64,
                                 var: &dyn Fn((f64, f64)) -> f64|
                 -> Vec<(u64, f64, u64)> {
                    members
                        .iter()
                        .zip(&variance)
                        .map(|(&i, v)| {
                            let s = &sites[i];
                            match v {
                                Some(v) => (estimate(s), var(*v), allocated(s)),
                                None => (0, f64::INFINITY, allocated(s)),
                            }
                        })
                        .collect()
                };
                if array {
                    // Arrays: their bytes (what SITES ranks by) reconciled, and their objects
                    // following at each site's mean size.
                    let live_bytes = reconcile(
                        bytes,
                        &estimates(&|s| s.live_bytes, &|s| s.allocated_bytes, &|v| v.1),
                    );
                    for (&i, b) in members.iter().zip(live_bytes) {
                        let s = &mut sites[i];
                        s.live_bytes = b;
                        s.live_objects = if s.allocated_bytes == 0 {
                            0
                        } else {
                            (((u128::from(b) * u128::from(s.allocated_objects)
                                + u128::from(s.allocated_bytes) / 2)
                                / u128::from(s.allocated_bytes))
                                as u64)
                                .min(s.allocated_objects)
                        };
                    }
                } else {
                    let live_objects = reconcile(
                        objects,
                        &estimates(&|s| s.live_objects, &|s| s.allocated_objects, &|v| v.0),
                    );
                    for (&i, o) in members.iter().zip(live_objects) {
                        sites[i].live_objects = o;
                    }
                }
            }
            if !array {
                // An instance's bytes follow its objects at the class's size.
                for &i in &members {
                    let s = &mut sites[i];
                    s.live_bytes = if s.allocated_objects == 0 {
                        0
                    } else {
                        ((u128::from(s.live_objects) * u128::from(s.allocated_bytes))
                            / u128::from(s.allocated_objects)) as u64
                    };
                }
            }
        }
    }
}

/// The sampled allocations of one bytecode site (all its traces): what they stand for, all
/// and live, and how many were sampled.
#[derive(Debug, Clone, Copy)]
struct Pooled {
    objects: u64,
    bytes: u64,
    live_objects: u64,
    live_bytes: u64,
    samples: f64,
}

impl Pooled {
    fn of(sites: &[&Site], interval: u64) -> Pooled {
        let mut p = Pooled {
            objects: 0,
            bytes: 0,
            live_objects: 0,
            live_bytes: 0,
            samples: 0.0,
        };
        for s in sites {
            p.objects += s.allocated_objects;
            p.bytes += s.allocated_bytes;
            p.live_objects += s.live_objects.min(s.allocated_objects);
            p.live_bytes += s.live_bytes.min(s.allocated_bytes);
            // Objects smaller than the interval stand for interval / size each; larger ones
            // for themselves.
            let mean = s.allocated_bytes / s.allocated_objects.max(1);
            p.samples += if mean >= interval {
                s.allocated_objects as f64
            } else {
                s.allocated_bytes as f64 / interval.max(1) as f64
            };
        }
        p.samples = p.samples.max(1.0);
        p
    }

    fn fraction(part: u64, whole: u64) -> f64 {
        if whole == 0 {
            0.0
        } else {
            part.min(whole) as f64 / whole as f64
        }
    }

    /// Live (objects, bytes) of `n` objects and `b` bytes allocated at the site.
    fn live(&self, n: u64, b: u64) -> (u64, u64) {
        (
            (n as f64 * Pooled::fraction(self.live_objects, self.objects)).round() as u64,
            (b as f64 * Pooled::fraction(self.live_bytes, self.bytes)).round() as u64,
        )
    }

    /// The variances of [`Pooled::live`]: n² p (1 − p) / samples.
    fn variance(&self, n: u64, b: u64) -> (f64, f64) {
        (
            sampled_variance(
                n,
                Pooled::fraction(self.live_objects, self.objects),
                self.samples,
            ),
            sampled_variance(
                b,
                Pooled::fraction(self.live_bytes, self.bytes),
                self.samples,
            ),
        )
    }
}

/// The variance of `n` × a live fraction `p` estimated from `samples` sampled objects:
/// n² p̃ (1 − p̃) / samples, with p̃ the fraction given half a sample each way (so that no
/// sample live, or none dead, which a small fraction of many samples can show by chance,
/// still leaves room for a few).
fn sampled_variance(n: u64, p: f64, samples: f64) -> f64 {
    let smoothed = (p * samples + 0.5) / (samples + 1.0);
    (n as f64).powi(2) * smoothed * (1.0 - smoothed) / samples
}

/// The variance of a live estimate from the sampled allocations of `s` (sampled every
/// `interval` bytes), scaled to `n` objects and `b` bytes.
fn jvmti_variance(s: &Site, interval: u64, n: u64, b: u64) -> (f64, f64) {
    let samples = Pooled::of(&[s], interval).samples;
    (
        sampled_variance(
            n,
            Pooled::fraction(s.live_objects, s.allocated_objects),
            samples,
        ),
        sampled_variance(
            b,
            Pooled::fraction(s.live_bytes, s.allocated_bytes),
            samples,
        ),
    )
}

/// Adjusts the sites' estimates (estimate, variance, allocated) of one class so they add up
/// to the class's `total`, counted exactly: the difference is spread over the sites in
/// proportion to their estimates' variances (the least squares adjustment), so a site
/// whose samples were all live or all dead takes little of it, and a site no sample saw
/// (infinite variance) takes what the others leave. No site goes below 0 or above what it
/// allocated. A class total above the estimates by more than the unseen sites can hold and
/// three standard deviations of the sampled estimates' sum is cut to that: the rest are
/// objects no site counted (the VM's own, made after counting began).
fn reconcile(total: u64, sites: &[(u64, f64, u64)]) -> Vec<u64> {
    let n = sites.len();
    let cap: Vec<f64> = sites.iter().map(|s| s.2 as f64).collect();
    let mut x: Vec<f64> = sites.iter().map(|s| (s.0 as f64).min(s.2 as f64)).collect();
    let mut total = (total as f64).min(cap.iter().sum());
    let estimated: f64 = x.iter().sum();
    if total > estimated {
        // More live than the estimates say: the sites no sample saw may hold it, and the
        // sampled ones up to three standard deviations of their sum (sampling noise); the
        // rest was made by allocations no site counted (the VM's own objects, made after
        // counting began) and is left out rather than given to the largest, least certain
        // sites.
        let unseen: f64 = (0..n)
            .filter(|&i| sites[i].1.is_infinite())
            .map(|i| cap[i] - x[i])
            .sum();
        let spread: f64 = sites
            .iter()
            .map(|s| s.1)
            .filter(|v| v.is_finite())
            .sum::<f64>()
            .sqrt();
        total = total.min(estimated + unseen + 3.0 * spread);
    }
    let unseen = sites.iter().any(|s| s.1.is_infinite());
    for round in 0..2 * n + 2 {
        let diff = total - x.iter().sum::<f64>();
        if diff.abs() < 0.5 {
            break;
        }
        let room = |i: usize| {
            if diff > 0.0 {
                cap[i] - x[i] > 1e-9
            } else {
                x[i] > 1e-9
            }
        };
        // Weights: infinite variances first (sites no sample saw, by what they
        // allocated), then the variances, then (none left) the estimates or the room.
        let mut w: Vec<f64> = (0..n)
            .map(|i| match sites[i].1 {
                _ if !room(i) => 0.0,
                v if v.is_infinite() => cap[i],
                _ if unseen && (0..n).any(|j| sites[j].1.is_infinite() && room(j)) => 0.0,
                v => v,
            })
            .collect();
        if w.iter().sum::<f64>() <= 0.0 || round > n {
            w = (0..n)
                .map(|i| {
                    if !room(i) {
                        0.0
                    } else if diff > 0.0 {
                        cap[i] - x[i]
                    } else {
                        x[i]
                    }
                })
                .collect();
        }
        let sum: f64 = w.iter().sum();
        if sum <= 0.0 {
            break;
        }
        for i in 0..n {
            x[i] = (x[i] + diff * w[i] / sum).clamp(0.0, cap[i]);
        }
    }
    // Whole numbers adding up to the total.
    let whole = total.round() as u64;
    let floors: Vec<u64> = x.iter().map(|v| v.floor() as u64).collect();
    let mut out = floors.clone();
    let mut left = whole.saturating_sub(floors.iter().sum());
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        (x[b] - x[b].floor())
            .partial_cmp(&(x[a] - x[a].floor()))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    for i in order {
        if left == 0 {
            break;
        }
        if out[i] < sites[i].2 {
            out[i] += 1;
            left -= 1;
        }
    }
    out
}

/// Drops the clones whose weak references no longer hold (deleting the references) and calls
/// `alive` with each of the others.
fn purge_clones(list: &mut Vec<TrackedClone>, jni: Jni, mut alive: impl FnMut(&TrackedClone)) {
    for clone in std::mem::take(list) {
        if jni.is_same_object(clone.object.get(), std::ptr::null_mut()) {
            jni.delete_weak_ref(clone.object);
        } else {
            alive(&clone);
            list.push(clone);
        }
    }
}

/// Whether a class name (`java.lang.invoke.LambdaForm$MH.0x0000000800c01000` on JDK 15+,
/// `…$MH/0x0000000800c01000` on JDK 11's anonymous classes) is a hidden class's.
fn is_hidden_class(name: &str) -> bool {
    name.rsplit(['.', '/'])
        .next()
        .is_some_and(|last| last.starts_with("0x") && last.len() > 2)
}

/// Whether `method` is `java.lang.Object.clone()`.
fn is_object_clone(jvmti: Jvmti, jni: Jni, method: crate::jvmti::jmethodID) -> bool {
    if !matches!(jvmti.method_name(method), Ok((name, _)) if name == "clone") {
        return false;
    }
    let Ok(class) = jvmti.method_class(method) else {
        return false;
    };
    let object = jvmti
        .class_signature(class)
        .is_ok_and(|s| s == "Ljava/lang/Object;");
    jni.delete_local_ref(class);
    object
}

/// The element type code of an array class name (`int[]` → 10, `String[]` → 2), 0 otherwise.
fn array_type(name: &str) -> u8 {
    let Some(element) = name.strip_suffix("[]") else {
        return 0;
    };
    match element {
        "boolean" => 4,
        "char" => 5,
        "float" => 6,
        "double" => 7,
        "byte" => 8,
        "short" => 9,
        "int" => 10,
        "long" => 11,
        _ => 2,
    }
}

/// Shares `total` among `weights` in proportion, by largest remainders: the shares add up
/// to `total` exactly.
fn apportion(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u128 = weights.iter().map(|&w| u128::from(w)).sum();
    if sum == 0 || weights.is_empty() {
        let mut out = vec![0; weights.len()];
        if let Some(first) = out.first_mut() {
            *first = total;
        }
        return out;
    }
    let mut shares: Vec<(u64, u128, usize)> = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let p = u128::from(total) * u128::from(w);
            ((p / sum) as u64, p % sum, i)
        })
        .collect();
    let given: u64 = shares.iter().map(|s| s.0).sum();
    let mut left = total - given;
    let mut order: Vec<usize> = (0..shares.len()).collect();
    order.sort_by(|&a, &b| shares[b].1.cmp(&shares[a].1).then(a.cmp(&b)));
    for i in order {
        if left == 0 {
            break;
        }
        shares[i].0 += 1;
        left -= 1;
    }
    shares.into_iter().map(|s| s.0).collect()
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
            ]
        } else {
            &[
                Hook::VmInit,
                Hook::ThreadEnd,
                Hook::SampledObjectAlloc,
                Hook::Sites,
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
        if crate::engine::alloc_counts::in_agent() {
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
        if self.fast.is_some() {
            crate::engine::alloc_counts::request_early();
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
        if !self.started.set(ctx) || !ENGINE.set((ctx, self)) {
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

/// ALLOC SITES flags (the front-end's command and the binary record).
pub const INCREMENTAL: u16 = 0x1;
/// Order by allocated bytes instead of live bytes.
pub const BY_ALLOCATION: u16 = 0x2;
/// Collect garbage first.
pub const FORCE_GC: u16 = 0x4;

impl HeapSites {
    /// Every site with its counts now (the fast mode's as of the last count; the sampled
    /// estimates if the fast mode could not start).
    fn snapshot(&self) -> Vec<Site> {
        if self.fast.is_some() && !self.fast_failed.load(Ordering::Acquire) {
            return self
                .fast_sites
                .lock()
                .map(|s| s.clone())
                .unwrap_or_default();
        }
        self.sampled_snapshot()
    }

    /// Every site of the event-fed table (every allocation, or the sampled ones, weighted).
    fn sampled_snapshot(&self) -> Vec<Site> {
        let Ok(table) = self.table.lock() else {
            return Vec::new();
        };
        table
            .infos
            .iter()
            .enumerate()
            .filter_map(|(index, info)| {
                let c = self.counters(index as u32)?;
                Some(Site {
                    array_type: array_type(&info.class.name),
                    class: info.class.clone(),
                    trace: info.trace.clone(),
                    live_bytes: c.live_bytes.load(Ordering::Relaxed),
                    live_objects: c.live_objects.load(Ordering::Relaxed),
                    allocated_bytes: c.allocated_bytes.load(Ordering::Relaxed),
                    allocated_objects: c.allocated_objects.load(Ordering::Relaxed),
                })
            })
            .collect()
    }

    /// Totals over every site (live counts brought up to date, without a GC).
    pub fn totals(&self, ctx: &Context, jni: Option<Jni>) -> SiteTotals {
        self.settle_live_counts(ctx.jvmti, jni, false);
        let sites = self.snapshot();
        SiteTotals {
            live_bytes: sites.iter().map(|s| s.live_bytes).sum(),
            live_objects: sites.iter().map(|s| s.live_objects).sum(),
            allocated_bytes: sites.iter().map(|s| s.allocated_bytes).sum(),
            allocated_objects: sites.iter().map(|s| s.allocated_objects).sum(),
        }
    }

    /// Writes the sites: by live bytes, or by allocated bytes with [`BY_ALLOCATION`]; only
    /// those that allocated since the last listing with [`INCREMENTAL`]; cut off at `cutoff` of
    /// the ordering column's total. The caller settled the live counts first (after a full GC
    /// for [`FORCE_GC`], which the flags then report) without the output's lock.
    pub fn write_sites(&self, out: &mut ProfileOutput, flags: u16, cutoff: f64) {
        let mut sites = self.snapshot();
        let totals = SiteTotals {
            live_bytes: sites.iter().map(|s| s.live_bytes).sum(),
            live_objects: sites.iter().map(|s| s.live_objects).sum(),
            allocated_bytes: sites.iter().map(|s| s.allocated_bytes).sum(),
            allocated_objects: sites.iter().map(|s| s.allocated_objects).sum(),
        };
        if let Ok(mut last) = self.last_listed.lock() {
            let previous = std::mem::take(&mut *last);
            *last = sites
                .iter()
                .map(|s| (s.class.object_id, s.trace.serial, s.allocated_objects))
                .collect();
            if flags & INCREMENTAL != 0 {
                let seen: HashMap<(u64, u32), u64> =
                    previous.into_iter().map(|(c, t, n)| ((c, t), n)).collect();
                sites.retain(|s| {
                    seen.get(&(s.class.object_id, s.trace.serial)) != Some(&s.allocated_objects)
                });
            }
        }
        let by_allocation = flags & BY_ALLOCATION != 0;
        let key = |s: &Site| {
            if by_allocation {
                s.allocated_bytes
            } else {
                s.live_bytes
            }
        };
        let total = if by_allocation {
            totals.allocated_bytes
        } else {
            totals.live_bytes
        };
        sites.sort_by(|a, b| {
            key(b)
                .cmp(&key(a))
                .then(b.allocated_bytes.cmp(&a.allocated_bytes))
                .then(a.trace.serial.cmp(&b.trace.serial))
                .then_with(|| a.class.name.cmp(&b.class.name))
        });
        // With nothing in the ordering column the cutoff cannot apply and every site is
        // listed (as the original's 0/0 ratio did).
        let shown = sites
            .iter()
            .position(|s| total > 0 && (key(s) as f64 / total as f64) < cutoff)
            .unwrap_or(sites.len());
        sites.truncate(shown);
        out.write(|w| w.sites(&sites, &totals, cutoff, flags));
    }

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
    fn array_types_follow_the_binary_format() {
        assert_eq!(array_type("java.lang.String"), 0);
        assert_eq!(array_type("int[]"), 10);
        assert_eq!(array_type("byte[]"), 8);
        assert_eq!(array_type("java.lang.String[]"), 2);
        assert_eq!(array_type("int[][]"), 2);
    }

    #[test]
    fn hidden_class_names_are_told_apart() {
        assert!(is_hidden_class(
            "java.lang.invoke.LambdaForm$MH.0x0000000800c01000"
        ));
        assert!(is_hidden_class("Foo$$Lambda$14/0x0000000800066840"));
        assert!(!is_hidden_class("java.lang.String"));
        assert!(!is_hidden_class("Foo$0x"));
    }

    #[test]
    fn reconciled_estimates_add_up_and_certain_ones_stay() {
        // All live (variance 0), none live (0), two uncertain: the difference goes to the
        // uncertain ones by variance, up to three standard deviations (300) above.
        let sites = [
            (1000, 0.0, 1000),
            (0, 0.0, 1000),
            (300, 9000.0, 1000),
            (500, 1000.0, 1000),
        ];
        assert_eq!(reconcile(1700, &sites), vec![1000, 0, 210, 490]);
        assert_eq!(reconcile(1900, &sites), vec![1000, 0, 390, 510]);
        assert_eq!(reconcile(2500, &sites), vec![1000, 0, 570, 530]);
        // A site no sample saw takes what the others leave, capped at what it allocated; the
        // sampled ones take up to three standard deviations (3 √5) more, the rest is left out.
        let sites = [(100, 4.0, 200), (0, f64::INFINITY, 50), (10, 1.0, 100)];
        let out = reconcile(250, &sites);
        assert_eq!(out.iter().sum::<u64>(), 167, "{out:?}");
        assert_eq!(out[1], 50);
        assert_eq!(reconcile(10_000, &sites), out);
        // Up to the unseen site's room, the whole class total is taken.
        let out = reconcile(150, &sites);
        assert_eq!(out, vec![100, 40, 10]);
        // Too many estimated: taken back from the uncertain ones.
        let out = reconcile(1000, &[(1000, 0.0, 1000), (200, 4.0, 1000)]);
        assert_eq!(out, vec![1000, 0]);
    }

    #[test]
    fn sampled_allocations_stand_for_interval_over_size_objects() {
        let exact = HeapSites::new(0);
        assert_eq!(exact.weight(24), 1);
        let sampled = HeapSites::new(512 * 1024);
        assert_eq!(sampled.weight(1 << 20), 1);
        assert_eq!(sampled.weight(1024), 512);
        assert_eq!(sampled.weight(24), 21845);
    }

    #[test]
    fn shares_add_up_to_the_exact_total() {
        assert_eq!(apportion(10, &[1, 1, 1]), vec![4, 3, 3]);
        assert_eq!(apportion(100_000, &[3, 1]), vec![75_000, 25_000]);
        assert_eq!(apportion(7, &[0, 0]), vec![7, 0]);
        assert_eq!(apportion(0, &[5, 2]), vec![0, 0]);
        let shares = apportion(1_000_003, &[17, 4, 9, 1, 1]);
        assert_eq!(shares.iter().sum::<u64>(), 1_000_003);
    }

    #[test]
    fn tags_carry_the_site_and_size() {
        let tag = ((7u64 + 1) << SIZE_BITS) | 48;
        assert_eq!(tag >> SIZE_BITS, 8);
        assert_eq!(tag & SIZE_MASK, 48);
        assert!(is_allocation_tag(tag as i64));
        // Object ids (small tags) are never taken for allocation tags.
        assert!(!is_allocation_tag(0x5000_0001));
    }
}
