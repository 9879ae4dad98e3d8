//! Owns the tracker classes, generated here rather than shipped: the Java side of cpu=times,
//! whose `state`, `enter`, `exit` and `caught` the rewritten methods call. The common path is
//! plain bytecode the JIT inlines into the caller (the probes carry HotSpot's `@ForceInline`,
//! honoured for boot classes), with no loop, no native call and no reference store, so it
//! stays small in compiled code and cheap for the JIT to compile:
//!
//! - `state()` reads the calling thread's state from a field the agent adds to
//!   `java.lang.Thread` ([`THREAD_STATE_FIELD`], see [`with_state_field`]): two loads and a
//!   null check; a thread's first call goes to `find`, kept out of line;
//! - `enter(state, method)` looks the callee's trace up in the caller trace's inline cache
//!   (eight direct-mapped entries; the entry is a constant at each call site), counts the
//!   call, makes the callee's trace the thread's current one and returns the caller's, which
//!   the method keeps in a local;
//! - `exit(state, callerTrace)` makes the caller's trace current again: one int store;
//! - `caught(state, callerTrace, method)`, at the start of an exception handler, makes the
//!   method's own trace current again, closing the frames the exception left (out of line:
//!   exceptions are rare).
//!
//! Off the common path, `child` (kept out of line with `@DontInline`) tries the thread's
//! hashed trace cache and fills the inline cache, and the agent's natives handle the rest: a
//! thread's first call (`register`) and a trace in no cache (`miss`, which also grows the
//! thread's arrays).
//!
//! Traces are numbered per thread here (dense local numbers, so a thread's arrays grow with
//! the traces it uses, not with every trace of the program); the agent maps them to its
//! global traces. A thread's state is a [`STATE_CLASS`] object (see [`STATE_FIELDS`]); local
//! trace `t` (-1: none, or not recorded) has its calls at `calls[t + 1]` and its inline cache
//! at `ic[IC_INTS * (t + 1)..][..IC_INTS]`, entry `e` of method `m` being
//! `(m, callee's trace)` at [`ic_entry`]`(m)`.

use crate::asm::Asm;
use crate::frames::{self, VType};
use crate::generate::{
    Body, DONT_INLINE, FORCE_INLINE, Generated, Method, current_thread, with_fields,
};
use crate::instrument::Probes;
use crate::pool::Pool;

/// Internal name of the tracker class. It lives in `java.lang` (defined by the boot loader,
/// so it joins `java.base`), which every module reads and which exports it.
pub const TRACKER_CLASS: &str = "java/lang/HprofTracker";
/// Internal name of the class of the threads' states (fields only, no methods: the agent
/// makes its objects with JNI `AllocObject`).
pub const STATE_CLASS: &str = "java/lang/HprofTrackerState";
/// The probe called first at method entry: the thread's state (a shared, unrecorded one when
/// the tracker is off).
pub const STATE: &str = "state";
/// The probe called next at method entry: the caller's trace.
pub const ENTER: &str = "enter";
/// The probe called before a return.
pub const EXIT: &str = "exit";
/// The probe called at the start of an exception handler.
pub const CAUGHT: &str = "caught";
/// The probes the rewriter inserts, as the generated tracker class names them.
pub const TRACKER_PROBES: Probes<'static> = Probes {
    tracker: TRACKER_CLASS.as_bytes(),
    state: STATE.as_bytes(),
    enter: ENTER.as_bytes(),
    exit: EXIT.as_bytes(),
    caught: CAUGHT.as_bytes(),
};
/// Descriptor of `state`.
pub const STATE_DESCRIPTOR: &[u8] = b"()Ljava/lang/HprofTrackerState;";
/// Descriptor of `enter`: the state, the method's number and its [`ic_entry`]; returns the
/// caller's trace.
pub const ENTER_DESCRIPTOR: &[u8] = b"(Ljava/lang/HprofTrackerState;II)I";
/// Descriptor of `exit`: the state and the trace `enter` returned.
pub const EXIT_DESCRIPTOR: &[u8] = b"(Ljava/lang/HprofTrackerState;I)V";
/// Descriptor of `caught`: the state, the trace `enter` returned and the method's number.
pub const CAUGHT_DESCRIPTOR: &[u8] = b"(Ljava/lang/HprofTrackerState;II)V";
/// The static boolean field that turns the probes on.
pub const ENGAGED: &str = "engaged";
/// The static final field holding the shared, unrecorded state the probes use while the
/// tracker is off.
pub const OFF: &str = "off";
/// The instance field of `java.lang.Thread` (added by [`with_state_field`]) holding the
/// thread's state, null until its first call. Package-private: the tracker is in
/// `java.lang` too.
pub const THREAD_STATE_FIELD: &str = "hprofState";
/// The class the agent adds [`THREAD_STATE_FIELD`] to.
pub const THREAD_CLASS: &str = "java/lang/Thread";
/// The static field of a [`Keying::Table`] tracker holding the threads' states: an
/// `Object[]` of (thread, state) pairs, open-addressed by the thread's identity hash
/// (`(System.identityHashCode(thread) << 1) & (length - 2)`, then every second slot), a
/// power-of-two length of at least 2. The agent inserts and removes pairs and replaces the
/// array when it fills; a removed pair's thread is [`OFF`]'s state, which no thread matches.
pub const TABLE: &str = "table";
/// Descriptor of [`TABLE`].
pub const TABLE_DESCRIPTOR: &str = "[Ljava/lang/Object;";

/// Where a tracker finds the calling thread's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keying {
    /// In the field [`THREAD_STATE_FIELD`] that `java.lang.Thread` got at its first load:
    /// two loads and a null check.
    Field,
    /// In the table [`TABLE`], keyed by the thread's identity hash: for an agent loaded into
    /// a running JVM, where `java.lang.Thread` is loaded already and can get no field. One
    /// intrinsic hash, a mask and a compare more than [`Keying::Field`]; a slot taken by
    /// another thread sends the call out of line to `find`, which probes on.
    Table,
}
/// A thread's hashed trace cache starts with `1 << CACHE_BITS` entries; the agent enlarges
/// the cache of a thread that misses often.
pub const CACHE_BITS: u32 = 6;
/// Ints of a trace's inline cache: eight (method, trace) entries.
pub const IC_INTS: usize = 16;
/// The fields of [`STATE_CLASS`], with their descriptors: `cur` the thread's current trace;
/// `ic` the inline caches by trace; `calls` the calls by trace; `keys` (method, parent trace)
/// and `kids` (trace) of the hashed cache, `1 << (32 - shift)` entries; `misses` since the
/// cache was made; `serial` the thread's serial (0 if unknown); `id` the agent's number for
/// the thread.
pub const STATE_FIELDS: [(&str, &str); 9] = [
    ("cur", "I"),
    ("ic", "[I"),
    ("calls", "[J"),
    ("keys", "[I"),
    ("kids", "[I"),
    ("shift", "I"),
    ("misses", "I"),
    ("serial", "I"),
    ("id", "I"),
];
/// The native methods, with their descriptors: `register(Thread)` makes and returns a
/// thread's state; `miss(state, method, parent)` interns the trace of `method` called under
/// trace `parent`, stores it in the hashed cache, makes sure the state's arrays have room for
/// it and returns it.
pub const NATIVES: [(&str, &str); 2] = [
    ("register", "(Ljava/lang/Thread;)Ljava/lang/Object;"),
    ("miss", "(Ljava/lang/Object;II)I"),
];

/// The entry of (method, parent trace) in a hashed cache whose shift is `shift`: the same
/// formula as the bytecode's. Its key is at `keys[2 * entry]`, its trace at `kids[entry]`.
pub fn cache_index(method: i32, parent: i32, shift: u32) -> usize {
    let h = (method as u32).wrapping_mul(0x9E37_79B1) ^ (parent as u32).wrapping_mul(0x85EB_CA77);
    (h >> (shift & 31)) as usize
}

/// Where method `method`'s entry starts within a trace's inline cache (an even offset below
/// [`IC_INTS`]): the same formula as the bytecode's, which the JIT folds to a constant.
pub fn ic_entry(method: i32) -> usize {
    (((method as u32).wrapping_mul(0x9E37_79B1) >> 29) << 1) as usize
}

const ACC_PUBLIC: u16 = 0x0001;
const ACC_PRIVATE: u16 = 0x0002;
const ACC_STATIC: u16 = 0x0008;
const ACC_FINAL: u16 = 0x0010;
const ACC_SUPER: u16 = 0x0020;
const ACC_VOLATILE: u16 = 0x0040;
const ACC_TRANSIENT: u16 = 0x0080;
const ACC_NATIVE: u16 = 0x0100;
const ACC_SYNTHETIC: u16 = 0x1000;

fn obj(name: &[u8]) -> VType {
    VType::object(name)
}

/// The tracker class file named `name` (normally [`TRACKER_CLASS`]), keyed by
/// `Thread.currentThread()`.
pub fn tracker_class(name: &str) -> Vec<u8> {
    tracker_class_for(name, false)
}

/// The tracker class; with `carrier`, a thread's state is that of the platform thread that
/// runs it (`Thread.currentCarrierThread()`, JDK 19 and later), so virtual threads, which
/// may number millions, share their carriers' states instead of having one each.
pub fn tracker_class_for(name: &str, carrier: bool) -> Vec<u8> {
    tracker_class_keyed(name, carrier, Keying::Field)
}

/// The tracker class, finding the threads' states as `keying` says.
pub fn tracker_class_keyed(name: &str, carrier: bool, keying: Keying) -> Vec<u8> {
    build(name, carrier, keying).expect("the tracker class assembles")
}

/// `java.lang.Thread`'s class file `thread` with [`THREAD_STATE_FIELD`] added (unchanged if
/// it has it already). The field must be there from the class's first load (a class's
/// fields cannot change later), so the agent adds it in the JVM's early class hook, and
/// again each time it retransforms the class.
pub fn with_state_field(thread: &[u8]) -> crate::Result<Vec<u8>> {
    let descriptor = format!("L{STATE_CLASS};");
    with_fields(
        thread,
        &[(
            ACC_TRANSIENT | ACC_SYNTHETIC,
            THREAD_STATE_FIELD,
            &descriptor,
        )],
    )
}

/// The class file of [`STATE_CLASS`]; the tracker class needs it defined first.
pub fn state_class() -> Vec<u8> {
    build_state().expect("the state class assembles")
}

fn build_state() -> crate::Result<Vec<u8>> {
    let mut class = Generated::new(STATE_CLASS.as_bytes())?;
    for (field, desc) in STATE_FIELDS {
        class.field(0, field.as_bytes(), desc.as_bytes())?;
    }
    // <init>() { super(); }
    let object_init = class
        .pool()
        .add_member(false, b"java/lang/Object", b"<init>", b"()V")?;
    let mut init = vec![ALOAD_0, INVOKESPECIAL];
    init.extend_from_slice(&object_init.to_be_bytes());
    init.push(RETURN);
    let body = Body {
        code: (init, Vec::new()),
        max_stack: 1,
        max_locals: 1,
    };
    class.method(Method {
        access: 0,
        name: b"<init>".as_slice().into(),
        descriptor: b"()V",
        body: Some(body),
        annotation: None,
    })?;
    class.finish(ACC_FINAL | ACC_SUPER)
}

// Opcodes used below.
const ICONST_M1: u8 = 0x02;
const ICONST_1: u8 = 0x04;
const ICONST_2: u8 = 0x05;
const AALOAD: u8 = 0x32;
const POP: u8 = 0x57;
const ISUB: u8 = 0x64;
const IAND: u8 = 0x7e;
const IINC: u8 = 0x84;
const IFLE: u8 = 0x9e;
const ANEWARRAY: u8 = 0xbd;
const ARRAYLENGTH: u8 = 0xbe;
const ICONST_4: u8 = 0x07;
const LCONST_1: u8 = 0x0a;
const LDC_W: u8 = 0x13;
const ILOAD: u8 = 0x15;
const ALOAD: u8 = 0x19;
const ILOAD_0: u8 = 0x1a;
const ALOAD_0: u8 = 0x2a;
const IALOAD: u8 = 0x2e;
const LALOAD: u8 = 0x2f;
const ISTORE: u8 = 0x36;
const ASTORE: u8 = 0x3a;
const ISTORE_0: u8 = 0x3b;
const ASTORE_0: u8 = 0x4b;
const IASTORE: u8 = 0x4f;
const LASTORE: u8 = 0x50;
const DUP2: u8 = 0x5c;
const IADD: u8 = 0x60;
const DUP: u8 = 0x59;
const PUTSTATIC: u8 = 0xb3;
const INVOKESPECIAL: u8 = 0xb7;
const NEW: u8 = 0xbb;
const NEWARRAY: u8 = 0xbc;
const T_INT: u8 = 10;
const T_LONG: u8 = 11;
const BIPUSH: u8 = 0x10;
const LADD: u8 = 0x61;
const IMUL: u8 = 0x68;
const ISHL: u8 = 0x78;
const IUSHR: u8 = 0x7c;
const IXOR: u8 = 0x82;
const IF_ICMPNE: u8 = 0xa0;
const IF_ACMPNE: u8 = 0xa6;
const GOTO: u8 = 0xa7;
const IRETURN: u8 = 0xac;
const ARETURN: u8 = 0xb0;
const RETURN: u8 = 0xb1;
const GETSTATIC: u8 = 0xb2;
const GETFIELD: u8 = 0xb4;
const PUTFIELD: u8 = 0xb5;
const INVOKESTATIC: u8 = 0xb8;
const CHECKCAST: u8 = 0xc0;
const IFNULL: u8 = 0xc6;
const IFNONNULL: u8 = 0xc7;
const IFNE: u8 = 0x9a;

/// `iload`/`istore`/`aload`/`astore` of local `n` (below 256), short form when there is one.
fn local(a: &mut Asm, short: u8, long: u8, n: u8) -> &mut Asm {
    if n <= 3 {
        a.raw(&[short + n])
    } else {
        a.raw(&[long, n])
    }
}
fn iload(a: &mut Asm, n: u8) -> &mut Asm {
    local(a, ILOAD_0, ILOAD, n)
}
fn aload(a: &mut Asm, n: u8) -> &mut Asm {
    local(a, ALOAD_0, ALOAD, n)
}
fn istore(a: &mut Asm, n: u8) -> &mut Asm {
    local(a, ISTORE_0, ISTORE, n)
}
fn astore(a: &mut Asm, n: u8) -> &mut Asm {
    local(a, ASTORE_0, ASTORE, n)
}

/// Pushes `((ct + 1) << 4) + ic_entry(m)` (see [`ic_entry`]), with `ct` and `m` in the
/// locals of those numbers.
fn ic_index(a: &mut Asm, ct: u8, m: u8, golden: u16) {
    iload(a, ct);
    a.raw(&[ICONST_1, IADD, ICONST_4, ISHL]);
    iload(a, m);
    a.op16(LDC_W, golden)
        .raw(&[IMUL, BIPUSH, 29, IUSHR, ICONST_1, ISHL, IADD]);
}

/// Locals of a probe's inline-cache lookup ([`ic_lookup`]); local 0 is the state.
struct IcLocals {
    /// The caller's trace and the method (arguments of `child`).
    ct: u8,
    m: u8,
    /// The entry's index in `ic` (already stored).
    i: u8,
    /// Receives `s.ic`.
    ic: u8,
    /// Receives the callee's trace.
    t: u8,
}

/// Stores in local `t` the trace of the inline-cache entry at `ic[i]` if it is method `m`'s
/// (`ic[i + 1]`), else what `child(s, ct, m)` finds. `frame` is the locals' types before
/// `ic` is stored (the lookup adds `ic` and `t`).
fn ic_lookup(a: &mut Asm, ic_field: u16, child: u16, l: &IcLocals, frame: &[VType]) {
    let slow = a.label();
    let found = a.label();
    a.raw(&[ALOAD_0]).op16(GETFIELD, ic_field);
    astore(a, l.ic);
    aload(a, l.ic);
    iload(a, l.i);
    a.raw(&[IALOAD]);
    iload(a, l.m);
    a.branch(IF_ICMPNE, slow); // ic[i] != m
    aload(a, l.ic);
    iload(a, l.i);
    a.raw(&[ICONST_1, IADD, IALOAD]);
    istore(a, l.t);
    a.branch(GOTO, found); // t = ic[i + 1]
    let mut looked = frame.to_vec();
    looked.push(VType::object(b"[I"));
    a.bind(slow, &looked, &[]);
    a.raw(&[ALOAD_0]);
    iload(a, l.ct);
    iload(a, l.m);
    a.op16(INVOKESTATIC, child);
    istore(a, l.t);
    looked.push(VType::Int);
    a.bind(found, &looked, &[]);
}

fn build(name: &str, carrier: bool, keying: Keying) -> crate::Result<Vec<u8>> {
    use VType::{Int, Top};
    let n = name.as_bytes();
    let st = STATE_CLASS.as_bytes();
    let mut class = Generated::new(n)?;
    let p = class.pool();
    let state_desc = b"Ljava/lang/HprofTrackerState;";
    let engaged = p.add_member(true, n, ENGAGED.as_bytes(), b"Z")?;
    let off = p.add_member(true, n, OFF.as_bytes(), state_desc)?;
    let thread_state = p.add_member(
        true,
        THREAD_CLASS.as_bytes(),
        THREAD_STATE_FIELD.as_bytes(),
        state_desc,
    )?;
    let state_class = p.add_class(st)?;
    let state_init = p.add_member(false, st, b"<init>", b"()V")?;
    let field = |p: &mut Pool<'static>, f: &str| -> crate::Result<u16> {
        let desc = STATE_FIELDS
            .iter()
            .find(|(name, _)| *name == f)
            .map_or("I", |(_, d)| d);
        p.add_member(true, st, f.as_bytes(), desc.as_bytes())
    };
    let cur = field(p, "cur")?;
    let ic_field = field(p, "ic")?;
    let calls = field(p, "calls")?;
    let keys = field(p, "keys")?;
    let kids = field(p, "kids")?;
    let shift = field(p, "shift")?;
    let find_desc = b"(Ljava/lang/Thread;)Ljava/lang/HprofTrackerState;";
    let find = p.add_member(false, n, b"find", find_desc)?;
    let register = p.add_member(false, n, NATIVES[0].0.as_bytes(), NATIVES[0].1.as_bytes())?;
    let miss = p.add_member(false, n, NATIVES[1].0.as_bytes(), NATIVES[1].1.as_bytes())?;
    let child_desc = b"(Ljava/lang/HprofTrackerState;II)I";
    let child = p.add_member(false, n, b"child", child_desc)?;
    let current_thread = current_thread(p, carrier)?;
    let table = p.add_member(true, n, TABLE.as_bytes(), TABLE_DESCRIPTOR.as_bytes())?;
    let object_class = p.add_class(b"java/lang/Object")?;
    let identity_hash = p.add_member(
        false,
        b"java/lang/System",
        b"identityHashCode",
        b"(Ljava/lang/Object;)I",
    )?;
    let golden = p.add_integer(0x9E37_79B1_u32 as i32)?;
    let murmur = p.add_integer(0x85EB_CA77_u32 as i32)?;

    let object = obj(b"java/lang/Object");
    let ints = obj(b"[I");
    let state = obj(st);
    let thread = obj(b"java/lang/Thread");

    // <clinit>: `off`, the state probes use while the tracker is off (no trace recorded), so
    // the probes work before the agent engages the tracker (and without the agent, as in the
    // rewriter's tests). locals: 0 s
    let mut a = Asm::new();
    a.op16(NEW, state_class)
        .raw(&[DUP])
        .op16(INVOKESPECIAL, state_init)
        .raw(&[ASTORE_0]);
    a.raw(&[ALOAD_0, ICONST_M1]).op16(PUTFIELD, cur);
    a.raw(&[ALOAD_0, BIPUSH, IC_INTS as u8, NEWARRAY, T_INT])
        .op16(PUTFIELD, ic_field);
    a.raw(&[ALOAD_0, ICONST_1, NEWARRAY, T_LONG])
        .op16(PUTFIELD, calls);
    a.raw(&[ALOAD_0]).op16(PUTSTATIC, off);
    if keying == Keying::Table {
        a.raw(&[ICONST_2])
            .op16(ANEWARRAY, object_class)
            .op16(PUTSTATIC, table);
    }
    a.raw(&[RETURN]);
    let clinit = a.finish()?;

    let objects = obj(b"[Ljava/lang/Object;");
    let (state_code, find_code) = match keying {
        Keying::Field => (
            field_state(current_thread, thread_state, find, &thread, &state)?,
            field_find(
                engaged,
                off,
                register,
                thread_state,
                state_class,
                &thread,
                &object,
            )?,
        ),
        Keying::Table => (
            table_state(
                current_thread,
                table,
                identity_hash,
                find,
                state_class,
                &thread,
                &objects,
            )?,
            table_find(
                engaged,
                off,
                register,
                table,
                identity_hash,
                state_class,
                &thread,
                &objects,
            )?,
        ),
    };

    // enter(State s, int m, int e); locals: 0 s, 1 m, 2 e, 3 ct (caller's trace), 4 i, 5 ic,
    // 6 t. `e` is ic_entry(m), a constant the caller passes (the JIT does not always fold the
    // multiplication when it inlines the probe).
    let mut a = Asm::new();
    a.raw(&[ALOAD_0]).op16(GETFIELD, cur);
    istore(&mut a, 3);
    a.raw(&[
        ILOAD_0 + 3,
        ICONST_1,
        IADD,
        ICONST_4,
        ISHL,
        ILOAD_0 + 2,
        IADD,
    ]); // i
    istore(&mut a, 4);
    let l = IcLocals {
        ct: 3,
        m: 1,
        i: 4,
        ic: 5,
        t: 6,
    };
    ic_lookup(
        &mut a,
        ic_field,
        child,
        &l,
        &[state.clone(), Int, Int, Int, Int],
    );
    a.raw(&[ALOAD_0]).op16(GETFIELD, calls);
    iload(&mut a, 6);
    a.raw(&[ICONST_1, IADD, DUP2, LALOAD, LCONST_1, LADD, LASTORE]); // calls[t + 1]++
    a.raw(&[ALOAD_0]);
    iload(&mut a, 6);
    a.op16(PUTFIELD, cur); // s.cur = t
    a.raw(&[ILOAD_0 + 3, IRETURN]);
    let enter = a.finish()?;

    // child(State s, int pt, int m); locals: 0 s, 1 pt, 2 m, 3 slot, 4 t, 5 ic, 6 i, 7 keys
    let mut a = Asm::new();
    let go = a.label();
    let miss_label = a.label();
    let set = a.label();
    a.raw(&[ALOAD_0]).op16(GETSTATIC, off).branch(IF_ACMPNE, go);
    a.raw(&[ICONST_M1, IRETURN]); // off: nothing recorded
    a.bind(go, &[state.clone(), Int, Int], &[]);
    a.raw(&[ILOAD_0 + 2])
        .op16(LDC_W, golden)
        .raw(&[IMUL, ILOAD_0 + 1])
        .op16(LDC_W, murmur)
        .raw(&[IMUL, IXOR, ALOAD_0])
        .op16(GETFIELD, shift)
        .raw(&[IUSHR, ISTORE_0 + 3]); // slot
    a.raw(&[ALOAD_0]).op16(GETFIELD, keys);
    astore(&mut a, 7);
    aload(&mut a, 7);
    a.raw(&[ILOAD_0 + 3, ICONST_1, ISHL, IALOAD, ILOAD_0 + 2])
        .branch(IF_ICMPNE, miss_label); // keys[2 slot] != m
    aload(&mut a, 7);
    a.raw(&[
        ILOAD_0 + 3,
        ICONST_1,
        ISHL,
        ICONST_1,
        IADD,
        IALOAD,
        ILOAD_0 + 1,
    ])
    .branch(IF_ICMPNE, miss_label); // keys[2 slot + 1] != pt
    a.raw(&[ALOAD_0])
        .op16(GETFIELD, kids)
        .raw(&[ILOAD_0 + 3, IALOAD]);
    istore(&mut a, 4);
    a.branch(GOTO, set); // t = kids[slot]
    a.bind(
        miss_label,
        &[state.clone(), Int, Int, Int, Top, Top, Top, ints.clone()],
        &[],
    );
    a.raw(&[ALOAD_0, ILOAD_0 + 2, ILOAD_0 + 1])
        .op16(INVOKESTATIC, miss);
    istore(&mut a, 4);
    a.bind(
        set,
        &[state.clone(), Int, Int, Int, Int, Top, Top, ints.clone()],
        &[],
    );
    a.raw(&[ALOAD_0]).op16(GETFIELD, ic_field);
    astore(&mut a, 5);
    ic_index(&mut a, 1, 2, golden); // i = ((pt + 1) << 4) + ic_entry(m)
    istore(&mut a, 6);
    // ic[i] = m; ic[i + 1] = t
    aload(&mut a, 5);
    iload(&mut a, 6);
    a.raw(&[ILOAD_0 + 2, IASTORE]);
    aload(&mut a, 5);
    iload(&mut a, 6);
    a.raw(&[ICONST_1, IADD]);
    iload(&mut a, 4);
    a.raw(&[IASTORE]);
    iload(&mut a, 4);
    a.raw(&[IRETURN]);
    let child_code = a.finish()?;

    // caught(State s, int ct, int m): s.cur = the method's own trace;
    // locals: 0 s, 1 ct, 2 m, 3 i, 4 ic, 5 t
    let mut a = Asm::new();
    ic_index(&mut a, 1, 2, golden);
    istore(&mut a, 3);
    let l = IcLocals {
        ct: 1,
        m: 2,
        i: 3,
        ic: 4,
        t: 5,
    };
    ic_lookup(&mut a, ic_field, child, &l, &[state.clone(), Int, Int, Int]);
    a.raw(&[ALOAD_0]);
    iload(&mut a, 5);
    a.op16(PUTFIELD, cur); // s.cur = t
    a.raw(&[RETURN]);
    let caught = a.finish()?;

    // exit(State s, int p): s.cur = p
    let mut a = Asm::new();
    a.raw(&[ALOAD_0, ILOAD_0 + 1])
        .op16(PUTFIELD, cur)
        .raw(&[RETURN]);
    let exit = a.finish()?;

    let public = ACC_PUBLIC | ACC_STATIC;
    let private = ACC_PRIVATE | ACC_STATIC;
    let body = |code: Code, max_stack: u16, max_locals: u16| {
        Some(Body {
            code,
            max_stack,
            max_locals,
        })
    };
    let method = |access: u16,
                  name: &'static [u8],
                  descriptor: &'static [u8],
                  body: Option<Body>,
                  annotation: Option<&'static [u8]>| Method {
        access,
        name: name.into(),
        descriptor,
        body,
        annotation,
    };
    let methods = [
        method(
            public,
            STATE.as_bytes(),
            STATE_DESCRIPTOR,
            body(state_code, 3, 3),
            Some(FORCE_INLINE),
        ),
        method(
            public,
            ENTER.as_bytes(),
            ENTER_DESCRIPTOR,
            body(enter, 6, 7),
            Some(FORCE_INLINE),
        ),
        method(
            private,
            b"child",
            child_desc,
            body(child_code, 4, 8),
            Some(DONT_INLINE),
        ),
        method(
            private,
            b"find",
            find_desc,
            body(find_code, 3, 6),
            Some(DONT_INLINE),
        ),
        method(
            public,
            EXIT.as_bytes(),
            EXIT_DESCRIPTOR,
            body(exit, 2, 2),
            Some(FORCE_INLINE),
        ),
        method(
            public,
            CAUGHT.as_bytes(),
            CAUGHT_DESCRIPTOR,
            body(caught, 3, 6),
            Some(DONT_INLINE),
        ),
        method(ACC_STATIC, b"<clinit>", b"()V", body(clinit, 4, 1), None),
    ];
    for m in methods {
        class.method(m)?;
    }
    for (native, desc) in NATIVES {
        class.method(method(
            private | ACC_NATIVE,
            native.as_bytes(),
            desc.as_bytes(),
            None,
            None,
        ))?;
    }
    let private_static = ACC_PRIVATE | ACC_STATIC;
    class.field(private_static | ACC_VOLATILE, ENGAGED.as_bytes(), b"Z")?;
    class.field(private_static | ACC_FINAL, OFF.as_bytes(), state_desc)?;
    if keying == Keying::Table {
        class.field(
            private_static | ACC_VOLATILE,
            TABLE.as_bytes(),
            TABLE_DESCRIPTOR.as_bytes(),
        )?;
    }
    class.finish(ACC_PUBLIC | ACC_FINAL | ACC_SUPER)
}

/// Assembled code and its frames.
type Code = (Vec<u8>, Vec<frames::Frame>);

/// `state()` of a [`Keying::Field`] tracker; locals: 0 thread, 1 s. The thread's state if it
/// has one, else `find()`.
fn field_state(
    current_thread: u16,
    thread_state: u16,
    find: u16,
    thread: &VType,
    state: &VType,
) -> crate::Result<Code> {
    let mut a = Asm::new();
    let first = a.label();
    a.op16(INVOKESTATIC, current_thread).raw(&[ASTORE_0]);
    a.raw(&[ALOAD_0])
        .op16(GETFIELD, thread_state)
        .raw(&[ASTORE_0 + 1]);
    a.raw(&[ALOAD_0 + 1]).branch(IFNULL, first);
    a.raw(&[ALOAD_0 + 1, ARETURN]);
    a.bind(first, &[thread.clone(), state.clone()], &[]);
    a.raw(&[ALOAD_0]).op16(INVOKESTATIC, find).raw(&[ARETURN]);
    a.finish()
}

/// `find(Thread t)` of a [`Keying::Field`] tracker, a thread's first call: `off` while the
/// tracker is off, else the state the agent makes for the thread, kept in its field;
/// locals: 0 thread, 1 s.
fn field_find(
    engaged: u16,
    off: u16,
    register: u16,
    thread_state: u16,
    state_class: u16,
    thread: &VType,
    object: &VType,
) -> crate::Result<Code> {
    let mut a = Asm::new();
    let go = a.label();
    let got = a.label();
    a.op16(GETSTATIC, engaged).branch(IFNE, go);
    a.op16(GETSTATIC, off).raw(&[ARETURN]);
    a.bind(go, std::slice::from_ref(thread), &[]);
    a.raw(&[ALOAD_0])
        .op16(INVOKESTATIC, register)
        .raw(&[ASTORE_0 + 1]);
    a.raw(&[ALOAD_0 + 1]).branch(IFNONNULL, got);
    a.op16(GETSTATIC, off).raw(&[ARETURN]); // not registered: not recorded
    a.bind(got, &[thread.clone(), object.clone()], &[]);
    a.raw(&[ALOAD_0, ALOAD_0 + 1])
        .op16(CHECKCAST, state_class)
        .op16(PUTFIELD, thread_state);
    a.raw(&[ALOAD_0 + 1])
        .op16(CHECKCAST, state_class)
        .raw(&[ARETURN]);
    a.finish()
}

/// `state()` of a [`Keying::Table`] tracker; locals: 0 thread, 1 table, 2 slot. The state
/// in the thread's first slot if the slot is the thread's, else `find()`.
fn table_state(
    current_thread: u16,
    table: u16,
    identity_hash: u16,
    find: u16,
    state_class: u16,
    thread: &VType,
    objects: &VType,
) -> crate::Result<Code> {
    let mut a = Asm::new();
    let other = a.label();
    a.op16(INVOKESTATIC, current_thread).raw(&[ASTORE_0]);
    a.op16(GETSTATIC, table).raw(&[ASTORE_0 + 1]);
    a.raw(&[ALOAD_0])
        .op16(INVOKESTATIC, identity_hash)
        .raw(&[
            ICONST_1,
            ISHL,
            ALOAD_0 + 1,
            ARRAYLENGTH,
            ICONST_2,
            ISUB,
            IAND,
        ])
        .raw(&[ISTORE_0 + 2]); // slot = (hash << 1) & (length - 2)
    a.raw(&[ALOAD_0 + 1, ILOAD_0 + 2, AALOAD, ALOAD_0])
        .branch(IF_ACMPNE, other); // table[slot] != thread
    a.raw(&[ALOAD_0 + 1, ILOAD_0 + 2, ICONST_1, IADD, AALOAD])
        .op16(CHECKCAST, state_class)
        .raw(&[ARETURN]);
    a.bind(other, &[thread.clone(), objects.clone(), VType::Int], &[]);
    a.raw(&[ALOAD_0]).op16(INVOKESTATIC, find).raw(&[ARETURN]);
    a.finish()
}

/// `find(Thread t)` of a [`Keying::Table`] tracker: `off` while the tracker is off, else
/// the thread's state from a probe of the whole table, else the state the agent makes for
/// the thread and puts in the table (`off` if it makes none); locals: 0 thread, 1 table,
/// 2 mask, 3 slot, 4 slots left, 5 key.
#[allow(clippy::too_many_arguments)]
fn table_find(
    engaged: u16,
    off: u16,
    register: u16,
    table: u16,
    identity_hash: u16,
    state_class: u16,
    thread: &VType,
    objects: &VType,
) -> crate::Result<Code> {
    use VType::Int;
    let mut a = Asm::new();
    let go = a.label();
    let probe = a.label();
    let next = a.label();
    let add = a.label();
    let got = a.label();
    a.op16(GETSTATIC, engaged).branch(IFNE, go);
    a.op16(GETSTATIC, off).raw(&[ARETURN]);
    a.bind(go, std::slice::from_ref(thread), &[]);
    a.op16(GETSTATIC, table).raw(&[ASTORE_0 + 1]);
    a.raw(&[ALOAD_0 + 1, ARRAYLENGTH, ICONST_2, ISUB, ISTORE_0 + 2]);
    a.raw(&[ALOAD_0]).op16(INVOKESTATIC, identity_hash).raw(&[
        ICONST_1,
        ISHL,
        ILOAD_0 + 2,
        IAND,
        ISTORE_0 + 3,
    ]);
    a.raw(&[ALOAD_0 + 1, ARRAYLENGTH, ICONST_1, IUSHR]);
    istore(&mut a, 4);
    let probing = [thread.clone(), objects.clone(), Int, Int, Int];
    a.bind(probe, &probing, &[]);
    iload(&mut a, 4);
    a.branch(IFLE, add); // every slot seen
    a.raw(&[ALOAD_0 + 1, ILOAD_0 + 3, AALOAD]);
    astore(&mut a, 5);
    aload(&mut a, 5);
    a.raw(&[ALOAD_0]).branch(IF_ACMPNE, next);
    a.raw(&[ALOAD_0 + 1, ILOAD_0 + 3, ICONST_1, IADD, AALOAD])
        .op16(CHECKCAST, state_class)
        .raw(&[ARETURN]);
    let mut keyed = probing.to_vec();
    keyed.push(obj(b"java/lang/Object"));
    a.bind(next, &keyed, &[]);
    aload(&mut a, 5);
    a.branch(IFNULL, add); // an empty slot: the thread is not in the table
    a.raw(&[ILOAD_0 + 3, ICONST_2, IADD, ILOAD_0 + 2, IAND, ISTORE_0 + 3]);
    a.raw(&[IINC, 4, 0xff]);
    a.branch(GOTO, probe);
    a.bind(add, &probing, &[]);
    a.raw(&[ALOAD_0])
        .op16(INVOKESTATIC, register)
        .raw(&[DUP])
        .branch(IFNONNULL, got);
    a.raw(&[POP]).op16(GETSTATIC, off).raw(&[ARETURN]); // not registered: not recorded
    a.bind(got, &probing, &[obj(b"java/lang/Object")]);
    a.op16(CHECKCAST, state_class).raw(&[ARETURN]);
    a.finish()
}
