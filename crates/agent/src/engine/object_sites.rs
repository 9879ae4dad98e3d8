//! Owns the join of the agent's heap dumps to allocation sites (`heap=all`, or `heap=dump`
//! with `heap=sites`, binary output): which object of the dump `heap=sites` saw allocated
//! where.
//!
//! HotSpot's heap dumper writes no allocation site, and object addresses change with every
//! collection (the dump starts with one). So the objects heap=sites tracks (each sampled
//! allocation; every allocation with `sites=exact`) are held by JNI weak references from
//! their allocation on. Just before the JVM's dumper runs, each one still alive is pinned by
//! a JNI global reference: the dumper writes every global reference as a ROOT JNI GLOBAL
//! record holding the object's id *at the dump* and the address of the reference's slot,
//! which no collection moves. The merge ([`super::heap_merge`]) takes those roots out of the
//! output and writes OBJECT SITES records instead (object ids by class and trace serial);
//! the pins are deleted as soon as the dumper returns. Objects that were in the heap when
//! `sites=fast` began counting (tagged then) are pinned too, as a group of their own.
//!
//! The tracked list is purged of dead references whenever it doubles; past
//! [`MAX_TRACKED`] entries it keeps every second one (then every fourth...), and the
//! record's stride says what each stands for.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::engine::Context;
use crate::jvmti::{GlobalRef, Jni, WeakRef, jobject};

/// Tracked objects at most (16 bytes each here, a JNI weak reference each in the JVM).
pub const MAX_TRACKED: usize = 1 << 22;

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

static ENABLED: AtomicBool = AtomicBool::new(false);
static SEQUENCE: AtomicU64 = AtomicU64::new(0);
static STRIDE: AtomicU64 = AtomicU64::new(1);
static TRACKED: Mutex<Tracked> = Mutex::new(Tracked {
    entries: Vec::new(),
    purge_at: MIN_PURGE,
    stride: 1,
});

/// Turns tracking on when the session writes binary heap dumps and counts allocation sites.
pub fn enable(ctx: &Context) {
    let on = ctx.options.heap_dump
        && ctx.options.heap_sites
        && ctx.options.format == crate::options::Format::Binary;
    ENABLED.store(on, Ordering::Release);
}

/// Whether objects are tracked for the join.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Acquire)
}

/// Tracks `object`, allocated at heap=sites' `site` (from its allocation callback).
pub fn track(jni: Jni, object: jobject, site: u32) {
    if !enabled() {
        return;
    }
    let seq = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    if !seq.is_multiple_of(STRIDE.load(Ordering::Relaxed)) {
        return;
    }
    let Ok(mut tracked) = TRACKED.lock() else {
        return;
    };
    if tracked.entries.len() >= tracked.purge_at {
        purge(&mut tracked.entries, jni);
        while tracked.entries.len() >= MAX_TRACKED / 2 {
            // Keep every other one: each now stands for twice as many allocations.
            let stride = tracked.stride * 2;
            tracked.stride = stride;
            STRIDE.store(stride, Ordering::Relaxed);
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

/// A group of pinned objects: a site's class and trace, or `None` for the objects that were
/// in the heap before counting began (the OBJECT SITES records' groups).
pub type Group = crate::output::ObjectSiteGroup;

/// The objects pinned for one dump: the slot address of each pin with its group, sorted by
/// address; what the OBJECT SITES records say of the sampling.
#[derive(Debug, Default)]
pub struct Pins {
    slots: Vec<(u64, u32)>,
    /// The groups, by index.
    pub groups: Vec<Group>,
    /// OBJECT SITES flags.
    pub flags: u32,
    /// The sampling interval in bytes (0: every allocation).
    pub interval: u32,
    /// What each pinned object stands for.
    pub stride: u32,
}

/// The global references of [`pin`], to delete once the JVM has written its dump.
#[derive(Debug, Default)]
pub struct Pinned(Vec<GlobalRef>);

impl Pinned {
    /// Deletes the references.
    pub fn release(self, jni: Jni) {
        for g in self.0 {
            jni.delete_global_ref(g);
        }
    }
}

impl Pins {
    /// The group of the pin whose slot is at `address`, if it is one of these.
    pub fn group(&self, address: u64) -> Option<u32> {
        self.slots
            .binary_search_by_key(&address, |s| s.0)
            .ok()
            .map(|i| self.slots[i].1)
    }

    /// Whether nothing was pinned.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

/// Pins the tracked objects still alive (after a full GC, so that the dead ones are not
/// brought back), and those of the fast mode's baseline, for a dump the JVM writes next.
/// `None` when nothing is tracked.
pub fn pin(ctx: &Context, jni: Jni) -> Option<(Pins, Pinned)> {
    let (_, sites) = crate::engine::heap_sites::running()?;
    if !enabled() {
        return None;
    }
    let _ = ctx.jvmti.force_garbage_collection();
    // The list is taken out while the JNI calls run: allocating threads keep adding to a
    // new one, merged back after.
    let (entries, stride) = {
        let mut tracked = TRACKED.lock().ok()?;
        (std::mem::take(&mut tracked.entries), tracked.stride)
    };
    let mut pins = Pins {
        interval: u32::try_from(sites.sampling_interval()).unwrap_or(u32::MAX),
        stride: u32::try_from(stride).unwrap_or(u32::MAX),
        ..Pins::default()
    };
    pins.flags = if pins.interval > 0 {
        hprof_format::ObjectSites::SAMPLED
    } else {
        0
    };
    let mut globals = Vec::new();
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
            None => sites.site_info(e.site).map(|info| {
                pins.groups.push(Some(info));
                let g = pins.groups.len() as u32 - 1;
                group_of_site.insert(e.site, g);
                g
            }),
        };
        match group {
            Some(g) => {
                pins.slots.push((global.slot_address(), g));
                globals.push(global);
            }
            None => jni.delete_global_ref(global),
        }
        alive.push(e);
    }
    if let Ok(mut tracked) = TRACKED.lock() {
        let added = std::mem::take(&mut tracked.entries);
        tracked.entries = alive;
        tracked.entries.extend(added);
        tracked.purge_at = (tracked.entries.len() * 2).max(MIN_PURGE);
    }
    // What the heap held when the fast mode began counting.
    if sites.is_fast() {
        jni.with_local_frame(16, || {
            if let Ok(objects) = ctx
                .jvmti
                .objects_with_tag(crate::engine::heap_sites::alloc_counts::BASELINE_TAG)
            {
                pins.groups.push(None);
                let g = pins.groups.len() as u32 - 1;
                for object in objects {
                    let global = jni.new_global_ref(object);
                    jni.delete_local_ref(object);
                    if !global.get().is_null() {
                        pins.slots.push((global.slot_address(), g));
                        globals.push(global);
                    }
                }
            }
        });
    }
    pins.slots.sort_unstable();
    Some((pins, Pinned(globals)))
}

/// The objects of a merged dump that were pinned, as OBJECT SITES groups: (group, object
/// ids).
pub fn groups_of(joined: &mut [(u64, u32)]) -> Vec<(u32, Vec<u64>)> {
    joined.sort_unstable_by_key(|&(id, g)| (g, id));
    let mut out: Vec<(u32, Vec<u64>)> = Vec::new();
    for &(id, g) in joined.iter() {
        match out.last_mut() {
            Some((last, ids)) if *last == g => ids.push(id),
            _ => out.push((g, vec![id])),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_objects_are_grouped_by_site() {
        let mut joined = vec![(0x30, 1), (0x10, 0), (0x20, 1), (0x18, 0)];
        assert_eq!(
            groups_of(&mut joined),
            vec![(0, vec![0x10, 0x18]), (1, vec![0x20, 0x30])]
        );
        let pins = Pins {
            slots: vec![(0x1000, 0), (0x1008, 2)],
            ..Pins::default()
        };
        assert_eq!(pins.group(0x1008), Some(2));
        assert_eq!(pins.group(0x1010), None);
    }
}
