//! Owns what the fast mode counts outside bytecode: objects the VM made (VMObjectAlloc, exact
//! by class and trace) and what the allocating natives returned where bytecode called them
//! (the probe `n` after the call, by class), each counted once.

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use hprof_classfile::NativeAlloc;

use super::{AllocCounts, display_name, in_agent};
use crate::engine::Context;
use crate::jvmti::{Jni, WeakRef, jclass, jobject};
use crate::trace_store::{ClassInfo, Trace};

thread_local! {
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
pub(super) struct NativeSite {
    pub(super) kind: NativeAlloc,
    pub(super) signature: String,
    /// The size of every object of the class, for an instance class (an array's size
    /// depends on its length).
    pub(super) instance_size: Option<u64>,
    pub(super) objects: AtomicU64,
    pub(super) bytes: AtomicU64,
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

/// Forgets the calling thread's references (as it ends).
pub(super) fn forget_thread(jni: Jni) {
    if let Ok(Some(last)) = LAST_VM_ALLOC.try_with(Cell::take) {
        jni.delete_weak_ref(last);
    }
    let _ = NATIVE_SITES.try_with(|sites| {
        if let Ok(mut sites) = sites.try_borrow_mut() {
            sites.clear();
        }
    });
}

impl AllocCounts {
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
}

/// Whether the native method `name` `descriptor` of the class `class` (as sites print it,
/// `java.lang.Object`) is one whose calls from bytecode are counted ([`NativeAlloc`]).
pub fn counted_native(class: &str, name: &str, descriptor: &str) -> bool {
    NativeAlloc::ALL.into_iter().any(|k| {
        let (c, n, d) = k.method();
        n == name && d == descriptor && display_name(&format!("L{c};")) == class
    })
}
