//! Owns the reading of JFR's basic encodings from a byte slice: big-endian fixed-width
//! numbers, LEB128 variable-length integers (at most 9 bytes, the ninth giving 8 bits) and
//! strings, every read checked against the end of the slice.

use crate::error::{Error, Result};

/// A position in a slice of a file.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    /// The file offset of `data[0]`, for errors.
    base: u64,
    /// Whether integers are LEB128-compressed (the chunk's feature bit 0; always so for the
    /// recordings of JDK 11+ and async-profiler).
    compressed: bool,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(data: &'a [u8], base: u64, compressed: bool) -> Cursor<'a> {
        Cursor {
            data,
            pos: 0,
            base,
            compressed,
        }
    }

    /// The file offset of the next byte.
    pub(crate) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Moves to `pos` (at most the end).
    pub(crate) fn set_pos(&mut self, pos: usize) {
        self.pos = pos.min(self.data.len());
    }

    /// A cursor over `from..to` of this one's data (clamped to it).
    pub(crate) fn sub(&self, from: usize, to: usize) -> Cursor<'a> {
        let to = to.min(self.data.len());
        let from = from.min(to);
        Cursor {
            data: &self.data[from..to],
            pos: 0,
            base: self.base + from as u64,
            compressed: self.compressed,
        }
    }

    /// The bytes from the position on.
    pub(crate) fn data(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    pub(crate) fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub(crate) fn truncated(&self, what: &'static str) -> Error {
        Error::truncated(self.offset(), what)
    }

    pub(crate) fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.truncated(what));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub(crate) fn skip(&mut self, n: usize, what: &'static str) -> Result<()> {
        self.bytes(n, what).map(|_| ())
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8> {
        match self.data.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.truncated(what)),
        }
    }

    pub(crate) fn be_u16(&mut self, what: &'static str) -> Result<u16> {
        let b = self.bytes(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    pub(crate) fn be_u32(&mut self, what: &'static str) -> Result<u32> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn be_u64(&mut self, what: &'static str) -> Result<u64> {
        let b = self.bytes(8, what)?;
        let mut a = [0; 8];
        a.copy_from_slice(b);
        Ok(u64::from_be_bytes(a))
    }

    /// A LEB128 integer of at most 9 bytes.
    #[inline]
    pub(crate) fn varint(&mut self, what: &'static str) -> Result<u64> {
        let data = self.data;
        let mut pos = self.pos;
        let mut value = 0u64;
        for shift in (0..56).step_by(7) {
            let Some(&b) = data.get(pos) else {
                return Err(self.truncated(what));
            };
            pos += 1;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                self.pos = pos;
                return Ok(value);
            }
        }
        let Some(&b) = data.get(pos) else {
            return Err(self.truncated(what));
        };
        self.pos = pos + 1;
        Ok(value | (u64::from(b) << 56))
    }

    /// A `long` (64 bits).
    #[inline]
    pub(crate) fn long(&mut self, what: &'static str) -> Result<i64> {
        if self.compressed {
            self.varint(what).map(|v| v as i64)
        } else {
            self.be_u64(what).map(|v| v as i64)
        }
    }

    /// An `int` (32 bits; a wider compressed value is cut to its low 32 bits).
    #[inline]
    pub(crate) fn int(&mut self, what: &'static str) -> Result<i32> {
        if self.compressed {
            self.varint(what).map(|v| v as u32 as i32)
        } else {
            self.be_u32(what).map(|v| v as i32)
        }
    }

    /// A `short` or `char` (16 bits).
    pub(crate) fn short(&mut self, what: &'static str) -> Result<u16> {
        if self.compressed {
            self.varint(what).map(|v| v as u16)
        } else {
            self.be_u16(what)
        }
    }

    /// A count (an `int` that may not be negative), checked against the bytes left: each
    /// counted item takes at least `min_item` bytes.
    pub(crate) fn count(&mut self, min_item: usize, what: &'static str) -> Result<usize> {
        let at = self.offset();
        let n = self.int(what)?;
        if n < 0 {
            return Err(Error::malformed(
                at,
                format!("negative count {n} in {what}"),
            ));
        }
        let n = n as usize;
        if n.saturating_mul(min_item.max(1)) > self.remaining() {
            return Err(Error::truncated(at, what));
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_of_one_to_nine_bytes() {
        let cases: [(&[u8], u64); 4] = [
            (&[0x05], 5),
            (&[0x80, 0x01], 128),
            (&[0xff, 0xff, 0xff, 0xff, 0x0f], 0xffff_ffff),
            (&[0xff; 9], u64::MAX),
        ];
        for (bytes, value) in cases {
            let mut c = Cursor::new(bytes, 0, true);
            assert_eq!(c.varint("v").unwrap(), value);
            assert!(c.at_end());
        }
        let mut c = Cursor::new(&[0x80, 0x80], 10, true);
        assert_eq!(c.varint("v").unwrap_err().offset(), 10);
    }

    #[test]
    fn ints_keep_their_sign() {
        let mut c = Cursor::new(&[0xff, 0xff, 0xff, 0xff, 0x0f], 0, true);
        assert_eq!(c.int("i").unwrap(), -1);
        let mut c = Cursor::new(&[0xff, 0xff, 0xff, 0xfe], 0, false);
        assert_eq!(c.int("i").unwrap(), -2);
    }

    #[test]
    fn counts_larger_than_the_data_are_errors() {
        let mut c = Cursor::new(&[0x7f, 1, 2], 4, true);
        let err = c.count(1, "array").unwrap_err();
        assert_eq!(err.offset(), 4);
    }
}
