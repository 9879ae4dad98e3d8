//! Writes the profile as a JDK Flight Recorder recording (`format=jfr`): every sample the
//! sampler drains as a `jdk.ExecutionSample` (a wall-clock sample with its thread's state),
//! each contended monitor enter as a `jdk.JavaMonitorEnter` with its duration, and at each
//! dump the figures JFR has no event for as hprof's own events (`hprof.AllocationSite`,
//! `hprof.CpuTime`, `hprof.MonitorTime`). Events collect in the current chunk, in memory; the
//! chunk is written whole (header, events, constant pools, metadata) when it reaches
//! `chunk=`'s size or time, at each dump and at the end, so the file is a valid recording
//! after every dump and the agent never holds more than one chunk.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::Arc;

use hprof_jfr::pools::{
    FRAME_CPP, FRAME_JIT, FRAME_KERNEL, FRAME_NATIVE, FrameRef, Pools, library_class,
};
use hprof_jfr::schema::{self, id};
use hprof_jfr::writer::{self, MetadataDef, Put};

use crate::options::{Chunk, Options};
use crate::output::{
    ContendedEnter, MonitorTime, ProfileWriter, Site, SiteTotals, TimedSample, wall_nanos,
};
use crate::threads::ThreadStart;
use crate::trace_store::{Code, PSEUDO_CLASS, Trace};

/// Most events written for one sample that stands for several intervals.
const MAX_REPEAT: u32 = 1000;

/// The JFR writer.
pub struct JfrWriter<W: Write + Send> {
    out: W,
    metadata: MetadataDef,
    chunk: Chunk,
    /// The options, in an `hprof.Settings` event at the start of each chunk.
    options: String,
    /// Most frames of a trace (`depth=`): a trace of as many may have had more, and is
    /// written as truncated.
    depth: usize,
    /// The event types this run writes with their settings (type id, name, value), as
    /// `jdk.ActiveSetting` events at the start of each chunk.
    settings: Vec<(u64, &'static str, String)>,
    /// The current chunk: its events, pools, and when it started (`CLOCK_MONOTONIC`).
    events: Vec<u8>,
    /// The bytes of `events` that are the chunk's own (its settings event): a chunk with no
    /// more is not written.
    preamble: usize,
    pools: Pools,
    started: u64,
    /// Stack trace and state keys of this chunk, by trace serial (and whether a wall-clock
    /// sample's: its outermost frame is its state).
    stacks: HashMap<(u32, bool), (i64, i64)>,
    /// Thread names by serial (for the whole run).
    threads: HashMap<u32, String>,
    /// Whether samples with times came since the last CPU SAMPLES section (else the section's
    /// counts are written as samples at the dump's time: the JVMTI sampler has no times).
    timed_since_dump: bool,
    body: Vec<u8>,
    /// Whether a chunk has been written: the first is written even with no samples (a program
    /// that dies at once still leaves a recording the JDK's tools read, not an empty file).
    written: bool,
}

/// Ticks are `CLOCK_MONOTONIC` nanoseconds.
const TICKS_PER_SECOND: i64 = 1_000_000_000;

impl<W: Write + Send> JfrWriter<W> {
    /// A writer whose first chunk starts now.
    pub fn new(out: W, options: &Options) -> JfrWriter<W> {
        let mut w = JfrWriter {
            out,
            metadata: schema::metadata(),
            chunk: options.chunk,
            options: options.text.clone(),
            settings: active_settings(options),
            depth: options.depth as usize,
            events: Vec::with_capacity(1 << 16),
            preamble: 0,
            pools: Pools::new(),
            started: crate::jvmti::os::monotonic_nanos(),
            stacks: HashMap::new(),
            threads: HashMap::new(),
            timed_since_dump: false,
            body: Vec::with_capacity(256),
            written: false,
        };
        w.settings_event();
        w
    }

    fn settings_event(&mut self) {
        self.body.clear();
        self.body.long(self.started as i64);
        self.body.string(Some(&self.options));
        writer::event(&mut self.events, id::PROFILE_SETTINGS, &self.body);
        for (type_id, name, value) in &self.settings {
            self.body.clear();
            self.body.long(self.started as i64);
            self.body.long(0); // duration
            self.body.long(0); // event thread: none
            self.body.long(0); // stack trace: none
            self.body.long(*type_id as i64);
            self.body.string(Some(name));
            self.body.string(Some(value));
            writer::event(&mut self.events, id::ACTIVE_SETTING, &self.body);
        }
        self.preamble = self.events.len();
    }

    /// Writes the current chunk, if it has events, and starts the next.
    fn end_chunk(&mut self) -> io::Result<()> {
        let now = crate::jvmti::os::monotonic_nanos();
        if self.events.len() <= self.preamble && self.written {
            return Ok(());
        }
        let bytes = writer::chunk(
            wall_nanos(self.started),
            now.saturating_sub(self.started) as i64,
            self.started as i64,
            TICKS_PER_SECOND,
            &self.events,
            self.pools.constant_pools(),
            &self.metadata,
        );
        self.out.write_all(&bytes)?;
        self.out.flush()?;
        self.written = true;
        self.events.clear();
        self.pools = Pools::new();
        self.stacks.clear();
        self.started = now;
        self.settings_event();
        Ok(())
    }

    /// Ends the chunk when it holds `chunk=`'s bytes or spans its time.
    fn rotate_if_due(&mut self) -> io::Result<()> {
        let due = match self.chunk {
            Chunk::Bytes(limit) => {
                (self.events.len() + self.pools.constant_pools().byte_len()) as u64 >= limit
            }
            Chunk::Seconds(limit) => {
                crate::jvmti::os::monotonic_nanos().saturating_sub(self.started)
                    >= limit.saturating_mul(1_000_000_000)
            }
        };
        if due { self.end_chunk() } else { Ok(()) }
    }

    fn thread(&mut self, serial: u32) -> i64 {
        if serial == 0 {
            return 0;
        }
        let name = self
            .threads
            .get(&serial)
            .cloned()
            .unwrap_or_else(|| format!("thread {serial}"));
        self.pools.thread(i64::from(serial), 0, &name)
    }

    /// The key of `trace`'s stack in this chunk, without a wall-clock sample's state frame
    /// (its outermost), and that state's key (RUNNABLE for others).
    fn stack(&mut self, trace: &Trace, wall: bool) -> (i64, i64) {
        if let Some(&(key, state)) = self.stacks.get(&(trace.serial, wall)) {
            return (key, state);
        }
        let mut frames = &trace.frames[..];
        let mut state = 0;
        if wall
            && let Some(last) = frames.last()
            && last.method.class.name == PSEUDO_CLASS
            && let Some(key) = schema::state_key(&last.method.name)
        {
            state = key;
            frames = &frames[..frames.len() - 1];
        }
        let refs: Vec<FrameRef> = frames
            .iter()
            .map(|f| {
                let m = &f.method;
                // A function of native or kernel code is written as async-profiler writes
                // one: its library as its class (`libc.so.6`; `kernel` for `[kernel]`: see
                // `hprof_jfr::pools::library_class`) and the frame type Native, C++ (the JVM and its stubs) or
                // Kernel.
                let (class, kind) = match m.code {
                    Code::Java => (
                        self.pools.class(&internal_name(&m.class.name)),
                        if m.native { FRAME_NATIVE } else { FRAME_JIT },
                    ),
                    Code::Native | Code::Kernel => (
                        self.pools.class(library_class(&m.class.name)),
                        code_frame_type(m.code, &m.class.name),
                    ),
                };
                FrameRef {
                    // (Functions of native and kernel code have no descriptor: the JDK's
                    // jfr tool needs one.)
                    method: self.pools.method(
                        class,
                        &m.name,
                        if m.signature.is_empty() {
                            "()V"
                        } else {
                            &m.signature
                        },
                    ),
                    line: f.line.max(0),
                    bci: -1,
                    kind,
                }
            })
            .collect();
        // (As the JDK marks a stack deeper than its `stackdepth`: JMC's analysis warns of it.)
        let truncated = trace.frames.len() >= self.depth;
        let key = self.pools.stack(&refs, truncated);
        self.stacks.insert((trace.serial, wall), (key, state));
        (key, state)
    }

    /// A `jdk.ExecutionSample` at `ticks`.
    fn execution_sample(&mut self, ticks: u64, thread: i64, stack: i64, state: i64) {
        self.body.clear();
        self.body.long(ticks as i64);
        self.body.long(thread);
        self.body.long(stack);
        self.body.long(state);
        writer::event(&mut self.events, id::EXECUTION_SAMPLE, &self.body);
    }

    /// An hprof event at `ticks` whose fields after the start time are `stack`, then the
    /// `longs` (a class key first for allocation sites).
    fn dump_event(&mut self, type_id: u64, ticks: u64, stack: i64, longs: &[i64]) {
        self.body.clear();
        self.body.long(ticks as i64);
        self.body.long(stack);
        for &v in longs {
            self.body.long(v);
        }
        writer::event(&mut self.events, type_id, &self.body);
    }
}

/// The event types `options` make this run write, each with its settings as the JDK records
/// them in `jdk.ActiveSetting` (`enabled`; the samples' `period`; the monitor enters'
/// `threshold`, 0: every contended enter).
fn active_settings(options: &Options) -> Vec<(u64, &'static str, String)> {
    let on = |type_id| (type_id, "enabled", "true".to_string());
    let mut settings = vec![on(id::PROFILE_SETTINGS)];
    if options.cpu_samples || options.cpu_wall {
        settings.push(on(id::EXECUTION_SAMPLE));
        settings.push((
            id::EXECUTION_SAMPLE,
            "period",
            format!("{} ms", options.interval_ms.max(1)),
        ));
        settings.push((id::EXECUTION_SAMPLE, "stackTrace", "true".into()));
    }
    if options.monitor {
        settings.push(on(id::JAVA_MONITOR_ENTER));
        settings.push((id::JAVA_MONITOR_ENTER, "threshold", "0 ms".into()));
        settings.push((id::JAVA_MONITOR_ENTER, "stackTrace", "true".into()));
        settings.push(on(id::MONITOR_TIME));
    }
    if options.heap_sites {
        settings.push(on(id::ALLOCATION_SITE));
    }
    if options.cpu_times {
        settings.push(on(id::CPU_TIME));
    }
    settings
}

/// The `jdk.types.FrameType` key of a function of native (`library`'s) or kernel code.
fn code_frame_type(code: Code, library: &str) -> i64 {
    match (code, library) {
        (Code::Kernel, _) => FRAME_KERNEL,
        // (`[stub]`: code_names' library of code-cache stubs, a layer above output.)
        (_, "libjvm.so" | "[stub]") => FRAME_CPP,
        _ => FRAME_NATIVE,
    }
}

/// A dotted class name in the JVM's form, as JFR writes class names: `java/lang/String`,
/// `[I`, `[Ljava/lang/String;`.
fn internal_name(dotted: &str) -> String {
    let base = dotted.trim_end_matches("[]");
    let dims = (dotted.len() - base.len()) / 2;
    if dims == 0 {
        return dotted.replace('.', "/");
    }
    let element = match base {
        "boolean" => "Z".to_string(),
        "byte" => "B".to_string(),
        "char" => "C".to_string(),
        "short" => "S".to_string(),
        "int" => "I".to_string(),
        "long" => "J".to_string(),
        "float" => "F".to_string(),
        "double" => "D".to_string(),
        other => format!("L{};", other.replace('.', "/")),
    };
    format!("{}{element}", "[".repeat(dims))
}

impl<W: Write + Send> ProfileWriter for JfrWriter<W> {
    fn thread_start(&mut self, start: &ThreadStart) -> io::Result<()> {
        self.threads.insert(start.serial, start.name.clone());
        Ok(())
    }

    fn thread_end(&mut self, _serial: u32) -> io::Result<()> {
        Ok(())
    }

    fn timed_samples(&mut self, samples: &[TimedSample]) -> io::Result<()> {
        self.timed_since_dump = true;
        for sample in samples {
            let thread = self.thread(sample.thread);
            let (stack, state) = self.stack(&sample.trace, sample.wall);
            for _ in 0..sample.weight.clamp(1, MAX_REPEAT) {
                self.execution_sample(sample.time, thread, stack, state);
            }
        }
        self.rotate_if_due()
    }

    fn monitor_contended(&mut self, enter: &ContendedEnter) -> io::Result<()> {
        let thread = self.thread(enter.thread);
        let (stack, _) = self.stack(&enter.trace, false);
        let class = self.pools.class(&internal_name(&enter.class));
        self.body.clear();
        self.body.long(enter.start as i64);
        self.body.long(enter.nanos as i64);
        self.body.long(thread);
        self.body.long(stack);
        self.body.long(class);
        self.body.long(0);
        self.body.long(0);
        writer::event(&mut self.events, id::JAVA_MONITOR_ENTER, &self.body);
        self.rotate_if_due()
    }

    fn cpu_samples(&mut self, rows: &[(Arc<Trace>, u64)], _total: u64) -> io::Result<()> {
        // The JVMTI sampler's samples have no times: they are written at the dump's.
        if !self.timed_since_dump {
            let now = crate::jvmti::os::monotonic_nanos();
            for (trace, count) in rows {
                let thread = self.thread(trace.thread);
                let (stack, _) = self.stack(trace, false);
                for _ in 0..*count {
                    self.execution_sample(now, thread, stack, 0);
                }
            }
        }
        self.timed_since_dump = false;
        Ok(())
    }

    fn cpu_times(&mut self, rows: &[(Arc<Trace>, u64, u64)], _total: u64) -> io::Result<()> {
        let now = crate::jvmti::os::monotonic_nanos();
        for (trace, calls, millis) in rows {
            let (stack, _) = self.stack(trace, false);
            let nanos = millis.saturating_mul(1_000_000) as i64;
            self.dump_event(id::CPU_TIME, now, stack, &[nanos, *calls as i64]);
        }
        Ok(())
    }

    fn monitor_time(
        &mut self,
        rows: &[MonitorTime],
        traces: &[Arc<Trace>],
        _total_nanos: u64,
    ) -> io::Result<()> {
        let now = crate::jvmti::os::monotonic_nanos();
        for row in rows {
            let Some(trace) = traces.iter().find(|t| t.serial == row.trace) else {
                continue;
            };
            let (stack, _) = self.stack(trace, false);
            self.dump_event(
                id::MONITOR_TIME,
                now,
                stack,
                &[row.nanos as i64, row.count as i64],
            );
        }
        Ok(())
    }

    fn sites(
        &mut self,
        sites: &[Site],
        _totals: &SiteTotals,
        _cutoff: f64,
        _flags: u16,
    ) -> io::Result<()> {
        let now = crate::jvmti::os::monotonic_nanos();
        for site in sites {
            let (stack, _) = self.stack(&site.trace, false);
            let class = self.pools.class(&internal_name(&site.class.name));
            self.dump_event(
                id::ALLOCATION_SITE,
                now,
                stack,
                &[
                    class,
                    site.allocated_bytes as i64,
                    site.allocated_objects as i64,
                    site.live_bytes as i64,
                    site.live_objects as i64,
                ],
            );
        }
        Ok(())
    }

    fn traces(&mut self, _traces: &[Arc<Trace>]) -> io::Result<()> {
        Ok(())
    }

    fn error_note(&mut self, note: &str) -> io::Result<()> {
        self.body.clear();
        self.body.long(crate::jvmti::os::monotonic_nanos() as i64);
        self.body.string(Some(&format!("HPROF ERROR: {note}")));
        writer::event(&mut self.events, id::PROFILE_SETTINGS, &self.body);
        Ok(())
    }

    /// Each dump, and the end, writes the chunk: the file is a whole recording after it.
    fn flush(&mut self) -> io::Result<()> {
        self.end_chunk()?;
        self.out.flush()
    }
}

impl<W: Write + Send> Drop for JfrWriter<W> {
    fn drop(&mut self) {
        let _ = self.end_chunk();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names_in_the_jvms_form() {
        assert_eq!(internal_name("java.lang.String"), "java/lang/String");
        assert_eq!(internal_name("int[]"), "[I");
        assert_eq!(
            internal_name("java.lang.Object[][]"),
            "[[Ljava/lang/Object;"
        );
    }
}
