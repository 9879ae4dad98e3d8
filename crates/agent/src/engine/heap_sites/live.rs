//! Owns the tags and live objects of the event-fed table: each object heap=sites records is
//! tagged with its site and size, and a listing counts the tagged objects still live.
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
use std::sync::atomic::Ordering;

use super::HeapSites;
use super::alloc_counts::BASELINE_TAG;
use crate::jvmti::{Jni, Jvmti, WeakRef, jobject};

/// Object tags at or above this are allocation tags: `(site + 1) << SIZE_BITS | size`.
/// Smaller tags are the object ids of [`crate::trace_store::ObjectIds`].
pub(super) const SIZE_BITS: u32 = crate::trace_store::ALLOCATION_TAG_SIZE_BITS;
pub(super) const SIZE_MASK: u64 = (1 << SIZE_BITS) - 1;

/// A clone tracked by a weak reference: its site, its size and the reference.
#[derive(Debug)]
pub(super) struct TrackedClone {
    site: u32,
    size: u64,
    object: WeakRef,
}

/// Clones tracked at the least before the list is purged of dead ones.
pub(super) const MIN_CLONE_PURGE: usize = 1 << 16;

impl HeapSites {
    /// Tracks a clone by a weak reference; purges dead ones when the list has doubled.
    pub(super) fn track_clone(&self, jni: Jni, site: u32, size: u64, object: jobject) {
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

    /// Counts the objects of every site still live into the live counters: after a full GC
    /// with `collect`, the tagged objects found by a heap walk and the tracked clones whose
    /// weak references still hold. Runs JVM operations that wait for a safepoint: the caller
    /// holds no lock that an event callback may want. `jni` (the calling thread's) purges dead
    /// clones; without it they are not counted.
    pub(super) fn settle_live_counts(&self, jvmti: Jvmti, jni: Option<Jni>, collect: bool) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace_store::is_allocation_tag;

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
