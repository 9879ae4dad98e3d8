//! Owns the comparison of two heap dumps. Object ids do not survive from one dump to the
//! next, so what is compared is what each dump's analysis says by name: its totals, its
//! classes (instances, shallow and retained bytes, classes of one name from several loaders
//! added up) and its reference chains ([`Chains`]). [`HeapSummary`] keeps that much of a dump,
//! so the dump's graph can be freed before the next is read; [`HeapDiff`] compares two.

pub mod report;

use rustc_hash::FxHashMap as HashMap;

use crate::analysis::{Analysis, Paths};
use crate::chains::{self, CLASS, Chains};
use crate::graph::HeapGraph;
use crate::progress::Progress;

/// The totals of one dump.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Objects, class objects included.
    pub objects: u64,
    /// Shallow bytes of every object.
    pub shallow_bytes: u64,
    /// Objects strongly reachable from GC roots.
    pub reachable_objects: u64,
    /// Their shallow bytes: the heap's live size.
    pub reachable_bytes: u64,
    /// GC roots.
    pub gc_roots: u64,
}

/// One class of a dump (every class of that name).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClassTotals {
    /// Reachable instances.
    pub instances: u64,
    /// Shallow bytes of every instance.
    pub shallow: u64,
    /// Bytes the set of its instances retains.
    pub retained: u64,
}

/// What a comparison needs of one heap dump.
#[derive(Debug, Clone)]
pub struct HeapSummary {
    /// The dump's identifier size (4 or 8 bytes).
    pub id_size: usize,
    /// Heap dumps in the file (the summary is the last one's).
    pub dumps: u32,
    /// Its totals.
    pub totals: Totals,
    /// Its classes by name (hidden classes' addresses and lambdas' numbers left out: see
    /// [`hprof_format::stable_class_name`]).
    pub classes: HashMap<String, ClassTotals>,
    /// Its reference chains.
    pub chains: Chains,
}

impl HeapSummary {
    /// Summarises the analysed dump `graph`.
    pub fn new(
        graph: &HeapGraph<'_>,
        analysis: &Analysis,
        strong: &Paths,
        progress: &dyn Progress,
    ) -> HeapSummary {
        let mut classes: HashMap<String, ClassTotals> = HashMap::default();
        for (c, class) in graph.classes().iter().enumerate() {
            let (instances, shallow) = (analysis.class_count[c], analysis.class_shallow[c]);
            if instances == 0 && shallow == 0 {
                continue;
            }
            let name = hprof_format::stable_class_name(&class.name).into_owned();
            let row = classes.entry(name).or_default();
            row.instances += instances;
            row.shallow += shallow;
            row.retained += analysis.class_retained[c];
        }
        HeapSummary {
            id_size: graph.header().id_size.bytes(),
            dumps: graph.dumps(),
            totals: Totals {
                objects: analysis.objects,
                shallow_bytes: analysis.shallow_bytes,
                reachable_objects: analysis.reachable_objects,
                reachable_bytes: analysis.reachable_bytes,
                gc_roots: graph.roots().len() as u64,
            },
            classes,
            chains: Chains::new(graph, analysis, strong, progress),
        }
    }
}

/// A figure in OLD and NEW.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Change {
    /// In OLD.
    pub old: u64,
    /// In NEW.
    pub new: u64,
}

impl Change {
    /// NEW less OLD.
    pub fn delta(self) -> i64 {
        self.new as i64 - self.old as i64
    }
}

/// One class in OLD and NEW.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassChange {
    /// The class's name.
    pub name: String,
    /// Reachable instances.
    pub instances: Change,
    /// Shallow bytes.
    pub shallow: Change,
    /// Retained bytes.
    pub retained: Change,
}

/// One reference chain in OLD and NEW.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainChange {
    /// Its index in [`HeapDiff::chains`] of the chain it continues (`None` at a GC root).
    pub parent: Option<usize>,
    /// Its steps from the GC root: (step, class), as [`chains::describe`] reads them.
    pub steps: Vec<(String, String)>,
    /// Objects it names.
    pub objects: Change,
    /// Bytes it retains.
    pub retained: Change,
    /// Where its growth goes: the chain below it reached by following, while there is one, the
    /// continuing chain that holds more than 90 % of its parent's growth (itself if none does).
    pub accumulation: usize,
}

impl ChainChange {
    /// The chain `other` continues as one line, from where this one ends: `….table →
    /// java.util.HashMap$Node[]` (the whole line if it does not continue this one).
    pub fn describe_below(&self, other: &ChainChange) -> String {
        let (mine, theirs) = (self.describe(), other.describe());
        match theirs.strip_prefix(mine.as_str()) {
            Some(rest) if !rest.is_empty() => format!("…{rest}"),
            _ => theirs,
        }
    }

    /// The chain as one line.
    pub fn describe(&self) -> String {
        let steps: Vec<(&str, &str)> = self
            .steps
            .iter()
            .map(|(s, c)| (s.as_str(), c.as_str()))
            .collect();
        chains::describe(&steps)
    }
}

/// Two heap dumps compared.
#[derive(Debug, Clone)]
pub struct HeapDiff {
    /// Totals of OLD and NEW.
    pub objects: Change,
    /// Shallow bytes of every object.
    pub shallow_bytes: Change,
    /// Strongly reachable objects.
    pub reachable_objects: Change,
    /// Their bytes.
    pub reachable_bytes: Change,
    /// Every class of either dump, by decreasing size of the change of its retained bytes
    /// (then of its shallow bytes, of its instances, then by name).
    pub classes: Vec<ClassChange>,
    /// Every chain of either dump, each after the chain it continues.
    pub chains: Vec<ChainChange>,
}

/// The part of its parent's growth a continuing chain must hold to be where it accumulates.
const ACCUMULATION_SHARE: f64 = 0.9;

impl HeapDiff {
    /// Compares NEW with OLD.
    pub fn new(old: &HeapSummary, new: &HeapSummary) -> HeapDiff {
        let change = |f: fn(&Totals) -> u64| Change {
            old: f(&old.totals),
            new: f(&new.totals),
        };
        let mut classes: Vec<ClassChange> = old
            .classes
            .keys()
            .chain(new.classes.keys().filter(|k| !old.classes.contains_key(*k)))
            .map(|name| {
                let (o, n) = (
                    old.classes.get(name).copied().unwrap_or_default(),
                    new.classes.get(name).copied().unwrap_or_default(),
                );
                ClassChange {
                    name: name.clone(),
                    instances: Change {
                        old: o.instances,
                        new: n.instances,
                    },
                    shallow: Change {
                        old: o.shallow,
                        new: n.shallow,
                    },
                    retained: Change {
                        old: o.retained,
                        new: n.retained,
                    },
                }
            })
            .collect();
        let key = |c: &ClassChange| {
            (
                c.retained.delta().unsigned_abs(),
                c.shallow.delta().unsigned_abs(),
                c.instances.delta().unsigned_abs(),
            )
        };
        classes.sort_by(|a, b| key(b).cmp(&key(a)).then_with(|| a.name.cmp(&b.name)));
        HeapDiff {
            objects: change(|t| t.objects),
            shallow_bytes: change(|t| t.shallow_bytes),
            reachable_objects: change(|t| t.reachable_objects),
            reachable_bytes: change(|t| t.reachable_bytes),
            classes,
            chains: join_chains(&old.chains, &new.chains),
        }
    }

    /// The chains worth a row: those that are not where their parent's growth accumulates
    /// (that one shows as the parent's accumulation), nor a class object's own chain (its
    /// static fields' chains are rows instead), by decreasing size of the change of their
    /// retained bytes (growth first among equals, then by description).
    pub fn chain_rows(&self) -> Vec<usize> {
        let is_class =
            |i: usize| self.chains[i].steps.len() == 1 && self.chains[i].steps[0].0 == CLASS;
        let mut rows: Vec<usize> = (0..self.chains.len())
            .filter(|&i| {
                let c = &self.chains[i];
                (c.retained.delta() != 0 || c.objects.delta() != 0) && !is_class(i)
            })
            .filter(|&i| match self.chains[i].parent {
                Some(p) => {
                    is_class(p) || self.chains[p].accumulation == p || !self.on_accumulation(p, i)
                }
                None => true,
            })
            .collect();
        rows.sort_by_cached_key(|&i| {
            let d = self.chains[i].retained.delta();
            (
                std::cmp::Reverse(d.unsigned_abs()),
                d < 0,
                self.chains[i].describe(),
            )
        });
        rows
    }

    /// True if `chain` is on the way from `from` to where `from`'s growth accumulates.
    fn on_accumulation(&self, from: usize, chain: usize) -> bool {
        let end = self.chains[from].accumulation;
        let mut at = end;
        loop {
            if at == chain {
                return true;
            }
            if at == from {
                return false;
            }
            match self.chains[at].parent {
                Some(p) => at = p,
                None => return false,
            }
        }
    }

    /// The chains whose retained bytes grew by more than `limit` bytes.
    pub fn offences(&self, limit: u64) -> Vec<usize> {
        self.chain_rows()
            .into_iter()
            .filter(|&i| self.chains[i].retained.delta() > limit as i64)
            .collect()
    }
}

/// The chains of OLD and NEW joined by their steps, each after its parent, with each chain's
/// accumulation found.
fn join_chains(old: &Chains, new: &Chains) -> Vec<ChainChange> {
    let mut joined: Vec<ChainChange> = Vec::new();
    let mut index: HashMap<(Option<usize>, &str, &str), usize> = HashMap::default();
    for (side, chains) in [(0, old), (1, new)] {
        // Each chain's place in `joined` (the root has none).
        let mut place: Vec<Option<usize>> = vec![None; chains.chains.len()];
        for (i, c) in chains.chains.iter().enumerate().skip(1) {
            let parent = place[c.parent as usize];
            let (step, class) = (chains.text(c.step), chains.text(c.class));
            let at = *index.entry((parent, step, class)).or_insert_with(|| {
                let mut steps = parent.map_or_else(Vec::new, |p| joined[p].steps.clone());
                steps.push((step.to_string(), class.to_string()));
                joined.push(ChainChange {
                    parent,
                    steps,
                    objects: Change::default(),
                    retained: Change::default(),
                    accumulation: joined.len(),
                });
                joined.len() - 1
            });
            place[i] = Some(at);
            let j = &mut joined[at];
            if side == 0 {
                j.objects.old += c.objects;
                j.retained.old += c.retained;
            } else {
                j.objects.new += c.objects;
                j.retained.new += c.retained;
            }
        }
    }
    // Accumulations, children before parents (each chain comes after its parent).
    let mut biggest: Vec<Option<usize>> = vec![None; joined.len()];
    for i in (0..joined.len()).rev() {
        if let Some(p) = joined[i].parent {
            let grows = joined[i].retained.delta();
            if biggest[p].is_none_or(|b| joined[b].retained.delta() < grows) {
                biggest[p] = Some(i);
            }
        }
    }
    for i in (0..joined.len()).rev() {
        let growth = joined[i].retained.delta();
        if let Some(b) = biggest[i]
            && growth > 0
            && joined[b].retained.delta() as f64 > ACCUMULATION_SHARE * growth as f64
        {
            joined[i].accumulation = joined[b].accumulation;
        }
    }
    joined
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chains::Chain;

    /// Chains from (parent, step, class, objects, retained) rows.
    fn chains(rows: &[(u32, &str, &str, u64, u64)]) -> Chains {
        let mut texts: Vec<String> = Vec::new();
        let mut text = |t: &str| -> u32 {
            match texts.iter().position(|x| x == t) {
                Some(i) => i as u32,
                None => {
                    texts.push(t.to_string());
                    texts.len() as u32 - 1
                }
            }
        };
        let mut list = vec![Chain {
            parent: 0,
            step: text(""),
            class: 0,
            objects: 0,
            retained: 0,
        }];
        for &(parent, step, class, objects, retained) in rows {
            list.push(Chain {
                parent,
                step: text(step),
                class: text(class),
                objects,
                retained,
            });
        }
        Chains {
            chains: list,
            texts,
        }
    }

    fn summary(chains: Chains) -> HeapSummary {
        HeapSummary {
            id_size: 8,
            dumps: 1,
            totals: Totals::default(),
            classes: HashMap::default(),
            chains,
        }
    }

    #[test]
    fn chains_join_by_their_steps_and_the_growth_is_followed_down() {
        let old = summary(chains(&[
            (0, CLASS, "Leak", 1, 1000),
            (1, "static CACHE", "java.util.HashMap", 1, 900),
            (2, "table", "java.util.HashMap$Node[]", 1, 850),
            (3, "[]", "java.util.HashMap$Node", 10, 800),
            (4, "value", "byte[]", 10, 600),
            (4, "key", "java.lang.Integer", 10, 160),
            (0, CLASS, "Other", 1, 500),
        ]));
        // NEW: the values grew by 10,000 bytes, Other shrank by 100, a chain is new.
        let new = summary(chains(&[
            (0, CLASS, "Other", 1, 400),
            (0, CLASS, "Leak", 1, 11_200),
            (2, "static CACHE", "java.util.HashMap", 1, 11_100),
            (3, "table", "java.util.HashMap$Node[]", 1, 11_050),
            (4, "[]", "java.util.HashMap$Node", 110, 11_000),
            (5, "value", "byte[]", 110, 10_600),
            (5, "key", "java.lang.Integer", 110, 160),
            (0, "thread object", "java.lang.Thread", 1, 50),
        ]));
        let diff = HeapDiff::new(&old, &new);
        let rows = diff.chain_rows();
        let first = &diff.chains[rows[0]];
        assert_eq!(first.describe(), "static Leak.CACHE → java.util.HashMap");
        assert_eq!(first.retained.delta(), 10_200);
        // Where it accumulates: down to the values.
        let end = &diff.chains[first.accumulation];
        assert_eq!(
            end.describe(),
            "static Leak.CACHE → java.util.HashMap.table → java.util.HashMap$Node[] → \
java.util.HashMap$Node.value → byte[]"
        );
        assert_eq!(end.objects.delta(), 100);
        // The chains on the way are not rows of their own; the others are.
        let described: Vec<String> = rows.iter().map(|&r| diff.chains[r].describe()).collect();
        assert_eq!(
            described,
            [
                "static Leak.CACHE → java.util.HashMap",
                "thread object: java.lang.Thread",
                "static Leak.CACHE → java.util.HashMap.table → java.util.HashMap$Node[] → \
java.util.HashMap$Node.key → java.lang.Integer"
            ]
        );
        assert_eq!(diff.offences(10_000), [rows[0]]);
        assert!(diff.offences(10_200).is_empty());
        // A dump against itself: no change, no row.
        let same = HeapDiff::new(&new, &new);
        assert!(same.chain_rows().is_empty());
        assert!(same.chains.iter().all(|c| c.retained.delta() == 0));
    }
}
