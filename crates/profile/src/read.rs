//! Reads what the agent wrote, text or binary, into a [`Recording`]: traces, thread names and
//! the sections of every dump.

use rustc_hash::FxHashMap as HashMap;

use hprof_format::{Record, Records, Symbols};

use std::sync::Arc;

use crate::model::{Frame, FrameKind, Kind, Profile, Selection};
use crate::timed::{Filter, Timed};

/// Why a file could not be read or converted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// Byte offset of the problem in the file, when it has one.
    pub offset: Option<u64>,
    /// What is wrong, in words.
    pub message: String,
}

impl Error {
    fn at(offset: u64, message: impl Into<String>) -> Error {
        Error {
            offset: Some(offset),
            message: message.into(),
        }
    }

    pub(crate) fn new(message: impl Into<String>) -> Error {
        Error {
            offset: None,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.offset {
            Some(offset) => write!(f, "{} (at byte offset {offset})", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {}

/// A trace: its thread (with `thread=y`) and frames (indices into the recording's frames),
/// top first.
#[derive(Debug, Clone, Default)]
struct Trace {
    thread: Option<u32>,
    frames: Vec<usize>,
}

/// One row of a section.
#[derive(Debug, Clone)]
struct Row {
    trace: u32,
    /// Values in the order of the kind's sample types.
    values: Vec<i64>,
    /// The allocated class, for SITES.
    class: Option<String>,
}

/// A section of one dump.
#[derive(Debug, Clone)]
struct Section {
    kind: SectionKind,
    rows: Vec<Row>,
    /// Byte offset of its first line or its record.
    offset: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SectionKind {
    Cpu,
    Times,
    Sites,
    Lock,
}

impl SectionKind {
    /// The section a profile of `kind` is made from (wall samples have none: the agent's
    /// `cpu=wall` writes CPU SAMPLES).
    fn of(kind: Kind) -> Option<SectionKind> {
        match kind {
            Kind::Cpu => Some(SectionKind::Cpu),
            Kind::Times => Some(SectionKind::Times),
            Kind::Alloc | Kind::Live => Some(SectionKind::Sites),
            Kind::Lock => Some(SectionKind::Lock),
            Kind::Wall => None,
        }
    }
}

/// What an output file holds.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// Every distinct frame, and its index by (name, file, line) and by binary frame id.
    frames: Vec<Frame>,
    frame_index: HashMap<(u32, u32, u32), usize>,
    /// Names and source files, each stored once; 0 is "none".
    strings: Vec<Arc<str>>,
    string_index: HashMap<Box<str>, u32>,
    traces: HashMap<u32, Trace>,
    threads: HashMap<u32, String>,
    sections: Vec<Section>,
    /// Samples with their times (a JFR recording's events).
    pub(crate) timed: Option<Timed>,
    /// The writer's notes of what it could not write (`HPROF ERROR: ` lines or strings).
    notes: Vec<String>,
    /// Profiles read whole from formats that hold stacks with values already (pprof, one per
    /// kind; folded stacks, one for any kind, `folded`).
    ready: Vec<Profile>,
    /// True when `ready` holds folded stacks, which say nothing of their kind.
    folded: bool,
    /// The length of what was read (decompressed): where the file ends.
    len: u64,
}

impl Recording {
    /// Reads the agent's text or binary output, or a JFR recording (JDK 11 to 25,
    /// async-profiler); any of them gzip-compressed.
    pub fn read(bytes: &[u8]) -> Result<Recording, Error> {
        Recording::read_as(bytes, false)
    }

    /// Reads as [`Recording::read`] does, except that the frames of a text profile keep no
    /// source line: the frames of one method and file are one frame. Enough for what compares
    /// methods by name (`hprof diff`), and much less work on a profile whose methods are met
    /// at many lines.
    pub fn read_by_method(bytes: &[u8]) -> Result<Recording, Error> {
        Recording::read_as(bytes, true)
    }

    fn read_as(bytes: &[u8], by_method: bool) -> Result<Recording, Error> {
        let mut recording = Recording::read_any(bytes, by_method)?;
        if recording.len == 0 {
            // (A gzip file's is its decompressed length, set already.)
            recording.len = bytes.len() as u64;
        }
        Ok(recording)
    }

    fn read_any(bytes: &[u8], by_method: bool) -> Result<Recording, Error> {
        if crate::jfr::is_jfr(bytes) {
            let mut recording = Recording::default();
            crate::jfr::read(bytes, &mut recording)?;
            return Ok(recording);
        }
        if bytes.starts_with(b"JAVA PROFILE 1.0.1, created") {
            let text = std::str::from_utf8(bytes).map_err(|e| {
                let at = e.valid_up_to();
                let line = memchr_count(&bytes[..at]) + 1;
                Error::at(
                    at as u64,
                    format!("line {line}: the text profile is not UTF-8"),
                )
            })?;
            return read_text_as(text, by_method);
        }
        if bytes.starts_with(b"JAVA PROFILE 1.0.") {
            return read_binary(bytes);
        }
        if bytes.starts_with(&[0x1f, 0x8b]) {
            return read_gzip(bytes, by_method);
        }
        if crate::folded::looks_folded(bytes) {
            return Ok(Recording {
                ready: vec![crate::folded::read(bytes, Kind::Cpu)?],
                folded: true,
                ..Recording::default()
            });
        }
        Err(Error::at(
            0,
            "not a profile written by hprof (no \"JAVA PROFILE 1.0.x\" header), nor folded \
stacks, nor a gzipped pprof profile",
        ))
    }

    /// Every distinct frame so far.
    pub(crate) fn frame_list(&self) -> &[Frame] {
        &self.frames
    }

    /// The wall-clock span of the file's timed samples (nanoseconds since the Unix epoch),
    /// when it has any.
    pub fn span(&self) -> Option<(i64, i64)> {
        self.timed.as_ref().map(|t| (t.start, t.end))
    }

    /// Whether the file's samples of `kind` carry their times.
    pub fn is_timed(&self, kind: Kind) -> bool {
        self.timed.as_ref().is_some_and(|t| t.has(kind))
    }

    /// The number of a name or file, stored once.
    fn string(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.string_index.get(s) {
            return i;
        }
        if self.strings.is_empty() {
            self.strings.push(Arc::from(""));
        }
        let i = self.strings.len() as u32;
        self.strings.push(Arc::from(s));
        self.string_index.insert(s.into(), i);
        i
    }

    /// The index of the frame (`name` of kind `kind`, in `file` at `line`), added if new.
    pub(crate) fn frame(
        &mut self,
        name: &str,
        kind: FrameKind,
        file: Option<&str>,
        line: Option<u32>,
    ) -> usize {
        let name_id = self.string(name);
        let file_id = file.map_or(0, |f| self.string(f));
        let key = (name_id, file_id, line.unwrap_or(0));
        if let Some(&i) = self.frame_index.get(&key) {
            return i;
        }
        let i = self.frames.len();
        self.frames.push(Frame {
            name: self.strings[name_id as usize].clone(),
            file: (file_id != 0).then(|| self.strings[file_id as usize].clone()),
            line,
            kind,
        });
        self.frame_index.insert(key, i);
        i
    }

    /// What the agent noted it could not write (its `HPROF ERROR:` notes, without the
    /// prefix): a profile with notes is incomplete.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// How many dumps hold a section of `kind` (1 for timed samples of the kind, for a pprof
    /// profile that has the kind's sample types, and for folded stacks, whatever the kind).
    pub fn dumps(&self, kind: Kind) -> usize {
        if self.is_timed(kind) || self.folded || self.ready.iter().any(|p| p.kind == Some(kind)) {
            return 1;
        }
        let wanted = SectionKind::of(kind);
        self.sections
            .iter()
            .filter(|s| Some(s.kind) == wanted)
            .count()
    }

    /// A profile read whole (pprof, folded stacks) as a profile of `kind`.
    fn ready_profile(
        &self,
        kind: Kind,
        selection: Selection,
        by_thread: bool,
    ) -> Option<Result<Profile, Error>> {
        let found = if self.folded {
            self.ready.first()
        } else {
            self.ready.iter().find(|p| p.kind == Some(kind))
        }?;
        if let Selection::Nth(n) = selection
            && n != 1
        {
            return Some(Err(Error::new(format!(
                "dump {n} does not exist: the file holds one {} profile",
                kind.section()
            ))));
        }
        let mut profile = found.clone();
        if profile.kind != Some(kind) {
            profile.kind = Some(kind);
            profile.sample_types = kind.sample_types();
            for sample in &mut profile.samples {
                sample.values.resize(profile.sample_types.len(), 0);
            }
        }
        if !by_thread {
            for sample in &mut profile.samples {
                sample.thread = None;
            }
        }
        Some(Ok(profile))
    }

    /// The error for what the file, read to its end, does not hold: it names where it ends.
    fn missing(&self, what: &str) -> Error {
        Error::new(format!(
            "{what} (read to its end, at byte offset {})",
            self.len
        ))
    }

    /// The first kind, in [`Kind::ALL`]'s order, the file has a section of.
    pub fn default_kind(&self) -> Option<Kind> {
        Kind::ALL.into_iter().find(|&k| self.dumps(k) > 0)
    }

    /// The profile of `kind` (by default the first kind the file has: [`Recording::default_kind`])
    /// from the selected dumps, of the samples `filter` keeps ([`Recording::profile_filtered`]),
    /// its frames filtered by `include` and `exclude` ([`Profile::filter`]); and the kind.
    pub fn select(
        &self,
        kind: Option<Kind>,
        selection: Selection,
        filter: &Filter,
        include: Option<&regex::Regex>,
        exclude: Option<&regex::Regex>,
    ) -> Result<(Profile, Kind), Error> {
        let kind = match kind {
            Some(kind) => kind,
            None => self.default_kind().ok_or_else(|| {
                self.missing(if self.span().is_some() {
                    "no execution, wall-clock, allocation or lock events in the recording"
                } else {
                    "no CPU SAMPLES, CPU TIME, SITES or MONITOR TIME section in the file"
                })
            })?,
        };
        if let (Some(from), Some(to)) = (filter.from, filter.to)
            && from >= to
        {
            return Err(Error::new("--from must come before --to"));
        }
        let mut profile = self.profile_filtered(kind, selection, filter)?;
        profile.filter(include, exclude);
        Ok((profile, kind))
    }

    /// The profile of `kind` from the selected dumps; with `by_thread`, each sample names the
    /// thread of its trace.
    pub fn profile(
        &self,
        kind: Kind,
        selection: Selection,
        by_thread: bool,
    ) -> Result<Profile, Error> {
        let filter = Filter {
            by_thread,
            ..Filter::default()
        };
        self.profile_filtered(kind, selection, &filter)
    }

    /// The profile of `kind` from the selected dumps, of the samples `filter` keeps. A time
    /// range or thread pattern needs samples with their times or threads.
    pub fn profile_filtered(
        &self,
        kind: Kind,
        selection: Selection,
        filter: &Filter,
    ) -> Result<Profile, Error> {
        if let Some(timed) = &self.timed {
            // A JFR recording has no sections: its events are all it has.
            let jfr = self.sections.is_empty();
            match timed.stream_for(kind) {
                Some(stream) if jfr || filter.narrows() || filter.timeline => {
                    let events = timed.select(stream, selection, kind)?;
                    let mut profile = Profile::with_frames(kind, self.frames.clone());
                    if matches!(
                        stream,
                        crate::timed::Stream::AllocSample | crate::timed::Stream::AllocTlab
                    ) {
                        profile.sample_types[1].name = "alloc_samples".into();
                    }
                    if kind == Kind::Lock {
                        profile.sample_types[0].unit = "nanoseconds".into();
                    }
                    return Ok(timed.profile(stream, events, filter, profile));
                }
                None if jfr => {
                    return Err(self.missing(&format!(
                        "the recording has no {} events",
                        Timed::wanted(kind)
                    )));
                }
                _ => {}
            }
        }
        if filter.from.is_some() || filter.to.is_some() {
            return Err(Error::new(format!(
                "the file's {} carry no times (--from and --to need a JFR recording, or the CPU samples of the agent's binary output)",
                kind.section()
            )));
        }
        let by_thread = filter.by_thread || filter.threads.is_some();
        if let Some(profile) = self.ready_profile(kind, selection, by_thread) {
            return profile;
        }
        let wanted = SectionKind::of(kind);
        let sections: Vec<&Section> = self
            .sections
            .iter()
            .filter(|s| Some(s.kind) == wanted)
            .collect();
        if sections.is_empty() {
            return Err(self.missing(&format!("the file has no {} section", kind.section())));
        }
        let chosen: Vec<&Section> = match selection {
            Selection::Last => vec![sections[sections.len() - 1]],
            Selection::All => sections,
            Selection::Nth(n) => match sections.get(n.wrapping_sub(1)) {
                Some(s) => vec![*s],
                None => {
                    return Err(Error::new(format!(
                        "dump {n} does not exist: the file has {} {} sections",
                        sections.len(),
                        kind.section()
                    )));
                }
            },
        };
        // Values that add up beyond an i64 would wrap in every total made from them.
        let mut sum = 0i64;
        for section in &chosen {
            for row in &section.rows {
                let value = match kind {
                    Kind::Alloc => row.values[2],
                    _ => row.values[0],
                };
                sum = sum.checked_add(value).ok_or_else(|| {
                    Error::at(
                        section.offset,
                        format!(
                            "the {} values of the dumps chosen add up beyond {} in this section",
                            kind.section(),
                            i64::MAX
                        ),
                    )
                })?;
            }
        }
        // The profile's first frames are the recording's, in order: stacks are indices.
        let mut profile = Profile::with_frames(kind, self.frames.clone());
        let empty = Trace::default();
        for section in chosen {
            for row in &section.rows {
                let trace = self.traces.get(&row.trace).unwrap_or(&empty);
                let mut stack: Vec<usize> = trace.frames.iter().rev().copied().collect();
                if stack.is_empty() && row.class.is_none() {
                    stack.push(profile.intern(&Frame::pseudo("<empty trace>")));
                }
                if let Some(class) = &row.class {
                    stack.push(profile.intern(&Frame::pseudo(class)));
                }
                let values = match kind {
                    Kind::Live => row.values[..2].to_vec(),
                    Kind::Alloc => row.values[2..4].to_vec(),
                    _ => row.values.clone(),
                };
                let thread = by_thread.then(|| {
                    trace.thread.map_or_else(
                        || "<all threads>".to_string(),
                        |t| {
                            self.threads
                                .get(&t)
                                .cloned()
                                .unwrap_or_else(|| format!("thread {t}"))
                        },
                    )
                });
                if let (Some(pattern), Some(name)) = (&filter.threads, &thread)
                    && !pattern.is_match(name)
                {
                    continue;
                }
                profile.samples.push(crate::model::Sample {
                    stack,
                    thread: if filter.by_thread { thread } else { None },
                    values,
                });
            }
        }
        Ok(profile)
    }
}

/// Most bytes a gzip-compressed profile may decompress to.
const MAX_GUNZIPPED: u64 = 64 << 30;

/// The decompressed bytes of a gzip file (every member).
fn gunzip(bytes: &[u8]) -> Result<Vec<u8>, Error> {
    use std::io::Read;
    let mut plain = Vec::new();
    let mut rest = bytes;
    let mut decoder = flate2::bufread::MultiGzDecoder::new(&mut rest).take(MAX_GUNZIPPED);
    let read = decoder.read_to_end(&mut plain);
    drop(decoder);
    // The decoder has consumed the compressed bytes up to the bad ones (or the end).
    let at = (bytes.len() - rest.len()) as u64;
    read.map_err(|e| {
        Error::at(
            at,
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                format!("gzip data ends early (the file is truncated): {e}")
            } else {
                format!("corrupt gzip data: {e}")
            },
        )
    })?;
    Ok(plain)
}

/// Reads a gzip-compressed file: a pprof profile, or the agent's output or a JFR recording
/// compressed.
fn read_gzip(bytes: &[u8], by_method: bool) -> Result<Recording, Error> {
    let plain = gunzip(bytes)?;
    if plain.starts_with(b"JAVA PROFILE 1.0.") || crate::jfr::is_jfr(&plain) {
        return Recording::read_as(&plain, by_method);
    }
    Recording::read_pprof(&plain)
}

impl Recording {
    /// Reads a decompressed pprof profile.proto (a gzip file whose contents are neither the
    /// agent's output nor a JFR recording).
    pub fn read_pprof(plain: &[u8]) -> Result<Recording, Error> {
        Ok(Recording {
            ready: crate::pprof::read(plain)?,
            len: plain.len() as u64,
            ..Recording::default()
        })
    }
}

/// How the agent's pseudo-frames begin: their class is `<hprof>`.
const PSEUDO_PREFIX: &str = "<hprof>.";

/// A frame line of a text TRACE, `class.method(Source.java:12)`, as (name, kind, file,
/// line), borrowed from the line.
fn parse_frame(line: &str) -> (&str, FrameKind, Option<&str>, Option<u32>) {
    // Byte searches from the end: `(`, `:`, `)` and `.` are ASCII, never inside a UTF-8
    // sequence, so every split is at a character boundary.
    let bytes = line.as_bytes();
    let Some(open) = bytes.iter().rposition(|&b| b == b'(') else {
        return (line, FrameKind::Pseudo, None, None);
    };
    let qualified = &line[..open];
    // The agent's pseudo-frames (`<hprof>.<GC active>`, `<hprof>.<SLEEPING>`): the reason or
    // state alone.
    if let Some(name) = qualified.strip_prefix(PSEUDO_PREFIX) {
        return (name, FrameKind::Pseudo, None, None);
    }
    let mut inside = &line[open + 1..];
    if let Some(stripped) = inside.strip_suffix(')') {
        inside = stripped;
    }
    // A function of native or kernel code: `libc.so.6.memcpy(Native method)`,
    // `[kernel].do_syscall_64(Kernel)` (no source file, no colon).
    if inside == "Native method" || inside == "Kernel" {
        let (library, _) = split_code_name(qualified);
        return (
            qualified,
            FrameKind::of_library(library),
            Some(library),
            None,
        );
    }
    let (source, position) = match inside.as_bytes().iter().rposition(|&b| b == b':') {
        Some(colon) => (&inside[..colon], &inside[colon + 1..]),
        None => (inside, ""),
    };
    let file = (source != "<Unknown Source>").then_some(source);
    let line = position.parse().ok();
    match qualified.as_bytes().iter().rposition(|&b| b == b'.') {
        Some(dot) => (
            qualified,
            FrameKind::of_class(&qualified[..dot]),
            file,
            line,
        ),
        None => (qualified, FrameKind::Pseudo, None, None),
    }
}

/// The library and function of a frame of native or kernel code named `library.function`
/// (`libc.so.6.memcpy`, `libjvm.so.os::javaTimeNanos`, `[kernel].do_syscall_64`,
/// `libfoo.so.1.2.bar.constprop.0`): the library is a name in brackets, or a name up to `.so`
/// and its numeric version parts, or else the name up to the first dot.
pub fn split_code_name(name: &str) -> (&str, &str) {
    if name.starts_with('[')
        && let Some(end) = name.find("].")
    {
        return (&name[..=end], &name[end + 2..]);
    }
    if let Some(so) = name.find(".so") {
        let mut end = so + 3;
        let after = |end: usize| name.get(end..).unwrap_or("");
        if after(end).starts_with('.') {
            // Version parts: `.6`, `.1.2`, each all digits and followed by a dot.
            loop {
                let rest = &after(end)[1..];
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                if digits > 0 && rest.as_bytes().get(digits) == Some(&b'.') {
                    end += 1 + digits;
                } else {
                    break;
                }
            }
            if after(end).starts_with('.') {
                return (&name[..end], &name[end + 1..]);
            }
        }
    }
    name.split_once('.').unwrap_or((name, ""))
}

/// The number after `prefix` and before the next `)` or space.
fn number_after(line: &str, prefix: &str) -> Option<i64> {
    let rest = &line[line.find(prefix)? + prefix.len()..];
    rest.split([')', ' ', ',']).next()?.parse().ok()
}

/// The lines of a text, each with its byte offset in the file.
struct TextLines<'a> {
    text: &'a str,
    /// Where the next line starts in `text`.
    at: usize,
    /// Where `text` starts in the file.
    base: u64,
}

impl<'a> TextLines<'a> {
    fn new(text: &'a str, base: u64) -> TextLines<'a> {
        TextLines { text, at: 0, base }
    }

    /// The next line, without its line break, and its offset in the file.
    fn next_line(&mut self) -> Option<(&'a str, u64)> {
        let start = self.at;
        if start >= self.text.len() {
            return None;
        }
        // A line break is ASCII: the split is at a character boundary.
        let (end, next) = match memchr::memchr(b'\n', &self.text.as_bytes()[start..]) {
            Some(i) => (start + i, start + i + 1),
            None => (self.text.len(), self.text.len()),
        };
        self.at = next;
        Some((&self.text[start..end], self.base + start as u64))
    }

    /// The first byte of the next line.
    fn peek_byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }
}

/// Reads a text profile, its frames with their lines.
#[cfg(test)]
fn read_text(text: &str) -> Result<Recording, Error> {
    read_text_as(text, false)
}

/// Reads a text profile (with `by_method`, frames without their lines); a large one in two
/// halves, one on each core, split at a TRACE record (no section spans one), then merged.
fn read_text_as(text: &str, by_method: bool) -> Result<Recording, Error> {
    read_text_in_halves(text, by_method).map_err(|mut e| {
        // Errors name their line too: counted only when there is one.
        if let Some(at) = e.offset.and_then(|o| usize::try_from(o).ok())
            && let Some(before) = text.get(..at)
        {
            let line = memchr_count(before.as_bytes()) + 1;
            e.message = format!("line {line}: {}", e.message);
        }
        e
    })
}

/// The number of line breaks in `bytes`.
fn memchr_count(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

fn read_text_in_halves(text: &str, by_method: bool) -> Result<Recording, Error> {
    const SPLIT_ABOVE: usize = 8 << 20;
    if text.len() > SPLIT_ABOVE {
        let middle = text.len() / 2;
        if let Some(at) =
            memchr::memmem::find(&text.as_bytes()[middle..], b"\nTRACE ").map(|i| middle + i + 1)
        {
            let (first, second) = text.split_at(at);
            let (first, second) = std::thread::scope(|scope| {
                let second = scope.spawn(|| read_text_part(second, at as u64, by_method));
                let first = read_text_part(first, 0, by_method);
                (first, second.join())
            });
            let mut first = first?;
            let second = second.map_err(|_| Error::new("the reading thread failed"))??;
            first.merge(second);
            return Ok(first);
        }
    }
    read_text_part(text, 0, by_method)
}

impl Recording {
    /// Adds what `later` (read from the part of the same file after this one's) holds.
    fn merge(&mut self, later: Recording) {
        // `later`'s frames hold its strings' `Arc`s: their addresses give their numbers.
        let strings: HashMap<usize, u32> = later
            .strings
            .iter()
            .map(|s| (s.as_ptr() as usize, self.string(s)))
            .collect();
        let id = |s: &str| strings.get(&(s.as_ptr() as usize)).copied().unwrap_or(0);
        let frames: Vec<usize> = later
            .frames
            .iter()
            .map(|f| {
                let name = id(f.name());
                let file = f.file.as_deref().map_or(0, id);
                let key = (name, file, f.line.unwrap_or(0));
                if let Some(&i) = self.frame_index.get(&key) {
                    return i;
                }
                let i = self.frames.len();
                self.frames.push(Frame {
                    name: self.strings[name as usize].clone(),
                    file: (file != 0).then(|| self.strings[file as usize].clone()),
                    line: f.line,
                    kind: f.kind,
                });
                self.frame_index.insert(key, i);
                i
            })
            .collect();
        for (serial, mut trace) in later.traces {
            for frame in &mut trace.frames {
                *frame = frames[*frame];
            }
            self.traces.insert(serial, trace);
        }
        self.threads.extend(later.threads);
        self.sections.extend(later.sections);
        self.notes.extend(later.notes);
    }
}

/// Reads the text profile `text`, which starts `base` bytes into its file (error offsets are
/// the file's).
#[cfg(test)]
fn read_text_from(text: &str, base: u64) -> Result<Recording, Error> {
    read_text_part(text, base, false)
}

/// The text of a frame line that tells its method apart: all but its line number
/// (`A.run(A.java:12)` as `A.run(A.java`).
fn method_key(frame: &str) -> &str {
    let bytes = frame.as_bytes();
    // ASCII bytes: every split is at a character boundary.
    match memchr::memrchr(b'(', bytes) {
        Some(open) => match memchr::memrchr(b':', &bytes[open..]) {
            Some(colon) => &frame[..open + colon],
            None => frame,
        },
        None => frame,
    }
}

/// Reads the text profile `text`, which starts `base` bytes into its file (error offsets are
/// the file's); with `by_method`, frames keep no line (one frame per method and file).
fn read_text_part(text: &str, base: u64, by_method: bool) -> Result<Recording, Error> {
    let mut recording = Recording::default();
    // With `by_method`, frames by the text of their lines up to the line number.
    let mut frame_lines: HashMap<&str, usize> = HashMap::default();
    let mut cols: Vec<&str> = Vec::new();
    let mut lines = TextLines::new(text, base);
    while let Some((line, line_at)) = lines.next_line() {
        if let Some(rest) = line.strip_prefix("TRACE ") {
            let Some((serial, tail)) = rest.split_once(':') else {
                continue;
            };
            let Ok(serial) = serial.parse::<u32>() else {
                continue;
            };
            let thread = number_after(tail, "(thread=").map(|t| t as u32);
            let mut frames = Vec::new();
            while lines.peek_byte() == Some(b'\t') {
                let Some((frame, _)) = lines.next_line() else {
                    break;
                };
                let frame = &frame[1..];
                if frame == "<empty>" {
                    continue;
                }
                let index = if by_method {
                    // Few distinct methods, each met many times: one look-up each time.
                    let key = method_key(frame);
                    match frame_lines.get(key) {
                        Some(&index) => index,
                        None => {
                            let (name, kind, file, _) = parse_frame(frame);
                            let index = recording.frame(name, kind, file, None);
                            frame_lines.insert(key, index);
                            index
                        }
                    }
                } else {
                    let (name, kind, file, line) = parse_frame(frame);
                    recording.frame(name, kind, file, line)
                };
                frames.push(index);
            }
            recording.traces.insert(serial, Trace { thread, frames });
        } else if let Some(note) = line.strip_prefix(hprof_format::ERROR_NOTE_PREFIX) {
            recording.notes.push(note.to_string());
        } else if let Some(rest) = line.strip_prefix("THREAD START (") {
            if let (Some(id), Some(name)) = (number_after(rest, "id = "), rest.split('"').nth(1)) {
                recording.threads.insert(id as u32, name.to_string());
            }
        } else if let Some((kind, end)) = section_start(line) {
            let start = line_at;
            let total = match line.find("(total = ") {
                Some(_) => number_after(line, "(total = ")
                    .filter(|&t| t >= 0)
                    .ok_or_else(|| {
                        Error::at(
                            start,
                            format!(
                                "the {} section's total is not a number from 0 to {}: {line:?}",
                                kind_title(kind),
                                i64::MAX
                            ),
                        )
                    })?,
                None => 0,
            };
            let mut rows = Vec::new();
            let mut sum = 0i64;
            loop {
                let Some((row, row_at)) = lines.next_line() else {
                    return Err(Error::at(
                        start,
                        format!("the {} section is cut short (no {end})", kind_title(kind)),
                    ));
                };
                if row == end {
                    break;
                }
                let bad = |why: String| {
                    Error::at(row_at, format!("{} row {row:?}: {why}", kind_title(kind)))
                };
                if let Some(parsed) = parse_row_into(kind, row, total, &mut cols).map_err(bad)? {
                    sum = sum.checked_add(parsed.values[0]).ok_or_else(|| {
                        bad(format!("the section's values add up beyond {}", i64::MAX))
                    })?;
                    rows.push(parsed);
                }
            }
            recording.sections.push(Section {
                kind,
                rows,
                offset: start,
            });
        }
    }
    Ok(recording)
}

fn kind_title(kind: SectionKind) -> &'static str {
    match kind {
        SectionKind::Cpu => "CPU SAMPLES",
        SectionKind::Times => "CPU TIME",
        SectionKind::Sites => "SITES",
        SectionKind::Lock => "MONITOR TIME",
    }
}

fn section_start(line: &str) -> Option<(SectionKind, &'static str)> {
    if line.starts_with("CPU SAMPLES BEGIN ") {
        Some((SectionKind::Cpu, "CPU SAMPLES END"))
    } else if line.starts_with("CPU TIME (ms) BEGIN ") {
        Some((SectionKind::Times, "CPU TIME (ms) END"))
    } else if line.starts_with("SITES BEGIN ") {
        Some((SectionKind::Sites, "SITES END"))
    } else if line.starts_with("MONITOR TIME BEGIN ") {
        Some((SectionKind::Lock, "MONITOR TIME END"))
    } else {
        None
    }
}

/// One row of a section (its columns split into `cols`); `None` for its header lines (those not starting with a rank). A
/// row whose numbers are missing or out of range is an error: a profile with a row dropped
/// would add up to less than it holds.
fn parse_row_into<'a>(
    kind: SectionKind,
    line: &'a str,
    total: i64,
    cols: &mut Vec<&'a str>,
) -> Result<Option<Row>, String> {
    cols.clear();
    cols.extend(line.split_whitespace());
    let cols = &*cols;
    if cols.first().is_none_or(|c| c.parse::<u32>().is_err()) {
        return Ok(None);
    }
    let bad = |what: &str, col: usize| match cols.get(col) {
        Some(c) => format!("{what} {c:?} is not a number from 0 to {}", i64::MAX),
        None => format!("the row has no {what}"),
    };
    let int = |what: &str, i: usize| -> Result<i64, String> {
        cols.get(i)
            .and_then(|c| c.parse::<i64>().ok())
            .filter(|&v| v >= 0)
            .ok_or_else(|| bad(what, i))
    };
    let trace = |i: usize| -> Result<u32, String> {
        cols.get(i)
            .and_then(|c| c.parse::<u32>().ok())
            .ok_or_else(|| match cols.get(i) {
                Some(c) => format!("trace {c:?} is not a trace number"),
                None => "the row has no trace".into(),
            })
    };
    // Self time is printed as a share of the total, to 0.01 %.
    let share = || -> Result<i64, String> {
        let column = cols.get(1).copied().unwrap_or("");
        column
            .strip_suffix('%')
            .and_then(|p| p.parse::<f64>().ok())
            .filter(|p| (0.0..=100.0).contains(p))
            .map(|p| (p / 100.0 * total as f64).round() as i64)
            .ok_or_else(|| format!("share {column:?} is not a percentage from 0% to 100%"))
    };
    Ok(Some(match kind {
        SectionKind::Cpu => Row {
            trace: trace(4)?,
            values: vec![int("count", 3)?],
            class: None,
        },
        SectionKind::Times | SectionKind::Lock => Row {
            trace: trace(4)?,
            values: vec![share()?, int("count", 3)?],
            class: None,
        },
        SectionKind::Sites => Row {
            trace: trace(7)?,
            values: vec![
                int("live bytes", 3)?,
                int("live objects", 4)?,
                int("allocated bytes", 5)?,
                int("allocated objects", 6)?,
            ],
            class: Some(
                cols.get(8..)
                    .filter(|c| !c.is_empty())
                    .ok_or("the row has no class name")?
                    .join(" "),
            ),
        },
    }))
}

/// The timed events of an HPROF file's TIMED SAMPLES (each with the number of CPU SAMPLES
/// sections before it), whose times count from `start` (the header's timestamp).
fn timed_of_hprof(
    recording: &mut Recording,
    start: i64,
    samples: &[(hprof_format::TimedSample, usize)],
) -> Timed {
    use crate::timed::{Stream, TimedEvent};
    let mut timed = Timed::default();
    timed.start = start;
    timed.end = start;
    let mut stacks: HashMap<u32, u32> = HashMap::default();
    let mut threads: HashMap<u32, u32> = HashMap::default();
    let mut ends: Vec<usize> = Vec::new();
    let mut count = 0usize;
    for &(sample, dump) in samples {
        while ends.len() < dump {
            ends.push(count);
        }
        let stack = match stacks.get(&sample.trace_serial) {
            Some(&s) => s,
            None => {
                let frames: Vec<u32> = match recording.traces.get(&sample.trace_serial) {
                    Some(trace) if !trace.frames.is_empty() => {
                        trace.frames.iter().rev().map(|&f| f as u32).collect()
                    }
                    _ => {
                        vec![recording.frame("<empty trace>", FrameKind::Pseudo, None, None) as u32]
                    }
                };
                let s = timed.stack(&frames);
                stacks.insert(sample.trace_serial, s);
                s
            }
        };
        let thread = match sample.thread_serial {
            0 => u32::MAX,
            serial => *threads.entry(serial).or_insert_with(|| {
                let name = recording
                    .threads
                    .get(&serial)
                    .cloned()
                    .unwrap_or_else(|| format!("thread {serial}"));
                timed.thread(&name)
            }),
        };
        let time = start.saturating_add(sample.time_ns.min(i64::MAX as u64) as i64);
        timed.end = timed.end.max(time);
        timed.push(
            Stream::Execution,
            TimedEvent {
                time,
                stack,
                thread,
                value: i64::from(sample.weight),
                count: 1,
            },
        );
        count += 1;
    }
    while ends.len() < recording.dumps(Kind::Cpu) {
        ends.push(count);
    }
    timed.dump_ends.insert(Stream::Execution, ends);
    timed
}

fn read_binary(bytes: &[u8]) -> Result<Recording, Error> {
    let bad = |e: hprof_format::Error| Error::at(e.offset(), e.to_string());
    let (header, mut records) = Records::new(bytes).map_err(bad)?;
    let mut recording = Recording::default();
    let mut symbols = Symbols::new();
    // TIMED SAMPLES, with the number of CPU SAMPLES sections before each.
    let mut timed: Vec<(hprof_format::TimedSample, usize)> = Vec::new();
    // Each STACK FRAME's frame in the recording.
    let mut frames: HashMap<u64, usize> = HashMap::default();
    // Where the first heap dump record is.
    let mut heap_dump = None;
    let text = |symbols: &Symbols<'_>, id: u64| symbols.text(id).map(|t| t.into_owned());
    while let Some((head, record)) = records.next().map_err(bad)? {
        symbols.add(&record);
        match record {
            Record::Utf8 { text, .. } => {
                if let Some(note) = text.strip_prefix(hprof_format::ERROR_NOTE_PREFIX.as_bytes()) {
                    recording
                        .notes
                        .push(String::from_utf8_lossy(note).into_owned());
                }
            }
            Record::StackFrame {
                frame_id,
                method_name_id,
                source_file_id,
                class_serial,
                line,
                ..
            } => {
                let class = symbols
                    .class_name_by_serial(class_serial)
                    .unwrap_or_default();
                let method = text(&symbols, method_name_id).unwrap_or_default();
                let file = text(&symbols, source_file_id).filter(|f| !f.is_empty());
                let code = hprof_text::LineInfo::from_stack_frame(line, file.as_deref());
                let line = u32::try_from(line).ok().filter(|&l| l > 0);
                let index = if format!("{class}.") == PSEUDO_PREFIX {
                    recording.frame(&method, FrameKind::Pseudo, None, None)
                } else if matches!(
                    code,
                    hprof_text::LineInfo::NativeCode | hprof_text::LineInfo::KernelCode
                ) {
                    // A function of native or kernel code: its class is its library.
                    let name = format!("{class}.{method}");
                    recording.frame(&name, FrameKind::of_library(&class), Some(&class), None)
                } else {
                    let name = format!("{class}.{method}");
                    recording.frame(&name, FrameKind::of_class(&class), file.as_deref(), line)
                };
                frames.insert(frame_id, index);
            }
            Record::StackTrace {
                serial,
                thread_serial,
                frames: ids,
            } => {
                let trace = Trace {
                    thread: (thread_serial != 0).then_some(thread_serial),
                    frames: ids
                        .iter()
                        .map(|id| match frames.get(&id) {
                            Some(&i) => i,
                            None => {
                                recording.frame("<unknown frame>", FrameKind::Pseudo, None, None)
                            }
                        })
                        .collect(),
                };
                recording.traces.insert(serial, trace);
            }
            Record::StartThread {
                thread_serial,
                name_id,
                ..
            } => {
                if let Some(name) = text(&symbols, name_id) {
                    recording.threads.insert(thread_serial, name);
                }
            }
            Record::TimedSamples(samples) => {
                let dump = recording.dumps(Kind::Cpu);
                timed.extend(samples.iter().map(|s| (s, dump)));
            }
            Record::CpuSamples { traces, .. } => {
                let rows = traces
                    .iter()
                    .map(|(count, trace)| Row {
                        trace,
                        values: vec![i64::from(count)],
                        class: None,
                    })
                    .collect();
                recording.sections.push(Section {
                    kind: SectionKind::Cpu,
                    rows,
                    offset: head.offset,
                });
            }
            Record::AllocSites(sites) => {
                let rows = sites
                    .sites()
                    .map(|s| Row {
                        trace: s.stack_trace_serial,
                        values: vec![
                            i64::from(s.live_bytes),
                            i64::from(s.live_instances),
                            i64::from(s.bytes_allocated),
                            i64::from(s.instances_allocated),
                        ],
                        class: Some(
                            symbols
                                .class_name_by_serial(s.class_serial)
                                .unwrap_or_else(|| format!("<class {}>", s.class_serial)),
                        ),
                    })
                    .collect();
                recording.sections.push(Section {
                    kind: SectionKind::Sites,
                    rows,
                    offset: head.offset,
                });
            }
            Record::HeapDump(_) | Record::HeapDumpSegment(_) => {
                heap_dump.get_or_insert(head.offset);
            }
            _ => {}
        }
    }
    if !timed.is_empty() {
        let start = header.timestamp_ms as i64 * 1_000_000;
        recording.timed = Some(timed_of_hprof(&mut recording, start, &timed));
    }
    if let Some(at) = heap_dump
        && recording.sections.is_empty()
    {
        return Err(Error::at(
            at,
            "a heap dump with no profile in it (`hprof analyze` reads heap dumps)",
        ));
    }
    Ok(recording)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "JAVA PROFILE 1.0.1, created Tue Nov 24 14:00:00 2026\n\nglossary\n--------\n\n\
THREAD START (obj=50000001, id = 200001, name=\"main\", group=\"main\")\n\
TRACE 300001: (thread=200001)\n\tCpuHot.hot(CpuHot.java:12)\n\tCpuHot.main(CpuHot.java:30)\n\
TRACE 300002: (thread=200001)\n\tjava.lang.Math.sqrt(Math.java:Native method)\n\tCpuHot.main(CpuHot.java:31)\n\
CPU SAMPLES BEGIN (total = 10) Tue Nov 24 14:00:01 2026\nrank   self  accum   count trace method\n\
   1 70.00% 70.00%       7 300001 CpuHot.hot\n   2 30.00% 100.00%       3 300002 java.lang.Math.sqrt\nCPU SAMPLES END\n\
CPU SAMPLES BEGIN (total = 4) Tue Nov 24 14:00:02 2026\nrank   self  accum   count trace method\n\
   1 100.00% 100.00%       4 300001 CpuHot.hot\nCPU SAMPLES END\n";

    #[test]
    fn text_samples_by_dump() {
        let r = Recording::read(TEXT.as_bytes()).unwrap();
        assert_eq!(r.dumps(Kind::Cpu), 2);
        assert_eq!(r.default_kind(), Some(Kind::Cpu));
        let last = r.profile(Kind::Cpu, Selection::Last, false).unwrap();
        assert_eq!(last.total(), 4);
        let all = r.profile(Kind::Cpu, Selection::All, true).unwrap();
        assert_eq!(all.total(), 14);
        let first = r.profile(Kind::Cpu, Selection::Nth(1), false).unwrap();
        assert_eq!(first.total(), 10);
        let root = &first.frames[first.samples[0].stack[0]];
        assert_eq!((root.name(), root.line), ("CpuHot.main", Some(30)));
        assert_eq!(all.samples[0].thread.as_deref(), Some("main"));
        let err = r.profile(Kind::Cpu, Selection::Nth(3), false).unwrap_err();
        assert!(err.message.contains("dump 3 does not exist"), "{err}");
        assert!(r.profile(Kind::Alloc, Selection::Last, false).is_err());
    }

    #[test]
    fn the_agents_notes_of_what_it_could_not_write_are_kept() {
        let noted = format!("{TEXT}HPROF ERROR: can't write profile output: disk full\n");
        let r = Recording::read(noted.as_bytes()).unwrap();
        assert_eq!(r.notes(), ["can't write profile output: disk full"]);
        assert!(Recording::read(TEXT.as_bytes()).unwrap().notes().is_empty());
    }

    #[test]
    fn numbers_out_of_range_are_errors_with_their_line() {
        let huge = TEXT.replace("       7 300001", " 18446744073709551617 300001");
        let err = Recording::read(huge.as_bytes()).unwrap_err();
        assert!(err.message.starts_with("line 15: CPU SAMPLES row"), "{err}");
        assert!(err.message.contains("18446744073709551617"), "{err}");
        assert_eq!(
            err.offset,
            Some(huge.find("1 70.00% 70.00% 18446").unwrap() as u64)
        );
        let total = TEXT.replace("(total = 10)", "(total = 1e23)");
        let err = Recording::read(total.as_bytes()).unwrap_err();
        assert!(err.message.contains("total is not a number"), "{err}");
        let wraps = TEXT
            .replace("       7 300001", " 9223372036854775807 300001")
            .replace("       3 300002", " 9223372036854775807 300002");
        let err = Recording::read(wraps.as_bytes()).unwrap_err();
        assert!(err.message.contains("add up beyond"), "{err}");
        let no_trace = TEXT.replace("       3 300002 java", "       3 x java");
        let err = Recording::read(no_trace.as_bytes()).unwrap_err();
        assert!(err.message.contains("not a trace number"), "{err}");
    }

    #[test]
    fn cut_files_and_foreign_files_are_errors_with_offsets() {
        let cut = &TEXT[..TEXT.len() - 20];
        let err = Recording::read(cut.as_bytes()).unwrap_err();
        assert!(err.message.contains("cut short"), "{err}");
        assert!(err.offset.is_some());
        let err = Recording::read(b"hello").unwrap_err();
        assert_eq!(err.offset, Some(0));
        assert!(err.to_string().contains("not a profile written by hprof"));
    }

    #[test]
    fn what_a_file_lacks_and_what_it_is_instead_are_errors_with_offsets() {
        // Read to its end without a section: the error says where the end is.
        let bare = "JAVA PROFILE 1.0.1, created Tue Nov 24 14:00:00 2026\n\nglossary\n";
        let r = Recording::read(bare.as_bytes()).unwrap();
        let filter = Filter::default();
        let err = r
            .select(None, Selection::Last, &filter, None, None)
            .unwrap_err();
        let end = format!("read to its end, at byte offset {}", bare.len());
        assert!(err.message.contains("no CPU SAMPLES"), "{err}");
        assert!(err.to_string().contains(&end), "{err}");
        let err = r.profile(Kind::Lock, Selection::Last, false).unwrap_err();
        assert!(err.message.contains("no MONITOR TIME section"), "{err}");
        assert!(err.to_string().contains(&end), "{err}");
        // A heap dump given for a profile: its first heap dump record's offset.
        let header = hprof_format::Header {
            version: hprof_format::Version::V1_0_2,
            id_size: hprof_format::IdSize::Eight,
            timestamp_ms: 0,
        };
        let mut w = hprof_format::Writer::new(Vec::new(), header).unwrap();
        w.utf8(0, 1, b"java/lang/Object").unwrap();
        let at = w.finish().unwrap().len() as u64;
        let mut w = hprof_format::Writer::new(Vec::new(), header).unwrap();
        w.utf8(0, 1, b"java/lang/Object").unwrap();
        w.begin_heap_dump(0).unwrap();
        w.root(&hprof_format::HeapRecord::RootUnknown { object_id: 1 })
            .unwrap();
        w.end_heap_dump().unwrap();
        let dump = w.finish().unwrap();
        let err = Recording::read(&dump).unwrap_err();
        assert!(err.message.contains("a heap dump with no profile"), "{err}");
        assert_eq!(err.offset, Some(at), "{err}");
        // Summing the chosen sections past i64::MAX names the section where it happens.
        let big = " 5000000000000000000 300001";
        let two = TEXT
            .replace("       7 300001", big)
            .replace("       4 300001", big);
        let r = Recording::read(two.as_bytes()).unwrap();
        let err = r.profile(Kind::Cpu, Selection::All, false).unwrap_err();
        let second = two.rfind("CPU SAMPLES BEGIN").unwrap() as u64;
        assert!(err.message.contains("add up beyond"), "{err}");
        assert_eq!(err.offset, Some(second), "{err}");
    }

    #[test]
    fn gzip_damage_names_the_compressed_offset_and_text_damage_its_line() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(TEXT.as_bytes()).unwrap();
        let gz = gz.finish().unwrap();
        let err = Recording::read(&gz[..gz.len() - 10]).unwrap_err();
        assert!(err.message.contains("gzip data ends early"), "{err}");
        assert_eq!(err.offset, Some(gz.len() as u64 - 10), "{err}");
        // The first deflate block (after the 10-byte header) of a type that does not exist:
        // found within the bytes of its header.
        let mut bad = gz.clone();
        bad[10] = 0xff;
        let err = Recording::read(&bad).unwrap_err();
        assert!(err.message.contains("corrupt gzip data"), "{err}");
        assert!(err.offset.is_some_and(|o| (10..=16).contains(&o)), "{err}");
        let mut latin = TEXT.as_bytes().to_vec();
        let at = TEXT.find("CpuHot.main").unwrap();
        latin[at] = 0xe9;
        let err = Recording::read(&latin).unwrap_err();
        assert_eq!(err.offset, Some(at as u64), "{err}");
        assert!(
            err.message
                .starts_with("line 9: the text profile is not UTF-8"),
            "{err}"
        );
    }

    #[test]
    fn frames_keep_class_method_file_and_line() {
        let f = parse_frame("java.util.HashMap$Node.<init>(HashMap.java:289)");
        assert_eq!(
            f,
            (
                "java.util.HashMap$Node.<init>",
                FrameKind::Jdk,
                Some("HashMap.java"),
                Some(289)
            )
        );
        let f = parse_frame("App.run(<Unknown Source>:Unknown line)");
        assert_eq!(f, ("App.run", FrameKind::Application, None, None));
        let f = parse_frame("<hprof>.<WAITING in Object.wait>(<Unknown Source>:Unknown line)");
        assert_eq!(
            f,
            ("<WAITING in Object.wait>", FrameKind::Pseudo, None, None)
        );
    }

    #[test]
    fn native_and_kernel_functions_are_told_apart_from_java_methods() {
        assert_eq!(
            parse_frame("[kernel].do_syscall_64(Kernel)"),
            (
                "[kernel].do_syscall_64",
                FrameKind::Kernel,
                Some("[kernel]"),
                None
            )
        );
        assert_eq!(
            parse_frame("libc.so.6.__memmove_avx_unaligned_erms(Native method)"),
            (
                "libc.so.6.__memmove_avx_unaligned_erms",
                FrameKind::Native,
                Some("libc.so.6"),
                None
            )
        );
        assert_eq!(
            parse_frame("libjvm.so.os::javaTimeNanos(Native method)"),
            (
                "libjvm.so.os::javaTimeNanos",
                FrameKind::Jvm,
                Some("libjvm.so"),
                None
            )
        );
        // A Java native method keeps its source file.
        assert_eq!(
            parse_frame("java.lang.Thread.sleep0(Thread.java:Native method)"),
            (
                "java.lang.Thread.sleep0",
                FrameKind::Jdk,
                Some("Thread.java"),
                None
            )
        );
        assert_eq!(
            split_code_name("[kernel].kallsyms_expand_symbol.constprop.0"),
            ("[kernel]", "kallsyms_expand_symbol.constprop.0")
        );
        assert_eq!(
            split_code_name("libfoo.so.1.2.bar.constprop.0"),
            ("libfoo.so.1.2", "bar.constprop.0")
        );
        assert_eq!(split_code_name("libfoo.so.0x1a2b"), ("libfoo.so", "0x1a2b"));
        assert_eq!(split_code_name("libc.so.6.memcpy"), ("libc.so.6", "memcpy"));
        assert_eq!(split_code_name("java.JavaMain"), ("java", "JavaMain"));
    }

    #[test]
    fn binary_frames_of_native_and_kernel_code_are_grouped_by_library() {
        use hprof_format::{Header, IdSize, Version, Writer};
        let header = Header {
            version: Version::V1_0_2,
            id_size: IdSize::Eight,
            timestamp_ms: 0,
        };
        let mut w = Writer::new(Vec::new(), header).unwrap();
        let names = [
            (1, "libc.so.6"),
            (2, "__getpid"),
            (3, "/usr/lib/x86_64-linux-gnu/libc.so.6"),
            (4, "[kernel]"),
            (5, "do_syscall_64"),
            (6, "Getpid"),
            (7, "main"),
            (8, "Getpid.java"),
            (9, ""),
        ];
        for (id, text) in names {
            w.utf8(0, id, text.as_bytes()).unwrap();
        }
        w.load_class(0, 1, 0x100, 0, 1).unwrap();
        w.load_class(0, 2, 0x200, 0, 4).unwrap();
        w.load_class(0, 3, 0x300, 0, 6).unwrap();
        w.stack_frame(0, 1, 5, 9, 4, 2, -3).unwrap();
        w.stack_frame(0, 2, 2, 9, 3, 1, -3).unwrap();
        w.stack_frame(0, 3, 7, 9, 8, 3, 7).unwrap();
        w.stack_trace(0, 300001, 0, &[1, 2, 3]).unwrap();
        w.cpu_samples(0, 5, &[(5, 300001)]).unwrap();
        let bytes = w.finish().unwrap();
        let r = Recording::read(&bytes).unwrap();
        let p = r.profile(Kind::Cpu, Selection::Last, false).unwrap();
        let stack: Vec<(&str, FrameKind)> = p.samples[0]
            .stack
            .iter()
            .map(|&f| (p.frames[f].name(), p.frames[f].kind))
            .collect();
        assert_eq!(
            stack,
            vec![
                ("Getpid.main", FrameKind::Application),
                ("libc.so.6.__getpid", FrameKind::Native),
                ("[kernel].do_syscall_64", FrameKind::Kernel),
            ]
        );
    }
}

#[cfg(test)]
mod split_tests {
    use super::*;

    /// A text profile of `traces` traces (beyond 8 MB for 60,000), each sampled `n + 1` times.
    fn synthetic(traces: usize) -> String {
        let mut text = String::from("JAVA PROFILE 1.0.1, created Tue Nov 24 12:00:00 2026\n\n");
        text.push_str("THREAD START (obj=50000001, id = 200001, name=\"main\", group=\"main\")\n");
        for t in 0..traces {
            text.push_str(&format!("TRACE {}: (thread=200001)\n", 300001 + t));
            for f in 0..12 {
                let m = (t * 7 + f * 13) % 997;
                text.push_str(&format!(
                    "\tcom.example.C{}.m{}(C{}.java:{})\n",
                    m % 101,
                    m,
                    m % 101,
                    (t + f) % 50 + 1
                ));
            }
        }
        let total: usize = (1..=traces).sum();
        text.push_str(&format!(
            "CPU SAMPLES BEGIN (total = {total}) Tue Nov 24 12:00:10 2026\n"
        ));
        text.push_str("rank   self  accum   count trace method\n");
        for t in 0..traces {
            text.push_str(&format!(
                "{} 0.00% 0.00% {} {} x.y\n",
                t + 1,
                t + 1,
                300001 + t
            ));
        }
        text.push_str("CPU SAMPLES END\n");
        text
    }

    /// The folded stacks of the file's CPU profile, sorted.
    fn folded_of(recording: &Recording) -> Vec<(String, i64)> {
        let profile = recording.profile(Kind::Cpu, Selection::Last, true).unwrap();
        let mut lines = crate::folded::lines(&profile);
        lines.sort();
        lines
    }

    #[test]
    fn a_large_profile_read_in_two_halves_is_the_one_read_whole() {
        let text = synthetic(60_000);
        assert!(text.len() > 8 << 20, "{} bytes: not split", text.len());
        let halves = read_text(&text).unwrap();
        let whole = read_text_from(&text, 0).unwrap();
        assert_eq!(halves.traces.len(), 60_000);
        assert_eq!(halves.frames.len(), whole.frames.len());
        assert_eq!(folded_of(&halves), folded_of(&whole));
    }

    #[test]
    fn an_error_in_the_second_half_gives_its_offset_in_the_file() {
        let mut text = synthetic(60_000);
        let cut = text.rfind("CPU SAMPLES END").unwrap();
        text.truncate(cut);
        let err = read_text(&text).unwrap_err();
        let section = text.rfind("CPU SAMPLES BEGIN").unwrap() as u64;
        assert_eq!(err.offset, Some(section), "{err}");
    }

    #[test]
    fn frames_read_by_method_keep_names_kinds_and_values() {
        // Big enough to be read in halves: frames of one method at 50 lines each.
        let text = synthetic(60_000);
        let whole = Recording::read(text.as_bytes()).unwrap();
        let by_method = Recording::read_by_method(text.as_bytes()).unwrap();
        assert!(by_method.frames.len() * 10 < whole.frames.len());
        assert!(by_method.frames.iter().all(|f| f.line.is_none()));
        let names = |r: &Recording| {
            let mut names: Vec<(String, Option<String>, FrameKind)> = r
                .frames
                .iter()
                .map(|f| {
                    (
                        f.name().to_string(),
                        f.file.as_deref().map(String::from),
                        f.kind,
                    )
                })
                .collect();
            names.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
            names.dedup();
            names
        };
        assert_eq!(names(&by_method), names(&whole));
        assert_eq!(folded_of(&by_method), folded_of(&whole));
        // Native, kernel and pseudo-frames, and a Java native method, as read line by line.
        let odd = "JAVA PROFILE 1.0.1, created Tue Nov 24 14:00:00 2026\n\
TRACE 300001:\n\tlibc.so.6.memcpy(Native method)\n\t[kernel].do_syscall_64(Kernel)\n\
\t<hprof>.<GC active>(<Unknown Source>:Unknown line)\n\tjava.lang.Thread.sleep0(Thread.java:Native method)\n\
\tjava.lang.Thread.sleep0(Thread.java:12)\n\tA.b(A.java:1)\n\tA.b(A.java:2)\n\
CPU SAMPLES BEGIN (total = 1) Tue Nov 24 14:00:01 2026\nrank   self  accum   count trace method\n\
   1 100.00% 100.00%       1 300001 A.b\nCPU SAMPLES END\n";
        let (whole, by_method) = (
            Recording::read(odd.as_bytes()).unwrap(),
            Recording::read_by_method(odd.as_bytes()).unwrap(),
        );
        assert_eq!(names(&by_method), names(&whole));
        assert_eq!(by_method.frames.len(), 5);
        assert_eq!(folded_of(&by_method), folded_of(&whole));
    }
}
