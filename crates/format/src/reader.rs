//! Owns `Records`, the zero-copy reader over a whole file held in memory (or mapped).

use crate::error::{Error, ErrorKind, Result};
use crate::record::{
    RECORD_HEADER_LEN, Record, RecordHeader, parse_record_body, parse_record_header,
};
use crate::types::{Header, IdSize};

/// An iterator over the top-level records of a file held in memory.
///
/// Record bodies are borrowed, never copied. After an error it yields nothing more.
#[derive(Clone, Debug)]
pub struct Records<'a> {
    data: &'a [u8],
    pos: usize,
    id_size: IdSize,
    failed: bool,
}

impl<'a> Records<'a> {
    /// Reads the header of `data`, a whole HPROF file, and returns it with an
    /// iterator over the records that follow.
    pub fn new(data: &'a [u8]) -> Result<(Header, Records<'a>)> {
        let (header, len) = Header::parse(data)?;
        let records = Records {
            data,
            pos: len,
            id_size: header.id_size,
            failed: false,
        };
        Ok((header, records))
    }

    /// The number of bytes consumed so far, header included.
    pub fn offset(&self) -> u64 {
        self.pos as u64
    }

    /// The identifier size of the file.
    pub fn id_size(&self) -> IdSize {
        self.id_size
    }

    /// Reads the next record.
    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<(RecordHeader, Record<'a>)>> {
        if self.failed {
            return Ok(None);
        }
        let result = self.read();
        if result.is_err() {
            self.failed = true;
        }
        result
    }

    #[inline]
    fn read(&mut self) -> Result<Option<(RecordHeader, Record<'a>)>> {
        let rest = self.data.get(self.pos..).unwrap_or(&[]);
        if rest.is_empty() {
            return Ok(None);
        }
        let offset = self.pos as u64;
        let header = parse_record_header(rest, offset)?;
        let len = header.length as usize;
        let Some(body) = rest.get(RECORD_HEADER_LEN..RECORD_HEADER_LEN + len) else {
            return Err(Error::new(
                offset,
                ErrorKind::Truncated {
                    what: header.tag.name(),
                    needed: (RECORD_HEADER_LEN + len) as u64,
                    available: rest.len() as u64,
                },
            ));
        };
        let record = parse_record_body(&header, body, self.id_size)?;
        self.pos += RECORD_HEADER_LEN + len;
        Ok(Some((header, record)))
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<(RecordHeader, Record<'a>)>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        Records::next(self).transpose()
    }
}
