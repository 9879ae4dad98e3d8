//! Opens HPROF inputs (a file by memory map, a gzip-compressed file through a private
//! temporary file, or standard input) and reports progress while they are walked.

use std::fs::File;
use std::io::{self, BufReader, IsTerminal, Read};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

use crate::mmap::MappedFile;

/// Files at least this big get a progress bar when stderr is a terminal.
const PROGRESS_MIN_BYTES: u64 = 100 << 20;

/// How far behind the read position pages are dropped from memory, and how often.
const RELEASE_STEP: u64 = 32 << 20;

/// The bytes of an input: a memory-mapped file or everything read from a pipe.
#[derive(Debug)]
pub enum Input {
    /// A regular file, mapped.
    Mapped(MappedFile),
    /// Bytes read into memory (standard input).
    Buffered(Vec<u8>),
}

impl Input {
    /// Opens `path` by memory map, or reads all of standard input for `-`. A gzip-compressed
    /// file (`jcmd GC.heap_dump -gz=N`) is decompressed first, into memory for standard
    /// input and otherwise into a private temporary file that is mapped and unlinked at once.
    /// A directory or one of our text profiles gets a clear error.
    pub fn open(path: &Path) -> Result<Input> {
        if path == Path::new("-") {
            let mut bytes = Vec::new();
            std::io::stdin()
                .lock()
                .read_to_end(&mut bytes)
                .context("cannot read standard input")?;
            if is_gzip(&bytes) {
                let mut plain = Vec::new();
                flate2::read::MultiGzDecoder::new(&bytes[..])
                    .read_to_end(&mut plain)
                    .map_err(gzip_error)
                    .context("standard input")?;
                bytes = plain;
            }
            check_not_text(&bytes).context("standard input")?;
            return Ok(Input::Buffered(bytes));
        }
        if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            anyhow::bail!("{} is a directory, not an HPROF file", path.display());
        }
        let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let mapped =
            MappedFile::new(&file).with_context(|| format!("cannot map {}", path.display()))?;
        if is_gzip(mapped.bytes()) {
            let plain = decompress(&file).with_context(|| path.display().to_string())?;
            return Ok(Input::Mapped(plain));
        }
        check_not_text(mapped.bytes()).with_context(|| path.display().to_string())?;
        Ok(Input::Mapped(mapped))
    }

    /// All the input's bytes.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Input::Mapped(map) => map.bytes(),
            Input::Buffered(bytes) => bytes,
        }
    }

    /// A progress bar over `total` bytes of work labelled `label`, shown only for big
    /// files when stderr is a terminal.
    pub fn progress(&self, label: &str, total: u64) -> Progress {
        let len = self.bytes().len() as u64;
        let bar = (len >= PROGRESS_MIN_BYTES && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(total);
            let style = ProgressStyle::with_template(
                "{msg} [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec} {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            bar.set_style(style);
            bar.set_message(label.to_string());
            bar
        });
        Progress { bar }
    }

    /// Drops the pages of `start..end` from memory (a no-op for buffered input).
    pub fn release(&self, start: u64, end: u64) {
        if let Input::Mapped(map) = self {
            map.release(start as usize, end as usize);
        }
    }
}

/// A progress bar (or nothing), cleared when dropped.
#[derive(Debug)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Starts following a front-to-back walk over `input` from byte `start`. Several
    /// walks over distinct ranges may run at once, on different threads.
    pub fn walk<'a>(&self, input: &'a Input, start: u64) -> Walk<'a> {
        Walk {
            input,
            bar: self.bar.clone(),
            released: start,
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The next record, or with `partial` the end of the file when the last record is cut
/// short (a file still being written, such as `hprof listen`'s output).
pub fn next_record<'a>(
    records: &mut hprof_format::Records<'a>,
    partial: bool,
) -> hprof_format::Result<Option<(hprof_format::RecordHeader, hprof_format::Record<'a>)>> {
    match records.next() {
        Err(err) if partial && matches!(err.kind(), hprof_format::ErrorKind::Truncated { .. }) => {
            eprintln!("hprof: stopped at the last complete record ({err})");
            Ok(None)
        }
        other => other,
    }
}

/// Follows a front-to-back walk: moves the progress bar and drops pages already read.
#[derive(Debug)]
pub struct Walk<'a> {
    input: &'a Input,
    bar: Option<ProgressBar>,
    released: u64,
}

impl Walk<'_> {
    /// Notes that everything before `offset` has been read. Cheap enough to call for
    /// every record: it only acts every [`RELEASE_STEP`] bytes.
    #[inline]
    pub fn at(&mut self, offset: u64) {
        if offset >= self.released + 2 * RELEASE_STEP {
            self.advance(offset - RELEASE_STEP);
        }
    }

    #[cold]
    fn advance(&mut self, upto: u64) {
        self.input.release(self.released, upto);
        if let Some(bar) = &self.bar {
            bar.inc(upto - self.released);
        }
        self.released = upto;
    }
}

/// True if `bytes` start like a gzip stream.
fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// Refuses a text profile (`java.hprof.txt`), which starts like a binary file's header.
fn check_not_text(bytes: &[u8]) -> Result<()> {
    let head = &bytes[..bytes.len().min(64)];
    if head.starts_with(b"JAVA PROFILE ") && !head.contains(&0) {
        anyhow::bail!("a text profile: use `hprof convert` or open it as text");
    }
    Ok(())
}

/// Names gzip errors for what they usually mean.
fn gzip_error(err: io::Error) -> anyhow::Error {
    if err.kind() == io::ErrorKind::UnexpectedEof {
        anyhow::anyhow!("gzip data ends early (the file is truncated): {err}")
    } else {
        anyhow::anyhow!("corrupt gzip data: {err}")
    }
}

/// A temporary file removed when dropped (the name is removed as soon as the file is
/// mapped; this also covers the error paths before that).
struct TempName(PathBuf);

impl Drop for TempName {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Decompresses a gzip file (every member, as `jcmd -gz` writes several) into a private
/// temporary file and maps it; the file's name is gone before this returns.
fn decompress(file: &File) -> Result<MappedFile> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let name =
        TempName(std::env::temp_dir().join(format!("hprof-{}-{nanos}.hprof", std::process::id())));
    let mut out = hprof_outfile::create(&name.0)
        .with_context(|| format!("cannot create {}", name.0.display()))?;
    let mut reader = flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 20, file));
    io::copy(&mut reader, &mut out).map_err(|e| {
        if matches!(
            e.kind(),
            io::ErrorKind::UnexpectedEof | io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData
        ) {
            gzip_error(e)
        } else {
            anyhow::Error::new(e).context(format!("cannot write {}", name.0.display()))
        }
    })?;
    drop(out);
    let plain = File::open(&name.0).with_context(|| format!("cannot open {}", name.0.display()))?;
    drop(name);
    let mapped = MappedFile::new(&plain).context("cannot map the decompressed dump")?;
    check_not_text(mapped.bytes())?;
    Ok(mapped)
}
