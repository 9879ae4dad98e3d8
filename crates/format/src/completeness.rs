//! Owns [`Completeness`]: whether a file holds everything its writer meant it to hold (a
//! record cut short, a heap dump without its HEAP DUMP END or its GC roots, a heap dump file
//! cut before its first heap record, a writer's own `HPROF ERROR` note), and how much of it
//! was read. Every command that reads a heap dump feeds one and reports what it found.

use std::fmt;

use crate::error::{Error, ErrorKind};
use crate::reader::Records;
use crate::record::{Record, RecordHeader};
use crate::tag::Tag;

/// What the hprof agent writes into a file (a STRING record in binary, a line in text)
/// where part of a profile could not be written.
pub const ERROR_NOTE_PREFIX: &str = "HPROF ERROR: ";

/// One way a file is not whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The file ends inside a record (the reader's error names it and its offset).
    Cut(Error),
    /// A segmented heap dump (format 1.0.2) has no HEAP DUMP END: its last segments are
    /// missing.
    NoHeapDumpEnd {
        /// Offset of the dump's first HEAP DUMP SEGMENT.
        first_segment: u64,
        /// Segments read.
        segments: u64,
    },
    /// No heap dump at all, in a file that holds nothing else a profile would (no CONTROL
    /// SETTINGS, CPU SAMPLES, ALLOC SITES, HEAP SUMMARY or START THREAD): a heap dump cut
    /// before its first heap record, or a file that is not a heap dump.
    NoHeapDump {
        /// Where the records read end.
        end: u64,
    },
    /// A heap dump with objects and no GC root: the root records, which HotSpot writes after
    /// the objects, are missing.
    NoGcRoots {
        /// Objects read.
        objects: u64,
        /// Where the records read end.
        end: u64,
    },
    /// The writer noted that part of its output could not be written.
    WriterNote {
        /// Offset of the record (or line) holding the note.
        offset: u64,
        /// The note, without its `HPROF ERROR: ` prefix.
        note: String,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Cut(error) => write!(f, "the file ends inside a record ({error})"),
            Problem::NoHeapDumpEnd {
                first_segment,
                segments,
            } => write!(
                f,
                "the heap dump that starts at offset {first_segment:#x} has no HEAP DUMP END \
                 record after its {segments} segment(s): the dump is cut short"
            ),
            Problem::NoHeapDump { end } => write!(
                f,
                "no heap dump record before the file ends at offset {end:#x} (a heap dump cut before its first \
                 HEAP DUMP SEGMENT, or not a heap dump)"
            ),
            Problem::NoGcRoots { objects, end } => write!(
                f,
                "the heap dump holds {objects} objects but no GC root before the file ends at \
                 offset {end:#x}: its root records are missing (the dump is cut short)"
            ),
            Problem::WriterNote { offset, note } => write!(
                f,
                "its writer noted at offset {offset:#x}: {ERROR_NOTE_PREFIX}{note}"
            ),
        }
    }
}

/// What a reader learned about a file's wholeness, fed record by record.
#[derive(Clone, Debug, Default)]
pub struct Completeness {
    file_len: u64,
    read: u64,
    cut: Option<Error>,
    /// The open segmented dump: (offset of its first segment, segments so far).
    open_dump: Option<(u64, u64)>,
    heap_dumps: u64,
    profile_records: bool,
    notes: Vec<(u64, String)>,
    heap: Option<(u64, u64)>,
    want_heap_dump: bool,
}

impl Completeness {
    /// A file of `file_len` bytes, nothing read yet.
    pub fn new(file_len: u64) -> Completeness {
        Completeness {
            file_len,
            ..Completeness::default()
        }
    }

    /// Walks the top-level records of `bytes` (not the heap dump bodies: cheap even for a
    /// big file). A record cut short ends the walk and is noted; any other error is returned.
    pub fn scan(bytes: &[u8]) -> crate::Result<Completeness> {
        let mut completeness = Completeness::new(bytes.len() as u64);
        let (_, mut records) = Records::new(bytes)?;
        loop {
            match records.next() {
                Ok(Some((header, record))) => completeness.record(&header, &record),
                Ok(None) => break,
                Err(e) if matches!(e.kind(), ErrorKind::Truncated { .. }) => {
                    completeness.cut(e);
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        completeness.read_up_to(records.offset());
        Ok(completeness)
    }

    /// Notes a top-level record.
    pub fn record(&mut self, header: &RecordHeader, record: &Record<'_>) {
        if let Record::Utf8 { text, .. } = record {
            self.string(header.offset, text);
        }
        self.tag(header.offset, header.tag);
    }

    /// Notes a top-level record by its tag alone (a stream reader's heap dump start).
    pub fn tag(&mut self, offset: u64, tag: Tag) {
        match tag {
            Tag::HeapDumpSegment => {
                let (first, segments) = self.open_dump.unwrap_or((offset, 0));
                if segments == 0 {
                    self.heap_dumps += 1;
                }
                self.open_dump = Some((first, segments + 1));
            }
            Tag::HeapDumpEnd => self.open_dump = None,
            Tag::HeapDump => self.heap_dumps += 1,
            Tag::ControlSettings
            | Tag::CpuSamples
            | Tag::AllocSites
            | Tag::HeapSummary
            | Tag::StartThread => self.profile_records = true,
            _ => {}
        }
    }

    /// Notes a STRING record: the agent's `HPROF ERROR:` notes are kept.
    pub fn string(&mut self, offset: u64, text: &[u8]) {
        if let Some(note) = text.strip_prefix(ERROR_NOTE_PREFIX.as_bytes()) {
            self.notes
                .push((offset, String::from_utf8_lossy(note).into_owned()));
        }
    }

    /// Notes that the file ends inside a record.
    pub fn cut(&mut self, error: Error) {
        self.cut = Some(error);
    }

    /// Notes how far the whole records go (header included).
    pub fn read_up_to(&mut self, offset: u64) {
        self.read = offset;
    }

    /// Notes the objects and GC roots the (last) heap dump holds.
    pub fn heap_counts(&mut self, objects: u64, roots: u64) {
        self.heap = Some((objects, roots));
    }

    /// For a reader that needs a heap dump: a file without one is a problem whatever else it
    /// holds.
    pub fn require_heap_dump(&mut self) {
        self.want_heap_dump = true;
    }

    /// Sets the file's length (for a stream, known once it has ended).
    pub fn set_file_len(&mut self, file_len: u64) {
        self.file_len = file_len;
    }

    /// The file's length.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// The bytes of whole records read, header included.
    pub fn bytes_read(&self) -> u64 {
        self.read
    }

    /// The share of the file read, from 0 to 1.
    pub fn fraction_read(&self) -> f64 {
        if self.file_len == 0 {
            1.0
        } else {
            self.read as f64 / self.file_len as f64
        }
    }

    /// What is missing, most telling first; empty for a whole file.
    pub fn problems(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        if let Some(error) = &self.cut {
            problems.push(Problem::Cut(error.clone()));
        }
        if let Some((first_segment, segments)) = self.open_dump {
            problems.push(Problem::NoHeapDumpEnd {
                first_segment,
                segments,
            });
        }
        if self.heap_dumps == 0
            && self.cut.is_none()
            && (self.want_heap_dump || !self.profile_records)
        {
            problems.push(Problem::NoHeapDump { end: self.read });
        }
        if let Some((objects, 0)) = self.heap
            && objects > 0
        {
            problems.push(Problem::NoGcRoots {
                objects,
                end: self.read,
            });
        }
        for (offset, note) in &self.notes {
            problems.push(Problem::WriterNote {
                offset: *offset,
                note: note.clone(),
            });
        }
        problems
    }

    /// The record cut short by the end of the file, if one is.
    pub fn cut_error(&self) -> Option<&Error> {
        self.cut.as_ref()
    }

    /// True when nothing is missing.
    pub fn is_complete(&self) -> bool {
        self.problems().is_empty()
    }

    /// One line for a user: what is missing and how much of the file was read (callers say
    /// "incomplete" before it); `None` for a whole file.
    pub fn summary(&self) -> Option<String> {
        let problems = self.problems();
        if problems.is_empty() {
            return None;
        }
        let what: Vec<String> = problems.iter().map(Problem::to_string).collect();
        Some(format!(
            "{}; {} of {} bytes read ({:.1} %)",
            what.join("; "),
            self.read,
            self.file_len,
            self.fraction_read() * 100.0
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Header, IdSize, Version, Writer};

    fn dump(segments: usize, end: bool, roots: bool) -> Vec<u8> {
        let header = Header {
            version: Version::V1_0_2,
            id_size: IdSize::Eight,
            timestamp_ms: 0,
        };
        let mut w = Writer::new(Vec::new(), header).unwrap();
        w.utf8(0, 1, b"java/lang/Object").unwrap();
        w.load_class(0, 1, 0x100, 0, 1).unwrap();
        w.set_segment_limit(1024);
        w.begin_heap_dump(0).unwrap();
        if roots {
            w.root(&crate::HeapRecord::RootStickyClass { object_id: 0x100 })
                .unwrap();
        }
        for i in 0..segments * 48 {
            w.instance_dump(0x1000 + i as u64 * 16, 0, 0x100, &[])
                .unwrap();
        }
        w.end_heap_dump().unwrap();
        let mut bytes = w.finish().unwrap();
        if !end {
            // HEAP DUMP END is the last record: a header with an empty body.
            bytes.truncate(bytes.len() - crate::RECORD_HEADER_LEN);
        }
        bytes
    }

    #[test]
    fn a_whole_dump_is_complete() {
        let c = Completeness::scan(&dump(3, true, true)).unwrap();
        assert!(c.is_complete(), "{:?}", c.problems());
        assert_eq!(c.summary(), None);
        assert_eq!(c.bytes_read(), c.file_len());
    }

    #[test]
    fn a_dump_without_its_end_is_incomplete() {
        let bytes = dump(3, false, true);
        let c = Completeness::scan(&bytes).unwrap();
        assert!(matches!(
            c.problems()[..],
            [Problem::NoHeapDumpEnd { segments, .. }] if segments > 1
        ));
        assert!(c.summary().unwrap().contains("no HEAP DUMP END"));
    }

    #[test]
    fn a_dump_cut_inside_a_record_names_the_record_and_what_was_read() {
        let bytes = dump(3, true, true);
        let c = Completeness::scan(&bytes[..bytes.len() - 30]).unwrap();
        let problems = c.problems();
        assert!(matches!(problems[0], Problem::Cut(_)), "{problems:?}");
        assert!(c.bytes_read() < c.file_len());
        let line = c.summary().unwrap();
        assert!(
            line.contains("at offset 0x") && line.contains("bytes read"),
            "{line}"
        );
    }

    #[test]
    fn a_dump_cut_before_its_heap_records_or_without_roots_is_incomplete() {
        let bytes = dump(1, true, true);
        let (_, mut records) = Records::new(&bytes).unwrap();
        let mut first_heap = 0;
        while let Some((h, _)) = records.next().unwrap() {
            if h.tag == Tag::HeapDumpSegment {
                first_heap = h.offset as usize;
                break;
            }
        }
        let c = Completeness::scan(&bytes[..first_heap]).unwrap();
        assert_eq!(
            c.problems(),
            vec![Problem::NoHeapDump {
                end: first_heap as u64
            }]
        );
        let mut c = Completeness::scan(&dump(2, true, false)).unwrap();
        c.heap_counts(96, 0);
        let end = c.bytes_read();
        assert!(end > 0);
        assert_eq!(c.problems(), vec![Problem::NoGcRoots { objects: 96, end }]);
        assert!(
            c.problems()[0]
                .to_string()
                .contains(&format!("before the file ends at offset {end:#x}")),
            "{}",
            c.problems()[0]
        );
    }

    #[test]
    fn a_profile_without_a_heap_dump_is_complete_unless_one_is_required() {
        let header = Header {
            version: Version::V1_0_2,
            id_size: IdSize::Eight,
            timestamp_ms: 0,
        };
        let mut w = Writer::new(Vec::new(), header).unwrap();
        w.control_settings(0, 2, 4).unwrap();
        w.utf8(0, 9, b"HPROF ERROR: heap dump lost").unwrap();
        let bytes = w.finish().unwrap();
        let mut c = Completeness::scan(&bytes).unwrap();
        assert!(matches!(
            &c.problems()[..],
            [Problem::WriterNote { note, .. }] if note == "heap dump lost"
        ));
        c.require_heap_dump();
        assert!(matches!(c.problems()[0], Problem::NoHeapDump { .. }));
    }
}
