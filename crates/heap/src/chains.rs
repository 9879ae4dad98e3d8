//! Owns the grouping of a heap's memory by reference chain: every reachable object is named by
//! the path of classes and fields that leads to it from its GC root down the dominator tree
//! (`static LeakHold.CACHE → java.util.HashMap.table → java.util.HashMap$Node[] → …`), and the
//! objects and retained bytes of each such chain are added up. Object ids do not survive from
//! one heap dump to the next; these chains do, so two dumps can be compared chain by chain.
//!
//! The rules:
//! - A chain starts at a GC root: the root's kind (a Java frame's method, `JNI global`,
//!   `thread object`, …) and the object's class (`thread object: java.lang.Thread`), or `several GC roots` for objects the
//!   dominator tree hangs from the super-root without being roots themselves. A class object
//!   always starts a chain of its own, `class X` (its static fields lead on), and the memory
//!   it retains is taken out of the chains above it (the class loader's list of classes), so
//!   a static field's memory is counted once, under the static field.
//! - Each further step is the field (`.table`), static field (`static CACHE`) or array element
//!   (`[]`) through which the object's immediate dominator refers to it, then the object's
//!   class; `…` when the dominator reaches it only through other objects.
//! - A class met again along a chain folds into its first occurrence: a linked list, a tree,
//!   a map's chained nodes are one group (`java.util.HashMap$Node` holds its `next` nodes).
//! - A chain's objects are those it names; its retained bytes are the retained sizes of its
//!   topmost objects (those with no dominator in the same chain), so nothing is counted twice
//!   within a chain, and a chain's retained bytes include the chains that continue it.

use std::sync::{Mutex, RwLock};

use rustc_hash::FxHashMap as HashMap;

use crate::analysis::{Analysis, Paths};
use crate::dominators::NONE;
use crate::graph::{ClassKind, HeapGraph, RootKind};
use crate::progress::Progress;

/// How deep a chain may grow; deeper objects stay in the chain at this depth.
const MAX_DEPTH: usize = 48;

/// The label of a step reached only through other objects.
pub const INDIRECT: &str = "…";

/// The first step of a class object's own chain.
pub const CLASS: &str = "class";

/// One chain: its parent chain, the step that leads to it from there and the class it names,
/// with the objects and bytes of the heap it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    /// The chain it continues (0, the root, for chains that start at a GC root).
    pub parent: u32,
    /// The step (in [`Chains::texts`]): a field name, `static NAME`, `[]`, [`INDIRECT`]; for a
    /// chain that starts at a GC root, the root's description or [`CLASS`].
    pub step: u32,
    /// The class of its objects (in [`Chains::texts`]); for [`CLASS`] chains, the class the
    /// class object describes.
    pub class: u32,
    /// Strongly reachable objects it names.
    pub objects: u64,
    /// Bytes its topmost objects retain.
    pub retained: u64,
}

/// The chains of one heap dump; chain 0 is the root above every GC root (it holds nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chains {
    /// Every chain, each after its parent.
    pub chains: Vec<Chain>,
    /// The steps' and classes' texts.
    pub texts: Vec<String>,
}

impl Chains {
    /// The text of `id`.
    pub fn text(&self, id: u32) -> &str {
        &self.texts[id as usize]
    }

    /// The chain `id` and its ancestors up to (not including) the root, root side first.
    pub fn path(&self, id: u32) -> Vec<u32> {
        let mut path = Vec::new();
        let mut at = id;
        while at != 0 {
            path.push(at);
            at = self.chains[at as usize].parent;
        }
        path.reverse();
        path
    }

    /// The chain `id` as one line: `static LeakHold.CACHE → java.util.HashMap.table →
    /// java.util.HashMap$Node[] → java.util.HashMap$Node`.
    pub fn describe(&self, id: u32) -> String {
        let steps: Vec<(&str, &str)> = self
            .path(id)
            .into_iter()
            .map(|c| {
                let chain = &self.chains[c as usize];
                (self.text(chain.step), self.text(chain.class))
            })
            .collect();
        describe(&steps)
    }

    /// Computes the chains of `graph`'s heap from its dominator tree (`analysis`) and the
    /// objects strong references reach (`strong`).
    pub fn new(
        graph: &HeapGraph<'_>,
        analysis: &Analysis,
        strong: &Paths,
        progress: &dyn Progress,
    ) -> Chains {
        progress.phase("reference chains", analysis.reachable_objects);
        Shared::new(graph, analysis, strong, progress).walk()
    }
}

/// A chain given as its steps (step, class), root side first, as one line.
pub fn describe(steps: &[(&str, &str)]) -> String {
    let mut line = String::new();
    for (i, &(step, class)) in steps.iter().enumerate() {
        if i == 0 {
            if step == CLASS {
                line.push_str("class ");
                line.push_str(class);
            } else {
                line.push_str(step);
                line.push_str(": ");
                line.push_str(class);
            }
            continue;
        }
        if let Some(name) = step.strip_prefix("static ")
            && let Some(holder) = line.strip_prefix("class ")
            && i == 1
        {
            line = format!("static {holder}.{name} → {class}");
            continue;
        }
        match step {
            "[]" => line.push_str(" → "),
            INDIRECT => line.push_str(" → … → "),
            field => {
                line.push('.');
                line.push_str(field);
                line.push_str(" → ");
            }
        }
        line.push_str(class);
    }
    line
}

/// The chains found so far, shared by the walks (read far more often than written: each walk
/// keeps its own cache of it).
#[derive(Default)]
struct Table {
    /// (parent, step, class, depth) of each chain.
    chains: Vec<(u32, u32, u32, u8)>,
    index: HashMap<(u32, u32, u32), u32>,
    texts: Vec<String>,
    text_index: HashMap<String, u32>,
    /// Per (holder class, slot): the step's text, for instance fields.
    fields: HashMap<(u32, u32), u32>,
}

impl Table {
    fn text(&mut self, text: &str) -> u32 {
        if let Some(&id) = self.text_index.get(text) {
            return id;
        }
        let id = self.texts.len() as u32;
        self.texts.push(text.to_string());
        self.text_index.insert(text.to_string(), id);
        id
    }

    fn chain(&mut self, parent: u32, step: u32, class: u32) -> u32 {
        if let Some(&c) = self.index.get(&(parent, step, class)) {
            return c;
        }
        let id = self.chains.len() as u32;
        let depth = self.chains[parent as usize].3.saturating_add(1);
        self.chains.push((parent, step, class, depth));
        self.index.insert((parent, step, class), id);
        id
    }
}

/// One walk's own state: the chains on its path, its sums, its caches.
#[derive(Clone, Default)]
struct Walker {
    /// Per chain: how many objects of it are on the walk's path.
    on_path: Vec<u32>,
    /// The chains whose topmost object is on the path.
    open: Vec<u32>,
    /// Per chain: objects counted and retained bytes (less what class objects below took).
    sums: Vec<(u64, i64)>,
    /// Caches of the table's chains and of folds, and the last fold.
    chains: HashMap<(u32, u32, u32), u32>,
    folds: HashMap<(u32, u32), u32>,
    last_fold: (u32, u32, u32),
    /// Buffers of [`Shared::children`].
    wanted: Vec<(u64, u32)>,
    slots: Vec<u32>,
    visited: u64,
}

impl Walker {
    /// A walker starting where `self` is, with sums and visits of its own.
    fn fork(&self) -> Walker {
        Walker {
            sums: Vec::new(),
            visited: 0,
            ..self.clone()
        }
    }

    fn sums(&mut self, chain: u32) -> &mut (u64, i64) {
        let c = chain as usize;
        if c >= self.sums.len() {
            self.sums.resize(c + 1, (0, 0));
        }
        &mut self.sums[c]
    }

    fn on_path(&mut self, chain: u32) -> &mut u32 {
        let c = chain as usize;
        if c >= self.on_path.len() {
            self.on_path.resize(c + 1, 0);
        }
        &mut self.on_path[c]
    }
}

/// What the walks down the dominator tree share.
struct Shared<'a, 'g> {
    graph: &'a HeapGraph<'g>,
    analysis: &'a Analysis,
    strong: &'a Paths,
    progress: &'a dyn Progress,
    table: RwLock<Table>,
    /// Per class index: the text of its name.
    class_text: Vec<u32>,
    /// Per class index: the slot of an instance's only reference field, or NONE (none, or
    /// several): the only object such an instance can dominate is the one that field holds.
    single_reference: Vec<u32>,
    /// The first root record of each root object, by node (stack roots first, then by kind).
    roots: HashMap<u32, (RootKind, u32, u32)>,
    array_step: u32,
    indirect_step: u32,
    class_step: u32,
    several_roots: u32,
    /// Nodes retaining less than this share their children with no other walk.
    split: u64,
    /// The walks' sums, added up.
    total: Mutex<Vec<(u64, i64)>>,
}

impl<'a, 'g> Shared<'a, 'g> {
    fn new(
        graph: &'a HeapGraph<'g>,
        analysis: &'a Analysis,
        strong: &'a Paths,
        progress: &'a dyn Progress,
    ) -> Self {
        let mut table = Table::default();
        table.chains.push((0, 0, 0, 0));
        table.text("");
        let (array_step, indirect_step, class_step, several_roots) = (
            table.text("[]"),
            table.text(INDIRECT),
            table.text(CLASS),
            table.text("several GC roots"),
        );
        // Names as they compare across dumps: hidden classes' addresses and lambdas' numbers
        // change from one run to the next.
        let class_text = graph
            .classes()
            .iter()
            .map(|c| table.text(&hprof_format::stable_class_name(&c.name)))
            .collect();
        let single_reference = graph
            .classes()
            .iter()
            .enumerate()
            .map(|(c, class)| {
                let mut references = class
                    .fields
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| f.ty == hprof_format::BasicType::Object);
                match (references.next(), references.next()) {
                    (Some((slot, _)), None)
                        if class.kind == ClassKind::Instance && c as u32 != graph.class_class() =>
                    {
                        slot as u32
                    }
                    _ => NONE,
                }
            })
            .collect();
        let mut roots: HashMap<u32, (RootKind, u32, u32)> = HashMap::default();
        for root in graph.roots() {
            let key = (!root.kind.is_stack(), root.kind);
            let entry =
                roots
                    .entry(root.node)
                    .or_insert((root.kind, root.thread_serial, root.frame));
            if key < (!entry.0.is_stack(), entry.0) {
                *entry = (root.kind, root.thread_serial, root.frame);
            }
        }
        let n = graph.len();
        let whole: u64 = analysis
            .children(analysis.super_root())
            .iter()
            .map(|&k| analysis.retained[k as usize])
            .sum();
        debug_assert_eq!(analysis.idom.len(), n);
        Shared {
            graph,
            analysis,
            strong,
            progress,
            table: RwLock::new(table),
            class_text,
            single_reference,
            roots,
            array_step,
            indirect_step,
            class_step,
            several_roots,
            split: (whole / 512).max(1),
            total: Mutex::new(Vec::new()),
        }
    }

    /// Walks the whole tree, on every core, and returns its chains.
    fn walk(self) -> Chains {
        let root = self.analysis.super_root();
        let kids = self.analysis.children(root).len() as u32;
        rayon::scope(|scope| {
            self.run(scope, root, 0, 0, kids, Walker::default());
        });
        let table = self.table.into_inner().unwrap_or_else(|e| e.into_inner());
        let total = self.total.into_inner().unwrap_or_else(|e| e.into_inner());
        let chains = table
            .chains
            .iter()
            .enumerate()
            .map(|(c, &(parent, step, class, _))| {
                let (objects, retained) = total.get(c).copied().unwrap_or_default();
                Chain {
                    parent,
                    step,
                    class,
                    objects,
                    retained: u64::try_from(retained).unwrap_or(0),
                }
            })
            .collect();
        Chains {
            chains,
            texts: table.texts,
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Table> {
        self.table.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Table> {
        self.table.write().unwrap_or_else(|e| e.into_inner())
    }

    fn text(&self, text: &str) -> u32 {
        if let Some(&id) = self.read().text_index.get(text) {
            return id;
        }
        self.write().text(text)
    }

    /// The chain (parent, step, class), added if new.
    fn chain(&self, w: &mut Walker, parent: u32, step: u32, class: u32) -> u32 {
        if let Some(&c) = w.chains.get(&(parent, step, class)) {
            return c;
        }
        let found = self.read().index.get(&(parent, step, class)).copied();
        let c = match found {
            Some(c) => c,
            None => self.write().chain(parent, step, class),
        };
        w.chains.insert((parent, step, class), c);
        c
    }

    /// The chain that objects of class `class` continuing `chain` fold into: the nearest chain
    /// of `chain`'s path naming that class, `chain` itself at the depth limit, or NONE.
    fn fold(&self, w: &mut Walker, chain: u32, class: u32) -> u32 {
        // Siblings and lists ask the same question in a row.
        if (w.last_fold.0, w.last_fold.1) == (chain, class) {
            return w.last_fold.2;
        }
        let found = match w.folds.get(&(chain, class)) {
            Some(&f) => f,
            None => {
                let text = self.class_text[class as usize];
                let table = self.read();
                let mut found = NONE;
                let mut at = chain;
                while at != 0 {
                    let (parent, step, name, _) = table.chains[at as usize];
                    if name == text && step != self.class_step {
                        found = at;
                        break;
                    }
                    at = parent;
                }
                if found == NONE && table.chains[chain as usize].3 as usize >= MAX_DEPTH {
                    found = chain;
                }
                drop(table);
                w.folds.insert((chain, class), found);
                found
            }
        };
        w.last_fold = (chain, class, found);
        found
    }

    /// The description of the GC root `node` as a chain's first step.
    fn root_step(&self, node: u32) -> u32 {
        let Some(&(kind, thread, frame)) = self.roots.get(&node) else {
            return self.several_roots;
        };
        let text = match kind {
            RootKind::JavaFrame | RootKind::JniLocal if frame != NONE => {
                match self.graph.thread_frame(thread, frame) {
                    Some(f) => format!("{} in {}", kind.name(), f.method),
                    None => kind.name().to_string(),
                }
            }
            _ => kind.name().to_string(),
        };
        self.text(&text)
    }

    /// The step's text for slot `slot` of `holder` (of class `class`; an array of references
    /// if `array`).
    fn step(&self, holder: u32, class: u32, slot: u32, array: bool) -> u32 {
        if array || self.graph.classes()[class as usize].kind == ClassKind::ObjectArray {
            return self.array_step;
        }
        if class == self.graph.class_class() {
            return self.text(&self.graph.reference_slot_name(holder, slot));
        }
        if let Some(&t) = self.read().fields.get(&(class, slot)) {
            return t;
        }
        let name = self.graph.reference_slot_name(holder, slot);
        let mut table = self.write();
        let t = table.text(&name);
        table.fields.insert((class, slot), t);
        t
    }

    /// The class object `node`'s own chain, or `None` if it is not a class object.
    fn class_chain(&self, w: &mut Walker, node: u32, class: u32) -> Option<u32> {
        if class != self.graph.class_class() {
            return None;
        }
        let name =
            hprof_format::stable_class_name(&self.graph.described_class(node)?.name).into_owned();
        let text = self.text(&name);
        Some(self.chain(w, 0, self.class_step, text))
    }

    /// The chains of `kids`, children of `parent` (in chain `chain`), into `out`.
    fn children(&self, w: &mut Walker, parent: u32, chain: u32, kids: &[u32], out: &mut Vec<u32>) {
        out.clear();
        let top = parent == self.analysis.super_root();
        // The kids whose step is to be found in the parent: (id, index).
        let mut wanted = std::mem::take(&mut w.wanted);
        wanted.clear();
        for (i, &kid) in kids.iter().enumerate() {
            let class = self.graph.class_of(kid);
            let chosen = if let Some(own) = self.class_chain(w, kid, class) {
                own
            } else if top {
                let step = self.root_step(kid);
                self.chain(w, 0, step, self.class_text[class as usize])
            } else {
                match self.fold(w, chain, class) {
                    NONE => {
                        wanted.push((0, i as u32));
                        NONE
                    }
                    folded => folded,
                }
            };
            out.push(chosen);
        }
        if !wanted.is_empty() {
            self.steps(w, parent, chain, kids, &mut wanted, out);
        }
        w.wanted = wanted;
    }

    /// The chains of the kids `wanted` (by index in `kids`) of `parent` (in chain `chain`),
    /// from the fields that refer to them, into `out`.
    fn steps(
        &self,
        w: &mut Walker,
        parent: u32,
        chain: u32,
        kids: &[u32],
        wanted: &mut [(u64, u32)],
        out: &mut [u32],
    ) {
        let parent_class = self.graph.class_of(parent);
        let mut slots = std::mem::take(&mut w.slots);
        slots.clear();
        slots.resize(wanted.len(), NONE);
        let only = self.single_reference[parent_class as usize];
        let array = self.graph.is_object_array(parent);
        if array {
            // An array's element: no need to know which. A dominator refers to an object
            // directly exactly when it is the object's parent on its shortest path from the
            // roots (every path to the object goes through the dominator).
            for (k, slot) in wanted.iter().zip(slots.iter_mut()) {
                if self.strong.parent(kids[k.1 as usize]) == Some(parent) {
                    *slot = 0;
                }
            }
        } else if only != NONE && wanted.len() == 1 {
            // The only object such an instance can dominate is the one its field holds.
            slots[0] = only;
        } else {
            // Each wanted kid's slot in the parent: the first reference to it.
            for k in wanted.iter_mut() {
                k.0 = self.graph.id(kids[k.1 as usize]);
            }
            wanted.sort_unstable();
            let mut found = 0usize;
            self.graph.reference_ids(parent, |slot, id| {
                if found < wanted.len()
                    && let Ok(at) = wanted.binary_search_by_key(&id, |&(k, _)| k)
                    && slots[at] == NONE
                {
                    slots[at] = slot;
                    found += 1;
                }
            });
        }
        for (&(_, i), &slot) in wanted.iter().zip(&slots) {
            let step = if slot == NONE {
                self.indirect_step
            } else {
                self.step(parent, parent_class, slot, array)
            };
            let class = self.class_text[self.graph.class_of(kids[i as usize]) as usize];
            out[i as usize] = self.chain(w, chain, step, class);
        }
        w.slots = slots;
    }

    /// True if strong references reach `node`, given its retained size: every strongly
    /// reachable object but a class object retains at least its own bytes, and objects reached
    /// only through weak references retain nothing.
    fn strong(&self, node: u32, retained: u64) -> bool {
        retained > 0
            || (self.graph.class_of(node) == self.graph.class_class() && self.strong.reaches(node))
    }

    /// Counts `node`, a leaf of the dominator tree, in `chain` (a class object that dominates
    /// nothing retains nothing: no chain above loses anything).
    fn count_leaf(&self, w: &mut Walker, node: u32, chain: u32) {
        let retained = self.analysis.retained[node as usize];
        let strong = self.strong(node, retained);
        let topmost = *w.on_path(chain) == 0;
        let sums = w.sums(chain);
        sums.0 += u64::from(strong);
        if topmost {
            sums.1 += retained as i64;
        }
    }

    /// Enters `node` in `chain`: counts it, and opens the chain if no object above it is in it.
    /// Returns whether it opened the chain.
    fn enter(&self, w: &mut Walker, node: u32, chain: u32) -> bool {
        let retained = self.analysis.retained[node as usize];
        if chain != 0 && self.graph.class_of(node) == self.graph.class_class() {
            // A class object's memory is its own chain's, not that of the chains above it.
            for i in 0..w.open.len() {
                let open = w.open[i];
                w.sums(open).1 -= retained as i64;
            }
        }
        let strong = self.strong(node, retained);
        let opens = *w.on_path(chain) == 0;
        let sums = w.sums(chain);
        sums.0 += u64::from(strong);
        if opens {
            sums.1 += retained as i64;
            w.open.push(chain);
        }
        *w.on_path(chain) += 1;
        opens
    }

    /// Leaves the object that opened (if `opened`) or was counted in `chain`, and the `extra`
    /// objects of the same chain below it in the walk's level.
    fn leave(&self, w: &mut Walker, chain: u32, opened: bool, extra: u32) {
        *w.on_path(chain) -= 1 + extra;
        if opened {
            w.open.pop();
        }
    }

    /// Walks the subtrees of `kids[from..to]`, children of `parent` (in chain `chain`), depth
    /// first with the walker `w`; big nodes' children are shared with walks spawned on other
    /// cores, each starting from a copy of the path's state. Adds its sums to the total.
    fn run<'s>(
        &'s self,
        scope: &rayon::Scope<'s>,
        parent: u32,
        chain: u32,
        from: u32,
        to: u32,
        mut w: Walker,
    ) {
        const PARTS: u32 = 8;
        struct Level {
            node: u32,
            chain: u32,
            opened: bool,
            /// Objects of the same chain above `node` it stands for (a run of single children).
            extra: u32,
            /// Its next kid and the end of its kids (indices into its children).
            next: u32,
            end: u32,
            /// Where the chain of its kid `start` is in `kid_chains`.
            first: usize,
            start: u32,
        }
        let analysis = self.analysis;
        let mut kid_chains: Vec<u32> = Vec::new();
        let mut scratch: Vec<u32> = Vec::new();
        let range = |v: u32, a: u32, b: u32| &analysis.children(v)[a as usize..b as usize];
        self.children(&mut w, parent, chain, range(parent, from, to), &mut scratch);
        kid_chains.extend_from_slice(&scratch);
        let mut stack = vec![Level {
            node: parent,
            chain,
            opened: false,
            extra: 0,
            next: from,
            end: to,
            first: 0,
            start: from,
        }];
        while let Some(level) = stack.last_mut() {
            if level.next == level.end {
                let done = stack.pop().expect("non-empty stack");
                kid_chains.truncate(done.first);
                if !stack.is_empty() {
                    self.leave(&mut w, done.chain, done.opened, done.extra);
                }
                continue;
            }
            let kid = analysis.children(level.node)[level.next as usize];
            let kid_chain = kid_chains[level.first + (level.next - level.start) as usize];
            level.next += 1;
            w.visited += 1;
            if w.visited.is_multiple_of(1 << 16) {
                self.progress.advance(1 << 16);
            }
            let count = analysis.children(kid).len() as u32;
            if count == 0 {
                // A leaf (most objects): counted, never on the path.
                self.count_leaf(&mut w, kid, kid_chain);
                continue;
            }
            let opened = self.enter(&mut w, kid, kid_chain);
            // A run of objects that each dominate one object of the same chain (a linked list,
            // a tree's spine) is one level: the first opened the chain, the others only count.
            let (mut node, mut count, mut extra) = (kid, count, 0u32);
            let mut computed = false;
            while count == 1 {
                self.children(&mut w, node, kid_chain, range(node, 0, 1), &mut scratch);
                computed = true;
                let only = analysis.children(node)[0];
                if scratch[0] != kid_chain || self.graph.class_of(only) == self.graph.class_class()
                {
                    break;
                }
                node = only;
                computed = false;
                w.visited += 1;
                if w.visited.is_multiple_of(1 << 16) {
                    self.progress.advance(1 << 16);
                }
                let retained = self.analysis.retained[node as usize];
                w.sums(kid_chain).0 += u64::from(self.strong(node, retained));
                *w.on_path(kid_chain) += 1;
                extra += 1;
                count = analysis.children(node).len() as u32;
            }
            if count == 0 {
                self.leave(&mut w, kid_chain, opened, extra);
                continue;
            }
            let mut mine = count;
            if count >= 2 && analysis.retained[node as usize] >= self.split {
                // Share the children: this walk keeps the first part.
                let part = count.div_ceil(PARTS);
                mine = part;
                let mut start = mine;
                while start < count {
                    let stop = (start + part).min(count);
                    let fork = w.fork();
                    scope.spawn(move |scope| self.run(scope, node, kid_chain, start, stop, fork));
                    start = stop;
                }
            }
            let first = kid_chains.len();
            if !computed {
                self.children(&mut w, node, kid_chain, range(node, 0, mine), &mut scratch);
            }
            kid_chains.extend_from_slice(&scratch);
            stack.push(Level {
                node,
                chain: kid_chain,
                opened,
                extra,
                next: 0,
                end: mine,
                first,
                start: 0,
            });
        }
        self.progress.advance(w.visited % (1 << 16));
        let mut total = self.total.lock().unwrap_or_else(|e| e.into_inner());
        if total.len() < w.sums.len() {
            total.resize(w.sums.len(), (0, 0));
        }
        for (t, s) in total.iter_mut().zip(&w.sums) {
            t.0 += s.0;
            t.1 += s.1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_read_as_paths_of_classes_and_fields() {
        let steps = [
            (CLASS, "LeakHold"),
            ("static CACHE", "java.util.HashMap"),
            ("table", "java.util.HashMap$Node[]"),
            ("[]", "java.util.HashMap$Node"),
            ("value", "byte[]"),
        ];
        assert_eq!(
            describe(&steps),
            "static LeakHold.CACHE → java.util.HashMap.table → java.util.HashMap$Node[] → \
java.util.HashMap$Node.value → byte[]"
        );
        assert_eq!(
            describe(&[
                ("Java frame in A.main", "java.util.ArrayList"),
                (INDIRECT, "A$B")
            ]),
            "Java frame in A.main: java.util.ArrayList → … → A$B"
        );
        assert_eq!(describe(&[(CLASS, "A")]), "class A");
    }
}
