//! heap=sites' fast mode (`sites=fast`, the default): allocations counted in the allocating
//! bytecode. Every class is rewritten as it loads (and those loaded before VM init by
//! retransformation) by `hprof_classfile::count_allocations`: after each `new`, `newarray`,
//! `anewarray` and `multianewarray`, a call to the counter class `java.lang.HprofAllocs` with
//! the site's number, which the JIT inlines. Each thread counts into its own `long[][]`
//! (chunks of 1,024 slots, made as it first counts in them), held
//! by a field `java.lang.Thread` gets at its first load; a dump sums the live threads' arrays
//! and the arrays of the threads that ended (folded at ThreadEnd). A site is (allocated
//! class, allocating method, line): its objects are exact; its bytes are exact for arrays
//! (from each array's length, with the header and element sizes measured at VM init) and
//! objects × the class's instance size (measured once) for instances.
//!
//! What no bytecode shows (`clone()`, reflection, JNI, `Unsafe.allocateInstance`, objects
//! the VM makes) comes through JVMTI VMObjectAlloc events, counted exactly by (class,
//! trace). Deeper frames of bytecode sites and live objects are estimated by
//! [`super`] (heap=sites) from sampled allocations.
//!
//! Compiled code is counted too: every call of a JDK method with bytecode that C2 replaces by
//! an allocating intrinsic (`ALLOCATING_INTRINSICS`: `Arrays.copyOf`, ...; their intrinsic
//! marks stay) is followed by a probe that counts what it returned, unless the method's
//! bytecode ran and counted it, listed under the allocating instruction of that bytecode;
//! calls of the allocating natives (`Object.clone`, `Array.newArray`,
//! `Unsafe.allocateInstance`), intrinsics too, are followed by the counter class's native `n`,
//! counted by class in [`AllocCounts::natives`] unless VMObjectAlloc reported the object
//! already; and on JDK 23+ string concatenations of up to 20 arguments are made in `java.base`
//! instead of hidden classes (`StringConcatFactory`'s high-arity threshold raised at VM init).
//! Nothing touches the program's standard streams.
//!
//! This module installs the counters (the class hook's rewriting, the start at VM init) and
//! keeps them across threads; [`exact`] reads them into exact sites, [`vm_allocs`] counts what
//! the VM and the allocating natives made.

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use hprof_classfile::{
    ALLOCATING_INTRINSICS, AllocKind, ArrayLayout, COUNTER_CLASS, Element, THREAD_CLASS,
    THREAD_COUNTS_DESCRIPTOR, THREAD_COUNTS_FIELD, THREAD_LAST_DESCRIPTOR, THREAD_LAST_FIELD,
    count_allocations, counter_class, with_counts_field,
};

use crate::engine::Context;
use crate::jvmti::{FieldId, Jni, Jvmti, jobject, jthread};

mod exact;
mod vm_allocs;

use exact::add_array;
pub use exact::display_name;
pub use vm_allocs::counted_native;
use vm_allocs::{NativeSite, VmSite};

/// The tag of the objects in the heap when counting began (an allocation tag no site has:
/// see [`crate::trace_store::is_allocation_tag`]).
pub const BASELINE_TAG: i64 = i64::MAX;

/// Set (to anything), the fast mode fails to start as if the JVM had refused it, and heap=sites
/// falls back to its sampled estimates (a diagnostic switch, used by the tests of the fallback).
pub const NO_FAST_ENV: &str = "_HPROF_NO_FAST_SITES";

thread_local! {
    /// The agent itself allocates on this thread (measuring sizes): not the program's.
    static IN_AGENT: Cell<bool> = const { Cell::new(false) };
}

/// Whether the calling thread is allocating for the agent.
pub fn in_agent() -> bool {
    IN_AGENT.try_with(Cell::get).unwrap_or(false)
}

fn as_agent<T>(f: impl FnOnce() -> T) -> T {
    let _ = IN_AGENT.try_with(|c| c.set(true));
    let r = f();
    let _ = IN_AGENT.try_with(|c| c.set(false));
    r
}

/// One site as the rewriter saw it.
#[derive(Debug, Clone)]
struct Def {
    slot: u32,
    class: String,
    method: String,
    descriptor: String,
    line: i32,
    allocated: String,
    kind: AllocKind,
    /// For a lambda: the interface method's name and the call's descriptor.
    lambda: (String, String),
    /// For a lambda: the class, name and descriptor of its implementation method.
    implementation: (String, String, String),
}

#[derive(Debug, Default)]
struct Defs {
    /// (class, method, descriptor, offset) → index in `defs`: a class rewritten again
    /// (retransformed, or loaded by another loader) keeps its sites' numbers.
    by_key: HashMap<(String, String, String, u32), usize>,
    defs: Vec<Def>,
    next: u32,
}

/// (allocated class signature, method's class, method, descriptor, line).
type SiteKey = (String, String, String, String, i32);

/// The fast mode's counters.
#[derive(Debug, Default)]
pub struct AllocCounts {
    defs: Mutex<Defs>,
    ready: AtomicBool,
    field: OnceLock<FieldId>,
    layout: OnceLock<ArrayLayout>,
    /// Counts of the threads that ended, by slot.
    folded: Mutex<Vec<u64>>,
    /// Instance sizes by allocated class signature.
    sizes: Mutex<HashMap<String, u64>>,
    /// Classes by signature and methods by (class signature, name, descriptor), for traces
    /// of sites no sample saw.
    methods: Mutex<HashMap<(String, String, String), usize>>,
    /// VMObjectAlloc counts.
    vm: Mutex<HashMap<(u64, u32), VmSite>>,
    /// The hidden class of each lambda site (by slot), once found.
    lambda_classes: Mutex<HashMap<u32, String>>,
    /// What the natives of [`NativeAlloc`] made, counted where bytecode called them (the
    /// probe `n` after the call), by (kind, class); an entry's index never changes.
    natives: Mutex<Vec<Arc<NativeSite>>>,
    /// Classes rewritten, sites counted, methods left as they were.
    pub classes: AtomicU64,
    /// Sites given a counter.
    pub sites: AtomicU64,
    /// Methods that could not be rewritten.
    pub failed: AtomicU64,
    /// Milliseconds the rewriting of the classes loaded before VM init took.
    pub install_ms: AtomicU64,
    /// Set once started (the counter class defined): the probes count from then on.
    running: AtomicBool,
    /// Set in `Agent_OnLoad` when the fast mode will run: `java.lang.Thread` gets its counts
    /// field as it first loads.
    early: AtomicBool,
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The JVM signature of an internal class name or array descriptor.
fn signature_of(allocated: &str) -> String {
    if allocated.starts_with('[') {
        allocated.to_string()
    } else {
        format!("L{allocated};")
    }
}

impl AllocCounts {
    /// Says, in `Agent_OnLoad`, that the fast mode will run.
    pub fn request_early(&self) {
        self.early.store(true, Ordering::Release);
    }

    /// The class file load hook: `class` rewritten to count its allocations (and
    /// `java.lang.Thread` given its counts field), or `None` to keep it.
    pub fn transform(&self, name: Option<&[u8]>, class: &[u8]) -> Option<Vec<u8>> {
        if !self.early.load(Ordering::Acquire) {
            return None;
        }
        let ready = self.is_running() && self.ready.load(Ordering::Acquire);
        let rewritten = match (ready, name) {
            (true, Some(name)) => self.rewrite(name, class),
            _ => None,
        };
        if name == Some(THREAD_CLASS.as_bytes()) {
            return with_counts_field(rewritten.as_deref().unwrap_or(class)).ok();
        }
        rewritten
    }

    /// Whether the counts started (the probes count).
    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }

    /// `class` with its allocations counted, or `None`.
    fn rewrite(&self, name: &[u8], class: &[u8]) -> Option<Vec<u8>> {
        // The agent's own classes, and code that runs while a virtual thread mounts or
        // unmounts (where the JVM expects no agent's Java calls), are left alone.
        if name.starts_with(b"java/lang/Hprof")
            || name.starts_with(b"java/lang/VirtualThread")
            || name.starts_with(b"jdk/internal/vm/Continuation")
        {
            return None;
        }
        let outcome = count_allocations(class, |s| {
            let mut defs = self.defs.lock().ok()?;
            let key = (text(s.class), text(s.method), text(s.descriptor), s.offset);
            if let Some(&i) = defs.by_key.get(&key) {
                return Some(defs.defs[i].slot);
            }
            // An array's two slots (objects, bytes) share a chunk of the thread's counts.
            if s.kind != AllocKind::Instance && s.kind != AllocKind::Lambda && defs.next % 2 == 1 {
                defs.next += 1;
            }
            let slot = defs.next;
            let width = match s.kind {
                // Native calls are never numbered (the rewriter does not ask).
                AllocKind::Instance | AllocKind::Lambda | AllocKind::Native(_) => 1,
                AllocKind::Array(_) => 2,
                AllocKind::Multi { dims, .. } => 2 * u32::from(dims.max(1)),
                AllocKind::Intrinsic(k) => {
                    2 * ALLOCATING_INTRINSICS.get(usize::from(k))?.arrays.len() as u32
                }
            };
            defs.next = slot.checked_add(width).filter(|&n| n < (1 << 30))?;
            let def = Def {
                slot,
                class: key.0.clone(),
                method: key.1.clone(),
                descriptor: key.2.clone(),
                line: s.line,
                allocated: text(s.allocated),
                kind: s.kind,
                lambda: (text(s.lambda.0), text(s.lambda.1)),
                implementation: (
                    text(s.implementation.0),
                    text(s.implementation.1),
                    text(s.implementation.2),
                ),
            };
            let i = defs.defs.len();
            defs.defs.push(def);
            defs.by_key.insert(key, i);
            Some(slot)
        })
        .ok()?;
        self.failed
            .fetch_add(outcome.failed.len() as u64, Ordering::Relaxed);
        let bytes = outcome.bytes?;
        self.classes.fetch_add(1, Ordering::Relaxed);
        self.sites
            .fetch_add(u64::from(outcome.sites), Ordering::Relaxed);
        Some(bytes)
    }

    /// At VM init: measures array sizes, defines the counter class, finds the threads'
    /// field and rewrites every class loaded so far.
    pub fn start(&'static self, ctx: &Context, jni: Jni) -> Result<(), String> {
        let jvmti = ctx.jvmti;
        if !self.early.load(Ordering::Acquire) {
            return Err("the fast mode was not asked for at start-up".into());
        }
        if std::env::var_os(NO_FAST_ENV).is_some() {
            return Err(format!(
                "heap=sites' fast mode can't start: {NO_FAST_ENV} is set"
            ));
        }
        let thread = jni
            .find_class(c"java/lang/Thread")
            .ok_or("can't find java.lang.Thread")?;
        let carrier =
            jni.has_static_method(thread, c"currentCarrierThread", c"()Ljava/lang/Thread;");
        // Both fields the counter class uses (the counts, and what an intrinsic's bytecode
        // returned).
        let [field, last] = [
            (THREAD_COUNTS_FIELD, THREAD_COUNTS_DESCRIPTOR),
            (THREAD_LAST_FIELD, THREAD_LAST_DESCRIPTOR),
        ]
        .map(|(name, desc)| {
            let name = CString::new(name).unwrap_or_default();
            let desc = CString::new(desc).unwrap_or_default();
            jni.field_id(thread, &name, &desc)
        });
        jni.delete_local_ref(thread);
        let (Some(field), Some(_)) = (field, last) else {
            return Err("java.lang.Thread has no field for the allocation counts (it was loaded before the agent's class hook)".into());
        };
        let _ = self.field.set(field);
        let layout = as_agent(|| measure_layout(jvmti, jni));
        let _ = self.layout.set(layout);
        let class_name = CString::new(COUNTER_CLASS).unwrap_or_default();
        let class = jni
            .define_boot_class(&class_name, &counter_class(&layout, carrier))
            .ok_or("can't define the counter class java.lang.HprofAllocs")?;
        jni.delete_local_ref(class);
        if self.running.swap(true, Ordering::AcqRel) {
            return Err("heap=sites' allocation counts were started twice".into());
        }
        self.ready.store(true, Ordering::Release);
        let started = std::time::Instant::now();
        jvmti.retransform_loaded(jni);
        concatenation_in_java_base(jvmti, jni);
        // What the heap holds now, the JVM's start-up and what the agent's own start made, is
        // not the program's: every object in it is tagged BASELINE_TAG (classes first get
        // their ids, so they are not), and the live counts pass over it.
        if let Ok(classes) = jvmti.loaded_classes() {
            for class in classes {
                ctx.ids.of(jvmti, class);
                jni.delete_local_ref(class);
            }
            let _ = jvmti.tag_untagged(BASELINE_TAG);
        }
        self.install_ms
            .store(started.elapsed().as_millis() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// ThreadEnd: the thread's counts are kept and its array dropped.
    pub fn thread_end(&self, jni: Jni, thread: jthread) {
        // ThreadEnd runs in the ending thread: its own references go.
        vm_allocs::forget_thread(jni);
        let (Some(&field), Ok(mut folded)) = (self.field.get(), self.folded.lock()) else {
            return;
        };
        jni.with_local_frame(4, || {
            let array = jni.object_field(thread, field);
            if array.is_null() {
                return;
            }
            add_array(jni, array, &mut folded);
            jni.set_object_field(thread, field, std::ptr::null_mut());
        });
    }

    /// Forgets every count (the front-end's "clear sites").
    pub fn clear(&self, jvmti: Jvmti, jni: Option<Jni>) {
        // Live threads' arrays keep counting; the counts now become the zero point.
        if let Some(jni) = jni {
            let totals = self.totals(jvmti, jni);
            if let Ok(mut folded) = self.folded.lock() {
                for (f, t) in folded.iter_mut().zip(&totals) {
                    *f = f.wrapping_sub(*t);
                }
                // Negative offsets for slots only live threads had.
                for &t in totals.iter().skip(folded.len()) {
                    folded.push(0u64.wrapping_sub(t));
                }
            }
        }
        if let Ok(mut vm) = self.vm.lock() {
            vm.clear();
        }
        if let Ok(natives) = self.natives.lock() {
            for n in natives.iter() {
                n.objects.store(0, Ordering::Relaxed);
                n.bytes.store(0, Ordering::Relaxed);
            }
        }
    }
}

/// The JVM's array sizes: for `int[]`, `long[]` and `Object[]`, the offset of element 0
/// from the sizes of small arrays (the first length whose size grows says where the header
/// ends), and the size of a reference from `Object[64]`.
fn measure_layout(jvmti: Jvmti, jni: Jni) -> ArrayLayout {
    let mut layout = ArrayLayout::default();
    let size = |make: &dyn Fn(i32) -> Option<jobject>, n: i32| -> Option<u64> {
        let a = make(n)?;
        let s = jvmti.object_size(a).ok();
        jni.delete_local_ref(a);
        s.map(|s| s.max(0) as u64)
    };
    let base = |make: &dyn Fn(i32) -> Option<jobject>, esize: u64| -> Option<u8> {
        let s0 = size(make, 0)?;
        for n in 1..=16u64 {
            if size(make, n as i32)? > s0 {
                return u8::try_from(s0.checked_sub((n - 1) * esize)?).ok();
            }
        }
        None
    };
    let ints = |n| jni.new_int_array(n);
    let longs = |n| jni.new_long_array(n);
    let objects = |n| jni.new_object_array(n);
    let reference = match (size(&objects, 64), size(&objects, 0)) {
        (Some(a), Some(b)) if a > b => (a - b + 32) / 64,
        _ => 4,
    };
    layout.reference_shift = if reference >= 8 { 3 } else { 2 };
    if let Some(b) = base(&ints, 4) {
        // byte, char and int arrays share the unaligned header.
        layout.base[Element::Byte as usize] = b;
        layout.base[Element::Char as usize] = b;
        layout.base[Element::Int as usize] = b;
    }
    if let Some(b) = base(&longs, 8) {
        layout.base[Element::Long as usize] = b;
    }
    if let Some(b) = base(&objects, reference) {
        layout.base[Element::Reference as usize] = b;
    }
    layout
}

/// The most arguments of a string concatenation that JDK 23+ makes in `java.base` (the
/// threshold JDK 23 had by default).
const CONCAT_ARITY: i32 = 20;

/// From JDK 23 on, `StringConcatFactory` makes each concatenation of more arguments than its
/// `HIGH_ARITY_THRESHOLD` (0 by default from JDK 24: all but the simplest) in a generated
/// hidden class, which no class file load hook sees, so its strings would not be counted.
/// Unless the program set the threshold (`-Djava.lang.invoke.StringConcat.highArityThreshold`),
/// it is raised to [`CONCAT_ARITY`], so that those concatenations are made by `java.base`'s
/// `StringConcatHelper` (the JDK 22 strategy, same strings), whose allocations are counted.
fn concatenation_in_java_base(jvmti: Jvmti, jni: Jni) {
    if jvmti.feature_version().is_none_or(|v| v < 23)
        || jvmti
            .system_property(c"java.lang.invoke.StringConcat.highArityThreshold")
            .is_ok()
    {
        return;
    }
    if let Some(factory) = jni.find_class(c"java/lang/invoke/StringConcatFactory") {
        jni.set_static_int(factory, c"HIGH_ARITY_THRESHOLD", CONCAT_ARITY);
        jni.delete_local_ref(factory);
    }
}
