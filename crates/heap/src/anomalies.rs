//! Owns [`Anomalies`]: the inconsistencies of a heap dump that the graph tolerates (as Eclipse
//! MAT and VisualVM do), each counted with the byte offset of the first record that shows it.

use std::fmt;

/// One kind of inconsistency: how many records show it, and the first of them (the lowest
/// offset) with the id at fault.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Anomaly {
    /// Records (or, for references, references) that show it.
    pub count: u64,
    /// The byte offset of the first record that shows it, and the id at fault there.
    pub first: Option<(u64, u64)>,
}

impl Anomaly {
    /// Notes one more case, in the record at `offset`, about `id`.
    #[inline]
    pub(crate) fn note(&mut self, offset: u64, id: u64) {
        self.count += 1;
        if self.first.is_none_or(|(at, _)| offset < at) {
            self.first = Some((offset, id));
        }
    }

    /// Adds the cases of `other` (found in another part of the file).
    pub(crate) fn add(&mut self, other: &Anomaly) {
        self.count += other.count;
        if let Some((offset, id)) = other.first
            && self.first.is_none_or(|(at, _)| offset < at)
        {
            self.first = Some((offset, id));
        }
    }
}

/// The inconsistencies of a heap dump the graph was built in spite of. None of them stops a
/// reader: an object of a class not in the dump is of "(unknown class)", a reference to an
/// object not in the dump is left out, a class without a name is named by its id.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Anomalies {
    /// INSTANCE and OBJECT ARRAY DUMPs whose class id names no CLASS DUMP (the id: the class's).
    pub unknown_class: Anomaly,
    /// References (instance fields, array elements, static fields) to an id that is no object
    /// of the dump (the id: the target's).
    pub dangling: Anomaly,
    /// INSTANCE DUMPs whose field bytes are not as many as their class's fields take (the id:
    /// the class's).
    pub bad_layout: Anomaly,
    /// CLASS DUMPs whose class has no name: no LOAD CLASS, or its name's STRING id resolves
    /// to nothing (the id: the class's).
    pub unnamed_class: Anomaly,
}

impl Anomalies {
    /// Adds the cases of `other`.
    pub(crate) fn add(&mut self, other: &Anomalies) {
        self.unknown_class.add(&other.unknown_class);
        self.dangling.add(&other.dangling);
        self.bad_layout.add(&other.bad_layout);
        self.unnamed_class.add(&other.unnamed_class);
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.lines().is_empty()
    }

    /// One line per kind there is, naming the first record's offset.
    pub fn lines(&self) -> Vec<String> {
        let kinds = [
            (
                &self.unknown_class,
                "objects of a class not in the dump",
                "names class",
            ),
            (
                &self.dangling,
                "references to objects not in the dump",
                "refers to",
            ),
            (
                &self.bad_layout,
                "instances whose field bytes do not fit their class's fields",
                "is of class",
            ),
            (
                &self.unnamed_class,
                "classes without a name (no LOAD CLASS, or no STRING for it)",
                "describes class",
            ),
        ];
        kinds
            .iter()
            .filter_map(|(anomaly, what, id_is)| {
                let (offset, id) = anomaly.first?;
                Some(format!(
                    "{what}: {} (the first in the record at offset {offset:#x}, which {id_is} \
                     {id:#x})",
                    anomaly.count
                ))
            })
            .collect()
    }
}

impl fmt::Display for Anomalies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.lines().join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_case_is_the_lowest_offset() {
        let mut a = Anomalies::default();
        a.dangling.note(0x200, 7);
        let mut b = Anomalies::default();
        b.dangling.note(0x100, 9);
        b.dangling.note(0x300, 5);
        a.add(&b);
        assert_eq!(a.dangling.count, 3);
        assert_eq!(a.dangling.first, Some((0x100, 9)));
        assert_eq!(
            a.lines(),
            [
                "references to objects not in the dump: 3 (the first in the record at offset \
              0x100, which refers to 0x9)"
            ]
        );
        assert!(Anomalies::default().is_empty());
    }
}
