//! Owns the sampler's own stack walk, run in the SIGPROF handler inside the crash guard: from
//! the interrupted registers through native code (libraries' unwind tables), HotSpot's
//! stubs, compiled frames (their inlined methods from the debug information), interpreter
//! frames and entry frames (Java called from the VM), with the thread's last Java frame
//! anchor where the thread is in the VM or native code. Java frames come out as
//! AsyncGetCallTrace writes them (bytecode index, jmethodID); stubs and native code as
//! [`FRAME_STUB`] and [`FRAME_NATIVE`] frames holding a pc; a walk that breaks says why.
//!
//! Every step checks that the stack pointer stays inside the thread's stack, aligned and
//! moving towards its base; every value read from the JVM is checked before it is followed.

#![allow(unsafe_code)]

use super::hotspot::{Anchor, BlobKind, Entry, Layout, c_str_starts, plausible, u8_at, word};
use super::native::{self, Step};
use super::stubs;
use super::{CallFrame, FRAME_NATIVE, FRAME_STUB};

/// The registers the walk starts from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Regs {
    /// The interrupted instruction.
    pub pc: usize,
    /// The stack pointer.
    pub sp: usize,
    /// The frame pointer (rbp).
    pub fp: usize,
    /// The interpreter's `Method*` register at a method's entry.
    pub rbx: usize,
    /// The interpreter's sender stack pointer register.
    pub r13: usize,
    /// Where an adapter holds a return address for a few instructions.
    pub rax: usize,
}

/// Why a walk stopped before the end of the stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Failure {
    /// A pc in the code cache outside any code blob.
    UnknownBlob = 1,
    /// A compiled frame whose caller could not be found (in its prologue or epilogue).
    Compiled = 2,
    /// An interpreter frame not built yet, or being torn down.
    Interpreter = 3,
    /// A stub whose frame could not be unwound.
    Stub = 4,
    /// A native frame whose caller could not be found, with no Java frame to go on from.
    Native = 5,
    /// A pc neither in the code cache nor in any loaded library.
    UnknownCode = 6,
    /// The stack pointer left the thread's stack or went backwards.
    StackRange = 7,
    /// An entry frame without its call wrapper.
    EntryFrame = 8,
    /// The thread is unpacking deoptimized frames.
    Deoptimizing = 9,
    /// A Java method without a jmethodID.
    NoMethodId = 10,
    /// The walk faulted (the crash guard caught it).
    Crashed = 11,
}

impl Failure {
    /// The failure of a code (the `method` of a broken-walk frame).
    pub fn from_code(code: usize) -> Option<Failure> {
        Some(match code {
            1 => Failure::UnknownBlob,
            2 => Failure::Compiled,
            3 => Failure::Interpreter,
            4 => Failure::Stub,
            5 => Failure::Native,
            6 => Failure::UnknownCode,
            7 => Failure::StackRange,
            8 => Failure::EntryFrame,
            9 => Failure::Deoptimizing,
            10 => Failure::NoMethodId,
            11 => Failure::Crashed,
            _ => return None,
        })
    }

    /// Its pseudo-frame's name.
    pub fn name(self) -> &'static str {
        match self {
            Failure::UnknownBlob => "<unknown code blob>",
            Failure::Compiled => "<not walkable compiled frame>",
            Failure::Interpreter => "<not walkable interpreter frame>",
            Failure::Stub => "<not walkable stub>",
            Failure::Native => "<not walkable native frame>",
            Failure::UnknownCode => "<unknown code>",
            Failure::StackRange => "<stack out of range>",
            Failure::EntryFrame => "<not walkable entry frame>",
            Failure::Deoptimizing => "<deoptimizing>",
            Failure::NoMethodId => "<method without jmethodID>",
            Failure::Crashed => "<walk crashed>",
        }
    }

    /// Every failure, for the counters.
    pub const ALL: [Failure; 11] = [
        Failure::UnknownBlob,
        Failure::Compiled,
        Failure::Interpreter,
        Failure::Stub,
        Failure::Native,
        Failure::UnknownCode,
        Failure::StackRange,
        Failure::EntryFrame,
        Failure::Deoptimizing,
        Failure::NoMethodId,
        Failure::Crashed,
    ];
}

/// A walk's progress, kept outside the guarded call so that a walk the guard abandons
/// still tells how many frames it wrote (the walk stores it, and its frames, with volatile
/// writes: never after a read that faulted).
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Frames written.
    pub depth: usize,
    /// Java frames among them.
    pub java: usize,
    /// Frames written before the first Java frame (native and stub frames on top).
    pub before_java: usize,
    /// Why the walk stopped early, if it did.
    pub failure: Option<Failure>,
}

/// What the walk needs besides the registers.
pub struct Walk<'a> {
    /// HotSpot's layout.
    pub layout: &'a Layout,
    /// The thread's JNI environment (0: a thread the JVM runs no Java on).
    pub env: usize,
    /// Whether native and stub frames are written (they are walked through either way).
    pub native: bool,
    /// Where the frames go.
    pub out: &'a mut [CallFrame],
    /// The most Java frames wanted (`depth=`; native and stub frames above them come in
    /// addition, up to the room of `out`).
    pub java_depth: usize,
    /// How far the walk got.
    pub progress: &'a mut Progress,
    /// The end of the thread's stack (known once the walk started).
    high: usize,
    /// The thread's JavaThread (0 for none; known once the walk started).
    thread: usize,
}

impl<'a> Walk<'a> {
    /// A walk of the thread with JNI environment `env` (0: one the JVM runs no Java on)
    /// into `out`, `java_depth` Java frames at most, native and stub frames written if
    /// `native`.
    pub fn new(
        layout: &'a Layout,
        env: usize,
        native: bool,
        out: &'a mut [CallFrame],
        java_depth: usize,
        progress: &'a mut Progress,
    ) -> Walk<'a> {
        Walk {
            layout,
            env,
            native,
            out,
            java_depth,
            progress,
            high: 0,
            thread: 0,
        }
    }
}

/// The farthest a walk looks above the stack pointer of a thread whose stack it does not
/// know (one the JVM runs no Java on).
const UNKNOWN_STACK: usize = 8 << 20;
/// The largest interpreter frame below its frame pointer (expression stack and monitors).
const MAX_INTERPRETER_FRAME: usize = 256 << 10;

/// x86-64 instruction bytes the walk looks at.
const PUSH_RBP: u8 = 0x55;
const POP_RBP: u8 = 0x5d;
const RET: u8 = 0xc3;

/// Whether the code at `at` starts with `push rbp; mov rbp, rsp` (either encoding).
fn builds_frame(at: usize) -> bool {
    u8_at(at) == PUSH_RBP
        && u8_at(at.wrapping_add(1)) == 0x48
        && matches!(
            (u8_at(at.wrapping_add(2)), u8_at(at.wrapping_add(3))),
            (0x89, 0xe5) | (0x8b, 0xec)
        )
}

/// Whether the instruction at `pc` is one of the safepoint poll sequences between a
/// compiled method's `pop rbp` and its `ret` (the frame is gone, the return address on top).
fn in_poll_return(pc: usize) -> bool {
    let b = |i: usize| u8_at(pc.wrapping_add(i));
    let before = u8_at(pc.wrapping_sub(1));
    // JDK 17+: cmp rsp, [r15 + poll word]; ja slow path; ret
    (b(0) == 0x49 && b(1) == 0x3b && matches!(b(2), 0x67 | 0xa7) && before == POP_RBP)
        || (b(0) == 0x0f && b(1) == 0x87 && b(6) == RET)
        // JDK 11: mov r10, [r15 + polling page]; test eax, [r10]; ret
        || (b(0) == 0x4d && b(1) == 0x8b && b(2) == 0x97 && before == POP_RBP)
        || (b(0) == 0x41 && b(1) == 0x85 && b(2) == 0x02 && b(3) == RET)
}

/// How far a compiled method's prologue got.
enum Setup {
    /// Nothing pushed yet: the return address on top of the stack.
    None,
    /// `push rbp` done, the frame not allocated.
    Pushed,
    /// The frame allocated (`sub rsp, size`).
    Allocated,
}

/// How far the prologue that starts at `entry` got before `pc`: HotSpot's compiled methods
/// set up their frame with `push rbp`, then (with PreserveFramePointer) `mov rbp, rsp`, then
/// `sub rsp, size`, after an optional stack bang and class initialization check that move
/// no stack pointer.
fn frame_setup(entry: usize, pc: usize) -> Setup {
    let sub = |q: usize| {
        u8_at(q) == 0x48
            && u8_at(q.wrapping_add(1)) & 0xfd == 0x81
            && u8_at(q.wrapping_add(2)) == 0xec
    };
    let end = pc.min(entry.saturating_add(64));
    let mut at = entry;
    while at.saturating_add(4) <= end {
        if u8_at(at) == PUSH_RBP {
            let next = at + 1;
            let mov = u8_at(next) == 0x48
                && matches!(
                    (u8_at(next + 1), u8_at(next + 2)),
                    (0x89, 0xe5) | (0x8b, 0xec)
                );
            if sub(next) || mov {
                let sub_at = if mov { next + 3 } else { next };
                return if pc > sub_at && sub(sub_at) {
                    Setup::Allocated
                } else {
                    Setup::Pushed
                };
            }
        }
        at += 1;
    }
    if pc > entry && u8_at(pc - 1) == PUSH_RBP {
        return Setup::Pushed;
    }
    Setup::None
}

/// Whether `at` follows a call instruction (a return address): `call rel32`, `call reg`,
/// `call [rip + disp32]`.
fn after_call(at: usize) -> bool {
    let b = |back: usize| u8_at(at.wrapping_sub(back));
    b(5) == 0xe8
        || (b(2) == 0xff && b(1) & 0x38 == 0x10)
        || (b(3) == 0x41 && b(2) == 0xff && b(1) & 0x38 == 0x10)
        || (b(6) == 0xff && b(5) == 0x15)
}

enum Next {
    /// Go on from these registers.
    Go(usize, usize, usize),
    /// Go on from the registers a signal interrupted (a pc that is no return address).
    Interrupted(Regs),
    /// The stack ends here.
    End,
    /// The walk breaks.
    Fail(Failure),
}

impl Walk<'_> {
    fn emit(&mut self, bci: i32, method: usize) -> bool {
        let depth = self.progress.depth;
        let Some(slot) = self.out.get_mut(depth) else {
            return false;
        };
        let frame = CallFrame {
            bci,
            method: method as super::sys::jmethodID,
        };
        // SAFETY: `slot` and `progress` are valid for writes; volatile keeps each store
        // before the next read of JVM memory (which may fault and abandon the walk).
        unsafe {
            std::ptr::write_volatile(slot, frame);
            std::ptr::write_volatile(&mut self.progress.depth, depth + 1);
        }
        true
    }

    fn emit_java(&mut self, bci: i32, method_id: usize) -> bool {
        let (java, depth) = (self.progress.java, self.progress.depth);
        if java >= self.java_depth {
            return false;
        }
        let written = self.emit(bci, method_id);
        if written {
            // SAFETY: as in `emit`.
            unsafe {
                if java == 0 {
                    std::ptr::write_volatile(&mut self.progress.before_java, depth);
                }
                std::ptr::write_volatile(&mut self.progress.java, java + 1);
            }
        }
        written
    }

    /// Whether the walk has all the frames it wants: `java_depth` Java frames, or as many
    /// frames as `out` holds.
    fn full(&self) -> bool {
        self.progress.depth >= self.out.len() || self.progress.java >= self.java_depth
    }

    /// Walks from `regs`; the outcome is in `progress`.
    pub fn run(&mut self, regs: &Regs) {
        let failure = self.walk(regs).err();
        // SAFETY: as in `emit`.
        unsafe { std::ptr::write_volatile(&mut self.progress.failure, failure) };
    }

    fn walk(&mut self, regs: &Regs) -> Result<(), Failure> {
        let mut regs = *regs;
        let layout = self.layout;
        let thread = if self.env != 0 {
            layout.thread_of(self.env)
        } else {
            0
        };
        let (low, high) = if thread != 0 {
            layout.stack_of(thread)
        } else {
            (regs.sp, regs.sp.saturating_add(UNKNOWN_STACK))
        };
        self.high = high;
        self.thread = thread;
        let in_stack = |sp: usize| sp >= low && sp < high && sp & 7 == 0;
        let mut anchor = if thread != 0 {
            layout
                .thread_anchor(thread)
                .filter(|a| in_stack(a.sp) && a.sp >= regs.sp)
        } else {
            None
        };
        let (mut pc, mut sp, mut fp) = (regs.pc, regs.sp, regs.fp);
        let mut top = true;
        let mut steps = 0;
        let limit = self.out.len() * 4 + 256;
        loop {
            if self.full() {
                return Ok(());
            }
            steps += 1;
            if steps > limit {
                return Ok(());
            }
            if !in_stack(sp) {
                return Err(Failure::StackRange);
            }
            let next = if layout.in_code_cache(pc) {
                let lookup = if top { pc } else { pc.wrapping_sub(1) };
                let Some(blob) = layout.find_blob(lookup) else {
                    match anchor.take().filter(|a| a.sp >= sp) {
                        Some(a) => {
                            (pc, sp, fp) = frame_of(a);
                            top = false;
                            continue;
                        }
                        None => return Err(Failure::UnknownBlob),
                    }
                };
                let kind = layout.kind(blob, pc);
                // The thread's anchor is the reliable start of its Java frames: taken at the
                // first blob met, unless the interrupted pc is in a stub (walked first, as
                // its own top frame), or the walk went past it already.
                if !(top && kind == BlobKind::Stub)
                    && let Some(a) = anchor.take()
                    && a.sp >= sp
                    && frame_of(a) != (pc, sp, fp)
                {
                    (pc, sp, fp) = frame_of(a);
                    top = false;
                    continue;
                }
                match kind {
                    BlobKind::Nmethod => self.compiled(blob, pc, sp, fp, top, high),
                    BlobKind::Interpreter => self.interpreted(thread, &regs, sp, fp, top),
                    BlobKind::Stub if layout.is_entry_return(pc) => {
                        match layout.entry_anchor(fp) {
                            Entry::Broken => Next::Fail(Failure::EntryFrame),
                            // The thread's first Java frame: its stack ends here for us.
                            Entry::First => Next::End,
                            Entry::Saved(a) => {
                                if self.native {
                                    // Through the call stub into the VM and the native code
                                    // that called Java, the saved anchor as the fallback.
                                    anchor = Some(a);
                                    self.emit(FRAME_STUB, pc);
                                    match native::by_frame_pointer(sp, fp, high) {
                                        Step::Next { pc, sp, fp } => Next::Go(pc, sp, fp),
                                        _ => Next::Go(frame_of(a).0, a.sp, frame_of(a).2),
                                    }
                                } else {
                                    let (pc, sp, fp) = frame_of(a);
                                    Next::Go(pc, sp, fp)
                                }
                            }
                        }
                    }
                    BlobKind::Stub => self.stub(blob, pc, sp, fp, high, top.then_some(&regs)),
                }
            } else {
                let module = native::modules().and_then(|m| m.find(pc));
                match module {
                    None => {
                        // The interrupted pc in a library loaded since the table was last
                        // built (a JNI library, before the next drain refreshes it): it is
                        // kept as the top frame, named at the drain, and AsyncGetCallTrace's
                        // Java frames follow it.
                        if self.native && top {
                            self.emit(FRAME_NATIVE, pc);
                        }
                        Next::Fail(Failure::UnknownCode)
                    }
                    Some(module) => {
                        if self.native {
                            self.emit(FRAME_NATIVE, pc);
                        }
                        match native::unwind(module, pc, sp, fp, !top, high) {
                            Step::Next { pc, sp, fp } => Next::Go(pc, sp, fp),
                            Step::Interrupted(regs) => Next::Interrupted(regs),
                            Step::End => Next::End,
                            Step::Fail => Next::Fail(Failure::Native),
                        }
                    }
                }
            };
            match next {
                Next::Interrupted(interrupted) => {
                    if interrupted.sp <= sp {
                        return Err(Failure::StackRange);
                    }
                    regs = interrupted;
                    (pc, sp, fp) = (regs.pc, regs.sp, regs.fp);
                    // The interrupted code is walked as a top frame is.
                    top = true;
                    continue;
                }
                Next::Go(next_pc, next_sp, next_fp) => {
                    if next_sp < sp || (next_sp == sp && next_pc == pc) {
                        return Err(Failure::StackRange);
                    }
                    // Native frames never reach past the last Java frame: a walk that does
                    // went wrong, and the anchor says where Java code resumes.
                    if let Some(a) = anchor
                        && next_sp > a.sp
                        && !layout.in_code_cache(next_pc)
                    {
                        anchor = None;
                        (pc, sp, fp) = frame_of(a);
                    } else {
                        (pc, sp, fp) = (next_pc, next_sp, next_fp);
                    }
                }
                Next::End => match anchor.take().filter(|a| a.sp >= sp) {
                    Some(a) => (pc, sp, fp) = frame_of(a),
                    None => return Ok(()),
                },
                Next::Fail(failure) => match anchor.take().filter(|a| a.sp >= sp) {
                    // A native walk that breaks before the Java frames goes on from them.
                    Some(a) => (pc, sp, fp) = frame_of(a),
                    None => return Err(failure),
                },
            }
            top = false;
        }
    }

    /// A compiled frame: its inlined methods, then its caller.
    fn compiled(
        &mut self,
        nm: usize,
        pc: usize,
        sp: usize,
        fp: usize,
        top: bool,
        high: usize,
    ) -> Next {
        let next = self.compiled_caller(nm, pc, sp, fp, top);
        if !top {
            return next;
        }
        // Interrupted anywhere in the method, the way its code says to unwind is checked,
        // and the others tried if it leads nowhere (an epilogue or prologue not recognized).
        let checked = |next: &Next| match *next {
            Next::Go(caller, caller_sp, _) => {
                caller_sp > sp
                    && caller_sp <= high
                    && self.is_return_address(caller)
                    && self.caller_returns(caller, caller_sp, high)
            }
            _ => false,
        };
        if checked(&next) {
            return next;
        }
        let alternatives = [
            self.by_frame_size(nm, sp),
            Next::Go(word(sp), sp.wrapping_add(8), fp),
            Next::Go(word(sp.wrapping_add(8)), sp.wrapping_add(16), word(sp)),
        ];
        match alternatives.into_iter().find(|next| checked(next)) {
            Some(found) => {
                if self.progress.java == 0 {
                    self.method_frame(self.layout.nmethod_method(nm));
                }
                found
            }
            None => next,
        }
    }

    fn compiled_caller(&mut self, nm: usize, pc: usize, sp: usize, fp: usize, top: bool) -> Next {
        let layout = self.layout;
        let method = layout.nmethod_method(nm);
        let mut pc = pc;
        if pc >= layout.stub_begin(nm) {
            if top {
                // The nmethod's stub section (a call stub, the safepoint poll's slow path):
                // no frame of its own, the return address on top.
                return Next::Go(word(sp), sp.wrapping_add(8), fp);
            }
            // A return address patched to the deoptimization handler: the frame saved its
            // pc. Else a call from the stub section (the exception handler's call into a
            // runtime stub) in the method's own, complete frame.
            let original = layout.original_pc(nm, sp);
            if original < layout.code_begin(nm) || original >= layout.stub_begin(nm) {
                self.method_frame(method);
                return self.by_frame_size(nm, sp);
            }
            pc = original;
        }
        if top && pc < layout.frame_complete(nm) {
            return self.prologue(nm, method, pc, sp, fp);
        }
        if top {
            let b = u8_at(pc);
            if b == RET || in_poll_return(pc) {
                self.method_frame(method);
                return Next::Go(word(sp), sp.wrapping_add(8), fp);
            }
            if b == POP_RBP {
                self.method_frame(method);
                return Next::Go(word(sp.wrapping_add(8)), sp.wrapping_add(16), word(sp));
            }
        }
        if let Err(failure) = self.java_frames(nm, method, pc) {
            return Next::Fail(failure);
        }
        self.by_frame_size(nm, sp)
    }

    /// A compiled frame interrupted in its prologue: before `push rbp` the return address
    /// is on top of the stack, after it one word below, and once `sub rsp` made the frame
    /// its size applies.
    fn prologue(&mut self, nm: usize, method: usize, pc: usize, sp: usize, fp: usize) -> Next {
        let entry = self.layout.verified_entry(nm);
        self.method_frame(method);
        let start = if pc < entry {
            // The unverified entry (the inline cache's check) comes before the verified one.
            return Next::Go(word(sp), sp.wrapping_add(8), fp);
        } else {
            entry
        };
        match frame_setup(start, pc) {
            Setup::None => Next::Go(word(sp), sp.wrapping_add(8), fp),
            Setup::Pushed => Next::Go(word(sp.wrapping_add(8)), sp.wrapping_add(16), word(sp)),
            Setup::Allocated => self.by_frame_size(nm, sp),
        }
    }

    /// The caller of a compiled or stub frame of known size.
    fn by_frame_size(&self, blob: usize, sp: usize) -> Next {
        let size = self.layout.frame_size(blob);
        if size == 0 {
            return Next::Fail(Failure::Compiled);
        }
        let sender = sp.wrapping_add(size * 8);
        if sender > self.high || sender < sp {
            return Next::Fail(Failure::StackRange);
        }
        Next::Go(
            word(sender.wrapping_sub(8)),
            sender,
            word(sender.wrapping_sub(16)),
        )
    }

    /// The method of a compiled frame alone (where no debug information applies).
    fn method_frame(&mut self, method: usize) {
        let id = self.layout.method_id(method);
        if id != 0 {
            self.emit_java(-1, id);
        }
    }

    /// The Java frames of a compiled frame at `pc`: its inlined methods, innermost first.
    fn java_frames(&mut self, nm: usize, method: usize, pc: usize) -> Result<(), Failure> {
        let layout = self.layout;
        if layout.is_native(method) {
            let id = layout.method_id(method);
            if id == 0 {
                return Err(Failure::NoMethodId);
            }
            self.emit_java(-3, id);
            return Ok(());
        }
        let Some(scopes) = layout.scopes(nm, pc) else {
            let id = layout.method_id(method);
            if id == 0 {
                return Err(Failure::NoMethodId);
            }
            self.emit_java(-1, id);
            return Ok(());
        };
        let mut emitted = 0;
        for scope in scopes {
            if self.full() {
                break;
            }
            let id = layout.method_id(scope.method);
            if id == 0 {
                return Err(Failure::NoMethodId);
            }
            self.emit_java(scope.bci, id);
            emitted += 1;
        }
        if emitted == 0 {
            return Err(Failure::NoMethodId);
        }
        Ok(())
    }

    /// An interpreter frame: its method and bytecode index, then its caller.
    fn interpreted(&mut self, thread: usize, regs: &Regs, sp: usize, fp: usize, top: bool) -> Next {
        let layout = self.layout;
        // Interpreter frames being made from a deoptimized frame (by the deoptimization
        // blob's code, on top of the stack) are not walkable until they are complete.
        if top && thread != 0 && layout.deoptimizing(thread) {
            return Next::Fail(Failure::Deoptimizing);
        }
        let built = plausible(fp, 8)
            && fp > sp
            && fp.saturating_add(16) <= self.high
            && fp - sp <= MAX_INTERPRETER_FRAME
            && fp - sp >= layout.interpreter_slots_bytes();
        if built {
            let (method, bcp) = layout.interpreter_frame(fp);
            let id = layout.method_id(method);
            if id != 0 {
                let bci = if layout.is_native(method) {
                    -3
                } else {
                    layout.bci_of(method, bcp)
                };
                self.emit_java(bci, id);
                return Next::Go(
                    word(fp.wrapping_add(8)),
                    layout.interpreter_sender_sp(fp),
                    word(fp),
                );
            }
        }
        if top {
            return self.interpreter_entry(regs, sp, fp);
        }
        Next::Fail(Failure::Interpreter)
    }

    /// The top frame in the interpreter while a frame is built (at a method's entry: the
    /// Method* in rbx, the sender's stack pointer in r13 until it is pushed) or torn down (the
    /// return address on top of the stack).
    fn interpreter_entry(&mut self, regs: &Regs, sp: usize, fp: usize) -> Next {
        let layout = self.layout;
        let fp_ok = plausible(fp, 8)
            && fp >= sp
            && fp - sp <= MAX_INTERPRETER_FRAME
            && fp.saturating_add(16) <= self.high;
        let method_pushed = fp_ok && fp - sp >= layout.method_slot_bytes();
        let method = if method_pushed {
            layout.interpreter_frame(fp).0
        } else {
            regs.rbx
        };
        let id = layout.method_id(method);
        if fp_ok && fp - sp >= 8 && id != 0 {
            // Past `enter` and the push of the sender's stack pointer.
            self.emit_java(-1, id);
            return Next::Go(
                word(fp.wrapping_add(8)),
                layout.interpreter_sender_sp(fp),
                word(fp),
            );
        }
        if fp == sp && id != 0 && regs.r13 > sp {
            // Right after `enter`.
            self.emit_java(-1, id);
            return Next::Go(word(fp.wrapping_add(8)), regs.r13, word(fp));
        }
        if id != 0 && regs.r13 > sp {
            // Before `enter`: the locals are being made room for, the return address on top.
            self.emit_java(-1, id);
            return Next::Go(word(sp), regs.r13, fp);
        }
        // A frame torn down (its method returning): the return address on top.
        Next::Go(word(sp), sp.wrapping_add(8), fp)
    }

    /// A stub frame (named at the drain from its pc), then its caller: the first of the ways
    /// such a frame can be unwound, in the order its code makes likely, that leads to a
    /// return address.
    fn stub(
        &mut self,
        blob: usize,
        pc: usize,
        sp: usize,
        fp: usize,
        high: usize,
        top: Option<&Regs>,
    ) -> Next {
        let layout = self.layout;
        if self.native {
            self.emit(FRAME_STUB, pc);
        }
        // The blobs that turn a compiled frame into interpreter frames: once the thread holds
        // the frames to unpack, the stack below them is being rebuilt.
        if self.thread != 0 && layout.deoptimizing(self.thread) {
            let name = layout.blob_name(blob);
            if c_str_starts(name, b"Deoptimization") || c_str_starts(name, b"UncommonTrap") {
                return Next::Fail(Failure::Deoptimizing);
            }
        }
        let start = stubs::index()
            .and_then(|index| index.find(pc))
            .map_or_else(|| layout.code_begin(blob), |(start, _)| start);
        let frameless = (word(sp), sp.wrapping_add(8), fp);
        // An adapter moves the stack pointer before it jumps on: the caller's is in r13
        // then (compiled code uses r13 as it likes: the callers' frames decide).
        let adapter_sp = top
            .filter(|regs| regs.r13 > sp && regs.r13 - sp < 1 << 16)
            .map(|regs| (word(sp), regs.r13, fp));
        let chain =
            (plausible(fp, 8) && fp >= sp && fp.saturating_add(16) <= high && fp - sp < 1 << 16)
                .then(|| (word(fp.wrapping_add(8)), fp.wrapping_add(16), word(fp)));
        let pushed = (word(sp.wrapping_add(8)), sp.wrapping_add(16), word(sp));
        // Past the prologue, a stub or runtime blob with a frame size is unwound by it: the
        // pc is a return address into it (it called out), or after its frame is complete.
        let sized = (layout.frame_size(blob) > 0
            && (top.is_none()
                || (layout.frame_complete_known(blob) && pc >= layout.frame_complete(blob))))
        .then(|| match self.by_frame_size(blob, sp) {
            Next::Go(pc, sp, fp) => Some((pc, sp, fp)),
            _ => None,
        })
        .flatten();
        // In an adapter, the return address may sit in rax for a few instructions.
        let held = top.map(|regs| {
            let caller_sp = if regs.r13 > sp && regs.r13 - sp < 1 << 16 {
                regs.r13
            } else {
                sp
            };
            (regs.rax, caller_sp, fp)
        });
        let builds = builds_frame(start);
        let candidates: [Option<(usize, usize, usize)>; 6] = if pc == start || u8_at(pc) == RET {
            [Some(frameless), sized, chain, adapter_sp, held, None]
        } else if builds && pc == start.wrapping_add(1) {
            [Some(pushed), sized, Some(frameless), adapter_sp, held, None]
        } else if builds {
            [chain, sized, Some(frameless), adapter_sp, held, None]
        } else {
            [sized, Some(frameless), adapter_sp, chain, held, None]
        };
        for (caller, caller_sp, caller_fp) in candidates.into_iter().flatten() {
            if caller_sp > sp
                && caller_sp <= high
                && self.is_return_address(caller)
                && self.caller_returns(caller, caller_sp, high)
            {
                return Next::Go(caller, caller_sp, caller_fp);
            }
        }
        // The stub pushed what its kind of frame does not say: the return address is the
        // first word above the stack pointer that returns to a call site of compiled code.
        if let Some(at) = self.scan_for_return(sp, high) {
            return Next::Go(word(at), at.wrapping_add(8), fp);
        }
        Next::Fail(Failure::Stub)
    }

    /// Whether a compiled frame at `pc` with stack pointer `sp` (a stub's caller, as one way of
    /// unwinding the stub has it) returns to code in turn: a check of that way.
    fn caller_returns(&self, pc: usize, sp: usize, high: usize) -> bool {
        let layout = self.layout;
        let Some(nm) = layout.find_blob(pc.wrapping_sub(1)) else {
            return true;
        };
        if layout.kind(nm, pc) != BlobKind::Nmethod {
            return true;
        }
        let size = layout.frame_size(nm);
        let sender = sp.wrapping_add(size * 8);
        size > 0 && sender <= high && self.is_return_address(word(sender.wrapping_sub(8)))
    }

    /// The first of the 16 words above `sp` that holds a return address to a call site of an
    /// nmethod whose frame (by its size) returns to code in turn.
    fn scan_for_return(&self, sp: usize, high: usize) -> Option<usize> {
        let layout = self.layout;
        (1..16)
            .map(|i| sp.wrapping_add(i * 8))
            .take_while(|&at| at < high)
            .find(|&at| {
                let pc = word(at);
                layout.in_code_cache(pc)
                    && after_call(pc)
                    && layout
                        .find_blob(pc.wrapping_sub(1))
                        .is_some_and(|nm| layout.kind(nm, pc) == BlobKind::Nmethod)
                    && self.caller_returns(pc, at.wrapping_add(8), high)
            })
    }

    /// Whether `pc` is a plausible return address: the interpreter (whose calls return to
    /// its return entries), or code (in the code cache or a library) just after a call.
    fn is_return_address(&self, pc: usize) -> bool {
        let layout = self.layout;
        if layout.in_interpreter(pc) {
            return true;
        }
        let code = if layout.in_code_cache(pc) {
            layout.find_blob(pc.wrapping_sub(1)).is_some()
        } else {
            native::modules().is_some_and(|m| m.find(pc.wrapping_sub(1)).is_some())
        };
        code && after_call(pc)
    }
}

/// The registers of an anchor's frame.
fn frame_of(anchor: Anchor) -> (usize, usize, usize) {
    let pc = if anchor.pc != 0 {
        anchor.pc
    } else {
        word(anchor.sp.wrapping_sub(8))
    };
    (pc, anchor.sp, anchor.fp)
}
