//! Methods ranked by self and total (inclusive) value, summed over every stack: what a CPU
//! table ranks when it should rank methods rather than traces; and the text tables of
//! `hprof top` and of `hprof run`'s report, by method or by trace.

use std::io::{self, Write};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::model::{FrameKind, Profile};

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

/// `value` as a percentage of `total` (0 when the total is).
pub fn share(value: i64, total: i64) -> f64 {
    if total == 0 {
        0.0
    } else {
        value as f64 * 100.0 / total as f64
    }
}

/// The names of a stack's frames (frame indices, root first), innermost first.
pub fn stack_names(profile: &Profile, stack: &[usize]) -> Vec<String> {
    stack
        .iter()
        .rev()
        .map(|&f| profile.frames[f].name().to_string())
        .collect()
}

/// What a profile's first value counts, for a table's heading: its unit, or for counts its
/// name (`samples`).
pub fn unit(profile: &Profile) -> String {
    profile.sample_types.first().map_or(String::new(), |t| {
        if t.unit == "count" {
            t.name.clone()
        } else {
            t.unit.clone()
        }
    })
}

/// The ANSI colour of a frame of `kind` on a terminal (the flame graph's hues), if any.
fn ansi(kind: FrameKind) -> Option<&'static str> {
    match kind {
        FrameKind::Jvm => Some("\x1b[36m"),
        FrameKind::Native => Some("\x1b[32m"),
        FrameKind::Kernel => Some("\x1b[35m"),
        FrameKind::Application | FrameKind::Jdk | FrameKind::Pseudo => None,
    }
}

/// `name`, coloured by `kind` when `colour`.
fn painted(name: &str, kind: FrameKind, colour: bool) -> String {
    match ansi(kind).filter(|_| colour) {
        Some(code) => format!("{code}{name}\x1b[0m"),
        None => name.to_string(),
    }
}

/// The line that groups the samples by what their leaf frame runs (`self by kind: Java
/// 61.2%, kernel 23.7%, ...`), when any is not Java code.
pub fn groups_line(profile: &Profile) -> Option<String> {
    let groups = groups(profile);
    if groups.iter().all(|&(g, _)| g == "Java" || g == "other") {
        return None;
    }
    let total = profile.total();
    let parts: Vec<String> = groups
        .iter()
        .map(|&(g, v)| format!("{g} {:.1}%", share(v, total)))
        .collect();
    Some(format!("self by kind: {}", parts.join(", ")))
}

/// Writes the table of the `rows` methods of `profile` with the most self value (then total)
/// under the heading of `section`; with `stacks`, each row's hottest stack; with `colour`,
/// native, JVM and kernel functions in colour (ANSI); then the samples by kind of leaf frame
/// ([`groups_line`]).
pub fn write_methods(
    profile: &Profile,
    section: &str,
    rows: usize,
    stacks: bool,
    colour: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let total = profile.total();
    let methods = methods(profile);
    writeln!(out, "{section}: {total} {}, by method", unit(profile))?;
    writeln!(out, "rank   self  total  method")?;
    for (i, r) in methods.iter().take(rows).enumerate() {
        writeln!(
            out,
            "{:4} {:5.1}% {:5.1}%  {}",
            i + 1,
            share(r.self_value, total),
            share(r.total_value, total),
            painted(&r.name, r.kind, colour)
        )?;
        if stacks {
            for frame in stack_names(profile, &r.hottest) {
                writeln!(out, "                   {frame}")?;
            }
        }
    }
    if methods.len() > rows {
        writeln!(out, "... {} more methods", methods.len() - rows)?;
    }
    if let Some(line) = groups_line(profile) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Writes the table of the `rows` stacks of `profile` with the most value under the heading
/// of `section`; with `stacks`, each row's whole stack.
pub fn write_traces(
    profile: &Profile,
    section: &str,
    rows: usize,
    stacks: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let total = profile.total();
    writeln!(out, "{section}: {total} {}, by trace", unit(profile))?;
    writeln!(out, "rank  share      value  top frame")?;
    for (i, s) in by_value(profile).iter().take(rows).enumerate() {
        let names = stack_names(profile, &s.stack);
        writeln!(
            out,
            "{:4} {:5.1}% {:10}  {}",
            i + 1,
            share(s.values[0], total),
            s.values[0],
            names.first().map_or("", String::as_str)
        )?;
        if stacks {
            for frame in names.iter().skip(1) {
                writeln!(out, "                          {frame}")?;
            }
        }
    }
    Ok(())
}

/// The samples of `profile` by their first value, largest first.
pub fn by_value(profile: &Profile) -> Vec<&crate::model::Sample> {
    let mut samples: Vec<_> = profile.samples.iter().collect();
    samples.sort_by(|a, b| b.values[0].cmp(&a.values[0]));
    samples
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
