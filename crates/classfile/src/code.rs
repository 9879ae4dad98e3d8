//! Owns method bodies: the Code attribute and the decoding of its instructions (lengths,
//! branch targets, switch tables), checked against the code's bounds.

use crate::bytes::{Cursor, i16_at, i32_at, put_u16, put_u32};
use crate::class::Attribute;
use crate::error::{Error, Result};

/// An exception table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handler {
    /// First covered offset.
    pub start: u32,
    /// End of the covered range (exclusive).
    pub end: u32,
    /// Handler offset.
    pub handler: u32,
    /// Caught class (pool index), 0 for any.
    pub catch_type: u16,
}

/// A Code attribute.
#[derive(Debug, Clone)]
pub struct Code<'a> {
    /// Maximum operand stack depth.
    pub max_stack: u16,
    /// Number of local variable slots.
    pub max_locals: u16,
    /// The bytecode.
    pub code: &'a [u8],
    /// Exception table.
    pub handlers: Vec<Handler>,
    /// Attributes of the code (LineNumberTable, StackMapTable, ...).
    pub attributes: Vec<Attribute<'a>>,
}

impl<'a> Code<'a> {
    /// Reads a Code attribute body; `base` is its offset in the class file, for errors.
    pub fn parse(data: &'a [u8], base: usize) -> Result<Code<'a>> {
        let mut c = Cursor::new(data, base);
        let max_stack = c.u16("max_stack")?;
        let max_locals = c.u16("max_locals")?;
        let len = c.u32("code length")?;
        if len == 0 || len > 65535 {
            return Err(Error::new(c.offset(), format!("code length {len}")));
        }
        let code = c.bytes(len as usize, "code")?;
        let n = c.u16("exception table length")?;
        let mut handlers = Vec::with_capacity(usize::from(n));
        for _ in 0..n {
            handlers.push(Handler {
                start: u32::from(c.u16("handler start")?),
                end: u32::from(c.u16("handler end")?),
                handler: u32::from(c.u16("handler")?),
                catch_type: c.u16("catch type")?,
            });
        }
        let count = c.u16("code attribute count")?;
        let mut attributes = Vec::new();
        for _ in 0..count {
            let name = c.u16("attribute name")?;
            let alen = c.u32("attribute length")?;
            attributes.push(Attribute {
                name,
                data: std::borrow::Cow::Borrowed(c.bytes(alen as usize, "code attribute")?),
            });
        }
        if !c.is_empty() {
            return Err(Error::new(c.offset(), "bytes after the Code attribute"));
        }
        Ok(Code {
            max_stack,
            max_locals,
            code,
            handlers,
            attributes,
        })
    }
}

/// Writes a Code attribute body.
pub(crate) fn write_code(
    max_stack: u16,
    max_locals: u16,
    code: &[u8],
    handlers: &[Handler],
    attributes: &[Attribute<'_>],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(code.len() + 64);
    put_u16(&mut out, max_stack);
    put_u16(&mut out, max_locals);
    put_u32(&mut out, code.len() as u32);
    out.extend_from_slice(code);
    put_u16(&mut out, handlers.len() as u16);
    for h in handlers {
        put_u16(&mut out, h.start as u16);
        put_u16(&mut out, h.end as u16);
        put_u16(&mut out, h.handler as u16);
        put_u16(&mut out, h.catch_type);
    }
    put_u16(&mut out, attributes.len() as u16);
    for a in attributes {
        put_u16(&mut out, a.name);
        put_u32(&mut out, a.data.len() as u32);
        out.extend_from_slice(&a.data);
    }
    out
}

/// What an instruction does to control flow, as far as offsets are concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// No offsets in its operands.
    Plain,
    /// A branch with a 16-bit (`wide == false`) or 32-bit offset, and its absolute target.
    Branch {
        /// Absolute target offset.
        target: u32,
        /// `goto_w`/`jsr_w`.
        wide: bool,
    },
    /// `tableswitch` (`keys` empty, `low` set) or `lookupswitch`.
    Switch {
        /// Default target.
        default: u32,
        /// First key of a tableswitch.
        low: Option<i32>,
        /// Keys of a lookupswitch.
        keys: Vec<i32>,
        /// Targets, one per key (or per table entry).
        targets: Vec<u32>,
    },
}

/// One decoded instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Insn {
    /// Offset in the code.
    pub at: u32,
    /// Opcode (for `wide`, 0xc4).
    pub op: u8,
    /// Length in bytes, padding included.
    pub len: u32,
    /// Offsets it refers to.
    pub kind: Kind,
}

/// Opcodes the rewriter names.
pub mod op {
    #![allow(missing_docs)]
    pub const NOP: u8 = 0x00;
    pub const BIPUSH: u8 = 0x10;
    pub const SIPUSH: u8 = 0x11;
    pub const DUP: u8 = 0x59;
    pub const LDC_W: u8 = 0x13;
    pub const IFEQ: u8 = 0x99;
    pub const IF_ACMPNE: u8 = 0xa6;
    pub const GOTO: u8 = 0xa7;
    pub const JSR: u8 = 0xa8;
    pub const RET: u8 = 0xa9;
    pub const TABLESWITCH: u8 = 0xaa;
    pub const LOOKUPSWITCH: u8 = 0xab;
    pub const IRETURN: u8 = 0xac;
    pub const RETURN: u8 = 0xb1;
    pub const GETSTATIC: u8 = 0xb2;
    pub const INVOKESTATIC: u8 = 0xb8;
    pub const ATHROW: u8 = 0xbf;
    pub const WIDE: u8 = 0xc4;
    pub const IFNULL: u8 = 0xc6;
    pub const IFNONNULL: u8 = 0xc7;
    pub const GOTO_W: u8 = 0xc8;
    pub const JSR_W: u8 = 0xc9;
}

/// Length of fixed-size instructions; 0 for invalid opcodes and the variable ones.
fn fixed_len(opcode: u8) -> u32 {
    match opcode {
        0x00..=0x0f => 1,
        0x10 => 2,
        0x11 => 3,
        0x12 => 2,
        0x13 | 0x14 => 3,
        0x15..=0x19 => 2,
        0x1a..=0x35 => 1,
        0x36..=0x3a => 2,
        0x3b..=0x83 => 1,
        0x84 => 3,
        0x85..=0x98 => 1,
        0x99..=0xa8 => 3,
        0xa9 => 2,
        0xac..=0xb1 => 1,
        0xb2..=0xb8 => 3,
        0xb9 | 0xba => 5,
        0xbb => 3,
        0xbc => 2,
        0xbd => 3,
        0xbe | 0xbf => 1,
        0xc0 | 0xc1 => 3,
        0xc2 | 0xc3 => 1,
        0xc5 => 4,
        0xc6 | 0xc7 => 3,
        0xc8 | 0xc9 => 5,
        _ => 0,
    }
}

/// Padding after a switch opcode at `at` so its operands are 4-byte aligned.
pub fn switch_padding(at: u32) -> u32 {
    (4 - (at + 1) % 4) % 4
}

/// Decodes every instruction of `code`; every branch target must be an instruction start.
/// Errors carry the offset in the code.
pub fn decode(code: &[u8]) -> Result<Vec<Insn>> {
    let mut out = Vec::with_capacity(code.len() / 2);
    let mut at = 0usize;
    let need = |at: usize, n: usize| -> Result<()> {
        if at + n > code.len() {
            Err(Error::new(at, "instruction runs past the end of the code"))
        } else {
            Ok(())
        }
    };
    let target = |from: usize, delta: i64| -> Result<u32> {
        let t = from as i64 + delta;
        if t < 0 || t >= code.len() as i64 {
            Err(Error::new(
                from,
                format!("branch target {t} outside the code"),
            ))
        } else {
            Ok(t as u32)
        }
    };
    while at < code.len() {
        let opcode = code[at];
        let (len, kind) = match opcode {
            op::TABLESWITCH | op::LOOKUPSWITCH => {
                let pad = switch_padding(at as u32) as usize;
                let base = at + 1 + pad;
                need(base, 12)?;
                let default = target(at, i64::from(i32_at(code, base)))?;
                if opcode == op::TABLESWITCH {
                    let low = i32_at(code, base + 4);
                    let high = i32_at(code, base + 8);
                    if high < low {
                        return Err(Error::new(at, "tableswitch with high < low"));
                    }
                    let n = (i64::from(high) - i64::from(low) + 1) as usize;
                    need(base + 12, n.saturating_mul(4))?;
                    let mut targets = Vec::with_capacity(n);
                    for i in 0..n {
                        targets.push(target(at, i64::from(i32_at(code, base + 12 + 4 * i)))?);
                    }
                    (
                        (1 + pad + 12 + 4 * n) as u32,
                        Kind::Switch {
                            default,
                            low: Some(low),
                            keys: Vec::new(),
                            targets,
                        },
                    )
                } else {
                    let n = i32_at(code, base + 4);
                    if n < 0 {
                        return Err(Error::new(at, "lookupswitch with negative pair count"));
                    }
                    let n = n as usize;
                    need(base + 8, n.saturating_mul(8))?;
                    let mut keys = Vec::with_capacity(n);
                    let mut targets = Vec::with_capacity(n);
                    for i in 0..n {
                        keys.push(i32_at(code, base + 8 + 8 * i));
                        targets.push(target(at, i64::from(i32_at(code, base + 12 + 8 * i)))?);
                    }
                    (
                        (1 + pad + 8 + 8 * n) as u32,
                        Kind::Switch {
                            default,
                            low: None,
                            keys,
                            targets,
                        },
                    )
                }
            }
            op::WIDE => {
                need(at, 2)?;
                let len = match code[at + 1] {
                    0x84 => 6,
                    0x15..=0x19 | 0x36..=0x3a | op::RET => 4,
                    other => {
                        return Err(Error::new(at, format!("wide before opcode {other:#x}")));
                    }
                };
                need(at, len)?;
                (len as u32, Kind::Plain)
            }
            0x99..=0xa8 | op::IFNULL | op::IFNONNULL => {
                need(at, 3)?;
                let t = target(at, i64::from(i16_at(code, at + 1)))?;
                (
                    3,
                    Kind::Branch {
                        target: t,
                        wide: false,
                    },
                )
            }
            op::GOTO_W | op::JSR_W => {
                need(at, 5)?;
                let t = target(at, i64::from(i32_at(code, at + 1)))?;
                (
                    5,
                    Kind::Branch {
                        target: t,
                        wide: true,
                    },
                )
            }
            _ => {
                let len = fixed_len(opcode);
                if len == 0 {
                    return Err(Error::new(at, format!("invalid opcode {opcode:#x}")));
                }
                need(at, len as usize)?;
                (len, Kind::Plain)
            }
        };
        out.push(Insn {
            at: at as u32,
            op: opcode,
            len,
            kind,
        });
        at += len as usize;
    }
    // Every target must start an instruction.
    let mut starts = vec![false; code.len()];
    for i in &out {
        starts[i.at as usize] = true;
    }
    for i in &out {
        let ok = match &i.kind {
            Kind::Plain => true,
            Kind::Branch { target, .. } => starts[*target as usize],
            Kind::Switch {
                default, targets, ..
            } => starts[*default as usize] && targets.iter().all(|&t| starts[t as usize]),
        };
        if !ok {
            return Err(Error::new(
                i.at as usize,
                "branch into the middle of an instruction",
            ));
        }
    }
    Ok(out)
}

/// The array descriptor of `newarray`'s type operand (`10` → `[I`), `None` if it names none.
pub fn newarray_descriptor(atype: u8) -> Option<&'static [u8]> {
    Some(match atype {
        4 => b"[Z",
        5 => b"[C",
        6 => b"[F",
        7 => b"[D",
        8 => b"[B",
        9 => b"[S",
        10 => b"[I",
        11 => b"[J",
        _ => return None,
    })
}

/// Whether `opcode` returns from the method.
pub fn is_return(opcode: u8) -> bool {
    (op::IRETURN..=op::RETURN).contains(&opcode)
}

/// The opposite condition of a conditional branch (`ifeq` ↔ `ifne`, ...).
pub fn negate(opcode: u8) -> Option<u8> {
    match opcode {
        op::IFEQ..=op::IF_ACMPNE => {
            // Conditions come in pairs: eq/ne, lt/ge, gt/le, and so on.
            let rel = opcode - op::IFEQ;
            Some(op::IFEQ + (rel ^ 1))
        }
        op::IFNULL => Some(op::IFNONNULL),
        op::IFNONNULL => Some(op::IFNULL),
        _ => None,
    }
}

/// Writes instruction `insn` of the original `code` at offset `here` of new code: as it was,
/// but for its branch and switch offsets, which `rel` gives (a target's new offset less
/// `here`); with `widen` (or a wide original), a branch becomes `goto_w`/`jsr_w`, a
/// conditional one its negation over a `goto_w`. Shared by the rewriters.
pub(crate) fn emit_moved(
    out: &mut Vec<u8>,
    code: &[u8],
    insn: &Insn,
    here: u32,
    widen: bool,
    rel: impl Fn(u32) -> Result<i64>,
) -> Result<()> {
    match &insn.kind {
        Kind::Plain => {
            out.extend_from_slice(&code[insn.at as usize..(insn.at + insn.len) as usize])
        }
        Kind::Branch { target, wide } => {
            let delta = rel(*target)?;
            if *wide || widen {
                let wide_op = match insn.op {
                    op::GOTO | op::GOTO_W => op::GOTO_W,
                    op::JSR | op::JSR_W => op::JSR_W,
                    cond => {
                        let not = negate(cond)
                            .ok_or_else(|| Error::new(insn.at as usize, "bad branch"))?;
                        out.push(not);
                        put_u16(out, 8);
                        op::GOTO_W
                    }
                };
                let from = out.len() as i64;
                out.push(wide_op);
                let d = delta - (from - i64::from(here));
                out.extend_from_slice(&(d as i32).to_be_bytes());
            } else {
                out.push(insn.op);
                out.extend_from_slice(&(delta as i16).to_be_bytes());
            }
        }
        Kind::Switch {
            default,
            low,
            keys,
            targets,
        } => {
            out.push(insn.op);
            out.resize(out.len() + switch_padding(here) as usize, 0);
            out.extend_from_slice(&(rel(*default)? as i32).to_be_bytes());
            if let Some(low) = low {
                let high = low.wrapping_add(targets.len() as i32 - 1);
                out.extend_from_slice(&low.to_be_bytes());
                out.extend_from_slice(&high.to_be_bytes());
                for &t in targets {
                    out.extend_from_slice(&(rel(t)? as i32).to_be_bytes());
                }
            } else {
                out.extend_from_slice(&(keys.len() as i32).to_be_bytes());
                for (&k, &t) in keys.iter().zip(targets) {
                    out.extend_from_slice(&k.to_be_bytes());
                    out.extend_from_slice(&(rel(t)? as i32).to_be_bytes());
                }
            }
        }
    }
    Ok(())
}
