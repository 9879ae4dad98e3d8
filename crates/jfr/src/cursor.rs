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

    /// The next `n` bytes (at most those remaining) as a cursor of their own; this one moves
    /// past them.
    #[inline]
    pub(crate) fn take(&mut self, n: usize) -> Cursor<'a> {
        let from = self.pos;
        let to = from.saturating_add(n).min(self.data.len());
        self.pos = to;
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
    #[inline(always)]
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

    /// Skips `n` LEB128 integers as [`Cursor::varint`] reads them (each ends at a byte below
    /// 0x80 or at its ninth byte), eight bytes at a time where it can; `None` (the cursor
    /// moved anywhere) where the data ends first.
    pub(crate) fn skip_integers(&mut self, mut n: usize) -> Option<()> {
        const HIGH: u64 = 0x8080_8080_8080_8080;
        let data = self.data;
        let mut pos = self.pos;
        // Bytes of the integer under way so far, all with the high bit set.
        let mut run = 0u32;
        while n > 0 {
            if let Some(word) = data.get(pos..pos + 8) {
                let w = u64::from_le_bytes(word.try_into().ok()?);
                let ends = !w & HIGH;
                let count = ends.count_ones() as usize;
                // Whole words only while no integer in them reaches nine bytes (the first
                // one's continuation bytes are the run so far and those that lead the word)
                // and none past the last one wanted starts in them.
                let whole = count < n || (count == n && ends >> 63 == 1);
                if count != 0 && whole && run + ends.trailing_zeros() / 8 <= 8 {
                    n -= count;
                    pos += 8;
                    run = ends.leading_zeros() / 8;
                    continue;
                }
            }
            let &b = data.get(pos)?;
            pos += 1;
            if b < 0x80 || run == 8 {
                n -= 1;
                run = 0;
            } else {
                run += 1;
            }
        }
        self.pos = pos;
        Some(())
    }

    /// A `long` (64 bits).
    #[inline(always)]
    pub(crate) fn long(&mut self, what: &'static str) -> Result<i64> {
        if self.compressed {
            self.varint(what).map(|v| v as i64)
        } else {
            self.be_u64(what).map(|v| v as i64)
        }
    }

    /// An `int` (32 bits; a wider compressed value is cut to its low 32 bits).
    #[inline(always)]
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
    fn integers_are_skipped_where_varint_reads_them() {
        // Integers of 1 to 9 bytes (a ninth byte ends one whatever its high bit), in runs that
        // cross words, each count of them skipped from each start.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut bytes = Vec::new();
        for _ in 0..400 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 9) as usize + 1;
            for i in 0..len {
                let last = i + 1 == len;
                let high = if last && len < 9 {
                    0
                } else if last {
                    (seed >> 20) as u8 & 0x80
                } else {
                    0x80
                };
                bytes.push(high | (seed >> (i * 3)) as u8 & 0x7f);
            }
        }
        for start in [0, 1, 5, 8, 13] {
            for n in 0..60 {
                let mut slow = Cursor::new(&bytes[start..], 0, true);
                let whole = (0..n).all(|_| slow.varint("v").is_ok());
                let mut fast = Cursor::new(&bytes[start..], 0, true);
                let skipped = fast.skip_integers(n);
                assert_eq!(skipped.is_some(), whole, "start {start}, {n}");
                assert_eq!(fast.pos(), slow.pos(), "start {start}, {n}");
            }
        }
        let mut c = Cursor::new(&[0x80, 0x80], 0, true);
        assert!(c.skip_integers(1).is_none());
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
