//! Owns the tracker class, generated here rather than shipped: the Java side of cpu=times,
//! whose `enter`, `exit` and `unwind` the rewritten methods call. The common path is plain
//! bytecode the JIT inlines into the caller, with no native call: it finds the calling
//! thread's state (an identity-hashed table of threads), looks up the trace of (method,
//! caller's trace) in a per-thread cache, pushes or pops the thread's shadow stack and counts
//! the call. Only the rare cases call the agent's natives: a thread's first call, a trace not
//! in the cache, a stack or count array to grow, and a return that does not match the top.
//!
//! The state of a thread is an `Object[3]`: `int[] stack` (`stack[0]` is the number of ints
//! in use; then one `(method, trace)` pair per frame), `long[] calls` (by trace) and
//! `int[] cache` (a header, see [`CACHE_HEADER`], then entries of `(method, parent trace,
//! trace)`).

use std::borrow::Cow;

use crate::asm::Asm;
use crate::class::{Attribute, ClassFile, Member};
use crate::code::write_code;
use crate::frames::{self, VType};
use crate::pool::Pool;

/// Internal name of the tracker class. It lives in `java.lang` (defined by the boot loader,
/// so it joins `java.base`), which every module reads and which exports it.
pub const TRACKER_CLASS: &str = "java/lang/HprofTracker";
/// The probe called at method entry.
pub const ENTER: &str = "enter";
/// The probe called before a return.
pub const EXIT: &str = "exit";
/// The probe called when an exception leaves a method.
pub const UNWIND: &str = "unwind";
/// Descriptor of `enter`: it returns the thread's state, which the method keeps.
pub const ENTER_DESCRIPTOR: &[u8] = b"(I)Ljava/lang/Object;";
/// Descriptor of `exit` and `unwind`: the state `enter` returned, and the method.
pub const EXIT_DESCRIPTOR: &[u8] = b"(Ljava/lang/Object;I)V";
/// The static boolean field that turns the probes on.
pub const ENGAGED: &str = "engaged";
/// The static `Object[]` field holding `[thread, state, thread, state, ...]`, a power of two
/// long, open-addressed by `System.identityHashCode(thread)`; the agent replaces it whole.
pub const TABLE: &str = "table";
/// A thread's trace cache starts with `1 << CACHE_BITS` entries; the agent enlarges the
/// cache of a thread that misses often.
pub const CACHE_BITS: u32 = 6;
/// Ints before the entries of a cache: the shift (`32 - bits`), the misses since the cache
/// was made, and the thread's serial.
pub const CACHE_HEADER: usize = 3;
/// The native methods, with their descriptors: `register(Thread)` makes and returns a
/// thread's state; `miss(state, method, parent)` interns a trace, stores it in the cache and
/// returns it; `grow(state)` returns a longer stack (or the same one at its limit);
/// `slowExit(state, method)` pops to the nearest frame of `method`, counting the calls.
pub const NATIVES: [(&str, &str); 4] = [
    ("register", "(Ljava/lang/Thread;)[Ljava/lang/Object;"),
    ("miss", "([Ljava/lang/Object;II)I"),
    ("grow", "([Ljava/lang/Object;)[I"),
    ("slowExit", "([Ljava/lang/Object;I)V"),
];

/// The index in a cache whose shift is `shift` of the entry of (method, parent trace): the
/// same formula as the bytecode's.
pub fn cache_index(method: i32, parent: i32, shift: u32) -> usize {
    let h = (method as u32).wrapping_mul(0x9E37_79B1) ^ (parent as u32).wrapping_mul(0x85EB_CA77);
    CACHE_HEADER + 3 * (h >> (shift & 31)) as usize
}

const ACC_PUBLIC: u16 = 0x0001;
const ACC_PRIVATE: u16 = 0x0002;
const ACC_STATIC: u16 = 0x0008;
const ACC_FINAL: u16 = 0x0010;
const ACC_SUPER: u16 = 0x0020;
const ACC_VOLATILE: u16 = 0x0040;
const ACC_NATIVE: u16 = 0x0100;

fn obj(name: &[u8]) -> VType {
    VType::object(name)
}

/// The class file of the tracker named `name` (normally [`TRACKER_CLASS`]), keyed by
/// `Thread.currentThread()`.
pub fn tracker_class(name: &str) -> Vec<u8> {
    tracker_class_for(name, false)
}

/// The tracker class; with `carrier`, a thread's state is that of the platform thread that
/// runs it (`Thread.currentCarrierThread()`, JDK 19 and later), so virtual threads, which
/// may number millions, share their carriers' states instead of having one each.
pub fn tracker_class_for(name: &str, carrier: bool) -> Vec<u8> {
    build(name, carrier).expect("the tracker class assembles")
}

fn build(name: &str, carrier: bool) -> crate::Result<Vec<u8>> {
    use VType::Int;
    let mut pool = Pool::empty();
    let p = &mut pool;
    let n = name.as_bytes();
    let this_class = p.add_class(n)?;
    let super_class = p.add_class(b"java/lang/Object")?;
    let code_name = p.add_utf8(b"Code")?;
    let smt = p.add_utf8(b"StackMapTable")?;
    let engaged = p.add_member(true, n, ENGAGED.as_bytes(), b"Z")?;
    let table = p.add_member(true, n, TABLE.as_bytes(), b"[Ljava/lang/Object;")?;
    let state_desc = b"()[Ljava/lang/Object;";
    let state = p.add_member(false, n, b"state", state_desc)?;
    let mut natives = Vec::new();
    for (native, desc) in NATIVES {
        natives.push(p.add_member(false, n, native.as_bytes(), desc.as_bytes())?);
    }
    let [register, miss, grow, slow_exit] = [natives[0], natives[1], natives[2], natives[3]];
    let current_thread = p.add_member(
        false,
        b"java/lang/Thread",
        if carrier {
            b"currentCarrierThread".as_slice()
        } else {
            b"currentThread".as_slice()
        },
        b"()Ljava/lang/Thread;",
    )?;
    let identity = p.add_member(
        false,
        b"java/lang/System",
        b"identityHashCode",
        b"(Ljava/lang/Object;)I",
    )?;
    let int_array = p.add_class(b"[I")?;
    let long_array = p.add_class(b"[J")?;
    let object_array = p.add_class(b"[Ljava/lang/Object;")?;
    let golden = p.add_integer(0x9E37_79B1_u32 as i32)?;
    let murmur = p.add_integer(0x85EB_CA77_u32 as i32)?;

    let objs = obj(b"[Ljava/lang/Object;");
    let ints = obj(b"[I");
    let longs = obj(b"[J");
    let thread = obj(b"java/lang/Thread");

    // enter(int m); locals: 0 m, 1 state, 2 stack, 3 top, 4 parent, 5 cache, 6 slot, 7 trace
    let mut a = Asm::new();
    let go = a.label();
    a.op16(0xb2, engaged).branch(0x9a, go).raw(&[0x01, 0xb0]); // return null
    a.bind(go, &[Int], &[]);
    a.op16(0xb8, state).raw(&[0x4c]); // astore_1
    a.raw(&[0x2b, 0x03, 0x32])
        .op16(0xc0, int_array)
        .raw(&[0x4d]); // stack = (int[]) st[0]
    a.raw(&[0x2c, 0x03, 0x2e, 0x3e]); // top = stack[0]
    let has_parent = a.label();
    let parent_done = a.label();
    a.raw(&[0x1d]).branch(0x9a, has_parent); // if (top != 0)
    a.raw(&[0x02, 0x36, 4]).branch(0xa7, parent_done); // parent = -1
    a.bind(has_parent, &[Int, objs.clone(), ints.clone(), Int], &[]);
    a.raw(&[0x2c, 0x1d, 0x2e, 0x36, 4]); // parent = stack[top]
    a.bind(
        parent_done,
        &[Int, objs.clone(), ints.clone(), Int, Int],
        &[],
    );
    a.raw(&[0x2b, 0x05, 0x32])
        .op16(0xc0, int_array)
        .raw(&[0x3a, 5]); // cache = st[2]
    // slot = 3 + 3 * (((m * golden) ^ (parent * murmur)) >>> cache[0])
    a.raw(&[0x1a])
        .op16(0x13, golden)
        .raw(&[0x68, 0x15, 4])
        .op16(0x13, murmur);
    a.raw(&[
        0x68, 0x82, 0x19, 5, 0x03, 0x2e, 0x7c, 0x06, 0x68, 0x06, 0x60, 0x36, 6,
    ]);
    let cache_miss = a.label();
    let push = a.label();
    a.raw(&[0x19, 5, 0x15, 6, 0x2e, 0x1a])
        .branch(0xa0, cache_miss); // cache[slot] != m
    a.raw(&[0x19, 5, 0x15, 6, 0x04, 0x60, 0x2e, 0x15, 4])
        .branch(0xa0, cache_miss);
    a.raw(&[0x19, 5, 0x15, 6, 0x05, 0x60, 0x2e, 0x36, 7])
        .branch(0xa7, push);
    let before_trace = [Int, objs.clone(), ints.clone(), Int, Int, ints.clone(), Int];
    a.bind(cache_miss, &before_trace, &[]);
    a.raw(&[0x2b, 0x1a, 0x15, 4])
        .op16(0xb8, miss)
        .raw(&[0x36, 7]);
    let mut with_trace = before_trace.to_vec();
    with_trace.push(Int);
    a.bind(push, &with_trace, &[]);
    let store = a.label();
    a.raw(&[0x1d, 0x05, 0x60, 0x2c, 0xbe]).branch(0xa1, store); // top + 2 < stack.length
    a.raw(&[0x2b]).op16(0xb8, grow).raw(&[0x4d]); // stack = grow(st)
    a.raw(&[0x1d, 0x05, 0x60, 0x2c, 0xbe]).branch(0xa1, store);
    a.raw(&[0x2b, 0xb0]); // at the limit: not recorded; return st
    a.bind(store, &with_trace, &[]);
    a.raw(&[0x2c, 0x1d, 0x04, 0x60, 0x1a, 0x4f]); // stack[top + 1] = m
    a.raw(&[0x2c, 0x1d, 0x05, 0x60, 0x15, 7, 0x4f]); // stack[top + 2] = trace
    a.raw(&[0x2c, 0x03, 0x1d, 0x05, 0x60, 0x4f, 0x2b, 0xb0]); // stack[0] = top + 2; return st
    let enter = a.finish()?;

    // exit(Object o, int m); locals: 0 o, 1 m, 2 state, 3 stack, 4 top, 5 calls, 6 trace
    let mut a = Asm::new();
    let go = a.label();
    let slow = a.label();
    let pop = a.label();
    a.raw(&[0x2a]).branch(0xc7, go).raw(&[0xb1]); // o == null: the tracker was off
    a.bind(go, &[obj(b"java/lang/Object"), Int], &[]);
    a.raw(&[0x2a]).op16(0xc0, object_array).raw(&[0x4d]); // st = (Object[]) o
    a.raw(&[0x2c, 0x03, 0x32])
        .op16(0xc0, int_array)
        .raw(&[0x4e]); // stack = st[0]
    a.raw(&[0x2d, 0x03, 0x2e, 0x36, 4]); // top = stack[0]
    a.raw(&[0x15, 4, 0x05]).branch(0xa1, slow); // top < 2
    a.raw(&[0x2d, 0x15, 4, 0x04, 0x64, 0x2e, 0x1b])
        .branch(0xa0, slow); // stack[top-1] != m
    a.raw(&[0x2d, 0x15, 4, 0x2e, 0x36, 6]); // trace = stack[top]
    a.raw(&[0x2c, 0x04, 0x32])
        .op16(0xc0, long_array)
        .raw(&[0x3a, 5]); // calls = st[1]
    a.raw(&[0x15, 6]).branch(0x9b, pop); // trace < 0: nothing to count
    a.raw(&[0x15, 6, 0x19, 5, 0xbe]).branch(0xa2, slow); // trace >= calls.length
    a.raw(&[0x19, 5, 0x15, 6, 0x5c, 0x2f, 0x0a, 0x61, 0x50]); // calls[trace]++
    let base = [
        obj(b"java/lang/Object"),
        Int,
        objs.clone(),
        ints.clone(),
        Int,
    ];
    let mut counted = base.to_vec();
    counted.extend([longs.clone(), Int]);
    a.bind(pop, &counted, &[]);
    a.raw(&[0x2d, 0x03, 0x15, 4, 0x05, 0x64, 0x4f, 0xb1]); // stack[0] = top - 2
    a.bind(slow, &base, &[]);
    a.raw(&[0x2c, 0x1b]).op16(0xb8, slow_exit).raw(&[0xb1]);
    let exit = a.finish()?;

    // state(); locals: 0 thread, 1 table, 2 mask, 3 i, 4 key
    let mut a = Asm::new();
    let lp = a.label();
    let next = a.label();
    let advance = a.label();
    a.op16(0xb8, current_thread).raw(&[0x4b]);
    a.op16(0xb2, table).raw(&[0x4c]);
    a.raw(&[0x2b, 0xbe, 0x05, 0x64, 0x3d]); // mask = table.length - 2
    a.raw(&[0x2a])
        .op16(0xb8, identity)
        .raw(&[0x04, 0x78, 0x1c, 0x7e, 0x3e]); // i = (h << 1) & mask
    a.bind(lp, &[thread.clone(), objs.clone(), Int, Int], &[]);
    a.raw(&[0x2b, 0x1d, 0x32, 0x3a, 4]); // key = table[i]
    a.raw(&[0x19, 4, 0x2a]).branch(0xa6, next); // key != thread
    a.raw(&[0x2b, 0x1d, 0x04, 0x60, 0x32])
        .op16(0xc0, object_array)
        .raw(&[0xb0]);
    let with_key = [
        thread.clone(),
        objs.clone(),
        Int,
        Int,
        obj(b"java/lang/Object"),
    ];
    a.bind(next, &with_key, &[]);
    a.raw(&[0x19, 4]).branch(0xc7, advance); // key != null
    a.raw(&[0x2a]).op16(0xb8, register).raw(&[0xb0]);
    a.bind(advance, &with_key, &[]);
    a.raw(&[0x1d, 0x05, 0x60, 0x1c, 0x7e, 0x3e])
        .branch(0xa7, lp); // i = (i + 2) & mask
    let state_code = a.finish()?;

    let mut methods = Vec::new();
    let mut method = |p: &mut Pool<'static>,
                      access: u16,
                      mname: &[u8],
                      desc: &[u8],
                      body: Option<(Vec<u8>, Vec<frames::Frame>, u16, u16)>|
     -> crate::Result<()> {
        let mut attributes = Vec::new();
        if let Some((code, frames, max_stack, max_locals)) = body {
            let mut code_attrs = Vec::new();
            if !frames.is_empty() {
                code_attrs.push(Attribute {
                    name: smt,
                    data: Cow::Owned(frames::encode(&frames, p)?),
                });
            }
            attributes.push(Attribute {
                name: code_name,
                data: Cow::Owned(write_code(max_stack, max_locals, &code, &[], &code_attrs)),
            });
        }
        methods.push(Member {
            access,
            name: p.add_utf8(mname)?,
            descriptor: p.add_utf8(desc)?,
            attributes,
        });
        Ok(())
    };
    let public = ACC_PUBLIC | ACC_STATIC;
    method(
        p,
        public,
        ENTER.as_bytes(),
        ENTER_DESCRIPTOR,
        Some((enter.0, enter.1, 6, 8)),
    )?;
    method(
        p,
        public,
        EXIT.as_bytes(),
        EXIT_DESCRIPTOR,
        Some((exit.0.clone(), exit.1.clone(), 6, 7)),
    )?;
    method(
        p,
        public,
        UNWIND.as_bytes(),
        EXIT_DESCRIPTOR,
        Some((exit.0, exit.1, 6, 7)),
    )?;
    method(
        p,
        ACC_PRIVATE | ACC_STATIC,
        b"state",
        state_desc,
        Some((state_code.0, state_code.1, 3, 5)),
    )?;
    for (native, desc) in NATIVES {
        method(
            p,
            ACC_PRIVATE | ACC_STATIC | ACC_NATIVE,
            native.as_bytes(),
            desc.as_bytes(),
            None,
        )?;
    }
    let field =
        |p: &mut Pool<'static>, fname: &str, desc: &[u8]| -> crate::Result<Member<'static>> {
            Ok(Member {
                access: ACC_PRIVATE | ACC_STATIC | ACC_VOLATILE,
                name: p.add_utf8(fname.as_bytes())?,
                descriptor: p.add_utf8(desc)?,
                attributes: Vec::new(),
            })
        };
    let fields = vec![
        field(p, ENGAGED, b"Z")?,
        field(p, TABLE, b"[Ljava/lang/Object;")?,
    ];
    ClassFile {
        minor: 0,
        major: 52,
        pool: pool.clone(),
        access: ACC_PUBLIC | ACC_FINAL | ACC_SUPER,
        this_class,
        super_class,
        interfaces: Vec::new(),
        fields,
        methods,
        attributes: Vec::new(),
    }
    .write()
}
