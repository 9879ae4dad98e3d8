//! HotSpot's JVMTI support for virtual threads (JDK 21+) that the asynchronous sampler uses to
//! name the virtual thread a sample was taken on: the `can_support_virtual_threads`
//! capability, the `com.sun.hotspot.events.VirtualThreadMount` / `VirtualThreadUnmount`
//! extension events (posted on the carrier, with the virtual thread, right after it mounted
//! and right before it unmounts, its last unmount included), and the
//! `com.sun.hotspot.functions.GetVirtualThread` extension function (the virtual thread a
//! carrier runs).

use std::ffi::{CStr, c_char};
use std::sync::OnceLock;

use super::{Jvmti, JvmtiBox, JvmtiError, Result, jthread, sys};

/// A mount or unmount callback: (JVMTI environment, the carrier's JNI environment, the virtual
/// thread).
pub type MountCallback = extern "C" fn(*mut sys::jvmtiEnv, *mut sys::JNIEnv, jthread);

/// The extension event of a virtual thread's mount.
pub const MOUNT: &CStr = c"com.sun.hotspot.events.VirtualThreadMount";
/// The extension event of a virtual thread's unmount.
pub const UNMOUNT: &CStr = c"com.sun.hotspot.events.VirtualThreadUnmount";

/// `can_support_virtual_threads`: the bit after `can_generate_sampled_object_alloc_events` in
/// JDK 21's `jvmtiCapabilities` (the bindings are JDK 17's, which lacks it).
const CAN_SUPPORT_VIRTUAL_THREADS_BIT: usize = 44;

impl Jvmti {
    /// Asks for `can_support_virtual_threads` alone (a JDK before 21 refuses it).
    pub fn add_virtual_thread_capability(self) -> Result<()> {
        let mut caps = sys::jvmtiCapabilities::default();
        caps._bitfield_1
            .set_const::<CAN_SUPPORT_VIRTUAL_THREADS_BIT, 1>(1);
        jvmti!(self, AddCapabilities, &caps)
    }

    /// Sets the callback of the extension event `id` and enables it (or, with `None`, disables
    /// it and clears the callback). `Ok(false)` when the JVM has no such event.
    pub fn set_extension_event(self, id: &CStr, callback: Option<MountCallback>) -> Result<bool> {
        let mut count: sys::jint = 0;
        let mut infos: *mut sys::jvmtiExtensionEventInfo = std::ptr::null_mut();
        jvmti!(self, GetExtensionEvents, &mut count, &mut infos)?;
        let infos = JvmtiBox {
            env: self,
            ptr: infos,
        };
        let mut index = None;
        for i in 0..count.max(0) as usize {
            // SAFETY: JVMTI returned `count` initialised entries.
            let info = unsafe { &*infos.ptr.add(i) };
            if index.is_none() && !info.id.is_null() {
                // SAFETY: `id` is a NUL-terminated string JVMTI allocated.
                if unsafe { CStr::from_ptr(info.id) } == id {
                    index = Some(info.extension_event_index);
                }
            }
            free_info(
                self,
                info.id,
                info.short_description,
                info.params,
                info.param_count,
            );
        }
        let Some(index) = index else {
            return Ok(false);
        };
        // SAFETY: HotSpot calls an extension event's callback through a variadic function
        // pointer with the event's parameters (JNIEnv*, jthread); a function taking exactly
        // those receives them alike in the C calling convention of the supported platforms.
        let raw: sys::jvmtiExtensionEvent = callback.map(|f| unsafe {
            std::mem::transmute::<MountCallback, unsafe extern "C" fn(*mut sys::jvmtiEnv, ...)>(f)
        });
        let enable = callback.is_some();
        jvmti!(self, SetExtensionEventCallback, index, raw)?;
        // On JDK 21+ the callback alone does not enable the event.
        let mode = if enable {
            sys::jvmtiEventMode::JVMTI_ENABLE
        } else {
            sys::jvmtiEventMode::JVMTI_DISABLE
        };
        jvmti!(
            self,
            SetEventNotificationMode,
            mode,
            sys::jvmtiEvent(index as u32),
            std::ptr::null_mut()
        )?;
        Ok(true)
    }

    /// The virtual thread `carrier` runs now (a local reference), or `None` if it runs none
    /// or the JVM lacks `GetVirtualThread`.
    pub fn mounted_virtual_thread(self, carrier: jthread) -> Option<jthread> {
        let function = get_virtual_thread(self)?;
        let mut vthread: jthread = std::ptr::null_mut();
        // SAFETY: GetVirtualThread takes (jvmtiEnv*, jthread, jthread*) and writes the out
        // pointer; `carrier` is a live reference.
        let code = unsafe { function(self.raw, carrier, &mut vthread as *mut jthread) };
        (code.0 == 0 && !vthread.is_null()).then_some(vthread)
    }
}

/// Frees the strings and parameter array of one extension's description.
fn free_info(
    env: Jvmti,
    id: *mut c_char,
    description: *mut c_char,
    params: *mut sys::jvmtiParamInfo,
    count: sys::jint,
) {
    for i in 0..count.max(0) as usize {
        if params.is_null() {
            break;
        }
        // SAFETY: JVMTI returned `count` parameter descriptions.
        let name = unsafe { (*params.add(i)).name };
        drop(JvmtiBox { env, ptr: name });
    }
    drop(JvmtiBox { env, ptr: params });
    drop(JvmtiBox { env, ptr: id });
    drop(JvmtiBox {
        env,
        ptr: description,
    });
}

type GetVirtualThread = unsafe extern "C" fn(*mut sys::jvmtiEnv, ...) -> sys::jvmtiError;

/// `com.sun.hotspot.functions.GetVirtualThread`, looked up once.
fn get_virtual_thread(env: Jvmti) -> Option<GetVirtualThread> {
    static FUNCTION: OnceLock<Option<usize>> = OnceLock::new();
    let address = *FUNCTION.get_or_init(|| {
        let mut count: sys::jint = 0;
        let mut infos: *mut sys::jvmtiExtensionFunctionInfo = std::ptr::null_mut();
        let found: std::result::Result<(), JvmtiError> =
            jvmti!(env, GetExtensionFunctions, &mut count, &mut infos);
        found.ok()?;
        let infos = JvmtiBox { env, ptr: infos };
        let mut function = None;
        for i in 0..count.max(0) as usize {
            // SAFETY: JVMTI returned `count` initialised entries.
            let info = unsafe { &*infos.ptr.add(i) };
            if function.is_none() && !info.id.is_null() {
                // SAFETY: `id` is a NUL-terminated string JVMTI allocated.
                let id = unsafe { CStr::from_ptr(info.id) };
                if id == c"com.sun.hotspot.functions.GetVirtualThread" {
                    function = info.func.map(|f| f as usize);
                }
            }
            free_info(
                env,
                info.id,
                info.short_description,
                info.params,
                info.param_count,
            );
            drop(JvmtiBox {
                env,
                ptr: info.errors,
            });
        }
        function
    });
    // SAFETY: the address is HotSpot's GetVirtualThread, an extension function of this
    // signature.
    address.map(|a| unsafe { std::mem::transmute::<usize, GetVirtualThread>(a) })
}
