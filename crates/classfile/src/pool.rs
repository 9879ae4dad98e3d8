//! Owns the constant pool: the entries of a class file, looked up by index, and entries
//! appended by the rewriter (the original entries are written back byte for byte).

use std::borrow::Cow;
use std::collections::HashMap;

use crate::bytes::{Cursor, put_u16, put_u32};
use crate::error::{Error, Result};

/// A constant pool entry. Names and descriptors are modified UTF-8 bytes, kept as they are.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry<'a> {
    /// Index 0, and the slot after a Long or Double.
    Unusable,
    /// CONSTANT_Utf8.
    Utf8(Cow<'a, [u8]>),
    /// CONSTANT_Integer.
    Integer(i32),
    /// CONSTANT_Float (raw bits).
    Float(u32),
    /// CONSTANT_Long.
    Long(i64),
    /// CONSTANT_Double (raw bits).
    Double(u64),
    /// CONSTANT_Class: name index.
    Class(u16),
    /// CONSTANT_String: Utf8 index.
    String(u16),
    /// CONSTANT_Fieldref, Methodref or InterfaceMethodref: tag, class, name-and-type.
    Member(u8, u16, u16),
    /// CONSTANT_NameAndType: name, descriptor.
    NameAndType(u16, u16),
    /// CONSTANT_MethodHandle: kind, reference.
    MethodHandle(u8, u16),
    /// CONSTANT_MethodType: descriptor.
    MethodType(u16),
    /// CONSTANT_Dynamic or CONSTANT_InvokeDynamic: tag, bootstrap method, name-and-type.
    Dynamic(u8, u16, u16),
    /// CONSTANT_Module or CONSTANT_Package: tag, name.
    Named(u8, u16),
}

/// Constant pool tags.
pub mod tag {
    /// CONSTANT_Utf8
    pub const UTF8: u8 = 1;
    /// CONSTANT_Integer
    pub const INTEGER: u8 = 3;
    /// CONSTANT_Float
    pub const FLOAT: u8 = 4;
    /// CONSTANT_Long
    pub const LONG: u8 = 5;
    /// CONSTANT_Double
    pub const DOUBLE: u8 = 6;
    /// CONSTANT_Class
    pub const CLASS: u8 = 7;
    /// CONSTANT_String
    pub const STRING: u8 = 8;
    /// CONSTANT_Fieldref
    pub const FIELDREF: u8 = 9;
    /// CONSTANT_Methodref
    pub const METHODREF: u8 = 10;
    /// CONSTANT_InterfaceMethodref
    pub const INTERFACE_METHODREF: u8 = 11;
    /// CONSTANT_NameAndType
    pub const NAME_AND_TYPE: u8 = 12;
    /// CONSTANT_MethodHandle
    pub const METHOD_HANDLE: u8 = 15;
    /// CONSTANT_MethodType
    pub const METHOD_TYPE: u8 = 16;
    /// CONSTANT_Dynamic
    pub const DYNAMIC: u8 = 17;
    /// CONSTANT_InvokeDynamic
    pub const INVOKE_DYNAMIC: u8 = 18;
    /// CONSTANT_Module
    pub const MODULE: u8 = 19;
    /// CONSTANT_Package
    pub const PACKAGE: u8 = 20;
}

/// The constant pool of one class file.
#[derive(Debug, Clone)]
pub struct Pool<'a> {
    /// The original entries' bytes, written back unchanged.
    original: &'a [u8],
    entries: Vec<Entry<'a>>,
    /// Bytes of the entries appended since reading.
    added: Vec<u8>,
    classes: HashMap<Vec<u8>, u16>,
}

impl<'a> Pool<'a> {
    /// An empty pool, to build a class from scratch.
    pub fn empty() -> Pool<'static> {
        Pool {
            original: &[],
            entries: vec![Entry::Unusable],
            added: Vec::new(),
            classes: HashMap::new(),
        }
    }

    /// Reads `count - 1` entries from `c`.
    pub(crate) fn read(c: &mut Cursor<'a>, count: u16) -> Result<Pool<'a>> {
        let start = c.pos();
        let mut data_start = c.clone();
        let mut entries = Vec::with_capacity(usize::from(count));
        entries.push(Entry::Unusable);
        while entries.len() < usize::from(count) {
            let at = c.offset();
            let t = c.u8("constant pool tag")?;
            let entry = match t {
                tag::UTF8 => {
                    let len = c.u16("Utf8 length")?;
                    Entry::Utf8(Cow::Borrowed(c.bytes(usize::from(len), "Utf8 bytes")?))
                }
                tag::INTEGER => Entry::Integer(c.u32("Integer")? as i32),
                tag::FLOAT => Entry::Float(c.u32("Float")?),
                tag::LONG | tag::DOUBLE => {
                    let hi = u64::from(c.u32("Long")?);
                    let v = (hi << 32) | u64::from(c.u32("Long")?);
                    if entries.len() + 1 >= usize::from(count) {
                        return Err(Error::new(at, "Long or Double in the last pool slot"));
                    }
                    entries.push(if t == tag::LONG {
                        Entry::Long(v as i64)
                    } else {
                        Entry::Double(v)
                    });
                    Entry::Unusable
                }
                tag::CLASS => Entry::Class(c.u16("Class")?),
                tag::STRING => Entry::String(c.u16("String")?),
                tag::FIELDREF | tag::METHODREF | tag::INTERFACE_METHODREF => {
                    Entry::Member(t, c.u16("member class")?, c.u16("member name and type")?)
                }
                tag::NAME_AND_TYPE => Entry::NameAndType(c.u16("name")?, c.u16("descriptor")?),
                tag::METHOD_HANDLE => Entry::MethodHandle(c.u8("kind")?, c.u16("reference")?),
                tag::METHOD_TYPE => Entry::MethodType(c.u16("MethodType")?),
                tag::DYNAMIC | tag::INVOKE_DYNAMIC => {
                    Entry::Dynamic(t, c.u16("bootstrap index")?, c.u16("name and type")?)
                }
                tag::MODULE | tag::PACKAGE => Entry::Named(t, c.u16("name")?),
                other => {
                    return Err(Error::new(at, format!("unknown constant pool tag {other}")));
                }
            };
            entries.push(entry);
        }
        let len = c.pos() - start;
        let original = data_start.bytes(len, "constant pool")?;
        let mut classes = HashMap::new();
        for (i, e) in entries.iter().enumerate() {
            if let Entry::Class(name) = e
                && let Some(Entry::Utf8(bytes)) = entries.get(usize::from(*name))
            {
                classes.entry(bytes.to_vec()).or_insert(i as u16);
            }
        }
        Ok(Pool {
            original,
            entries,
            added: Vec::new(),
            classes,
        })
    }

    /// Parses a constant pool on its own: `count` (the class file's `constant_pool_count`)
    /// and the entries' bytes, as JVMTI GetConstantPool gives them.
    pub fn parse(bytes: &'a [u8], count: u16) -> Result<Pool<'a>> {
        Pool::read(&mut Cursor::new(bytes, 0), count)
    }

    /// Class, name and descriptor of every method reference (Methodref or
    /// InterfaceMethodref) of the pool.
    pub fn method_refs(&self) -> Vec<(&[u8], &[u8], &[u8])> {
        (0..self.entries.len())
            .filter(|&i| matches!(self.entries[i], Entry::Member(t, _, _) if t != tag::FIELDREF))
            .filter_map(|i| self.member(i as u16).ok())
            .collect()
    }

    /// Number of slots, as the class file's `constant_pool_count`.
    pub fn count(&self) -> usize {
        self.entries.len()
    }

    /// The entry at `index`.
    pub fn get(&self, index: u16) -> Option<&Entry<'a>> {
        self.entries.get(usize::from(index))
    }

    /// The Utf8 at `index`.
    pub fn utf8(&self, index: u16) -> Result<&[u8]> {
        match self.get(index) {
            Some(Entry::Utf8(b)) => Ok(b),
            _ => Err(Error::new(0, format!("constant {index} is not a Utf8"))),
        }
    }

    /// The name of the Class at `index`.
    pub fn class_name(&self, index: u16) -> Result<&[u8]> {
        match self.get(index) {
            Some(Entry::Class(name)) => self.utf8(*name),
            _ => Err(Error::new(0, format!("constant {index} is not a Class"))),
        }
    }

    /// Name and descriptor of the NameAndType at `index`.
    pub fn name_and_type(&self, index: u16) -> Result<(&[u8], &[u8])> {
        match self.get(index) {
            Some(Entry::NameAndType(n, d)) => Ok((self.utf8(*n)?, self.utf8(*d)?)),
            _ => Err(Error::new(
                0,
                format!("constant {index} is not a NameAndType"),
            )),
        }
    }

    /// Class, name and descriptor of the member reference at `index`.
    pub fn member(&self, index: u16) -> Result<(&[u8], &[u8], &[u8])> {
        match self.get(index) {
            Some(Entry::Member(_, class, nat)) => {
                let (n, d) = self.name_and_type(*nat)?;
                Ok((self.class_name(*class)?, n, d))
            }
            _ => Err(Error::new(
                0,
                format!("constant {index} is not a member reference"),
            )),
        }
    }

    /// Name and descriptor of the (Invoke)Dynamic at `index`.
    pub fn dynamic(&self, index: u16) -> Result<(&[u8], &[u8])> {
        match self.get(index) {
            Some(Entry::Dynamic(_, _, nat)) => self.name_and_type(*nat),
            _ => Err(Error::new(0, format!("constant {index} is not a Dynamic"))),
        }
    }

    fn push(&mut self, entry: Entry<'a>, wide: bool) -> Result<u16> {
        let slots = if wide { 2 } else { 1 };
        if self.entries.len() + slots > usize::from(u16::MAX) {
            return Err(Error::new(0, "constant pool full"));
        }
        let index = self.entries.len() as u16;
        self.entries.push(entry);
        if wide {
            self.entries.push(Entry::Unusable);
        }
        Ok(index)
    }

    /// The index of a Utf8 with `bytes`, appended if there is none. (A scan: the rewriter
    /// adds a handful per class, and a map of every Utf8 would cost more to build.)
    pub fn add_utf8(&mut self, bytes: &[u8]) -> Result<u16> {
        if let Some(i) = self
            .entries
            .iter()
            .position(|e| matches!(e, Entry::Utf8(b) if b.as_ref() == bytes))
        {
            return Ok(i as u16);
        }
        let len = u16::try_from(bytes.len()).map_err(|_| Error::new(0, "Utf8 too long"))?;
        let index = self.push(Entry::Utf8(Cow::Owned(bytes.to_vec())), false)?;
        self.added.push(tag::UTF8);
        put_u16(&mut self.added, len);
        self.added.extend_from_slice(bytes);
        Ok(index)
    }

    /// The index of a Class named `name`, appended if there is none.
    pub fn add_class(&mut self, name: &[u8]) -> Result<u16> {
        if let Some(&i) = self.classes.get(name) {
            return Ok(i);
        }
        let utf8 = self.add_utf8(name)?;
        let index = self.push(Entry::Class(utf8), false)?;
        self.added.push(tag::CLASS);
        put_u16(&mut self.added, utf8);
        self.classes.insert(name.to_vec(), index);
        Ok(index)
    }

    /// Appends a NameAndType.
    pub fn add_name_and_type(&mut self, name: &[u8], descriptor: &[u8]) -> Result<u16> {
        let n = self.add_utf8(name)?;
        let d = self.add_utf8(descriptor)?;
        let index = self.push(Entry::NameAndType(n, d), false)?;
        self.added.push(tag::NAME_AND_TYPE);
        put_u16(&mut self.added, n);
        put_u16(&mut self.added, d);
        Ok(index)
    }

    /// Appends a Methodref (or, with `field`, a Fieldref).
    pub fn add_member(
        &mut self,
        field: bool,
        class: &[u8],
        name: &[u8],
        descriptor: &[u8],
    ) -> Result<u16> {
        let c = self.add_class(class)?;
        let nat = self.add_name_and_type(name, descriptor)?;
        let t = if field { tag::FIELDREF } else { tag::METHODREF };
        let index = self.push(Entry::Member(t, c, nat), false)?;
        self.added.push(t);
        put_u16(&mut self.added, c);
        put_u16(&mut self.added, nat);
        Ok(index)
    }

    /// Appends an Integer.
    pub fn add_integer(&mut self, value: i32) -> Result<u16> {
        let index = self.push(Entry::Integer(value), false)?;
        self.added.push(tag::INTEGER);
        put_u32(&mut self.added, value as u32);
        Ok(index)
    }

    /// Writes `constant_pool_count` and the entries.
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        put_u16(out, self.entries.len() as u16);
        out.extend_from_slice(self.original);
        out.extend_from_slice(&self.added);
    }
}
