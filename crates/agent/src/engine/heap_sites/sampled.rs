//! Owns heap=sites' SampledObjectAlloc callback: the allocation's site found (through a
//! per-thread cache of recent sites) or made, counted and tagged; and the warm-up that makes
//! the VM init thread report its allocations from the first one.

use std::sync::atomic::{AtomicBool, Ordering};

use super::HeapSites;
use super::live::{SIZE_BITS, SIZE_MASK};
use crate::engine::Context;
use crate::jvmti::{Jni, Jvmti, WeakRef, jclass, jobject, jthread, jvmtiFrameInfo};

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
pub(super) fn clear_thread_cache(jni: Jni) {
    let _ = SITE_CACHE.try_with(|cache| {
        if let Ok(mut cache) = cache.try_borrow_mut() {
            for entry in cache.entries.iter_mut().filter_map(Option::take) {
                jni.delete_weak_ref(entry.class);
            }
        }
    });
}

/// Set when an allocation is sampled before the engine runs (see [`warm_up_sampler`]).
static EARLY_SAMPLE: AtomicBool = AtomicBool::new(false);

/// Notes a sampled allocation that came before the engine started.
pub(super) fn note_early_sample() {
    EARLY_SAMPLE.store(true, Ordering::Release);
}

/// Makes the calling thread (the VM init thread, which runs `main`) report every
/// allocation from now on. HotSpot gives each thread a first sampling point drawn with the
/// default 512 KiB interval before an agent can set its own, so the thread allocates
/// throw-away arrays until one is sampled; from then on its interval is the agent's.
pub(super) fn warm_up_sampler(jni: Jni) {
    EARLY_SAMPLE.store(false, Ordering::Release);
    for _ in 0..64 {
        jni.allocate_garbage(1 << 20);
        if EARLY_SAMPLE.load(Ordering::Acquire) {
            return;
        }
    }
}

impl HeapSites {
    /// SampledObjectAlloc, in the allocating thread.
    pub(super) fn on_alloc(
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
        self.objects.track(jni, object, site);
        if counters.clones.load(Ordering::Relaxed) {
            self.track_clone(jni, site, size, object);
            return;
        }
        let tag = (u64::from(site) + 1) << SIZE_BITS | size;
        let _ = jvmti.set_tag(object, tag as i64);
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
