//! A symbol table: function start addresses, sizes and raw (mangled) names, sorted by
//! address, in one string arena.

/// One symbol: where it starts, how long it is (0 when unknown), where its name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    start: u64,
    size: u64,
    name: u32,
    len: u32,
    /// Which of the symbols at one address names it (the highest).
    rank: u8,
}

/// Function symbols of one object, sorted by address.
#[derive(Debug, Default)]
pub struct SymbolTable {
    entries: Vec<Entry>,
    names: String,
}

/// A symbol found for an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit<'a> {
    /// Its index in the table (stable while the table lives).
    pub index: usize,
    /// Its raw name.
    pub name: &'a str,
    /// Its start address.
    pub start: u64,
}

impl SymbolTable {
    /// An empty table.
    pub fn new() -> SymbolTable {
        SymbolTable::default()
    }

    /// Adds a symbol, global (or weak) or local to its object (call [`SymbolTable::finish`]
    /// after the last).
    pub fn push(&mut self, start: u64, size: u64, name: &str, global: bool) {
        if name.is_empty() || self.names.len() + name.len() > u32::MAX as usize {
            return;
        }
        let offset = self.names.len() as u32;
        self.names.push_str(name);
        self.entries.push(Entry {
            start,
            size,
            name: offset,
            len: name.len() as u32,
            rank: u8::from(size > 0) * 4 + u8::from(global) * 2 + u8::from(!name.starts_with('_')),
        });
    }

    /// Sorts the symbols by address; of several at one address (aliases), keeps one with a
    /// size, global rather than local, without a leading underscore (`getpid`, not
    /// `__getpid` or glibc's `__GI___getpid`), else the first added.
    pub fn finish(&mut self) {
        self.entries
            .sort_by(|a, b| a.start.cmp(&b.start).then(b.rank.cmp(&a.rank)));
        self.entries.dedup_by_key(|e| e.start);
        self.entries.shrink_to_fit();
        self.names.shrink_to_fit();
    }

    /// The symbol that contains `address`: the last one starting at or before it, if its
    /// size covers it (a symbol of unknown size covers up to the next one).
    pub fn find(&self, address: u64) -> Option<Hit<'_>> {
        let index = self.entries.partition_point(|e| e.start <= address);
        let entry = self.entries.get(index.checked_sub(1)?)?;
        if entry.size > 0 && address - entry.start >= entry.size {
            return None;
        }
        Some(Hit {
            index: index - 1,
            name: self.name(entry),
            start: entry.start,
        })
    }

    /// The raw name of symbol `index`.
    pub fn name_at(&self, index: usize) -> Option<&str> {
        self.entries.get(index).map(|e| self.name(e))
    }

    fn name(&self, entry: &Entry) -> &str {
        let start = entry.name as usize;
        self.names
            .get(start..start + entry.len as usize)
            .unwrap_or("")
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table has no symbol.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes the table holds.
    pub fn bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Entry>() + self.names.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_find_the_symbol_that_contains_them() {
        let mut t = SymbolTable::new();
        t.push(0x2000, 0x10, "b", true);
        t.push(0x1000, 0, "a_alias", true);
        t.push(0x1000, 0x100, "a", true);
        t.push(0x3000, 0, "c_unsized", false);
        t.push(0x4000, 8, "__GI___getpid", false);
        t.push(0x4000, 8, "__getpid", true);
        t.push(0x4000, 8, "getpid", true);
        t.finish();
        assert_eq!(t.len(), 4);
        assert_eq!(t.find(0x4004).unwrap().name, "getpid");
        assert_eq!(t.find(0xfff), None);
        assert_eq!(t.find(0x1000).unwrap().name, "a");
        assert_eq!(t.find(0x10ff).unwrap().name, "a");
        assert_eq!(t.find(0x1100), None);
        assert_eq!(t.find(0x200f).unwrap().name, "b");
        assert_eq!(t.find(0x2010), None);
        let c = t.find(0x3999).unwrap();
        assert_eq!((c.name, c.start), ("c_unsized", 0x3000));
    }
}
