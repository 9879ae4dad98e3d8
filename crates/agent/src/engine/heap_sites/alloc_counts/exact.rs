//! Owns the reading of the fast mode's counters: every thread's counts summed by slot, merged
//! into exact sites (allocated class, method, line) with their bytes, lambda sites matched to
//! their hidden classes, and one-frame traces for the sites no sample saw.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use hprof_classfile::{ALLOCATING_INTRINSICS, AllocKind, CHUNK};

use super::{AllocCounts, Def, SiteKey, as_agent, signature_of, text};
use crate::engine::Context;
use crate::jvmti::{Jni, Jvmti, jclass, jmethodID, jobject};
use crate::trace_store::{ClassInfo, Trace, class_name_from_signature};

/// Counts of one (allocated class, allocating method, line), exact.
#[derive(Debug, Clone)]
pub struct ExactSite {
    /// The allocated class's JVM signature (`Ljava/lang/String;`, `[I`).
    pub signature: String,
    /// The allocating method's class (internal name), name, descriptor and line.
    pub class: String,
    /// Method name.
    pub method: String,
    /// Method descriptor.
    pub descriptor: String,
    /// Source line, -1 if unknown.
    pub line: i32,
    /// Objects allocated.
    pub objects: u64,
    /// Bytes allocated.
    pub bytes: u64,
}

/// A loaded lambda class, as [`AllocCounts::find_lambda_classes`] matches it to sites.
pub(super) struct LambdaClass {
    /// Internal name (`C$$Lambda$14/0x…`).
    name: String,
    /// Signatures of the interfaces it implements.
    interfaces: Vec<String>,
    /// Descriptors of its constructors.
    constructors: Vec<String>,
    /// The methods (class, name, descriptor) its constant pool refers to, if JVMTI gave the
    /// pool.
    calls: Option<std::collections::HashSet<(String, String, String)>>,
}

impl AllocCounts {
    /// Every slot's count now: the ended threads' and each live thread's.
    pub(super) fn totals(&self, jvmti: Jvmti, jni: Jni) -> Vec<u64> {
        let Some(&field) = self.field.get() else {
            return Vec::new();
        };
        let threads = jvmti.all_threads().unwrap_or_default();
        let Ok(folded) = self.folded.lock() else {
            return Vec::new();
        };
        let mut totals = folded.clone();
        for &thread in &threads {
            jni.with_local_frame(4, || {
                let array = jni.object_field(thread, field);
                if !array.is_null() {
                    add_array(jni, array, &mut totals);
                }
            });
        }
        drop(folded);
        for thread in threads {
            jni.delete_local_ref(thread);
        }
        totals
    }

    /// The exact counts of every site that allocated, merged by (allocated class, method,
    /// line). `sampled_size` gives an instance size a sample saw, else the agent measures it.
    pub fn exact(
        &self,
        jvmti: Jvmti,
        jni: Jni,
        sampled_size: impl Fn(&str) -> Option<u64>,
    ) -> Vec<ExactSite> {
        let totals = self.totals(jvmti, jni);
        let at = |slot: u32| totals.get(slot as usize).copied().unwrap_or(0);
        let defs: Vec<Def> = match self.defs.lock() {
            Ok(d) => d.defs.clone(),
            Err(_) => return Vec::new(),
        };
        self.find_lambda_classes(jvmti, jni, &defs, &at);
        let lambda_classes = self
            .lambda_classes
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default();
        let mut merged: HashMap<SiteKey, (u64, u64)> = HashMap::new();
        let mut to_size: Vec<String> = Vec::new();
        for d in &defs {
            let mut add = |allocated: &str, objects: u64, bytes: u64| {
                if objects == 0 {
                    return;
                }
                let e = merged
                    .entry((
                        signature_of(allocated),
                        d.class.clone(),
                        d.method.clone(),
                        d.descriptor.clone(),
                        d.line,
                    ))
                    .or_default();
                e.0 += objects;
                e.1 += bytes;
            };
            match d.kind {
                AllocKind::Instance => {
                    let n = at(d.slot);
                    if n > 0 {
                        to_size.push(signature_of(&d.allocated));
                    }
                    add(&d.allocated, n, 0);
                }
                AllocKind::Lambda => {
                    let n = at(d.slot);
                    if let Some(class) = lambda_classes.get(&d.slot).filter(|_| n > 0) {
                        to_size.push(signature_of(class));
                        add(class, n, 0);
                    }
                }
                AllocKind::Array(_) => add(&d.allocated, at(d.slot), at(d.slot + 1)),
                AllocKind::Native(_) | AllocKind::Intrinsic(_) => {}
                AllocKind::Multi { dims, .. } => {
                    for level in 0..u32::from(dims) {
                        let allocated = d.allocated.get(level as usize..).unwrap_or("");
                        add(
                            allocated,
                            at(d.slot + 2 * level),
                            at(d.slot + 2 * level + 1),
                        );
                    }
                }
            }
        }
        // What the allocating intrinsics returned where compiled code made it, under the
        // allocating instruction of their bytecode (where the bytecode counts what it makes
        // when it runs): one site whether the caller was compiled or not.
        for d in &defs {
            let AllocKind::Intrinsic(k) = d.kind else {
                continue;
            };
            let Some(intrinsic) = ALLOCATING_INTRINSICS.get(usize::from(k)) else {
                continue;
            };
            let (class, method, descriptor) = intrinsic.site;
            for (j, array) in intrinsic.arrays.iter().enumerate() {
                let (objects, bytes) = (at(d.slot + 2 * j as u32), at(d.slot + 2 * j as u32 + 1));
                if objects == 0 {
                    continue;
                }
                // The line of that instruction, from the bytecode's own site.
                let line = defs
                    .iter()
                    .find(|s| {
                        matches!(s.kind, AllocKind::Array(_))
                            && s.allocated == *array
                            && s.class == class
                            && s.method == method
                            && s.descriptor == descriptor
                    })
                    .map_or(-1, |s| s.line);
                let e = merged
                    .entry((
                        array.to_string(),
                        class.to_string(),
                        method.to_string(),
                        descriptor.to_string(),
                        line,
                    ))
                    .or_default();
                e.0 += objects;
                e.1 += bytes;
            }
        }
        // What the natives made where bytecode called them, under the native method (the
        // allocating frame of the same objects when VMObjectAlloc reports them). A capturing
        // lambda's object (`Unsafe.allocateInstance` of a method handle) was counted at its
        // call site: the lambda classes of a class whose lambda sites counted are left out
        // (even one a site could not name, whose objects went to another lambda class of
        // the same class; a non-capturing lambda's one object is left out with them).
        let lambda_prefixes: Vec<String> = defs
            .iter()
            .filter(|d| d.kind == AllocKind::Lambda && at(d.slot) > 0)
            .map(|d| format!("L{}$$Lambda", d.class))
            .collect();
        let natives = self.natives.lock().map(|n| n.clone()).unwrap_or_default();
        for n in natives {
            let (objects, bytes) = (
                n.objects.load(Ordering::Relaxed),
                n.bytes.load(Ordering::Relaxed),
            );
            if objects == 0 || lambda_prefixes.iter().any(|p| n.signature.starts_with(p)) {
                continue;
            }
            let (class, method, descriptor) = n.kind.method();
            if !n.signature.starts_with('[') {
                to_size.push(n.signature.clone());
            }
            let e = merged
                .entry((
                    n.signature.clone(),
                    class.to_string(),
                    method.to_string(),
                    descriptor.to_string(),
                    -1,
                ))
                .or_default();
            e.0 += objects;
            e.1 += bytes;
        }
        self.size_instances(jvmti, jni, &to_size, &sampled_size);
        let sizes = self.sizes.lock().map(|s| s.clone()).unwrap_or_default();
        merged
            .into_iter()
            .map(
                |((signature, class, method, descriptor, line), (objects, bytes))| {
                    let bytes = if signature.starts_with('[') {
                        bytes
                    } else {
                        objects * sizes.get(&signature).copied().unwrap_or(0)
                    };
                    ExactSite {
                        signature,
                        class,
                        method,
                        descriptor,
                        line,
                        objects,
                        bytes,
                    }
                },
            )
            .collect()
    }

    /// Finds the hidden class of each lambda site that allocated and has none yet: a loaded
    /// class named after the site's class (`C$$Lambda…`) that implements the site's
    /// interface with a constructor taking the captured values, and whose constant pool
    /// refers to the site's implementation method (javac's `lambda$m$0`, one per lambda
    /// expression; a method reference's target): each lambda expression names its own class.
    /// Where no class refers to it (the JVM calls a few targets through a method handle, or
    /// the pool can't be read), the first class that fits otherwise and calls no other
    /// site's implementation is taken; two method references to one method with the same
    /// interface and captured types name the same class (their counts stay separate).
    fn find_lambda_classes(&self, jvmti: Jvmti, jni: Jni, defs: &[Def], at: &dyn Fn(u32) -> u64) {
        let Ok(mut found) = self.lambda_classes.lock() else {
            return;
        };
        let wanted: Vec<&Def> = defs
            .iter()
            .filter(|d| {
                d.kind == AllocKind::Lambda && at(d.slot) > 0 && !found.contains_key(&d.slot)
            })
            .collect();
        if wanted.is_empty() {
            return;
        }
        let Ok(classes) = jvmti.loaded_classes() else {
            return;
        };
        // The lambda classes of the wanted sites' classes: name, interfaces, constructors'
        // descriptors and constant pool.
        let mut candidates: Vec<LambdaClass> = Vec::new();
        for class in classes {
            let sig = jvmti.class_signature(class).unwrap_or_default();
            if wanted
                .iter()
                .any(|d| sig.starts_with(&format!("L{}$$Lambda", d.class)))
            {
                let interfaces = jvmti
                    .interfaces(class)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|i| {
                        let s = jvmti.class_signature(i).unwrap_or_default();
                        jni.delete_local_ref(i);
                        s
                    })
                    .collect();
                let constructors = jvmti
                    .class_methods(class)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|m| jvmti.method_name(m).ok())
                    .filter(|(n, _)| n == "<init>")
                    .map(|(_, d)| d)
                    .collect();
                // The class's name as an internal name (its signature without L;).
                let name = sig
                    .strip_prefix('L')
                    .and_then(|s| s.strip_suffix(';'))
                    .unwrap_or(&sig)
                    .to_string();
                candidates.push(LambdaClass {
                    name,
                    interfaces,
                    constructors,
                    calls: jvmti.constant_pool(class).ok().and_then(|(count, bytes)| {
                        let pool = hprof_classfile::pool::Pool::parse(&bytes, count).ok()?;
                        Some(
                            pool.method_refs()
                                .into_iter()
                                .map(|(c, n, d)| (text(c), text(n), text(d)))
                                .collect(),
                        )
                    }),
                });
            }
            jni.delete_local_ref(class);
        }
        // The implementation methods of every lambda site: a class whose pool calls one of
        // them belongs to that site.
        let implementations: Vec<(&u32, &(String, String, String))> = defs
            .iter()
            .filter(|d| d.kind == AllocKind::Lambda && !d.implementation.1.is_empty())
            .map(|d| (&d.slot, &d.implementation))
            .collect();
        for d in wanted {
            let factory = &d.lambda.1;
            let params = factory.find(')').map_or("", |close| &factory[1..close]);
            let constructor = format!("({params})V");
            let fits = |c: &&LambdaClass| {
                c.name.starts_with(&format!("{}$$Lambda", d.class))
                    && c.interfaces.contains(&signature_of(&d.allocated))
                    && c.constructors.contains(&constructor)
            };
            let calls = |c: &LambdaClass, method: &(String, String, String)| {
                c.calls.as_ref().is_some_and(|calls| calls.contains(method))
            };
            // A class that calls another site's implementation (and not this one's) is
            // that site's.
            let others = |c: &LambdaClass| {
                implementations
                    .iter()
                    .any(|&(slot, m)| *slot != d.slot && m != &d.implementation && calls(c, m))
            };
            let chosen = candidates
                .iter()
                .filter(fits)
                .find(|c| !d.implementation.1.is_empty() && calls(c, &d.implementation))
                .or_else(|| candidates.iter().filter(fits).find(|c| !others(c)));
            if let Some(c) = chosen {
                found.insert(d.slot, c.name.clone());
            }
        }
    }

    /// Measures the instance size of each class in `signatures` not measured yet: from a
    /// sampled object's size if one was seen, else from an object the agent allocates
    /// (JNI AllocObject, no constructor run; the class is initialised already, since the
    /// program allocated one).
    fn size_instances(
        &self,
        jvmti: Jvmti,
        jni: Jni,
        signatures: &[String],
        sampled_size: &impl Fn(&str) -> Option<u64>,
    ) {
        // The lock is not held across the JNI and JVMTI calls below: AllocObject can wait
        // for a collection.
        let mut missing: Vec<&String> = Vec::new();
        {
            let Ok(mut sizes) = self.sizes.lock() else {
                return;
            };
            for s in signatures {
                if sizes.contains_key(s) {
                    continue;
                }
                match sampled_size(s) {
                    Some(size) => {
                        sizes.insert(s.clone(), size);
                    }
                    None => missing.push(s),
                }
            }
        }
        if missing.is_empty() {
            return;
        }
        let Ok(classes) = jvmti.loaded_classes() else {
            return;
        };
        let mut measured: Vec<(String, u64)> = Vec::new();
        for class in classes {
            if let Ok(sig) = jvmti.class_signature(class)
                && missing.iter().any(|m| **m == sig)
                && !measured.iter().any(|(m, _)| *m == sig)
            {
                let size = as_agent(|| {
                    let object = jni.alloc_object(class)?;
                    let size = jvmti.object_size(object).ok();
                    jni.delete_local_ref(object);
                    size
                });
                if let Some(size) = size {
                    measured.push((sig, size.max(0) as u64));
                }
            }
            jni.delete_local_ref(class);
        }
        if let Ok(mut sizes) = self.sizes.lock() {
            sizes.extend(measured);
        }
    }

    /// A one-frame trace at (class, method, descriptor, line) and the allocated class's
    /// info, for a site no sample saw.
    pub fn site_of(
        &self,
        ctx: &Context,
        jni: Jni,
        site: &ExactSite,
        classes: &HashMap<String, jclass>,
    ) -> Option<(Arc<ClassInfo>, Arc<Trace>)> {
        let jvmti = ctx.jvmti;
        let allocated = *classes.get(&site.signature)?;
        let holder = *classes.get(&signature_of(&site.class))?;
        let key = (
            site.class.clone(),
            site.method.clone(),
            site.descriptor.clone(),
        );
        let method = {
            let mut methods = self.methods.lock().ok()?;
            match methods.get(&key) {
                Some(&m) => m as jmethodID,
                None => {
                    let found = jvmti.class_methods(holder).ok()?.into_iter().find(|&m| {
                        jvmti
                            .method_name(m)
                            .is_ok_and(|(n, d)| n == site.method && d == site.descriptor)
                    })?;
                    methods.insert(key, found as usize);
                    found
                }
            }
        };
        let location = jvmti
            .line_numbers(method)
            .ok()
            .and_then(|lines| {
                lines
                    .iter()
                    .filter(|&&(_, l)| l == site.line)
                    .map(|&(at, _)| at)
                    .min()
            })
            .unwrap_or(0);
        let frames = if ctx.depth() == 0 {
            Vec::new()
        } else {
            vec![(method, location)]
        };
        let mut traces = ctx.traces.lock().ok()?;
        let trace = traces.intern(jvmti, jni, &ctx.ids, &frames, 0)?;
        let id = ctx.ids.of(jvmti, allocated);
        let class = traces.class_info_with_id(jvmti, id, allocated);
        Some((class, trace))
    }

    /// Loaded classes by signature (local references the caller deletes).
    pub fn classes_by_signature(jvmti: Jvmti) -> HashMap<String, jclass> {
        let mut map = HashMap::new();
        for class in jvmti.loaded_classes().unwrap_or_default() {
            if let Ok(sig) = jvmti.class_signature(class) {
                map.entry(sig).or_insert(class);
            }
        }
        map
    }
}

/// Adds a thread's counts (a `long[][]` of chunks of [`CHUNK`] slots, null where the thread
/// never counted) into `totals` (by slot).
pub(super) fn add_array(jni: Jni, chunks: jobject, totals: &mut Vec<u64>) {
    let n = jni.array_length(chunks).max(0) as usize;
    let mut buf = vec![0i64; CHUNK];
    for c in 0..n {
        let chunk = jni.object_array_element(chunks, c as i32);
        if chunk.is_null() {
            continue;
        }
        let len = (jni.array_length(chunk).max(0) as usize).min(CHUNK);
        let ok = jni.get_longs(chunk, 0, &mut buf[..len]);
        jni.delete_local_ref(chunk);
        if !ok {
            continue;
        }
        let at = c * CHUNK;
        if totals.len() < at + len {
            totals.resize(at + len, 0);
        }
        for (t, v) in totals[at..at + len].iter_mut().zip(&buf[..len]) {
            *t = t.wrapping_add(*v as u64);
        }
    }
}

/// The allocated class name of a signature, as sites print it.
pub fn display_name(signature: &str) -> String {
    class_name_from_signature(signature)
}
