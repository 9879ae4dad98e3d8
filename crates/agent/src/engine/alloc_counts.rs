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
//! [`super::heap_sites`] from sampled allocations.
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

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use hprof_classfile::{
    ALLOCATING_INTRINSICS, AllocKind, ArrayLayout, CHUNK, COUNTER_CLASS, Element, NativeAlloc,
    THREAD_CLASS, THREAD_COUNTS_DESCRIPTOR, THREAD_COUNTS_FIELD, THREAD_LAST_DESCRIPTOR,
    THREAD_LAST_FIELD, count_allocations, counter_class, with_counts_field,
};

use crate::engine::Context;
use crate::jvmti::{FieldId, Jni, Jvmti, WeakRef, jclass, jmethodID, jobject, jthread};
use crate::trace_store::{ClassInfo, Trace, class_name_from_signature};

/// The tag of the objects in the heap when counting began (an allocation tag no site has:
/// see [`crate::engine::heap_sites::is_allocation_tag`]).
pub const BASELINE_TAG: i64 = i64::MAX;

/// Set (to anything), the fast mode fails to start as if the JVM had refused it, and heap=sites
/// falls back to its sampled estimates (a diagnostic switch, used by the tests of the fallback).
pub const NO_FAST_ENV: &str = "_HPROF_NO_FAST_SITES";

/// Set in `Agent_OnLoad` when the fast mode will run: `java.lang.Thread` gets its counts
/// field as it first loads.
static EARLY: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The agent itself allocates on this thread (measuring sizes): not the program's.
    static IN_AGENT: Cell<bool> = const { Cell::new(false) };
    /// The object of this thread's last VMObjectAlloc event: a native allocation counted
    /// through the event is not counted again by the probe after the call.
    static LAST_VM_ALLOC: Cell<Option<WeakRef>> = const { Cell::new(None) };
    /// This thread's (class id, native kind) → entry of [`AllocCounts::natives`].
    static NATIVE_SITES: std::cell::RefCell<rustc_hash::FxHashMap<(u64, u8), Arc<NativeSite>>> =
        std::cell::RefCell::new(rustc_hash::FxHashMap::default());
}

/// Objects of one class made by one [`NativeAlloc`] kind where bytecode called it; the
/// counts are added to without a lock.
#[derive(Debug)]
struct NativeSite {
    kind: NativeAlloc,
    signature: String,
    /// The size of every object of the class, for an instance class (an array's size
    /// depends on its length).
    instance_size: Option<u64>,
    objects: AtomicU64,
    bytes: AtomicU64,
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

/// Counts of one (allocated class, allocating method, line), exact.
#[derive(Debug, Clone)]
pub struct ExactSite {
    /// The allocated class's JVM signature (`Ljava/lang/String;`, `[I`).
    pub signature: String,
    /// The allocating method's class (internal name), name, descriptor and line.
    pub class: String,
    /// Method name.
    pub method: String,
    /// Method descriptor.
    pub descriptor: String,
    /// Source line, -1 if unknown.
    pub line: i32,
    /// Objects allocated.
    pub objects: u64,
    /// Bytes allocated.
    pub bytes: u64,
}

/// Objects the VM allocated, by (class, trace).
#[derive(Debug)]
pub struct VmSite {
    /// Allocated class.
    pub class: Arc<ClassInfo>,
    /// Allocation trace.
    pub trace: Arc<Trace>,
    /// Objects.
    pub objects: u64,
    /// Bytes.
    pub bytes: u64,
}

/// A loaded lambda class, as [`AllocCounts::find_lambda_classes`] matches it to sites.
struct LambdaClass {
    /// Internal name (`C$$Lambda$14/0x…`).
    name: String,
    /// Signatures of the interfaces it implements.
    interfaces: Vec<String>,
    /// Descriptors of its constructors.
    constructors: Vec<String>,
    /// The methods (class, name, descriptor) its constant pool refers to, if JVMTI gave the
    /// pool.
    calls: Option<std::collections::HashSet<(String, String, String)>>,
}

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
}

/// Says, in `Agent_OnLoad`, that the fast mode will run.
pub fn request_early() {
    EARLY.store(true, Ordering::Release);
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
    /// The class file load hook: `class` rewritten to count its allocations (and
    /// `java.lang.Thread` given its counts field), or `None` to keep it.
    pub fn transform(&self, name: Option<&[u8]>, class: &[u8]) -> Option<Vec<u8>> {
        if !EARLY.load(Ordering::Acquire) {
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
        if !EARLY.load(Ordering::Acquire) {
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

    /// The array layout in use.
    pub fn layout(&self) -> ArrayLayout {
        self.layout.get().copied().unwrap_or_default()
    }

    /// ThreadEnd: the thread's counts are kept and its array dropped.
    pub fn thread_end(&self, jni: Jni, thread: jthread) {
        // ThreadEnd runs in the ending thread: its own references go.
        if let Ok(Some(last)) = LAST_VM_ALLOC.try_with(Cell::take) {
            jni.delete_weak_ref(last);
        }
        let _ = NATIVE_SITES.try_with(|sites| {
            if let Ok(mut sites) = sites.try_borrow_mut() {
                sites.clear();
            }
        });
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

    /// Every slot's count now: the ended threads' and each live thread's.
    fn totals(&self, jvmti: Jvmti, jni: Jni) -> Vec<u64> {
        let Some(&field) = self.field.get() else {
            return Vec::new();
        };
        let threads = jvmti.all_threads().unwrap_or_default();
        let Ok(folded) = self.folded.lock() else {
            return Vec::new();
        };
        let mut totals = folded.clone();
        for &thread in &threads {
            jni.with_local_frame(4, || {
                let array = jni.object_field(thread, field);
                if !array.is_null() {
                    add_array(jni, array, &mut totals);
                }
            });
        }
        drop(folded);
        for thread in threads {
            jni.delete_local_ref(thread);
        }
        totals
    }

    /// The exact counts of every site that allocated, merged by (allocated class, method,
    /// line). `sampled_size` gives an instance size a sample saw, else the agent measures it.
    pub fn exact(
        &self,
        jvmti: Jvmti,
        jni: Jni,
        sampled_size: impl Fn(&str) -> Option<u64>,
    ) -> Vec<ExactSite> {
        let totals = self.totals(jvmti, jni);
        let at = |slot: u32| totals.get(slot as usize).copied().unwrap_or(0);
        let defs: Vec<Def> = match self.defs.lock() {
            Ok(d) => d.defs.clone(),
            Err(_) => return Vec::new(),
        };
        self.find_lambda_classes(jvmti, jni, &defs, &at);
        let lambda_classes = self
            .lambda_classes
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default();
        let mut merged: HashMap<SiteKey, (u64, u64)> = HashMap::new();
        let mut to_size: Vec<String> = Vec::new();
        for d in &defs {
            let mut add = |allocated: &str, objects: u64, bytes: u64| {
                if objects == 0 {
                    return;
                }
                let e = merged
                    .entry((
                        signature_of(allocated),
                        d.class.clone(),
                        d.method.clone(),
                        d.descriptor.clone(),
                        d.line,
                    ))
                    .or_default();
                e.0 += objects;
                e.1 += bytes;
            };
            match d.kind {
                AllocKind::Instance => {
                    let n = at(d.slot);
                    if n > 0 {
                        to_size.push(signature_of(&d.allocated));
                    }
                    add(&d.allocated, n, 0);
                }
                AllocKind::Lambda => {
                    let n = at(d.slot);
                    if let Some(class) = lambda_classes.get(&d.slot).filter(|_| n > 0) {
                        to_size.push(signature_of(class));
                        add(class, n, 0);
                    }
                }
                AllocKind::Array(_) => add(&d.allocated, at(d.slot), at(d.slot + 1)),
                AllocKind::Native(_) | AllocKind::Intrinsic(_) => {}
                AllocKind::Multi { dims, .. } => {
                    for level in 0..u32::from(dims) {
                        let allocated = d.allocated.get(level as usize..).unwrap_or("");
                        add(
                            allocated,
                            at(d.slot + 2 * level),
                            at(d.slot + 2 * level + 1),
                        );
                    }
                }
            }
        }
        // What the allocating intrinsics returned where compiled code made it, under the
        // allocating instruction of their bytecode (where the bytecode counts what it makes
        // when it runs): one site whether the caller was compiled or not.
        for d in &defs {
            let AllocKind::Intrinsic(k) = d.kind else {
                continue;
            };
            let Some(intrinsic) = ALLOCATING_INTRINSICS.get(usize::from(k)) else {
                continue;
            };
            let (class, method, descriptor) = intrinsic.site;
            for (j, array) in intrinsic.arrays.iter().enumerate() {
                let (objects, bytes) = (at(d.slot + 2 * j as u32), at(d.slot + 2 * j as u32 + 1));
                if objects == 0 {
                    continue;
                }
                // The line of that instruction, from the bytecode's own site.
                let line = defs
                    .iter()
                    .find(|s| {
                        matches!(s.kind, AllocKind::Array(_))
                            && s.allocated == *array
                            && s.class == class
                            && s.method == method
                            && s.descriptor == descriptor
                    })
                    .map_or(-1, |s| s.line);
                let e = merged
                    .entry((
                        array.to_string(),
                        class.to_string(),
                        method.to_string(),
                        descriptor.to_string(),
                        line,
                    ))
                    .or_default();
                e.0 += objects;
                e.1 += bytes;
            }
        }
        // What the natives made where bytecode called them, under the native method (the
        // allocating frame of the same objects when VMObjectAlloc reports them). A capturing
        // lambda's object (`Unsafe.allocateInstance` of a method handle) was counted at its
        // call site: the lambda classes of a class whose lambda sites counted are left out
        // (even one a site could not name, whose objects went to another lambda class of
        // the same class; a non-capturing lambda's one object is left out with them).
        let lambda_prefixes: Vec<String> = defs
            .iter()
            .filter(|d| d.kind == AllocKind::Lambda && at(d.slot) > 0)
            .map(|d| format!("L{}$$Lambda", d.class))
            .collect();
        let natives = self.natives.lock().map(|n| n.clone()).unwrap_or_default();
        for n in natives {
            let (objects, bytes) = (
                n.objects.load(Ordering::Relaxed),
                n.bytes.load(Ordering::Relaxed),
            );
            if objects == 0 || lambda_prefixes.iter().any(|p| n.signature.starts_with(p)) {
                continue;
            }
            let (class, method, descriptor) = n.kind.method();
            if !n.signature.starts_with('[') {
                to_size.push(n.signature.clone());
            }
            let e = merged
                .entry((
                    n.signature.clone(),
                    class.to_string(),
                    method.to_string(),
                    descriptor.to_string(),
                    -1,
                ))
                .or_default();
            e.0 += objects;
            e.1 += bytes;
        }
        self.size_instances(jvmti, jni, &to_size, &sampled_size);
        let sizes = self.sizes.lock().map(|s| s.clone()).unwrap_or_default();
        merged
            .into_iter()
            .map(
                |((signature, class, method, descriptor, line), (objects, bytes))| {
                    let bytes = if signature.starts_with('[') {
                        bytes
                    } else {
                        objects * sizes.get(&signature).copied().unwrap_or(0)
                    };
                    ExactSite {
                        signature,
                        class,
                        method,
                        descriptor,
                        line,
                        objects,
                        bytes,
                    }
                },
            )
            .collect()
    }

    /// Finds the hidden class of each lambda site that allocated and has none yet: a loaded
    /// class named after the site's class (`C$$Lambda…`) that implements the site's
    /// interface with a constructor taking the captured values, and whose constant pool
    /// refers to the site's implementation method (javac's `lambda$m$0`, one per lambda
    /// expression; a method reference's target): each lambda expression names its own class.
    /// Where no class refers to it (the JVM calls a few targets through a method handle, or
    /// the pool can't be read), the first class that fits otherwise and calls no other
    /// site's implementation is taken; two method references to one method with the same
    /// interface and captured types name the same class (their counts stay separate).
    fn find_lambda_classes(&self, jvmti: Jvmti, jni: Jni, defs: &[Def], at: &dyn Fn(u32) -> u64) {
        let Ok(mut found) = self.lambda_classes.lock() else {
            return;
        };
        let wanted: Vec<&Def> = defs
            .iter()
            .filter(|d| {
                d.kind == AllocKind::Lambda && at(d.slot) > 0 && !found.contains_key(&d.slot)
            })
            .collect();
        if wanted.is_empty() {
            return;
        }
        let Ok(classes) = jvmti.loaded_classes() else {
            return;
        };
        // The lambda classes of the wanted sites' classes: name, interfaces, constructors'
        // descriptors and constant pool.
        let mut candidates: Vec<LambdaClass> = Vec::new();
        for class in classes {
            let sig = jvmti.class_signature(class).unwrap_or_default();
            if wanted
                .iter()
                .any(|d| sig.starts_with(&format!("L{}$$Lambda", d.class)))
            {
                let interfaces = jvmti
                    .interfaces(class)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|i| {
                        let s = jvmti.class_signature(i).unwrap_or_default();
                        jni.delete_local_ref(i);
                        s
                    })
                    .collect();
                let constructors = jvmti
                    .class_methods(class)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|m| jvmti.method_name(m).ok())
                    .filter(|(n, _)| n == "<init>")
                    .map(|(_, d)| d)
                    .collect();
                // The class's name as an internal name (its signature without L;).
                let name = sig
                    .strip_prefix('L')
                    .and_then(|s| s.strip_suffix(';'))
                    .unwrap_or(&sig)
                    .to_string();
                candidates.push(LambdaClass {
                    name,
                    interfaces,
                    constructors,
                    calls: jvmti.constant_pool(class).ok().and_then(|(count, bytes)| {
                        let pool = hprof_classfile::pool::Pool::parse(&bytes, count).ok()?;
                        Some(
                            pool.method_refs()
                                .into_iter()
                                .map(|(c, n, d)| (text(c), text(n), text(d)))
                                .collect(),
                        )
                    }),
                });
            }
            jni.delete_local_ref(class);
        }
        // The implementation methods of every lambda site: a class whose pool calls one of
        // them belongs to that site.
        let implementations: Vec<(&u32, &(String, String, String))> = defs
            .iter()
            .filter(|d| d.kind == AllocKind::Lambda && !d.implementation.1.is_empty())
            .map(|d| (&d.slot, &d.implementation))
            .collect();
        for d in wanted {
            let factory = &d.lambda.1;
            let params = factory.find(')').map_or("", |close| &factory[1..close]);
            let constructor = format!("({params})V");
            let fits = |c: &&LambdaClass| {
                c.name.starts_with(&format!("{}$$Lambda", d.class))
                    && c.interfaces.contains(&signature_of(&d.allocated))
                    && c.constructors.contains(&constructor)
            };
            let calls = |c: &LambdaClass, method: &(String, String, String)| {
                c.calls.as_ref().is_some_and(|calls| calls.contains(method))
            };
            // A class that calls another site's implementation (and not this one's) is
            // that site's.
            let others = |c: &LambdaClass| {
                implementations
                    .iter()
                    .any(|&(slot, m)| *slot != d.slot && m != &d.implementation && calls(c, m))
            };
            let chosen = candidates
                .iter()
                .filter(fits)
                .find(|c| !d.implementation.1.is_empty() && calls(c, &d.implementation))
                .or_else(|| candidates.iter().filter(fits).find(|c| !others(c)));
            if let Some(c) = chosen {
                found.insert(d.slot, c.name.clone());
            }
        }
    }

    /// Measures the instance size of each class in `signatures` not measured yet: from a
    /// sampled object's size if one was seen, else from an object the agent allocates
    /// (JNI AllocObject, no constructor run; the class is initialised already, since the
    /// program allocated one).
    fn size_instances(
        &self,
        jvmti: Jvmti,
        jni: Jni,
        signatures: &[String],
        sampled_size: &impl Fn(&str) -> Option<u64>,
    ) {
        // The lock is not held across the JNI and JVMTI calls below: AllocObject can wait
        // for a collection.
        let mut missing: Vec<&String> = Vec::new();
        {
            let Ok(mut sizes) = self.sizes.lock() else {
                return;
            };
            for s in signatures {
                if sizes.contains_key(s) {
                    continue;
                }
                match sampled_size(s) {
                    Some(size) => {
                        sizes.insert(s.clone(), size);
                    }
                    None => missing.push(s),
                }
            }
        }
        if missing.is_empty() {
            return;
        }
        let Ok(classes) = jvmti.loaded_classes() else {
            return;
        };
        let mut measured: Vec<(String, u64)> = Vec::new();
        for class in classes {
            if let Ok(sig) = jvmti.class_signature(class)
                && missing.iter().any(|m| **m == sig)
                && !measured.iter().any(|(m, _)| *m == sig)
            {
                let size = as_agent(|| {
                    let object = jni.alloc_object(class)?;
                    let size = jvmti.object_size(object).ok();
                    jni.delete_local_ref(object);
                    size
                });
                if let Some(size) = size {
                    measured.push((sig, size.max(0) as u64));
                }
            }
            jni.delete_local_ref(class);
        }
        if let Ok(mut sizes) = self.sizes.lock() {
            sizes.extend(measured);
        }
    }

    /// A one-frame trace at (class, method, descriptor, line) and the allocated class's
    /// info, for a site no sample saw.
    pub fn site_of(
        &self,
        ctx: &Context,
        jni: Jni,
        site: &ExactSite,
        classes: &HashMap<String, jclass>,
    ) -> Option<(Arc<ClassInfo>, Arc<Trace>)> {
        let jvmti = ctx.jvmti;
        let allocated = *classes.get(&site.signature)?;
        let holder = *classes.get(&signature_of(&site.class))?;
        let key = (
            site.class.clone(),
            site.method.clone(),
            site.descriptor.clone(),
        );
        let method = {
            let mut methods = self.methods.lock().ok()?;
            match methods.get(&key) {
                Some(&m) => m as jmethodID,
                None => {
                    let found = jvmti.class_methods(holder).ok()?.into_iter().find(|&m| {
                        jvmti
                            .method_name(m)
                            .is_ok_and(|(n, d)| n == site.method && d == site.descriptor)
                    })?;
                    methods.insert(key, found as usize);
                    found
                }
            }
        };
        let location = jvmti
            .line_numbers(method)
            .ok()
            .and_then(|lines| {
                lines
                    .iter()
                    .filter(|&&(_, l)| l == site.line)
                    .map(|&(at, _)| at)
                    .min()
            })
            .unwrap_or(0);
        let frames = if ctx.depth() == 0 {
            Vec::new()
        } else {
            vec![(method, location)]
        };
        let mut traces = ctx.traces.lock().ok()?;
        let trace = traces.intern(jvmti, jni, &ctx.ids, &frames, 0)?;
        let id = ctx.ids.of(jvmti, allocated);
        let class = traces.class_info_with_id(jvmti, id, allocated);
        Some((class, trace))
    }

    /// VMObjectAlloc: an object the VM allocated, counted by (class, trace).
    pub fn on_vm_alloc(
        &self,
        ctx: &Context,
        jni: Jni,
        class: jclass,
        size: i64,
        class_class: Option<u64>,
    ) {
        if in_agent() {
            return;
        }
        let jvmti = ctx.jvmti;
        let mut frames = Vec::new();
        let n = jvmti
            .current_stack_trace(ctx.depth(), &mut frames)
            .unwrap_or(0);
        let frames: Vec<_> = frames[..n].iter().map(|f| (f.method, f.location)).collect();
        let id = ctx.ids.of(jvmti, class);
        if Some(id) == class_class {
            return;
        }
        let (info, trace) = {
            let Ok(mut traces) = ctx.traces.lock() else {
                return;
            };
            let Some(trace) = traces.intern(jvmti, jni, &ctx.ids, &frames, 0) else {
                return;
            };
            (traces.class_info_with_id(jvmti, id, class), trace)
        };
        if let Ok(mut vm) = self.vm.lock() {
            let e = vm.entry((id, trace.serial)).or_insert_with(|| VmSite {
                class: info,
                trace,
                objects: 0,
                bytes: 0,
            });
            e.objects += 1;
            e.bytes += size.max(0) as u64;
        }
    }

    /// The native probe `n`: `object` was just returned by a call of the [`NativeAlloc`]
    /// numbered `kind`, in the calling thread. Counted by class unless VMObjectAlloc
    /// reported it already (the native ran, not the JIT's intrinsic).
    /// `ctx`: heap=sites' context, once it started.
    pub fn on_native_alloc(&self, ctx: Option<&Context>, jni: Jni, object: jobject, kind: i32) {
        if object.is_null() || in_agent() {
            return;
        }
        if let Ok(Some(last)) = LAST_VM_ALLOC.try_with(Cell::take) {
            let reported = jni.is_same_object(last.get(), object);
            jni.delete_weak_ref(last);
            if reported {
                return;
            }
        }
        let Some(kind) = NativeAlloc::ALL.into_iter().find(|k| *k as i32 == kind) else {
            return;
        };
        let Some(ctx) = ctx else {
            return;
        };
        let jvmti = ctx.jvmti;
        let size_of = || jvmti.object_size(object).map_or(0, |s| s.max(0) as u64);
        let Some(class) = jni.object_class(object) else {
            return;
        };
        // Classes are known by their object ids (tags): one lookup, whatever the number of
        // classes a thread's calls return.
        let id = ctx.ids.of(jvmti, class);
        let site = NATIVE_SITES
            .try_with(|sites| {
                let mut sites = sites.try_borrow_mut().ok()?;
                if let Some(site) = sites.get(&(id, kind as u8)) {
                    return Some(site.clone());
                }
                let signature = jvmti.class_signature(class).ok()?;
                // Measured before the lock: no JVMTI call is made while it is held.
                let instance_size = (!signature.starts_with('[')).then(size_of);
                let site = {
                    let mut natives = self.natives.lock().ok()?;
                    match natives
                        .iter()
                        .find(|n| n.kind == kind && n.signature == signature)
                    {
                        Some(n) => n.clone(),
                        None => {
                            let n = Arc::new(NativeSite {
                                kind,
                                signature,
                                instance_size,
                                objects: AtomicU64::new(0),
                                bytes: AtomicU64::new(0),
                            });
                            natives.push(n.clone());
                            n
                        }
                    }
                };
                sites.insert((id, kind as u8), site.clone());
                Some(site)
            })
            .ok()
            .flatten();
        jni.delete_local_ref(class);
        if let Some(site) = site {
            let size = site.instance_size.unwrap_or_else(size_of);
            site.objects.fetch_add(1, Ordering::Relaxed);
            site.bytes.fetch_add(size, Ordering::Relaxed);
        }
    }

    /// VMObjectAlloc, before it is counted: remembers the object, which the probe after a
    /// native call must not count again.
    pub fn note_vm_alloc(&self, jni: Jni, object: jobject) {
        if object.is_null() {
            return;
        }
        let weak = jni.new_weak_ref(object);
        if let Ok(Some(old)) = LAST_VM_ALLOC.try_with(|last| last.replace(Some(weak))) {
            jni.delete_weak_ref(old);
        }
    }

    /// The VMObjectAlloc counts: (class, trace, objects, bytes).
    pub fn vm_sites(&self) -> Vec<(Arc<ClassInfo>, Arc<Trace>, u64, u64)> {
        self.vm
            .lock()
            .map(|vm| {
                vm.values()
                    .map(|s| (s.class.clone(), s.trace.clone(), s.objects, s.bytes))
                    .collect()
            })
            .unwrap_or_default()
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

    /// Loaded classes by signature (local references the caller deletes).
    pub fn classes_by_signature(jvmti: Jvmti) -> HashMap<String, jclass> {
        let mut map = HashMap::new();
        for class in jvmti.loaded_classes().unwrap_or_default() {
            if let Ok(sig) = jvmti.class_signature(class) {
                map.entry(sig).or_insert(class);
            }
        }
        map
    }
}

/// Adds a thread's counts (a `long[][]` of chunks of [`CHUNK`] slots, null where the thread
/// never counted) into `totals` (by slot).
fn add_array(jni: Jni, chunks: jobject, totals: &mut Vec<u64>) {
    let n = jni.array_length(chunks).max(0) as usize;
    let mut buf = vec![0i64; CHUNK];
    for c in 0..n {
        let chunk = jni.object_array_element(chunks, c as i32);
        if chunk.is_null() {
            continue;
        }
        let len = (jni.array_length(chunk).max(0) as usize).min(CHUNK);
        let ok = jni.get_longs(chunk, 0, &mut buf[..len]);
        jni.delete_local_ref(chunk);
        if !ok {
            continue;
        }
        let at = c * CHUNK;
        if totals.len() < at + len {
            totals.resize(at + len, 0);
        }
        for (t, v) in totals[at..at + len].iter_mut().zip(&buf[..len]) {
            *t = t.wrapping_add(*v as u64);
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

/// Whether the native method `name` `descriptor` of the class `class` (as sites print it,
/// `java.lang.Object`) is one whose calls from bytecode are counted ([`NativeAlloc`]).
pub fn counted_native(class: &str, name: &str, descriptor: &str) -> bool {
    NativeAlloc::ALL.into_iter().any(|k| {
        let (c, n, d) = k.method();
        n == name && d == descriptor && display_name(&format!("L{c};")) == class
    })
}

/// The allocated class name of a signature, as sites print it.
pub fn display_name(signature: &str) -> String {
    class_name_from_signature(signature)
}
