//! Owns the memory map of an input file: the CLI's only `unsafe` code.

use std::fs::File;
use std::io;

use memmap2::{Advice, Mmap, UncheckedAdvice};

/// A read-only memory map of a whole file.
#[derive(Debug)]
pub struct MappedFile {
    map: Mmap,
}

impl MappedFile {
    /// Maps `file` read-only and tells the kernel it will be read front to back.
    pub fn new(file: &File) -> io::Result<MappedFile> {
        // SAFETY: the map is read-only and private to this process. If another process
        // truncates the file while we read it, accesses past the new end raise SIGBUS;
        // that is the documented risk of reading a file by mmap, accepted here as
        // every mmap-based reader does, and `hprof` never writes to its inputs.
        let map = unsafe { Mmap::map(file)? };
        // Advice is a hint; a kernel that ignores it changes only speed.
        let _ = map.advise(Advice::Sequential);
        Ok(MappedFile { map })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Drops the pages of `start..end` from this process's resident set. They are read
    /// back from the file if touched again, so this only keeps memory small when a
    /// file bigger than RAM is walked front to back.
    pub fn release(&self, start: usize, end: usize) {
        let end = end.min(self.map.len());
        if start >= end {
            return;
        }
        // SAFETY: the mapping is a read-only, file-backed shared map: after DONTNEED
        // the kernel refills the pages from the file on the next access, so no byte any
        // live reference points at changes. The range is inside the mapping.
        let _ = unsafe {
            self.map
                .unchecked_advise_range(UncheckedAdvice::DontNeed, start, end - start)
        };
    }
}
