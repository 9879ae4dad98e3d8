//! Owns the comparison of two profiles of one kind: each side normalised to its own total, the
//! change of every method's self and total share in points, of every stack's share, the CI gate
//! on those changes, and the differential folded stacks other tools read. Renderers: [`report`]
//! (text table, JSON) and [`flame`] (the NEW profile's flame graph coloured by change).

pub mod flame;
pub mod report;

use std::io::{self, Write};

use rustc_hash::FxHashMap as HashMap;

use crate::model::Profile;
use crate::{folded, top};

/// `value` as a percentage of `total` (0 when the total is 0).
pub fn percent(value: i64, total: i64) -> f64 {
    if total == 0 {
        0.0
    } else {
        value as f64 * 100.0 / total as f64
    }
}

/// Whether a method or stack is in both profiles or only one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// In both.
    Both,
    /// Only in NEW.
    New,
    /// Only in BASE.
    Vanished,
}

impl Presence {
    fn of(base: i64, new: i64) -> Presence {
        match (base != 0, new != 0) {
            (false, true) => Presence::New,
            (true, false) => Presence::Vanished,
            _ => Presence::Both,
        }
    }

    /// `both`, `new` or `vanished`.
    pub fn name(self) -> &'static str {
        match self {
            Presence::Both => "both",
            Presence::New => "new",
            Presence::Vanished => "vanished",
        }
    }
}

/// One method in both profiles: its self and total values on each side and the change of
/// their shares, in points (percentage points of each side's total).
#[derive(Debug, Clone, PartialEq)]
pub struct MethodChange {
    /// `Class.method` (or a pseudo-frame's text).
    pub name: String,
    /// Value of BASE's samples it is the leaf of.
    pub base_self: i64,
    /// Value of BASE's samples it is in.
    pub base_total: i64,
    /// Value of NEW's samples it is the leaf of.
    pub new_self: i64,
    /// Value of NEW's samples it is in.
    pub new_total: i64,
    /// NEW's self share less BASE's, in points.
    pub self_points: f64,
    /// NEW's total share less BASE's, in points.
    pub total_points: f64,
}

impl MethodChange {
    /// In both profiles, or only one.
    pub fn presence(&self) -> Presence {
        Presence::of(self.base_total, self.new_total)
    }
}

/// One stack (thread first when the profiles are split by thread, then frames root first) in
/// either profile, with its value on each side and the change of its share.
#[derive(Debug, Clone, PartialEq)]
pub struct StackChange {
    /// The frames, root first, as a folded line holds them (joined by `;`).
    pub stack: String,
    /// Value in BASE.
    pub base: i64,
    /// Value in NEW.
    pub new: i64,
    /// NEW's share less BASE's, in points.
    pub points: f64,
}

impl StackChange {
    /// The frames, root first.
    pub fn frames(&self) -> impl DoubleEndedIterator<Item = &str> {
        self.stack.split(';')
    }
}

/// Two profiles of one kind compared, each normalised to its own total.
#[derive(Debug)]
pub struct ProfileDiff<'a> {
    /// The profile compared against.
    pub base: &'a Profile,
    /// The profile compared.
    pub new: &'a Profile,
    /// BASE's total (first sample type).
    pub base_total: i64,
    /// NEW's total.
    pub new_total: i64,
    /// Every method of either profile, by decreasing size of the change of its self share
    /// (then of its total share, then by name).
    pub methods: Vec<MethodChange>,
}

impl<'a> ProfileDiff<'a> {
    /// Compares `new` with `base` (two profiles of one kind), method by method.
    pub fn new(base: &'a Profile, new: &'a Profile) -> ProfileDiff<'a> {
        let (base_total, new_total) = (base.total(), new.total());
        let (base_rows, new_rows) = std::thread::scope(|scope| {
            let base_rows = scope.spawn(|| top::methods(base));
            let new_rows = top::methods(new);
            (base_rows.join().unwrap_or_default(), new_rows)
        });
        let mut by_name: HashMap<String, MethodChange> = HashMap::default();
        let empty = |name: String| MethodChange {
            name,
            base_self: 0,
            base_total: 0,
            new_self: 0,
            new_total: 0,
            self_points: 0.0,
            total_points: 0.0,
        };
        for row in base_rows {
            let m = by_name
                .entry(row.name.clone())
                .or_insert_with(|| empty(row.name));
            m.base_self += row.self_value;
            m.base_total += row.total_value;
        }
        for row in new_rows {
            let m = by_name
                .entry(row.name.clone())
                .or_insert_with(|| empty(row.name));
            m.new_self += row.self_value;
            m.new_total += row.total_value;
        }
        let mut methods: Vec<MethodChange> = by_name
            .into_values()
            .map(|mut m| {
                m.self_points = percent(m.new_self, new_total) - percent(m.base_self, base_total);
                m.total_points =
                    percent(m.new_total, new_total) - percent(m.base_total, base_total);
                m
            })
            .collect();
        methods.sort_by(|a, b| {
            b.self_points
                .abs()
                .total_cmp(&a.self_points.abs())
                .then(b.total_points.abs().total_cmp(&a.total_points.abs()))
                .then_with(|| a.name.cmp(&b.name))
        });
        ProfileDiff {
            base,
            new,
            base_total,
            new_total,
            methods,
        }
    }

    /// The methods by decreasing size of the change of their total share (then of their self
    /// share, then by name).
    pub fn methods_by_total(&self) -> Vec<&MethodChange> {
        let mut rows: Vec<&MethodChange> = self.methods.iter().collect();
        rows.sort_by(|a, b| {
            b.total_points
                .abs()
                .total_cmp(&a.total_points.abs())
                .then(b.self_points.abs().total_cmp(&a.self_points.abs()))
                .then_with(|| a.name.cmp(&b.name))
        });
        rows
    }

    /// The methods only in one profile (`presence`), by decreasing share there.
    pub fn only(&self, presence: Presence) -> Vec<&MethodChange> {
        let mut rows: Vec<&MethodChange> = self
            .methods
            .iter()
            .filter(|m| m.presence() == presence)
            .collect();
        let key = |m: &MethodChange| (m.base_self + m.new_self, m.base_total + m.new_total);
        rows.sort_by(|a, b| key(b).cmp(&key(a)).then_with(|| a.name.cmp(&b.name)));
        rows
    }

    /// Every stack of either profile, by decreasing size of the change of its share (then by
    /// stack).
    pub fn stacks(&self) -> Vec<StackChange> {
        let (base_lines, new_lines) = std::thread::scope(|scope| {
            let base_lines = scope.spawn(|| folded::lines(self.base));
            let new_lines = folded::lines(self.new);
            (base_lines.join().unwrap_or_default(), new_lines)
        });
        let mut by_stack: HashMap<String, (i64, i64)> = HashMap::default();
        for (stack, value) in base_lines {
            by_stack.entry(stack).or_default().0 += value;
        }
        for (stack, value) in new_lines {
            by_stack.entry(stack).or_default().1 += value;
        }
        let mut stacks: Vec<StackChange> = by_stack
            .into_iter()
            .map(|(stack, (base, new))| StackChange {
                points: percent(new, self.new_total) - percent(base, self.base_total),
                stack,
                base,
                new,
            })
            .collect();
        stacks.sort_by(|a, b| {
            b.points
                .abs()
                .total_cmp(&a.points.abs())
                .then_with(|| a.stack.cmp(&b.stack))
        });
        stacks
    }

    /// The methods whose share grew by more than the gate allows.
    pub fn offences(&self, gate: &Gate) -> Vec<Offence<'_>> {
        let mut out = Vec::new();
        for m in &self.methods {
            if let Some(limit) = gate.self_points
                && m.self_points > limit
            {
                out.push(Offence {
                    method: m,
                    measure: Measure::SelfShare,
                    points: m.self_points,
                    limit,
                });
            }
            if let Some(limit) = gate.total_points
                && m.total_points > limit
            {
                out.push(Offence {
                    method: m,
                    measure: Measure::TotalShare,
                    points: m.total_points,
                    limit,
                });
            }
        }
        out.sort_by(|a, b| {
            b.points
                .total_cmp(&a.points)
                .then_with(|| a.method.name.cmp(&b.method.name))
        });
        out
    }

    /// Writes the differential folded stacks other tools read (Brendan Gregg's `difffolded.pl`
    /// output, which `flamegraph.pl` and inferno draw): one line per stack of either profile,
    /// `stack BASE NEW`, BASE's value scaled to NEW's total (rounded, as `difffolded.pl -n`
    /// does) so that the difference of the two counts is the change of the stack's share;
    /// lines sorted by stack.
    pub fn write_folded(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut stacks = self.stacks();
        stacks.sort_unstable_by(|a, b| a.stack.cmp(&b.stack));
        let scale = if self.base_total == 0 {
            0.0
        } else {
            self.new_total as f64 / self.base_total as f64
        };
        let mut line = String::new();
        for s in &stacks {
            use std::fmt::Write as _;
            line.clear();
            let base = (s.base as f64 * scale).round() as i64;
            let _ = writeln!(line, "{} {base} {}", s.stack, s.new);
            out.write_all(line.as_bytes())?;
        }
        Ok(())
    }
}

/// Which share a gate limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// A method's self share.
    SelfShare,
    /// A method's total share.
    TotalShare,
}

impl Measure {
    /// `self` or `total`.
    pub fn name(self) -> &'static str {
        match self {
            Measure::SelfShare => "self",
            Measure::TotalShare => "total",
        }
    }
}

/// How much a method's share may grow, in points, before a CI job fails.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gate {
    /// The most a self share may grow.
    pub self_points: Option<f64>,
    /// The most a total share may grow.
    pub total_points: Option<f64>,
}

/// A method whose share grew past a gate's limit.
#[derive(Debug, Clone, PartialEq)]
pub struct Offence<'a> {
    /// The method.
    pub method: &'a MethodChange,
    /// The share that grew.
    pub measure: Measure,
    /// By how many points.
    pub points: f64,
    /// The limit.
    pub limit: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Frame, Kind};

    fn f(m: &str) -> Frame {
        Frame::method("W", m, None, None)
    }

    /// BASE: a, b, c a third each; NEW: b twice as long.
    fn pair() -> (Profile, Profile) {
        let mut base = Profile::new(Kind::Cpu);
        let mut new = Profile::new(Kind::Cpu);
        for (m, b, n) in [("a", 100, 100), ("b", 100, 200), ("c", 100, 100)] {
            base.add(&[f("main"), f(m)], None, vec![b]);
            new.add(&[f("main"), f(m)], None, vec![n]);
        }
        base.add(&[f("main"), f("gone")], None, vec![30]);
        new.add(&[f("main"), f("fresh")], None, vec![40]);
        (base, new)
    }

    #[test]
    fn methods_change_by_points_of_each_total() {
        let (base, new) = pair();
        let diff = ProfileDiff::new(&base, &new);
        assert_eq!((diff.base_total, diff.new_total), (330, 440));
        let first = &diff.methods[0];
        assert_eq!(first.name, "W.b");
        let expected = 200.0 * 100.0 / 440.0 - 100.0 * 100.0 / 330.0;
        assert!((first.self_points - expected).abs() < 1e-9, "{first:?}");
        assert_eq!((first.base_self, first.new_self), (100, 200));
        let main = diff.methods.iter().find(|m| m.name == "W.main").unwrap();
        assert_eq!((main.total_points, main.self_points), (0.0, 0.0));
        assert_eq!(diff.methods_by_total()[0].name, "W.b");
        let fresh = diff.only(Presence::New);
        assert_eq!(fresh.len(), 1);
        assert_eq!(fresh[0].name, "W.fresh");
        assert_eq!(diff.only(Presence::Vanished)[0].name, "W.gone");
        // Shares add up to the same whole on each side: the changes sum to zero.
        let sum: f64 = diff.methods.iter().map(|m| m.self_points).sum();
        assert!(sum.abs() < 1e-9);
    }

    #[test]
    fn the_gate_names_what_grew_past_it() {
        let (base, new) = pair();
        let diff = ProfileDiff::new(&base, &new);
        let gate = Gate {
            self_points: Some(10.0),
            total_points: None,
        };
        let offences = diff.offences(&gate);
        assert_eq!(offences.len(), 1);
        assert_eq!(offences[0].method.name, "W.b");
        assert!(diff.offences(&Gate::default()).is_empty());
        let gate = Gate {
            self_points: Some(20.0),
            total_points: Some(5.0),
        };
        let offences = diff.offences(&gate);
        assert_eq!(offences.len(), 2, "{offences:?}");
        assert!(offences.iter().all(|o| o.measure == Measure::TotalShare));
    }

    #[test]
    fn a_profile_against_itself_changes_nothing() {
        let (base, _) = pair();
        let diff = ProfileDiff::new(&base, &base);
        assert!(diff.methods.iter().all(|m| m.self_points == 0.0));
        assert!(diff.stacks().iter().all(|s| s.points == 0.0));
    }

    #[test]
    fn differential_folded_lines_scale_base_to_new() {
        let (base, new) = pair();
        let diff = ProfileDiff::new(&base, &new);
        let mut out = Vec::new();
        diff.write_folded(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5);
        // 100 of 330 is 133 of 440.
        assert!(lines.contains(&"W.main;W.b 133 200"), "{text}");
        assert!(lines.contains(&"W.main;W.fresh 0 40"), "{text}");
        assert!(lines.contains(&"W.main;W.gone 40 0"), "{text}");
        let stacks = diff.stacks();
        assert_eq!(stacks[0].stack, "W.main;W.b");
        assert_eq!(stacks[0].frames().collect::<Vec<_>>(), ["W.main", "W.b"]);
    }
}
