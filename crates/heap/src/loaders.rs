//! Owns the class loaders' view of a heap: per loader, the classes it defined, their
//! instances and what those retain (class-loader leaks show as loaders that should be gone),
//! and the classes defined by several loaders.

use rustc_hash::FxHashMap;

use crate::analysis::Analysis;
use crate::dominators::NONE;
use crate::graph::{ClassKind, HeapGraph};
use hprof_format::Value;

/// One class loader.
#[derive(Debug, Clone)]
pub struct LoaderRow {
    /// Its index in [`Analysis::loaders`].
    pub index: u32,
    /// The loader object's id (0: the boot loader).
    pub id: u64,
    /// The loader object's node, or [`NONE`] (the boot loader, or a loader not in the dump).
    pub node: u32,
    /// `<boot loader>`, or the loader's class and its name (`ClassLoader.name`) if it has one.
    pub name: String,
    /// Classes it defined.
    pub classes: u64,
    /// Reachable instances of those classes.
    pub instances: u64,
    /// Their shallow bytes (reachable or not).
    pub shallow: u64,
    /// The memory retained by the set of those instances.
    pub retained: u64,
    /// The memory the loader object itself retains.
    pub loader_retained: u64,
}

/// A class name that several loaders define.
#[derive(Debug, Clone)]
pub struct DuplicateClass {
    /// The class name.
    pub name: String,
    /// Loaders defining it (indices in [`Analysis::loaders`]).
    pub loaders: Vec<u32>,
    /// Reachable instances, over every loader's class.
    pub instances: u64,
    /// Their shallow bytes.
    pub shallow: u64,
}

/// The class loaders' view of a heap.
#[derive(Debug, Default)]
pub struct LoaderReport {
    /// Every loader, by retained size (most first).
    pub loaders: Vec<LoaderRow>,
    /// Class names defined by two loaders or more, by loaders (most first).
    pub duplicates: Vec<DuplicateClass>,
}

/// The name of a loader: `<boot loader>`, or its class and `name` field.
pub fn loader_name(graph: &HeapGraph<'_>, id: u64) -> String {
    if id == 0 {
        return "<boot loader>".to_string();
    }
    let Some(node) = graph.node(id) else {
        return format!("class loader @ {id:#x} (not in the dump)");
    };
    let class = graph.class(node).name.clone();
    match graph.field(node, "name") {
        Some(Value::Object(name)) if name != 0 => {
            match graph.node(name).and_then(|n| graph.string_value(n)) {
                Some(text) => format!("{class} \"{text}\""),
                None => class,
            }
        }
        _ => class,
    }
}

/// The loaders of `graph`, with what [`Analysis`] counted per class.
pub fn loader_report(graph: &HeapGraph<'_>, analysis: &Analysis) -> LoaderReport {
    let groups = &analysis.loaders;
    let mut rows: Vec<LoaderRow> = groups
        .ids
        .iter()
        .enumerate()
        .map(|(i, &id)| {
            let node = if id == 0 {
                NONE
            } else {
                graph.node(id).unwrap_or(NONE)
            };
            LoaderRow {
                index: i as u32,
                id,
                node,
                name: loader_name(graph, id),
                classes: 0,
                instances: 0,
                shallow: 0,
                retained: analysis.loader_retained.get(i).copied().unwrap_or(0),
                loader_retained: if node == NONE {
                    0
                } else {
                    analysis.retained[node as usize]
                },
            }
        })
        .collect();
    let mut by_name: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (c, class) in graph.classes().iter().enumerate() {
        let row = &mut rows[groups.of_class[c] as usize];
        row.instances += analysis.class_count[c];
        row.shallow += analysis.class_shallow[c];
        if matches!(class.kind, ClassKind::Instance | ClassKind::ObjectArray) {
            row.classes += 1;
            by_name.entry(class.name.as_str()).or_default().push(c);
        }
    }
    let mut duplicates: Vec<DuplicateClass> = by_name
        .into_iter()
        .filter_map(|(name, classes)| {
            let mut loaders: Vec<u32> = classes.iter().map(|&c| groups.of_class[c]).collect();
            loaders.sort_unstable();
            loaders.dedup();
            (loaders.len() >= 2).then(|| DuplicateClass {
                name: name.to_string(),
                loaders,
                instances: classes.iter().map(|&c| analysis.class_count[c]).sum(),
                shallow: classes.iter().map(|&c| analysis.class_shallow[c]).sum(),
            })
        })
        .collect();
    duplicates.sort_unstable_by(|a, b| {
        b.loaders
            .len()
            .cmp(&a.loaders.len())
            .then(b.shallow.cmp(&a.shallow))
            .then_with(|| a.name.cmp(&b.name))
    });
    rows.retain(|r| r.classes > 0 || r.instances > 0);
    rows.sort_unstable_by(|a, b| {
        b.retained
            .cmp(&a.retained)
            .then(b.instances.cmp(&a.instances))
            .then(a.id.cmp(&b.id))
    });
    LoaderReport {
        loaders: rows,
        duplicates,
    }
}

/// Per class loader: the bytes of the strongly reachable objects in the dominator subtrees
/// of `roots`, the most first. An object of a JDK class (defined
/// by the boot or the platform loader: arrays, strings, collections) counts for the loader
/// of the nearest object above it in the dominator tree whose class is not the JDK's (as
/// Eclipse MAT's component report does), so a plugin's byte arrays count for the plugin's
/// loader.
pub fn loaders_in(graph: &HeapGraph<'_>, analysis: &Analysis, roots: &[u32]) -> Vec<(u32, u64)> {
    let groups = &analysis.loaders;
    let jdk: Vec<bool> = groups
        .ids
        .iter()
        .map(|&id| {
            id == 0
                || graph.node(id).is_some_and(|n| {
                    graph.class(n).name == "jdk.internal.loader.ClassLoaders$PlatformClassLoader"
                })
        })
        .collect();
    // The loader an object counts for by itself: its class's, or for a class object the
    // loader of the class it describes; `None` for the JDK's.
    let class_class = graph
        .classes()
        .iter()
        .position(|c| c.name == "java.lang.Class")
        .map(|c| c as u32);
    let own = |v: u32| -> Option<u32> {
        let class = graph.class_of(v);
        let described = (Some(class) == class_class)
            .then(|| graph.described_class(v))
            .flatten()
            .and_then(|d| graph.class_by_id(d.id));
        let loader = groups.of_class[described.unwrap_or(class) as usize];
        (!jdk[loader as usize]).then_some(loader)
    };
    // A root starts with the loader of the nearest object above it that has one.
    let above = |v: u32| -> u32 {
        let mut at = analysis.idom.get(v as usize).copied().unwrap_or(NONE);
        while (at as usize) < graph.len() {
            if let Some(l) = own(at) {
                return l;
            }
            at = analysis.idom[at as usize];
        }
        0
    };
    // Bytes by retained sizes, where the owner changes: a node whose owner differs from its
    // parent's adds its retained size to its owner and takes it from its parent's (no
    // object's record is read).
    // With one loader besides the JDK's (most programs), nothing below an object it owns can
    // count for another: the walk stops there.
    let others: Vec<u32> = (0..groups.ids.len() as u32)
        .filter(|&l| !jdk[l as usize])
        .collect();
    let only = match others[..] {
        [one] => Some(one),
        _ => None,
    };
    let mut by_loader: FxHashMap<u32, i128> = FxHashMap::default();
    let mut stack: Vec<(u32, u32, bool)> = roots.iter().map(|&r| (r, above(r), true)).collect();
    while let Some((v, above, top)) = stack.pop() {
        let mut owner = above;
        if (v as usize) < graph.len() {
            if let Some(loader) = own(v) {
                owner = loader;
            }
            let retained = analysis.retained[v as usize];
            if retained > 0 && (top || owner != above) {
                *by_loader.entry(owner).or_default() += i128::from(retained);
                if !top {
                    *by_loader.entry(above).or_default() -= i128::from(retained);
                }
            }
            if only == Some(owner) {
                continue;
            }
        }
        stack.extend(analysis.children(v).iter().map(|&k| (k, owner, false)));
    }
    let mut out: Vec<(u32, u64)> = by_loader
        .into_iter()
        .map(|(l, b)| (l, b.max(0) as u64))
        .filter(|&(_, b)| b > 0)
        .collect();
    out.sort_unstable_by_key(|&(l, b)| (std::cmp::Reverse(b), l));
    out
}
