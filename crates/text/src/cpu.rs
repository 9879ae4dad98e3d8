//! CPU SAMPLES and CPU TIME (ms) sections, and the rows of `cpu=old`.

use std::io::{self, Write};

use crate::percent::{percent, ratio};

/// What the cost column of a section measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostKind {
    /// `cpu=samples`: cost and count are both numbers of samples.
    Samples,
    /// `cpu=times`: cost is self CPU time in ms, count the number of calls.
    TimeMillis,
}

impl CostKind {
    fn title(self) -> &'static str {
        match self {
            CostKind::Samples => "CPU SAMPLES",
            CostKind::TimeMillis => "CPU TIME (ms)",
        }
    }
}

/// One row of a CPU section: a trace and what it cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CostRow<'a> {
    /// Samples (cpu=samples) or self milliseconds (cpu=times); orders the rows.
    pub cost: u64,
    /// Samples (cpu=samples) or calls (cpu=times).
    pub count: u64,
    /// Trace serial.
    pub trace: u32,
    /// `class.method` of the trace's top frame, or `None` for an empty trace.
    pub method: Option<&'a str>,
}

/// Sorts rows by cost (biggest first, ties by trace serial) and returns how many are
/// listed: the listing stops at the first row with no count or whose share of `total`
/// is below `cutoff`.
pub fn sort_cost_rows(rows: &mut [CostRow<'_>], total: u64, cutoff: f64) -> usize {
    rows.sort_by(|a, b| b.cost.cmp(&a.cost).then(a.trace.cmp(&b.trace)));
    rows.iter()
        .position(|r| r.count == 0 || ratio(r.cost, total) < cutoff)
        .unwrap_or(rows.len())
}

/// Writes a `CPU SAMPLES` or `CPU TIME (ms)` section. `rows` are the listed rows in
/// order (see [`sort_cost_rows`]) and `total` the sum of the costs of all traces.
pub fn write_cost_section(
    out: &mut dyn Write,
    kind: CostKind,
    date: &str,
    rows: &[CostRow<'_>],
    total: u64,
) -> io::Result<()> {
    let title = kind.title();
    writeln!(out, "{title} BEGIN (total = {total}) {date}")?;
    if !rows.is_empty() {
        out.write_all(b"rank   self  accum   count trace method\n")?;
    }
    let mut accum = 0.0;
    for (index, row) in rows.iter().enumerate() {
        let share = ratio(row.cost, total);
        accum += share;
        write!(
            out,
            "{:4} {}% {}% {:7} {:5}",
            index + 1,
            percent(share),
            percent(accum),
            row.count,
            row.trace
        )?;
        match row.method {
            Some(method) => writeln!(out, " {method}")?,
            None => out.write_all(b" <empty trace>\n")?,
        }
    }
    writeln!(out, "{title} END")
}

/// One row of the `cpu=old` listing: a callee, its caller and their cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OldRow<'a> {
    /// Number of calls.
    pub count: u64,
    /// `class.method(signature)` of the callee, `None` if unknown.
    pub callee: Option<&'a str>,
    /// `class.method(signature)` of the caller, `None` if unknown.
    pub caller: Option<&'a str>,
    /// Inclusive time in ms.
    pub millis: u64,
}

/// Writes the `cpu=old` listing: `count callee caller time` and one line per row, in
/// the order given; there is no end line.
pub fn write_old_rows(out: &mut dyn Write, rows: &[OldRow<'_>]) -> io::Result<()> {
    out.write_all(b"count callee caller time\n")?;
    for row in rows {
        writeln!(
            out,
            "{} {} {} {}",
            row.count,
            row.callee.unwrap_or("<unknown callee>"),
            row.caller.unwrap_or("<unknown caller>"),
            row.millis
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_section_matches_the_original() {
        let mut rows = vec![
            CostRow {
                cost: 49,
                count: 49,
                trace: 300023,
                method: Some("CpuHot.hotA"),
            },
            CostRow {
                cost: 106,
                count: 106,
                trace: 300026,
                method: Some("CpuHot.hotB"),
            },
            CostRow {
                cost: 0,
                count: 0,
                trace: 300001,
                method: None,
            },
        ];
        let shown = sort_cost_rows(&mut rows, 216, 0.0001);
        assert_eq!(shown, 2);
        let mut out = Vec::new();
        write_cost_section(
            &mut out,
            CostKind::Samples,
            "Sun Nov 22 08:57:30 2026",
            &rows[..shown],
            216,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "CPU SAMPLES BEGIN (total = 216) Sun Nov 22 08:57:30 2026\n\
             rank   self  accum   count trace method\n   \
             1 49.07% 49.07%     106 300026 CpuHot.hotB\n   \
             2 22.69% 71.76%      49 300023 CpuHot.hotA\n\
             CPU SAMPLES END\n"
        );
    }

    #[test]
    fn empty_time_section_has_no_column_line() {
        let mut out = Vec::new();
        write_cost_section(&mut out, CostKind::TimeMillis, "D", &[], 0).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "CPU TIME (ms) BEGIN (total = 0) D\nCPU TIME (ms) END\n"
        );
    }

    #[test]
    fn old_rows_match_the_original() {
        let rows = [
            OldRow {
                count: 10296,
                callee: Some("java.lang.String.isLatin1()Z"),
                caller: Some("java.lang.String.charAt(I)C"),
                millis: 9,
            },
            OldRow {
                count: 1,
                callee: None,
                caller: None,
                millis: 0,
            },
        ];
        let mut out = Vec::new();
        write_old_rows(&mut out, &rows).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "count callee caller time\n\
             10296 java.lang.String.isLatin1()Z java.lang.String.charAt(I)C 9\n\
             1 <unknown callee> <unknown caller> 0\n"
        );
    }
}
