//! Owns what is computed over the graph: the dominator tree, retained sizes per object and
//! per class, shortest paths from GC roots, accumulation points and leak suspects.

use std::collections::VecDeque;
use std::sync::Mutex;

use rayon::prelude::*;

use crate::compact::{filled, zeroed};
use crate::dominators::{Csr, NONE, PreorderTree, dominators_with};
use crate::graph::{HeapGraph, Root};
use crate::progress::Progress;

/// The dominator tree of a heap and the sizes it gives.
#[derive(Debug)]
pub struct Analysis {
    /// The immediate dominator of every node (the super-root is `len()`; [`NONE`] for
    /// unreachable objects).
    pub idom: Vec<u32>,
    /// The retained size of every node (0 for unreachable objects).
    pub retained: Vec<u64>,
    /// Children of every node in the dominator tree, super-root last: `kids[kid_starts[v]..kid_starts[v + 1]]`.
    kid_starts: Vec<u32>,
    kids: Vec<u32>,
    /// Per class index: the memory retained by the set of the class's instances.
    pub class_retained: Vec<u64>,
    /// The class loaders of the dump, and which one defined each class.
    pub loaders: LoaderGroups,
    /// Per loader (index in [`LoaderGroups::ids`]): the memory retained by the set of the
    /// instances of the classes it defined.
    pub loader_retained: Vec<u64>,
    /// Per class index: reachable instances.
    pub class_count: Vec<u64>,
    /// Per class index: shallow bytes of all instances, reachable or not.
    pub class_shallow: Vec<u64>,
    /// Objects, class objects included.
    pub objects: u64,
    /// Shallow bytes of all objects.
    pub shallow_bytes: u64,
    /// Objects reachable from GC roots through strong references.
    pub reachable_objects: u64,
    /// Shallow bytes of the objects reachable through strong references.
    pub reachable_bytes: u64,
    /// Objects reachable only through the referent of weak, soft, phantom or final references.
    pub weakly_reachable_objects: u64,
    /// Shallow bytes of the objects reachable only through such references.
    pub weakly_reachable_bytes: u64,
}

impl Analysis {
    /// Computes the dominator tree and retained sizes of `graph`. As in VisualVM's heap
    /// library, the tree is that of every reference, but an object that GC roots reach only
    /// through the `referent` of weak, soft, phantom or final references (`strong` does not
    /// reach it) retains nothing and adds nothing to its dominators.
    ///
    /// The references are taken out of `graph` (and freed once reversed): compute every
    /// other [`Paths`] needed before. Returns the paths along strong references too (what
    /// `Paths::new(graph, false)` gives), found while the dominators' depth-first search runs.
    pub fn new(graph: &mut HeapGraph<'_>, progress: &dyn Progress) -> (Analysis, Paths) {
        let (analysis, strong, ()) = Analysis::new_with(graph, progress, |_, _, _| ());
        (analysis, strong)
    }

    /// [`Analysis::new`], also running `alongside` with the references and the paths along
    /// strong references, on the core the depth-first search leaves idle (it is sequential),
    /// once those paths are found; returns its result too.
    pub fn new_with<R: Send>(
        graph: &mut HeapGraph<'_>,
        progress: &dyn Progress,
        alongside: impl FnOnce(&HeapGraph<'_>, Csr<'_>, &Paths) -> R + Send,
    ) -> (Analysis, Paths, R) {
        let root_nodes: Vec<u32> = graph.roots().iter().map(|r| r.node).collect();
        let edges = graph.take_references();
        let graph = &*graph;
        let (tree, (strong, extra)) = dominators_with(
            edges,
            &root_nodes,
            |csr| {
                let strong = Paths::with_csr(graph, csr, false);
                let extra = alongside(graph, csr, &strong);
                (strong, extra)
            },
            progress,
        );
        drop(root_nodes);
        let analysis = Analysis::from_tree(graph, tree, &strong, progress);
        (analysis, strong, extra)
    }

    fn from_tree(
        graph: &HeapGraph<'_>,
        tree: PreorderTree,
        strong: &Paths,
        progress: &dyn Progress,
    ) -> Analysis {
        let n = graph.len();
        let PreorderTree {
            vertex,
            idom: idom_pre,
            spare,
        } = tree;
        let reached = vertex.len();

        progress.phase("retained sizes", 2 * n as u64);
        let mut idom = spare;
        idom.fill(NONE);
        for w in 1..reached {
            idom[vertex[w] as usize] = vertex[idom_pre[w] as usize];
        }
        // Reused below for the children's offsets (fresh memory costs page faults).
        let mut spare = idom_pre;
        // Unreachable objects retain nothing (they are already garbage), as in VisualVM;
        // nor do objects reachable only through weak references.
        const RUN: usize = 1 << 16;
        let mut retained: Vec<u64> = zeroed(n);
        let classes = graph.classes().len();
        let tally = retained
            .par_chunks_mut(RUN)
            .enumerate()
            .map(|(chunk, out)| {
                let first = chunk * RUN;
                let mut t = Tally::new(classes);
                for (i, slot) in out.iter_mut().enumerate() {
                    let v = (first + i) as u32;
                    let shallow = graph.shallow(v);
                    let c = graph.class_of(v) as usize;
                    t.class_shallow[c] += shallow;
                    if idom[v as usize] == NONE {
                        continue;
                    }
                    t.class_count[c] += 1;
                    if strong.reaches(v) {
                        *slot = shallow;
                        t.objects += 1;
                        t.bytes += shallow;
                    } else {
                        t.weak_bytes += shallow;
                    }
                }
                progress.advance(out.len() as u64);
                t
            })
            .reduce(|| Tally::new(classes), Tally::add);
        for w in (1..reached).rev() {
            let v = vertex[w] as usize;
            let d = idom[v] as usize;
            if d < n {
                retained[d] += retained[v];
            }
            if w.is_multiple_of(RUN) {
                progress.advance(RUN as u64);
            }
        }
        let mut spare_kids = vertex;
        let weakly_reachable_objects = (reached as u64 - 1) - tally.objects;

        // Dominator tree children, each list in node order, the super-root's last.
        progress.phase("dominator tree children", 0);
        spare.clear();
        spare.resize(n + 2, 0);
        let mut kid_starts = spare;
        for &d in &idom {
            if d != NONE {
                kid_starts[d as usize + 1] += 1;
            }
        }
        for i in 0..=n {
            kid_starts[i + 1] += kid_starts[i];
        }
        spare_kids.truncate(reached - 1);
        let mut kids = spare_kids;
        // Fill each list using its start as a cursor, then shift the starts back.
        for (v, &d) in idom.iter().enumerate() {
            if d != NONE {
                let slot = &mut kid_starts[d as usize];
                kids[*slot as usize] = v as u32;
                *slot += 1;
            }
        }
        kid_starts.copy_within(0..=n, 1);
        kid_starts[0] = 0;

        progress.phase("class retained sizes", reached as u64);
        let loaders = LoaderGroups::new(graph);
        let (class_retained, loader_retained) = class_retained_below(
            graph,
            &kid_starts,
            &kids,
            &retained,
            |_| false,
            Some(&loaders),
            progress,
        );
        let shallow_bytes = tally.class_shallow.iter().sum();
        Analysis {
            idom,
            retained,
            kid_starts,
            kids,
            class_retained,
            loaders,
            loader_retained,
            class_count: tally.class_count,
            class_shallow: tally.class_shallow,
            objects: n as u64,
            shallow_bytes,
            reachable_objects: tally.objects,
            reachable_bytes: tally.bytes,
            weakly_reachable_objects,
            weakly_reachable_bytes: tally.weak_bytes,
        }
    }

    /// Per class, the memory retained by its instances outside the dominator subtrees of
    /// `excluded` (so class suspects can leave out what object suspects already hold).
    pub fn class_retained_excluding(&self, graph: &HeapGraph<'_>, excluded: &[u32]) -> Vec<u64> {
        let mut skip = vec![false; graph.len()];
        for &v in excluded {
            if let Some(s) = skip.get_mut(v as usize) {
                *s = true;
            }
        }
        class_retained_below(
            graph,
            &self.kid_starts,
            &self.kids,
            &self.retained,
            |v| skip[v as usize],
            None,
            &(),
        )
        .0
    }

    /// The children of `v` in the dominator tree (`v` may be the super-root, `idom.len()`).
    pub fn children(&self, v: u32) -> &[u32] {
        let v = v as usize;
        &self.kids[self.kid_starts[v] as usize..self.kid_starts[v + 1] as usize]
    }

    /// The children of `v` by decreasing retained size (ties by node).
    pub fn children_by_size(&self, v: u32) -> Vec<u32> {
        let mut kids = self.children(v).to_vec();
        kids.sort_unstable_by_key(|&k| (std::cmp::Reverse(self.retained[k as usize]), k));
        kids
    }

    /// The super-root's number.
    pub fn super_root(&self) -> u32 {
        self.idom.len() as u32
    }

    /// True if `v` is reachable from a GC root.
    pub fn is_reachable(&self, v: u32) -> bool {
        self.idom[v as usize] != NONE
    }

    /// Where the memory `v` retains accumulates: walks down the dominator tree while one
    /// child retains more than half of its parent's retained size, and stops where it fans
    /// out (a map's table, a list's array).
    pub fn accumulation_point(&self, v: u32) -> u32 {
        let mut at = v;
        loop {
            let Some(&big) = self
                .children(at)
                .iter()
                .max_by_key(|&&k| self.retained[k as usize])
            else {
                return at;
            };
            if self.retained[big as usize] * 2 <= self.retained[at as usize] {
                return at;
            }
            at = big;
        }
    }

    /// The objects retaining more than `threshold` bytes that a user would call leak
    /// suspects: below the super-root, the dominator tree is walked through every child
    /// over the threshold; class loaders, their class lists and the class objects they hold
    /// are looked through, so a big structure held by a static field is reported itself
    /// rather than the class or loader above it.
    pub fn suspects(&self, graph: &HeapGraph<'_>, threshold: u64) -> Vec<u32> {
        // Post-order over the candidate subtree (nodes over the threshold), iteratively.
        let big = |v: u32| -> Vec<u32> {
            self.children_by_size(v)
                .into_iter()
                .take_while(|&k| self.retained[k as usize] > threshold)
                .collect()
        };
        // (node, its big children, index of the next child to visit)
        let mut stack: Vec<(u32, Vec<u32>, usize)> =
            vec![(self.super_root(), big(self.super_root()), 0)];
        // Results of finished children, per stack level: (suspects, holds a class object).
        let mut results: Vec<Vec<(Vec<u32>, bool)>> = vec![Vec::new()];
        let mut out = Vec::new();
        while let Some(top) = stack.last_mut() {
            if top.2 < top.1.len() {
                let child = top.1[top.2];
                top.2 += 1;
                let kids = big(child);
                stack.push((child, kids, 0));
                results.push(Vec::new());
                continue;
            }
            let (v, _, _) = stack.pop().expect("non-empty stack");
            let done = results.pop().unwrap_or_default();
            if stack.is_empty() {
                for (suspects, _) in done {
                    out.extend(suspects);
                }
                break;
            }
            let holds_class =
                graph.is_class_object(v) || done.iter().any(|(_, has_class)| *has_class);
            let result = if holds_class {
                let mut suspects: Vec<u32> = done.into_iter().flat_map(|(s, _)| s).collect();
                if suspects.is_empty() {
                    suspects.push(v);
                }
                (suspects, true)
            } else {
                (vec![v], false)
            };
            if let Some(level) = results.last_mut() {
                level.push(result);
            }
        }
        out.sort_unstable_by_key(|&v| (std::cmp::Reverse(self.retained[v as usize]), v));
        out.dedup();
        out
    }
}

/// Totals over a run of nodes, per class and overall.
struct Tally {
    /// Strongly reachable objects and their bytes.
    objects: u64,
    bytes: u64,
    /// Bytes of the objects reachable only through weak references.
    weak_bytes: u64,
    /// Per class: shallow bytes of every instance, and reachable instances.
    class_shallow: Vec<u64>,
    class_count: Vec<u64>,
}

impl Tally {
    fn new(classes: usize) -> Tally {
        Tally {
            objects: 0,
            bytes: 0,
            weak_bytes: 0,
            class_shallow: vec![0; classes],
            class_count: vec![0; classes],
        }
    }

    fn add(mut self, other: Tally) -> Tally {
        self.objects += other.objects;
        self.bytes += other.bytes;
        self.weak_bytes += other.weak_bytes;
        for (x, y) in self.class_shallow.iter_mut().zip(&other.class_shallow) {
            *x += y;
        }
        for (x, y) in self.class_count.iter_mut().zip(&other.class_count) {
            *x += y;
        }
        self
    }
}

/// Shortest paths from GC roots: a breadth-first search from every root at once.
#[derive(Debug)]
pub struct Paths {
    parent: Vec<u32>,
    super_root: u32,
}

impl Paths {
    /// Searches from every root. Unless `include_weak`, the `referent` field of
    /// java.lang.ref.Reference objects (weak, soft, phantom and final references) is not
    /// followed, as in Eclipse MAT.
    pub fn new(graph: &HeapGraph<'_>, include_weak: bool) -> Paths {
        Paths::with_csr(graph, graph.csr(), include_weak)
    }

    /// [`Paths::new`] over the references `csr` (those of `graph`, taken out of it).
    pub fn with_csr(graph: &HeapGraph<'_>, csr: Csr<'_>, include_weak: bool) -> Paths {
        let n = graph.len();
        let super_root = n as u32;
        let mut parent = filled(n, NONE);
        let mut queue = VecDeque::new();
        for root in graph.roots() {
            if parent[root.node as usize] == NONE {
                parent[root.node as usize] = super_root;
                queue.push_back(root.node);
            }
        }
        while let Some(v) = queue.pop_front() {
            let mut skip = if include_weak {
                None
            } else {
                graph.referent(v)
            };
            for &w in csr.successors(v) {
                if skip == Some(w) {
                    skip = None;
                    continue;
                }
                if parent[w as usize] == NONE {
                    parent[w as usize] = v;
                    queue.push_back(w);
                }
            }
        }
        Paths { parent, super_root }
    }

    /// The object before `node` on its shortest path from a GC root (`None` for a root
    /// itself, or an object the search did not reach).
    pub fn parent(&self, node: u32) -> Option<u32> {
        self.parent
            .get(node as usize)
            .copied()
            .filter(|&p| p != NONE && p != self.super_root)
    }

    /// True if a GC root reaches `node` along the references searched.
    pub fn reaches(&self, node: u32) -> bool {
        self.parent.get(node as usize).is_some_and(|&p| p != NONE)
    }

    /// The path from a GC root to `target`, root first, or `None` if it is unreachable.
    pub fn path(&self, target: u32) -> Option<Vec<u32>> {
        let mut path = vec![target];
        let mut at = target;
        loop {
            let p = *self.parent.get(at as usize)?;
            if p == NONE {
                return None;
            }
            if p == self.super_root {
                break;
            }
            path.push(p);
            at = p;
            if path.len() > self.parent.len() {
                return None;
            }
        }
        path.reverse();
        Some(path)
    }
}

/// The GC root records of `node`, stack roots first.
pub fn roots_of<'g>(graph: &'g HeapGraph<'_>, node: u32) -> Vec<&'g Root> {
    let mut roots: Vec<&Root> = graph.roots().iter().filter(|r| r.node == node).collect();
    roots.sort_by_key(|r| (!r.kind.is_stack(), r.kind));
    roots
}

/// The class loaders of a dump: the distinct loader ids of its classes (0, the boot loader,
/// first) and the loader of each class, by index.
#[derive(Debug, Default, Clone)]
pub struct LoaderGroups {
    /// Loader object ids; index 0 is the boot loader (id 0).
    pub ids: Vec<u64>,
    /// Per class index: its loader's index in `ids`.
    pub of_class: Vec<u32>,
}

impl LoaderGroups {
    /// The loaders of `graph`'s classes.
    pub fn new(graph: &HeapGraph<'_>) -> LoaderGroups {
        let mut ids = vec![0u64];
        let mut index: rustc_hash::FxHashMap<u64, u32> = rustc_hash::FxHashMap::default();
        index.insert(0, 0);
        let of_class = graph
            .classes()
            .iter()
            .map(|c| {
                *index.entry(c.loader).or_insert_with(|| {
                    ids.push(c.loader);
                    ids.len() as u32 - 1
                })
            })
            .collect();
        LoaderGroups { ids, of_class }
    }
}

/// Per class, the retained sizes of the class's instances that have none of their class
/// above them in the dominator tree: depth-first walks counting, per class, the instances
/// on the current path. Subtrees whose top `skip` accepts are left out. Big nodes' children
/// are shared among walks on every core, each starting with the counts of its path. With
/// `loaders`, the same per class loader (instances of the classes each defined) too.
fn class_retained_below(
    graph: &HeapGraph<'_>,
    kid_starts: &[u32],
    kids: &[u32],
    retained: &[u64],
    skip: impl Fn(u32) -> bool + Sync,
    loaders: Option<&LoaderGroups>,
    progress: &dyn Progress,
) -> (Vec<u64>, Vec<u64>) {
    let n = graph.len();
    let classes = graph.classes().len();
    let groups = loaders.map_or(0, |l| l.ids.len());
    // Loader counts follow the class counts in the walks' arrays.
    let group_of: Vec<u32> = match loaders {
        Some(l) => l.of_class.iter().map(|&g| classes as u32 + g).collect(),
        None => Vec::new(),
    };
    let whole: u64 = kids[kid_starts[n] as usize..kid_starts[n + 1] as usize]
        .iter()
        .map(|&k| retained[k as usize])
        .sum();
    let walk = ClassWalk {
        graph,
        kid_starts,
        kids,
        retained,
        skip,
        progress,
        // Nodes retaining less than this share their children with no other walk.
        split: (whole / 512).max(1),
        group_of: &group_of,
        total: Mutex::new(vec![0u64; classes + groups]),
    };
    rayon::scope(|scope| {
        walk.run(
            scope,
            n as u32,
            kid_starts[n],
            kid_starts[n + 1],
            vec![0u32; classes + groups],
        );
    });
    let mut total = walk.total.into_inner().unwrap_or_else(|e| e.into_inner());
    let by_loader = total.split_off(classes);
    (total, by_loader)
}

/// What the walks of [`class_retained_below`] share.
struct ClassWalk<'a, 'g, F> {
    graph: &'a HeapGraph<'g>,
    kid_starts: &'a [u32],
    kids: &'a [u32],
    retained: &'a [u64],
    skip: F,
    progress: &'a dyn Progress,
    split: u64,
    /// Per class: the index of its loader's count (after the classes'), if loaders are
    /// counted.
    group_of: &'a [u32],
    total: Mutex<Vec<u64>>,
}

impl<'a, 'g, F: Fn(u32) -> bool + Sync> ClassWalk<'a, 'g, F> {
    /// Walks the subtrees of `kids[from..to]`, children of `parent`, with `on_path` the
    /// counts of the path's classes down to `parent`, and adds its sums to the total.
    fn run<'s>(
        &'s self,
        scope: &rayon::Scope<'s>,
        parent: u32,
        from: u32,
        to: u32,
        mut on_path: Vec<u32>,
    ) {
        const PARTS: u32 = 8;
        let mut sums = vec![0u64; on_path.len()];
        let mut visited = 0u64;
        // (node, next child, end of its children); the first entry is `parent`'s range.
        let mut stack: Vec<(u32, u32, u32)> = vec![(parent, from, to)];
        while let Some(top) = stack.last_mut() {
            let (v, at, end) = *top;
            if at < end {
                top.1 += 1;
                let w = self.kids[at as usize];
                if (self.skip)(w) {
                    continue;
                }
                let c = self.graph.class_of(w) as usize;
                if on_path[c] == 0 {
                    sums[c] += self.retained[w as usize];
                }
                on_path[c] += 1;
                if let Some(&g) = self.group_of.get(c) {
                    let g = g as usize;
                    if on_path[g] == 0 {
                        sums[g] += self.retained[w as usize];
                    }
                    on_path[g] += 1;
                }
                visited += 1;
                if visited.is_multiple_of(1 << 16) {
                    self.progress.advance(1 << 16);
                }
                let (first, last) = (self.kid_starts[w as usize], self.kid_starts[w as usize + 1]);
                let mut mine = last;
                if last - first >= 2 && self.retained[w as usize] >= self.split {
                    // Share the children: this walk keeps the first part.
                    let part = (last - first).div_ceil(PARTS);
                    mine = first + part;
                    let mut start = mine;
                    while start < last {
                        let stop = (start + part).min(last);
                        let path = on_path.clone();
                        scope.spawn(move |scope| self.run(scope, w, start, stop, path));
                        start = stop;
                    }
                }
                stack.push((w, first, mine));
            } else {
                stack.pop();
                if !stack.is_empty() {
                    let c = self.graph.class_of(v) as usize;
                    on_path[c] -= 1;
                    if let Some(&g) = self.group_of.get(c) {
                        on_path[g as usize] -= 1;
                    }
                }
            }
        }
        self.progress.advance(visited % (1 << 16));
        let mut total = self.total.lock().unwrap_or_else(|e| e.into_inner());
        for (t, s) in total.iter_mut().zip(&sums) {
            *t += s;
        }
    }
}
