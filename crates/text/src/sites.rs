//! The SITES section: allocation sites with live and allocated bytes and objects.

use std::io::{self, Write};

use crate::percent::{percent, ratio};

/// Which column orders the sites and gives the percentages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SitesOrder {
    /// By live bytes (every dump, and the socket command's default).
    LiveBytes,
    /// By allocated bytes (the socket command's flag 0x2).
    AllocatedBytes,
}

impl SitesOrder {
    fn title(self) -> &'static str {
        match self {
            SitesOrder::LiveBytes => "live bytes",
            SitesOrder::AllocatedBytes => "allocated bytes",
        }
    }

    fn key(self, row: &SiteRow<'_>) -> u64 {
        match self {
            SitesOrder::LiveBytes => row.live_bytes,
            SitesOrder::AllocatedBytes => row.allocated_bytes,
        }
    }
}

/// One allocation site: a class allocated at a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SiteRow<'a> {
    /// Bytes of the site's objects still alive.
    pub live_bytes: u64,
    /// Number of the site's objects still alive.
    pub live_objects: u64,
    /// Bytes allocated at the site so far.
    pub allocated_bytes: u64,
    /// Objects allocated at the site so far.
    pub allocated_objects: u64,
    /// Serial of the allocation trace.
    pub trace: u32,
    /// Dotted class name (`byte[]`, `java.lang.String[][]`).
    pub class: &'a str,
}

/// Sorts `rows` (biggest first by `order`, ties by trace then class so the output is
/// stable) and returns how many of them pass `cutoff`: the listing stops at the first
/// site whose share of the total is below it. Callers write the traces of those rows
/// before calling [`write_sites`].
pub fn sort_sites(rows: &mut [SiteRow<'_>], order: SitesOrder, cutoff: f64) -> usize {
    rows.sort_by(|a, b| {
        order
            .key(b)
            .cmp(&order.key(a))
            .then(a.trace.cmp(&b.trace))
            .then(a.class.cmp(b.class))
    });
    let total: u64 = rows.iter().map(|r| order.key(r)).sum();
    rows.iter()
        .position(|r| ratio(order.key(r), total) < cutoff)
        .unwrap_or(rows.len())
}

/// Writes a SITES section. `rows` must already be sorted by [`sort_sites`]; `shown`
/// is how many of them to list, and `total` the sum over all sites of the ordering
/// column (the percentages' denominator).
pub fn write_sites(
    out: &mut dyn Write,
    order: SitesOrder,
    date: &str,
    rows: &[SiteRow<'_>],
    total: u64,
) -> io::Result<()> {
    writeln!(out, "SITES BEGIN (ordered by {}) {date}", order.title())?;
    out.write_all(b"          percent          live          alloc'ed  stack class\n")?;
    out.write_all(b" rank   self  accum     bytes objs     bytes  objs trace name\n")?;
    let mut accum = 0.0;
    for (index, row) in rows.iter().enumerate() {
        let share = ratio(order.key(row), total);
        accum += share;
        writeln!(
            out,
            "{:5} {}% {}% {:9} {:4} {:9} {:5} {:5} {}",
            index + 1,
            percent(share),
            percent(accum),
            row.live_bytes,
            row.live_objects,
            row.allocated_bytes,
            row.allocated_objects,
            row.trace,
            row.class
        )?;
    }
    out.write_all(b"SITES END\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_match_the_original() {
        let mut rows = vec![
            SiteRow {
                live_bytes: 68416,
                live_objects: 2138,
                allocated_bytes: 68416,
                allocated_objects: 2138,
                trace: 300041,
                class: "java.util.HashMap$Node",
            },
            SiteRow {
                live_bytes: 43554328,
                live_objects: 206421,
                allocated_bytes: 63296416,
                allocated_objects: 300000,
                trace: 300167,
                class: "byte[]",
            },
        ];
        let shown = sort_sites(&mut rows, SitesOrder::LiveBytes, 0.0001);
        assert_eq!(shown, 2);
        let mut out = Vec::new();
        // 54098214 is the total that gives the original's 80.51% for the first row.
        write_sites(
            &mut out,
            SitesOrder::LiveBytes,
            "Sun Nov 22 09:10:34 2026",
            &rows,
            54_098_214,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "SITES BEGIN (ordered by live bytes) Sun Nov 22 09:10:34 2026"
        );
        assert_eq!(
            lines[1],
            "          percent          live          alloc'ed  stack class"
        );
        assert_eq!(
            lines[2],
            " rank   self  accum     bytes objs     bytes  objs trace name"
        );
        assert_eq!(
            lines[3],
            "    1 80.51% 80.51%  43554328 206421  63296416 300000 300167 byte[]"
        );
        assert_eq!(
            lines[4],
            "    2  0.13% 80.64%     68416 2138     68416  2138 300041 java.util.HashMap$Node"
        );
        assert_eq!(lines[5], "SITES END");
    }

    #[test]
    fn cutoff_stops_at_the_first_small_site() {
        let row = |bytes, trace| SiteRow {
            live_bytes: bytes,
            live_objects: 1,
            allocated_bytes: bytes,
            allocated_objects: 1,
            trace,
            class: "X",
        };
        let mut rows = vec![row(1, 3), row(10_000, 1), row(5, 2)];
        assert_eq!(sort_sites(&mut rows, SitesOrder::LiveBytes, 0.0001), 2);
        assert_eq!(rows[0].trace, 1);
        assert_eq!(sort_sites(&mut rows, SitesOrder::AllocatedBytes, 0.0), 3);
    }
}
