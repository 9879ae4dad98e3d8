//! Owns the walk through native code: the table of loaded libraries (their code and their
//! `.eh_frame_hdr` / `.eh_frame` unwind tables), rebuilt outside the handler when libraries
//! come and go, and one unwinding step from a native frame to its caller, by the library's
//! DWARF call frame information (gimli, with in-line storage: no allocation, no lock) or by
//! the frame pointer where a library has none. (Native frames are named at the drain by
//! `crate::code_names`, from the libraries' ELF symbols.)

#![allow(unsafe_code)]

use std::ffi::{c_int, c_void};
use std::sync::Mutex;

use gimli::{
    BaseAddresses, CfaRule, EhFrame, EhFrameHdr, NativeEndian, Register, RegisterRule,
    UnwindContext, UnwindContextStorage, UnwindSection, UnwindTableRow, X86_64,
};

use super::hotspot::{plausible, word};
use super::publish::Published;

/// The most a native frame may span (a bigger step is taken as a broken walk).
const MAX_FRAME: usize = 1 << 20;

/// A loaded library's executable code and unwind tables.
#[derive(Debug, Clone, Copy)]
pub struct Module {
    /// Where its executable segment starts.
    pub low: usize,
    /// Where its executable segment ends.
    pub high: usize,
    /// Its `.eh_frame_hdr` (0 when it has none) and that section's length.
    eh_frame_hdr: usize,
    eh_frame_hdr_len: usize,
    /// Its `.eh_frame`, up to the end of the segment that holds it.
    eh_frame: usize,
    eh_frame_end: usize,
}

/// The loaded libraries, by address.
#[derive(Debug, Default)]
pub struct Modules {
    list: Box<[Module]>,
}

impl Modules {
    /// The library whose code holds `pc`.
    pub fn find(&self, pc: usize) -> Option<&Module> {
        let i = self.list.partition_point(|m| m.low <= pc);
        let m = self.list.get(i.checked_sub(1)?)?;
        (pc < m.high).then_some(m)
    }
}

static MODULES: Published<Modules> = Published::new();

/// The dl_iterate_phdr counters of loads and unloads when the table was last built.
static SEEN: Mutex<(u64, u64)> = Mutex::new((u64::MAX, u64::MAX));

/// The published table of libraries. In the signal handler (or inside `publish::reading`)
/// only.
pub fn modules() -> Option<&'static Modules> {
    MODULES.get()
}

struct Collected {
    modules: Vec<Module>,
    adds: u64,
    subs: u64,
}

extern "C" fn collect(info: *mut libc::dl_phdr_info, size: usize, data: *mut c_void) -> c_int {
    // SAFETY: dl_iterate_phdr passes a valid info of at least `size` bytes and our `data`.
    let (info, collected) = unsafe { (&*info, &mut *data.cast::<Collected>()) };
    if size >= std::mem::size_of::<libc::dl_phdr_info>() {
        collected.adds = info.dlpi_adds;
        collected.subs = info.dlpi_subs;
    }
    if info.dlpi_phdr.is_null() {
        return 0;
    }
    // SAFETY: dlpi_phdr points to dlpi_phnum program headers of a loaded object.
    let headers =
        unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) };
    let bias = info.dlpi_addr as usize;
    let mut hdr = (0, 0);
    for h in headers {
        if h.p_type == libc::PT_GNU_EH_FRAME {
            hdr = (bias + h.p_vaddr as usize, h.p_memsz as usize);
        }
    }
    let (eh_frame, eh_frame_end) = if hdr.0 != 0 {
        eh_frame_of(hdr.0, hdr.1, headers, bias)
    } else {
        (0, 0)
    };
    for h in headers {
        if h.p_type == libc::PT_LOAD && h.p_flags & libc::PF_X != 0 && h.p_memsz > 0 {
            let low = bias + h.p_vaddr as usize;
            collected.modules.push(Module {
                low,
                high: low + h.p_memsz as usize,
                eh_frame_hdr: if eh_frame != 0 { hdr.0 } else { 0 },
                eh_frame_hdr_len: hdr.1,
                eh_frame,
                eh_frame_end,
            });
        }
    }
    0
}

/// Where the `.eh_frame` an `.eh_frame_hdr` points to starts, and the end of the loaded
/// segment that holds it: (0, 0) when the header cannot be read.
fn eh_frame_of(
    hdr: usize,
    len: usize,
    headers: &[libc::Elf64_Phdr],
    bias: usize,
) -> (usize, usize) {
    // SAFETY: the header lies in a loaded, readable segment of the object (PT_GNU_EH_FRAME).
    let section = unsafe { std::slice::from_raw_parts(hdr as *const u8, len) };
    let bases = BaseAddresses::default().set_eh_frame_hdr(hdr as u64);
    let Ok(parsed) = EhFrameHdr::new(section, NativeEndian).parse(&bases, 8) else {
        return (0, 0);
    };
    let gimli::Pointer::Direct(eh_frame) = parsed.eh_frame_ptr() else {
        return (0, 0);
    };
    let eh_frame = eh_frame as usize;
    let end = headers
        .iter()
        .filter(|h| h.p_type == libc::PT_LOAD)
        .map(|h| {
            (
                bias + h.p_vaddr as usize,
                bias + (h.p_vaddr + h.p_memsz) as usize,
            )
        })
        .find(|&(low, high)| (low..high).contains(&eh_frame))
        .map_or(0, |(_, high)| high);
    if end == 0 { (0, 0) } else { (eh_frame, end) }
}

/// Rebuilds the table of libraries if one was loaded or unloaded since the last call (and
/// frees tables no handler reads any more). Not in the signal handler.
pub fn refresh() {
    let mut collected = Collected {
        modules: Vec::new(),
        adds: 0,
        subs: 0,
    };
    // SAFETY: dl_iterate_phdr calls `collect` once per loaded object with our `collected`.
    unsafe { libc::dl_iterate_phdr(Some(collect), (&mut collected as *mut Collected).cast()) };
    let Ok(mut seen) = SEEN.lock() else {
        return;
    };
    if *seen != (collected.adds, collected.subs) {
        *seen = (collected.adds, collected.subs);
        collected.modules.sort_by_key(|m| m.low);
        MODULES.publish(Box::new(Modules {
            list: collected.modules.into_boxed_slice(),
        }));
    } else {
        MODULES.reclaim();
    }
}

/// The storage of the DWARF unwinder: in-line, small (x86-64 code saves at most the six
/// callee-saved registers and the return address), on the handler's stack.
struct Small;

impl UnwindContextStorage<usize> for Small {
    type Rules = [(Register, RegisterRule<usize>); 12];
    type Stack = [UnwindTableRow<usize, Self>; 3];
}

/// One step of a native walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The caller's pc, stack pointer and frame pointer.
    Next {
        /// The caller's pc (a return address).
        pc: usize,
        /// The caller's stack pointer.
        sp: usize,
        /// The caller's frame pointer.
        fp: usize,
    },
    /// A signal handler's frame was left: the registers of the code the signal interrupted
    /// (its pc is that of an instruction, not a return address).
    Interrupted(super::walker::Regs),
    /// The outermost frame (its return address is undefined).
    End,
    /// The frame cannot be unwound.
    Fail,
}

/// Unwinds the native frame at `pc` (`sp`, `fp`) of `module`, on a stack that ends at
/// `high`, to its caller. `returned`: `pc` is a return address (the call is just before it),
/// not the interrupted instruction.
/// In the signal handler, inside the crash guard.
pub fn unwind(
    module: &Module,
    pc: usize,
    sp: usize,
    fp: usize,
    returned: bool,
    high: usize,
) -> Step {
    // The kernel's signal frame: the return address of a signal handler is the signal
    // trampoline, and the registers of the interrupted code are in the ucontext above it.
    if returned && is_sigreturn(pc) {
        return interrupted(sp, high);
    }
    if module.eh_frame_hdr == 0 {
        return by_frame_pointer(sp, fp, high);
    }
    let lookup = if returned { pc.wrapping_sub(1) } else { pc };
    // SAFETY: the sections lie in the library's loaded segments (from its program headers);
    // a library unloaded since the table was built faults inside the crash guard.
    let (hdr, frame) = unsafe {
        (
            std::slice::from_raw_parts(module.eh_frame_hdr as *const u8, module.eh_frame_hdr_len),
            std::slice::from_raw_parts(
                module.eh_frame as *const u8,
                module.eh_frame_end.saturating_sub(module.eh_frame),
            ),
        )
    };
    let bases = BaseAddresses::default()
        .set_eh_frame_hdr(module.eh_frame_hdr as u64)
        .set_eh_frame(module.eh_frame as u64)
        .set_text(module.low as u64);
    let Ok(parsed) = EhFrameHdr::new(hdr, NativeEndian).parse(&bases, 8) else {
        return by_frame_pointer(sp, fp, high);
    };
    let Some(table) = parsed.table() else {
        return by_frame_pointer(sp, fp, high);
    };
    let eh_frame = EhFrame::new(frame, NativeEndian);
    let mut context = UnwindContext::<usize, Small>::new_in();
    let row = match table.unwind_info_for_address(
        &eh_frame,
        &bases,
        &mut context,
        lookup as u64,
        EhFrame::cie_from_offset,
    ) {
        Ok(row) => row,
        Err(gimli::Error::NoUnwindInfoForAddress) => return by_frame_pointer(sp, fp, high),
        Err(_) => return Step::Fail,
    };
    let cfa = match *row.cfa() {
        CfaRule::RegisterAndOffset { register, offset } if register == X86_64::RSP => {
            sp.wrapping_add_signed(offset as isize)
        }
        CfaRule::RegisterAndOffset { register, offset } if register == X86_64::RBP => {
            fp.wrapping_add_signed(offset as isize)
        }
        // A PLT entry describes its CFA by an expression; it has no frame of its own.
        CfaRule::Expression(_) => {
            return Step::Next {
                pc: word(sp),
                sp: sp.wrapping_add(8),
                fp,
            };
        }
        _ => return Step::Fail,
    };
    if cfa <= sp || cfa - sp > MAX_FRAME || cfa > high || !plausible(cfa, 8) {
        return Step::Fail;
    }
    let caller_pc = match row.register(X86_64::RA) {
        Some(RegisterRule::Offset(offset)) => word(cfa.wrapping_add_signed(offset as isize)),
        Some(RegisterRule::Undefined) => return Step::End,
        _ => return Step::Fail,
    };
    let caller_fp = match row.register(X86_64::RBP) {
        Some(RegisterRule::Offset(offset)) => word(cfa.wrapping_add_signed(offset as isize)),
        Some(RegisterRule::ValOffset(offset)) => cfa.wrapping_add_signed(offset as isize),
        _ => fp,
    };
    if caller_pc == 0 {
        return Step::End;
    }
    Step::Next {
        pc: caller_pc,
        sp: cfa,
        fp: caller_fp,
    }
}

/// Whether `pc` is the signal trampoline (`__restore_rt`: `mov rax, 15; syscall`), where a
/// signal handler returns to.
fn is_sigreturn(pc: usize) -> bool {
    const RESTORE_RT: [u8; 9] = [0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05];
    RESTORE_RT
        .iter()
        .enumerate()
        .all(|(i, &b)| super::hotspot::u8_at(pc.wrapping_add(i)) == b)
}

/// The registers a signal interrupted, from the ucontext at `sp` (x86-64 Linux: the
/// general registers are at offset 40, rip, rsp and rbp the 17th, 16th and 11th).
fn interrupted(sp: usize, high: usize) -> Step {
    const GREGS: usize = 40;
    let reg = |index: i32| word(sp.wrapping_add(GREGS + index as usize * 8));
    if sp.saturating_add(GREGS + 23 * 8) > high {
        return Step::Fail;
    }
    let regs = super::walker::Regs {
        pc: reg(libc::REG_RIP),
        sp: reg(libc::REG_RSP),
        fp: reg(libc::REG_RBP),
        rbx: reg(libc::REG_RBX),
        r13: reg(libc::REG_R13),
        rax: reg(libc::REG_RAX),
    };
    if regs.sp <= sp || regs.sp > high || regs.pc == 0 {
        return Step::Fail;
    }
    Step::Interrupted(regs)
}

/// Unwinds a frame that keeps the frame pointer chain (`push rbp; mov rbp, rsp`), on a
/// stack that ends at `high`.
pub fn by_frame_pointer(sp: usize, fp: usize, high: usize) -> Step {
    if fp < sp || fp - sp > MAX_FRAME || fp.saturating_add(16) > high || !plausible(fp, 8) {
        return Step::Fail;
    }
    let pc = word(fp.wrapping_add(8));
    if pc == 0 {
        return Step::End;
    }
    Step::Next {
        pc,
        sp: fp.wrapping_add(16),
        fp: word(fp),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The return addresses above the caller, by this module's unwinding from registers
    /// `getcontext` saved here.
    #[inline(never)]
    fn unwound_from_here() -> Vec<usize> {
        // SAFETY: a zeroed ucontext_t is a valid value for getcontext to fill.
        let mut context: libc::ucontext_t = unsafe { std::mem::zeroed() };
        // SAFETY: getcontext writes the calling thread's registers into `context`.
        assert_eq!(unsafe { libc::getcontext(&mut context) }, 0);
        let regs = &context.uc_mcontext.gregs;
        let (mut pc, mut sp, mut fp) = (
            regs[libc::REG_RIP as usize] as usize,
            regs[libc::REG_RSP as usize] as usize,
            regs[libc::REG_RBP as usize] as usize,
        );
        let high = sp + (1 << 20);
        let mut pcs = Vec::new();
        crate::signal::publish::reading(|| {
            for _ in 0..32 {
                let Some(module) = modules().and_then(|m| m.find(pc)) else {
                    break;
                };
                match unwind(module, pc, sp, fp, true, high) {
                    Step::Next {
                        pc: p,
                        sp: s,
                        fp: f,
                    } => {
                        pcs.push(p);
                        (pc, sp, fp) = (p, s, f);
                    }
                    _ => break,
                }
            }
        });
        pcs
    }

    #[inline(never)]
    fn caller_of_the_walk() -> Vec<usize> {
        let pcs = unwound_from_here();
        std::hint::black_box(pcs)
    }

    #[test]
    fn call_frame_information_leads_through_the_callers() {
        refresh();
        let pcs = caller_of_the_walk();
        let start = caller_of_the_walk as *const () as usize;
        assert!(
            pcs.iter().any(|&pc| pc > start && pc < start + 4096),
            "{start:x}: {pcs:x?}"
        );
        // And on through the test harness to the thread's start.
        assert!(pcs.len() >= 4, "{pcs:x?}");
    }

    /// Unwinds from `pc`, `sp`, `fp` through at most 32 frames (signal frames included);
    /// the pcs met.
    fn walk_from(mut pc: usize, mut sp: usize, mut fp: usize) -> Vec<usize> {
        let high = sp + (1 << 20);
        let mut pcs = Vec::new();
        crate::signal::publish::reading(|| {
            let mut returned = true;
            for _ in 0..32 {
                let Some(module) = modules().and_then(|m| m.find(pc)) else {
                    break;
                };
                match unwind(module, pc, sp, fp, returned, high) {
                    Step::Next {
                        pc: p,
                        sp: s,
                        fp: f,
                    } => {
                        (pc, sp, fp, returned) = (p, s, f, true);
                    }
                    Step::Interrupted(regs) => {
                        (pc, sp, fp, returned) = (regs.pc, regs.sp, regs.fp, false);
                    }
                    _ => break,
                }
                pcs.push(pc);
            }
        });
        pcs
    }

    static IN_HANDLER_WALK: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

    extern "C" fn on_usr1(_: libc::c_int) {
        // SAFETY: a zeroed ucontext_t is a valid value for getcontext to fill.
        let mut context: libc::ucontext_t = unsafe { std::mem::zeroed() };
        // SAFETY: getcontext writes the calling thread's registers into `context`.
        unsafe { libc::getcontext(&mut context) };
        let regs = &context.uc_mcontext.gregs;
        let pcs = walk_from(
            regs[libc::REG_RIP as usize] as usize,
            regs[libc::REG_RSP as usize] as usize,
            regs[libc::REG_RBP as usize] as usize,
        );
        if let Ok(mut walked) = IN_HANDLER_WALK.lock() {
            *walked = pcs;
        }
    }

    #[inline(never)]
    fn raises_a_signal() {
        // SAFETY: installs a handler for SIGUSR1 (this test's own), then sends it to this thread.
        unsafe {
            libc::signal(libc::SIGUSR1, on_usr1 as *const () as libc::sighandler_t);
            libc::pthread_kill(libc::pthread_self(), libc::SIGUSR1);
        }
        std::hint::black_box(());
    }

    #[test]
    fn a_walk_from_a_signal_handler_goes_on_through_the_code_it_interrupted() {
        refresh();
        raises_a_signal();
        let pcs = IN_HANDLER_WALK.lock().unwrap().clone();
        let start = raises_a_signal as *const () as usize;
        assert!(
            pcs.iter().any(|&pc| pc > start && pc < start + 4096),
            "{start:x}: {pcs:x?}"
        );
    }

    #[test]
    fn the_unwinder_state_is_small_enough_for_a_signal_handler_stack() {
        let size = std::mem::size_of::<UnwindContext<usize, Small>>();
        assert!(size <= 4096, "{size} bytes");
    }
}
