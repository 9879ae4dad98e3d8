//! Opens inputs, reading only what is bounded: a heap dump file by memory map; standard
//! input, a pipe, a device or a gzip-compressed dump spooled (its framing checked as it
//! passes) into an unlinked private temporary file that is mapped; a profile read into
//! memory through the same checks and a size limit. Also reports progress while inputs are
//! walked.

use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Read, Write};
use std::path::Path;
use std::sync::OnceLock;

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};

use crate::mmap::MappedFile;

/// Files at least this big get a progress bar when stderr is a terminal.
const PROGRESS_MIN_BYTES: u64 = 100 << 20;

/// How far behind the read position pages are dropped from memory, and how often.
const RELEASE_STEP: u64 = 32 << 20;

/// The most a profile read into memory may hold when its size is not the file system's to
/// give (standard input, a pipe, a device, or what a gzip file decompresses to), unless
/// `--max-input` says otherwise.
pub const DEFAULT_MAX_PROFILE: u64 = 4 << 30;

/// The longest line a text profile may have (its longest are frames: a method's name).
const MAX_TEXT_LINE: usize = 1 << 20;

/// `--max-input`, once set by `main`.
static MAX_INPUT: OnceLock<u64> = OnceLock::new();

/// Sets the limit on bytes read from inputs of unknown size (`--max-input`).
pub fn set_max_input(limit: u64) {
    let _ = MAX_INPUT.set(limit);
}

/// The bytes of an input: a memory-mapped file (the input itself, or its spooled copy).
#[derive(Debug)]
pub enum Input {
    /// A regular file, or the private copy of a stream, mapped.
    Mapped(MappedFile),
}

impl Input {
    /// Opens `path` by memory map (`-` is standard input). Standard input, a pipe or a
    /// device, and a gzip-compressed file (`jcmd GC.heap_dump -gz=N`, decompressed) are
    /// copied into an unlinked private temporary file first, their HPROF framing checked as
    /// they pass, so that garbage ends the read at its offset (`/dev/zero` at once) and a
    /// cut stream is reported as the mapped file is read. A directory or one of our text
    /// profiles gets a clear error.
    pub fn open(path: &Path) -> Result<Input> {
        let name = display_name(path);
        if path == Path::new("-") {
            let mapped = spool(&mut io::stdin().lock(), &name)?;
            return Ok(Input::Mapped(mapped));
        }
        let meta = std::fs::metadata(path).with_context(|| format!("cannot open {name}"))?;
        if meta.is_dir() {
            bail!("{name} is a directory, not an HPROF file");
        }
        let mut file = File::open(path).with_context(|| format!("cannot open {name}"))?;
        if !meta.is_file() {
            return Ok(Input::Mapped(spool(&mut file, &name)?));
        }
        let mapped = MappedFile::new(&file).with_context(|| format!("cannot map {name}"))?;
        if is_gzip(mapped.bytes()) {
            drop(mapped);
            return Ok(Input::Mapped(spool(&mut file, &name)?));
        }
        check_not_text(mapped.bytes()).with_context(|| name.clone())?;
        Ok(Input::Mapped(mapped))
    }

    /// All the input's bytes.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Input::Mapped(map) => map.bytes(),
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

    /// Drops the pages of `start..end` from memory.
    pub fn release(&self, start: u64, end: u64) {
        let Input::Mapped(map) = self;
        map.release(start as usize, end as usize);
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

/// What is missing from `input` (a cheap walk over its top-level records). A record cut
/// short is an error unless `allow_truncated`, before anything is written from the file.
pub fn completeness(
    input: &Input,
    name: &str,
    allow_truncated: bool,
) -> Result<hprof_format::Completeness> {
    let completeness =
        hprof_format::Completeness::scan(input.bytes()).with_context(|| name.to_string())?;
    if let Some(cut) = completeness.cut_error()
        && !allow_truncated
    {
        bail!("{name}: {cut} (--allow-truncated reads up to the last complete record)");
    }
    Ok(completeness)
}

/// Ends a command that read `name`: what is missing from it is an error (exit status 1)
/// naming it and how much was read, or with `allow_truncated` a warning line.
pub fn finish_reading(
    name: &str,
    completeness: &hprof_format::Completeness,
    allow_truncated: bool,
) -> Result<()> {
    match completeness.summary() {
        None => Ok(()),
        Some(line) if allow_truncated => {
            eprintln!("hprof: warning: {name} is incomplete: {line}");
            Ok(())
        }
        Some(line) => bail!("{name} is incomplete: {line} (--allow-truncated accepts it)"),
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
        anyhow::bail!(
            "a text profile, not a heap dump (its header, at byte offset 0, is a line of \
             text): use `hprof convert` or open it as text"
        );
    }
    Ok(())
}

/// What a gzip decoder's error of `kind` usually means, if it is one of the decoder's own.
fn gzip_meaning(kind: io::ErrorKind) -> Option<&'static str> {
    match kind {
        io::ErrorKind::UnexpectedEof => Some("gzip data ends early (the file is truncated)"),
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData => Some("corrupt gzip data"),
        _ => None,
    }
}

/// A gzip decoder whose read errors name both offsets the decoder had reached: in the
/// decompressed stream (the bytes it gave) and in the compressed one (the bytes it consumed:
/// where the bad data, or the end of a cut file, is), wherever the error comes up (the first
/// MiB, read to tell the format, included).
struct Gunzip<'a> {
    decoder: flate2::bufread::MultiGzDecoder<Consumed<'a>>,
    consumed: std::rc::Rc<std::cell::Cell<u64>>,
    produced: u64,
}

impl Read for Gunzip<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.decoder.read(buf) {
            Ok(n) => {
                self.produced += n as u64;
                Ok(n)
            }
            Err(e) => {
                let (out, at) = (self.produced, self.consumed.get());
                let what = match gzip_meaning(e.kind()) {
                    Some(meaning) => format!("{meaning}: {e}"),
                    None => e.to_string(),
                };
                Err(io::Error::new(
                    e.kind(),
                    format!(
                        "{what} (at decompressed byte offset {out}, which is at compressed byte offset {at})"
                    ),
                ))
            }
        }
    }
}

/// A buffered reader that counts the bytes its reader consumes.
struct Consumed<'a> {
    inner: io::Chain<io::Cursor<Vec<u8>>, BufReader<&'a mut dyn Read>>,
    consumed: std::rc::Rc<std::cell::Cell<u64>>,
}

impl Read for Consumed<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.set(self.consumed.get() + n as u64);
        Ok(n)
    }
}

impl BufRead for Consumed<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.consumed.set(self.consumed.get() + n as u64);
        self.inner.consume(n);
    }
}

/// `path` as messages name it (`-` is standard input).
pub(crate) fn display_name(path: &Path) -> String {
    if path == Path::new("-") {
        "standard input".into()
    } else {
        path.display().to_string()
    }
}

/// The first bytes of `src` (up to `n`, fewer at its end), taken out of its buffer.
fn peek(src: &mut dyn BufRead, n: usize) -> io::Result<Vec<u8>> {
    // A BufReader refills only when empty: read the head, then put it back in front.
    let mut head = Vec::with_capacity(n);
    while head.len() < n {
        let buf = src.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let take = buf.len().min(n - head.len());
        head.extend_from_slice(&buf[..take]);
        src.consume(take);
    }
    Ok(head)
}

/// A stream opened for reading, decompressed when it was gzip-compressed.
struct Plain<'a> {
    /// Its first bytes (decompressed), as many as asked for or fewer at its end.
    head: Vec<u8>,
    /// Whether the stream is gzip-compressed.
    gzip: bool,
    /// Every byte (decompressed), `head` first.
    all: Box<dyn Read + 'a>,
}

/// Opens `src` for reading: decompressed when it is gzip-compressed, its first `n` bytes
/// peeked (a stream is read once: nothing is read twice, nothing skipped).
fn plain<'a>(src: &'a mut dyn Read, name: &str, n: usize) -> Result<Plain<'a>> {
    let mut buffered = BufReader::with_capacity(1 << 20, src);
    let head = peek(&mut buffered, 2).with_context(|| format!("cannot read {name}"))?;
    let gzip = is_gzip(&head);
    let mut plain = BufReader::with_capacity(1 << 20, decompressed(head, buffered, gzip));
    let head = peek(&mut plain, n).with_context(|| format!("cannot read {name}"))?;
    Ok(Plain {
        all: Box::new(io::Cursor::new(head.clone()).chain(plain)),
        head,
        gzip,
    })
}

/// Copies a stream (gzip decompressed) into an unlinked private temporary file, checking
/// its HPROF framing and the `--max-input` limit as bytes pass, and maps the copy.
fn spool(src: &mut dyn Read, name: &str) -> Result<MappedFile> {
    let mut plain = plain(src, name, 64)?;
    check_not_text(&plain.head).with_context(|| name.to_string())?;
    spool_binary(&mut plain.all, plain.gzip, name)
}

/// Copies the HPROF binary stream `src` (decompressed, if `gzip`) into an unlinked private
/// temporary file, checking its framing and the `--max-input` limit as bytes pass, and maps
/// the copy.
fn spool_binary(src: &mut dyn Read, gzip: bool, name: &str) -> Result<MappedFile> {
    let dir = std::env::temp_dir();
    let file = tempfile::tempfile_in(&dir).with_context(|| {
        format!(
            "cannot create a temporary file for the input in {} (TMPDIR)",
            dir.display()
        )
    })?;
    let mut out = io::BufWriter::with_capacity(1 << 20, &file);
    let limit = MAX_INPUT.get().copied();
    let mut check = Check::Binary(Framing::default());
    pump(src, &mut out, &mut check, limit, gzip, name)?;
    out.flush()
        .with_context(|| format!("{name}: cannot write its temporary copy"))?;
    drop(out);
    let mapped =
        MappedFile::new(&file).with_context(|| format!("cannot map the copy of {name}"))?;
    Ok(mapped)
}

/// The bytes of a profile: a regular file mapped, or what a stream (or a gzip file)
/// held, read into memory.
#[derive(Debug)]
pub enum ProfileBytes {
    /// A regular file, mapped.
    Mapped(MappedFile),
    /// Read into memory.
    Read(Vec<u8>),
}

impl ProfileBytes {
    /// All the bytes.
    pub fn bytes(&self) -> &[u8] {
        match self {
            ProfileBytes::Mapped(map) => map.bytes(),
            ProfileBytes::Read(bytes) => bytes,
        }
    }
}

/// The file at `path` to read (`-`: standard input), and its size when it is a regular file;
/// a directory is an error naming it as not `what`.
fn source(path: &Path, name: &str, what: &str) -> Result<(Box<dyn Read>, Option<u64>)> {
    if path == Path::new("-") {
        return Ok((Box::new(io::stdin().lock()), None));
    }
    let meta = std::fs::metadata(path).with_context(|| format!("cannot read {name}"))?;
    if meta.is_dir() {
        bail!("{name} is a directory, not {what}");
    }
    let file = File::open(path).with_context(|| format!("cannot read {name}"))?;
    Ok((Box::new(file), meta.is_file().then_some(meta.len())))
}

/// Reads a profile the agent wrote (text or binary, gzip-compressed or not; `-` is standard
/// input). Its head must be a profile's (a `JAVA PROFILE` header, or a JFR recording's),
/// checked before anything else is read; a text profile may hold no NUL byte and no line
/// over 1 MiB; a binary one's records must be framed right. What the file system gives no
/// size for (a pipe, a device, a gzip file's contents) is limited to `--max-input` bytes
/// (default 4 GiB). Every error names the byte offset. Gives the bytes (decompressed; a
/// regular file's mapped) and whether the file was gzip-compressed.
fn read_profile(path: &Path) -> Result<(ProfileBytes, bool)> {
    let name = display_name(path);
    let (mut src, size) = source(path, &name, "a profile")?;
    let opened = plain(&mut src, &name, PROFILE_MAGIC_LEN)?;
    read_profile_from(opened, path, size, &name)
}

/// Reads the rest of the profile `opened` (the file `path`, of `size` bytes when it is a
/// regular file) as [`read_profile`] does.
fn read_profile_from(
    opened: Plain<'_>,
    path: &Path,
    size: Option<u64>,
    name: &str,
) -> Result<(ProfileBytes, bool)> {
    let Plain {
        head,
        gzip,
        all: mut rest,
    } = opened;
    let mut check = Check::for_profile(&head[..head.len().min(PROFILE_MAGIC_LEN)], gzip)
        .with_context(|| name.to_string())?;
    if size.is_some() && !gzip {
        // A regular file is mapped, and checked as a stream's bytes are.
        drop(rest);
        let file = File::open(path).with_context(|| format!("cannot read {name}"))?;
        let map = MappedFile::new(&file).with_context(|| format!("cannot map {name}"))?;
        check
            .feed(0, map.bytes())
            .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        return Ok((ProfileBytes::Mapped(map), false));
    }
    let limit = Some(MAX_INPUT.get().copied().unwrap_or(DEFAULT_MAX_PROFILE));
    let mut bytes = Vec::new();
    pump(&mut rest, &mut bytes, &mut check, limit, gzip, name)?;
    Ok((ProfileBytes::Read(bytes), gzip))
}

/// Reads the profile at `path` as [`read_profile`] does and parses it: the agent's output, a
/// JFR recording or folded stacks, or, gzip-compressed, any of those or a pprof profile.
pub fn read_recording(path: &Path) -> Result<hprof_profile::Recording> {
    let (bytes, gzip) = read_profile(path)?;
    recording_of(bytes.bytes(), gzip, &display_name(path), false)
}

/// Parses the profile `bytes` (decompressed, if `gzip`) read from `name`: the agent's output,
/// a JFR recording or folded stacks, or, gzip-compressed, any of those or a pprof profile.
/// With `by_method`, as [`hprof_profile::Recording::read_by_method`] reads.
pub fn recording_of(
    bytes: &[u8],
    gzip: bool,
    name: &str,
    by_method: bool,
) -> Result<hprof_profile::Recording> {
    use hprof_profile::Recording;
    let ours = bytes.starts_with(b"JAVA PROFILE 1.0.") || bytes.starts_with(b"FLR\0");
    let folded = bytes
        .iter()
        .take(PROFILE_MAGIC_LEN)
        .all(|&b| b >= 0x20 || matches!(b, b'\t' | b'\n' | b'\r'));
    let recording = if gzip && !ours && !folded {
        Recording::read_pprof(bytes)
    } else if by_method {
        Recording::read_by_method(bytes)
    } else {
        Recording::read(bytes)
    };
    recording.with_context(|| match gzip {
        true => format!("{name} (gzip-compressed: its byte offsets count decompressed bytes)"),
        false => name.to_string(),
    })
}

/// A file that is a heap dump or a profile, as [`open_either`] opens it.
#[derive(Debug)]
pub enum Either {
    /// An HPROF binary file (a heap dump, or the agent's binary profile), opened as
    /// [`Input::open`] opens it.
    Binary(Input),
    /// Any other profile, read as [`read_recording`] reads it: its bytes (decompressed) and
    /// whether it was gzip-compressed ([`recording_of`] parses them).
    Profile(ProfileBytes, bool),
}

/// Opens `path` (`-` is standard input), gzip-compressed or not: an HPROF binary file as
/// [`Input::open`] does (a regular file mapped, a stream spooled with its framing checked),
/// anything else as [`read_recording`] reads a profile (checked and limited as it passes).
/// A stream is read once, its head telling which it is.
pub fn open_either(path: &Path) -> Result<Either> {
    let name = display_name(path);
    let (mut src, size) = source(path, &name, "a profile or a heap dump")?;
    let mut opened = plain(&mut src, &name, 64)?;
    let binary = opened.head.starts_with(b"JAVA PROFILE 1.0.")
        && !opened.head.starts_with(b"JAVA PROFILE 1.0.1, created");
    if !binary {
        let (bytes, gzip) = read_profile_from(opened, path, size, &name)?;
        return Ok(Either::Profile(bytes, gzip));
    }
    if size.is_some() {
        // A regular file: mapped (or, gzip-compressed, spooled) as every command does.
        drop(opened);
        return Ok(Either::Binary(Input::open(path)?));
    }
    let mapped = spool_binary(&mut opened.all, opened.gzip, &name)?;
    Ok(Either::Binary(Input::Mapped(mapped)))
}

/// `buffered` with `head` (read from it) back in front, gzip-decompressed with `gzip`.
pub(crate) fn decompressed<'a>(
    head: Vec<u8>,
    buffered: BufReader<&'a mut dyn Read>,
    gzip: bool,
) -> Box<dyn Read + 'a> {
    let whole = io::Cursor::new(head).chain(buffered);
    if gzip {
        let consumed = std::rc::Rc::default();
        let inner = Consumed {
            inner: whole,
            consumed: std::rc::Rc::clone(&consumed),
        };
        Box::new(Gunzip {
            decoder: flate2::bufread::MultiGzDecoder::new(inner),
            consumed,
            produced: 0,
        })
    } else {
        Box::new(whole)
    }
}

/// Parses a size for `--max-input`: bytes, or with a suffix k, M, G or T (powers of 1024).
pub fn parse_size(text: &str) -> std::result::Result<u64, String> {
    let lower = text.trim().to_ascii_lowercase();
    let lower = lower.strip_suffix('b').unwrap_or(&lower);
    let (digits, shift) = match lower.chars().last() {
        Some('k') => (&lower[..lower.len() - 1], 10),
        Some('m') => (&lower[..lower.len() - 1], 20),
        Some('g') => (&lower[..lower.len() - 1], 30),
        Some('t') => (&lower[..lower.len() - 1], 40),
        _ => (lower, 0),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1u64 << shift))
        .filter(|&n| n > 0)
        .ok_or_else(|| {
            format!("`{text}` is not a size: a positive number of bytes, or with k, M, G or T")
        })
}

/// How many bytes tell one kind of profile from another.
const PROFILE_MAGIC_LEN: usize = 28;

/// What is checked of a stream as it passes.
enum Check {
    /// An HPROF binary file's framing.
    Binary(Framing),
    /// A text profile's lines.
    Text(TextLines),
    /// Nothing (a format whose own reader checks it: JFR, pprof, folded stacks).
    Nothing,
}

impl Check {
    /// The check for a profile whose first bytes are `head` (decompressed, for `gzip`); an
    /// error if it is no profile.
    fn for_profile(head: &[u8], gzip: bool) -> Result<Check> {
        // Folded stacks are text; a gzipped file that is not the agent's output may be pprof.
        let text = !head.is_empty()
            && head
                .iter()
                .all(|&b| b >= 0x20 || matches!(b, b'\t' | b'\n' | b'\r'));
        if head.starts_with(b"JAVA PROFILE 1.0.1, created") {
            Ok(Check::Text(TextLines::default()))
        } else if head.starts_with(b"JAVA PROFILE 1.0.") {
            Ok(Check::Binary(Framing::default()))
        } else if head.starts_with(b"FLR\0") || (gzip && !head.is_empty()) || text {
            Ok(Check::Nothing)
        } else if head.is_empty() {
            bail!("an empty file (it ends at byte offset 0), not a profile written by hprof")
        } else {
            bail!(
                "not a profile written by hprof (no \"JAVA PROFILE 1.0.x\" header), a JFR recording, folded stacks or gzipped pprof (at byte offset 0)"
            )
        }
    }

    fn feed(&mut self, offset: u64, chunk: &[u8]) -> std::result::Result<(), String> {
        match self {
            Check::Binary(framing) => framing.feed(chunk).map_err(|e| e.to_string()),
            Check::Text(lines) => lines.feed(offset, chunk),
            Check::Nothing => Ok(()),
        }
    }
}

/// Copies `src` to `sink`, checking each chunk and the limit; returns the bytes copied.
fn pump(
    src: &mut dyn Read,
    sink: &mut dyn Write,
    check: &mut Check,
    limit: Option<u64>,
    gzip: bool,
    name: &str,
) -> Result<u64> {
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = match src.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if gzip => {
                // (The error names what it means and the exact offsets; `total` counts whole
                // chunks.)
                return Err(e).with_context(|| name.to_string());
            }
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("cannot read {name} at byte offset {total}"));
            }
        };
        let chunk = &buf[..n];
        if let Some(limit) = limit
            && total + n as u64 > limit
        {
            bail!(
                "{name}: more than {limit} bytes{} at byte offset {limit}: input of unknown size \
                 (a pipe, a device, a gzip file's contents) is read up to --max-input bytes",
                if gzip { " once decompressed" } else { "" }
            );
        }
        check
            .feed(total, chunk)
            .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        sink.write_all(chunk)
            .with_context(|| format!("{name}: cannot keep its bytes past offset {total}"))?;
        total += n as u64;
    }
}

/// Follows the framing of an HPROF binary file as its bytes pass, without keeping them: the
/// header, then each record's tag and length. Garbage is found at its offset at once; a file
/// cut inside a record is left to the reader of the whole, which names the record.
#[derive(Debug, Default)]
struct Framing {
    /// Bytes seen.
    offset: u64,
    /// The header's bytes until it is whole, then `None`.
    header: Option<Vec<u8>>,
    header_done: bool,
    /// The current record header's bytes, until it has all 9.
    record: Vec<u8>,
    /// Body bytes of the current record still to pass.
    body_left: u64,
    /// Whether the current record is a heap dump whose first sub-record tag is still to come.
    heap_body: bool,
}

/// The longest top-level record other than a heap dump's: STRING, STACK TRACE, ALLOC SITES
/// and CPU SAMPLES hold names, frames, sites and traces, none near this size in any real file.
const MAX_RECORD: u32 = 256 << 20;

impl Framing {
    fn feed(&mut self, mut chunk: &[u8]) -> hprof_format::Result<()> {
        while !chunk.is_empty() {
            if !self.header_done {
                let header = self.header.get_or_insert_with(Vec::new);
                let take = chunk.len().min(80 - header.len());
                header.extend_from_slice(&chunk[..take]);
                // The header is a name up to 64 bytes, a NUL and 12 bytes.
                match hprof_format::Header::parse(header) {
                    Ok((_, len)) => {
                        let used = len - (header.len() - take);
                        self.offset = len as u64;
                        self.header = None;
                        self.header_done = true;
                        chunk = &chunk[used..];
                    }
                    Err(e)
                        if matches!(e.kind(), hprof_format::ErrorKind::Truncated { .. })
                            && header.len() < 80 =>
                    {
                        self.offset += take as u64;
                        chunk = &chunk[take..];
                    }
                    Err(e) => return Err(e),
                }
                continue;
            }
            if self.body_left > 0 {
                if self.heap_body {
                    // A heap dump body starts with a sub-record: its tag must be one.
                    let code = chunk[0];
                    if hprof_format::SubTag::from_u8(code).is_none() {
                        return Err(hprof_format::Error::new(
                            self.offset,
                            hprof_format::ErrorKind::UnknownSubTag(code),
                        ));
                    }
                    self.heap_body = false;
                }
                let take = (chunk.len() as u64).min(self.body_left);
                self.body_left -= take;
                self.offset += take;
                chunk = &chunk[take as usize..];
                continue;
            }
            let take = chunk
                .len()
                .min(hprof_format::RECORD_HEADER_LEN - self.record.len());
            self.record.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
            if self.record.len() == hprof_format::RECORD_HEADER_LEN {
                let at = self.offset;
                let header = hprof_format::RecordHeader::parse(&self.record, at)?;
                self.record.clear();
                self.offset += hprof_format::RECORD_HEADER_LEN as u64;
                self.body_left = u64::from(header.length);
                let heap = matches!(
                    header.tag,
                    hprof_format::Tag::HeapDump | hprof_format::Tag::HeapDumpSegment
                );
                self.heap_body = heap;
                if !heap && header.length > MAX_RECORD {
                    return Err(hprof_format::Error::new(
                        at,
                        hprof_format::ErrorKind::TooLong {
                            what: header.tag.name(),
                            declared: u64::from(header.length),
                            limit: u64::from(MAX_RECORD),
                        },
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Follows a text profile's lines as its bytes pass: no NUL byte, no endless line.
#[derive(Debug, Default)]
struct TextLines {
    /// Where the line not yet ended starts.
    line_start: u64,
    /// Line breaks seen before it.
    breaks: u64,
}

impl TextLines {
    fn feed(&mut self, offset: u64, chunk: &[u8]) -> std::result::Result<(), String> {
        if let Some(at) = memchr::memchr(0, chunk) {
            let line = self.breaks + 1 + memchr::memchr_iter(b'\n', &chunk[..at]).count() as u64;
            return Err(format!(
                "line {line}: a NUL byte at byte offset {}: not a text profile",
                offset + at as u64
            ));
        }
        let too_long = |start: u64, line: u64| {
            format!(
                "line {line}, at byte offset {start}, is longer than {MAX_TEXT_LINE} bytes: not \
                 a text profile"
            )
        };
        for end in memchr::memchr_iter(b'\n', chunk) {
            let end = offset + end as u64;
            if end - self.line_start > MAX_TEXT_LINE as u64 {
                return Err(too_long(self.line_start, self.breaks + 1));
            }
            self.line_start = end + 1;
            self.breaks += 1;
        }
        if offset + chunk.len() as u64 - self.line_start > MAX_TEXT_LINE as u64 {
            return Err(too_long(self.line_start, self.breaks + 1));
        }
        Ok(())
    }
}
