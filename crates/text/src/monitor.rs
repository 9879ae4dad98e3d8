//! MONITOR DUMP, MONITOR TIME and the WAIT / WAITED event lines.

use std::io::{self, Write};

use crate::percent::{percent, ratio};

/// A thread as MONITOR DUMP lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorThread<'a> {
    /// Thread serial.
    pub serial: u32,
    /// Serial of the thread's last known trace (300000 when none).
    pub trace: u32,
    /// Status such as `R`, `CW`, `MW`, `SL`, `ZO`, with `S|`, `intr|`, `native|` prefixes.
    pub status: &'a str,
}

/// A monitor owned by a live thread, as MONITOR DUMP lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorEntry<'a> {
    /// JVM signature of the monitor object's class (`Ljava/lang/Object;`).
    pub signature: &'a str,
    /// Owning thread serial; `None` prints the monitor as unowned.
    pub owner: Option<u32>,
    /// How many times the owner has entered it.
    pub entry_count: u32,
    /// Threads blocked entering it (0 = a thread the agent does not know).
    pub waiting_to_enter: &'a [u32],
    /// Threads waiting in `Object.wait` on it.
    pub waiting_to_be_notified: &'a [u32],
}

fn write_thread_list(out: &mut dyn Write, label: &str, threads: &[u32]) -> io::Result<()> {
    write!(out, "\t{label}:")?;
    for (index, &serial) in threads.iter().enumerate() {
        let comma = if index + 1 < threads.len() { "," } else { "" };
        if serial == 0 {
            write!(out, " <unknown thread>{comma}")?;
        } else {
            write!(out, " thread {serial}{comma}")?;
        }
    }
    out.write_all(b"\n")
}

/// Writes a MONITOR DUMP section: every thread, then every owned monitor.
pub fn write_monitor_dump(
    out: &mut dyn Write,
    threads: &[MonitorThread<'_>],
    monitors: &[MonitorEntry<'_>],
) -> io::Result<()> {
    out.write_all(b"MONITOR DUMP BEGIN\n")?;
    for thread in threads {
        writeln!(
            out,
            "    THREAD {}, trace {}, status: {}",
            thread.serial, thread.trace, thread.status
        )?;
    }
    for monitor in monitors {
        match monitor.owner {
            Some(owner) => {
                writeln!(out, "    MONITOR {}", monitor.signature)?;
                writeln!(
                    out,
                    "\towner: thread {owner}, entry count: {}",
                    monitor.entry_count
                )?;
            }
            None => writeln!(out, "    MONITOR {} unowned", monitor.signature)?,
        }
        write_thread_list(out, "waiting to enter", monitor.waiting_to_enter)?;
        write_thread_list(
            out,
            "waiting to be notified",
            monitor.waiting_to_be_notified,
        )?;
    }
    out.write_all(b"MONITOR DUMP END\n")
}

/// Contended-enter time of one (trace, monitor class) pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorTimeRow<'a> {
    /// Milliseconds spent waiting to enter; orders the rows.
    pub millis: u64,
    /// Number of contended enters.
    pub count: u64,
    /// Trace serial at the contended enter.
    pub trace: u32,
    /// Dotted class name of the monitor object.
    pub class: &'a str,
}

/// Writes a MONITOR TIME section. `rows` are the listed rows in order (by time, then
/// count, cut off by the caller) and `total_millis` the time over all rows.
pub fn write_monitor_time(
    out: &mut dyn Write,
    date: &str,
    rows: &[MonitorTimeRow<'_>],
    total_millis: u64,
) -> io::Result<()> {
    writeln!(out, "MONITOR TIME BEGIN (total = {total_millis} ms) {date}")?;
    if total_millis > 0 && !rows.is_empty() {
        out.write_all(b"rank   self  accum   count trace monitor\n")?;
        let mut accum = 0.0;
        for (index, row) in rows.iter().enumerate() {
            let share = ratio(row.millis, total_millis);
            accum += share;
            writeln!(
                out,
                "{:4} {}% {}% {:7} {:5} {} (Java)",
                index + 1,
                percent(share),
                percent(accum),
                row.count,
                row.trace,
                row.class
            )?;
        }
    }
    out.write_all(b"MONITOR TIME END\n")
}

fn write_thread_suffix(out: &mut dyn Write, thread: Option<u32>) -> io::Result<()> {
    match thread {
        Some(serial) => writeln!(out, "thread {serial}"),
        None => out.write_all(b"<unknown thread>\n"),
    }
}

/// Writes `WAIT: MONITOR <signature>, timeout=<ms>, thread <serial>`.
pub fn write_wait(
    out: &mut dyn Write,
    signature: &str,
    timeout_millis: i64,
    thread: Option<u32>,
) -> io::Result<()> {
    write!(out, "WAIT: MONITOR {signature}, timeout={timeout_millis}, ")?;
    write_thread_suffix(out, thread)
}

/// Writes `WAITED: MONITOR <signature>, time_waited=<ms>, thread <serial>`.
pub fn write_waited(
    out: &mut dyn Write,
    signature: &str,
    waited_millis: i64,
    thread: Option<u32>,
) -> io::Result<()> {
    write!(
        out,
        "WAITED: MONITOR {signature}, time_waited={waited_millis}, "
    )?;
    write_thread_suffix(out, thread)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monitor_dump_layout() {
        let threads = [
            MonitorThread {
                serial: 200001,
                trace: 300000,
                status: "ZO",
            },
            MonitorThread {
                serial: 200002,
                trace: 300000,
                status: "native|R",
            },
        ];
        let monitors = [MonitorEntry {
            signature: "Ljava/lang/Object;",
            owner: Some(200004),
            entry_count: 1,
            waiting_to_enter: &[200005, 200006],
            waiting_to_be_notified: &[],
        }];
        let mut out = Vec::new();
        write_monitor_dump(&mut out, &threads, &monitors).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "MONITOR DUMP BEGIN\n    THREAD 200001, trace 300000, status: ZO\n    \
             THREAD 200002, trace 300000, status: native|R\n    MONITOR Ljava/lang/Object;\n\
             \towner: thread 200004, entry count: 1\n\
             \twaiting to enter: thread 200005, thread 200006\n\
             \twaiting to be notified:\nMONITOR DUMP END\n"
        );
    }

    #[test]
    fn monitor_time_matches_the_original() {
        let rows = [
            MonitorTimeRow {
                millis: 529,
                count: 35,
                trace: 300121,
                class: "java.lang.Object",
            },
            MonitorTimeRow {
                millis: 40,
                count: 10,
                trace: 300125,
                class: "java.lang.Object",
            },
            MonitorTimeRow {
                millis: 30,
                count: 4,
                trace: 300122,
                class: "java.lang.Object",
            },
        ];
        let mut out = Vec::new();
        write_monitor_time(&mut out, "Sun Nov 22 09:18:34 2026", &rows, 599).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "MONITOR TIME BEGIN (total = 599 ms) Sun Nov 22 09:18:34 2026\n\
             rank   self  accum   count trace monitor\n   \
             1 88.31% 88.31%      35 300121 java.lang.Object (Java)\n   \
             2  6.68% 94.99%      10 300125 java.lang.Object (Java)\n   \
             3  5.01% 100.00%       4 300122 java.lang.Object (Java)\n\
             MONITOR TIME END\n"
        );
    }

    #[test]
    fn wait_lines_match_the_original() {
        let mut out = Vec::new();
        write_wait(&mut out, "Ljava/lang/Object;", 0, Some(200011)).unwrap();
        write_waited(&mut out, "Ljava/lang/Object;", 18, Some(200011)).unwrap();
        write_wait(&mut out, "Ljava/lang/Thread;", 5, None).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "WAIT: MONITOR Ljava/lang/Object;, timeout=0, thread 200011\n\
             WAITED: MONITOR Ljava/lang/Object;, time_waited=18, thread 200011\n\
             WAIT: MONITOR Ljava/lang/Thread;, timeout=5, <unknown thread>\n"
        );
    }
}
