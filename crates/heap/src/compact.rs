//! Owns the compact per-object arrays of the graph: record offsets in five bytes, class
//! indices in two bytes when the dump has few enough classes, and the id index used while
//! references are read (ids in four bytes when the heap's addresses allow).

use rayon::prelude::*;

/// The largest file whose offsets fit in five bytes (1 TiB).
pub const MAX_FILE: u64 = 1 << 40;

/// Every object's record offset, five bytes each.
#[derive(Debug, Default)]
pub struct Offsets(Vec<[u8; 5]>);

impl Offsets {
    /// Packs `offsets`, each below [`MAX_FILE`].
    pub fn new(offsets: impl IndexedParallelIterator<Item = u64>) -> Offsets {
        Offsets(
            offsets
                .map(|o| {
                    let b = o.to_le_bytes();
                    [b[0], b[1], b[2], b[3], b[4]]
                })
                .collect(),
        )
    }

    /// The offset of node `i`.
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        let b = self.0[i];
        u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], 0, 0, 0])
    }

    /// The number of offsets.
    pub fn len(&self) -> usize {
        self.0.len()
    }
}

/// Every object's class index: two bytes each when every index fits, else four.
#[derive(Debug)]
pub enum ClassOf {
    /// Fewer than 65,536 classes.
    Narrow(Vec<u16>),
    /// More.
    Wide(Vec<u32>),
}

impl Default for ClassOf {
    fn default() -> ClassOf {
        ClassOf::Narrow(Vec::new())
    }
}

impl ClassOf {
    /// Narrows `classes` to two bytes each if `count` classes fit.
    pub fn new(classes: Vec<u32>, count: usize) -> ClassOf {
        if count <= usize::from(u16::MAX) + 1 {
            // In place: the four-byte buffer is reused and its upper half given back.
            let mut narrow: Vec<u16> = classes.into_iter().map(|c| c as u16).collect();
            narrow.shrink_to_fit();
            ClassOf::Narrow(narrow)
        } else {
            ClassOf::Wide(classes)
        }
    }

    /// The class index of node `i`.
    #[inline]
    pub fn get(&self, i: usize) -> u32 {
        match self {
            ClassOf::Narrow(v) => u32::from(v[i]),
            ClassOf::Wide(v) => v[i],
        }
    }
}

/// Finds the node of an object id while the graph is built: the sorted ids, stored as
/// `(id - min) >> shift` in four bytes when the heap's span allows (object addresses are
/// aligned), with a bucket table over their range, so a lookup is one table read and a
/// short binary search.
#[derive(Debug, Default)]
pub struct IdIndex {
    min: u64,
    /// Ids are `min + (key << shift)`.
    shift: u32,
    keys: Keys,
    /// Keys are bucketed by `key >> bucket_shift`.
    bucket_shift: u32,
    buckets: Vec<u32>,
}

#[derive(Debug)]
enum Keys {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

impl Default for Keys {
    fn default() -> Keys {
        Keys::Narrow(Vec::new())
    }
}

impl IdIndex {
    /// Indexes the `len` ids `id(0)`, `id(1)`…, sorted and distinct.
    pub fn new(id: &(dyn Fn(usize) -> u64 + Sync), len: usize) -> IdIndex {
        if len == 0 {
            return IdIndex::default();
        }
        let (min, max) = (id(0), id(len - 1));
        let common = (0..len)
            .into_par_iter()
            .map(|i| id(i) - min)
            .reduce(|| 0, |a, b| a | b);
        let shift = if common == 0 {
            0
        } else {
            common.trailing_zeros()
        };
        let key = |i: usize| (id(i) - min) >> shift;
        let span = (max - min) >> shift;
        let keys = if span <= u64::from(u32::MAX) {
            Keys::Narrow((0..len).into_par_iter().map(|i| key(i) as u32).collect())
        } else {
            Keys::Wide((0..len).into_par_iter().map(key).collect())
        };
        // About one bucket per two objects: 2 bytes per object, a few ids per bucket.
        let wanted = (len as u64 / 2).max(1);
        let mut bucket_shift = 0;
        while (span >> bucket_shift) >= wanted {
            bucket_shift += 1;
        }
        let count = (span >> bucket_shift) as usize + 2;
        let mut buckets = vec![0u32; count];
        // buckets[b] = the first index whose key falls in bucket b or later.
        let mut i = 0usize;
        for (b, slot) in buckets.iter_mut().enumerate() {
            while i < len && ((key(i) >> bucket_shift) as usize) < b {
                i += 1;
            }
            *slot = i as u32;
        }
        IdIndex {
            min,
            shift,
            keys,
            bucket_shift,
            buckets,
        }
    }

    /// True if nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// The index of `id`, if indexed.
    #[inline]
    pub fn find(&self, id: u64) -> Option<u32> {
        if id < self.min || self.buckets.is_empty() {
            return None;
        }
        let delta = id - self.min;
        if delta & ((1u64 << self.shift) - 1) != 0 {
            return None;
        }
        let key = delta >> self.shift;
        let b = usize::try_from(key >> self.bucket_shift).ok()?;
        let lo = *self.buckets.get(b)? as usize;
        let hi = *self.buckets.get(b + 1)? as usize;
        let at = match &self.keys {
            Keys::Narrow(keys) => keys[lo..hi].binary_search(&u32::try_from(key).ok()?),
            Keys::Wide(keys) => keys[lo..hi].binary_search(&key),
        };
        at.ok().map(|i| (lo + i) as u32)
    }
}
