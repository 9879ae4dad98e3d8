//! Owns what the stack walk knows of HotSpot's own structures: every offset it reads, taken
//! from the JVM's exported VMStructs tables once at start and checked there, and the reads
//! themselves: the code blob that holds a pc (the code heaps' segment maps), a compiled
//! method's inlined frames at a pc (its PcDescs and the scopes they point to), the
//! jmethodID of a `Method*` (its class's jmethodID cache), a thread's last Java frame.
//!
//! Every read of JVM memory here runs in the signal handler inside the crash guard (or in
//! the checks at start, guarded the same way): values are checked for plausibility before
//! they are followed, arithmetic wraps, nothing allocates or panics.

#![allow(unsafe_code)]

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::jvmti::vmstructs::VmStructs;

/// The most code heaps HotSpot has (non-nmethods, profiled, non-profiled; one when the code
/// cache is not segmented).
const MAX_HEAPS: usize = 8;
/// The most inlined frames one compiled frame is decoded into.
pub const MAX_INLINE: usize = 128;
/// Addresses below this are never valid (the null page and its neighbours).
const LOW_LIMIT: usize = 0x10000;
/// The end of user space on x86-64.
const HIGH_LIMIT: usize = 0x0000_8000_0000_0000;

/// Whether `addr` could be a pointer to data of `align` bytes' alignment in user space.
#[inline]
pub fn plausible(addr: usize, align: usize) -> bool {
    (LOW_LIMIT..HIGH_LIMIT).contains(&addr) && addr & (align - 1) == 0
}

/// Reads the word at `addr`. Inside the crash guard only.
#[inline]
pub fn word(addr: usize) -> usize {
    // SAFETY: called inside the crash guard, which turns a fault on a bad address into an
    // abandoned walk; the read is unaligned-tolerant and volatile (the memory is another
    // thread's, or the interrupted code's).
    usize::from_ne_bytes(unsafe { std::ptr::read_volatile(addr as *const [u8; 8]) })
}

/// Reads the `i32` at `addr`. Inside the crash guard only.
#[inline]
pub fn i32_at(addr: usize) -> i32 {
    // SAFETY: as for `word`.
    i32::from_ne_bytes(unsafe { std::ptr::read_volatile(addr as *const [u8; 4]) })
}

/// Reads the `u16` at `addr`. Inside the crash guard only.
#[inline]
pub fn u16_at(addr: usize) -> u16 {
    // SAFETY: as for `word`.
    u16::from_ne_bytes(unsafe { std::ptr::read_volatile(addr as *const [u8; 2]) })
}

/// Reads the `i16` at `addr`. Inside the crash guard only.
#[inline]
pub fn i16_at(addr: usize) -> i16 {
    u16_at(addr) as i16
}

/// Reads the byte at `addr`. Inside the crash guard only.
#[inline]
pub fn u8_at(addr: usize) -> u8 {
    // SAFETY: as for `word`.
    unsafe { std::ptr::read_volatile(addr as *const u8) }
}

/// Whether the NUL-terminated string at `addr` is `expected`. Inside the crash guard only.
pub fn c_str_is(addr: usize, expected: &[u8]) -> bool {
    if !plausible(addr, 1) {
        return false;
    }
    for (i, &b) in expected.iter().enumerate() {
        if u8_at(addr.wrapping_add(i)) != b {
            return false;
        }
    }
    u8_at(addr.wrapping_add(expected.len())) == 0
}

/// Whether the NUL-terminated string at `addr` starts with `prefix`. Inside the crash guard
/// only.
pub fn c_str_starts(addr: usize, prefix: &[u8]) -> bool {
    plausible(addr, 1)
        && prefix
            .iter()
            .enumerate()
            .all(|(i, &b)| u8_at(addr.wrapping_add(i)) == b)
}

/// Where a blob's code starts: a pointer field (JDK 11-21) or an offset from the blob
/// (JDK 22+).
#[derive(Debug, Clone, Copy)]
enum CodeBegin {
    /// `CodeBlob::_code_begin`, an address.
    Pointer(usize),
    /// `CodeBlob::_code_offset`, an `int` from the blob's start.
    Offset(usize),
}

/// Where an nmethod's verified entry point is.
#[derive(Debug, Clone, Copy)]
enum VerifiedEntry {
    /// `nmethod::_verified_entry_point`, an address (JDK 11-22).
    Pointer(usize),
    /// `nmethod::_verified_entry_offset`, a `u16` from the code's start (JDK 23+).
    Offset(usize),
}

/// Where an nmethod's debug information is.
#[derive(Debug, Clone, Copy)]
enum DebugInfo {
    /// In the nmethod itself (JDK 11-22): PcDescs between `pcs` and `pcs_end` (offsets from
    /// the nmethod), scopes from the pointer at `data`, metadata at the offset `metadata`.
    Inline {
        pcs: usize,
        pcs_end: usize,
        data: usize,
        metadata: usize,
    },
    /// In the immutable data block (JDK 23+, the pointer at `immutable`): PcDescs from the
    /// offset `pcs` to the offset `data`, scopes from `data`; metadata after the
    /// relocations in the mutable data block (the pointer at `mutable`, the size at
    /// `relocation_size`).
    Immutable {
        immutable: usize,
        pcs: usize,
        data: usize,
        mutable: usize,
        relocation_size: usize,
    },
}

/// One code heap: its `CodeHeap*` and segment size.
#[derive(Debug, Clone, Copy, Default)]
struct Heap {
    address: usize,
    log2_segment: u32,
}

/// HotSpot's layout, as the walk reads it. Offsets are in bytes from the structure named.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The JDK's feature version (11, 17, ...).
    pub version: u32,
    /// `JNIEnv*` minus `JavaThread*` (the environment is a field of the thread).
    pub env_offset: usize,
    thread_anchor: usize,
    anchor_sp: usize,
    anchor_pc: usize,
    anchor_fp: usize,
    stack_base: usize,
    stack_size: usize,
    vframe_array_head: usize,
    code_low: usize,
    code_high: usize,
    heaps: [Heap; MAX_HEAPS],
    heap_count: usize,
    memory_low: usize,
    memory_high: usize,
    segmap_low: usize,
    block_header: usize,
    block_used: usize,
    blob_name: usize,
    blob_size: usize,
    blob_frame_size: usize,
    blob_frame_complete: usize,
    blob_frame_complete_short: bool,
    blob_code: CodeBegin,
    blob_kind: Option<(usize, u8)>,
    nm_method: usize,
    nm_entry: VerifiedEntry,
    nm_stub: usize,
    nm_orig_pc: usize,
    debug: DebugInfo,
    pc_desc_size: usize,
    pc_desc_pc: usize,
    pc_desc_scope: usize,
    unsigned5_excess: u32,
    method_const: usize,
    method_flags: usize,
    const_constants: usize,
    const_idnum: usize,
    const_code_size: usize,
    const_size: usize,
    pool_holder: usize,
    jmethod_ids: usize,
    interpreter_low: usize,
    interpreter_high: usize,
    /// Interpreter frame slots, in words from the frame pointer.
    sender_sp_slot: isize,
    method_slot: isize,
    bcp_slot: isize,
    call_stub_return: usize,
    /// The entry frame's `JavaCallWrapper*`, in bytes from its frame pointer.
    call_wrapper_slot: isize,
    wrapper_anchor: usize,
}

/// The kinds of code blob the walk tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobKind {
    /// A compiled Java method (or a native method's wrapper).
    Nmethod,
    /// The template interpreter.
    Interpreter,
    /// Anything else: stubs, adapters, runtime blobs.
    Stub,
}

/// A thread's last Java frame, as its anchor (or a call wrapper's) holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anchor {
    /// The last Java frame's stack pointer (never 0 here).
    pub sp: usize,
    /// Its pc (0 when the anchor holds none: the return address below `sp` then).
    pub pc: usize,
    /// Its frame pointer.
    pub fp: usize,
}

/// What an entry frame (Java called from the VM) says of the Java frames before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// Its call wrapper could not be found.
    Broken,
    /// None: it is the thread's first Java frame.
    First,
    /// The last Java frame before the VM called Java again.
    Saved(Anchor),
}

/// One scope of a compiled frame: a method (inlined, or the frame's own) at a bytecode index.
#[derive(Debug, Clone, Copy)]
pub struct Scope {
    /// The `Method*` (0 when the debug information names none).
    pub method: usize,
    /// Its bytecode index (-1 when at the method's entry).
    pub bci: i32,
}

/// The scopes of a compiled frame at a pc, innermost first, decoded one at a time from the
/// nmethod's compressed debug information.
#[derive(Debug)]
pub struct Scopes {
    data: usize,
    metadata: usize,
    offset: i32,
    excess: u32,
    entry_method: Option<usize>,
    decoded: usize,
}

impl Iterator for Scopes {
    type Item = Scope;

    fn next(&mut self) -> Option<Scope> {
        if let Some(method) = self.entry_method.take() {
            return Some(Scope { method, bci: -1 });
        }
        if self.offset <= 0 || self.decoded >= MAX_INLINE {
            return None;
        }
        let mut at = self.data.wrapping_add(self.offset as usize);
        let sender = read_unsigned5(&mut at, self.excess);
        let method_index = read_unsigned5(&mut at, self.excess) as usize;
        let bci = read_unsigned5(&mut at, self.excess) as i32;
        let method = if method_index == 0 || method_index > 1 << 20 {
            0
        } else {
            word(self.metadata.wrapping_add((method_index - 1) * 8))
        };
        self.decoded += 1;
        // A sender is written before the scopes that name it: its offset is smaller.
        self.offset = if sender < self.offset as u32 {
            sender as i32
        } else {
            0
        };
        Some(Scope {
            method,
            bci: bci.wrapping_sub(1),
        })
    }
}

/// Reads up to five bytes of HotSpot's compressed integers (UNSIGNED5, with `excess` 1
/// since JDK 20 so that no byte is zero).
fn read_unsigned5(at: &mut usize, excess: u32) -> u32 {
    const HIGH: u32 = 192;
    let mut sum: u32 = 0;
    let mut shift = 0;
    for i in 0..5 {
        let b = u32::from(u8_at(*at));
        *at = at.wrapping_add(1);
        sum = sum.wrapping_add(b.wrapping_sub(excess) << shift);
        if b < HIGH || i == 4 {
            break;
        }
        shift += 6;
    }
    sum
}

/// Cached addresses of the names HotSpot gives nmethods ("nmethod", "native nmethod"):
/// string literals of libjvm, so a blob's name pointer is compared before its bytes.
static NMETHOD_NAMES: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

impl Layout {
    /// Reads the layout from `tables` (JDK `version`), with `env_offset` measured on a Java
    /// thread; an error names what is missing or implausible.
    pub fn read(tables: &VmStructs, version: u32, env_offset: usize) -> Result<Layout, String> {
        let missing = |what: &str| format!("VMStructs has no {what}");
        let offset = |types: &[&str], field: &str| {
            tables
                .offset(types, field)
                .ok_or_else(|| missing(&format!("{}::{field}", types[0])))
        };
        let address = |types: &[&str], field: &str| {
            tables
                .address(types, field)
                .ok_or_else(|| missing(&format!("{}::{field}", types[0])))
        };
        let size = |types: &[&str]| {
            tables
                .type_size(types)
                .ok_or_else(|| missing(&format!("the size of {}", types[0])))
        };
        let thread = ["JavaThread", "Thread"];
        let anchor = ["JavaFrameAnchor"];
        let blob = ["CodeBlob"];
        let nmethod = ["nmethod", "CompiledMethod"];
        let blob_code = match tables.offset(&blob, "_code_begin") {
            Some(at) => CodeBegin::Pointer(at),
            None => CodeBegin::Offset(offset(&blob, "_code_offset")?),
        };
        let nm_entry = match tables.offset(&nmethod, "_verified_entry_point") {
            Some(at) => VerifiedEntry::Pointer(at),
            None => VerifiedEntry::Offset(offset(&nmethod, "_verified_entry_offset")?),
        };
        let debug = match tables.offset(&nmethod, "_immutable_data") {
            None => DebugInfo::Inline {
                pcs: offset(&nmethod, "_scopes_pcs_offset")?,
                pcs_end: offset(&nmethod, "_dependencies_offset")?,
                data: offset(&nmethod, "_scopes_data_begin")?,
                metadata: offset(&nmethod, "_metadata_offset")?,
            },
            Some(immutable) => DebugInfo::Immutable {
                immutable,
                pcs: offset(&nmethod, "_scopes_pcs_offset")?,
                data: offset(&nmethod, "_scopes_data_offset")?,
                mutable: offset(&blob, "_mutable_data")?,
                relocation_size: offset(&blob, "_relocation_size")?,
            },
        };
        let frame_complete = tables
            .field(&blob, "_frame_complete_offset")
            .filter(|f| !f.is_static)
            .ok_or_else(|| missing("CodeBlob::_frame_complete_offset"))?;
        let blob_kind = match tables.offset(&blob, "_kind") {
            Some(at) => {
                let kind = tables
                    .int_constant("CodeBlobKind::Nmethod")
                    .ok_or_else(|| missing("CodeBlobKind::Nmethod"))?;
                Some((at, kind as u8))
            }
            None => None,
        };
        let array_len = offset(&["GrowableArrayBase", "GenericGrowableArray"], "_len")?;
        let array_data = offset(&["GrowableArray<int>"], "_data")?;
        let heaps_at = address(&["CodeCache"], "_heaps")?;
        let log2_segment = offset(&["CodeHeap"], "_log2_segment_size")?;
        let vs_low = offset(&["VirtualSpace"], "_low")?;
        let vs_high = offset(&["VirtualSpace"], "_high")?;
        let memory = offset(&["CodeHeap"], "_memory")?;
        let segmap = offset(&["CodeHeap"], "_segmap")?;
        let mut heaps = [Heap::default(); MAX_HEAPS];
        // SAFETY: `CodeCache::_heaps` is the address of a static pointer to a GrowableArray
        // of CodeHeap pointers, built at VM start and never freed; its length and data are
        // at the offsets the VM exported.
        let heap_count = unsafe {
            let array = (heaps_at as *const usize).read();
            if !plausible(array, 8) {
                return Err("CodeCache::_heaps is not set".into());
            }
            let len = ((array + array_len) as *const i32).read();
            let data = ((array + array_data) as *const usize).read();
            if !(1..=MAX_HEAPS as i32).contains(&len) || !plausible(data, 8) {
                return Err(format!("CodeCache::_heaps has {len} heaps"));
            }
            for (i, heap) in heaps.iter_mut().enumerate().take(len as usize) {
                let address = ((data + i * 8) as *const usize).read();
                if !plausible(address, 8) {
                    return Err("a code heap pointer is null".into());
                }
                let log2 = ((address + log2_segment) as *const i32).read();
                if !(4..=16).contains(&log2) {
                    return Err(format!("a code heap has segments of 2^{log2} bytes"));
                }
                *heap = Heap {
                    address,
                    log2_segment: log2 as u32,
                };
            }
            len as usize
        };
        let bound = |field: &str| -> Result<usize, String> {
            // SAFETY: `CodeCache::_low_bound` / `_high_bound` are static addresses in libjvm.
            Ok(unsafe { (address(&["CodeCache"], field)? as *const usize).read() })
        };
        let (code_low, code_high) = (bound("_low_bound")?, bound("_high_bound")?);
        if code_low >= code_high || !plausible(code_low, 1) {
            return Err("the code cache's bounds look wrong".into());
        }
        let queue_at = address(&["AbstractInterpreter"], "_code")?;
        let stub_buffer = offset(&["StubQueue"], "_stub_buffer")?;
        let buffer_limit = offset(&["StubQueue"], "_buffer_limit")?;
        // SAFETY: `AbstractInterpreter::_code` is the address of a static pointer to the
        // interpreter's StubQueue, built at VM start; its fields are at the exported offsets.
        let (interpreter_low, interpreter_high) = unsafe {
            let queue = (queue_at as *const usize).read();
            if !plausible(queue, 8) {
                return Err("the interpreter's code is not set".into());
            }
            let low = ((queue + stub_buffer) as *const usize).read();
            let limit = ((queue + buffer_limit) as *const i32).read();
            (low, low.wrapping_add(limit.max(0) as usize))
        };
        if interpreter_low < code_low || interpreter_high > code_high {
            return Err("the interpreter is outside the code cache".into());
        }
        // SAFETY: a static address in libjvm, set when the call stub was generated.
        let call_stub_return = unsafe {
            (address(&["StubRoutines"], "_call_stub_return_address")? as *const usize).read()
        };
        if !(code_low..code_high).contains(&call_stub_return) {
            return Err("the call stub is outside the code cache".into());
        }
        let last_sp = tables
            .int_constant("frame::interpreter_frame_last_sp_offset")
            .ok_or_else(|| missing("frame::interpreter_frame_last_sp_offset"))?;
        let sender_sp = tables
            .int_constant("frame::interpreter_frame_sender_sp_offset")
            .ok_or_else(|| missing("frame::interpreter_frame_sender_sp_offset"))?;
        let wrapper = tables
            .int_constant("frame::entry_frame_call_wrapper_offset")
            .ok_or_else(|| missing("frame::entry_frame_call_wrapper_offset"))?;
        // x86-64 since JDK 9: Method* right after last_sp, then the mirror, mdp, cache,
        // locals and bcp slots (frame_x86.hpp).
        let method_slot = last_sp as isize - 1;
        let layout = Layout {
            version,
            env_offset,
            thread_anchor: offset(&thread, "_anchor")?,
            anchor_sp: offset(&anchor, "_last_Java_sp")?,
            anchor_pc: offset(&anchor, "_last_Java_pc")?,
            anchor_fp: offset(&anchor, "_last_Java_fp")?,
            stack_base: offset(&thread, "_stack_base")?,
            stack_size: offset(&thread, "_stack_size")?,
            vframe_array_head: offset(&thread, "_vframe_array_head")?,
            code_low,
            code_high,
            heaps,
            heap_count,
            memory_low: memory + vs_low,
            memory_high: memory + vs_high,
            segmap_low: segmap + vs_low,
            block_header: size(&["HeapBlock"])?,
            block_used: offset(&["HeapBlock"], "_header")?
                + offset(&["HeapBlock::Header"], "_used")?,
            blob_name: offset(&blob, "_name")?,
            blob_size: offset(&blob, "_size")?,
            blob_frame_size: offset(&blob, "_frame_size")?,
            blob_frame_complete: frame_complete.value,
            blob_frame_complete_short: frame_complete.type_string.contains("16"),
            blob_code,
            blob_kind,
            nm_method: offset(&nmethod, "_method")?,
            nm_entry,
            nm_stub: offset(&nmethod, "_stub_offset")?,
            nm_orig_pc: offset(&nmethod, "_orig_pc_offset")?,
            debug,
            pc_desc_size: size(&["PcDesc"])?,
            pc_desc_pc: offset(&["PcDesc"], "_pc_offset")?,
            pc_desc_scope: offset(&["PcDesc"], "_scope_decode_offset")?,
            unsigned5_excess: u32::from(version >= 20),
            method_const: offset(&["Method"], "_constMethod")?,
            method_flags: offset(&["Method"], "_access_flags")?,
            const_constants: offset(&["ConstMethod"], "_constants")?,
            const_idnum: offset(&["ConstMethod"], "_method_idnum")?,
            const_code_size: offset(&["ConstMethod"], "_code_size")?,
            const_size: size(&["ConstMethod"])?,
            pool_holder: offset(&["ConstantPool"], "_pool_holder")?,
            jmethod_ids: offset(&["InstanceKlass"], "_methods_jmethod_ids")?,
            interpreter_low,
            interpreter_high,
            sender_sp_slot: sender_sp as isize,
            method_slot,
            bcp_slot: method_slot - 5,
            call_stub_return,
            call_wrapper_slot: wrapper as isize * 8,
            wrapper_anchor: offset(&["JavaCallWrapper"], "_anchor")?,
        };
        if layout.pc_desc_size < 8 || layout.block_header == 0 || layout.const_size == 0 {
            return Err("VMStructs gives implausible sizes".into());
        }
        Ok(layout)
    }

    /// Checks the layout against the running JVM: the call stub and the interpreter are found
    /// in the code heaps where HotSpot says they are, and each of `methods` (jmethodIDs) leads
    /// to a `Method*` whose class's jmethodID cache gives it back. Inside the crash guard.
    pub fn check(&self, methods: &[usize]) -> Result<(), &'static str> {
        let stub = self
            .find_blob(self.call_stub_return)
            .ok_or("no code blob holds the call stub")?;
        if !self.blob_contains(stub, self.call_stub_return)
            || self.code_begin(stub) > self.call_stub_return
        {
            return Err("the call stub's code blob does not hold it");
        }
        let interpreter = self
            .find_blob(self.interpreter_low.wrapping_add(64))
            .ok_or("no code blob holds the interpreter")?;
        if !c_str_is(self.blob_name(interpreter), b"Interpreter") {
            return Err("the interpreter's code blob is not named Interpreter");
        }
        if methods.is_empty() {
            return Err("no jmethodID to check");
        }
        for &id in methods {
            let method = word(id);
            if self.method_id(method) != id {
                return Err("a jmethodID does not lead back to itself through its class");
            }
            if self.bci_of(method, 0) != -1 {
                return Err("a method's bytecodes are not where ConstMethod says");
            }
        }
        Ok(())
    }

    /// The thread's JavaThread, from its JNI environment.
    pub fn thread_of(&self, env: usize) -> usize {
        env.wrapping_sub(self.env_offset)
    }

    /// The thread's stack: (lowest address, highest address). Inside the guard only.
    pub fn stack_of(&self, thread: usize) -> (usize, usize) {
        let base = word(thread.wrapping_add(self.stack_base));
        let size = word(thread.wrapping_add(self.stack_size));
        (base.wrapping_sub(size), base)
    }

    /// The thread's last Java frame, if it has one (it is in the VM or native code).
    pub fn thread_anchor(&self, thread: usize) -> Option<Anchor> {
        self.anchor_at(thread.wrapping_add(self.thread_anchor))
    }

    fn anchor_at(&self, anchor: usize) -> Option<Anchor> {
        let sp = word(anchor.wrapping_add(self.anchor_sp));
        if !plausible(sp, 8) {
            return None;
        }
        Some(Anchor {
            sp,
            pc: word(anchor.wrapping_add(self.anchor_pc)),
            fp: word(anchor.wrapping_add(self.anchor_fp)),
        })
    }

    /// Whether the thread is unpacking deoptimized frames.
    pub fn deoptimizing(&self, thread: usize) -> bool {
        word(thread.wrapping_add(self.vframe_array_head)) != 0
    }

    /// Whether `pc` is in the code cache.
    #[inline]
    pub fn in_code_cache(&self, pc: usize) -> bool {
        (self.code_low..self.code_high).contains(&pc)
    }

    /// Whether `pc` is in the template interpreter.
    #[inline]
    pub fn in_interpreter(&self, pc: usize) -> bool {
        (self.interpreter_low..self.interpreter_high).contains(&pc)
    }

    /// Whether `pc` is where the call stub returns (the frame is an entry frame: Java called
    /// from the VM).
    #[inline]
    pub fn is_entry_return(&self, pc: usize) -> bool {
        pc == self.call_stub_return
    }

    /// What an entry frame (frame pointer `fp`) saved of the last Java frame before it.
    pub fn entry_anchor(&self, fp: usize) -> Entry {
        let wrapper = word(fp.wrapping_add_signed(self.call_wrapper_slot));
        // The call wrapper lives in the frame of JavaCalls::call_helper, just above.
        if !plausible(wrapper, 8) || wrapper <= fp || wrapper - fp > 4096 {
            return Entry::Broken;
        }
        match self.anchor_at(wrapper.wrapping_add(self.wrapper_anchor)) {
            Some(anchor) => Entry::Saved(anchor),
            None => Entry::First,
        }
    }

    /// The code blob that holds `pc` (its start), from the code heaps' segment maps.
    pub fn find_blob(&self, pc: usize) -> Option<usize> {
        if !self.in_code_cache(pc) {
            return None;
        }
        for heap in &self.heaps[..self.heap_count.min(MAX_HEAPS)] {
            let low = word(heap.address.wrapping_add(self.memory_low));
            let high = word(heap.address.wrapping_add(self.memory_high));
            if pc < low || pc >= high {
                continue;
            }
            let segmap = word(heap.address.wrapping_add(self.segmap_low));
            if !plausible(segmap, 1) {
                return None;
            }
            let mut index = (pc - low) >> heap.log2_segment;
            // Each byte of the map says how many segments back the block's first one is
            // (0xFF: a free segment); a long block takes several hops.
            let mut hop = u8_at(segmap.wrapping_add(index));
            if hop == 0xFF {
                return None;
            }
            let mut hops = 0;
            while hop > 0 {
                if index < usize::from(hop) || hops > 1 << 16 {
                    return None;
                }
                index -= usize::from(hop);
                hop = u8_at(segmap.wrapping_add(index));
                hops += 1;
            }
            let block = low.wrapping_add(index << heap.log2_segment);
            if u8_at(block.wrapping_add(self.block_used)) == 0 {
                return None;
            }
            let blob = block.wrapping_add(self.block_header);
            return (pc < blob.wrapping_add(self.blob_size(blob))).then_some(blob);
        }
        None
    }

    /// The blob's size in bytes (0 if implausible).
    pub fn blob_size(&self, blob: usize) -> usize {
        let size = i32_at(blob.wrapping_add(self.blob_size));
        if size <= 0 { 0 } else { size as usize }
    }

    /// Whether the blob holds `pc`.
    pub fn blob_contains(&self, blob: usize, pc: usize) -> bool {
        pc >= blob && pc < blob.wrapping_add(self.blob_size(blob))
    }

    /// The blob's name (a C string in libjvm).
    pub fn blob_name(&self, blob: usize) -> usize {
        word(blob.wrapping_add(self.blob_name))
    }

    /// The first instruction of the blob.
    pub fn code_begin(&self, blob: usize) -> usize {
        match self.blob_code {
            CodeBegin::Pointer(at) => word(blob.wrapping_add(at)),
            CodeBegin::Offset(at) => blob.wrapping_add(i32_at(blob.wrapping_add(at)) as usize),
        }
    }

    /// The blob's frame size in words (0 for none).
    pub fn frame_size(&self, blob: usize) -> usize {
        let size = i32_at(blob.wrapping_add(self.blob_frame_size));
        if (0..1 << 16).contains(&size) {
            size as usize
        } else {
            0
        }
    }

    /// Where the blob's frame is complete (its prologue ends), as an address.
    pub fn frame_complete(&self, blob: usize) -> usize {
        let at = blob.wrapping_add(self.blob_frame_complete);
        let offset = if self.blob_frame_complete_short {
            i32::from(i16_at(at))
        } else {
            i32_at(at)
        };
        self.code_begin(blob).wrapping_add(offset.max(0) as usize)
    }

    /// Whether the blob says where its frame is complete (runtime stubs that are never safe
    /// to walk say -1).
    pub fn frame_complete_known(&self, blob: usize) -> bool {
        let at = blob.wrapping_add(self.blob_frame_complete);
        let offset = if self.blob_frame_complete_short {
            i32::from(i16_at(at))
        } else {
            i32_at(at)
        };
        offset >= 0
    }

    /// What kind of blob `blob` (which holds `pc`) is.
    pub fn kind(&self, blob: usize, pc: usize) -> BlobKind {
        if self.in_interpreter(pc) {
            return BlobKind::Interpreter;
        }
        let nmethod = match self.blob_kind {
            Some((at, kind)) => u8_at(blob.wrapping_add(at)) == kind,
            None => {
                let name = self.blob_name(blob);
                if NMETHOD_NAMES
                    .iter()
                    .any(|n| n.load(Ordering::Relaxed) == name)
                {
                    true
                } else if c_str_is(name, b"nmethod") {
                    NMETHOD_NAMES[0].store(name, Ordering::Relaxed);
                    true
                } else if c_str_is(name, b"native nmethod") {
                    NMETHOD_NAMES[1].store(name, Ordering::Relaxed);
                    true
                } else {
                    false
                }
            }
        };
        if nmethod {
            BlobKind::Nmethod
        } else {
            BlobKind::Stub
        }
    }

    /// The nmethod's `Method*`.
    pub fn nmethod_method(&self, nm: usize) -> usize {
        word(nm.wrapping_add(self.nm_method))
    }

    /// The nmethod's verified entry point.
    pub fn verified_entry(&self, nm: usize) -> usize {
        match self.nm_entry {
            VerifiedEntry::Pointer(at) => word(nm.wrapping_add(at)),
            VerifiedEntry::Offset(at) => self
                .code_begin(nm)
                .wrapping_add(usize::from(u16_at(nm.wrapping_add(at)))),
        }
    }

    /// Where the nmethod's stub section (call stubs, the safepoint poll's slow path, the
    /// exception and deoptimization handlers) begins.
    pub fn stub_begin(&self, nm: usize) -> usize {
        nm.wrapping_add(i32_at(nm.wrapping_add(self.nm_stub)) as usize)
    }

    /// The pc a deoptimized frame (stack pointer `sp`) of the nmethod had, saved in the frame
    /// when its return address was patched to the deoptimization handler.
    pub fn original_pc(&self, nm: usize, sp: usize) -> usize {
        let offset = i32_at(nm.wrapping_add(self.nm_orig_pc));
        word(sp.wrapping_add_signed(offset as isize))
    }

    /// The nmethod's (PcDescs begin, end, scopes data, metadata) addresses.
    fn debug_info(&self, nm: usize) -> (usize, usize, usize, usize) {
        match self.debug {
            DebugInfo::Inline {
                pcs,
                pcs_end,
                data,
                metadata,
            } => (
                nm.wrapping_add(i32_at(nm.wrapping_add(pcs)) as usize),
                nm.wrapping_add(i32_at(nm.wrapping_add(pcs_end)) as usize),
                word(nm.wrapping_add(data)),
                nm.wrapping_add(i32_at(nm.wrapping_add(metadata)) as usize),
            ),
            DebugInfo::Immutable {
                immutable,
                pcs,
                data,
                mutable,
                relocation_size,
            } => {
                let base = word(nm.wrapping_add(immutable));
                let data = base.wrapping_add(i32_at(nm.wrapping_add(data)) as usize);
                (
                    base.wrapping_add(i32_at(nm.wrapping_add(pcs)) as usize),
                    data,
                    data,
                    word(nm.wrapping_add(mutable))
                        .wrapping_add(i32_at(nm.wrapping_add(relocation_size)) as usize),
                )
            }
        }
    }

    /// The nmethod's PcDescs (first, count), scopes data and metadata, if plausible.
    fn pc_desc(&self, nm: usize) -> Option<(usize, usize, usize, usize)> {
        let (pcs, pcs_end, data, metadata) = self.debug_info(nm);
        if !plausible(pcs, 4) || pcs_end < pcs || !plausible(data, 1) || !plausible(metadata, 8) {
            return None;
        }
        let count = (pcs_end - pcs) / self.pc_desc_size;
        if count == 0 || count > 1 << 22 {
            return None;
        }
        Some((pcs, count, data, metadata))
    }

    /// The PcDesc that describes `pc` in the nmethod: the first at or after it (a PcDesc's
    /// offset is where its instruction ends: the return address of a call); its address,
    /// with the scopes data and metadata.
    fn find_pc_desc(&self, nm: usize, pc: usize) -> Option<(usize, usize, usize)> {
        let (pcs, count, data, metadata) = self.pc_desc(nm)?;
        let target = pc.wrapping_sub(self.code_begin(nm));
        if target > i32::MAX as usize {
            return None;
        }
        let target = target as i32;
        let size = self.pc_desc_size;
        let (mut low, mut high) = (0usize, count);
        while low < high {
            let mid = low + (high - low) / 2;
            if i32_at(pcs + mid * size + self.pc_desc_pc) < target {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        if low >= count {
            return None;
        }
        let at = pcs + low * size;
        Some((at, data, metadata))
    }

    /// The inlined frames of the nmethod at `pc`, innermost first; None when the nmethod
    /// has no debug information at `pc`.
    pub fn scopes(&self, nm: usize, pc: usize) -> Option<Scopes> {
        let (at, data, metadata) = self.find_pc_desc(nm, pc)?;
        let offset = i32_at(at + self.pc_desc_scope);
        Some(Scopes {
            data,
            metadata,
            offset,
            excess: self.unsigned5_excess,
            // Offset 0 is the null scope: the nmethod's own method, at its entry.
            entry_method: (offset <= 0).then(|| self.nmethod_method(nm)),
            decoded: 0,
        })
    }

    /// Whether the method is native.
    pub fn is_native(&self, method: usize) -> bool {
        const JVM_ACC_NATIVE: u16 = 0x0100;
        u16_at(method.wrapping_add(self.method_flags)) & JVM_ACC_NATIVE != 0
    }

    /// The jmethodID of a `Method*`, from its class's jmethodID cache (0 when it has none:
    /// the id was never created, or `method` is no Method).
    pub fn method_id(&self, method: usize) -> usize {
        if !plausible(method, 8) {
            return 0;
        }
        let constants_method = word(method.wrapping_add(self.method_const));
        if !plausible(constants_method, 8) {
            return 0;
        }
        let pool = word(constants_method.wrapping_add(self.const_constants));
        let idnum = usize::from(u16_at(constants_method.wrapping_add(self.const_idnum)));
        if !plausible(pool, 8) {
            return 0;
        }
        let holder = word(pool.wrapping_add(self.pool_holder));
        if !plausible(holder, 8) {
            return 0;
        }
        let ids = word(holder.wrapping_add(self.jmethod_ids));
        if !plausible(ids, 8) {
            return 0;
        }
        // The cache's first word is its length; the id of idnum n is at n + 1.
        let len = word(ids);
        if idnum + 1 > len || len > 1 << 16 {
            return 0;
        }
        let id = word(ids.wrapping_add((idnum + 1) * 8));
        // A jmethodID points to its Method* (JDK 11 to 25): a stale or wrong id does not.
        if !plausible(id, 8) || word(id) != method {
            return 0;
        }
        id
    }

    /// The bytecode index of `bcp` in `method` (-1 when it is not in the method's code).
    pub fn bci_of(&self, method: usize, bcp: usize) -> i32 {
        let constants_method = word(method.wrapping_add(self.method_const));
        let start = constants_method.wrapping_add(self.const_size);
        let size = usize::from(u16_at(constants_method.wrapping_add(self.const_code_size)));
        if bcp >= start && bcp < start.wrapping_add(size) {
            (bcp - start) as i32
        } else {
            -1
        }
    }

    /// An interpreter frame's (Method*, bcp) from its frame pointer.
    pub fn interpreter_frame(&self, fp: usize) -> (usize, usize) {
        (
            word(fp.wrapping_add_signed(self.method_slot * 8)),
            word(fp.wrapping_add_signed(self.bcp_slot * 8)),
        )
    }

    /// An interpreter frame's sender's stack pointer, from its frame pointer.
    pub fn interpreter_sender_sp(&self, fp: usize) -> usize {
        word(fp.wrapping_add_signed(self.sender_sp_slot * 8))
    }

    /// How far below its frame pointer an interpreter frame's Method* slot is, in bytes.
    pub fn method_slot_bytes(&self) -> usize {
        (-self.method_slot * 8) as usize
    }

    /// How far below its frame pointer an interpreter frame's fixed slots reach, in bytes.
    pub fn interpreter_slots_bytes(&self) -> usize {
        (-(self.bcp_slot - 1) * 8) as usize
    }
}
