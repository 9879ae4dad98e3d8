//! Owns decoded values: [`Value`], JFR's string encoding, and skipping a value of any type.

use std::borrow::Cow;

use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::metadata::{FieldType, Metadata};

/// A decoded value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// A null string.
    Null,
    /// `boolean`.
    Bool(bool),
    /// `byte`, `short`, `char`, `int` or `long`.
    Int(i64),
    /// `float` or `double`.
    Float(f64),
    /// A string (a constant-pool string already looked up).
    Str(Cow<'a, str>),
    /// A key into the constant pool of the class at index `class`.
    Ref {
        /// The class's index in the metadata.
        class: u32,
        /// The constant's key.
        key: i64,
    },
    /// The fields of an object of the class at index `.0`, written in place.
    Object(u32, Vec<Value<'a>>),
    /// An array.
    Array(Vec<Value<'a>>),
}

impl<'a> Value<'a> {
    /// The integer, if it is one.
    pub fn as_int(&self) -> Option<i64> {
        match *self {
            Value::Int(v) => Some(v),
            Value::Bool(b) => Some(i64::from(b)),
            _ => None,
        }
    }

    /// The string, if it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The constant-pool key, if it is a reference.
    pub fn as_key(&self) -> Option<i64> {
        match *self {
            Value::Ref { key, .. } => Some(key),
            _ => None,
        }
    }
}

/// A string as written: its tag, then its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RawString<'a> {
    Null,
    Utf8(&'a [u8]),
    Latin1(&'a [u8]),
    Chars(String),
    Pool(i64),
}

impl<'a> RawString<'a> {
    pub(crate) fn read(c: &mut Cursor<'a>) -> Result<RawString<'a>> {
        let at = c.offset();
        match c.u8("string encoding")? {
            0 => Ok(RawString::Null),
            1 => Ok(RawString::Utf8(&[])),
            2 => Ok(RawString::Pool(c.long("string constant key")?)),
            3 => {
                let n = c.count(1, "UTF-8 string")?;
                Ok(RawString::Utf8(c.bytes(n, "UTF-8 string")?))
            }
            4 => {
                let n = c.count(1, "char array string")?;
                let mut units = Vec::with_capacity(n);
                for _ in 0..n {
                    units.push(c.short("char array string")?);
                }
                Ok(RawString::Chars(String::from_utf16_lossy(&units)))
            }
            5 => {
                let n = c.count(1, "Latin-1 string")?;
                Ok(RawString::Latin1(c.bytes(n, "Latin-1 string")?))
            }
            other => Err(Error::malformed(
                at,
                format!("unknown string encoding {other}"),
            )),
        }
    }

    /// The text, unless it is null or a constant-pool reference.
    pub(crate) fn text(self) -> Option<Cow<'a, str>> {
        match self {
            RawString::Null | RawString::Pool(_) => None,
            RawString::Utf8(b) => Some(String::from_utf8_lossy(b)),
            RawString::Latin1(b) => Some(if b.is_ascii() {
                // ASCII is UTF-8 as it is.
                String::from_utf8_lossy(b)
            } else {
                Cow::Owned(b.iter().map(|&b| char::from(b)).collect())
            }),
            RawString::Chars(s) => Some(Cow::Owned(s)),
        }
    }
}

/// A string of the metadata's string table (no constant pool there).
pub(crate) fn read_string_raw(c: &mut Cursor<'_>) -> Result<Option<String>> {
    let at = c.offset();
    match RawString::read(c)? {
        RawString::Pool(_) => Err(Error::malformed(
            at,
            "a constant-pool string in the metadata",
        )),
        s => Ok(s.text().map(Cow::into_owned)),
    }
}

/// Deepest nesting of in-place objects accepted (a type holding itself in place would
/// otherwise never end).
pub(crate) const MAX_NESTING: usize = 16;

/// Skips one value of `ty` (an array of them with `array`).
pub(crate) fn skip(
    c: &mut Cursor<'_>,
    meta: &Metadata,
    ty: FieldType,
    array: bool,
    depth: usize,
) -> Result<()> {
    if array {
        let n = c.count(1, "array")?;
        for _ in 0..n {
            skip(c, meta, ty, false, depth)?;
        }
        return Ok(());
    }
    match ty {
        FieldType::Boolean | FieldType::Byte => c.skip(1, "byte"),
        FieldType::Float => c.skip(4, "float"),
        FieldType::Double => c.skip(8, "double"),
        FieldType::Char | FieldType::Short => c.short("short").map(|_| ()),
        FieldType::Int => c.int("int").map(|_| ()),
        FieldType::Long | FieldType::Ref(_) => c.long("long").map(|_| ()),
        FieldType::String => RawString::read(c).map(|_| ()),
        FieldType::Inline(class) => {
            if depth >= MAX_NESTING {
                return Err(Error::malformed(c.offset(), "objects nested too deep"));
            }
            for field in &meta.class(class).fields {
                skip(c, meta, field.ty, field.array, depth + 1)?;
            }
            Ok(())
        }
    }
}
