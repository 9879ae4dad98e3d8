//! The drain: the samples the signal handler left in the ring moved into the trace store, on
//! the sampler's thread every tick and before every dump: each charged to its thread's serial
//! (or a virtual thread's, or a JVM thread's with `vmthreads=y`), its native, kernel and stub
//! frames named, a failed walk kept under a pseudo-frame naming why, with the sample's time
//! for timed output; samples with kernel frames held until the kernel's symbols are read.

use std::collections::HashMap;
use std::time::Duration;

use super::wall::{IdleWall, state_name};
use super::{AsyncSampler, MAX_RING_DEPTH, virtual_threads};
use crate::code_names;
use crate::engine::Context;
use crate::jvmti::{Jni, jlocation, jmethodID};
use crate::signal::{self, Sample, SampleKind, ThreadTimer};
use crate::trace_store::Code;

/// Samples with kernel frames that wait for the kernel's symbols, at most (past them the drain
/// waits for the symbols).
const MAX_HELD: usize = 1 << 16;

/// Longest a drain waits for the kernel's symbols (then kernel frames are named by address).
const KERNEL_SYMBOLS_WAIT: Duration = Duration::from_secs(10);

/// A drained sample: thread serial, frames (jmethodIDs as numbers), why the walk failed, the thread's state, the
/// intervals it stands for, and when it was taken (`CLOCK_MONOTONIC` nanoseconds).
pub(super) type Pending = (
    Option<u32>,
    Vec<(usize, jlocation)>,
    Option<&'static str>,
    Option<&'static str>,
    u64,
    u64,
);

impl AsyncSampler {
    /// Moves the ring's samples into the trace store.
    pub fn drain(&self, ctx: &Context, jni: Jni) {
        self.drain_then(ctx, jni, || ());
    }

    /// Moves the ring's samples into the trace store, then runs `change` before any other
    /// drain: the samples the ring held are counted (or not) as they were taken, before the
    /// change (the front-end's sampling on/off or clear); those taken after, by it.
    pub fn drain_then<T>(&self, ctx: &Context, jni: Jni, change: impl FnOnce() -> T) -> T {
        let _draining = self.draining.lock();
        self.drain_samples(ctx, jni, false);
        change()
    }

    /// Moves the ring's samples into the trace store; samples of virtual threads not named
    /// yet wait for their name, unless `final_drain` (before a dump: they go to their carrier).
    pub(super) fn drain_samples(&self, ctx: &Context, jni: Jni, final_drain: bool) {
        signal::refresh_walker_tables();
        // The front-end's CONTROL may have changed the depth: the next walks follow it, and
        // the samples taken before are cut to it.
        let depth = ctx.depth();
        signal::set_depth(depth);
        warn_if_deeper_than_the_ring(depth);
        // Which threads the front-end turned sampling off for, before the ring is read: it
        // holds samples taken before now.
        let unsampled = unsampled_threads(ctx);
        let mut pending: Vec<Pending> = Vec::new();
        let mut vm_samples: Vec<(i32, Pending)> = Vec::new();
        // The latest wall-clock sample of each platform thread: serial -> (kernel id, thread
        // CPU time, time taken), for [`IdleWall`].
        let mut latest_wall: HashMap<u32, (i32, u64, u64)> = HashMap::new();
        {
            let Ok(mut registry) = self.registry.lock() else {
                return;
            };
            let vm_threads = self.samples_vm_threads();
            let known_vm = self.vm_threads.lock().ok();
            let mut not_java = Vec::new();
            let mut identified = Vec::new();
            signal::drain(|sample: &Sample<'_>| {
                if sample.num_frames == signal::NOT_JAVA {
                    not_java.push(sample.tid);
                    return;
                }
                if sample.num_frames == signal::IDENTIFIED {
                    identified.push((sample.tid, sample.env));
                    return;
                }
                if registry.agent_envs.contains(&sample.env) {
                    return;
                }
                let carrier = registry
                    .serial_by_env
                    .get(&sample.env)
                    .copied()
                    .or_else(|| known_vm.as_ref().and_then(|vm| vm.serial(sample.tid)));
                let serial = match sample.vthread {
                    0 => carrier,
                    vthread => match registry.vthreads.get(&vthread) {
                        Some(&serial) => Some(serial),
                        None => carrier,
                    },
                };
                // The walked frames kept: `depth=` counts their Java frames (the native and
                // stub frames among and above them come in addition).
                let kept = code_names::kept(sample.frames.iter().map(|f| f.bci), depth);
                // The kernel's frames (a sample in a system call, an interrupt or a fault)
                // above the walked ones.
                let kernel = code_names::frame_location(Code::Kernel);
                let frames: Vec<(usize, jlocation)> = sample
                    .kernel
                    .iter()
                    .map(|f| (f.method as usize, kernel))
                    .chain(sample.frames.iter().take(kept).map(|f| {
                        let location = jlocation::from(f.bci);
                        (
                            f.method as usize,
                            if code_names::is_code_frame(location) || f.bci >= 0 {
                                location
                            } else {
                                -1
                            },
                        )
                    }))
                    .collect();
                let failure = (sample.num_frames <= 0).then(|| failure_name(sample.num_frames));
                let (state, weight) = match sample.kind {
                    SampleKind::Wall(state) => (Some(state_name(state)), 1),
                    SampleKind::Cpu(weight) => (None, u64::from(weight)),
                };
                if state.is_some()
                    && sample.vthread == 0
                    && sample.cpu != 0
                    && let Some(serial) = serial
                    && registry.by_tid.contains_key(&sample.tid)
                {
                    let latest = latest_wall.entry(serial).or_insert((sample.tid, 0, 0));
                    if sample.time >= latest.2 {
                        *latest = (sample.tid, sample.cpu, sample.time);
                    }
                }
                if vm_threads
                    && carrier.is_none()
                    && sample.vthread == 0
                    && !registry.by_tid.contains_key(&sample.tid)
                {
                    // A thread of the JVM's own (vmthreads=y), sampled for the first time.
                    vm_samples.push((
                        sample.tid,
                        (None, frames, failure, state, weight, sample.time),
                    ));
                    return;
                }
                let unnamed = (sample.vthread != 0
                    && !registry.vthreads.contains_key(&sample.vthread))
                .then_some(sample.vthread);
                match unnamed {
                    Some(vthread) if registry.pending_count < virtual_threads::MAX_PENDING => {
                        registry.pending_count += 1;
                        registry.pending.entry(vthread).or_default().push((
                            serial,
                            frames,
                            failure,
                            state,
                            weight,
                            sample.time,
                        ));
                    }
                    _ => pending.push((serial, frames, failure, state, weight, sample.time)),
                }
            });
            // Threads that ended before this drain have had their last samples drained.
            for env in std::mem::take(&mut registry.ended) {
                registry.serial_by_env.remove(&env);
            }
            registry.take_answers(jni, not_java, identified, vm_threads);
        }
        if self.samples_vm_threads() {
            pending.extend(self.vm_thread_samples(ctx, vm_samples));
        }
        let waiting = self.registry.lock().map(|r| r.pending_count).unwrap_or(0) > 0;
        if self.follows_vthreads() || waiting {
            // Once virtual threads are no longer followed (the session stopped), the samples
            // still waiting for a name go to their carriers.
            let all = final_drain || !self.follows_vthreads();
            pending.extend(self.name_virtual_threads(ctx, jni, all));
        }
        let pending = self.until_named(pending, final_drain);
        if pending.is_empty() || ctx.depth() == 0 {
            return;
        }
        // Native and kernel frames are named before the trace table is locked (naming the
        // first address of a library reads its symbols).
        let located = Self::locate_code_frames(&pending);
        let Ok(mut traces) = ctx.traces.lock() else {
            return;
        };
        let mut dropped = 0;
        let timed_output = ctx.options.format != crate::options::Format::Text;
        let mut timed = Vec::new();
        let mut idle = Vec::new();
        for (serial, frames, failure, state, weight, time) in pending {
            if serial.is_some_and(|s| unsampled.contains(&s)) {
                continue;
            }
            let returns = code_names::returns(&frames);
            let mut frames: Vec<(jmethodID, jlocation)> = frames
                .iter()
                .enumerate()
                .map(|(index, &(method, location))| {
                    if location == jlocation::from(signal::FRAME_BROKEN) {
                        let reason = code_names::broken_reason(method);
                        return (traces.pseudo_method(&ctx.ids, reason), -1);
                    }
                    match located.get(&(location, method, returns(index))) {
                        Some((code, at)) => (code_names::key(&mut traces, &ctx.ids, *code, at), -1),
                        None => (method as jmethodID, location),
                    }
                })
                .collect();
            if let Some(reason) = failure {
                // The frames of native and kernel code the handler recorded stay above the
                // reason the walk failed.
                frames.retain(|&(method, _)| traces.is_code_method(method));
                let method = traces.pseudo_method(&ctx.ids, reason);
                frames.push((method, -1));
            }
            if let Some(state) = state {
                let method = traces.pseudo_method(&ctx.ids, state);
                frames.push((method, -1));
                // The thread's latest wall-clock sample, kept while it waits.
                if let Some(serial) = serial
                    && let Some(&(tid, cpu, at)) = latest_wall.get(&serial)
                    && at == time
                {
                    idle.push((
                        tid,
                        IdleWall {
                            serial,
                            state,
                            frames: frames.iter().map(|&(m, l)| (m as usize, l)).collect(),
                            cpu,
                        },
                    ));
                }
            }
            match traces.record(
                ctx.jvmti,
                jni,
                &ctx.ids,
                &frames,
                serial.unwrap_or(0),
                weight,
            ) {
                Some(trace) if timed_output => timed.push(crate::output::TimedSample {
                    time,
                    trace,
                    thread: serial.unwrap_or(0),
                    weight: u32::try_from(weight).unwrap_or(u32::MAX),
                    wall: state.is_some(),
                }),
                Some(_) => {}
                None => dropped += weight,
            }
        }
        drop(traces);
        if !idle.is_empty()
            && let Ok(mut registry) = self.registry.lock()
        {
            for (tid, last) in idle {
                // (Only threads still known: one that ended meanwhile is gone for good.)
                if registry.by_tid.contains_key(&tid) {
                    registry.idle.insert(tid, last);
                }
            }
        }
        if !timed.is_empty() {
            ctx.with_output(|out| out.write(|w| w.timed_samples(&timed)));
        }
        if dropped > 0
            && let Ok(mut total) = self.dropped.lock()
        {
            *total += dropped;
        }
    }

    /// Whether the JVM's threads that run no Java are sampled (`vmthreads=y`).
    fn samples_vm_threads(&self) -> bool {
        self.samples_vm_threads
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The samples of the JVM's own threads (`vmthreads=y`) drained without a serial, with
    /// one: the threads sampled for the first time get theirs (and a THREAD START record)
    /// now. Once a second, the threads that appeared since get a timer, and those that ended
    /// a THREAD END record.
    fn vm_thread_samples(&self, ctx: &Context, samples: Vec<(i32, Pending)>) -> Vec<Pending> {
        // The registry's lock is taken before this one elsewhere (the drain): never inside.
        let known: std::collections::HashSet<i32> = match self.registry.lock() {
            Ok(registry) => registry
                .by_tid
                .keys()
                .chain(registry.unknown.keys())
                .copied()
                .collect(),
            Err(_) => return Vec::new(),
        };
        let Ok(mut vm) = self.vm_threads.lock() else {
            return Vec::new();
        };
        let mut new: Vec<i32> = samples.iter().map(|(tid, _)| *tid).collect();
        new.sort_unstable();
        new.dedup();
        vm.register(ctx, &new);
        let appeared = vm.scan(ctx, |tid| known.contains(&tid));
        let timers: Vec<(i32, ThreadTimer)> = appeared
            .into_iter()
            .filter_map(|tid| {
                ThreadTimer::start(self.source(), tid, Self::interval(ctx))
                    .ok()
                    .map(|timer| (tid, timer))
            })
            .collect();
        let serials: Vec<Option<u32>> = samples.iter().map(|(tid, _)| vm.serial(*tid)).collect();
        drop(vm);
        if let Ok(mut registry) = self.registry.lock() {
            registry.unknown.extend(timers);
        }
        samples
            .into_iter()
            .zip(serials)
            .filter_map(|((_, mut sample), serial)| {
                sample.0 = Some(serial?);
                Some(sample)
            })
            .collect()
    }

    /// The samples of `pending` that can be recorded now, with those held before: samples
    /// with kernel frames wait while the kernel's symbols are being read (on a thread of their
    /// own, `code_names::load_kernel_symbols`), at most [`MAX_HELD`] of them; a final drain
    /// (before a dump) waits for the symbols, at most [`KERNEL_SYMBOLS_WAIT`].
    fn until_named(&self, pending: Vec<Pending>, final_drain: bool) -> Vec<Pending> {
        let Ok(mut held) = self.held.lock() else {
            return pending;
        };
        let kernel = code_names::frame_location(Code::Kernel);
        let has_kernel = |p: &Pending| p.1.iter().any(|&(_, location)| location == kernel);
        if !code_names::kernel_symbols_ready() {
            if final_drain || held.len() >= MAX_HELD {
                code_names::wait_for_kernel_symbols(KERNEL_SYMBOLS_WAIT);
            } else {
                let (waiting, ready): (Vec<Pending>, Vec<Pending>) =
                    pending.into_iter().partition(has_kernel);
                held.extend(waiting);
                return ready;
            }
        }
        let mut all = std::mem::take(&mut *held);
        all.extend(pending);
        all
    }

    /// The locations of the native, kernel and stub frames of `pending` (by frame kind,
    /// address, and whether the address is a return address: see [`code_names::returns`]).
    fn locate_code_frames(
        pending: &[Pending],
    ) -> HashMap<(jlocation, usize, bool), (Code, hprof_symbols::Location)> {
        let mut located = HashMap::new();
        for (_, frames, _, _, _, _) in pending {
            let returns = code_names::returns(frames);
            for (index, &(address, location)) in frames.iter().enumerate() {
                let key = (location, address, returns(index));
                if located.contains_key(&key) {
                    continue;
                }
                if let Some(at) = code_names::locate_frame(location, address, key.2) {
                    located.insert(key, at);
                }
            }
        }
        located
    }
}

/// Says once per depth, on an `HPROF WARNING` line, that stacks are cut to the ring's depth
/// when `depth` (`depth=`, or the front-end's CONTROL) asks for more.
pub(super) fn warn_if_deeper_than_the_ring(depth: usize) {
    static WARNED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let ring = signal::ring_depth();
    if depth > ring && WARNED.swap(depth, std::sync::atomic::Ordering::Relaxed) != depth {
        let why = if ring < MAX_RING_DEPTH {
            "the frames the sampler's ring was made for when it started in this JVM"
        } else {
            "the most the sampler's ring, preallocated for the signal handler, holds"
        };
        eprintln!(
            "HPROF WARNING: depth={depth}: cpu=samples and cpu=wall keep the {ring} innermost frames of each stack ({why}); sampler=jvmti keeps them all"
        );
    }
}

/// Serials of the threads the front-end turned sampling off for.
pub(super) fn unsampled_threads(ctx: &Context) -> Vec<u32> {
    match ctx.threads.lock() {
        Ok(threads) => threads
            .live()
            .filter(|t| !t.sampled)
            .map(|t| t.serial)
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The pseudo-frame of a sample whose stack could not be walked, by AsyncGetCallTrace's
/// result code (or the guard's).
fn failure_name(code: i32) -> &'static str {
    match code {
        0 => "<no Java frame>",
        -1 => "<no class load>",
        -2 => "<GC active>",
        -3 => "<unknown not Java>",
        -4 => "<not walkable not Java>",
        -5 => "<unknown Java>",
        -6 => "<not walkable Java>",
        -7 => "<unknown state>",
        -8 => "<thread exit>",
        -9 => "<deoptimizing>",
        -10 => "<safepoint>",
        signal::WALK_CRASHED => "<walk crashed>",
        signal::WALK_SKIPPED => "<walk skipped>",
        _ => "<unknown>",
    }
}
