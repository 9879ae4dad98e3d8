//! Owns the profile's output: where it goes (a file or a socket) and one writer per format
//! behind [`ProfileWriter`], so engines never know which format they feed.

pub mod binary;
pub mod jfr;
pub mod text;

use std::io::{self, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{ErrorKind, PREFIX, report};
use crate::options::{Format, Options, Output, unique_output_name};
use crate::threads::ThreadStart;
use crate::trace_store::{ClassInfo, Trace};

/// A group of objects whose allocation site is known (OBJECT SITES): a site's class and
/// trace, or `None` for the objects that were in the heap before counting began.
pub type ObjectSiteGroup = Option<(Arc<ClassInfo>, Arc<Trace>)>;

/// One allocation site with its counts, for a SITES section.
#[derive(Debug, Clone)]
pub struct Site {
    /// Allocated class.
    pub class: Arc<ClassInfo>,
    /// Allocation trace.
    pub trace: Arc<Trace>,
    /// 0 for instances, else the basic type code of the array's elements (2 = objects).
    pub array_type: u8,
    /// Bytes still live.
    pub live_bytes: u64,
    /// Objects still live.
    pub live_objects: u64,
    /// Bytes allocated so far.
    pub allocated_bytes: u64,
    /// Objects allocated so far.
    pub allocated_objects: u64,
}

/// Totals over every site (listed or cut off).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SiteTotals {
    /// Live bytes.
    pub live_bytes: u64,
    /// Live objects.
    pub live_objects: u64,
    /// Allocated bytes.
    pub allocated_bytes: u64,
    /// Allocated objects.
    pub allocated_objects: u64,
}

/// One sample with the time it was taken, as the sampler drained it (binary: a TIMED
/// SAMPLES record; JFR: an event; text: not written, the layout is the original's).
#[derive(Debug, Clone)]
pub struct TimedSample {
    /// When it was taken: `CLOCK_MONOTONIC` nanoseconds ([`wall_nanos`] makes it wall time).
    pub time: u64,
    /// Its trace (a wall-clock sample's thread state is its outermost frame).
    pub trace: Arc<Trace>,
    /// Its thread's serial (0: unknown).
    pub thread: u32,
    /// The intervals it stands for.
    pub weight: u32,
    /// A wall-clock sample (`cpu=wall`), else a CPU-time sample.
    pub wall: bool,
}

/// A contended monitor enter, as it ends (`monitor=y`; written by `format=jfr` only).
#[derive(Debug, Clone)]
pub struct ContendedEnter {
    /// When the thread began to wait: `CLOCK_MONOTONIC` nanoseconds.
    pub start: u64,
    /// How long it waited, nanoseconds.
    pub nanos: u64,
    /// Its trace.
    pub trace: Arc<Trace>,
    /// The monitor's class, dotted.
    pub class: String,
    /// The thread's serial (0: unknown).
    pub thread: u32,
}

/// The wall-clock time (nanoseconds since the Unix epoch) of a `CLOCK_MONOTONIC` time, by
/// the pair of clocks read at the first call (the output's opening).
pub fn wall_nanos(monotonic: u64) -> i64 {
    static BASE: std::sync::OnceLock<(u64, i64)> = std::sync::OnceLock::new();
    let &(mono, wall) = BASE.get_or_init(|| {
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i64);
        (crate::jvmti::os::monotonic_nanos(), wall)
    });
    wall.saturating_add(monotonic as i64 - mono as i64)
}

/// A thread's state for MONITOR DUMP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadState {
    /// Thread serial.
    pub serial: u32,
    /// Serial of its current trace.
    pub trace: u32,
    /// Status string (`R`, `CW`, `native|R`, ...).
    pub status: String,
}

/// An owned monitor for MONITOR DUMP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorOwner {
    /// JVM signature of the monitor object's class.
    pub signature: String,
    /// Owner thread serial (0 for a thread the agent does not know).
    pub owner: Option<u32>,
    /// Entry count.
    pub entry_count: u32,
    /// Threads waiting to enter.
    pub waiting_to_enter: Vec<u32>,
    /// Threads waiting to be notified.
    pub waiting_to_be_notified: Vec<u32>,
}

/// Contention at one (trace, monitor class), for MONITOR TIME.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorTime {
    /// Trace serial at the contended enter.
    pub trace: u32,
    /// Dotted class name of the monitor.
    pub class: String,
    /// Time spent waiting to enter, in ns.
    pub nanos: u64,
    /// Number of contended enters.
    pub count: u64,
}

/// A name in a heap dump: the id of its STRING record and its text.
#[derive(Debug, Clone, Copy)]
pub struct HeapName<'a> {
    /// STRING id.
    pub id: u64,
    /// The text.
    pub text: &'a str,
}

/// One frame of a thread's stack at a heap dump.
#[derive(Debug, Clone)]
pub struct HeapFrame {
    /// STACK FRAME id.
    pub id: u64,
    /// The method's class.
    pub class: Arc<ClassInfo>,
    /// Method name and its STRING id.
    pub method: (u64, String),
    /// Method signature and its STRING id.
    pub signature: (u64, String),
    /// Source file name and its STRING id (0 and empty when unknown).
    pub source: (u64, String),
    /// Line: > 0 a line, -1 unknown, -2 compiled, -3 native.
    pub line: i32,
}

/// What every output format can record.
pub trait ProfileWriter: Send {
    /// A thread started.
    fn thread_start(&mut self, start: &ThreadStart) -> io::Result<()>;
    /// A thread ended.
    fn thread_end(&mut self, serial: u32) -> io::Result<()>;
    /// A CPU SAMPLES section: `rows` are the listed traces (sorted, cut off) with their
    /// counts; `total` counts every sample of the interval.
    fn cpu_samples(&mut self, rows: &[(Arc<Trace>, u64)], total: u64) -> io::Result<()>;
    /// Samples with their times, as they are drained (before the CPU SAMPLES section that
    /// counts them).
    fn timed_samples(&mut self, _samples: &[TimedSample]) -> io::Result<()> {
        Ok(())
    }
    /// A contended monitor enter that just ended.
    fn monitor_contended(&mut self, _enter: &ContendedEnter) -> io::Result<()> {
        Ok(())
    }
    /// A CPU TIME (ms) section: `rows` are the listed traces (sorted, cut off) with their
    /// calls and self milliseconds; `total` is the self milliseconds of every trace.
    fn cpu_times(&mut self, _rows: &[(Arc<Trace>, u64, u64)], _total: u64) -> io::Result<()> {
        Ok(())
    }
    /// The `cpu=old` listing: (calls, callee, caller, inclusive ms) per row, in order.
    fn cpu_old(&mut self, _rows: &[(u64, Option<String>, Option<String>, u64)]) -> io::Result<()> {
        Ok(())
    }
    /// A SITES section (text) or ALLOC SITES and HEAP SUMMARY records (binary): `sites` are
    /// the listed sites, in order and cut off at `cutoff`; `flags` are the ALLOC SITES flags
    /// (0x1 incremental, 0x2 ordered by allocated bytes, 0x4 a GC was forced).
    fn sites(
        &mut self,
        sites: &[Site],
        totals: &SiteTotals,
        cutoff: f64,
        flags: u16,
    ) -> io::Result<()>;
    /// A HEAP SUMMARY record (binary; the text format has none).
    fn heap_summary(&mut self, _totals: &SiteTotals) -> io::Result<()> {
        Ok(())
    }
    /// Every trace not written yet (the front-end's DUMP TRACES command).
    fn traces(&mut self, traces: &[Arc<Trace>]) -> io::Result<()>;
    /// A class was unloaded (binary UNLOAD CLASS, if its LOAD CLASS was written; the text
    /// format has no record for it).
    fn class_unload(&mut self, _class: &ClassInfo) -> io::Result<()> {
        Ok(())
    }
    /// A `WAIT:` line (text only; `monitor=y` is refused with `format=b`).
    fn monitor_wait(
        &mut self,
        _signature: &str,
        _timeout_ms: i64,
        _thread: Option<u32>,
    ) -> io::Result<()> {
        Ok(())
    }
    /// A `WAITED:` line (text only).
    fn monitor_waited(
        &mut self,
        _signature: &str,
        _waited_ms: i64,
        _thread: Option<u32>,
    ) -> io::Result<()> {
        Ok(())
    }
    /// A MONITOR DUMP section (text only), after the threads' traces.
    fn monitor_dump(
        &mut self,
        _threads: &[ThreadState],
        _traces: &[Arc<Trace>],
        _monitors: &[MonitorOwner],
    ) -> io::Result<()> {
        Ok(())
    }
    /// A MONITOR TIME section (text only): the listed rows, their traces, and the total time
    /// of all rows in ns.
    fn monitor_time(
        &mut self,
        _rows: &[MonitorTime],
        _traces: &[Arc<Trace>],
        _total_nanos: u64,
    ) -> io::Result<()> {
        Ok(())
    }
    /// LOAD CLASS for a class a heap dump is about to refer to (binary).
    fn heap_class(&mut self, _class: &ClassInfo) -> io::Result<()> {
        Ok(())
    }
    /// Starts a heap dump.
    fn heap_dump_begin(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// One heap dump sub-record (a root, an instance, an array).
    fn heap_record(&mut self, _record: &hprof_format::HeapRecord<'_>) -> io::Result<()> {
        Ok(())
    }
    /// The id of a name's STRING record, written on first use (binary).
    fn heap_string(&mut self, _text: &str) -> io::Result<u64> {
        Ok(0)
    }
    /// A class's own instance fields, before the heap dump opens (the text format needs
    /// them to name instance fields).
    fn heap_class_layout(
        &mut self,
        _class: &ClassInfo,
        _super_id: u64,
        _fields: &[(String, hprof_format::BasicType)],
    ) -> io::Result<()> {
        Ok(())
    }
    /// A CLASS DUMP. Each name comes with the id of its STRING record, written before the
    /// dump opened ([`ProfileWriter::heap_string`] or [`ProfileWriter::heap_utf8`]).
    #[allow(clippy::too_many_arguments)]
    fn heap_class_dump(
        &mut self,
        _class_id: u64,
        _super_id: u64,
        _loader: u64,
        _signers: u64,
        _domain: u64,
        _instance_size: u32,
        _constant_pool: &[(u16, hprof_format::Value)],
        _statics: &[(HeapName<'_>, hprof_format::Value)],
        _fields: &[(HeapName<'_>, hprof_format::BasicType)],
    ) -> io::Result<()> {
        Ok(())
    }
    /// Whether [`ProfileWriter::heap_raw_segment`] is supported (binary).
    fn takes_raw_segments(&self) -> bool {
        false
    }
    /// Whole heap dump sub-records, already encoded with 8-byte ids, as one segment of the
    /// open heap dump (binary).
    fn heap_raw_segment(&mut self, _body: &[u8]) -> io::Result<()> {
        Err(io::Error::other(
            "this format takes no raw heap dump segments",
        ))
    }
    /// A STRING record with an id the caller chose (a name of the JVM's heap dump, renumbered
    /// out of the writer's own range); binary only.
    fn heap_utf8(&mut self, _id: u64, _text: &[u8]) -> io::Result<()> {
        Ok(())
    }
    /// LOAD CLASS for a class of the JVM's heap dump: `class` carries the agent's serial for
    /// it and its object id in this dump; `name_id` is its STRING (from
    /// [`ProfileWriter::heap_utf8`]). Written for every dump, even for a serial written
    /// before, since a class's object id is its address at the dump.
    fn heap_load_class(&mut self, class: &ClassInfo, _name_id: u64) -> io::Result<()> {
        self.heap_class(class)
    }
    /// A thread's stack at the heap dump (STACK FRAME and STACK TRACE records in binary, a
    /// TRACE in text), referenced by its ROOT THREAD OBJECT; written before the heap dump
    /// ends (binary writes it right after HEAP DUMP END).
    fn heap_thread_trace(
        &mut self,
        _serial: u32,
        _thread: u32,
        _frames: &[HeapFrame],
    ) -> io::Result<()> {
        Ok(())
    }
    /// Ends the heap dump.
    fn heap_dump_end(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// After a heap dump: its objects the agent knows the allocation site of (OBJECT SITES,
    /// binary only), by group: a site's class and trace, or none for the objects that were
    /// in the heap before counting began; `sampling` is (flags, interval, stride).
    fn object_sites(
        &mut self,
        _sampling: (u32, u32, u32),
        _groups: &[(&ObjectSiteGroup, &[u64])],
    ) -> io::Result<()> {
        Ok(())
    }
    /// A note that part of the profile could not be written (text: an `HPROF ERROR:` line;
    /// binary: a UTF8 string record holding the same line, which readers keep as a string).
    fn error_note(&mut self, _note: &str) -> io::Result<()> {
        Ok(())
    }
    /// Pushes buffered output to the file or socket.
    fn flush(&mut self) -> io::Result<()>;
}

/// The output stream: a writer, or nothing once a write has failed.
pub struct ProfileOutput {
    writer: Option<Box<dyn ProfileWriter>>,
    socket: Option<TcpStream>,
    /// The file written, when the output is a file.
    file: Option<OutputFile>,
    /// Why the dump being written is incomplete (notes written, a write that failed).
    incomplete: Vec<String>,
}

/// The file an output writes, and how far it is known to be whole.
pub struct OutputFile {
    /// Its path, as opened (a new name when the one asked for was taken).
    pub path: PathBuf,
    /// A second descriptor of a plain (not compressed) regular file, to cut it back to
    /// its last complete dump when a write fails.
    cut_back: Option<std::fs::File>,
    /// Bytes handed to the file so far.
    written: Arc<AtomicU64>,
    /// Bytes of the file known whole: everything up to the end of the last complete dump.
    whole: u64,
    /// Whether the format is binary (how a note is written).
    binary: bool,
}

/// A writer that counts the bytes it passes on.
struct Counted<W> {
    inner: W,
    count: Arc<AtomicU64>,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl std::fmt::Debug for ProfileOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfileOutput")
            .field("open", &self.writer.is_some())
            .finish()
    }
}

impl ProfileOutput {
    /// Wraps an opened output.
    pub fn new(opened: Opened) -> ProfileOutput {
        let mut out = ProfileOutput {
            writer: Some(opened.writer),
            socket: opened.socket,
            file: opened.file,
            incomplete: Vec::new(),
        };
        // The header is whole once it is in the file.
        out.write(|w| w.flush());
        if let Some(file) = &mut out.file {
            file.whole = file.written.load(Ordering::Relaxed);
        }
        out
    }

    /// The path of the output file, when the output is a file.
    pub fn path(&self) -> Option<&Path> {
        self.file.as_ref().map(|f| f.path.as_path())
    }

    /// Runs `f` on the writer. The first failure prints one `HPROF ERROR:` line and stops
    /// all further output; the application keeps running. A plain file is cut back to the
    /// end of its last complete dump and ends with a note saying why, so that what it holds
    /// is whole and says it is incomplete.
    pub fn write(&mut self, f: impl FnOnce(&mut dyn ProfileWriter) -> io::Result<()>) {
        if let Some(writer) = self.writer.as_mut()
            && let Err(err) = f(writer.as_mut())
        {
            self.writer = None;
            let why = format!("can't write profile output: {err}");
            let kept = self.cut_back(&why);
            report(
                ErrorKind::Output,
                format!("{why}; no more output will be written{kept}"),
            );
            self.incomplete.push(why);
        }
    }

    /// Writes a note that part of the dump could not be written (see
    /// [`ProfileWriter::error_note`]); the dump is then incomplete.
    pub fn note_incomplete(&mut self, note: &str) {
        self.write(|w| w.error_note(note));
        self.incomplete.push(note.to_string());
    }

    /// Notes that part of the dump is missing, when its note is already written.
    pub fn mark_incomplete(&mut self, why: &str) {
        self.incomplete.push(why.to_string());
    }

    /// Ends a dump: flushes, and returns why it is incomplete (empty when whole). A dump
    /// whose every write succeeded moves the file's known-whole end (its notes, if any, are
    /// in the file).
    pub fn end_dump(&mut self) -> Vec<String> {
        self.write(|w| w.flush());
        if self.writer.is_none() {
            if self.incomplete.is_empty() {
                self.incomplete
                    .push("the output was closed by an earlier failure".into());
            }
        } else if let Some(file) = &mut self.file {
            file.whole = file.written.load(Ordering::Relaxed);
        }
        std::mem::take(&mut self.incomplete)
    }

    /// After a failed write: cuts a plain file back to its last complete dump and appends
    /// a note saying why (a full disk has room for it once cut back). Returns what to add to
    /// the error line.
    fn cut_back(&mut self, why: &str) -> String {
        let Some(file) = &mut self.file else {
            return String::new();
        };
        let Some(handle) = file.cut_back.take() else {
            return format!("; {} is incomplete", file.path.display());
        };
        let note = format!(
            "{PREFIX}{why}; the dump that was being written is missing (cut back to the \
             last complete dump)"
        );
        let bytes = if file.binary {
            // A STRING record (id 0, never a real string's) holding the note.
            let mut record = vec![0x01, 0, 0, 0, 0];
            record.extend_from_slice(&(8 + note.len() as u32).to_be_bytes());
            record.extend_from_slice(&0u64.to_be_bytes());
            record.extend_from_slice(note.as_bytes());
            record
        } else {
            format!("{note}\n").into_bytes()
        };
        let cut = handle.set_len(file.whole).and_then(|()| {
            use std::os::unix::fs::FileExt;
            handle.write_all_at(&bytes, file.whole)
        });
        match cut {
            Ok(()) => format!(
                "; {} was cut back to its last complete dump ({} bytes) and marked incomplete",
                file.path.display(),
                file.whole
            ),
            Err(e) => format!(
                "; {} is incomplete and could not be marked ({e})",
                file.path.display()
            ),
        }
    }

    /// Flushes and closes the output.
    pub fn close(&mut self) {
        self.write(|w| w.flush());
        self.writer = None;
        // The command listener holds a clone of a `net=` socket: shutting it down is what
        // tells the front-end the stream is complete, and ends the listener.
        if let Some(socket) = self.socket.take() {
            let _ = socket.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// Opens the file or connects the socket the options name, and makes the writer for the
/// format. Errors are the original's messages (the caller prints them and exits 1).
pub fn open(options: &Options, pid: u32) -> Result<Opened, String> {
    // The time base of timed samples, fixed as the output opens.
    wall_nanos(crate::jvmti::os::monotonic_nanos());
    let mut socket = None;
    let mut output_file = None;
    let sink: Box<dyn Write + Send> = match &options.output {
        Output::File(path) => {
            let gzip = is_gzip_name(path);
            // force=y replaces an existing file (a new private file renamed over it; a device
            // or FIFO named by file= is written to as it is); a symbolic link is refused.
            let path = if options.force {
                path.clone()
            } else {
                unique_output_name(path, options.format, pid, hprof_outfile::exists)
            };
            let file = match hprof_outfile::create(&path) {
                // Never written through: the profile goes to a new name, as force=n does.
                Err(e)
                    if hprof_outfile::refusal(&e)
                        == Some(hprof_outfile::ErrorKind::SymlinkRefused) =>
                {
                    let other =
                        unique_output_name(&path, options.format, pid, hprof_outfile::exists);
                    eprintln!(
                        "HPROF WARNING: {e}; the profile goes to {}",
                        other.display()
                    );
                    match hprof_outfile::create(&other) {
                        Ok(file) => Ok((other, file)),
                        Err(e) => Err((other, e)),
                    }
                }
                Ok(file) => Ok((path, file)),
                Err(e) => Err((path, e)),
            }
            .map_err(|(path, e)| format!("can't create profile file: {} ({e})", path.display()))?;
            let (path, file) = file;
            let written = Arc::new(AtomicU64::new(0));
            // Only a plain regular file can be cut back (not a device, a FIFO, gzip data).
            let regular = file.metadata().is_ok_and(|m| m.is_file());
            output_file = Some(OutputFile {
                path,
                cut_back: (regular && !gzip).then(|| file.try_clone().ok()).flatten(),
                written: written.clone(),
                whole: 0,
                binary: options.format == Format::Binary,
            });
            let counted = Counted {
                inner: file,
                count: written,
            };
            if gzip {
                // Finished (its trailer written) when the output is closed and dropped.
                Box::new(flate2::write::GzEncoder::new(
                    counted,
                    flate2::Compression::fast(),
                ))
            } else {
                Box::new(counted)
            }
        }
        Output::Net { host, port } => {
            let stream = connect(host, *port)?;
            let _ = stream.set_nodelay(true);
            socket = Some(
                stream
                    .try_clone()
                    .map_err(|e| format!("can't use the connection to {host}:{port} ({e})"))?,
            );
            Box::new(stream)
        }
    };
    let sink = io::BufWriter::with_capacity(64 << 10, sink);
    let writer: Box<dyn ProfileWriter> = match options.format {
        Format::Text
            if options.cpu_old
                && !(options.cpu_samples
                    || options.cpu_wall
                    || options.heap_dump
                    || options.heap_sites
                    || options.monitor) =>
        {
            Box::new(text::TextWriter::prof_only(sink))
        }
        Format::Text => Box::new(
            text::TextWriter::new(sink).map_err(|e| format!("can't write profile output: {e}"))?,
        ),
        Format::Binary => Box::new(
            binary::BinaryWriter::new(sink, options)
                .map_err(|e| format!("can't write profile output: {e}"))?,
        ),
        Format::Jfr => Box::new(jfr::JfrWriter::new(sink, options)),
    };
    Ok(Opened {
        writer,
        socket,
        file: output_file,
    })
}

/// How long `net=` waits for the front-end to accept the connection (per address).
pub const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Connects to the front-end of `net=`. Fails as the original did (`can't connect to
/// HOST:PORT`, the JVM then exits 1), saying why: no such host, connection refused, no
/// answer within [`CONNECT_TIMEOUT`].
fn connect(host: &str, port: u16) -> Result<TcpStream, String> {
    use std::net::ToSocketAddrs;
    let fail = |why: String| format!("can't connect to {host}:{port} ({why})");
    let addresses: Vec<_> = (host, port)
        .to_socket_addrs()
        .map_err(|e| fail(format!("no such host: {e}")))?
        .collect();
    let mut last = fail("no such host: no address".into());
    for address in addresses {
        match TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) {
            Ok(stream) => return Ok(stream),
            Err(e) => {
                last = fail(match e.kind() {
                    io::ErrorKind::ConnectionRefused => {
                        format!("connection refused by {address}: nothing listens there")
                    }
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => format!(
                        "no answer from {address} within {} s",
                        CONNECT_TIMEOUT.as_secs()
                    ),
                    _ => format!("{address}: {e}"),
                });
            }
        }
    }
    Err(last)
}

/// Whether `file=` names a gzip file (`.gz`): the whole profile is then written compressed.
pub fn is_gzip_name(path: &std::path::Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
}

/// An opened output: the writer, for `net=` the socket (to read commands from and to shut
/// down at the end), for a file the file.
pub struct Opened {
    /// The format's writer.
    pub writer: Box<dyn ProfileWriter>,
    /// The front-end connection, for `net=`.
    pub socket: Option<TcpStream>,
    /// The file, for `file=`.
    pub file: Option<OutputFile>,
}
