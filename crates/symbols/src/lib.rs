//! hprof-symbols: names code addresses. A user-space address of a process is named by the
//! library mapped there and the ELF symbol that contains it (`.symtab` and `.dynsym`, or the
//! library's separate debug file; the vDSO from its image in memory), demangled; a kernel
//! address by the kernel's symbol (`/proc/kallsyms`).
//!
//! Everything is read lazily: the mappings at the first address, a library's symbols at the
//! first address inside it, the kernel's at the first kernel address. An address outside
//! every known mapping makes the mappings be read again (a library loaded since, such as a
//! JNI library `System.loadLibrary` opened), at most every [`RELOAD_EVERY`]. The symbol tables
//! together hold at most a byte limit ([`DEFAULT_LIMIT`] unless set): a library whose table
//! would go over it is named without symbols.
//!
//! No signal-handler code here: this runs where allocation and file reads are allowed.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod demangle;
mod elf;
mod kallsyms;
mod maps;
mod table;

pub use demangle::demangle;
pub use table::SymbolTable;

/// Most bytes all symbol tables hold together, by default.
pub const DEFAULT_LIMIT: usize = 256 << 20;

/// Least time between two readings of the process's mappings forced by unknown addresses.
pub const RELOAD_EVERY: Duration = Duration::from_millis(100);

/// The library name of a kernel address.
pub const KERNEL: &str = "[kernel]";
/// The library name of an address in no mapping.
pub const UNKNOWN: &str = "[unknown]";
/// The library name of an address in executable memory no file backs (code generated at run
/// time by something other than the JVM's code cache).
pub const ANONYMOUS: &str = "[anon]";

/// Where an address is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The library's file name (`libc.so.6`), or `[vdso]`, [`KERNEL`], [`ANONYMOUS`],
    /// [`UNKNOWN`].
    pub library: Arc<str>,
    /// The library's path (`/usr/lib/x86_64-linux-gnu/libc.so.6`), or the same as `library`
    /// for the others.
    pub path: Arc<str>,
    /// The symbol that contains the address, demangled (`os::javaTimeNanos`), if known.
    pub symbol: Option<Arc<str>>,
    /// The address's offset from the symbol's start; without a symbol, its address in the
    /// object's own address space (what `addr2line -e LIBRARY` takes), or the address itself.
    pub offset: u64,
}

#[derive(Debug)]
enum Symbols {
    NotRead,
    Read(elf::Loaded),
    Failed,
}

#[derive(Debug)]
struct Library {
    name: Arc<str>,
    path: Arc<str>,
    symbols: Symbols,
}

#[derive(Debug)]
enum Kernel {
    NotRead,
    Read(KernelSymbols),
    Unavailable,
}

/// The kernel's function symbols, read from `/proc/kallsyms` (on their own, so they can be
/// read on another thread than the one that names addresses).
#[derive(Debug)]
pub struct KernelSymbols {
    table: SymbolTable,
}

impl KernelSymbols {
    /// Reads `/proc/kallsyms`, at most `limit` bytes of symbols; `None` when the kernel hides
    /// their addresses.
    pub fn read(limit: usize) -> Option<KernelSymbols> {
        KernelSymbols::read_from(Path::new("/proc/kallsyms"), limit)
    }

    /// Reads the kernel's symbols from `path` (the format of `/proc/kallsyms`).
    pub fn read_from(path: &Path, limit: usize) -> Option<KernelSymbols> {
        let text = std::fs::read_to_string(path).ok()?;
        kallsyms::parse(&text, limit).map(|table| KernelSymbols { table })
    }

    /// Where the kernel address `address` is.
    pub fn locate(&self, address: u64) -> Location {
        match self.table.find(address) {
            Some(hit) => Location {
                library: Arc::from(KERNEL),
                path: Arc::from(KERNEL),
                symbol: Some(Arc::from(hit.name)),
                offset: address - hit.start,
            },
            None => plain(KERNEL, address),
        }
    }

    /// Bytes the symbols hold.
    pub fn bytes(&self) -> usize {
        self.table.bytes()
    }
}

/// Names addresses of one process (this one by default).
#[derive(Debug)]
pub struct Symbolizer {
    proc: PathBuf,
    kallsyms: PathBuf,
    /// Executable mappings by address, each with its library's index (`None`: anonymous).
    mappings: Vec<(maps::Mapping, Option<usize>)>,
    libraries: Vec<Library>,
    /// Libraries by path and inode, kept across readings of the mappings.
    by_file: HashMap<(String, (String, u64)), usize>,
    read_at: Option<Instant>,
    kernel: Kernel,
    /// Demangled names by (library index, symbol index).
    names: HashMap<(usize, usize), Arc<str>>,
    limit: usize,
    used: usize,
}

impl Default for Symbolizer {
    fn default() -> Self {
        Symbolizer::new()
    }
}

impl Symbolizer {
    /// A symbolizer of this process.
    pub fn new() -> Symbolizer {
        Symbolizer::of_proc(PathBuf::from("/proc/self"))
    }

    /// A symbolizer of the process `pid` (its mappings and memory must be readable).
    pub fn of_process(pid: u32) -> Symbolizer {
        Symbolizer::of_proc(PathBuf::from(format!("/proc/{pid}")))
    }

    fn of_proc(proc: PathBuf) -> Symbolizer {
        Symbolizer {
            proc,
            kallsyms: PathBuf::from("/proc/kallsyms"),
            mappings: Vec::new(),
            libraries: Vec::new(),
            by_file: HashMap::new(),
            read_at: None,
            kernel: Kernel::NotRead,
            names: HashMap::new(),
            limit: DEFAULT_LIMIT,
            used: 0,
        }
    }

    /// Sets the most bytes the symbol tables may hold together.
    pub fn with_limit(mut self, bytes: usize) -> Symbolizer {
        self.limit = bytes;
        self
    }

    /// Reads kernel symbols from `path` instead of `/proc/kallsyms`.
    pub fn with_kallsyms(mut self, path: &Path) -> Symbolizer {
        self.kallsyms = path.to_path_buf();
        self
    }

    /// Bytes the symbol tables and names hold.
    pub fn memory_used(&self) -> usize {
        self.used + self.names.values().map(|n| n.len() + 16).sum::<usize>()
    }

    /// Reads the process's mappings again (call after a library was loaded to name its code
    /// at once; unknown addresses do it too, at most every [`RELOAD_EVERY`]).
    pub fn refresh(&mut self) {
        self.read_at = Some(Instant::now());
        let Ok(text) = std::fs::read_to_string(self.proc.join("maps")) else {
            return;
        };
        let mut mappings = Vec::new();
        for mapping in maps::parse(&text) {
            let library = if mapping.path.is_empty() {
                None
            } else {
                let key = (mapping.path.clone(), mapping.inode.clone());
                let index = *self.by_file.entry(key).or_insert_with(|| {
                    let path: Arc<str> = Arc::from(mapping.path.as_str());
                    self.libraries.push(Library {
                        name: Arc::from(maps::file_name(&mapping.path)),
                        path,
                        symbols: Symbols::NotRead,
                    });
                    self.libraries.len() - 1
                });
                Some(index)
            };
            mappings.push((mapping, library));
        }
        self.mappings = mappings;
    }

    fn mapping_of(&self, address: u64) -> Option<usize> {
        let index = self.mappings.partition_point(|(m, _)| m.start <= address);
        let index = index.checked_sub(1)?;
        (address < self.mappings[index].0.end).then_some(index)
    }

    /// Where the user-space address `address` is. (For a return address, pass the address
    /// minus one: a call that ends a function returns past its end.)
    pub fn user(&mut self, address: u64) -> Location {
        let stale = self.read_at.is_none_or(|t| t.elapsed() >= RELOAD_EVERY);
        let mut found = self.mapping_of(address);
        if found.is_none() && stale {
            self.refresh();
            found = self.mapping_of(address);
        }
        let Some(index) = found else {
            return plain(UNKNOWN, address);
        };
        let (mapping, library) = self.mappings[index].clone();
        let Some(library) = library else {
            return plain(ANONYMOUS, address);
        };
        self.read_symbols(library, &mapping);
        let lib = &self.libraries[library];
        let Symbols::Read(loaded) = &lib.symbols else {
            return Location {
                library: lib.name.clone(),
                path: lib.path.clone(),
                symbol: None,
                offset: address - mapping.start + mapping.offset,
            };
        };
        let bias = elf::bias(&loaded.segments, mapping.start, mapping.offset);
        let virtual_address = address.wrapping_sub(bias);
        let (name, path) = (lib.name.clone(), lib.path.clone());
        let found = loaded
            .table
            .find(virtual_address)
            .map(|hit| (hit.index, hit.start));
        let Some((index, start)) = found else {
            return Location {
                library: name,
                path,
                symbol: None,
                offset: virtual_address,
            };
        };
        Location {
            library: name,
            path,
            symbol: self.name(library, index),
            offset: virtual_address - start,
        }
    }

    /// Where the kernel address `address` is.
    pub fn kernel(&mut self, address: u64) -> Location {
        if matches!(self.kernel, Kernel::NotRead) {
            let budget = self.limit.saturating_sub(self.used);
            self.kernel = match KernelSymbols::read_from(&self.kallsyms, budget) {
                Some(symbols) => {
                    self.used += symbols.bytes();
                    Kernel::Read(symbols)
                }
                None => Kernel::Unavailable,
            };
        }
        match &self.kernel {
            Kernel::Read(symbols) => symbols.locate(address),
            _ => plain(KERNEL, address),
        }
    }

    /// Whether kernel addresses can be named (reads `/proc/kallsyms` once).
    pub fn kernel_symbols(&mut self) -> bool {
        if matches!(self.kernel, Kernel::NotRead) {
            let _ = self.kernel(0);
        }
        matches!(self.kernel, Kernel::Read(_))
    }

    /// The demangled name of symbol `index` of `library`, demangled once.
    fn name(&mut self, library: usize, index: usize) -> Option<Arc<str>> {
        if let Some(name) = self.names.get(&(library, index)) {
            return Some(name.clone());
        }
        let table = match &self.libraries.get(library)?.symbols {
            Symbols::Read(loaded) => &loaded.table,
            _ => return None,
        };
        let name: Arc<str> = Arc::from(demangle::demangle(table.name_at(index)?));
        self.names.insert((library, index), name.clone());
        Some(name)
    }

    /// Reads the symbols of `library` (mapped by `mapping`) unless they were.
    fn read_symbols(&mut self, library: usize, mapping: &maps::Mapping) {
        if !matches!(self.libraries[library].symbols, Symbols::NotRead) {
            return;
        }
        let budget = self.limit.saturating_sub(self.used);
        let loaded = if mapping.path.starts_with('[') {
            self.read_memory(mapping)
                .and_then(|bytes| elf::load_bytes(&bytes, budget))
        } else {
            let path = mapping
                .path
                .strip_suffix(" (deleted)")
                .unwrap_or(&mapping.path);
            elf::load_file(Path::new(path), budget)
        };
        self.libraries[library].symbols = match loaded {
            Ok(loaded) => {
                self.used += loaded.table.bytes();
                Symbols::Read(loaded)
            }
            Err(_) => Symbols::Failed,
        };
    }

    /// The bytes of `mapping` in the process's memory (the vDSO's image).
    fn read_memory(&self, mapping: &maps::Mapping) -> Result<Vec<u8>, String> {
        let length = usize::try_from(mapping.end - mapping.start).map_err(|e| e.to_string())?;
        if length > 1 << 20 {
            return Err(format!("{} is {length} bytes", mapping.path));
        }
        let mut mem = std::fs::File::open(self.proc.join("mem")).map_err(|e| e.to_string())?;
        mem.seek(SeekFrom::Start(mapping.start))
            .map_err(|e| e.to_string())?;
        let mut bytes = vec![0; length];
        mem.read_exact(&mut bytes).map_err(|e| e.to_string())?;
        Ok(bytes)
    }
}

fn plain(library: &str, address: u64) -> Location {
    Location {
        library: Arc::from(library),
        path: Arc::from(library),
        symbol: None,
        offset: address,
    }
}
