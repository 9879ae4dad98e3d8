//! Owns what the agent knows of the code cache's stubs (intrinsics, runtime stubs, vtable
//! stubs, adapters): their ranges and names, from the JVM's DynamicCodeGenerated events
//! (replayed for the stubs made before the sampler started). The handler reads a sorted
//! index of their ranges (where a stub starts tells how to unwind it); the drain names a
//! stub frame from the ranges' names.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::publish::Published;

/// The stubs' ranges, sorted, innermost only (a blob that holds several stubs is left out:
/// the walk knows its blob already).
#[derive(Debug, Default)]
pub struct StubIndex {
    ranges: Box<[(usize, usize)]>,
}

impl StubIndex {
    /// The stub that holds `pc`: (start, end).
    pub fn find(&self, pc: usize) -> Option<(usize, usize)> {
        let i = self.ranges.partition_point(|&(start, _)| start <= pc);
        let &(start, end) = self.ranges.get(i.checked_sub(1)?)?;
        (pc < end).then_some((start, end))
    }
}

#[derive(Debug, Default)]
struct Named {
    /// Name of each stub, by (start, end).
    ranges: BTreeMap<(usize, usize), String>,
    /// Whether ranges came since the index was published.
    changed: bool,
}

static INDEX: Published<StubIndex> = Published::new();
static NAMED: Mutex<Named> = Mutex::new(Named {
    ranges: BTreeMap::new(),
    changed: false,
});

/// The published index. In the signal handler (or inside `publish::reading`) only.
pub fn index() -> Option<&'static StubIndex> {
    INDEX.get()
}

/// Records a stub the JVM generated (a DynamicCodeGenerated event).
pub fn generated(name: &str, start: usize, length: usize) {
    if length == 0 {
        return;
    }
    if let Ok(mut named) = NAMED.lock() {
        named
            .ranges
            .insert((start, start.saturating_add(length)), name.to_string());
        named.changed = true;
    }
}

/// Publishes the index if stubs came since it was last published (and frees indexes no
/// handler reads any more). Not in the signal handler.
pub fn refresh() {
    let ranges: Vec<(usize, usize)> = {
        let Ok(mut named) = NAMED.lock() else {
            return;
        };
        if !named.changed {
            drop(named);
            INDEX.reclaim();
            return;
        }
        named.changed = false;
        named.ranges.keys().copied().collect()
    };
    INDEX.publish(Box::new(StubIndex {
        ranges: innermost(ranges).into_boxed_slice(),
    }));
}

/// The ranges (sorted by start) with every range that holds another one left out.
fn innermost(ranges: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    let mut kept: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        while let Some(&(s, e)) = kept.last() {
            if s <= start && end <= e {
                kept.pop();
            } else {
                break;
            }
        }
        if kept.last().is_some_and(|&(_, e)| e > start) {
            // Overlaps the previous range without being inside it: keep the earlier one.
            continue;
        }
        kept.push((start, end));
    }
    kept
}

/// The name of the innermost stub that holds `pc`, as the JVM named it.
pub fn name(pc: usize) -> Option<String> {
    let named = NAMED.lock().ok()?;
    named
        .ranges
        .range(..=(pc, usize::MAX))
        .rev()
        .take(64)
        .filter(|((_, end), _)| pc < *end)
        .min_by_key(|((start, end), _)| end - start)
        .map(|(_, name)| name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_enclosing_range_gives_way_to_the_ranges_inside() {
        let kept = innermost(vec![(100, 200), (100, 120), (130, 150), (300, 310)]);
        assert_eq!(kept, vec![(100, 120), (130, 150), (300, 310)]);
        let index = StubIndex {
            ranges: kept.into_boxed_slice(),
        };
        assert_eq!(index.find(110), Some((100, 120)));
        assert_eq!(index.find(125), None);
        assert_eq!(index.find(309), Some((300, 310)));
        assert_eq!(index.find(99), None);
    }
}
