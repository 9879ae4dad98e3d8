//! Owns what heap=sites writes: the sites and their totals for ALLOC SITES (dumps and the
//! front-end's command) and HEAP SUMMARY, incremental listings and the cutoff.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use super::HeapSites;
use crate::engine::Context;
use crate::jvmti::Jni;
use crate::output::{ProfileOutput, Site, SiteTotals};

/// ALLOC SITES flags (the front-end's command and the binary record).
const INCREMENTAL: u16 = 0x1;
/// Order by allocated bytes instead of live bytes.
const BY_ALLOCATION: u16 = 0x2;
/// Collect garbage first.
pub(super) const FORCE_GC: u16 = 0x4;

impl HeapSites {
    /// Every site with its counts now (the fast mode's as of the last count; the sampled
    /// estimates if the fast mode could not start).
    fn snapshot(&self) -> Vec<Site> {
        if self.fast.is_some() && !self.fast_failed.load(Ordering::Acquire) {
            return self
                .fast_sites
                .lock()
                .map(|s| s.clone())
                .unwrap_or_default();
        }
        self.sampled_snapshot()
    }

    /// Every site of the event-fed table (every allocation, or the sampled ones, weighted).
    pub(super) fn sampled_snapshot(&self) -> Vec<Site> {
        let Ok(table) = self.table.lock() else {
            return Vec::new();
        };
        table
            .infos
            .iter()
            .enumerate()
            .filter_map(|(index, info)| {
                let c = self.counters(index as u32)?;
                Some(Site {
                    array_type: array_type(&info.class.name),
                    class: info.class.clone(),
                    trace: info.trace.clone(),
                    live_bytes: c.live_bytes.load(Ordering::Relaxed),
                    live_objects: c.live_objects.load(Ordering::Relaxed),
                    allocated_bytes: c.allocated_bytes.load(Ordering::Relaxed),
                    allocated_objects: c.allocated_objects.load(Ordering::Relaxed),
                })
            })
            .collect()
    }

    /// Totals over every site (live counts brought up to date, without a GC).
    pub(super) fn totals(&self, ctx: &Context, jni: Option<Jni>) -> SiteTotals {
        self.settle_live_counts(ctx.jvmti, jni, false);
        let sites = self.snapshot();
        SiteTotals {
            live_bytes: sites.iter().map(|s| s.live_bytes).sum(),
            live_objects: sites.iter().map(|s| s.live_objects).sum(),
            allocated_bytes: sites.iter().map(|s| s.allocated_bytes).sum(),
            allocated_objects: sites.iter().map(|s| s.allocated_objects).sum(),
        }
    }

    /// Writes the sites: by live bytes, or by allocated bytes with [`BY_ALLOCATION`]; only
    /// those that allocated since the last listing with [`INCREMENTAL`]; cut off at `cutoff` of
    /// the ordering column's total. The caller settled the live counts first (after a full GC
    /// for [`FORCE_GC`], which the flags then report) without the output's lock.
    pub(super) fn write_sites(&self, out: &mut ProfileOutput, flags: u16, cutoff: f64) {
        let mut sites = self.snapshot();
        let totals = SiteTotals {
            live_bytes: sites.iter().map(|s| s.live_bytes).sum(),
            live_objects: sites.iter().map(|s| s.live_objects).sum(),
            allocated_bytes: sites.iter().map(|s| s.allocated_bytes).sum(),
            allocated_objects: sites.iter().map(|s| s.allocated_objects).sum(),
        };
        if let Ok(mut last) = self.last_listed.lock() {
            let previous = std::mem::take(&mut *last);
            *last = sites
                .iter()
                .map(|s| (s.class.object_id, s.trace.serial, s.allocated_objects))
                .collect();
            if flags & INCREMENTAL != 0 {
                let seen: HashMap<(u64, u32), u64> =
                    previous.into_iter().map(|(c, t, n)| ((c, t), n)).collect();
                sites.retain(|s| {
                    seen.get(&(s.class.object_id, s.trace.serial)) != Some(&s.allocated_objects)
                });
            }
        }
        let by_allocation = flags & BY_ALLOCATION != 0;
        let key = |s: &Site| {
            if by_allocation {
                s.allocated_bytes
            } else {
                s.live_bytes
            }
        };
        let total = if by_allocation {
            totals.allocated_bytes
        } else {
            totals.live_bytes
        };
        sites.sort_by(|a, b| {
            key(b)
                .cmp(&key(a))
                .then(b.allocated_bytes.cmp(&a.allocated_bytes))
                .then(a.trace.serial.cmp(&b.trace.serial))
                .then_with(|| a.class.name.cmp(&b.class.name))
        });
        // With nothing in the ordering column the cutoff cannot apply and every site is
        // listed (as the original's 0/0 ratio did).
        let shown = sites
            .iter()
            .position(|s| total > 0 && (key(s) as f64 / total as f64) < cutoff)
            .unwrap_or(sites.len());
        sites.truncate(shown);
        out.write(|w| w.sites(&sites, &totals, cutoff, flags));
    }
}

/// The element type code of an array class name (`int[]` → 10, `String[]` → 2), 0 otherwise.
pub(super) fn array_type(name: &str) -> u8 {
    let Some(element) = name.strip_suffix("[]") else {
        return 0;
    };
    match element {
        "boolean" => 4,
        "char" => 5,
        "float" => 6,
        "double" => 7,
        "byte" => 8,
        "short" => 9,
        "int" => 10,
        "long" => 11,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_types_follow_the_binary_format() {
        assert_eq!(array_type("java.lang.String"), 0);
        assert_eq!(array_type("int[]"), 10);
        assert_eq!(array_type("byte[]"), 8);
        assert_eq!(array_type("java.lang.String[]"), 2);
        assert_eq!(array_type("int[][]"), 2);
    }
}
