//! Owns big-endian byte access: a bounds-checked cursor for reading and helpers for writing.

use crate::error::{Error, Result};

/// A bounds-checked big-endian reader over a byte slice; offsets in errors are relative to
/// `base`, so they point into the whole class file.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(data: &'a [u8], base: usize) -> Cursor<'a> {
        Cursor { data, pos: 0, base }
    }

    /// Absolute offset of the next byte.
    pub(crate) fn offset(&self) -> usize {
        self.base + self.pos
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| Error::new(self.offset(), format!("truncated {what}")))?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    pub(crate) fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.bytes(1, what)?[0])
    }

    pub(crate) fn u16(&mut self, what: &str) -> Result<u16> {
        let b = self.bytes(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    pub(crate) fn u32(&mut self, what: &str) -> Result<u32> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }
}

pub(crate) fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

pub(crate) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Reads a big-endian i16 at `at` of `code` (the caller checked the bounds).
pub(crate) fn i16_at(code: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([code[at], code[at + 1]])
}

/// Reads a big-endian i32 at `at` of `code` (the caller checked the bounds).
pub(crate) fn i32_at(code: &[u8], at: usize) -> i32 {
    i32::from_be_bytes([code[at], code[at + 1], code[at + 2], code[at + 3]])
}

pub(crate) fn u16_at(code: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([code[at], code[at + 1]])
}
