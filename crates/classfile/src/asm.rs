//! Owns a small bytecode assembler: instructions appended with labels for branch targets,
//! and a stack map frame declared at each label that needs one. Used to generate the tracker
//! class, and by tests to build class files.

use crate::error::{Error, Result};
use crate::frames::{Frame, VType};

/// A position in the code, bound once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Label(usize);

/// Code under construction.
#[derive(Debug, Default)]
pub struct Asm {
    code: Vec<u8>,
    labels: Vec<Option<u32>>,
    /// (operand offset, instruction offset, target) of each 16-bit branch.
    fixups: Vec<(usize, usize, Label)>,
    frames: Vec<(Label, Vec<VType>, Vec<VType>)>,
}

impl Asm {
    /// Empty code.
    pub fn new() -> Asm {
        Asm::default()
    }

    /// A new, unbound label.
    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    /// Binds `label` here, with the frame (expanded locals, stack) the verifier should
    /// assume here.
    pub fn bind(&mut self, label: Label, locals: &[VType], stack: &[VType]) {
        self.labels[label.0] = Some(self.code.len() as u32);
        self.frames.push((label, locals.to_vec(), stack.to_vec()));
    }

    /// One or more bytes, verbatim.
    pub fn raw(&mut self, bytes: &[u8]) -> &mut Asm {
        self.code.extend_from_slice(bytes);
        self
    }

    /// An opcode with a 16-bit operand (pool index).
    pub fn op16(&mut self, op: u8, operand: u16) -> &mut Asm {
        self.code.push(op);
        self.code.extend_from_slice(&operand.to_be_bytes());
        self
    }

    /// A 16-bit branch to `target`.
    pub fn branch(&mut self, op: u8, target: Label) -> &mut Asm {
        let at = self.code.len();
        self.code.push(op);
        self.fixups.push((at + 1, at, target));
        self.code.extend_from_slice(&[0, 0]);
        self
    }

    /// The code and its frames.
    pub fn finish(mut self) -> Result<(Vec<u8>, Vec<Frame>)> {
        for &(operand, insn, target) in &self.fixups {
            let to = self.labels[target.0].ok_or_else(|| Error::new(insn, "unbound label"))?;
            let delta = i16::try_from(i64::from(to) - insn as i64)
                .map_err(|_| Error::new(insn, "branch too far"))?;
            self.code[operand..operand + 2].copy_from_slice(&delta.to_be_bytes());
        }
        let mut frames: Vec<Frame> = self
            .frames
            .into_iter()
            .map(|(label, locals, stack)| Frame {
                at: self.labels[label.0].unwrap_or(0),
                locals,
                stack,
            })
            .collect();
        frames.sort_by_key(|f| f.at);
        Ok((self.code, frames))
    }
}
