//! Methods ranked by self and total (inclusive) value, summed over every stack: what a CPU
//! table ranks when it should rank methods rather than traces.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::model::Profile;

/// One method's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodRow {
    /// `Class.method` (or a pseudo-frame's text).
    pub name: String,
    /// Value of the samples it is the leaf of.
    pub self_value: i64,
    /// Value of the samples it is anywhere in (counted once per sample).
    pub total_value: i64,
    /// The stack (frame indices, root first) of its largest sample as the leaf, or as any frame
    /// when it is never the leaf.
    pub hottest: Vec<usize>,
}

/// The methods of `profile` by self value, then total value, then name.
pub fn methods(profile: &Profile) -> Vec<MethodRow> {
    let names: Vec<&str> = profile.frames.iter().map(|f| f.name()).collect();
    let mut rows: HashMap<&str, (i64, i64, i64, usize)> = HashMap::default();
    for (index, sample) in profile.samples.iter().enumerate() {
        let value = sample.values.first().copied().unwrap_or(0);
        let mut seen = HashSet::default();
        for (depth, &frame) in sample.stack.iter().enumerate() {
            let name = names[frame];
            let row = rows.entry(name).or_insert((0, 0, -1, index));
            let leaf = depth + 1 == sample.stack.len();
            if leaf {
                row.0 += value;
            }
            if seen.insert(name) {
                row.1 += value;
                // The hottest stack: a leaf sample beats any other; then the larger value.
                let rank = if leaf {
                    value.saturating_add(1 << 40)
                } else {
                    value
                };
                if rank > row.2 {
                    row.2 = rank;
                    row.3 = index;
                }
            }
        }
    }
    let mut rows: Vec<MethodRow> = rows
        .into_iter()
        .map(|(name, (self_value, total_value, _, sample))| MethodRow {
            name: name.to_string(),
            self_value,
            total_value,
            hottest: profile.samples[sample].stack.clone(),
        })
        .collect();
    rows.sort_by(|a, b| {
        b.self_value
            .cmp(&a.self_value)
            .then(b.total_value.cmp(&a.total_value))
            .then(a.name.cmp(&b.name))
    });
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Frame, Kind};

    #[test]
    fn self_is_the_leaf_and_total_counts_recursion_once() {
        let mut p = Profile::new(Kind::Cpu);
        let f = |m: &str| Frame::method("A", m, None, None);
        p.add(&[f("main"), f("work"), f("hot")], None, vec![5]);
        p.add(&[f("main"), f("work"), f("work")], None, vec![3]);
        p.add(&[f("main"), f("other"), f("hot")], None, vec![2]);
        let rows = methods(&p);
        let row = |n: &str| rows.iter().find(|r| r.name == n).unwrap().clone();
        assert_eq!(rows[0].name, "A.hot");
        assert_eq!((row("A.hot").self_value, row("A.hot").total_value), (7, 7));
        assert_eq!(
            (row("A.work").self_value, row("A.work").total_value),
            (3, 8)
        );
        assert_eq!(
            (row("A.main").self_value, row("A.main").total_value),
            (0, 10)
        );
        assert_eq!(row("A.hot").hottest.len(), 3);
    }
}
