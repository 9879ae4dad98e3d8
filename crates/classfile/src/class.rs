//! Owns the class file structure: header, pool, members and attributes, read strictly and
//! written back with rewritten method bodies.

use crate::bytes::{Cursor, put_u16, put_u32};
use crate::error::{Error, Result};
use crate::pool::Pool;

/// `ACC_STATIC`.
pub const ACC_STATIC: u16 = 0x0008;
/// `ACC_NATIVE`.
pub const ACC_NATIVE: u16 = 0x0100;
/// `ACC_INTERFACE`.
pub const ACC_INTERFACE: u16 = 0x0200;
/// `ACC_ABSTRACT`.
pub const ACC_ABSTRACT: u16 = 0x0400;
/// `ACC_MODULE`.
pub const ACC_MODULE: u16 = 0x8000;

/// An attribute: name index and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute<'a> {
    /// Index of its name in the pool.
    pub name: u16,
    /// Body, without the name and length.
    pub data: std::borrow::Cow<'a, [u8]>,
}

/// A field or method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member<'a> {
    /// Access flags.
    pub access: u16,
    /// Name index.
    pub name: u16,
    /// Descriptor index.
    pub descriptor: u16,
    /// Attributes.
    pub attributes: Vec<Attribute<'a>>,
}

/// A parsed class file.
#[derive(Debug, Clone)]
pub struct ClassFile<'a> {
    /// Minor version.
    pub minor: u16,
    /// Major version (52 = Java 8, 55 = Java 11).
    pub major: u16,
    /// The constant pool.
    pub pool: Pool<'a>,
    /// Access flags.
    pub access: u16,
    /// This class (pool index).
    pub this_class: u16,
    /// Superclass (pool index, 0 for java.lang.Object).
    pub super_class: u16,
    /// Interfaces (pool indices).
    pub interfaces: Vec<u16>,
    /// Fields.
    pub fields: Vec<Member<'a>>,
    /// Methods.
    pub methods: Vec<Member<'a>>,
    /// Class attributes.
    pub attributes: Vec<Attribute<'a>>,
}

fn read_attributes<'a>(c: &mut Cursor<'a>) -> Result<Vec<Attribute<'a>>> {
    let n = c.u16("attribute count")?;
    let mut out = Vec::with_capacity(usize::from(n).min(64));
    for _ in 0..n {
        let name = c.u16("attribute name")?;
        let len = c.u32("attribute length")?;
        let data = c.bytes(len as usize, "attribute")?;
        out.push(Attribute {
            name,
            data: std::borrow::Cow::Borrowed(data),
        });
    }
    Ok(out)
}

fn read_members<'a>(c: &mut Cursor<'a>) -> Result<Vec<Member<'a>>> {
    let n = c.u16("member count")?;
    let mut out = Vec::with_capacity(usize::from(n).min(1024));
    for _ in 0..n {
        out.push(Member {
            access: c.u16("access flags")?,
            name: c.u16("member name")?,
            descriptor: c.u16("member descriptor")?,
            attributes: read_attributes(c)?,
        });
    }
    Ok(out)
}

fn write_attributes(out: &mut Vec<u8>, attributes: &[Attribute<'_>]) -> Result<()> {
    put_u16(out, attributes.len() as u16);
    for a in attributes {
        put_u16(out, a.name);
        let len = u32::try_from(a.data.len()).map_err(|_| Error::new(0, "attribute too long"))?;
        put_u32(out, len);
        out.extend_from_slice(&a.data);
    }
    Ok(())
}

fn write_members(out: &mut Vec<u8>, members: &[Member<'_>]) -> Result<()> {
    put_u16(out, members.len() as u16);
    for m in members {
        put_u16(out, m.access);
        put_u16(out, m.name);
        put_u16(out, m.descriptor);
        write_attributes(out, &m.attributes)?;
    }
    Ok(())
}

impl<'a> ClassFile<'a> {
    /// Reads a class file; every length is checked, and trailing bytes are an error.
    pub fn parse(data: &'a [u8]) -> Result<ClassFile<'a>> {
        let mut c = Cursor::new(data, 0);
        if c.u32("magic")? != 0xCAFE_BABE {
            return Err(Error::new(0, "not a class file (bad magic)"));
        }
        let minor = c.u16("minor version")?;
        let major = c.u16("major version")?;
        if !(45..=80).contains(&major) {
            return Err(Error::new(
                6,
                format!("unsupported class file version {major}"),
            ));
        }
        let count = c.u16("constant pool count")?;
        if count == 0 {
            return Err(Error::new(8, "constant pool count 0"));
        }
        let pool = Pool::read(&mut c, count)?;
        let access = c.u16("access flags")?;
        let this_class = c.u16("this class")?;
        let super_class = c.u16("super class")?;
        let n = c.u16("interface count")?;
        let mut interfaces = Vec::with_capacity(usize::from(n));
        for _ in 0..n {
            interfaces.push(c.u16("interface")?);
        }
        let fields = read_members(&mut c)?;
        let methods = read_members(&mut c)?;
        let attributes = read_attributes(&mut c)?;
        if !c.is_empty() {
            return Err(Error::new(c.offset(), "bytes after the end of the class"));
        }
        pool.class_name(this_class)
            .map_err(|e| Error::new(c.offset(), format!("this_class: {}", e.what)))?;
        Ok(ClassFile {
            minor,
            major,
            pool,
            access,
            this_class,
            super_class,
            interfaces,
            fields,
            methods,
            attributes,
        })
    }

    /// The class's internal name (`java/lang/String`).
    pub fn name(&self) -> &[u8] {
        self.pool.class_name(self.this_class).unwrap_or(b"")
    }

    /// The attribute of `member` named `name`, if any.
    pub fn attribute<'m>(
        &self,
        attributes: &'m [Attribute<'a>],
        name: &str,
    ) -> Option<&'m Attribute<'a>> {
        attributes
            .iter()
            .find(|a| self.pool.utf8(a.name).is_ok_and(|n| n == name.as_bytes()))
    }

    /// Writes the class file.
    pub fn write(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        put_u32(&mut out, 0xCAFE_BABE);
        put_u16(&mut out, self.minor);
        put_u16(&mut out, self.major);
        self.pool.write(&mut out);
        put_u16(&mut out, self.access);
        put_u16(&mut out, self.this_class);
        put_u16(&mut out, self.super_class);
        put_u16(&mut out, self.interfaces.len() as u16);
        for &i in &self.interfaces {
            put_u16(&mut out, i);
        }
        write_members(&mut out, &self.fields)?;
        write_members(&mut out, &self.methods)?;
        write_attributes(&mut out, &self.attributes)?;
        Ok(out)
    }
}
