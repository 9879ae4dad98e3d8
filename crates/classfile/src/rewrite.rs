//! Owns the one bytecode rewriting pipeline both rewriters run. The class driver
//! ([`rewrite_class`]) hands every method with code to a probe kind ([`ProbeKind`]: the
//! timing probes of cpu=times in `instrument.rs`, the allocation counters of heap=sites in
//! `alloc.rs`), which says what to insert where ([`Plan`]); the per-method pipeline does the
//! rest, the same for every kind: decode → insertion plan → layout (new offsets, 16-bit
//! branches that no longer reach widened) → emit → exception handlers → StackMapTable frames →
//! line-number and local-variable tables.

use std::collections::{HashMap, HashSet};

use crate::bytes::u16_at;
use crate::class::{ACC_ABSTRACT, ACC_MODULE, ACC_NATIVE, ACC_STATIC, Attribute, ClassFile};
use crate::code::write_code;
use crate::code::{Code, Handler, Insn, Kind, decode, emit_moved, negate, switch_padding};
use crate::error::{Error, Result};
use crate::frames::{self, Frame, VType};
use crate::interp::{Flow, Interp, State};
use crate::pool::Pool;

/// The method a probe kind is asked about.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Method<'m> {
    /// Internal name of its class.
    pub class: &'m [u8],
    /// Its name.
    pub name: &'m [u8],
    /// Its descriptor.
    pub descriptor: &'m [u8],
    /// Its access flags.
    pub access: u16,
    /// Its index in the class file's method table.
    pub index: usize,
}

/// What a probe kind inserts into one method: code at entry, and code before and after
/// instructions. Inserted code holds no branch and no offset; it may use locals the plan adds
/// after the method's own.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// Code put before the first instruction.
    pub entry: Vec<u8>,
    /// Code put before instructions (where branches to them now go), by instruction index.
    /// Its first `unguarded` bytes are outside every exception handler's range (code whose
    /// exception must not reach a handler of the method, such as a probe at the handler's
    /// own start).
    pub before: HashMap<usize, Before>,
    /// Code put after instructions (not branches or switches), by instruction index.
    pub after: HashMap<usize, Vec<u8>>,
    /// Operand stack words the inserted code needs above the method's own `max_stack`.
    pub extra_stack: u16,
    /// The least `max_stack` the inserted code needs on its own.
    pub min_stack: u16,
    /// Types of the locals added after the method's own: set by the entry code, so in every
    /// frame after it.
    pub locals: Vec<VType>,
    /// Sites the probes count, as the probe kind reports them (summed over the methods
    /// rewritten).
    pub sites: u32,
}

/// Code put before one instruction.
#[derive(Debug, Default)]
pub(crate) struct Before {
    /// The code.
    pub code: Vec<u8>,
    /// How many of its first bytes no exception handler covers.
    pub unguarded: u32,
}

impl Plan {
    /// Adds `code` before instruction `i`, after what is there already; `guarded`: inside the
    /// instruction's exception handlers (else outside every one, which only code at the start
    /// of the insertion can be).
    pub fn before(&mut self, i: usize, code: &[u8], guarded: bool) {
        let b = self.before.entry(i).or_default();
        if !guarded {
            debug_assert_eq!(b.unguarded as usize, b.code.len());
            b.unguarded += code.len() as u32;
        }
        b.code.extend_from_slice(code);
    }

    /// Adds `code` after instruction `i`.
    pub fn after(&mut self, i: usize, code: &[u8]) {
        self.after.entry(i).or_default().extend_from_slice(code);
    }

    /// Whether the plan inserts nothing.
    pub fn is_empty(&self) -> bool {
        self.entry.is_empty() && self.before.is_empty() && self.after.is_empty()
    }
}

/// A strategy of the pipeline: what one rewriter inserts.
pub(crate) trait ProbeKind {
    /// Sees the class before its methods are planned.
    fn start(&mut self, _class: &ClassFile<'_>) {}

    /// Whether the method with this Code attribute body (undecoded) may need probes at all:
    /// a quick look that spares most methods the decoding.
    fn wants(&mut self, method: &Method<'_>, code: &[u8]) -> bool;

    /// The insertions into the method, `None` to leave it as it is. Constants the probes use
    /// are added to `pool`.
    fn plan(
        &mut self,
        pool: &mut Pool<'_>,
        method: &Method<'_>,
        code: &Code<'_>,
        insns: &[Insn],
    ) -> Result<Option<Plan>>;
}

/// What rewriting a class did.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rewritten {
    /// The new class file, `None` when no method changed.
    pub bytes: Option<Vec<u8>>,
    /// Methods rewritten.
    pub methods: u32,
    /// The sites of the methods rewritten ([`Plan::sites`]).
    pub sites: u32,
    /// Methods left as they were because they could not be rewritten (their code would pass
    /// 64 KB, ...), with the reason.
    pub failed: Vec<(String, String)>,
}

/// Runs `kind` over every method with code of `class` (not abstract, not native; nothing in a
/// module-info). A method that cannot be rewritten keeps its code and is listed in
/// [`Rewritten::failed`]; only a malformed class file is an error.
pub(crate) fn rewrite_class(class: &[u8], kind: &mut impl ProbeKind) -> Result<Rewritten> {
    let mut cf = ClassFile::parse(class)?;
    let mut outcome = Rewritten::default();
    if cf.access & ACC_MODULE != 0 {
        return Ok(outcome);
    }
    let class_name = cf.name().to_vec();
    let Ok(code_name) = cf.pool.add_utf8(b"Code") else {
        return Ok(outcome);
    };
    kind.start(&cf);
    for index in 0..cf.methods.len() {
        let m = &cf.methods[index];
        if m.access & (ACC_ABSTRACT | ACC_NATIVE) != 0 {
            continue;
        }
        let Some(code_at) = m.attributes.iter().position(|a| a.name == code_name) else {
            continue;
        };
        let name = cf.pool.utf8(m.name)?.to_vec();
        let descriptor = cf.pool.utf8(m.descriptor)?.to_vec();
        let method = Method {
            class: &class_name,
            name: &name,
            descriptor: &descriptor,
            access: m.access,
            index,
        };
        if !kind.wants(&method, &m.attributes[code_at].data) {
            continue;
        }
        match rewrite_method(&mut cf, code_at, &method, kind) {
            Ok(Some((body, sites))) => {
                cf.methods[index].attributes[code_at].data = std::borrow::Cow::Owned(body);
                outcome.methods += 1;
                outcome.sites += sites;
            }
            Ok(None) => {}
            Err(e) => outcome.failed.push((
                format!(
                    "{}{}",
                    String::from_utf8_lossy(&name),
                    String::from_utf8_lossy(&descriptor)
                ),
                e.to_string(),
            )),
        }
    }
    if outcome.methods > 0 {
        outcome.bytes = Some(cf.write()?);
    }
    Ok(outcome)
}

/// The pipeline for one method: its new Code attribute body and its plan's sites, or `None`
/// if `kind` leaves it.
fn rewrite_method(
    cf: &mut ClassFile<'_>,
    code_at: usize,
    method: &Method<'_>,
    kind: &mut impl ProbeKind,
) -> Result<Option<(Vec<u8>, u32)>> {
    let data = cf.methods[method.index].attributes[code_at].data.clone();
    let code = Code::parse(&data, 0)?;
    let insns = decode(code.code)?;
    let Some(plan) = kind.plan(&mut cf.pool, method, &code, &insns)? else {
        return Ok(None);
    };
    if plan.is_empty() {
        return Ok(None);
    }
    let code_len = code.code.len() as u32;
    let mut index_of = vec![u32::MAX; code.code.len()];
    for (i, insn) in insns.iter().enumerate() {
        index_of[insn.at as usize] = i as u32;
    }
    for &i in plan.after.keys() {
        if !matches!(insns.get(i).map(|n| &n.kind), Some(Kind::Plain)) {
            return Err(Error::new(0, "code after a branch"));
        }
    }
    let layout = Layout::compute(&insns, &index_of, code_len, &plan)?;
    let max_stack = code
        .max_stack
        .checked_add(plan.extra_stack)
        .ok_or_else(|| Error::new(0, "max_stack would overflow"))?
        .max(plan.min_stack);
    let max_locals = code
        .max_locals
        .checked_add(plan.locals.len() as u16)
        .ok_or_else(|| Error::new(0, "max_locals would overflow"))?;

    // Emit.
    let mut out: Vec<u8> = Vec::with_capacity(layout.end as usize);
    out.extend_from_slice(&plan.entry);
    for (i, insn) in insns.iter().enumerate() {
        debug_assert_eq!(out.len() as u32, layout.prefix[i]);
        if let Some(b) = plan.before.get(&i) {
            out.extend_from_slice(&b.code);
        }
        debug_assert_eq!(out.len() as u32, layout.at[i]);
        let here = layout.at[i];
        let rel = |t: u32| -> Result<i64> {
            Ok(i64::from(layout.target(t, &index_of, code_len)?) - i64::from(here))
        };
        emit_moved(&mut out, code.code, insn, here, layout.widened[i], rel)?;
        if let Some(a) = plan.after.get(&i) {
            out.extend_from_slice(a);
        }
    }
    if out.len() as u32 != layout.end {
        return Err(Error::new(0, "layout and code disagree"));
    }

    let handlers = move_handlers(&code.handlers, &plan, &layout, &index_of, code_len)?;
    let attr_names: Vec<Vec<u8>> = code
        .attributes
        .iter()
        .map(|a| cf.pool.utf8(a.name).map(|n| n.to_vec()).unwrap_or_default())
        .collect();
    let with_frames = cf.major >= 50;
    let new_frames = if with_frames {
        move_frames(
            cf,
            method,
            &code,
            &attr_names,
            &insns,
            &plan,
            &layout,
            &index_of,
        )?
    } else {
        Vec::new()
    };

    // Attributes of the code.
    let mut attributes: Vec<Attribute<'static>> = Vec::new();
    for (a, n) in code.attributes.iter().zip(&attr_names) {
        match n.as_slice() {
            // Rebuilt below (and dropped for classes before version 50, which ignore it).
            b"StackMapTable" => continue,
            b"LineNumberTable" => {
                if let Ok(d) = move_table(&a.data, 4, &layout, &index_of, code_len, false) {
                    attributes.push(Attribute {
                        name: a.name,
                        data: d.into(),
                    });
                }
            }
            b"LocalVariableTable" | b"LocalVariableTypeTable" => {
                if let Ok(d) = move_table(&a.data, 10, &layout, &index_of, code_len, true) {
                    attributes.push(Attribute {
                        name: a.name,
                        data: d.into(),
                    });
                }
            }
            // Offsets into the code we cannot all move; the JVM never reads them.
            b"RuntimeVisibleTypeAnnotations" | b"RuntimeInvisibleTypeAnnotations" => {}
            _ => attributes.push(Attribute {
                name: a.name,
                data: a.data.to_vec().into(),
            }),
        }
    }
    if !new_frames.is_empty() {
        let body = frames::encode(&new_frames, &mut cf.pool)?;
        let name = cf.pool.add_utf8(b"StackMapTable")?;
        attributes.push(Attribute {
            name,
            data: body.into(),
        });
    }
    Ok(Some((
        write_code(max_stack, max_locals, &out, &handlers, &attributes),
        plan.sites,
    )))
}

/// The exception table over the new code: the same handlers over the same instructions, with
/// the unguarded start of each insertion left out of every range.
fn move_handlers(
    old: &[Handler],
    plan: &Plan,
    layout: &Layout,
    index_of: &[u32],
    code_len: u32,
) -> Result<Vec<Handler>> {
    let mut holes: Vec<(u32, u32)> = plan
        .before
        .iter()
        .filter(|(_, b)| b.unguarded > 0)
        .map(|(&i, b)| (layout.prefix[i], layout.prefix[i] + b.unguarded))
        .collect();
    holes.sort_unstable();
    let mut handlers = Vec::with_capacity(old.len());
    for h in old {
        let mut start = layout.target(h.start, index_of, code_len)?;
        let end = layout.target(h.end, index_of, code_len)?;
        let handler = layout.target(h.handler, index_of, code_len)?;
        let first = start;
        for &(from, to) in holes
            .iter()
            .filter(|&&(from, _)| from >= first && from < end)
        {
            if start < from {
                handlers.push(Handler {
                    start,
                    end: from,
                    handler,
                    catch_type: h.catch_type,
                });
            }
            start = to;
        }
        if start < end {
            handlers.push(Handler {
                start,
                end,
                handler,
                catch_type: h.catch_type,
            });
        }
    }
    Ok(handlers)
}

/// The StackMapTable frames of the new code: the old ones at their new offsets (with the
/// plan's locals added), and one after each conditional branch that was widened (the
/// negated branch's target), from the types the interpreter finds there.
#[allow(clippy::too_many_arguments)]
fn move_frames(
    cf: &ClassFile<'_>,
    method: &Method<'_>,
    code: &Code<'_>,
    attr_names: &[Vec<u8>],
    insns: &[Insn],
    plan: &Plan,
    layout: &Layout,
    index_of: &[u32],
) -> Result<Vec<Frame>> {
    let code_len = code.code.len() as u32;
    let smt = code
        .attributes
        .iter()
        .zip(attr_names)
        .find(|(_, n)| n.as_slice() == b"StackMapTable")
        .map(|(a, _)| a);
    let interp = Interp::new(&cf.pool, method.class, code.code);
    let (initial_list, initial_state) = interp.initial(
        method.access & ACC_STATIC != 0,
        method.name,
        method.descriptor,
        code.max_locals,
    )?;
    let old_frames = match smt {
        Some(a) => frames::decode(&a.data, &cf.pool, &initial_list)?,
        None => Vec::new(),
    };
    let move_uninit = |t: &VType| -> Result<VType> {
        Ok(match t {
            VType::Uninit(at) => VType::Uninit(layout.insn(*at, index_of)?),
            other => other.clone(),
        })
    };
    // Every frame after the entry code has the plan's locals.
    let with_locals = |mut locals: Vec<VType>| {
        if !plan.locals.is_empty() {
            locals.resize(usize::from(code.max_locals), VType::Top);
            locals.extend(plan.locals.iter().cloned());
        }
        locals
    };
    let moved = |locals: &[VType], stack: &[VType], at: u32| -> Result<Frame> {
        Ok(Frame {
            at,
            locals: with_locals(locals.iter().map(move_uninit).collect::<Result<_>>()?),
            stack: stack.iter().map(move_uninit).collect::<Result<_>>()?,
        })
    };
    let mut new_frames = Vec::new();
    let mut have = HashSet::new();
    for f in &old_frames {
        new_frames.push(moved(
            &f.locals,
            &f.stack,
            layout.target(f.at, index_of, code_len)?,
        )?);
        have.insert(f.at);
    }
    if layout.widened.iter().any(|&w| w) {
        let states = interpret(&interp, insns, &initial_state, &old_frames, code.max_locals)?;
        for (i, insn) in insns.iter().enumerate() {
            if layout.widened[i] && negate(insn.op).is_some() {
                let next = insns
                    .get(i + 1)
                    .ok_or_else(|| Error::new(insn.at as usize, "branch at the end of the code"))?;
                if have.insert(next.at) {
                    let st = states[i + 1].as_ref().ok_or_else(|| {
                        Error::new(next.at as usize, "no types for a widened branch")
                    })?;
                    let mut locals = st.locals.clone();
                    locals.truncate(usize::from(code.max_locals));
                    new_frames.push(moved(&locals, &st.stack, layout.prefix[i + 1])?);
                }
            }
        }
    }
    new_frames.sort_by_key(|f| f.at);
    new_frames.dedup_by_key(|f| f.at);
    Ok(new_frames)
}

/// Types before each instruction; `None` where unknown (dead code without a frame).
fn interpret(
    interp: &Interp<'_, '_>,
    insns: &[Insn],
    initial: &State,
    old_frames: &[Frame],
    max_locals: u16,
) -> Result<Vec<Option<State>>> {
    let by_offset: HashMap<u32, &Frame> = old_frames.iter().map(|f| (f.at, f)).collect();
    let mut out = Vec::with_capacity(insns.len());
    let mut state = Some(initial.clone());
    for insn in insns {
        if let Some(f) = by_offset.get(&insn.at) {
            let mut locals = f.locals.clone();
            locals.resize(usize::from(max_locals).max(locals.len()), VType::Top);
            let this_uninit = locals.contains(&VType::UninitThis);
            state = Some(State {
                locals,
                stack: f.stack.clone(),
                this_uninit,
            });
        }
        out.push(state.clone());
        if let Some(st) = state.as_mut()
            && interp.step(st, insn)? == Flow::Stop
        {
            state = None;
        }
    }
    Ok(out)
}

/// Where each instruction lands in the new code.
struct Layout {
    /// Start of the instruction's insertion before it: where branches to it now go.
    prefix: Vec<u32>,
    /// Start of the instruction itself.
    at: Vec<u32>,
    /// End of the new code.
    end: u32,
    /// Which 16-bit branches became wide.
    widened: Vec<bool>,
}

impl Layout {
    fn compute(insns: &[Insn], index: &[u32], code_len: u32, plan: &Plan) -> Result<Layout> {
        let n = insns.len();
        let before: Vec<u32> = (0..n)
            .map(|i| plan.before.get(&i).map_or(0, |b| b.code.len() as u32))
            .collect();
        let after: Vec<u32> = (0..n)
            .map(|i| plan.after.get(&i).map_or(0, |a| a.len() as u32))
            .collect();
        let mut widened = vec![false; n];
        for _ in 0..64 {
            let mut prefix = Vec::with_capacity(n);
            let mut at = Vec::with_capacity(n);
            let mut pos = plan.entry.len() as u32;
            for (i, insn) in insns.iter().enumerate() {
                prefix.push(pos);
                pos += before[i];
                at.push(pos);
                pos += match &insn.kind {
                    Kind::Plain => insn.len,
                    Kind::Branch { wide: true, .. } => 5,
                    Kind::Branch { wide: false, .. } if !widened[i] => 3,
                    Kind::Branch { .. } if negate(insn.op).is_some() => 8,
                    Kind::Branch { .. } => 5,
                    Kind::Switch { .. } => {
                        1 + switch_padding(pos) + (insn.len - 1 - switch_padding(insn.at))
                    }
                };
                pos += after[i];
            }
            let layout = Layout {
                prefix,
                at,
                end: pos,
                widened: widened.clone(),
            };
            let mut changed = false;
            for (i, insn) in insns.iter().enumerate() {
                if let Kind::Branch {
                    target,
                    wide: false,
                } = insn.kind
                    && !widened[i]
                {
                    let delta = i64::from(layout.target(target, index, code_len)?)
                        - i64::from(layout.at[i]);
                    if i16::try_from(delta).is_err() {
                        widened[i] = true;
                        changed = true;
                    }
                }
            }
            if !changed {
                if layout.end > 65535 {
                    return Err(Error::new(0, "rewritten code would pass 64 KB"));
                }
                return Ok(layout);
            }
        }
        Err(Error::new(0, "branch layout did not settle"))
    }

    /// New offset of old offset `old` as a branch target or range bound.
    fn target(&self, old: u32, index: &[u32], code_len: u32) -> Result<u32> {
        if old == code_len {
            return Ok(self.end);
        }
        match index.get(old as usize) {
            Some(&i) if i != u32::MAX => Ok(self.prefix[i as usize]),
            _ => Err(Error::new(
                old as usize,
                "offset is not an instruction start",
            )),
        }
    }

    /// New offset of the instruction at old offset `old` itself.
    fn insn(&self, old: u32, index: &[u32]) -> Result<u32> {
        match index.get(old as usize) {
            Some(&i) if i != u32::MAX => Ok(self.at[i as usize]),
            _ => Err(Error::new(
                old as usize,
                "offset is not an instruction start",
            )),
        }
    }
}

/// Moves the start offsets (and, for local variable tables, the lengths) of a table whose
/// entries are `entry` bytes long and start with `u16 start_pc`. Entries from offset 0 keep
/// covering the entry code.
fn move_table(
    data: &[u8],
    entry: usize,
    layout: &Layout,
    index: &[u32],
    code_len: u32,
    with_length: bool,
) -> Result<Vec<u8>> {
    if data.len() < 2 {
        return Err(Error::new(0, "short table"));
    }
    let n = usize::from(u16_at(data, 0));
    if data.len() != 2 + n * entry {
        return Err(Error::new(0, "table length"));
    }
    let mut out = data.to_vec();
    for k in 0..n {
        let at = 2 + k * entry;
        let start = u32::from(u16_at(data, at));
        let new_start = if start == 0 {
            0
        } else {
            layout.target(start, index, code_len)?
        };
        out[at..at + 2].copy_from_slice(&(new_start as u16).to_be_bytes());
        if with_length {
            let end = start + u32::from(u16_at(data, at + 2));
            let new_end = layout.target(end, index, code_len)?;
            out[at + 2..at + 4].copy_from_slice(&((new_end - new_start) as u16).to_be_bytes());
        }
    }
    Ok(out)
}
