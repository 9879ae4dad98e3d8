//! Owns the compact per-object arrays of the graph: record offsets in five bytes, class
//! indices in two bytes when the dump has few enough classes, and the id index used while
//! references are read (ids in four bytes when the heap's addresses allow).

use rayon::prelude::*;

/// The largest file whose offsets fit in five bytes (1 TiB).
pub const MAX_FILE: u64 = 1 << 40;

/// Big arrays reserve at least this many bytes: above glibc's largest dynamic mmap
/// threshold (32 MiB), so each is a mapping of its own that goes back to the system when
/// freed, where smaller blocks freed in the middle of the heap stay resident. Capacity
/// never written costs no memory.
const MAPPED: usize = (32 << 20) + 4096;

/// The capacity to reserve for `len` elements of `T` (see [`MAPPED`]).
pub fn mapped_capacity<T>(len: usize) -> usize {
    len.max(MAPPED / size_of::<T>().max(1))
}

/// `len` copies of `value` in an allocation of its own (see [`MAPPED`]).
pub fn filled<T: Clone>(len: usize, value: T) -> Vec<T> {
    let mut v = Vec::with_capacity(mapped_capacity::<T>(len));
    v.resize(len, value);
    v
}

/// `len` zeros in an allocation of its own (see [`MAPPED`]), zeroed lazily by the system.
pub fn zeroed<T: Clone + Default>(len: usize) -> Vec<T> {
    let mut v = vec![T::default(); mapped_capacity::<T>(len)];
    v.truncate(len);
    v
}

/// Every object's record offset, five bytes each.
#[derive(Debug, Default)]
pub struct Offsets(Vec<[u8; 5]>);

impl Offsets {
    /// Packs `offsets`, each below [`MAX_FILE`].
    pub fn new(offsets: impl IndexedParallelIterator<Item = u64>) -> Offsets {
        let mut packed = Vec::with_capacity(mapped_capacity::<[u8; 5]>(offsets.len()));
        packed.par_extend(offsets.map(|o| {
            let b = o.to_le_bytes();
            [b[0], b[1], b[2], b[3], b[4]]
        }));
        Offsets(packed)
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

/// Finds the node of an object id while the graph is built. Ids are `min + (key << shift)`
/// (object addresses are aligned). Where the heap is dense enough (at most 32 possible keys
/// per object), a bitmap over the keys, each 64 bits beside the count of set bits before
/// them, gives a node as the number of set bits before its key: one cache line per lookup,
/// at most 8 bytes per object (2 on a heap of small objects). Else the sorted keys (four bytes each when they fit) with a bucket table
/// over their range: one table read and a short binary search.
#[derive(Debug, Default)]
pub struct IdIndex {
    min: u64,
    shift: u32,
    kind: Kind,
}

#[derive(Debug, Default)]
enum Kind {
    #[default]
    Empty,
    Dense {
        /// Per 64 keys: the keys' bits (bit `key % 64` set for every id) and the number of
        /// ids before them.
        words: Vec<[u64; 2]>,
    },
    Sparse {
        keys: Keys,
        /// Keys are bucketed by `key >> bucket_shift`.
        bucket_shift: u32,
        buckets: Vec<u32>,
    },
}

#[derive(Debug)]
enum Keys {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
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
        if span / 32 <= len as u64 {
            let mut words: Vec<[u64; 2]> = zeroed((span / 64 + 1) as usize);
            for i in 0..len {
                let k = key(i);
                words[(k / 64) as usize][0] |= 1 << (k % 64);
            }
            let mut count = 0u64;
            for word in &mut words {
                word[1] = count;
                count += u64::from(word[0].count_ones());
            }
            return IdIndex {
                min,
                shift,
                kind: Kind::Dense { words },
            };
        }
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
            kind: Kind::Sparse {
                keys,
                bucket_shift,
                buckets,
            },
        }
    }

    /// True if nothing is indexed.
    pub fn is_empty(&self) -> bool {
        matches!(self.kind, Kind::Empty)
    }

    /// The index of `id`, if indexed.
    #[inline]
    pub fn find(&self, id: u64) -> Option<u32> {
        if id < self.min {
            return None;
        }
        let delta = id - self.min;
        if delta & ((1u64 << self.shift) - 1) != 0 {
            return None;
        }
        let key = delta >> self.shift;
        match &self.kind {
            Kind::Empty => None,
            Kind::Dense { words } => {
                let [bits, before] = *words.get(usize::try_from(key / 64).ok()?)?;
                let bit = 1u64 << (key % 64);
                if bits & bit == 0 {
                    return None;
                }
                Some((before + u64::from((bits & (bit - 1)).count_ones())) as u32)
            }
            Kind::Sparse {
                keys,
                bucket_shift,
                buckets,
            } => {
                let b = usize::try_from(key >> bucket_shift).ok()?;
                let lo = *buckets.get(b)? as usize;
                let hi = *buckets.get(b + 1)? as usize;
                let at = match keys {
                    Keys::Narrow(keys) => keys[lo..hi].binary_search(&u32::try_from(key).ok()?),
                    Keys::Wide(keys) => keys[lo..hi].binary_search(&key),
                };
                at.ok().map(|i| (lo + i) as u32)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every id is found at its index, and ids in between, below and above are not, for
    /// dense and sparse id sets.
    fn check(ids: &[u64]) -> IdIndex {
        let index = IdIndex::new(&|i| ids[i], ids.len());
        for (i, &id) in ids.iter().enumerate() {
            assert_eq!(index.find(id), Some(i as u32), "{id:#x}");
        }
        let mut probes: Vec<u64> = ids
            .iter()
            .flat_map(|&id| [id + 1, id + 8, id.wrapping_sub(8)])
            .collect();
        probes.extend([0, 1, u64::MAX, ids[ids.len() - 1] + 4096]);
        for probe in probes {
            let expected = ids.binary_search(&probe).ok().map(|i| i as u32);
            assert_eq!(index.find(probe), expected, "{probe:#x}");
        }
        index
    }

    #[test]
    fn ids_are_found_in_dense_and_sparse_heaps() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        // Objects 8-aligned, 16 to 64 bytes apart: dense.
        let mut dense = vec![0x7_0000_0000u64];
        for _ in 0..5000 {
            dense.push(dense[dense.len() - 1] + 16 + 8 * (next() % 7));
        }
        assert!(matches!(check(&dense).kind, Kind::Dense { .. }));
        // Gaps of megabytes: sparse, keys in four bytes.
        let mut sparse = vec![0x1000u64];
        for _ in 0..3000 {
            sparse.push(sparse[sparse.len() - 1] + 16 + 8 * (next() % (1 << 20)));
        }
        assert!(matches!(
            check(&sparse).kind,
            Kind::Sparse {
                keys: Keys::Narrow(_),
                ..
            }
        ));
        // Ids spread over more than 2^32 aligned slots: sparse, keys in eight bytes.
        let wide: Vec<u64> = (1..2000u64).map(|i| (i << 36) + 8 * (i % 3)).collect();
        assert!(matches!(
            check(&wide).kind,
            Kind::Sparse {
                keys: Keys::Wide(_),
                ..
            }
        ));
        // Unaligned ids (4-byte identifiers of a 32-bit JVM are still aligned; ours are
        // not), and a single id.
        check(&[3, 5, 6, 100, 101]);
        check(&[42]);
    }
}
