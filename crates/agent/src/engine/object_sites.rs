//! Owns the join of the agent's heap dumps to allocation sites (`heap=all`, or `heap=dump`
//! with `heap=sites`, binary output): the objects pinned for a dump, by the engine that knows
//! where they were allocated ([`super::Engine::pin_object_sites`], heap=sites' in
//! [`super::heap_sites`]), and their groups, which the merge ([`super::heap_merge`]) turns
//! into OBJECT SITES records.
//!
//! HotSpot's heap dumper writes no allocation site, and object addresses change with every
//! collection (the dump starts with one). So just before the JVM's dumper runs, each object
//! to name is pinned by a JNI global reference: the dumper writes every global reference as a
//! ROOT JNI GLOBAL record holding the object's id *at the dump* and the address of the
//! reference's slot, which no collection moves. The merge takes those roots out of the output
//! and writes OBJECT SITES records instead (object ids by class and trace serial); the pins
//! are deleted as soon as the dumper returns.

use crate::jvmti::{GlobalRef, Jni};

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

/// The global references of the pins, to delete once the JVM has written its dump.
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

    /// No pins yet, for objects each standing for `stride` allocations, sampled every
    /// `interval` bytes (0: every allocation).
    pub fn new(interval: u64, stride: u64) -> Pins {
        let interval = u32::try_from(interval).unwrap_or(u32::MAX);
        Pins {
            flags: if interval > 0 {
                hprof_format::ObjectSites::SAMPLED
            } else {
                0
            },
            interval,
            stride: u32::try_from(stride).unwrap_or(u32::MAX),
            ..Pins::default()
        }
    }

    /// Adds a group; its index.
    pub fn add_group(&mut self, group: Group) -> u32 {
        self.groups.push(group);
        self.groups.len() as u32 - 1
    }

    /// Pins an object of group `group` by `global`, kept in `pinned` until the dump is written.
    pub fn add(&mut self, pinned: &mut Pinned, global: GlobalRef, group: u32) {
        self.slots.push((global.slot_address(), group));
        pinned.0.push(global);
    }

    /// Done pinning: the pins in the order [`Pins::group`] searches.
    pub fn sorted(mut self) -> Pins {
        self.slots.sort_unstable();
        self
    }
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

    #[test]
    fn sampled_pins_say_so_and_number_their_groups() {
        let mut pins = Pins::new(16 * 1024, 2);
        assert_eq!(
            (pins.flags, pins.interval, pins.stride),
            (hprof_format::ObjectSites::SAMPLED, 16 * 1024, 2)
        );
        assert_eq!(pins.add_group(None), 0);
        assert_eq!(pins.add_group(None), 1);
        assert!(pins.is_empty());
        let every = Pins::new(0, 1);
        assert_eq!((every.flags, every.interval, every.stride), (0, 0, 1));
        let huge = Pins::new(u64::MAX, u64::MAX);
        assert_eq!((huge.interval, huge.stride), (u32::MAX, u32::MAX));
    }
}
