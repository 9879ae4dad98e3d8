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
        let mut walk = Walk::new(graph, analysis, strong);
        walk.run(progress);
        walk.chains
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

/// The state of the walk down the dominator tree.
struct Walk<'a, 'g> {
    graph: &'a HeapGraph<'g>,
    analysis: &'a Analysis,
    strong: &'a Paths,
    chains: Chains,
    /// Chains by (parent, step, class).
    index: HashMap<(u32, u32, u32), u32>,
    texts: HashMap<String, u32>,
    /// Per class index: the text of its name.
    class_text: Vec<u32>,
    /// Per (chain, class index): the chain it folds into, or NONE.
    folds: HashMap<(u32, u32), u32>,
    /// Per (holder class, slot): the step's text, for instance fields.
    fields: HashMap<(u32, u32), u32>,
    /// Per chain: its depth, and how many objects of it are on the walk's path.
    depth: Vec<u8>,
    on_path: Vec<u32>,
    /// The chains whose topmost object is on the path.
    open: Vec<u32>,
    /// The first root record of each root object, by node.
    roots: HashMap<u32, (RootKind, u32, u32)>,
    array_step: u32,
    indirect_step: u32,
    class_step: u32,
    several_roots: u32,
}

impl<'a, 'g> Walk<'a, 'g> {
    fn new(graph: &'a HeapGraph<'g>, analysis: &'a Analysis, strong: &'a Paths) -> Self {
        let mut walk = Walk {
            graph,
            analysis,
            strong,
            chains: Chains {
                chains: vec![Chain {
                    parent: 0,
                    step: 0,
                    class: 0,
                    objects: 0,
                    retained: 0,
                }],
                texts: Vec::new(),
            },
            index: HashMap::default(),
            texts: HashMap::default(),
            class_text: Vec::new(),
            folds: HashMap::default(),
            fields: HashMap::default(),
            depth: vec![0],
            on_path: vec![0],
            open: Vec::new(),
            roots: HashMap::default(),
            array_step: 0,
            indirect_step: 0,
            class_step: 0,
            several_roots: 0,
        };
        walk.text("");
        walk.array_step = walk.text("[]");
        walk.indirect_step = walk.text(INDIRECT);
        walk.class_step = walk.text(CLASS);
        walk.several_roots = walk.text("several GC roots");
        // Names as they compare across dumps: hidden classes' addresses and lambdas' numbers
        // change from one run to the next.
        walk.class_text = graph
            .classes()
            .iter()
            .map(|c| hprof_format::stable_class_name(&c.name).into_owned())
            .collect::<Vec<_>>()
            .into_iter()
            .map(|name| walk.text(&name))
            .collect();
        // Stack roots first, as `roots_of` orders them, then by kind.
        for root in graph.roots() {
            let key = (!root.kind.is_stack(), root.kind);
            let entry =
                walk.roots
                    .entry(root.node)
                    .or_insert((root.kind, root.thread_serial, root.frame));
            if key < (!entry.0.is_stack(), entry.0) {
                *entry = (root.kind, root.thread_serial, root.frame);
            }
        }
        walk
    }

    fn text(&mut self, text: &str) -> u32 {
        if let Some(&id) = self.texts.get(text) {
            return id;
        }
        let id = self.chains.texts.len() as u32;
        self.chains.texts.push(text.to_string());
        self.texts.insert(text.to_string(), id);
        id
    }

    /// The chain (parent, step, class), added if new.
    fn chain(&mut self, parent: u32, step: u32, class: u32) -> u32 {
        if let Some(&c) = self.index.get(&(parent, step, class)) {
            return c;
        }
        let id = self.chains.chains.len() as u32;
        self.chains.chains.push(Chain {
            parent,
            step,
            class,
            objects: 0,
            retained: 0,
        });
        self.depth
            .push(self.depth[parent as usize].saturating_add(1));
        self.on_path.push(0);
        self.index.insert((parent, step, class), id);
        id
    }

    /// The chain that objects of class `class` continuing `chain` fold into: the nearest chain
    /// of `chain`'s path naming that class, `chain` itself at the depth limit, or NONE.
    fn fold(&mut self, chain: u32, class: u32) -> u32 {
        if let Some(&f) = self.folds.get(&(chain, class)) {
            return f;
        }
        let text = self.class_text[class as usize];
        let mut found = NONE;
        let mut at = chain;
        while at != 0 {
            let c = &self.chains.chains[at as usize];
            if c.class == text && c.step != self.class_step {
                found = at;
                break;
            }
            at = c.parent;
        }
        if found == NONE && self.depth[chain as usize] as usize >= MAX_DEPTH {
            found = chain;
        }
        self.folds.insert((chain, class), found);
        found
    }

    /// The description of the GC root `node` as a chain's first step.
    fn root_step(&mut self, node: u32) -> u32 {
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

    /// The step's text for slot `slot` of `holder` (of class `class`).
    fn step(&mut self, holder: u32, class: u32, slot: u32) -> u32 {
        let array = self.graph.is_object_array(holder);
        match self.graph.classes().get(class as usize).map(|c| c.kind) {
            _ if array => self.array_step,
            Some(ClassKind::ObjectArray) => self.array_step,
            _ if class == self.graph.class_class() => {
                let name = self.graph.reference_slot_name(holder, slot);
                self.text(&name)
            }
            _ => {
                if let Some(&t) = self.fields.get(&(class, slot)) {
                    return t;
                }
                let name = self.graph.reference_slot_name(holder, slot);
                let t = self.text(&name);
                self.fields.insert((class, slot), t);
                t
            }
        }
    }

    /// The class object `node`'s own chain, or `None` if it is not a class object.
    fn class_chain(&mut self, node: u32, class: u32) -> Option<u32> {
        if class != self.graph.class_class() {
            return None;
        }
        let name =
            hprof_format::stable_class_name(&self.graph.described_class(node)?.name).into_owned();
        let text = self.text(&name);
        Some(self.chain(0, self.class_step, text))
    }

    /// The chains of the children of `parent` (in chain `chain`), in `out`.
    fn children(&mut self, parent: u32, chain: u32, kids: &[u32], out: &mut Vec<u32>) {
        out.clear();
        let top = parent == self.analysis.super_root();
        // The kids that need their step read from the parent's record: (id, index).
        let mut wanted: Vec<(u64, u32)> = Vec::new();
        for (i, &kid) in kids.iter().enumerate() {
            let class = self.graph.class_of(kid);
            let chosen = if let Some(own) = self.class_chain(kid, class) {
                own
            } else if top {
                let step = self.root_step(kid);
                self.chain(0, step, self.class_text[class as usize])
            } else {
                match self.fold(chain, class) {
                    NONE => {
                        wanted.push((self.graph.id(kid), i as u32));
                        NONE
                    }
                    folded => folded,
                }
            };
            out.push(chosen);
        }
        if wanted.is_empty() {
            return;
        }
        // Each wanted kid's slot in the parent: the first reference to it.
        wanted.sort_unstable();
        let mut slots: Vec<u32> = vec![NONE; wanted.len()];
        let mut found = 0usize;
        self.graph.reference_ids(parent, |slot, id| {
            if found < wanted.len()
                && let Ok(at) = wanted.binary_search_by_key(&id, |&(w, _)| w)
                && slots[at] == NONE
            {
                slots[at] = slot;
                found += 1;
            }
        });
        let parent_class = self.graph.class_of(parent);
        for (&(_, i), &slot) in wanted.iter().zip(&slots) {
            let step = if slot == NONE {
                self.indirect_step
            } else {
                self.step(parent, parent_class, slot)
            };
            let class = self.class_text[self.graph.class_of(kids[i as usize]) as usize];
            out[i as usize] = self.chain(chain, step, class);
        }
    }

    /// Enters `node` in `chain`: counts it, and opens the chain if no object above it is in it.
    /// Returns whether it opened the chain.
    fn enter(&mut self, node: u32, chain: u32) -> bool {
        let retained = self.analysis.retained[node as usize];
        if chain != 0 && self.graph.class_of(node) == self.graph.class_class() {
            // A class object's memory is its own chain's, not that of the chains above it.
            for &open in &self.open {
                let c = &mut self.chains.chains[open as usize];
                c.retained = c.retained.saturating_sub(retained);
            }
        }
        let c = &mut self.chains.chains[chain as usize];
        if self.strong.reaches(node) {
            c.objects += 1;
        }
        let opens = self.on_path[chain as usize] == 0;
        if opens {
            c.retained += retained;
            self.open.push(chain);
        }
        self.on_path[chain as usize] += 1;
        opens
    }

    fn leave(&mut self, chain: u32, opened: bool) {
        self.on_path[chain as usize] -= 1;
        if opened {
            self.open.pop();
        }
    }

    /// Walks the dominator tree depth first from the super-root.
    fn run(&mut self, progress: &dyn Progress) {
        struct Level {
            node: u32,
            chain: u32,
            opened: bool,
            next: usize,
            /// Where its kids' chains start in `kid_chains`.
            first: usize,
        }
        let root = self.analysis.super_root();
        let analysis = self.analysis;
        let mut kid_chains: Vec<u32> = Vec::new();
        let mut scratch: Vec<u32> = Vec::new();
        self.children(root, 0, analysis.children(root), &mut scratch);
        kid_chains.extend_from_slice(&scratch);
        let mut stack = vec![Level {
            node: root,
            chain: 0,
            opened: false,
            next: 0,
            first: 0,
        }];
        let mut visited = 0u64;
        while let Some(level) = stack.last_mut() {
            let kids = analysis.children(level.node);
            if level.next == kids.len() {
                let done = stack.pop().expect("non-empty stack");
                kid_chains.truncate(done.first);
                if !stack.is_empty() {
                    self.leave(done.chain, done.opened);
                }
                continue;
            }
            let kid = kids[level.next];
            let chain = kid_chains[level.first + level.next];
            level.next += 1;
            let opened = self.enter(kid, chain);
            visited += 1;
            if visited.is_multiple_of(1 << 16) {
                progress.advance(1 << 16);
            }
            let first = kid_chains.len();
            let grandkids = analysis.children(kid);
            if !grandkids.is_empty() {
                self.children(kid, chain, grandkids, &mut scratch);
                kid_chains.extend_from_slice(&scratch);
            }
            stack.push(Level {
                node: kid,
                chain,
                opened,
                next: 0,
                first,
            });
        }
        progress.advance(visited % (1 << 16));
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
