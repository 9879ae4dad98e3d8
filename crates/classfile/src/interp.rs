//! Owns the type interpreter: the verification types of locals and stack after each
//! instruction, computed forward from a known frame through straight-line code. The
//! rewriter uses it for frames at offsets that had none (widened branches) and to find where
//! a constructor's `this` becomes initialised.

use std::rc::Rc;

use crate::bytes::u16_at;
use crate::code::{Insn, op};
use crate::error::{Error, Result};
use crate::frames::{VType, field_type, parameter_types, return_type};
use crate::pool::{Entry, Pool};

/// Types before an instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    /// Locals, expanded, `max_locals` long.
    pub locals: Vec<VType>,
    /// Stack, expanded.
    pub stack: Vec<VType>,
    /// `flagThisUninit`: `this` is not yet initialised.
    pub this_uninit: bool,
}

/// Whether control can fall through to the next instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// It can.
    Next,
    /// It cannot (goto, return, athrow, switch).
    Stop,
}

/// The interpreter for one method.
pub struct Interp<'p, 'a> {
    pool: &'p Pool<'a>,
    this_class: Rc<[u8]>,
    code: &'p [u8],
}

fn err(insn: &Insn, what: &str) -> Error {
    Error::new(insn.at as usize, format!("{what} (opcode {:#x})", insn.op))
}

impl<'p, 'a> Interp<'p, 'a> {
    /// An interpreter for `code` of a method of class `this_class`.
    pub fn new(pool: &'p Pool<'a>, this_class: &[u8], code: &'p [u8]) -> Interp<'p, 'a> {
        Interp {
            pool,
            this_class: Rc::from(this_class),
            code,
        }
    }

    /// The state at a method's entry.
    pub fn initial(
        &self,
        is_static: bool,
        name: &[u8],
        descriptor: &[u8],
        max_locals: u16,
    ) -> Result<(Vec<VType>, State)> {
        let mut list = Vec::new();
        let mut this_uninit = false;
        if !is_static {
            if name == b"<init>" && &*self.this_class != b"java/lang/Object" {
                list.push(VType::UninitThis);
                this_uninit = true;
            } else {
                list.push(VType::Object(self.this_class.clone()));
            }
        }
        list.extend(parameter_types(descriptor)?);
        let mut locals = crate::frames::expand(&list);
        locals.resize(usize::from(max_locals).max(locals.len()), VType::Top);
        Ok((
            list,
            State {
                locals,
                stack: Vec::new(),
                this_uninit,
            },
        ))
    }

    fn pop(&self, st: &mut State, n: usize, insn: &Insn) -> Result<()> {
        if st.stack.len() < n {
            return Err(err(insn, "operand stack underflow"));
        }
        st.stack.truncate(st.stack.len() - n);
        Ok(())
    }

    fn push(st: &mut State, t: VType) {
        let wide = t.wide();
        st.stack.push(t);
        if wide {
            st.stack.push(VType::Top);
        }
    }

    fn slots(t: &VType) -> usize {
        if t.wide() { 2 } else { 1 }
    }

    fn load(&self, st: &mut State, index: usize, insn: &Insn) -> Result<()> {
        let t = st
            .locals
            .get(index)
            .cloned()
            .ok_or_else(|| err(insn, "local index out of range"))?;
        Self::push(st, t);
        Ok(())
    }

    fn store(&self, st: &mut State, index: usize, t: VType, insn: &Insn) -> Result<()> {
        let n = Self::slots(&t);
        self.pop(st, n, insn)?;
        if index + n > st.locals.len() {
            return Err(err(insn, "local index out of range"));
        }
        // A store into the second half of a long or double kills it.
        if index > 0 && st.locals[index - 1].wide() {
            st.locals[index - 1] = VType::Top;
        }
        st.locals[index] = t;
        if n == 2 {
            st.locals[index + 1] = VType::Top;
        }
        Ok(())
    }

    fn store_ref(&self, st: &mut State, index: usize, insn: &Insn) -> Result<()> {
        let t = st
            .stack
            .last()
            .cloned()
            .ok_or_else(|| err(insn, "operand stack underflow"))?;
        self.store(st, index, t, insn)
    }

    fn u16_operand(&self, insn: &Insn) -> u16 {
        u16_at(self.code, insn.at as usize + 1)
    }

    fn class_operand(&self, insn: &Insn) -> Result<Rc<[u8]>> {
        let index = self.u16_operand(insn);
        self.pool
            .class_name(index)
            .map(Rc::from)
            .map_err(|e| err(insn, &e.what))
    }

    fn ldc_type(&self, index: u16, insn: &Insn) -> Result<VType> {
        Ok(match self.pool.get(index) {
            Some(Entry::Integer(_)) => VType::Int,
            Some(Entry::Float(_)) => VType::Float,
            Some(Entry::Long(_)) => VType::Long,
            Some(Entry::Double(_)) => VType::Double,
            Some(Entry::String(_)) => VType::object(b"java/lang/String"),
            Some(Entry::Class(_)) => VType::object(b"java/lang/Class"),
            Some(Entry::MethodType(_)) => VType::object(b"java/lang/invoke/MethodType"),
            Some(Entry::MethodHandle(..)) => VType::object(b"java/lang/invoke/MethodHandle"),
            Some(Entry::Dynamic(..)) => {
                let (_, d) = self.pool.dynamic(index).map_err(|e| err(insn, &e.what))?;
                field_type(d, 0).map_err(|e| err(insn, &e.what))?.0
            }
            _ => return Err(err(insn, "ldc of an unloadable constant")),
        })
    }

    /// Replaces every occurrence of the uninitialised `from` with `to`.
    fn initialise(st: &mut State, from: &VType, to: VType) {
        for t in st.locals.iter_mut().chain(st.stack.iter_mut()) {
            if t == from {
                *t = to.clone();
            }
        }
    }

    fn invoke(&self, st: &mut State, insn: &Insn) -> Result<()> {
        let index = self.u16_operand(insn);
        let (name, descriptor) = if insn.op == 0xba {
            self.pool.dynamic(index).map_err(|e| err(insn, &e.what))?
        } else {
            let (_, n, d) = self.pool.member(index).map_err(|e| err(insn, &e.what))?;
            (n, d)
        };
        let params = parameter_types(descriptor).map_err(|e| err(insn, &e.what))?;
        let arg_slots: usize = params.iter().map(Self::slots).sum();
        self.pop(st, arg_slots, insn)?;
        if insn.op != op::INVOKESTATIC && insn.op != 0xba {
            let receiver = st
                .stack
                .pop()
                .ok_or_else(|| err(insn, "operand stack underflow"))?;
            if insn.op == 0xb7 && name == b"<init>" {
                match receiver {
                    VType::UninitThis => {
                        Self::initialise(
                            st,
                            &VType::UninitThis,
                            VType::Object(self.this_class.clone()),
                        );
                        st.this_uninit = false;
                    }
                    VType::Uninit(at) => {
                        let new_at = at as usize;
                        if new_at + 3 > self.code.len() || self.code[new_at] != 0xbb {
                            return Err(err(insn, "uninitialised object without its new"));
                        }
                        let class = self
                            .pool
                            .class_name(u16_at(self.code, new_at + 1))
                            .map_err(|e| err(insn, &e.what))?;
                        Self::initialise(st, &VType::Uninit(at), VType::object(class));
                    }
                    _ => {}
                }
            }
        }
        if let Some(t) = return_type(descriptor).map_err(|e| err(insn, &e.what))? {
            Self::push(st, t);
        }
        Ok(())
    }

    /// Applies `insn` to `st`.
    pub fn step(&self, st: &mut State, insn: &Insn) -> Result<Flow> {
        use VType::*;
        let code = self.code;
        let at = insn.at as usize;
        let o = insn.op;
        match o {
            0x00 => {}
            0x01 => Self::push(st, Null),
            0x02..=0x08 | 0x10 | 0x11 => Self::push(st, Int),
            0x09 | 0x0a => Self::push(st, Long),
            0x0b..=0x0d => Self::push(st, Float),
            0x0e | 0x0f => Self::push(st, Double),
            0x12 => {
                let t = self.ldc_type(u16::from(code[at + 1]), insn)?;
                Self::push(st, t);
            }
            0x13 | 0x14 => {
                let t = self.ldc_type(self.u16_operand(insn), insn)?;
                Self::push(st, t);
            }
            0x15..=0x19 => self.load(st, usize::from(code[at + 1]), insn)?,
            0x1a..=0x2d => self.load(st, usize::from((o - 0x1a) % 4), insn)?,
            0x2e..=0x35 => {
                self.pop(st, 1, insn)?;
                let array = st
                    .stack
                    .pop()
                    .ok_or_else(|| err(insn, "operand stack underflow"))?;
                let t = match o {
                    0x2e | 0x33 | 0x34 | 0x35 => Int,
                    0x2f => Long,
                    0x30 => Float,
                    0x31 => Double,
                    _ => match array {
                        Object(name) if name.len() > 1 && name[0] == b'[' => {
                            field_type(&name, 1).map_err(|e| err(insn, &e.what))?.0
                        }
                        _ => Null,
                    },
                };
                Self::push(st, t);
            }
            0x36 => self.store(st, usize::from(code[at + 1]), Int, insn)?,
            0x37 => self.store(st, usize::from(code[at + 1]), Long, insn)?,
            0x38 => self.store(st, usize::from(code[at + 1]), Float, insn)?,
            0x39 => self.store(st, usize::from(code[at + 1]), Double, insn)?,
            0x3a => self.store_ref(st, usize::from(code[at + 1]), insn)?,
            0x3b..=0x4e => {
                let index = usize::from((o - 0x3b) % 4);
                match (o - 0x3b) / 4 {
                    0 => self.store(st, index, Int, insn)?,
                    1 => self.store(st, index, Long, insn)?,
                    2 => self.store(st, index, Float, insn)?,
                    3 => self.store(st, index, Double, insn)?,
                    _ => self.store_ref(st, index, insn)?,
                }
            }
            0x4f..=0x56 => {
                let n = if o == 0x50 || o == 0x52 { 4 } else { 3 };
                self.pop(st, n, insn)?;
            }
            0x57 => self.pop(st, 1, insn)?,
            0x58 => self.pop(st, 2, insn)?,
            0x59..=0x5f => {
                let need = [1, 2, 3, 2, 3, 4, 2][usize::from(o - 0x59)];
                if st.stack.len() < need {
                    return Err(err(insn, "operand stack underflow"));
                }
                let n = st.stack.len();
                let s = &mut st.stack;
                match o {
                    0x59 => s.push(s[n - 1].clone()),
                    0x5a => s.insert(n - 2, s[n - 1].clone()),
                    0x5b => s.insert(n - 3, s[n - 1].clone()),
                    0x5c => {
                        s.push(s[n - 2].clone());
                        s.push(s[n - 1].clone());
                    }
                    0x5d => {
                        let (a, b) = (s[n - 2].clone(), s[n - 1].clone());
                        s.insert(n - 3, b);
                        s.insert(n - 3, a);
                    }
                    0x5e => {
                        let (a, b) = (s[n - 2].clone(), s[n - 1].clone());
                        s.insert(n - 4, b);
                        s.insert(n - 4, a);
                    }
                    _ => s.swap(n - 1, n - 2),
                }
            }
            0x60..=0x77 => {
                // add, sub, mul, div, rem, neg: int, long, float, double in turn.
                let t = [Int, Long, Float, Double][usize::from((o - 0x60) % 4)].clone();
                let operands = if o >= 0x74 { 1 } else { 2 };
                self.pop(st, Self::slots(&t) * operands, insn)?;
                Self::push(st, t);
            }
            0x78..=0x7d => {
                let t = if o.is_multiple_of(2) { Int } else { Long };
                self.pop(st, 1 + Self::slots(&t), insn)?;
                Self::push(st, t);
            }
            0x7e..=0x83 => {
                let t = if o.is_multiple_of(2) { Int } else { Long };
                self.pop(st, 2 * Self::slots(&t), insn)?;
                Self::push(st, t);
            }
            0x84 => {}
            0x85..=0x93 => {
                let (from, to) = match o {
                    0x85 => (Int, Long),
                    0x86 => (Int, Float),
                    0x87 => (Int, Double),
                    0x88 => (Long, Int),
                    0x89 => (Long, Float),
                    0x8a => (Long, Double),
                    0x8b => (Float, Int),
                    0x8c => (Float, Long),
                    0x8d => (Float, Double),
                    0x8e => (Double, Int),
                    0x8f => (Double, Long),
                    0x90 => (Double, Float),
                    _ => (Int, Int),
                };
                self.pop(st, Self::slots(&from), insn)?;
                Self::push(st, to);
            }
            0x94 => {
                self.pop(st, 4, insn)?;
                Self::push(st, Int);
            }
            0x95 | 0x96 => {
                self.pop(st, 2, insn)?;
                Self::push(st, Int);
            }
            0x97 | 0x98 => {
                self.pop(st, 4, insn)?;
                Self::push(st, Int);
            }
            0x99..=0x9e | op::IFNULL | op::IFNONNULL => self.pop(st, 1, insn)?,
            0x9f..=0xa6 => self.pop(st, 2, insn)?,
            op::GOTO | op::GOTO_W => return Ok(Flow::Stop),
            op::JSR | op::JSR_W | op::RET => {
                return Err(err(insn, "jsr/ret in a class with frames"));
            }
            op::TABLESWITCH | op::LOOKUPSWITCH => {
                self.pop(st, 1, insn)?;
                return Ok(Flow::Stop);
            }
            0xac..=0xb1 | op::ATHROW => return Ok(Flow::Stop),
            0xb2..=0xb5 => {
                let (_, _, d) = self
                    .pool
                    .member(self.u16_operand(insn))
                    .map_err(|e| err(insn, &e.what))?;
                let t = field_type(d, 0).map_err(|e| err(insn, &e.what))?.0;
                match o {
                    0xb2 => Self::push(st, t),
                    0xb3 => self.pop(st, Self::slots(&t), insn)?,
                    0xb4 => {
                        self.pop(st, 1, insn)?;
                        Self::push(st, t);
                    }
                    _ => self.pop(st, Self::slots(&t) + 1, insn)?,
                }
            }
            0xb6..=0xba => self.invoke(st, insn)?,
            0xbb => Self::push(st, Uninit(insn.at)),
            0xbc => {
                self.pop(st, 1, insn)?;
                let name = crate::code::newarray_descriptor(code[at + 1])
                    .ok_or_else(|| err(insn, "bad newarray type"))?;
                Self::push(st, VType::object(name));
            }
            0xbd => {
                self.pop(st, 1, insn)?;
                let c = self.class_operand(insn)?;
                let mut name = vec![b'['];
                if c.first() == Some(&b'[') {
                    name.extend_from_slice(&c);
                } else {
                    name.push(b'L');
                    name.extend_from_slice(&c);
                    name.push(b';');
                }
                Self::push(st, VType::object(&name));
            }
            0xbe => {
                self.pop(st, 1, insn)?;
                Self::push(st, Int);
            }
            0xc0 => {
                self.pop(st, 1, insn)?;
                let c = self.class_operand(insn)?;
                Self::push(st, Object(c));
            }
            0xc1 => {
                self.pop(st, 1, insn)?;
                Self::push(st, Int);
            }
            0xc2 | 0xc3 => self.pop(st, 1, insn)?,
            op::WIDE => {
                let inner = code[at + 1];
                let index = usize::from(u16_at(code, at + 2));
                match inner {
                    0x15..=0x19 => self.load(st, index, insn)?,
                    0x36 => self.store(st, index, Int, insn)?,
                    0x37 => self.store(st, index, Long, insn)?,
                    0x38 => self.store(st, index, Float, insn)?,
                    0x39 => self.store(st, index, Double, insn)?,
                    0x3a => self.store_ref(st, index, insn)?,
                    0x84 => {}
                    _ => return Err(err(insn, "wide ret in a class with frames")),
                }
            }
            0xc5 => {
                self.pop(st, usize::from(code[at + 3]), insn)?;
                let c = self.class_operand(insn)?;
                Self::push(st, Object(c));
            }
            _ => return Err(err(insn, "unknown opcode")),
        }
        Ok(Flow::Next)
    }
}
