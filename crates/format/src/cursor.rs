//! Owns the never-panicking big-endian cursor every parser reads through.

use crate::error::{Error, ErrorKind, Result};
use crate::types::{BasicType, IdSize, Value};

/// A cursor over bytes that reads big-endian fields from the front.
///
/// It has no method that can panic. On a failed read it empties itself, so
/// every later read fails too and no half-parsed state is left behind.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cursor<'a> {
    data: &'a [u8],
    /// File offset of `data[0]`.
    offset: u64,
    /// What is being parsed, for error messages.
    what: &'static str,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(data: &'a [u8], offset: u64, what: &'static str) -> Cursor<'a> {
        Cursor { data, offset, what }
    }

    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    pub(crate) fn rest(&self) -> &'a [u8] {
        self.data
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub(crate) fn truncated(&self, needed: u64) -> Error {
        Error::new(
            self.offset,
            ErrorKind::Truncated {
                what: self.what,
                needed,
                available: self.data.len() as u64,
            },
        )
    }

    pub(crate) fn error(&self, kind: ErrorKind) -> Error {
        Error::new(self.offset, kind)
    }

    /// Takes `n` bytes from the front.
    #[inline]
    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        match self.data.split_at_checked(n) {
            Some((head, tail)) => {
                self.data = tail;
                self.offset += n as u64;
                Ok(head)
            }
            None => {
                let err = self.truncated(n as u64);
                self.data = &[];
                Err(err)
            }
        }
    }

    /// Takes `count` items of `size` bytes each, checking the product.
    #[inline]
    pub(crate) fn array(&mut self, count: u64, size: usize) -> Result<&'a [u8]> {
        match count.checked_mul(size as u64) {
            Some(total) if total <= self.data.len() as u64 => self.bytes(total as usize),
            Some(total) => {
                let err = self.truncated(total);
                self.data = &[];
                Err(err)
            }
            None => {
                let err = self.truncated(u64::MAX);
                self.data = &[];
                Err(err)
            }
        }
    }

    #[inline]
    fn fixed<const N: usize>(&mut self) -> Result<[u8; N]> {
        let bytes = self.bytes(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    #[inline]
    pub(crate) fn u1(&mut self) -> Result<u8> {
        Ok(self.fixed::<1>()?[0])
    }

    #[inline]
    pub(crate) fn u2(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.fixed()?))
    }

    #[inline]
    pub(crate) fn u4(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.fixed()?))
    }

    #[inline]
    pub(crate) fn u8(&mut self) -> Result<u64> {
        Ok(u64::from_be_bytes(self.fixed()?))
    }

    #[inline]
    pub(crate) fn id(&mut self, id_size: IdSize) -> Result<u64> {
        match id_size {
            IdSize::Four => self.u4().map(u64::from),
            IdSize::Eight => self.u8(),
        }
    }

    /// Reads a basic type code.
    pub(crate) fn basic_type(&mut self, what: &'static str) -> Result<BasicType> {
        let at = self.offset;
        let code = self.u1()?;
        BasicType::from_u8(code).ok_or_else(|| {
            self.data = &[];
            Error::new(at, ErrorKind::BadBasicType { what, code })
        })
    }

    /// Reads a value of type `ty`.
    pub(crate) fn value(&mut self, ty: BasicType, id_size: IdSize) -> Result<Value> {
        Ok(match ty {
            BasicType::Object => Value::Object(self.id(id_size)?),
            BasicType::Boolean => Value::Boolean(self.u1()?),
            BasicType::Char => Value::Char(self.u2()?),
            BasicType::Float => Value::Float(f32::from_bits(self.u4()?)),
            BasicType::Double => Value::Double(f64::from_bits(self.u8()?)),
            BasicType::Byte => Value::Byte(self.u1()? as i8),
            BasicType::Short => Value::Short(self.u2()? as i16),
            BasicType::Int => Value::Int(self.u4()? as i32),
            BasicType::Long => Value::Long(self.u8()? as i64),
        })
    }

    /// Checks that nothing is left; `declared` is the length the record claimed.
    pub(crate) fn finish(&self, start: u64, declared: u64) -> Result<()> {
        if self.data.is_empty() {
            Ok(())
        } else {
            Err(Error::new(
                start,
                ErrorKind::LengthMismatch {
                    what: self.what,
                    declared,
                    actual: declared - self.data.len() as u64,
                },
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_read_empties_the_cursor() {
        let mut c = Cursor::new(&[1, 2, 3], 10, "TEST");
        assert_eq!(c.u2().unwrap(), 0x0102);
        let err = c.u4().unwrap_err();
        assert_eq!(err.offset(), 12);
        assert!(c.is_empty());
        assert!(c.u1().is_err());
    }

    #[test]
    fn array_size_overflow_is_an_error() {
        let mut c = Cursor::new(&[0; 16], 0, "TEST");
        assert!(c.array(u64::MAX, 8).is_err());
        assert!(c.is_empty());
    }
}
