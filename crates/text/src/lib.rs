//! Writes profile data in the `java.hprof.txt` text layout of the original HPROF agent.
//!
//! The agent's `format=a` writer and `hprof print` both render through this crate, so
//! the two produce the same bytes for the same data. Functions take plain values (or, for
//! heap dump lines, `hprof-format`'s heap records) and an `io::Write`; nothing here knows
//! about JVMTI.
//!
//! Line layouts follow the original agent (widths, tabs, hex ids), with its known bugs
//! fixed by the callers' data (true array lengths and object sizes) and listed in
//! `docs/compatibility.md`.

#![deny(missing_docs)]
#![deny(missing_debug_implementations)]
#![forbid(unsafe_code)]

pub use crate::{
    cpu::{CostKind, CostRow, OldRow, sort_cost_rows, write_cost_section, write_old_rows},
    header::{FILE_VERSION, ctime, ctime_from_millis, write_file_header},
    heap::{HeapLine, RootKind, write_heap_begin, write_heap_end, write_heap_line},
    monitor::{
        MonitorEntry, MonitorThread, MonitorTimeRow, write_monitor_dump, write_monitor_time,
        write_wait, write_waited,
    },
    records::{write_class_lines, write_object_array_lines, write_root_line},
    sites::{SiteRow, SitesOrder, sort_sites, write_sites},
    trace::{Frame, KERNEL, LineInfo, write_thread_end, write_thread_start, write_trace},
};

mod cpu;
mod header;
mod heap;
mod monitor;
mod percent;
mod records;
mod sites;
mod trace;
