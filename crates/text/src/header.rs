//! The file header (first line, glossary, separator) and C `ctime` dates.

use std::io::{self, Write};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chrono::{DateTime, Local};

/// The version string of every text file; 1.0.2 is only ever used by binary files.
pub const FILE_VERSION: &str = "JAVA PROFILE 1.0.1";

/// Formats a time as C `ctime()` does, in local time and without the trailing newline:
/// `Sun Nov 22 08:57:21 2026`, with the day of month padded by a space (`Jan  3`).
pub fn ctime(time: SystemTime) -> String {
    let local: DateTime<Local> = time.into();
    local.format("%a %b %e %H:%M:%S %Y").to_string()
}

/// [`ctime`] of a time given in milliseconds since the Unix epoch.
pub fn ctime_from_millis(millis: u64) -> String {
    ctime(UNIX_EPOCH + Duration::from_millis(millis))
}

/// What each kind of record in the file means, in our own words.
const GLOSSARY: &str = "\
This is a text profile written by hprof-rs, a JVMTI agent. It is made of the
records below, each starting with the upper-case word shown. Numbers called
\"id\" or \"thread\" are thread serials (from 200001), \"trace\" numbers are stack
trace serials (from 300001; 300000 is the empty trace of the VM itself), and
object and class ids are written in hexadecimal.

THREAD START    A thread began: its object id, serial, name and group.
THREAD END      A thread finished.
TRACE           A stack trace, innermost frame first, one frame per line as
                class.method(file:line). A trace is written once, before the
                first record that refers to it.
HEAP DUMP       Every object reachable after a full garbage collection:
                ROOT  a GC root and what kind of root it is,
                OBJ   an object instance, its size, allocation trace and class,
                      followed by its non-null reference fields,
                ARR   an array, its size, length and element type, followed by
                      its non-null elements for arrays of references,
                CLS   a class, its super class, loader, non-null static
                      references and constant pool references.
SITES           Allocation sites, biggest first: for each (class, trace) pair
                the bytes and objects still live and those allocated so far.
CPU SAMPLES     Where threads were found running on the CPU when sampled;
                \"count\" is the number of samples in each trace.
CPU TIME        Per trace, the CPU milliseconds spent in its top method itself
                and how many calls of it began in the interval.
MONITOR TIME    Time threads spent waiting to enter a contended monitor, per
                trace and monitor class, in milliseconds.
MONITOR DUMP    Each thread's state and the monitors it owns, with the threads
                waiting to enter them or to be notified.

A dump of the data collected so far can be requested while the program runs
by sending it SIGQUIT (kill -QUIT <pid>, or Ctrl-\\ in its terminal).
";

/// Writes the file header: the version line with its creation date, a blank line,
/// the glossary and the `--------` separator.
pub fn write_file_header(out: &mut dyn Write, created: &str) -> io::Result<()> {
    write!(
        out,
        "{FILE_VERSION}, created {created}\n\n{GLOSSARY}\n--------\n\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctime_pads_the_day_with_a_space() {
        let text = ctime_from_millis(1_767_225_600_000 + 2 * 86_400_000 + 43_200_000);
        // 2026-01-03 12:00 UTC: whatever the local zone, the date stays Jan 3.
        assert!(text.starts_with("Sat Jan  3 "), "{text}");
        assert!(text.ends_with(" 2026"), "{text}");
        assert_eq!(text.len(), 24);
    }

    #[test]
    fn header_starts_and_ends_like_the_original() {
        let mut out = Vec::new();
        write_file_header(&mut out, "Sun Nov 22 08:57:21 2026").unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("JAVA PROFILE 1.0.1, created Sun Nov 22 08:57:21 2026\n\n"));
        assert!(text.ends_with(".\n\n--------\n\n"));
        for word in [
            "THREAD START",
            "TRACE",
            "HEAP DUMP",
            "SITES",
            "CPU SAMPLES",
            "MONITOR DUMP",
        ] {
            assert!(
                text.contains(&format!("\n{word} ")),
                "glossary lacks {word}"
            );
        }
    }
}
