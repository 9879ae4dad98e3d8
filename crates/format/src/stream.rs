//! Owns `StreamReader`, which reads records from any `io::Read` in bounded memory.

use crate::cursor::Cursor;
use crate::error::{Error, ErrorKind, Result};
use crate::heap::{HeapRecord, parse_heap_record};
use crate::record::{
    RECORD_HEADER_LEN, Record, RecordHeader, parse_record_body, parse_record_header,
};
use crate::tag::Tag;
use crate::types::Header;
use std::io::{self, Read};

/// The first buffer size, and the least a read asks for.
const CHUNK: usize = 256 << 10;

/// One step of a stream: a record, or the start, a sub-record or the end of a heap dump body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event<'a> {
    /// A top-level record other than HEAP DUMP and HEAP DUMP SEGMENT.
    Record(RecordHeader, Record<'a>),
    /// A HEAP DUMP or HEAP DUMP SEGMENT record begins; its sub-records follow.
    HeapDumpStart(RecordHeader),
    /// One sub-record, with the file offset of its tag byte.
    HeapRecord(u64, HeapRecord<'a>),
    /// The body of the HEAP DUMP or HEAP DUMP SEGMENT that began last has ended.
    HeapDumpFinish,
}

/// Reads HPROF records from any reader (a pipe, a socket, standard input).
///
/// Memory is bounded by the largest single record or sub-record, never by the
/// size of the stream: heap dumps are delivered one sub-record at a time, and
/// the buffer grows only as bytes actually arrive, never from a length field.
#[derive(Debug)]
pub struct StreamReader<R: Read> {
    src: R,
    header: Header,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// File offset of `buf[start]`.
    offset: u64,
    /// Unparsed bytes of the current heap dump body, buffered or not.
    segment_left: Option<u64>,
    eof: bool,
    failed: bool,
}

impl<R: Read> StreamReader<R> {
    /// Reads the file header from `src` and returns a reader for the records after it.
    pub fn new(src: R) -> Result<StreamReader<R>> {
        let mut r = StreamReader {
            src,
            header: Header {
                version: crate::types::Version::V1_0_2,
                id_size: crate::types::IdSize::Eight,
                timestamp_ms: 0,
            },
            buf: Vec::new(),
            start: 0,
            end: 0,
            offset: 0,
            segment_left: None,
            eof: false,
            failed: false,
        };
        // The header is at most 64 bytes of name, a NUL and 12 bytes.
        r.fill(80)?;
        let (header, len) = Header::parse(&r.buf[..r.end])?;
        r.header = header;
        r.start = len;
        r.offset = len as u64;
        Ok(r)
    }

    /// The file header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The number of bytes consumed so far, header included.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    fn available(&self) -> usize {
        self.end - self.start
    }

    /// Reads until at least `want` unparsed bytes are buffered or the stream ends.
    /// The buffer grows only as data arrives.
    fn fill(&mut self, want: usize) -> Result<()> {
        while self.available() < want && !self.eof {
            if self.start > 0 && self.end == self.buf.len() {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.end == self.buf.len() {
                let grown = (self.buf.len() * 2).max(CHUNK);
                self.buf.resize(grown, 0);
            }
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(Error::new(
                        self.offset + self.available() as u64,
                        ErrorKind::Io(e.kind(), e.to_string()),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Reads the next event.
    pub fn next_event(&mut self) -> Result<Option<Event<'_>>> {
        if self.failed {
            return Ok(None);
        }
        // `step` clears this on every path that returns an event, so an error fuses the reader.
        self.failed = true;
        self.step()
    }

    fn step(&mut self) -> Result<Option<Event<'_>>> {
        let id_size = self.header.id_size;
        if let Some(left) = self.segment_left {
            if left == 0 {
                self.segment_left = None;
                self.failed = false;
                return Ok(Some(Event::HeapDumpFinish));
            }
            // Make sure the whole sub-record is buffered, then parse it once more to return it.
            let mut want = self.available().max(1);
            let len = loop {
                let limit = self
                    .available()
                    .min(usize::try_from(left).unwrap_or(usize::MAX));
                let mut c = Cursor::new(
                    &self.buf[self.start..self.start + limit],
                    self.offset,
                    "heap dump",
                );
                match parse_heap_record(&mut c, id_size) {
                    Ok(_) => break c.offset() - self.offset,
                    Err(e) => {
                        let more_exists = (limit as u64) < left && !self.eof;
                        if !more_exists || !matches!(e.kind(), ErrorKind::Truncated { .. }) {
                            return Err(e);
                        }
                        want = want.saturating_mul(2).max(CHUNK);
                        self.fill(want)?;
                    }
                }
            };
            let at = self.offset;
            let data = &self.buf[self.start..self.start + len as usize];
            let mut c = Cursor::new(data, at, "heap dump");
            let record = parse_heap_record(&mut c, id_size)?;
            self.start += len as usize;
            self.offset += len;
            self.segment_left = Some(left - len);
            self.failed = false;
            return Ok(Some(Event::HeapRecord(at, record)));
        }

        self.fill(RECORD_HEADER_LEN)?;
        if self.available() == 0 {
            return Ok(None);
        }
        let at = self.offset;
        if self.available() < RECORD_HEADER_LEN {
            // Report what the header's first byte says the record is, if it can.
            let header = parse_record_header(&self.buf[self.start..self.end], at);
            let what = header.map(|h| h.tag.name()).unwrap_or("record header");
            return Err(Error::new(
                at,
                ErrorKind::Truncated {
                    what,
                    needed: RECORD_HEADER_LEN as u64,
                    available: self.available() as u64,
                },
            ));
        }
        let header = parse_record_header(&self.buf[self.start..self.end], at)?;
        if matches!(header.tag, Tag::HeapDump | Tag::HeapDumpSegment) {
            self.start += RECORD_HEADER_LEN;
            self.offset += RECORD_HEADER_LEN as u64;
            self.segment_left = Some(header.length.into());
            self.failed = false;
            return Ok(Some(Event::HeapDumpStart(header)));
        }
        let total = RECORD_HEADER_LEN + header.length as usize;
        let mut want = self.available();
        while self.available() < total && !self.eof {
            want = want.saturating_mul(2).max(CHUNK).min(total);
            self.fill(want)?;
        }
        if self.available() < total {
            return Err(Error::new(
                at,
                ErrorKind::Truncated {
                    what: header.tag.name(),
                    needed: total as u64,
                    available: self.available() as u64,
                },
            ));
        }
        let body = &self.buf[self.start + RECORD_HEADER_LEN..self.start + total];
        let record = parse_record_body(&header, body, id_size)?;
        self.start += total;
        self.offset += total as u64;
        self.failed = false;
        Ok(Some(Event::Record(header, record)))
    }
}
