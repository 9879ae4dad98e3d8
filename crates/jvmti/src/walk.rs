//! Owns the heap walk: JVMTI FollowReferences with its callbacks turned into calls on a safe
//! [`HeapVisitor`]. The callbacks run inside the JVM's heap walk (in the VM thread, with the
//! world stopped): the visitor may use memory and files but never JNI or JVMTI.

use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::{Jvmti, JvmtiError, Result, sys};

/// What a reference reported by the walk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferenceKind {
    /// From an object to its class.
    Class,
    /// An instance field, by JVMTI field index.
    Field(i32),
    /// An object array element.
    ArrayElement(i32),
    /// From a class to its loader.
    ClassLoader,
    /// From a class to its signers.
    Signers,
    /// From a class to its protection domain.
    ProtectionDomain,
    /// From a class to an interface it implements.
    Interface,
    /// A static field, by JVMTI field index.
    StaticField(i32),
    /// A resolved constant pool entry.
    ConstantPool(i32),
    /// From a class to its superclass.
    Superclass,
    /// Root: a JNI global reference.
    JniGlobal,
    /// Root: a system class.
    SystemClass,
    /// Root: a monitor in use.
    Monitor,
    /// Root: a local variable of a Java frame.
    StackLocal {
        /// Tag of the thread object.
        thread_tag: i64,
        /// Frame depth.
        depth: i32,
    },
    /// Root: a JNI local reference.
    JniLocal {
        /// Tag of the thread object.
        thread_tag: i64,
        /// Frame depth.
        depth: i32,
    },
    /// Root: a thread.
    Thread,
    /// Root: anything else.
    Other,
}

/// New tags for the referenced object and the referrer, when the visitor wants to set them.
#[derive(Debug, Clone, Copy, Default)]
pub struct TagUpdate {
    /// New tag of the referenced object.
    pub tag: Option<i64>,
    /// New tag of the referrer.
    pub referrer: Option<i64>,
}

/// Receives what the walk finds.
pub trait HeapVisitor: Send {
    /// A reference to an object (`tag`, its class `class_tag`, `size` bytes, `length` for
    /// arrays else -1) from a referrer (`None` for roots).
    #[allow(clippy::too_many_arguments)]
    fn reference(
        &mut self,
        kind: ReferenceKind,
        class_tag: i64,
        referrer_class_tag: i64,
        size: i64,
        tag: i64,
        referrer_tag: Option<i64>,
        length: i32,
    ) -> TagUpdate;

    /// A primitive field of an object (`is_static`: of a class), by JVMTI field index, with
    /// its value's bits and its type (`Z`, `B`, `C`, `S`, `I`, `J`, `F`, `D`). Returns a new tag
    /// for the object, if any.
    fn primitive_field(
        &mut self,
        is_static: bool,
        index: i32,
        class_tag: i64,
        tag: i64,
        bits: u64,
        ty: u8,
    ) -> Option<i64>;

    /// A primitive array's elements, in the machine's byte order. Returns a new tag for it.
    fn primitive_array(
        &mut self,
        class_tag: i64,
        size: i64,
        tag: i64,
        count: i32,
        ty: u8,
        elements: &[u8],
    ) -> Option<i64>;
}

/// The size of one element of a JVMTI primitive type.
pub fn primitive_size(ty: u8) -> usize {
    match ty {
        b'Z' | b'B' => 1,
        b'C' | b'S' => 2,
        b'I' | b'F' => 4,
        _ => 8,
    }
}

struct WalkState<'a> {
    visitor: &'a mut dyn HeapVisitor,
    failed: bool,
}

impl WalkState<'_> {
    /// Runs `f` on the visitor; a panic marks the walk failed and gives `None`.
    fn visit<T>(&mut self, f: impl FnOnce(&mut dyn HeapVisitor) -> T) -> Option<T> {
        match catch_unwind(AssertUnwindSafe(|| f(&mut *self.visitor))) {
            Ok(value) => Some(value),
            Err(_) => {
                self.failed = true;
                None
            }
        }
    }
}

const VISIT_OBJECTS: sys::jint = 0x100;
const ABORT: sys::jint = 0x8000;

unsafe extern "C" fn on_reference(
    kind: sys::jvmtiHeapReferenceKind,
    info: *const sys::jvmtiHeapReferenceInfo,
    class_tag: sys::jlong,
    referrer_class_tag: sys::jlong,
    size: sys::jlong,
    tag_ptr: *mut sys::jlong,
    referrer_tag_ptr: *mut sys::jlong,
    length: sys::jint,
    user_data: *mut c_void,
) -> sys::jint {
    // SAFETY: `user_data` is the `WalkState` that `follow_references` passed in, alive and
    // not otherwise used until FollowReferences returns.
    let state = unsafe { &mut *user_data.cast::<WalkState<'_>>() };
    if state.failed || tag_ptr.is_null() {
        return ABORT;
    }
    // SAFETY: for the kinds read here, JVMTI fills the matching member of `info`.
    let kind = unsafe {
        match kind.0 {
            1 => ReferenceKind::Class,
            2 => ReferenceKind::Field((*info).field.index),
            3 => ReferenceKind::ArrayElement((*info).array.index),
            4 => ReferenceKind::ClassLoader,
            5 => ReferenceKind::Signers,
            6 => ReferenceKind::ProtectionDomain,
            7 => ReferenceKind::Interface,
            8 => ReferenceKind::StaticField((*info).field.index),
            9 => ReferenceKind::ConstantPool((*info).constant_pool.index),
            10 => ReferenceKind::Superclass,
            21 => ReferenceKind::JniGlobal,
            22 => ReferenceKind::SystemClass,
            23 => ReferenceKind::Monitor,
            24 => ReferenceKind::StackLocal {
                thread_tag: (*info).stack_local.thread_tag,
                depth: (*info).stack_local.depth,
            },
            25 => ReferenceKind::JniLocal {
                thread_tag: (*info).jni_local.thread_tag,
                depth: (*info).jni_local.depth,
            },
            26 => ReferenceKind::Thread,
            _ => ReferenceKind::Other,
        }
    };
    // SAFETY: JVMTI passes valid tag pointers for the duration of the callback; the
    // referrer's is null for roots, and equal to `tag_ptr` for a self-reference.
    let (tag, referrer) = unsafe {
        (
            *tag_ptr,
            (!referrer_tag_ptr.is_null()).then(|| *referrer_tag_ptr),
        )
    };
    let result = state.visit(|v| {
        v.reference(
            kind,
            class_tag,
            referrer_class_tag,
            size,
            tag,
            referrer,
            length,
        )
    });
    match result {
        Some(update) => {
            // SAFETY: as above; writing the referrer last keeps a self-reference consistent.
            unsafe {
                if let Some(t) = update.tag {
                    *tag_ptr = t;
                }
                if let (Some(t), false) = (update.referrer, referrer_tag_ptr.is_null()) {
                    *referrer_tag_ptr = t;
                }
            }
            VISIT_OBJECTS
        }
        None => ABORT,
    }
}

unsafe extern "C" fn on_primitive_field(
    kind: sys::jvmtiHeapReferenceKind,
    info: *const sys::jvmtiHeapReferenceInfo,
    class_tag: sys::jlong,
    tag_ptr: *mut sys::jlong,
    value: sys::jvalue,
    ty: sys::jvmtiPrimitiveType,
    user_data: *mut c_void,
) -> sys::jint {
    // SAFETY: see `on_reference`.
    let state = unsafe { &mut *user_data.cast::<WalkState<'_>>() };
    if state.failed || tag_ptr.is_null() {
        return ABORT;
    }
    let ty = ty.0 as u8;
    // SAFETY: JVMTI sets the union member matching `ty`; `info.field` is filled for field kinds.
    let (bits, index, tag) = unsafe {
        let bits = match ty {
            b'Z' => u64::from(value.z),
            b'B' => value.b as u8 as u64,
            b'C' => u64::from(value.c),
            b'S' => value.s as u16 as u64,
            b'I' => value.i as u32 as u64,
            b'F' => u64::from(value.f.to_bits()),
            b'D' => value.d.to_bits(),
            _ => value.j as u64,
        };
        (bits, (*info).field.index, *tag_ptr)
    };
    let is_static = kind.0 == 8;
    let update = state.visit(|v| v.primitive_field(is_static, index, class_tag, tag, bits, ty));
    // SAFETY: see `on_reference`.
    unsafe { set_tag(tag_ptr, update) }
}

unsafe extern "C" fn on_primitive_array(
    class_tag: sys::jlong,
    size: sys::jlong,
    tag_ptr: *mut sys::jlong,
    count: sys::jint,
    ty: sys::jvmtiPrimitiveType,
    elements: *const c_void,
    user_data: *mut c_void,
) -> sys::jint {
    // SAFETY: see `on_reference`.
    let state = unsafe { &mut *user_data.cast::<WalkState<'_>>() };
    if state.failed || tag_ptr.is_null() {
        return ABORT;
    }
    let ty = ty.0 as u8;
    let len = count.max(0) as usize * primitive_size(ty);
    // SAFETY: JVMTI passes `count` elements of type `ty` at `elements`, valid during the call.
    let (bytes, tag) = unsafe {
        (
            if elements.is_null() || len == 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts(elements.cast::<u8>(), len)
            },
            *tag_ptr,
        )
    };
    let update = state.visit(|v| v.primitive_array(class_tag, size, tag, count, ty, bytes));
    // SAFETY: see `on_reference`.
    unsafe { set_tag(tag_ptr, update) }
}

/// Writes a primitive callback's new tag, if any; the callback's return value.
///
/// # Safety
/// `tag_ptr` is the tag pointer JVMTI passed to the running callback.
unsafe fn set_tag(tag_ptr: *mut sys::jlong, update: Option<Option<i64>>) -> sys::jint {
    match update {
        Some(new) => {
            if let Some(t) = new {
                // SAFETY: guaranteed by the caller.
                unsafe { *tag_ptr = t };
            }
            0
        }
        None => ABORT,
    }
}

impl Jvmti {
    /// Walks every object reachable from the GC roots, reporting roots, references, primitive
    /// fields and primitive array contents to `visitor`. A panic in the visitor stops the
    /// walk and is reported as an error.
    pub fn follow_references(self, visitor: &mut dyn HeapVisitor) -> Result<()> {
        let callbacks = sys::jvmtiHeapCallbacks {
            heap_reference_callback: Some(on_reference),
            primitive_field_callback: Some(on_primitive_field),
            array_primitive_value_callback: Some(on_primitive_array),
            ..Default::default()
        };
        let mut state = WalkState {
            visitor,
            failed: false,
        };
        let user_data: *mut WalkState<'_> = &mut state;
        jvmti!(
            self,
            FollowReferences,
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &callbacks,
            user_data.cast::<c_void>().cast_const()
        )?;
        if state.failed {
            Err(JvmtiError(113))
        } else {
            Ok(())
        }
    }
}

/// What the heap walks pass their callback: `visit(class tag, size, tag)`.
struct TaggedState<'a> {
    visit: &'a mut dyn FnMut(i64, i64, i64),
    failed: bool,
    /// Objects and bytes seen and not yet counted in the dump's progress.
    objects: u64,
    bytes: u64,
}

/// Objects a walk sees between its reports to the dump's progress.
const PROGRESS_EVERY: u64 = 1 << 16;

impl TaggedState<'_> {
    /// Counts an object toward the dump's progress (atomics, every [`PROGRESS_EVERY`]).
    fn seen(&mut self, size: i64) {
        self.objects += 1;
        self.bytes += size.max(0) as u64;
        if self.objects >= PROGRESS_EVERY {
            self.report();
        }
    }

    fn report(&mut self) {
        super::report::advance(self.objects, self.bytes);
        self.objects = 0;
        self.bytes = 0;
    }
}

unsafe extern "C" fn on_object(
    class_tag: sys::jlong,
    size: sys::jlong,
    tag_ptr: *mut sys::jlong,
    _length: sys::jint,
    user_data: *mut c_void,
) -> sys::jint {
    // SAFETY: `user_data` is the `TaggedState` that `iterate_filtered` passed in, alive and
    // not otherwise used until IterateThroughHeap returns.
    let state = unsafe { &mut *user_data.cast::<TaggedState<'_>>() };
    if state.failed || tag_ptr.is_null() {
        return ABORT;
    }
    // SAFETY: JVMTI passes a valid pointer to the object's tag for the callback's duration.
    let tag = unsafe { *tag_ptr };
    state.seen(size);
    let visit = &mut state.visit;
    if catch_unwind(AssertUnwindSafe(|| visit(class_tag, size, tag))).is_err() {
        state.failed = true;
        return ABORT;
    }
    0
}

unsafe extern "C" fn count_object(
    _class_tag: sys::jlong,
    _size: sys::jlong,
    _tag_ptr: *mut sys::jlong,
    _length: sys::jint,
    user_data: *mut c_void,
) -> sys::jint {
    // SAFETY: `user_data` is the counter `count_instances` passed in, alive until
    // IterateThroughHeap returns; the VM thread alone calls this.
    unsafe { *user_data.cast::<u64>() += 1 };
    0
}

impl Jvmti {
    /// How many objects in the heap are instances of exactly `class` (IterateThroughHeap with a
    /// class filter: nothing is followed, no thread's stack is walked).
    pub fn count_instances(self, class: super::jclass) -> Result<u64> {
        let callbacks = sys::jvmtiHeapCallbacks {
            heap_iteration_callback: Some(count_object),
            ..Default::default()
        };
        let mut count: u64 = 0;
        let user_data: *mut u64 = &mut count;
        jvmti!(
            self,
            IterateThroughHeap,
            0,
            class,
            &callbacks,
            user_data.cast::<c_void>().cast_const()
        )?;
        Ok(count)
    }

    /// Calls `visit(tag, size)` for every tagged object in the heap, live or not yet collected
    /// (IterateThroughHeap with untagged objects filtered out). `visit` runs in the VM thread
    /// with the world stopped: memory only, never JNI or JVMTI. With untagged objects filtered
    /// out, the JVM undoes no escape-analysis optimizations first (no deoptimization).
    pub fn iterate_tagged(self, visit: &mut dyn FnMut(i64, i64)) -> Result<()> {
        // Only the tagged objects reach the callback: no percentage of the heap.
        super::report::step(
            "heap walk (tagged objects)",
            Some(super::report::Unit::Objects),
            0,
        );
        self.iterate_filtered(
            sys::JVMTI_HEAP_FILTER_UNTAGGED.0 as sys::jint,
            &mut |_, size, tag| visit(tag, size),
        )
    }

    /// IterateThroughHeap with `filter`, handing each object's class tag, size and tag to
    /// `visit` through a [`TaggedState`].
    fn iterate_filtered(
        self,
        filter: sys::jint,
        visit: &mut dyn FnMut(i64, i64, i64),
    ) -> Result<()> {
        let callbacks = sys::jvmtiHeapCallbacks {
            heap_iteration_callback: Some(on_object),
            ..Default::default()
        };
        let mut state = TaggedState {
            visit,
            failed: false,
            objects: 0,
            bytes: 0,
        };
        let user_data: *mut TaggedState<'_> = &mut state;
        let walked = jvmti!(
            self,
            IterateThroughHeap,
            filter,
            std::ptr::null_mut(),
            &callbacks,
            user_data.cast::<c_void>().cast_const()
        );
        state.report();
        super::report::end_step(walked.is_ok() && !state.failed);
        walked?;
        if state.failed {
            Err(JvmtiError(113))
        } else {
            Ok(())
        }
    }
}

impl Jvmti {
    /// Calls `visit(class tag, size)` for every object in the heap whose class is tagged
    /// (IterateThroughHeap, objects of untagged classes filtered out). `visit` runs in the VM
    /// thread with the world stopped: memory only, never JNI or JVMTI.
    pub fn iterate_by_class(self, visit: &mut dyn FnMut(i64, i64)) -> Result<()> {
        super::report::heap_walk_step("heap walk");
        self.iterate_filtered(
            sys::JVMTI_HEAP_FILTER_CLASS_UNTAGGED.0 as sys::jint,
            &mut |class, size, _| visit(class, size),
        )
    }

    /// Calls `visit(class tag, size, tag)` for every object in the heap (IterateThroughHeap,
    /// unfiltered). `visit` runs in the VM thread with the world stopped: memory only, never
    /// JNI or JVMTI. `heap_used` (bytes, 0 if unknown) is the progress's 100 %: read by the
    /// caller, as the walk must not be preceded by a call into Java.
    pub fn iterate_objects(
        self,
        heap_used: u64,
        visit: &mut dyn FnMut(i64, i64, i64),
    ) -> Result<()> {
        super::report::step("heap walk", Some(super::report::Unit::Objects), heap_used);
        self.iterate_filtered(0, visit)
    }

    /// Tags every untagged object in the heap with `tag` (IterateThroughHeap, tagged
    /// objects filtered out); returns how many.
    pub fn tag_untagged(self, tag: i64) -> Result<u64> {
        let mut state = TagState { tag, count: 0 };
        let callbacks = sys::jvmtiHeapCallbacks {
            heap_iteration_callback: Some(tag_object),
            ..Default::default()
        };
        let user_data: *mut TagState = &mut state;
        jvmti!(
            self,
            IterateThroughHeap,
            sys::JVMTI_HEAP_FILTER_TAGGED.0 as sys::jint,
            std::ptr::null_mut(),
            &callbacks,
            user_data.cast::<c_void>().cast_const()
        )?;
        Ok(state.count)
    }
}

/// What `tag_untagged` sets, and how many objects it tagged.
struct TagState {
    tag: i64,
    count: u64,
}

unsafe extern "C" fn tag_object(
    _class_tag: sys::jlong,
    _size: sys::jlong,
    tag_ptr: *mut sys::jlong,
    _length: sys::jint,
    user_data: *mut c_void,
) -> sys::jint {
    // SAFETY: `user_data` is the `TagState` that `tag_untagged` passed in, alive and not
    // otherwise used until IterateThroughHeap returns.
    let state = unsafe { &mut *user_data.cast::<TagState>() };
    if tag_ptr.is_null() {
        return ABORT;
    }
    // SAFETY: JVMTI passes a valid pointer to the object's tag for the callback's duration;
    // setting it tags the object.
    unsafe { *tag_ptr = state.tag };
    state.count += 1;
    0
}
