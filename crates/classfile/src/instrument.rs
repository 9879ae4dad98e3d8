//! Owns the cpu=times rewriter: a call to the tracker at every method entry, before every
//! return and at the start of every exception handler (where an exception thrown further
//! down is caught, the frames it left are closed), with branch offsets, switch padding,
//! exception tables, line-number and local-variable tables and StackMapTable frames moved to
//! the new offsets, and branches widened when a 16-bit offset no longer fits. No handler is
//! added: a method an exception leaves is closed by the handler that catches it, so methods
//! without handlers stay without, which keeps the JIT's work on them small.

use std::collections::HashMap;

use crate::bytes::{put_u16, u16_at};
use crate::class::{ACC_ABSTRACT, ACC_MODULE, ACC_NATIVE, ACC_STATIC, Attribute, ClassFile};
use crate::code::emit_moved;
use crate::code::{
    Code, Handler, Insn, Kind, decode, is_return, negate, op, switch_padding, write_code,
};
use crate::error::{Error, Result};
use crate::frames::{self, Frame, VType};
use crate::interp::{Flow, Interp, State};

/// The tracker methods the rewriter calls. At entry, `static Object state()` (the calling
/// thread's state, kept in a new local variable) and `static int enter(Object state, int
/// method, int entry)` (the caller's trace, kept in a second new local; `entry` is
/// [`crate::ic_entry`]`(method)`, a constant); before each return `static void
/// exit(Object state, int callerTrace)`; at the start of each exception handler `static void
/// caught(Object state, int callerTrace, int method)`, which makes the method's own trace
/// current again.
#[derive(Debug, Clone, Copy)]
pub struct Probes<'n> {
    /// Internal name of the tracker class (`java/lang/HprofTracker`).
    pub tracker: &'n [u8],
    /// Called first at entry.
    pub state: &'n [u8],
    /// Called at entry.
    pub enter: &'n [u8],
    /// Called before each return.
    pub exit: &'n [u8],
    /// Called at the start of each exception handler.
    pub caught: &'n [u8],
}

/// A method the rewriter asks an id for.
#[derive(Debug, Clone, Copy)]
pub struct MethodRef<'m> {
    /// Internal class name.
    pub class: &'m [u8],
    /// Method name.
    pub name: &'m [u8],
    /// Method descriptor.
    pub descriptor: &'m [u8],
    /// Index in the class file's method table.
    pub index: usize,
}

/// What instrumenting a class did.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// The new class file, `None` when no method was changed.
    pub bytes: Option<Vec<u8>>,
    /// Methods instrumented.
    pub instrumented: u32,
    /// Methods left as they were because they could not be rewritten, with the reason.
    pub failed: Vec<(String, String)>,
}

use crate::tracker::{CAUGHT_DESCRIPTOR, ENTER_DESCRIPTOR, EXIT_DESCRIPTOR, STATE_DESCRIPTOR};

/// Lengths of the probes of a method whose tracker state lives in local `slot` and its
/// caller's trace in local `slot + 1`.
#[derive(Debug, Clone, Copy)]
struct Probe {
    slot: u16,
}

/// How a probe reaches one of its two locals.
#[derive(Debug, Clone, Copy)]
enum Access {
    LoadState,
    StoreState,
    LoadTrace,
    StoreTrace,
}

impl Probe {
    /// `aload`/`astore`/`iload`/`istore` of local `n`: 1, 2 or 4 (wide) bytes.
    fn local_len(n: u16) -> u32 {
        match n {
            0..=3 => 1,
            4..=255 => 2,
            _ => 4,
        }
    }

    /// Both locals, once each.
    fn locals_len(self) -> u32 {
        Probe::local_len(self.slot) + Probe::local_len(self.slot + 1)
    }

    /// Entry: `invokestatic state`, `dup`, `astore slot`, `sipush`/`ldc_w m`, `bipush e`,
    /// `invokestatic enter`, `istore slot+1`.
    fn enter_len(self) -> u32 {
        12 + self.locals_len()
    }

    /// Before a return: `aload slot`, `iload slot+1`, `invokestatic exit`.
    fn exit_len(self) -> u32 {
        3 + self.locals_len()
    }

    /// At a handler's start: `aload slot`, `iload slot+1`, `sipush`/`ldc_w m`,
    /// `invokestatic caught`.
    fn caught_len(self) -> u32 {
        6 + self.locals_len()
    }

    /// Emits one access to one of the two locals.
    fn local(self, out: &mut Vec<u8>, access: Access) {
        let (n, short, long) = match access {
            Access::LoadState => (self.slot, 0x2a, 0x19),
            Access::StoreState => (self.slot, 0x4b, 0x3a),
            Access::LoadTrace => (self.slot + 1, 0x1a, 0x15),
            Access::StoreTrace => (self.slot + 1, 0x3b, 0x36),
        };
        match n {
            0..=3 => out.push(short + n as u8),
            4..=255 => out.extend_from_slice(&[long, n as u8]),
            _ => {
                out.extend_from_slice(&[op::WIDE, long]);
                put_u16(out, n);
            }
        }
    }
}

/// Instruments every method with code of `class`. `id` gives each method's number (passed
/// to the probes) or `None` to leave it alone. Methods whose body is a lone `return` are
/// left alone. A method that cannot be rewritten (its code would pass 64 KB, ...) stays as
/// it was and is listed in [`Outcome::failed`]; only a malformed class file is an error.
pub fn instrument(
    class: &[u8],
    probes: &Probes<'_>,
    mut id: impl FnMut(&MethodRef<'_>) -> Option<u32>,
) -> Result<Outcome> {
    let mut cf = ClassFile::parse(class)?;
    let mut outcome = Outcome::default();
    if cf.access & ACC_MODULE != 0 {
        return Ok(outcome);
    }
    let class_name = cf.name().to_vec();
    let code_name = cf.pool.add_utf8(b"Code").ok();
    let mut refs: Option<[u16; 3]> = None;
    let mut caught: Option<u16> = None;
    for index in 0..cf.methods.len() {
        let m = &cf.methods[index];
        if m.access & (ACC_ABSTRACT | ACC_NATIVE) != 0 {
            continue;
        }
        let name = cf.pool.utf8(m.name)?.to_vec();
        let descriptor = cf.pool.utf8(m.descriptor)?.to_vec();
        let Some(code_at) = m.attributes.iter().position(|a| Some(a.name) == code_name) else {
            continue;
        };
        if m.attributes[code_at].data.len() >= 9 && u32_at(&m.attributes[code_at].data, 4) == 1 {
            // A lone `return` (empty constructors, empty methods): nothing to time.
            continue;
        }
        let method = MethodRef {
            class: &class_name,
            name: &name,
            descriptor: &descriptor,
            index,
        };
        let Some(mid) = id(&method) else { continue };
        // The `caught` probe's constant is added only to classes with exception handlers: each
        // constant the class gains costs the JVM a search when it retransforms the class.
        let data = &m.attributes[code_at].data;
        let code_len = if data.len() >= 8 {
            u32_at(data, 4) as usize
        } else {
            0
        };
        let has_handlers = data
            .get(8 + code_len..10 + code_len)
            .is_some_and(|n| n != [0, 0]);
        let mut add = |n: &[u8], d: &[u8]| cf.pool.add_member(false, probes.tracker, n, d);
        let r = match refs {
            Some(r) => Ok(r),
            None => match (
                add(probes.state, STATE_DESCRIPTOR),
                add(probes.enter, ENTER_DESCRIPTOR),
                add(probes.exit, EXIT_DESCRIPTOR),
            ) {
                (Ok(s), Ok(a), Ok(b)) => Ok([s, a, b]),
                (Err(e), ..) | (_, Err(e), _) | (.., Err(e)) => Err(e),
            },
        };
        let c = match caught {
            Some(c) => Ok(c),
            None if has_handlers => add(probes.caught, CAUGHT_DESCRIPTOR),
            None => Ok(0),
        };
        let (Ok([s, a, b]), Ok(c)) = (r, c) else {
            outcome
                .failed
                .push((describe(&name, &descriptor), "constant pool full".into()));
            break;
        };
        refs = Some([s, a, b]);
        if c != 0 {
            caught = Some(c);
        }
        let r = [s, a, b, c];
        match rewrite_method(&mut cf, index, code_at, mid, r) {
            Ok(body) => {
                cf.methods[index].attributes[code_at].data = std::borrow::Cow::Owned(body);
                outcome.instrumented += 1;
            }
            Err(e) => outcome
                .failed
                .push((describe(&name, &descriptor), e.to_string())),
        }
    }
    if outcome.instrumented > 0 {
        outcome.bytes = Some(cf.write()?);
    }
    Ok(outcome)
}

fn describe(name: &[u8], descriptor: &[u8]) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(name),
        String::from_utf8_lossy(descriptor)
    )
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Where each instruction lands in the new code.
struct Layout {
    /// Start of the instruction's prefix (the exit probe before a return): where branches to
    /// it now go.
    prefix: Vec<u32>,
    /// Start of the instruction itself.
    at: Vec<u32>,
    /// End of the rewritten original code (where the handler starts).
    end: u32,
    /// Which 16-bit branches became wide.
    widened: Vec<bool>,
}

impl Layout {
    /// `handler_start[i]`: instruction `i` starts an exception handler.
    fn compute(
        insns: &[Insn],
        index: &[u32],
        code_len: u32,
        probe: Probe,
        handler_start: &[bool],
    ) -> Result<Layout> {
        let n = insns.len();
        let mut widened = vec![false; n];
        for _ in 0..64 {
            let mut prefix = Vec::with_capacity(n);
            let mut at = Vec::with_capacity(n);
            let mut pos = probe.enter_len();
            for (i, insn) in insns.iter().enumerate() {
                prefix.push(pos);
                if handler_start[i] {
                    pos += probe.caught_len();
                }
                if is_return(insn.op) {
                    pos += probe.exit_len();
                }
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
                    return Err(Error::new(0, "instrumented code would pass 64 KB"));
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

/// Types before each instruction; `None` where unknown (dead code without a frame).
pub(crate) fn interpret(
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

fn rewrite_method(
    cf: &mut ClassFile<'_>,
    index: usize,
    code_at: usize,
    mid: u32,
    [state, enter, exit, caught]: [u16; 4],
) -> Result<Vec<u8>> {
    let m = &cf.methods[index];
    let data = m.attributes[code_at].data.clone();
    let code = Code::parse(&data, 0)?;
    let insns = decode(code.code)?;
    let code_len = code.code.len() as u32;
    let mut index_of = vec![u32::MAX; code.code.len()];
    for (i, insn) in insns.iter().enumerate() {
        index_of[insn.at as usize] = i as u32;
    }
    let is_static = m.access & ACC_STATIC != 0;
    let name = cf.pool.utf8(m.name)?.to_vec();
    let descriptor = cf.pool.utf8(m.descriptor)?.to_vec();
    let this_class = cf.name().to_vec();
    let with_frames = cf.major >= 50;
    // The entry probe pushes three words (state, number, cache entry); the exit probe two
    // over a return value; the caught probe three over the exception.
    let max_stack = code
        .max_stack
        .checked_add(2)
        .ok_or_else(|| Error::new(0, "max_stack would overflow"))?
        .max(if code.handlers.is_empty() { 3 } else { 4 });
    // The tracker state and the caller's trace live in two new locals after the method's own.
    let slot = code.max_locals;
    let max_locals = slot
        .checked_add(2)
        .ok_or_else(|| Error::new(0, "max_locals would overflow"))?;
    let probe = Probe { slot };
    let state_type = VType::object(crate::tracker::STATE_CLASS.as_bytes());

    let mut handler_start = vec![false; insns.len()];
    for h in &code.handlers {
        match index_of.get(h.handler as usize) {
            Some(&i) if i != u32::MAX => handler_start[i as usize] = true,
            _ => {
                return Err(Error::new(
                    h.handler as usize,
                    "handler is not an instruction",
                ));
            }
        }
    }
    let layout = Layout::compute(&insns, &index_of, code_len, probe, &handler_start)?;
    let attr_names: Vec<Vec<u8>> = code
        .attributes
        .iter()
        .map(|a| cf.pool.utf8(a.name).map(|n| n.to_vec()).unwrap_or_default())
        .collect();

    // Frames and types, for classes the split verifier checks.
    let needs_types = with_frames && layout.widened.iter().any(|&w| w);
    let smt = code
        .attributes
        .iter()
        .zip(&attr_names)
        .find(|(_, n)| n.as_slice() == b"StackMapTable")
        .map(|(a, _)| a);
    let interp = Interp::new(&cf.pool, &this_class, code.code);
    let (initial_list, initial_state) =
        interp.initial(is_static, &name, &descriptor, code.max_locals)?;
    let old_frames = match smt {
        Some(a) if with_frames => frames::decode(&a.data, &cf.pool, &initial_list)?,
        _ => Vec::new(),
    };
    let states = if needs_types {
        Some(interpret(
            &interp,
            &insns,
            &initial_state,
            &old_frames,
            code.max_locals,
        ))
    } else {
        None
    };

    // The code.
    let mut out: Vec<u8> = Vec::with_capacity(layout.end as usize);
    let mid_operand = if mid <= 0x7fff {
        (op::SIPUSH, mid as u16)
    } else {
        (op::LDC_W, cf.pool.add_integer(mid as i32)?)
    };
    let invoke = |out: &mut Vec<u8>, method: u16| {
        out.push(op::INVOKESTATIC);
        put_u16(out, method);
    };
    // Both locals, then the probe.
    let leave = |out: &mut Vec<u8>, method: u16| {
        probe.local(out, Access::LoadState);
        probe.local(out, Access::LoadTrace);
        invoke(out, method);
    };
    invoke(&mut out, state);
    out.push(op::DUP);
    probe.local(&mut out, Access::StoreState);
    out.push(mid_operand.0);
    put_u16(&mut out, mid_operand.1);
    // The method's entry in inline caches, as a constant: the JIT then adds it as one.
    out.extend_from_slice(&[op::BIPUSH, crate::tracker::ic_entry(mid as i32) as u8]);
    invoke(&mut out, enter);
    probe.local(&mut out, Access::StoreTrace);
    debug_assert_eq!(out.len() as u32, probe.enter_len());
    for (i, insn) in insns.iter().enumerate() {
        if handler_start[i] {
            probe.local(&mut out, Access::LoadState);
            probe.local(&mut out, Access::LoadTrace);
            out.push(mid_operand.0);
            put_u16(&mut out, mid_operand.1);
            invoke(&mut out, caught);
        }
        if is_return(insn.op) {
            leave(&mut out, exit);
        }
        debug_assert_eq!(out.len() as u32, layout.at[i]);
        let here = layout.at[i];
        let rel = |t: u32| -> Result<i64> {
            Ok(i64::from(layout.target(t, &index_of, code_len)?) - i64::from(here))
        };
        emit_moved(&mut out, code.code, insn, here, layout.widened[i], rel)?;
    }
    if out.len() as u32 != layout.end {
        return Err(Error::new(0, "layout and code disagree"));
    }

    // Exception table: the same handlers over the same code, with the caught probes left
    // out of every range (a probe that threw into a handler covering it, such as a
    // StackOverflowError into its own handler, would run again and again).
    let probes_at: Vec<(u32, u32)> = (0..insns.len())
        .filter(|&i| handler_start[i])
        .map(|i| (layout.prefix[i], layout.prefix[i] + probe.caught_len()))
        .collect();
    let mut handlers = Vec::with_capacity(code.handlers.len());
    for h in &code.handlers {
        let mut start = layout.target(h.start, &index_of, code_len)?;
        let end = layout.target(h.end, &index_of, code_len)?;
        let handler = layout.target(h.handler, &index_of, code_len)?;
        let first = start;
        for &(from, to) in probes_at
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

    // Frames.
    let mut new_frames: Vec<Frame> = Vec::new();
    if with_frames {
        let move_uninit = |t: &VType| -> Result<VType> {
            Ok(match t {
                VType::Uninit(at) => VType::Uninit(layout.insn(*at, &index_of)?),
                other => other.clone(),
            })
        };
        // Every frame after the entry probe has the tracker state and the caller's trace in
        // their locals.
        let with_state = |mut locals: Vec<VType>| {
            locals.resize(usize::from(slot), VType::Top);
            locals.push(state_type.clone());
            locals.push(VType::Int);
            locals
        };
        let moved = |locals: &[VType], stack: &[VType], at: u32| -> Result<Frame> {
            Ok(Frame {
                at,
                locals: with_state(locals.iter().map(move_uninit).collect::<Result<_>>()?),
                stack: stack.iter().map(move_uninit).collect::<Result<_>>()?,
            })
        };
        let mut have: std::collections::HashSet<u32> = std::collections::HashSet::new();
        for f in &old_frames {
            new_frames.push(moved(
                &f.locals,
                &f.stack,
                layout.target(f.at, &index_of, code_len)?,
            )?);
            have.insert(f.at);
        }
        for (i, insn) in insns.iter().enumerate() {
            if layout.widened[i] && negate(insn.op).is_some() {
                let next = insns
                    .get(i + 1)
                    .ok_or_else(|| Error::new(insn.at as usize, "branch at the end of the code"))?;
                if have.insert(next.at) {
                    let st = match &states {
                        Some(Ok(states)) => states[i + 1].as_ref(),
                        Some(Err(e)) => return Err(e.clone()),
                        None => None,
                    }
                    .ok_or_else(|| Error::new(next.at as usize, "no types for a widened branch"))?;
                    new_frames.push(moved(&st.locals, &st.stack, layout.prefix[i + 1])?);
                }
            }
        }
        new_frames.sort_by_key(|f| f.at);
        new_frames.dedup_by_key(|f| f.at);
    }

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
    if with_frames && !new_frames.is_empty() {
        let body = frames::encode(&new_frames, &mut cf.pool)?;
        let name = cf.pool.add_utf8(b"StackMapTable")?;
        attributes.push(Attribute {
            name,
            data: body.into(),
        });
    }
    Ok(write_code(
        max_stack,
        max_locals,
        &out,
        &handlers,
        &attributes,
    ))
}

/// Moves the start offsets (and, for local variable tables, the lengths) of a table whose
/// entries are `entry` bytes long and start with `u16 start_pc`.
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
        // Entries from offset 0 keep covering the entry probe.
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
