//! Owns the basic HPROF vocabulary: identifier size, version, file header, basic types, values.

use crate::cursor::Cursor;
use crate::error::{Error, ErrorKind, Result};
use std::io;

/// The size of identifiers (object ids, string ids, frame ids) in a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IdSize {
    /// 4-byte identifiers.
    Four,
    /// 8-byte identifiers.
    Eight,
}

impl IdSize {
    /// The identifier size for `n` bytes, if HPROF allows it.
    pub fn new(n: u32) -> Option<IdSize> {
        match n {
            4 => Some(IdSize::Four),
            8 => Some(IdSize::Eight),
            _ => None,
        }
    }

    /// The number of bytes in one identifier.
    #[inline]
    pub fn bytes(self) -> usize {
        match self {
            IdSize::Four => 4,
            IdSize::Eight => 8,
        }
    }
}

/// The format version named in the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Version {
    /// `JAVA PROFILE 1.0.1`: a heap dump is a single HEAP DUMP record.
    V1_0_1,
    /// `JAVA PROFILE 1.0.2`: a heap dump is HEAP DUMP SEGMENTs ended by HEAP DUMP END.
    V1_0_2,
}

impl Version {
    /// The header string, without its terminating NUL.
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V1_0_1 => "JAVA PROFILE 1.0.1",
            Version::V1_0_2 => "JAVA PROFILE 1.0.2",
        }
    }
}

/// The file header: version, identifier size and creation time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Header {
    /// The format version.
    pub version: Version,
    /// The size of identifiers in the file.
    pub id_size: IdSize,
    /// Creation time in milliseconds since the Unix epoch.
    pub timestamp_ms: u64,
}

/// The longest header string we accept before its NUL.
const MAX_MAGIC: usize = 64;

impl Header {
    /// Parses the header at the start of `data`; returns it and its length in bytes.
    pub fn parse(data: &[u8]) -> Result<(Header, usize)> {
        let window = &data[..data.len().min(MAX_MAGIC + 1)];
        let Some(nul) = window.iter().position(|&b| b == 0) else {
            if data.len() <= MAX_MAGIC && b"JAVA PROFILE ".starts_with(&data[..data.len().min(13)])
            {
                return Err(Error::new(
                    0,
                    ErrorKind::Truncated {
                        what: "file header",
                        needed: 31,
                        available: data.len() as u64,
                    },
                ));
            }
            return Err(Error::new(0, ErrorKind::BadMagic));
        };
        let magic = &data[..nul];
        let version = if magic == Version::V1_0_2.as_str().as_bytes() {
            Version::V1_0_2
        } else if magic == Version::V1_0_1.as_str().as_bytes() {
            Version::V1_0_1
        } else if magic.starts_with(b"JAVA PROFILE ") {
            return Err(Error::new(0, ErrorKind::UnsupportedVersion));
        } else {
            return Err(Error::new(0, ErrorKind::BadMagic));
        };
        let mut c = Cursor::new(&data[nul + 1..], nul as u64 + 1, "file header");
        let size_at = c.offset();
        let size = c.u4()?;
        let id_size =
            IdSize::new(size).ok_or_else(|| Error::new(size_at, ErrorKind::BadIdSize(size)))?;
        let timestamp_ms = c.u8()?;
        let header = Header {
            version,
            id_size,
            timestamp_ms,
        };
        Ok((header, nul + 1 + 12))
    }

    /// Writes the header.
    pub fn write_to(&self, w: &mut impl io::Write) -> io::Result<()> {
        w.write_all(self.version.as_str().as_bytes())?;
        w.write_all(&[0])?;
        w.write_all(&(self.id_size.bytes() as u32).to_be_bytes())?;
        w.write_all(&self.timestamp_ms.to_be_bytes())
    }
}

/// The type of a field, array element or constant pool entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum BasicType {
    /// An object reference (an identifier).
    Object = 2,
    /// `boolean`, 1 byte.
    Boolean = 4,
    /// `char`, 2 bytes.
    Char = 5,
    /// `float`, 4 bytes.
    Float = 6,
    /// `double`, 8 bytes.
    Double = 7,
    /// `byte`, 1 byte.
    Byte = 8,
    /// `short`, 2 bytes.
    Short = 9,
    /// `int`, 4 bytes.
    Int = 10,
    /// `long`, 8 bytes.
    Long = 11,
}

impl BasicType {
    /// Every basic type, in code order.
    pub const ALL: [BasicType; 9] = [
        BasicType::Object,
        BasicType::Boolean,
        BasicType::Char,
        BasicType::Float,
        BasicType::Double,
        BasicType::Byte,
        BasicType::Short,
        BasicType::Int,
        BasicType::Long,
    ];

    /// The basic type with HPROF code `code`.
    #[inline]
    pub fn from_u8(code: u8) -> Option<BasicType> {
        Some(match code {
            2 => BasicType::Object,
            4 => BasicType::Boolean,
            5 => BasicType::Char,
            6 => BasicType::Float,
            7 => BasicType::Double,
            8 => BasicType::Byte,
            9 => BasicType::Short,
            10 => BasicType::Int,
            11 => BasicType::Long,
            _ => return None,
        })
    }

    /// The size in bytes of one value of this type in an HPROF file.
    #[inline]
    pub fn size(self, id_size: IdSize) -> usize {
        match self {
            BasicType::Object => id_size.bytes(),
            BasicType::Boolean | BasicType::Byte => 1,
            BasicType::Char | BasicType::Short => 2,
            BasicType::Float | BasicType::Int => 4,
            BasicType::Double | BasicType::Long => 8,
        }
    }

    /// The Java name of the type: `int`, `boolean`, …, and `object` for references.
    pub fn java_name(self) -> &'static str {
        match self {
            BasicType::Object => "object",
            BasicType::Boolean => "boolean",
            BasicType::Char => "char",
            BasicType::Float => "float",
            BasicType::Double => "double",
            BasicType::Byte => "byte",
            BasicType::Short => "short",
            BasicType::Int => "int",
            BasicType::Long => "long",
        }
    }

    /// The JVM descriptor character: `I`, `Z`, …, `L` for references.
    pub fn descriptor(self) -> char {
        match self {
            BasicType::Object => 'L',
            BasicType::Boolean => 'Z',
            BasicType::Char => 'C',
            BasicType::Float => 'F',
            BasicType::Double => 'D',
            BasicType::Byte => 'B',
            BasicType::Short => 'S',
            BasicType::Int => 'I',
            BasicType::Long => 'J',
        }
    }
}

/// A typed value: a static field, a constant pool entry, or a decoded instance field.
///
/// Floating-point values keep their exact bits, and a boolean keeps its raw
/// byte, so a value read and written again is byte-identical.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// An object reference (0 is null).
    Object(u64),
    /// A boolean's raw byte (0 is false).
    Boolean(u8),
    /// A `char`.
    Char(u16),
    /// A `float`.
    Float(f32),
    /// A `double`.
    Double(f64),
    /// A `byte`.
    Byte(i8),
    /// A `short`.
    Short(i16),
    /// An `int`.
    Int(i32),
    /// A `long`.
    Long(i64),
}

impl Value {
    /// The basic type of this value.
    pub fn basic_type(&self) -> BasicType {
        match self {
            Value::Object(_) => BasicType::Object,
            Value::Boolean(_) => BasicType::Boolean,
            Value::Char(_) => BasicType::Char,
            Value::Float(_) => BasicType::Float,
            Value::Double(_) => BasicType::Double,
            Value::Byte(_) => BasicType::Byte,
            Value::Short(_) => BasicType::Short,
            Value::Int(_) => BasicType::Int,
            Value::Long(_) => BasicType::Long,
        }
    }

    /// Reads a value of type `ty` from the front of `bytes`, as stored in an INSTANCE DUMP.
    ///
    /// Returns the value and the rest of the bytes, or `None` if too few bytes remain.
    pub fn read(ty: BasicType, id_size: IdSize, bytes: &[u8]) -> Option<(Value, &[u8])> {
        let mut c = Cursor::new(bytes, 0, "value");
        let v = c.value(ty, id_size).ok()?;
        Some((v, c.rest()))
    }

    /// Appends the value's bytes, big-endian, with identifiers of `id_size`.
    pub(crate) fn encode(&self, id_size: IdSize, out: &mut Vec<u8>) -> io::Result<()> {
        match *self {
            Value::Object(id) => crate::writer::push_id(out, id, id_size)?,
            Value::Boolean(b) => out.push(b),
            Value::Char(c) => out.extend_from_slice(&c.to_be_bytes()),
            Value::Float(f) => out.extend_from_slice(&f.to_bits().to_be_bytes()),
            Value::Double(d) => out.extend_from_slice(&d.to_bits().to_be_bytes()),
            Value::Byte(b) => out.push(b as u8),
            Value::Short(s) => out.extend_from_slice(&s.to_be_bytes()),
            Value::Int(i) => out.extend_from_slice(&i.to_be_bytes()),
            Value::Long(l) => out.extend_from_slice(&l.to_be_bytes()),
        }
        Ok(())
    }
}

impl Value {
    fn bits(&self) -> (u8, u64) {
        let v = match *self {
            Value::Object(id) => id,
            Value::Boolean(b) => b.into(),
            Value::Char(c) => c.into(),
            Value::Float(f) => f.to_bits().into(),
            Value::Double(d) => d.to_bits(),
            Value::Byte(b) => b as u8 as u64,
            Value::Short(s) => s as u16 as u64,
            Value::Int(i) => i as u32 as u64,
            Value::Long(l) => l as u64,
        };
        (self.basic_type() as u8, v)
    }

    /// True if both values have the same type and the same bits.
    pub fn same_bits(&self, other: &Value) -> bool {
        self.bits() == other.bits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let h = Header {
            version: Version::V1_0_2,
            id_size: IdSize::Eight,
            timestamp_ms: 0x0102_0304_0506,
        };
        let mut buf = Vec::new();
        h.write_to(&mut buf).unwrap();
        assert_eq!(buf.len(), 31);
        assert_eq!(Header::parse(&buf).unwrap(), (h, 31));
    }

    #[test]
    fn header_errors() {
        assert_eq!(
            Header::parse(b"PK\x03\x04").unwrap_err().kind(),
            &ErrorKind::BadMagic
        );
        assert_eq!(
            Header::parse(b"JAVA PROFILE 9.9\0\0\0\0\x04")
                .unwrap_err()
                .kind(),
            &ErrorKind::UnsupportedVersion
        );
        let mut buf = b"JAVA PROFILE 1.0.1\0".to_vec();
        buf.extend_from_slice(&5u32.to_be_bytes());
        buf.extend_from_slice(&[0; 8]);
        let err = Header::parse(&buf).unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::BadIdSize(5));
        assert_eq!(err.offset(), 19);
        assert!(matches!(
            Header::parse(b"JAVA PRO").unwrap_err().kind(),
            ErrorKind::Truncated { .. }
        ));
    }
}
