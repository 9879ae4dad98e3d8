//! Virtual threads under `thread=y` (JDK 21+): `can_support_virtual_threads` asked for at
//! load, the mount and unmount extension events that tell which virtual thread each carrier
//! runs, and the naming of the virtual threads sampled (a serial and THREAD START when first
//! seen, THREAD END once ended), so their samples are charged to them rather than to their
//! carriers.

use std::collections::HashMap;
use std::time::Duration;

use super::drain::Pending;
use super::{AsyncSampler, JVMTI_THREAD_STATE_ALIVE, SampledThread, running};
use crate::engine::Context;
use crate::jvmti::{Jni, jthread, vthreads};
use crate::signal;

/// Asks for `can_support_virtual_threads` with `thread=y` on JDK 21+ (at load: HotSpot decides
/// at VM start whether virtual threads report their mounts; see `follow_virtual_threads`).
pub(super) fn ask_for_capability(ctx: &Context) {
    let jvmti = ctx.jvmti;
    let thread = ctx.options.thread;
    if thread && jvmti.feature_version().is_some_and(|v| v >= 21) {
        let capability = jvmti.add_virtual_thread_capability();
        let _ = VTHREAD_CAPABILITY.set(capability.map_err(|e| e.to_string()));
    }
}

impl AsyncSampler {
    /// Whether virtual threads' samples are charged to them.
    pub fn follows_vthreads(&self) -> bool {
        self.follows_vthreads
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// With `thread=y` on JDK 21+: follows which virtual thread each carrier runs (HotSpot's
    /// mount and unmount extension events), so a sample taken on a carrier is charged to the
    /// virtual thread it ran. Says why not on a verbose line where the JVM refuses.
    pub(super) fn follow_virtual_threads(&self, ctx: &Context, jni: Jni) {
        if !ctx.options.thread || ctx.jvmti.feature_version().is_none_or(|v| v < 21) {
            return;
        }
        let Some(class) = jni.find_class(c"java/lang/Thread") else {
            return;
        };
        let tid = jni.field_id(class, c"tid", c"J");
        jni.delete_local_ref(class);
        let Some(tid) = tid else {
            return;
        };
        let _ = THREAD_ID.set(tid);
        let capability = match VTHREAD_CAPABILITY.get() {
            Some(Ok(())) => Ok(()),
            Some(Err(e)) => Err(e.clone()),
            None => Err("not asked for".into()),
        };
        let followed = capability
            .map_err(|e| format!("no can_support_virtual_threads ({e})"))
            .and_then(|()| {
                let mount = ctx
                    .jvmti
                    .set_extension_event(vthreads::MOUNT, Some(on_mount));
                let unmount = ctx
                    .jvmti
                    .set_extension_event(vthreads::UNMOUNT, Some(on_unmount));
                match (mount, unmount) {
                    (Ok(true), Ok(true)) => Ok(()),
                    (Err(e), _) | (_, Err(e)) => Err(format!("mount events refused ({e})")),
                    _ => Err("no mount events in this JVM".into()),
                }
            });
        match followed {
            Ok(()) => {
                signal::carriers::set_following(true);
                self.follows_vthreads
                    .store(true, std::sync::atomic::Ordering::Release);
            }
            Err(why) => {
                let _ = ctx.jvmti.set_extension_event(vthreads::MOUNT, None);
                let _ = ctx.jvmti.set_extension_event(vthreads::UNMOUNT, None);
                if ctx.options.verbose {
                    eprintln!(
                        "HPROF: thread=y charges virtual threads' CPU samples to their carriers: {why}"
                    );
                }
            }
        }
    }

    /// Stops following virtual threads.
    pub(super) fn unfollow_virtual_threads(&self, ctx: &Context) {
        if self
            .follows_vthreads
            .swap(false, std::sync::atomic::Ordering::AcqRel)
        {
            signal::carriers::set_following(false);
            let _ = ctx.jvmti.set_extension_event(vthreads::MOUNT, None);
            let _ = ctx.jvmti.set_extension_event(vthreads::UNMOUNT, None);
        }
    }

    /// Gives the virtual thread `vthread` (a reference of the calling thread; Java thread id
    /// `id`) a serial and a THREAD START record, unless it has them. Returns its serial.
    fn name_virtual_thread(
        &self,
        ctx: &Context,
        jni: Jni,
        vthread: jthread,
        id: u64,
    ) -> Option<u32> {
        if let Some(&serial) = self.registry.lock().ok()?.vthreads.get(&id) {
            return Some(serial);
        }
        if !ctx.is_running() {
            return None;
        }
        let start = ctx
            .threads
            .lock()
            .ok()?
            .register(ctx.jvmti, jni, vthread, || ctx.ids.of(ctx.jvmti, vthread));
        let serial = match start {
            Some(mut start) => {
                if start.name.is_empty() {
                    // An unnamed virtual thread, as `Thread.toString` names it.
                    start.name = format!("VirtualThread[#{id}]");
                    if let Ok(mut threads) = ctx.threads.lock()
                        && let Some(t) = threads.get_mut(start.serial)
                    {
                        t.name = start.name.clone();
                    }
                }
                ctx.with_output(|out| out.write(|w| w.thread_start(&start)));
                start.serial
            }
            None => ctx.jvmti.thread_local(vthread).ok()? as u32,
        };
        if serial == 0 {
            return None;
        }
        self.registry.lock().ok()?.vthreads.insert(id, serial);
        Some(serial)
    }

    /// Names the virtual threads whose samples wait (each still mounted on a carrier is found
    /// there), and returns the samples that can be recorded: those of the threads named, and
    /// with `all`, every other one (charged to its carrier). Every second, forgets the named
    /// virtual threads that ended (with a THREAD END record).
    pub(super) fn name_virtual_threads(&self, ctx: &Context, jni: Jni, all: bool) -> Vec<Pending> {
        let (waiting, carriers, check) = {
            let Ok(mut registry) = self.registry.lock() else {
                return Vec::new();
            };
            let waiting: Vec<u64> = registry.pending.keys().copied().collect();
            let mut carriers = Vec::new();
            if !waiting.is_empty() && self.follows_vthreads() {
                let mounted: HashMap<u64, usize> =
                    signal::carriers::mounted_now().into_iter().collect();
                let by_env: HashMap<usize, &SampledThread> =
                    registry.by_tid.values().map(|t| (t.env, t)).collect();
                for &id in &waiting {
                    if let Some(thread) = mounted.get(&id).and_then(|env| by_env.get(env)) {
                        carriers.push((id, jni.new_local_ref(thread.thread.get())));
                    }
                }
            }
            let check = registry
                .vthreads_checked
                .is_none_or(|t| t.elapsed() >= Duration::from_secs(1));
            if check {
                registry.vthreads_checked = Some(std::time::Instant::now());
            }
            (waiting, carriers, check)
        };
        let tid = THREAD_ID.get().copied();
        for (id, carrier) in carriers {
            if let (Some(vthread), Some(tid)) = (ctx.jvmti.mounted_virtual_thread(carrier), tid) {
                if jni.long_field(vthread, tid) as u64 == id {
                    self.name_virtual_thread(ctx, jni, vthread, id);
                }
                jni.delete_local_ref(vthread);
            }
            jni.delete_local_ref(carrier);
        }
        if check {
            self.forget_ended_virtual_threads(ctx, jni);
        }
        let Ok(mut registry) = self.registry.lock() else {
            return Vec::new();
        };
        let mut ready = Vec::new();
        for id in waiting {
            let serial = registry.vthreads.get(&id).copied();
            if serial.is_none() && !all {
                continue;
            }
            if let Some(samples) = registry.pending.remove(&id) {
                registry.pending_count -= samples.len();
                ready.extend(samples.into_iter().map(|mut sample| {
                    if serial.is_some() {
                        sample.0 = serial;
                    }
                    sample
                }));
            }
        }
        ready
    }

    /// Forgets the named virtual threads that ended, each with a THREAD END record.
    fn forget_ended_virtual_threads(&self, ctx: &Context, jni: Jni) {
        let named: std::collections::HashSet<u32> = match self.registry.lock() {
            Ok(registry) if !registry.vthreads.is_empty() => {
                registry.vthreads.values().copied().collect()
            }
            _ => return,
        };
        let threads = match ctx.threads.lock() {
            Ok(table) => table.local_refs(jni, |t| named.contains(&t.serial)),
            Err(_) => return,
        };
        let mut ended = Vec::new();
        for (serial, thread) in threads {
            let alive = ctx
                .jvmti
                .thread_state(thread)
                .is_ok_and(|state| state & JVMTI_THREAD_STATE_ALIVE != 0);
            if !alive {
                if let Ok(mut table) = ctx.threads.lock() {
                    table.remove(jni, serial);
                }
                ended.push(serial);
            }
            jni.delete_local_ref(thread);
        }
        if ended.is_empty() {
            return;
        }
        if let Ok(mut registry) = self.registry.lock() {
            registry
                .vthreads
                .retain(|_, serial| !ended.contains(serial));
        }
        ctx.with_output(|out| {
            for serial in ended {
                out.write(|w| w.thread_end(serial));
            }
        });
    }
}

/// Whether `can_support_virtual_threads` was granted (asked for at load with `thread=y` on
/// JDK 21+).
static VTHREAD_CAPABILITY: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();

/// `java.lang.Thread.tid`, read by the mount callback.
static THREAD_ID: std::sync::OnceLock<crate::jvmti::FieldId> = std::sync::OnceLock::new();

/// The `VirtualThreadMount` callback, on the carrier, right after `vthread` mounted: the
/// carrier's entry says which virtual thread it runs. A JNI field read, nothing more.
extern "C" fn on_mount(
    _jvmti: *mut crate::jvmti::sys::jvmtiEnv,
    jni: *mut crate::jvmti::sys::JNIEnv,
    vthread: jthread,
) {
    let _ = std::panic::catch_unwind(|| {
        if let Some(&tid) = THREAD_ID.get()
            && signal::carriers::following()
        {
            let id = Jni::from_raw(jni).long_field(vthread, tid) as u64;
            signal::carriers::mounted(jni as usize, id);
        }
    });
}

/// The `VirtualThreadUnmount` callback, on the carrier, right before `vthread` unmounts (its
/// last unmount too): a virtual thread sampled while mounted gets its name now, if it has
/// none yet.
extern "C" fn on_unmount(
    _jvmti: *mut crate::jvmti::sys::jvmtiEnv,
    jni: *mut crate::jvmti::sys::JNIEnv,
    vthread: jthread,
) {
    let _ = std::panic::catch_unwind(|| {
        let (id, sampled) = signal::carriers::unmounted(jni as usize);
        if sampled
            && id != 0
            && let Some((ctx, sampler)) = running()
        {
            sampler.name_virtual_thread(ctx, Jni::from_raw(jni), vthread, id);
        }
    });
}

/// Samples of virtual threads waiting for their name, at most (more go to their carrier).
pub(super) const MAX_PENDING: usize = 65_536;
