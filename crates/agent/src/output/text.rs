//! Writes the profile in the `java.hprof.txt` text layout, through the `hprof-text` crate.

use std::collections::HashSet;
use std::io::{self, Write};
use std::sync::Arc;
use std::time::SystemTime;

use hprof_text::{
    CostKind, CostRow, Frame as TextFrame, LineInfo, MonitorEntry, MonitorThread, MonitorTimeRow,
    SiteRow, SitesOrder, ctime, write_cost_section, write_file_header, write_monitor_dump,
    write_monitor_time, write_sites, write_thread_end, write_thread_start, write_trace, write_wait,
    write_waited,
};

use crate::output::{MonitorOwner, MonitorTime, ProfileWriter, Site, SiteTotals, ThreadState};
use crate::threads::ThreadStart;
use crate::trace_store::Trace;

/// The text writer: each trace is written once, before the first record that uses it.
pub struct TextWriter<W: Write + Send> {
    out: W,
    written: HashSet<u32>,
}

impl<W: Write + Send> TextWriter<W> {
    /// Writes the file header and returns the writer.
    pub fn new(mut out: W) -> io::Result<TextWriter<W>> {
        write_file_header(&mut out, &ctime(SystemTime::now()))?;
        Ok(TextWriter {
            out,
            written: HashSet::new(),
        })
    }

    fn ensure_trace(&mut self, trace: &Trace) -> io::Result<()> {
        if !self.written.insert(trace.serial) {
            return Ok(());
        }
        let frames: Vec<TextFrame<'_>> = trace
            .frames
            .iter()
            .map(|f| TextFrame {
                class: &f.method.class.name,
                method: Some(&f.method.name),
                source: f.method.class.source.as_deref(),
                line: if f.line > 0 {
                    LineInfo::Line(f.line as u32)
                } else {
                    LineInfo::Unknown
                },
            })
            .collect();
        let thread = (trace.thread != 0).then_some(trace.thread);
        write_trace(&mut self.out, trace.serial, thread, &frames)
    }
}

impl<W: Write + Send> ProfileWriter for TextWriter<W> {
    fn thread_start(&mut self, start: &ThreadStart) -> io::Result<()> {
        write_thread_start(
            &mut self.out,
            start.object_id,
            start.serial,
            &start.name,
            &start.group,
        )
    }

    fn thread_end(&mut self, serial: u32) -> io::Result<()> {
        write_thread_end(&mut self.out, serial)
    }

    fn cpu_samples(&mut self, rows: &[(Arc<Trace>, u64)], total: u64) -> io::Result<()> {
        for (trace, _) in rows {
            self.ensure_trace(trace)?;
        }
        let methods: Vec<Option<String>> = rows
            .iter()
            .map(|(t, _)| {
                t.frames
                    .first()
                    .map(|f| format!("{}.{}", f.method.class.name, f.method.name))
            })
            .collect();
        let cost_rows: Vec<CostRow<'_>> = rows
            .iter()
            .zip(&methods)
            .map(|((trace, hits), method)| CostRow {
                cost: *hits,
                count: *hits,
                trace: trace.serial,
                method: method.as_deref(),
            })
            .collect();
        write_cost_section(
            &mut self.out,
            CostKind::Samples,
            &ctime(SystemTime::now()),
            &cost_rows,
            total,
        )?;
        self.out.flush()
    }

    fn traces(&mut self, traces: &[Arc<Trace>]) -> io::Result<()> {
        for trace in traces {
            self.ensure_trace(trace)?;
        }
        self.out.flush()
    }

    fn sites(
        &mut self,
        sites: &[Site],
        totals: &SiteTotals,
        _cutoff: f64,
        flags: u16,
    ) -> io::Result<()> {
        for site in sites {
            self.ensure_trace(&site.trace)?;
        }
        let rows: Vec<SiteRow<'_>> = sites
            .iter()
            .map(|s| SiteRow {
                live_bytes: s.live_bytes,
                live_objects: s.live_objects,
                allocated_bytes: s.allocated_bytes,
                allocated_objects: s.allocated_objects,
                trace: s.trace.serial,
                class: &s.class.name,
            })
            .collect();
        let (order, total) = if flags & 0x2 != 0 {
            (SitesOrder::AllocatedBytes, totals.allocated_bytes)
        } else {
            (SitesOrder::LiveBytes, totals.live_bytes)
        };
        write_sites(
            &mut self.out,
            order,
            &ctime(SystemTime::now()),
            &rows,
            total,
        )?;
        self.out.flush()
    }

    fn monitor_wait(
        &mut self,
        signature: &str,
        timeout_ms: i64,
        thread: Option<u32>,
    ) -> io::Result<()> {
        write_wait(&mut self.out, signature, timeout_ms, thread)
    }

    fn monitor_waited(
        &mut self,
        signature: &str,
        waited_ms: i64,
        thread: Option<u32>,
    ) -> io::Result<()> {
        write_waited(&mut self.out, signature, waited_ms, thread)
    }

    fn monitor_dump(
        &mut self,
        threads: &[ThreadState],
        traces: &[Arc<Trace>],
        monitors: &[MonitorOwner],
    ) -> io::Result<()> {
        for trace in traces {
            if trace.serial != crate::trace_store::EMPTY_TRACE_SERIAL {
                self.ensure_trace(trace)?;
            }
        }
        let threads: Vec<MonitorThread<'_>> = threads
            .iter()
            .map(|t| MonitorThread {
                serial: t.serial,
                trace: t.trace,
                status: &t.status,
            })
            .collect();
        let monitors: Vec<MonitorEntry<'_>> = monitors
            .iter()
            .map(|m| MonitorEntry {
                signature: &m.signature,
                owner: m.owner,
                entry_count: m.entry_count,
                waiting_to_enter: &m.waiting_to_enter,
                waiting_to_be_notified: &m.waiting_to_be_notified,
            })
            .collect();
        write_monitor_dump(&mut self.out, &threads, &monitors)
    }

    fn monitor_time(
        &mut self,
        rows: &[MonitorTime],
        traces: &[Arc<Trace>],
        total_nanos: u64,
    ) -> io::Result<()> {
        for trace in traces {
            self.ensure_trace(trace)?;
        }
        let rows: Vec<MonitorTimeRow<'_>> = rows
            .iter()
            .map(|r| MonitorTimeRow {
                millis: r.nanos / 1_000_000,
                count: r.count,
                trace: r.trace,
                class: &r.class,
            })
            .collect();
        write_monitor_time(
            &mut self.out,
            &ctime(SystemTime::now()),
            &rows,
            total_nanos / 1_000_000,
        )?;
        self.out.flush()
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
