//! Owns the cpu=times probe kind of the rewriting pipeline (`rewrite.rs`): a call to the
//! tracker at every method entry, before every return and at the start of every exception
//! handler (where an exception thrown further down is caught, the frames it left are closed),
//! the tracker's state and the caller's trace kept in two new locals. No handler is added: a
//! method an exception leaves is closed by the handler that catches it, so methods without
//! handlers stay without, which keeps the JIT's work on them small.

use std::collections::HashMap;

use crate::bytes::put_u16;
use crate::code::{Code, Insn, is_return, op};
use crate::error::{Error, Result};
use crate::frames::VType;
use crate::pool::Pool;
use crate::rewrite::{Method, Plan, ProbeKind, rewrite_class};

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

/// The probes of a method whose tracker state lives in local `slot` and its caller's trace in
/// local `slot + 1`.
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
    id: impl FnMut(&MethodRef<'_>) -> Option<u32>,
) -> Result<Outcome> {
    let mut timing = Timing {
        probes,
        id,
        refs: None,
        caught: None,
    };
    let done = rewrite_class(class, &mut timing)?;
    Ok(Outcome {
        bytes: done.bytes,
        instrumented: done.methods,
        failed: done.failed,
    })
}

/// The timing probe kind: entry, exit and caught probes.
struct Timing<'p, F> {
    probes: &'p Probes<'p>,
    id: F,
    /// The pool's references to `state`, `enter` and `exit`, once added.
    refs: Option<[u16; 3]>,
    /// The reference to `caught`, once a method with handlers needed it.
    caught: Option<u16>,
}

impl<F: FnMut(&MethodRef<'_>) -> Option<u32>> ProbeKind for Timing<'_, F> {
    fn wants(&mut self, _method: &Method<'_>, code: &[u8]) -> bool {
        // A lone `return` (empty constructors, empty methods): nothing to time.
        !(code.len() >= 9 && u32_at(code, 4) == 1)
    }

    fn plan(
        &mut self,
        pool: &mut Pool<'_>,
        method: &Method<'_>,
        code: &Code<'_>,
        insns: &[Insn],
    ) -> Result<Option<Plan>> {
        let Some(mid) = (self.id)(&MethodRef {
            class: method.class,
            name: method.name,
            descriptor: method.descriptor,
            index: method.index,
        }) else {
            return Ok(None);
        };
        let probes = self.probes;
        let mut add = |n: &[u8], d: &[u8]| pool.add_member(false, probes.tracker, n, d);
        let [state, enter, exit] = match self.refs {
            Some(r) => r,
            None => [
                add(probes.state, STATE_DESCRIPTOR)?,
                add(probes.enter, ENTER_DESCRIPTOR)?,
                add(probes.exit, EXIT_DESCRIPTOR)?,
            ],
        };
        self.refs = Some([state, enter, exit]);
        // The `caught` probe's constant is added only to classes with exception handlers: each
        // constant the class gains costs the JVM a search when it retransforms the class.
        let caught = match self.caught {
            Some(c) => c,
            None if !code.handlers.is_empty() => add(probes.caught, CAUGHT_DESCRIPTOR)?,
            None => 0,
        };
        if caught != 0 {
            self.caught = Some(caught);
        }
        let mid_operand = if mid <= 0x7fff {
            (op::SIPUSH, mid as u16)
        } else {
            (op::LDC_W, pool.add_integer(mid as i32)?)
        };
        // The tracker state and the caller's trace live in two new locals after the method's
        // own.
        let probe = Probe {
            slot: code.max_locals,
        };
        let invoke = |out: &mut Vec<u8>, method: u16| {
            out.push(op::INVOKESTATIC);
            put_u16(out, method);
        };
        let mut plan = Plan {
            // The entry probe pushes three words (state, number, cache entry); the exit probe
            // two over a return value; the caught probe three over the exception.
            extra_stack: 2,
            min_stack: if code.handlers.is_empty() { 3 } else { 4 },
            locals: vec![
                VType::object(crate::tracker::STATE_CLASS.as_bytes()),
                VType::Int,
            ],
            ..Plan::default()
        };
        let out = &mut plan.entry;
        invoke(out, state);
        out.push(op::DUP);
        probe.local(out, Access::StoreState);
        out.push(mid_operand.0);
        put_u16(out, mid_operand.1);
        // The method's entry in inline caches, as a constant: the JIT then adds it as one.
        out.extend_from_slice(&[op::BIPUSH, crate::tracker::ic_entry(mid as i32) as u8]);
        invoke(out, enter);
        probe.local(out, Access::StoreTrace);
        // At each handler's start, outside every handler's range (a probe that threw into a
        // handler covering it, such as a StackOverflowError into its own handler, would run
        // again and again); before each return.
        let mut caught_probe = Vec::new();
        probe.local(&mut caught_probe, Access::LoadState);
        probe.local(&mut caught_probe, Access::LoadTrace);
        caught_probe.push(mid_operand.0);
        put_u16(&mut caught_probe, mid_operand.1);
        invoke(&mut caught_probe, caught);
        let mut exit_probe = Vec::new();
        probe.local(&mut exit_probe, Access::LoadState);
        probe.local(&mut exit_probe, Access::LoadTrace);
        invoke(&mut exit_probe, exit);
        let at: HashMap<u32, usize> = insns.iter().enumerate().map(|(i, n)| (n.at, i)).collect();
        let mut starts: Vec<usize> = Vec::new();
        for h in &code.handlers {
            let i = *at
                .get(&h.handler)
                .ok_or_else(|| Error::new(h.handler as usize, "handler is not an instruction"))?;
            if !starts.contains(&i) {
                starts.push(i);
                plan.before(i, &caught_probe, false);
            }
        }
        for (i, insn) in insns.iter().enumerate() {
            if is_return(insn.op) {
                plan.before(i, &exit_probe, true);
            }
        }
        Ok(Some(plan))
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
