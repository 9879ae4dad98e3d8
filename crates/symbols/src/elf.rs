//! Function symbols and loadable segments of an ELF object, read with the `object` crate:
//! `.symtab` and `.dynsym` together, or those of the object's separate debug file (found by
//! build id or `.gnu_debuglink` under `/usr/lib/debug`) when the object itself was stripped
//! of `.symtab`.

use std::path::{Path, PathBuf};

use object::{
    Object, ObjectSection, ObjectSegment, ObjectSymbol, ReadRef, SectionKind, SymbolKind,
};

use crate::table::SymbolTable;

/// A loadable segment: where its file bytes go in the object's address space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Its virtual address.
    pub address: u64,
    /// Its offset in the file.
    pub offset: u64,
    /// Its size in the file.
    pub size: u64,
}

/// What the symbolizer needs of an object.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Its function symbols, by virtual address.
    pub table: SymbolTable,
    /// Its loadable segments.
    pub segments: Vec<Segment>,
}

/// Where the objects' separate debug files are.
const DEBUG_ROOT: &str = "/usr/lib/debug";

/// Reads the object at `path`; `limit` bounds the bytes of its symbol table (a larger one is
/// an error).
pub fn load_file(path: &Path, limit: usize) -> Result<Loaded, String> {
    // The whole file is read (a read of the symbol and string tables alone, through
    // `object`'s read cache, took a system call per name: 370 ms for libjvm's 66,000).
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let object =
        object::File::parse(&*data).map_err(|e| format!("{}: not ELF: {e}", path.display()))?;
    let mut loaded = Loaded {
        table: SymbolTable::new(),
        segments: segments(&object),
    };
    let own_symtab = object.symbols().next().is_some();
    if !own_symtab
        && let Some(debug) = debug_file(&object, path)
        && let Ok(debug) = std::fs::read(debug)
        && let Ok(debug) = object::File::parse(&*debug)
    {
        // The debug file's symbols are at the same addresses as the object's.
        add_symbols(&mut loaded.table, &debug, limit)?;
    }
    add_symbols(&mut loaded.table, &object, limit)?;
    loaded.table.finish();
    Ok(loaded)
}

/// Reads the object whose bytes are `data` (the vDSO, copied from memory).
pub fn load_bytes(data: &[u8], limit: usize) -> Result<Loaded, String> {
    let object = object::File::parse(data).map_err(|e| format!("not ELF: {e}"))?;
    let mut loaded = Loaded {
        table: SymbolTable::new(),
        segments: segments(&object),
    };
    add_symbols(&mut loaded.table, &object, limit)?;
    loaded.table.finish();
    Ok(loaded)
}

fn segments<'data, R: ReadRef<'data>>(object: &object::File<'data, R>) -> Vec<Segment> {
    object
        .segments()
        .map(|s| {
            let (offset, size) = s.file_range();
            Segment {
                address: s.address(),
                offset,
                size,
            }
        })
        .collect()
}

/// Adds the function symbols of `object` (`.symtab`, then `.dynsym`) to `table`.
fn add_symbols<'data, R: ReadRef<'data>>(
    table: &mut SymbolTable,
    object: &object::File<'data, R>,
    limit: usize,
) -> Result<(), String> {
    let mut bytes = table.bytes();
    for symbol in object.symbols().chain(object.dynamic_symbols()) {
        if symbol.is_undefined() || symbol.address() == 0 {
            continue;
        }
        let code = match symbol.kind() {
            SymbolKind::Text => true,
            // Assembly functions often have no type: kept when in an executable section.
            SymbolKind::Unknown | SymbolKind::Label => symbol
                .section_index()
                .and_then(|i| object.section_by_index(i).ok())
                .is_some_and(|s| s.kind() == SectionKind::Text),
            _ => false,
        };
        if !code {
            continue;
        }
        let Ok(name) = symbol.name() else {
            continue;
        };
        bytes += name.len() + 24;
        if bytes > limit {
            return Err(format!("symbol table over the {limit}-byte limit"));
        }
        table.push(
            symbol.address(),
            symbol.size(),
            name,
            symbol.is_global() || symbol.is_weak(),
        );
    }
    Ok(())
}

/// The separate debug file of `object` (at `path`), if one is installed.
fn debug_file<'data, R: ReadRef<'data>>(
    object: &object::File<'data, R>,
    path: &Path,
) -> Option<PathBuf> {
    if let Ok(Some(id)) = object.build_id()
        && id.len() >= 2
    {
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        let candidate = Path::new(DEBUG_ROOT)
            .join(".build-id")
            .join(&hex[..2])
            .join(format!("{}.debug", &hex[2..]));
        if candidate.is_file() {
            return Some(candidate);
        }
    }
    let (name, _) = object.gnu_debuglink().ok()??;
    let name = std::str::from_utf8(name).ok()?;
    let dir = path.parent()?;
    let relative = dir.strip_prefix("/").unwrap_or(dir);
    [
        dir.join(".debug").join(name),
        Path::new(DEBUG_ROOT).join(relative).join(name),
        dir.join(name),
    ]
    .into_iter()
    .find(|c| c.is_file() && c != path)
}

/// The load bias of an object whose bytes at file offset `offset` are mapped at `start`: what
/// to add to its virtual addresses to get the addresses in the process.
pub fn bias(segments: &[Segment], start: u64, offset: u64) -> u64 {
    // The kernel maps each segment from its first page: the mapping at `offset` is the
    // segment whose first page is there (4, 16 or 64 KB pages), else (a mapping split since)
    // the last segment that holds `offset`.
    let first_page = |s: &&Segment| {
        [4096u64, 16384, 65536]
            .iter()
            .any(|page| s.offset & !(page - 1) == offset)
    };
    let segment = segments.iter().find(first_page).or_else(|| {
        segments
            .iter()
            .rev()
            .find(|s| s.offset & !4095 <= offset && offset < s.offset + s.size.max(1))
    });
    // The mapping's first byte is file offset `offset`, at virtual address
    // `address - segment offset + offset`.
    let delta = segment.map_or(0, |s| s.address.wrapping_sub(s.offset));
    start.wrapping_sub(offset).wrapping_sub(delta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bias_comes_from_the_segment_that_holds_the_mapping() {
        // A shared library: text at file offset 0x1000, virtual address 0x1000.
        let library = [
            Segment {
                address: 0,
                offset: 0,
                size: 0x800,
            },
            Segment {
                address: 0x1000,
                offset: 0x1000,
                size: 0x5000,
            },
        ];
        assert_eq!(bias(&library, 0x7f00_0000_1000, 0x1000), 0x7f00_0000_0000);
        // An executable linked to put text 0x200000 above its file offset (lld's layout).
        let program = [Segment {
            address: 0x201_000,
            offset: 0x1000,
            size: 0x3000,
        }];
        assert_eq!(
            bias(&program, 0x5555_0000_1000, 0x1000),
            0x5555_0000_1000 - 0x201_000
        );
        // A segment whose file offset is not page-aligned.
        let odd = [Segment {
            address: 0x2340,
            offset: 0x1340,
            size: 0x2000,
        }];
        assert_eq!(bias(&odd, 0x7000_1000, 0x1000), 0x7000_1000 - 0x2000);
        // Two segments share a page: the executable mapping starts at the second's first page.
        let shared = [
            Segment {
                address: 0,
                offset: 0,
                size: 0x8d344,
            },
            Segment {
                address: 0x8e350,
                offset: 0x8d350,
                size: 0x1c2570,
            },
        ];
        assert_eq!(bias(&shared, 0x5555_0008_e000, 0x8d000), 0x5555_0000_0000);
    }
}
