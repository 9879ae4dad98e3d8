//! Owns the fast mode's listing: each bytecode site's exact counts (from [`super::alloc_counts`])
//! shared among the traces sampled at it, the VM's and the unseen natives' allocations added,
//! and each class's live objects shared among its sites.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use super::HeapSites;
use super::alloc_counts::{AllocCounts, display_name};
use super::estimate::{Pooled, apportion, jvmti_variance, reconcile};
use super::report::array_type;
use crate::engine::Context;
use crate::jvmti::Jni;
use crate::output::Site;

impl HeapSites {
    /// The fast mode's sites: each bytecode site's exact counts, shared among the full
    /// traces sampled at it in proportion to their sampled bytes (a site no sample saw keeps
    /// a one-frame trace), with live counts estimated as the exact count times the sampled
    /// objects' live fraction; and the VM's allocations (VMObjectAlloc), exact by (class,
    /// trace), with the same live estimate.
    pub(super) fn compose_fast(&self, ctx: &Context, jni: Jni, fast: &AllocCounts) -> Vec<Site> {
        crate::progress::step("composing the sites", None, 0);
        let sampled = self.sampled_snapshot();
        let lineno = ctx.options.lineno;
        type Key = (String, String, String, String, i32);
        let key_of = |s: &Site| -> Option<Key> {
            let top = s.trace.frames.first()?;
            Some((
                s.class.name.clone(),
                top.method.class.name.clone(),
                top.method.name.clone(),
                top.method.signature.clone(),
                if lineno { top.line } else { -1 },
            ))
        };
        let mut groups: HashMap<Key, Vec<&Site>> = HashMap::new();
        let mut sizes: HashMap<String, u64> = HashMap::new();
        let mut by_site: HashMap<(u64, u32), &Site> = HashMap::new();
        for s in &sampled {
            if let Some(k) = key_of(s) {
                groups.entry(k).or_default().push(s);
            }
            if s.array_type == 0 && s.allocated_objects > 0 {
                sizes.insert(
                    s.class.name.clone(),
                    s.allocated_bytes / s.allocated_objects,
                );
            }
            by_site.insert((s.class.object_id, s.trace.serial), s);
        }
        let exact = fast.exact(ctx.jvmti, jni, |sig| sizes.get(&display_name(sig)).copied());
        let mut classes: Option<HashMap<String, crate::jvmti::jclass>> = None;
        let mut out: HashMap<(u64, u32), Site> = HashMap::new();
        // Sites whose live estimate comes from samples of their own, with the variances of
        // their (objects, bytes) estimates.
        let mut estimated: HashMap<(u64, u32), (f64, f64)> = HashMap::new();
        let mut add = |site: Site, variance: Option<(f64, f64)>| {
            if let Some((vo, vb)) = variance {
                let e = estimated
                    .entry((site.class.object_id, site.trace.serial))
                    .or_default();
                e.0 += vo;
                e.1 += vb;
            }
            let e = out
                .entry((site.class.object_id, site.trace.serial))
                .or_insert_with(|| Site {
                    live_bytes: 0,
                    live_objects: 0,
                    allocated_bytes: 0,
                    allocated_objects: 0,
                    ..site.clone()
                });
            e.live_bytes += site.live_bytes;
            e.live_objects += site.live_objects;
            e.allocated_bytes += site.allocated_bytes;
            e.allocated_objects += site.allocated_objects;
        };
        let live_share = |n: u64, live: u64, sampled: u64| -> u64 {
            if sampled == 0 {
                0
            } else {
                ((u128::from(n) * u128::from(live.min(sampled)) + u128::from(sampled) / 2)
                    / u128::from(sampled)) as u64
            }
        };
        for e in &exact {
            let key: Key = (
                display_name(&e.signature),
                display_name(&format!("L{};", e.class)),
                e.method.clone(),
                e.descriptor.clone(),
                if lineno { e.line } else { -1 },
            );
            // Each trace's live estimate: its share of the site's exact counts times the live
            // fraction of the objects sampled with that trace (traces of one site can keep
            // different shares: a helper called from two places), with its variance.
            let pooled = groups.get(&key).map(|m| Pooled::of(m, self.interval));
            let live = |n: u64, b: u64| pooled.map_or((0, 0), |p| p.live(n, b));
            let variance = |n: u64, b: u64| pooled.map(|p| p.variance(n, b));
            match groups.get(&key) {
                Some(matches) if !matches.is_empty() => {
                    let weights: Vec<u64> =
                        matches.iter().map(|s| s.allocated_bytes.max(1)).collect();
                    let objects = apportion(e.objects, &weights);
                    let bytes = apportion(e.bytes, &weights);
                    for ((s, n), b) in matches.iter().zip(objects).zip(bytes) {
                        let own = Pooled::of(&[s], self.interval);
                        let (live_objects, live_bytes) = own.live(n, b);
                        let variance = |n: u64, b: u64| Some(own.variance(n, b));
                        add(
                            Site {
                                class: s.class.clone(),
                                trace: s.trace.clone(),
                                array_type: s.array_type,
                                live_objects,
                                live_bytes,
                                allocated_objects: n,
                                allocated_bytes: b,
                            },
                            variance(n, b),
                        );
                    }
                }
                _ => {
                    let classes =
                        classes.get_or_insert_with(|| AllocCounts::classes_by_signature(ctx.jvmti));
                    if let Some((class, trace)) = fast.site_of(ctx, jni, e, classes) {
                        let (live_objects, live_bytes) = live(e.objects, e.bytes);
                        add(
                            Site {
                                array_type: array_type(&class.name),
                                class,
                                trace,
                                live_objects,
                                live_bytes,
                                allocated_objects: e.objects,
                                allocated_bytes: e.bytes,
                            },
                            variance(e.objects, e.bytes),
                        );
                    } else {
                        self.dropped.fetch_add(e.objects, Ordering::Relaxed);
                    }
                }
            }
        }
        // A lambda's object may also reach VMObjectAlloc (Unsafe.allocateInstance, on some
        // JDKs): its call site counted it already.
        let lambdas: std::collections::HashSet<String> = exact
            .iter()
            .filter(|e| e.signature.contains("$$Lambda"))
            .map(|e| display_name(&e.signature))
            .collect();
        let vm_sites = fast.vm_sites();
        let vm_keys: std::collections::HashSet<(u64, u32)> = vm_sites
            .iter()
            .map(|(c, t, _, _)| (c.object_id, t.serial))
            .collect();
        // What neither bytecode nor VMObjectAlloc sees is estimated from the samples whose
        // allocating frame is a native method (JNI's NewObject and AllocObject, for which
        // HotSpot posts no VMObjectAlloc) or in a hidden class (no class file load hook
        // shows it, and it can't be retransformed).
        for s in &sampled {
            // The natives whose calls from bytecode are counted (AllocCounts::exact) are not
            // estimated again; natives otherwise (JNI's) and hidden classes are.
            let unseen = s.trace.frames.first().is_some_and(|f| {
                (f.method.native
                    && !super::alloc_counts::counted_native(
                        &f.method.class.name,
                        &f.method.name,
                        &f.method.signature,
                    ))
                    || is_hidden_class(&f.method.class.name)
            });
            if unseen
                && !vm_keys.contains(&(s.class.object_id, s.trace.serial))
                && !lambdas.contains(&s.class.name)
            {
                let v = jvmti_variance(s, self.interval, s.allocated_objects, s.allocated_bytes);
                add(s.clone(), Some(v));
            }
        }
        for (class, trace, n, b) in vm_sites {
            if lambdas.contains(&class.name) {
                continue;
            }
            let s = by_site.get(&(class.object_id, trace.serial));
            add(
                Site {
                    array_type: array_type(&class.name),
                    live_objects: s
                        .map_or(0, |s| live_share(n, s.live_objects, s.allocated_objects)),
                    live_bytes: s.map_or(0, |s| live_share(b, s.live_bytes, s.allocated_bytes)),
                    class,
                    trace,
                    allocated_objects: n,
                    allocated_bytes: b,
                },
                s.map(|s| jvmti_variance(s, self.interval, n, b)),
            );
        }
        if let Some(classes) = classes {
            for class in classes.into_values() {
                jni.delete_local_ref(class);
            }
        }
        let mut sites: Vec<Site> = out.into_values().collect();
        self.share_live_by_class(&mut sites, &estimated);
        sites
    }

    /// Reconciles the sites' live estimates with each class's live objects and bytes,
    /// counted by the walk of [`HeapSites::settle_live_counts`] (what the heap held when
    /// counting began passed over): see [`reconcile`]. A class allocated at one site gets its
    /// exact live count; no site gets more live than it allocated.
    fn share_live_by_class(&self, sites: &mut [Site], estimated: &HashMap<(u64, u32), (f64, f64)>) {
        let mut by_class: HashMap<u64, Vec<usize>> = HashMap::new();
        for (i, s) in sites.iter().enumerate() {
            by_class.entry(s.class.object_id).or_default().push(i);
        }
        // Each class's live objects, counted by the walk of `settle_live_counts`.
        let Ok(live) = self.class_live.lock() else {
            return;
        };
        for (class, members) in by_class {
            let (objects, bytes) = live.get(&class).copied().unwrap_or((0, 0));
            let array = sites[members[0]].array_type != 0;
            if let [only] = members[..] {
                // One site: the class's live objects are its (those of allocations no counter
                // saw aside, which the cap bounds).
                let s = &mut sites[only];
                s.live_objects = objects.min(s.allocated_objects);
                s.live_bytes = bytes.min(s.allocated_bytes);
            } else {
                let variance: Vec<Option<(f64, f64)>> = members
                    .iter()
                    .map(|&i| {
                        estimated
                            .get(&(sites[i].class.object_id, sites[i].trace.serial))
                            .copied()
                    })
                    .collect();
                let estimates = |estimate: &dyn Fn(&Site) -> u64,
                                 allocated: &dyn Fn(&Site) -> u64,
                                 var: &dyn Fn((f64, f64)) -> f64|
                 -> Vec<(u64, f64, u64)> {
                    members
                        .iter()
                        .zip(&variance)
                        .map(|(&i, v)| {
                            let s = &sites[i];
                            match v {
                                Some(v) => (estimate(s), var(*v), allocated(s)),
                                None => (0, f64::INFINITY, allocated(s)),
                            }
                        })
                        .collect()
                };
                if array {
                    // Arrays: their bytes (what SITES ranks by) reconciled, and their objects
                    // following at each site's mean size.
                    let live_bytes = reconcile(
                        bytes,
                        &estimates(&|s| s.live_bytes, &|s| s.allocated_bytes, &|v| v.1),
                    );
                    for (&i, b) in members.iter().zip(live_bytes) {
                        let s = &mut sites[i];
                        s.live_bytes = b;
                        s.live_objects = if s.allocated_bytes == 0 {
                            0
                        } else {
                            (((u128::from(b) * u128::from(s.allocated_objects)
                                + u128::from(s.allocated_bytes) / 2)
                                / u128::from(s.allocated_bytes))
                                as u64)
                                .min(s.allocated_objects)
                        };
                    }
                } else {
                    let live_objects = reconcile(
                        objects,
                        &estimates(&|s| s.live_objects, &|s| s.allocated_objects, &|v| v.0),
                    );
                    for (&i, o) in members.iter().zip(live_objects) {
                        sites[i].live_objects = o;
                    }
                }
            }
            if !array {
                // An instance's bytes follow its objects at the class's size.
                for &i in &members {
                    let s = &mut sites[i];
                    s.live_bytes = if s.allocated_objects == 0 {
                        0
                    } else {
                        ((u128::from(s.live_objects) * u128::from(s.allocated_bytes))
                            / u128::from(s.allocated_objects)) as u64
                    };
                }
            }
        }
    }
}

/// Whether a class name (`java.lang.invoke.LambdaForm$MH.0x0000000800c01000` on JDK 15+,
/// `…$MH/0x0000000800c01000` on JDK 11's anonymous classes) is a hidden class's.
fn is_hidden_class(name: &str) -> bool {
    name.rsplit(['.', '/'])
        .next()
        .is_some_and(|last| last.starts_with("0x") && last.len() > 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_class_names_are_told_apart() {
        assert!(is_hidden_class(
            "java.lang.invoke.LambdaForm$MH.0x0000000800c01000"
        ));
        assert!(is_hidden_class("Foo$$Lambda$14/0x0000000800066840"));
        assert!(!is_hidden_class("java.lang.String"));
        assert!(!is_hidden_class("Foo$0x"));
    }
}
