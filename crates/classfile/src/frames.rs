//! Owns verification types and the StackMapTable: decoding its compressed frames into
//! absolute ones, and encoding frames back (every frame as a `full_frame`).

use std::rc::Rc;

use crate::bytes::{Cursor, put_u16};
use crate::error::{Error, Result};
use crate::pool::Pool;

/// A verification type. Categories two (Long, Double) take two slots wherever slots are
/// listed "expanded": the type, then [`VType::Top`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VType {
    /// Unusable.
    Top,
    /// int, short, char, byte, boolean.
    Int,
    /// float.
    Float,
    /// long.
    Long,
    /// double.
    Double,
    /// The null reference.
    Null,
    /// `this` in a constructor before the super or this constructor call.
    UninitThis,
    /// A class or array type, by internal name (`java/lang/String`, `[I`).
    Object(Rc<[u8]>),
    /// An object made by the `new` at this code offset, not yet constructed.
    Uninit(u32),
}

impl VType {
    /// Whether it takes two slots.
    pub fn wide(&self) -> bool {
        matches!(self, VType::Long | VType::Double)
    }

    /// An object type named `name`.
    pub fn object(name: &[u8]) -> VType {
        VType::Object(Rc::from(name))
    }
}

/// A frame at an absolute code offset, with expanded locals and stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Code offset.
    pub at: u32,
    /// Locals, expanded.
    pub locals: Vec<VType>,
    /// Operand stack, bottom first, expanded.
    pub stack: Vec<VType>,
}

/// Expands a compressed list (Long, Double take one entry) into slots.
pub fn expand(list: &[VType]) -> Vec<VType> {
    let mut out = Vec::with_capacity(list.len() + 2);
    for t in list {
        out.push(t.clone());
        if t.wide() {
            out.push(VType::Top);
        }
    }
    out
}

/// Compresses slots into a list: the Top after a Long or Double is dropped.
pub fn compress(slots: &[VType]) -> Vec<VType> {
    let mut out = Vec::with_capacity(slots.len());
    let mut i = 0;
    while i < slots.len() {
        out.push(slots[i].clone());
        i += if slots[i].wide() { 2 } else { 1 };
    }
    out
}

/// The types of a method descriptor's parameters, as a compressed list.
pub fn parameter_types(descriptor: &[u8]) -> Result<Vec<VType>> {
    let mut out = Vec::new();
    let mut i = 1;
    if descriptor.first() != Some(&b'(') {
        return Err(Error::new(0, "method descriptor without '('"));
    }
    while i < descriptor.len() && descriptor[i] != b')' {
        let (t, next) = field_type(descriptor, i)?;
        out.push(t);
        i = next;
    }
    Ok(out)
}

/// The type of the field descriptor starting at `i`, and the index after it; `None`-like
/// `V` is an error here.
pub fn field_type(d: &[u8], i: usize) -> Result<(VType, usize)> {
    let bad = || Error::new(0, format!("bad descriptor {}", String::from_utf8_lossy(d)));
    match d.get(i).ok_or_else(bad)? {
        b'B' | b'C' | b'I' | b'S' | b'Z' => Ok((VType::Int, i + 1)),
        b'F' => Ok((VType::Float, i + 1)),
        b'J' => Ok((VType::Long, i + 1)),
        b'D' => Ok((VType::Double, i + 1)),
        b'L' => {
            let end = d[i..].iter().position(|&b| b == b';').ok_or_else(bad)? + i;
            Ok((VType::object(&d[i + 1..end]), end + 1))
        }
        b'[' => {
            let mut j = i;
            while d.get(j) == Some(&b'[') {
                j += 1;
            }
            let (_, end) = field_type(d, j)?;
            Ok((VType::object(&d[i..end]), end))
        }
        _ => Err(bad()),
    }
}

/// The return type of a method descriptor, `None` for `V`.
pub fn return_type(descriptor: &[u8]) -> Result<Option<VType>> {
    let close = descriptor
        .iter()
        .position(|&b| b == b')')
        .ok_or_else(|| Error::new(0, "method descriptor without ')'"))?;
    if descriptor.get(close + 1) == Some(&b'V') {
        return Ok(None);
    }
    Ok(Some(field_type(descriptor, close + 1)?.0))
}

fn read_vtype(c: &mut Cursor<'_>, pool: &Pool<'_>) -> Result<VType> {
    let at = c.offset();
    Ok(match c.u8("verification type")? {
        0 => VType::Top,
        1 => VType::Int,
        2 => VType::Float,
        3 => VType::Double,
        4 => VType::Long,
        5 => VType::Null,
        6 => VType::UninitThis,
        7 => {
            let index = c.u16("class index")?;
            let name = pool.class_name(index).map_err(|e| Error::new(at, e.what))?;
            VType::object(name)
        }
        8 => VType::Uninit(u32::from(c.u16("new offset")?)),
        other => return Err(Error::new(at, format!("bad verification type {other}"))),
    })
}

/// Decodes a StackMapTable body, given the method's initial locals (compressed).
pub fn decode(data: &[u8], pool: &Pool<'_>, initial: &[VType]) -> Result<Vec<Frame>> {
    let mut c = Cursor::new(data, 0);
    let n = c.u16("frame count")?;
    let mut frames = Vec::with_capacity(usize::from(n));
    let mut locals: Vec<VType> = initial.to_vec();
    let mut at: i64 = -1;
    for _ in 0..n {
        let kind = c.u8("frame type")?;
        let (delta, stack) = match kind {
            0..=63 => (u16::from(kind), Vec::new()),
            64..=127 => (u16::from(kind - 64), vec![read_vtype(&mut c, pool)?]),
            247 => {
                let d = c.u16("offset delta")?;
                (d, vec![read_vtype(&mut c, pool)?])
            }
            248..=250 => {
                let d = c.u16("offset delta")?;
                let k = usize::from(251 - kind);
                if k > locals.len() {
                    return Err(Error::new(c.offset(), "chop_frame removes too many locals"));
                }
                locals.truncate(locals.len() - k);
                (d, Vec::new())
            }
            251 => (c.u16("offset delta")?, Vec::new()),
            252..=254 => {
                let d = c.u16("offset delta")?;
                for _ in 0..(kind - 251) {
                    locals.push(read_vtype(&mut c, pool)?);
                }
                (d, Vec::new())
            }
            255 => {
                let d = c.u16("offset delta")?;
                let nl = c.u16("locals count")?;
                locals.clear();
                for _ in 0..nl {
                    locals.push(read_vtype(&mut c, pool)?);
                }
                let ns = c.u16("stack count")?;
                let mut stack = Vec::new();
                for _ in 0..ns {
                    stack.push(read_vtype(&mut c, pool)?);
                }
                (d, stack)
            }
            other => {
                return Err(Error::new(
                    c.offset(),
                    format!("reserved frame type {other}"),
                ));
            }
        };
        at = if at < 0 {
            i64::from(delta)
        } else {
            at + i64::from(delta) + 1
        };
        frames.push(Frame {
            at: at as u32,
            locals: expand(&locals),
            stack: expand(&stack),
        });
    }
    if !c.is_empty() {
        return Err(Error::new(c.offset(), "bytes after the last frame"));
    }
    Ok(frames)
}

fn write_vtype(out: &mut Vec<u8>, t: &VType, pool: &mut Pool<'_>) -> Result<()> {
    match t {
        VType::Top => out.push(0),
        VType::Int => out.push(1),
        VType::Float => out.push(2),
        VType::Double => out.push(3),
        VType::Long => out.push(4),
        VType::Null => out.push(5),
        VType::UninitThis => out.push(6),
        VType::Object(name) => {
            out.push(7);
            let index = pool.add_class(name)?;
            put_u16(out, index);
        }
        VType::Uninit(at) => {
            out.push(8);
            put_u16(out, *at as u16);
        }
    }
    Ok(())
}

/// Encodes frames (sorted by offset, distinct) as a StackMapTable body of full frames.
pub fn encode(frames: &[Frame], pool: &mut Pool<'_>) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    put_u16(&mut out, frames.len() as u16);
    let mut prev: i64 = -1;
    for f in frames {
        let delta = if prev < 0 {
            i64::from(f.at)
        } else {
            i64::from(f.at) - prev - 1
        };
        if !(0..=65535).contains(&delta) {
            return Err(Error::new(f.at as usize, "frames out of order"));
        }
        prev = i64::from(f.at);
        out.push(255);
        put_u16(&mut out, delta as u16);
        let mut locals = compress(&f.locals);
        while locals.last() == Some(&VType::Top) {
            locals.pop();
        }
        put_u16(&mut out, locals.len() as u16);
        for t in &locals {
            write_vtype(&mut out, t, pool)?;
        }
        let stack = compress(&f.stack);
        put_u16(&mut out, stack.len() as u16);
        for t in &stack {
            write_vtype(&mut out, t, pool)?;
        }
    }
    Ok(out)
}
