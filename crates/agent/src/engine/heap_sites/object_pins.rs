//! Owns heap=sites' side of the join of heap dumps to allocation sites (see
//! [`crate::engine::object_sites`]): the objects it saw allocated, tracked from their
//! allocation on, and their pins for a dump, which heap=dump asks for through the profiler's
//! dispatch ([`crate::engine::Engine::pin_object_sites`]).
//!
//! The objects heap=sites tracks (each sampled allocation; every allocation with
//! `sites=exact`) are held by JNI weak references. Just before the JVM's dumper runs, each one
//! still alive is pinned by a JNI global reference, with its site's class and trace as its
//! group. Objects that were in the heap when `sites=fast` began counting (tagged then) are
//! pinned too, as a group of their own.
//!
//! The tracked list is purged of dead references whenever it doubles; past
//! [`MAX_TRACKED`] entries it keeps every second one (then every fourth...), and the
//! record's stride says what each stands for.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::HeapSites;
use super::alloc_counts::BASELINE_TAG;
use crate::engine::Context;
use crate::engine::object_sites::{Pinned, Pins};
use crate::jvmti::{Jni, WeakRef, jobject};

/// Tracked objects at most (16 bytes each here, a JNI weak reference each in the JVM).
const MAX_TRACKED: usize = 1 << 22;

/// The tracked list is not purged below this length.
const MIN_PURGE: usize = 1 << 16;

/// A tracked object: its weak reference, its site (in heap=sites' table) and the low bits
/// of its allocation's sequence number (for the stride).
#[derive(Debug)]
struct Entry {
    object: WeakRef,
    site: u32,
    seq: u32,
}

#[derive(Debug)]
struct Tracked {
    entries: Vec<Entry>,
    purge_at: usize,
    /// Only allocations whose sequence number is a multiple of this are kept.
    stride: u64,
}

/// The objects heap=sites tracks for the join, when the session writes binary heap dumps.
#[derive(Debug)]
pub(super) struct TrackedObjects {
    enabled: AtomicBool,
    sequence: AtomicU64,
    stride: AtomicU64,
    tracked: Mutex<Tracked>,
}

impl TrackedObjects {
    /// Nothing tracked, tracking off.
    pub(super) fn new() -> TrackedObjects {
        TrackedObjects {
            enabled: AtomicBool::new(false),
            sequence: AtomicU64::new(0),
            stride: AtomicU64::new(1),
            tracked: Mutex::new(Tracked {
                entries: Vec::new(),
                purge_at: MIN_PURGE,
                stride: 1,
            }),
        }
    }

    /// Turns tracking on when the session writes binary heap dumps (and counts allocation
    /// sites, as it does with this engine).
    pub(super) fn enable(&self, ctx: &Context) {
        let on = ctx.options.heap_dump
            && ctx.options.heap_sites
            && ctx.options.format == crate::options::Format::Binary;
        self.enabled.store(on, Ordering::Release);
    }

    /// Whether objects are tracked for the join.
    fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Acquire)
    }

    /// Tracks `object`, allocated at heap=sites' `site` (from its allocation callback).
    pub(super) fn track(&self, jni: Jni, object: jobject, site: u32) {
        if !self.enabled() {
            return;
        }
        let seq = self.sequence.fetch_add(1, Ordering::Relaxed);
        if !seq.is_multiple_of(self.stride.load(Ordering::Relaxed)) {
            return;
        }
        let Ok(mut tracked) = self.tracked.lock() else {
            return;
        };
        if tracked.entries.len() >= tracked.purge_at {
            purge(&mut tracked.entries, jni);
            while tracked.entries.len() >= MAX_TRACKED / 2 {
                // Keep every other one: each now stands for twice as many allocations.
                let stride = tracked.stride * 2;
                tracked.stride = stride;
                self.stride.store(stride, Ordering::Relaxed);
                let entries = std::mem::take(&mut tracked.entries);
                for e in entries {
                    if u64::from(e.seq).is_multiple_of(stride) {
                        tracked.entries.push(e);
                    } else {
                        jni.delete_weak_ref(e.object);
                    }
                }
            }
            tracked.purge_at = (tracked.entries.len() * 2).max(MIN_PURGE);
        }
        if !seq.is_multiple_of(tracked.stride) {
            return;
        }
        let object = jni.new_weak_ref(object);
        tracked.entries.push(Entry {
            object,
            site,
            seq: seq as u32,
        });
    }
}

/// Drops the entries whose object is gone, deleting their references.
fn purge(entries: &mut Vec<Entry>, jni: Jni) {
    for e in std::mem::take(entries) {
        if jni.is_same_object(e.object.get(), std::ptr::null_mut()) {
            jni.delete_weak_ref(e.object);
        } else {
            entries.push(e);
        }
    }
}

impl HeapSites {
    /// Pins the tracked objects still alive (after a full GC, so that the dead ones are not
    /// brought back), and those of the fast mode's baseline, for a dump the JVM writes next.
    /// `None` when nothing is tracked.
    pub(super) fn pin_objects(&self, ctx: &Context, jni: Jni) -> Option<(Pins, Pinned)> {
        self.started.get()?;
        let objects = &self.objects;
        if !objects.enabled() {
            return None;
        }
        let _ = ctx.jvmti.force_garbage_collection();
        // The list is taken out while the JNI calls run: allocating threads keep adding to a
        // new one, merged back after.
        let (entries, stride) = {
            let mut tracked = objects.tracked.lock().ok()?;
            (std::mem::take(&mut tracked.entries), tracked.stride)
        };
        let mut pins = Pins::new(self.interval, stride);
        let mut pinned = Pinned::default();
        let mut group_of_site: rustc_hash::FxHashMap<u32, u32> = rustc_hash::FxHashMap::default();
        let mut alive = Vec::with_capacity(entries.len());
        for e in entries {
            let global = jni.new_global_ref(e.object.get());
            if global.get().is_null() {
                jni.delete_weak_ref(e.object);
                continue;
            }
            let group = match group_of_site.get(&e.site) {
                Some(&g) => Some(g),
                None => self.site_info(e.site).map(|info| {
                    let g = pins.add_group(Some(info));
                    group_of_site.insert(e.site, g);
                    g
                }),
            };
            match group {
                Some(g) => pins.add(&mut pinned, global, g),
                None => jni.delete_global_ref(global),
            }
            alive.push(e);
        }
        if let Ok(mut tracked) = objects.tracked.lock() {
            let added = std::mem::take(&mut tracked.entries);
            tracked.entries = alive;
            tracked.entries.extend(added);
            tracked.purge_at = (tracked.entries.len() * 2).max(MIN_PURGE);
        }
        // What the heap held when the fast mode began counting.
        if self.is_fast() {
            jni.with_local_frame(16, || {
                if let Ok(baseline) = ctx.jvmti.objects_with_tag(BASELINE_TAG) {
                    let g = pins.add_group(None);
                    for object in baseline {
                        let global = jni.new_global_ref(object);
                        jni.delete_local_ref(object);
                        if !global.get().is_null() {
                            pins.add(&mut pinned, global, g);
                        }
                    }
                }
            });
        }
        Some((pins.sorted(), pinned))
    }
}
