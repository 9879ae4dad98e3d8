//! cpu=times' method registry: the numbers the rewriter gives methods (one per class, name
//! and descriptor, from 1), their names, and the jmethodID of each, found as classes are
//! prepared ([`CpuTimes::resolve_class`]) or, for the classes loaded before the start, once
//! after the start's retransformation ([`CpuTimes::resolve_loaded`]).

use std::sync::atomic::Ordering;

use rustc_hash::FxHashMap;

use crate::jvmti::{Jni, Jvmti, jclass, jmethodID};

use super::CpuTimes;

/// A method the rewriter numbered.
#[derive(Debug, Clone)]
struct MethodName {
    class: String,
    name: String,
    signature: String,
}

/// (class name, method name, descriptor), as the class file spells them.
type MethodKey = (Box<[u8]>, Box<[u8]>, Box<[u8]>);

/// Method numbers: one per [`MethodKey`], from 1.
#[derive(Debug, Default)]
pub(super) struct Methods {
    ids: FxHashMap<MethodKey, u32>,
    names: Vec<MethodName>,
    /// Each number's jmethodID (0: not yet found; see [`CpuTimes::resolve_class`]).
    pub(super) resolved: Vec<usize>,
    /// The classes (as the class file names them) with numbered methods.
    classes: rustc_hash::FxHashSet<Box<[u8]>>,
}

impl CpuTimes {
    /// The number of method `name` `descriptor` of `class`, given now if it has none yet
    /// (`None`: no number is left).
    pub(super) fn method_id(&self, class: &[u8], name: &[u8], descriptor: &[u8]) -> Option<u32> {
        let mut methods = self.methods.lock().ok()?;
        let key = (Box::from(class), Box::from(name), Box::from(descriptor));
        if let Some(&id) = methods.ids.get(&key) {
            return Some(id);
        }
        if methods.names.len() >= i32::MAX as usize - 1 {
            return None;
        }
        methods.names.push(MethodName {
            class: String::from_utf8_lossy(class).into_owned(),
            name: String::from_utf8_lossy(name).into_owned(),
            signature: String::from_utf8_lossy(descriptor).into_owned(),
        });
        methods.resolved.push(0);
        if !methods.classes.contains(class) {
            methods.classes.insert(Box::from(class));
        }
        let id = methods.names.len() as u32;
        methods.ids.insert(key, id);
        Some(id)
    }

    /// Finds the jmethodIDs of `class`'s numbered methods, by name. Called where the class is
    /// known to be alive and its methods current: at its ClassPrepare, on the thread preparing
    /// it, and for the classes loaded before the engine started, once, right after the start's
    /// retransformation. A dump only reads what was found (it used to search every loaded
    /// class by name, and on JDK 11 a method id from that search could point to a freed
    /// method: issue 26). The newest class of a name wins: an older one of another loader may
    /// be unloaded, its ids then invalid (and reported as such by the JVM, not a crash).
    pub(super) fn resolve_class(&self, jvmti: Jvmti, class: jclass) {
        let started = std::time::Instant::now();
        self.find_ids(jvmti, class);
        self.resolve_ns
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    fn find_ids(&self, jvmti: Jvmti, class: jclass) {
        let Ok(signature) = jvmti.class_signature(class) else {
            return;
        };
        let Some(name) = signature
            .strip_prefix('L')
            .and_then(|s| s.strip_suffix(';'))
        else {
            return;
        };
        let known = self
            .methods
            .lock()
            .is_ok_and(|methods| methods.classes.contains(name.as_bytes()));
        if !known {
            return;
        }
        let Ok(ids) = jvmti.class_methods(class) else {
            return;
        };
        // The JVMTI calls run before the registry's lock is taken (they can wait for a
        // safepoint).
        let named: Vec<(jmethodID, String, String)> = ids
            .into_iter()
            .filter_map(|id| jvmti.method_name(id).ok().map(|(n, s)| (id, n, s)))
            .collect();
        let Ok(mut methods) = self.methods.lock() else {
            return;
        };
        for (id, method, descriptor) in named {
            let key: MethodKey = (
                Box::from(name.as_bytes()),
                Box::from(method.as_bytes()),
                Box::from(descriptor.as_bytes()),
            );
            if let Some(&m) = methods.ids.get(&key)
                && let Some(slot) = methods.resolved.get_mut(m as usize - 1)
            {
                *slot = id as usize;
            }
        }
    }

    /// [`Self::resolve_class`] for every loaded class: once, when the engine has started.
    pub(super) fn resolve_loaded(&self, jvmti: Jvmti, jni: Jni) {
        let Ok(classes) = jvmti.loaded_classes() else {
            return;
        };
        for class in classes {
            self.resolve_class(jvmti, class);
            jni.delete_local_ref(class);
        }
    }

    /// The number the rewriter gave method `id`, or 0 if it has none.
    pub(super) fn method_number(&self, jvmti: Jvmti, jni: Jni, id: jmethodID) -> u32 {
        let Ok(class) = jvmti.method_class(id) else {
            return 0;
        };
        let signature = jvmti.class_signature(class);
        jni.delete_local_ref(class);
        let (Ok(signature), Ok((name, descriptor))) = (signature, jvmti.method_name(id)) else {
            return 0;
        };
        let Some(class_name) = signature
            .strip_prefix('L')
            .and_then(|s| s.strip_suffix(';'))
        else {
            return 0;
        };
        let key: MethodKey = (
            Box::from(class_name.as_bytes()),
            Box::from(name.as_bytes()),
            Box::from(descriptor.as_bytes()),
        );
        self.methods
            .lock()
            .ok()
            .and_then(|m| m.ids.get(&key).copied())
            .unwrap_or(0)
    }

    /// `class.method(signature)` of method number `m`, dotted, for cpu=old.
    pub(super) fn old_name(&self, m: u32) -> Option<String> {
        let methods = self.methods.lock().ok()?;
        let name = methods.names.get((m as usize).checked_sub(1)?)?;
        Some(format!(
            "{}.{}{}",
            name.class.replace('/', "."),
            name.name,
            name.signature
        ))
    }
}
