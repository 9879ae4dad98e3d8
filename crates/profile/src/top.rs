//! Methods ranked by self and total (inclusive) value, summed over every stack: what a CPU
//! table ranks when it should rank methods rather than traces.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::model::Profile;

/// One method's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodRow {
    /// `Class.method` (or a pseudo-frame's text, or `library.function`).
    pub name: String,
    /// What it is.
    pub kind: crate::model::FrameKind,
    /// Value of the samples it is the leaf of.
    pub self_value: i64,
    /// Value of the samples it is anywhere in (counted once per sample).
    pub total_value: i64,
    /// The stack (frame indices, root first) of its largest sample as the leaf, or as any frame
    /// when it is never the leaf.
    pub hottest: Vec<usize>,
}

/// A method's sums while they are added up.
struct Sums {
    frame: usize,
    self_value: i64,
    total_value: i64,
    hottest_rank: i64,
    hottest: usize,
}

/// The methods of `profile` by self value, then total value, then name.
pub fn methods(profile: &Profile) -> Vec<MethodRow> {
    // Frames of one method share its name (`Arc<str>`), so methods are keyed by the name's
    // address: no string is hashed per frame.
    let mut sums: HashMap<*const u8, Sums> = HashMap::default();
    let mut seen = HashSet::default();
    for (index, sample) in profile.samples.iter().enumerate() {
        let value = sample.values.first().copied().unwrap_or(0);
        seen.clear();
        for (depth, &frame) in sample.stack.iter().enumerate() {
            let key = profile.frames[frame].name.as_ptr();
            let row = sums.entry(key).or_insert(Sums {
                frame,
                self_value: 0,
                total_value: 0,
                hottest_rank: -1,
                hottest: index,
            });
            let leaf = depth + 1 == sample.stack.len();
            if leaf {
                row.self_value += value;
            }
            if seen.insert(key) {
                row.total_value += value;
                // The hottest stack: a leaf sample beats any other; then the larger value.
                let rank = if leaf {
                    value.saturating_add(1 << 40)
                } else {
                    value
                };
                if rank > row.hottest_rank {
                    row.hottest_rank = rank;
                    row.hottest = index;
                }
            }
        }
    }
    let mut rows: Vec<MethodRow> = sums
        .into_values()
        .map(|s| MethodRow {
            name: profile.frames[s.frame].name().to_string(),
            kind: profile.frames[s.frame].kind,
            self_value: s.self_value,
            total_value: s.total_value,
            hottest: profile.samples[s.hottest].stack.clone(),
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

/// The value of `profile`'s samples by the group of their leaf frame (`Java`, `JVM`,
/// `native`, `kernel`, `other`: [`crate::FrameKind::group`]), largest first, groups without
/// samples left out.
pub fn groups(profile: &Profile) -> Vec<(&'static str, i64)> {
    let mut sums: Vec<(&'static str, i64)> = Vec::new();
    for sample in &profile.samples {
        let Some(&leaf) = sample.stack.last() else {
            continue;
        };
        let group = profile.frames[leaf].kind.group();
        let value = sample.values.first().copied().unwrap_or(0);
        match sums.iter_mut().find(|(g, _)| *g == group) {
            Some((_, sum)) => *sum += value,
            None => sums.push((group, value)),
        }
    }
    sums.retain(|&(_, v)| v != 0);
    sums.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    sums
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
        // The same method at another line is the same row.
        p.add(&[Frame::method("A", "main", None, Some(7))], None, vec![0]);
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

    #[test]
    fn samples_are_grouped_by_what_their_leaf_frame_runs() {
        let mut p = Profile::new(Kind::Cpu);
        let java = Frame::method("A", "main", None, None);
        let write = Frame::method("java.io.FileOutputStream", "write", None, None);
        p.add(&[java.clone(), write.clone()], None, vec![4]);
        p.add(
            &[
                java.clone(),
                write.clone(),
                Frame::code("libc.so.6", "write"),
                Frame::code("[kernel]", "do_syscall_64"),
            ],
            None,
            vec![5],
        );
        p.add(
            &[java.clone(), Frame::code("libjvm.so", "os::javaTimeNanos")],
            None,
            vec![2],
        );
        p.add(&[java, Frame::code("libc.so.6", "memcpy")], None, vec![1]);
        assert_eq!(
            groups(&p),
            vec![("kernel", 5), ("Java", 4), ("JVM", 2), ("native", 1)]
        );
        let rows = methods(&p);
        let kind = |n: &str| rows.iter().find(|r| r.name == n).unwrap().kind;
        assert_eq!(kind("[kernel].do_syscall_64"), crate::FrameKind::Kernel);
        assert_eq!(kind("libc.so.6.write"), crate::FrameKind::Native);
        assert_eq!(kind("libjvm.so.os::javaTimeNanos"), crate::FrameKind::Jvm);
        assert_eq!(kind("A.main"), crate::FrameKind::Application);
    }
}
