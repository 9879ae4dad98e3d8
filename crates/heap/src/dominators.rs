//! Owns the dominator computation: an iterative semi-NCA (Lengauer-Tarjan's semidominators,
//! immediate dominators by nearest common ancestor) over a graph in CSR form, arranged so
//! that few per-node arrays live at once:
//!
//! 1. a depth-first search from the super-root gives every node its preorder number (`pre`)
//!    and its DFS parent (`parent`, in preorder numbers);
//! 2. the forward edges are renumbered and compacted in place, keeping only the edges that
//!    can lower a semidominator: a tree edge (and any copy of it) gives exactly the parent,
//!    the value a semidominator starts from, so it is dropped. The predecessor lists are
//!    built from what is left, and the forward edges are freed;
//! 3. semidominators are computed in reverse preorder with a link-eval forest. Each node's
//!    semidominator goes where its predecessor list started (that slot is never read
//!    again), and the forest keeps, per node, the least semidominator on its compressed path
//!    rather than the vertex that has it;
//! 4. immediate dominators climb from the DFS parent, in place of the parent array.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use crate::compact::{filled, mapped_capacity, zeroed};
use crate::progress::Progress;

/// "No node": unreached, or the super-root's own dominator.
pub const NONE: u32 = u32::MAX;

/// A directed graph in compressed sparse row form: the successors of `v` are
/// `targets[starts[v]..starts[v + 1]]`.
#[derive(Debug, Clone, Copy)]
pub struct Csr<'g> {
    /// `n + 1` edge offsets.
    pub starts: &'g [u32],
    /// Edge targets.
    pub targets: &'g [u32],
}

impl<'g> Csr<'g> {
    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// True if the graph has no node.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The successors of `v` (none for a node out of range).
    #[inline]
    pub fn successors(&self, v: u32) -> &'g [u32] {
        let v = v as usize;
        match (self.starts.get(v), self.starts.get(v + 1)) {
            (Some(&a), Some(&b)) => &self.targets[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// A graph's edges in CSR form, owned (see [`Csr`]).
#[derive(Debug, Default, Clone)]
pub struct Edges {
    /// `n + 1` edge offsets.
    pub starts: Vec<u32>,
    /// Edge targets.
    pub targets: Vec<u32>,
}

impl Edges {
    /// The edges, borrowed.
    pub fn csr(&self) -> Csr<'_> {
        Csr {
            starts: &self.starts,
            targets: &self.targets,
        }
    }
}

/// The dominator tree of a graph below a virtual super-root whose successors are `roots`.
#[derive(Debug, Clone)]
pub struct Dominators {
    /// The immediate dominator of every node: a node, [`Dominators::super_root`] for nodes
    /// only the super-root dominates, or [`NONE`] for nodes not reachable from the roots.
    pub idom: Vec<u32>,
    /// The reachable nodes in depth-first preorder from the super-root (which is left out):
    /// every node comes after its dominator.
    pub preorder: Vec<u32>,
}

impl Dominators {
    /// The number standing for the virtual super-root: the graph's node count.
    pub fn super_root(&self) -> u32 {
        self.idom.len() as u32
    }
}

/// The dominator tree in preorder numbers, as computed: the super-root is number 0.
#[derive(Debug)]
pub struct PreorderTree {
    /// `vertex[i]`: the node numbered `i` (`vertex[0]` is the super-root, `n`).
    pub vertex: Vec<u32>,
    /// `idom[i]`: the preorder number of the immediate dominator of the node numbered `i`
    /// (`idom[0]` is 0).
    pub idom: Vec<u32>,
    /// An array of one `u32` per node of the graph whose content is meaningless, to reuse.
    pub spare: Vec<u32>,
}

/// Computes the dominator tree of `graph` below a virtual super-root with an edge to every
/// node of `roots` (duplicates allowed).
pub fn dominators(graph: Csr<'_>, roots: &[u32]) -> Dominators {
    let n = graph.len();
    let edges = Edges {
        starts: graph.starts.to_vec(),
        targets: graph.targets.to_vec(),
    };
    let (tree, ()) = dominators_with(edges, roots, |_| (), &());
    let mut idom = vec![NONE; n];
    for (i, &v) in tree.vertex.iter().enumerate().skip(1) {
        idom[v as usize] = tree.vertex[tree.idom[i] as usize];
    }
    let mut preorder = tree.vertex;
    preorder.remove(0);
    Dominators { idom, preorder }
}

/// The dominator tree of `edges` in preorder numbers, freeing the edges on the way; runs
/// `alongside` on the edges on another thread while the depth-first search (which is
/// sequential) runs, and returns its result too.
pub fn dominators_with<R: Send>(
    edges: Edges,
    roots: &[u32],
    alongside: impl FnOnce(Csr<'_>) -> R + Send,
    progress: &dyn Progress,
) -> (PreorderTree, R) {
    let n = edges.starts.len().saturating_sub(1);
    progress.phase("dominator tree: depth-first search", n as u64);
    let ((pre, parent), result) = rayon::join(
        || depth_first(edges.csr(), roots, progress),
        || alongside(edges.csr()),
    );
    progress.phase("dominator tree: predecessors", n as u64);
    let (mut semi, preds, spare) = predecessors(edges, roots, &pre, &parent, progress);
    // `pre` is kept to list the vertices at the end.
    progress.phase("dominator tree: semidominators", parent.len() as u64);
    let spare = semidominators(&mut semi, preds, &parent, spare, progress);
    let mut idom = parent;
    progress.phase("dominator tree: immediate dominators", 0);
    for w in 1..idom.len() {
        let mut d = idom[w];
        while d > semi[w] {
            d = idom[d as usize];
        }
        idom[w] = d;
    }
    drop(semi);
    // The forest's spare array becomes the vertex list (fresh memory costs page faults).
    let mut vertex = spare;
    vertex[0] = n as u32;
    for (v, &p) in pre.iter().enumerate() {
        if p != NONE {
            vertex[p as usize] = v as u32;
        }
    }
    (
        PreorderTree {
            vertex,
            idom,
            spare: pre,
        },
        result,
    )
}

/// Depth-first preorder from the super-root, iteratively: returns `pre` (every node's
/// preorder number, the super-root being 0, [`NONE`] for unreached nodes) and `parent`
/// (per preorder number, the DFS parent's number; `parent[0]` is 0).
fn depth_first(graph: Csr<'_>, roots: &[u32], progress: &dyn Progress) -> (Vec<u32>, Vec<u32>) {
    let n = graph.len();
    let mut pre = filled(n, NONE);
    // Reserved whole: pages never written are never made resident.
    let mut parent: Vec<u32> = Vec::with_capacity(mapped_capacity::<u32>(n + 1));
    parent.push(0);
    // (preorder number, next edge, end of edges) per level; the super-root's edges are
    // the roots.
    let mut stack: Vec<(u32, u32, u32)> = Vec::new();
    let mut root_at = 0usize;
    let step = 1 << 16;
    loop {
        let next = match stack.last_mut() {
            Some(top) if top.1 < top.2 => {
                let w = graph.targets[top.1 as usize];
                top.1 += 1;
                Some((w, top.0))
            }
            Some(_) => {
                stack.pop();
                None
            }
            None => match roots.get(root_at) {
                Some(&r) => {
                    root_at += 1;
                    Some((r, 0))
                }
                None => break,
            },
        };
        if let Some((w, from)) = next
            && (w as usize) < n
            && pre[w as usize] == NONE
        {
            let number = parent.len() as u32;
            pre[w as usize] = number;
            parent.push(from);
            if number.is_multiple_of(step) {
                progress.advance(step as u64);
            }
            stack.push((
                number,
                graph.starts[w as usize],
                graph.starts[w as usize + 1],
            ));
        }
    }
    parent.shrink_to_fit();
    (pre, parent)
}

/// The predecessor lists, in preorder numbers, of the edges that can lower a
/// semidominator (see the module's comment), as `(starts, sources, spare)`; `starts` has
/// one entry per reached node and one more; `spare`, the edges' old offsets (one `u32` per
/// node and one more), is for reuse. Frees the rest of `edges`.
fn predecessors(
    edges: Edges,
    roots: &[u32],
    pre: &[u32],
    parent: &[u32],
    progress: &dyn Progress,
) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let n = pre.len();
    let reached = parent.len();
    let Edges {
        mut starts,
        mut targets,
    } = edges;
    // Renumber every target in place, NONE for the edges to drop (from unreached sources,
    // tree edges and their copies, self-loops), counting what is kept per run of nodes.
    const RUN: usize = 1 << 14;
    let kept: Vec<u32> = {
        let mut slices = Vec::with_capacity(n.div_ceil(RUN));
        let mut rest = &mut targets[..];
        let mut at = 0usize;
        for first in (0..n).step_by(RUN) {
            let end = starts[(first + RUN).min(n)] as usize;
            let (head, tail) = rest.split_at_mut(end - at);
            slices.push((first, head));
            rest = tail;
            at = end;
        }
        let starts = &starts;
        slices
            .into_par_iter()
            .map(|(first, slice)| {
                let base = starts[first] as usize;
                let mut kept = 0u32;
                for v in first..(first + RUN).min(n) {
                    let pv = pre[v];
                    let range = starts[v] as usize - base..starts[v + 1] as usize - base;
                    for t in &mut slice[range] {
                        let w = if pv == NONE {
                            NONE
                        } else {
                            pre.get(*t as usize).copied().unwrap_or(NONE)
                        };
                        *t = if w == NONE || w == pv || parent[w as usize] == pv {
                            NONE
                        } else {
                            kept += 1;
                            w
                        };
                    }
                }
                progress.advance((first + RUN).min(n) as u64 - first as u64);
                kept
            })
            .collect()
    };
    // Compact in place: `starts` becomes the kept edges' offsets.
    let total: u64 = kept.iter().map(|&k| u64::from(k)).sum();
    let mut write = 0usize;
    let mut begin = 0usize;
    for v in 0..n {
        let end = starts[v + 1] as usize;
        starts[v] = write as u32;
        for i in begin..end {
            let t = targets[i];
            if t != NONE {
                targets[write] = t;
                write += 1;
            }
        }
        begin = end;
    }
    starts[n] = write as u32;
    debug_assert_eq!(write as u64, total);
    targets.truncate(write);
    targets.shrink_to_fit();

    // A root that the search reached from another node first has the super-root (0) as a
    // predecessor besides its parent.
    let extra: Vec<u32> = roots
        .iter()
        .filter_map(|&r| pre.get(r as usize).copied())
        .filter(|&w| w != NONE && parent[w as usize] != 0)
        .collect();

    // Count, then fill, the predecessor lists.
    let mut counts: Vec<AtomicU32> = Vec::with_capacity(mapped_capacity::<u32>(reached + 1));
    counts.extend((0..reached + 1).map(|_| AtomicU32::new(0)));
    targets.par_chunks(1 << 16).for_each(|chunk| {
        for &w in chunk {
            counts[w as usize + 1].fetch_add(1, Ordering::Relaxed);
        }
    });
    for &w in &extra {
        counts[w as usize + 1].fetch_add(1, Ordering::Relaxed);
    }
    let mut pred_starts: Vec<u32> = counts.into_iter().map(AtomicU32::into_inner).collect();
    for i in 0..reached {
        pred_starts[i + 1] += pred_starts[i];
    }
    let mut preds: Vec<u32> = zeroed(pred_starts[reached] as usize);
    // Fill each list using its start as a cursor; afterwards `pred_starts[i]` holds the
    // end of i's list, the start of i + 1, and one shift restores the starts.
    for &w in &extra {
        let slot = &mut pred_starts[w as usize];
        preds[*slot as usize] = 0;
        *slot += 1;
    }
    drop(extra);
    for v in 0..n {
        let pv = pre[v];
        if pv == NONE {
            continue;
        }
        for &w in &targets[starts[v] as usize..starts[v + 1] as usize] {
            let slot = &mut pred_starts[w as usize];
            preds[*slot as usize] = pv;
            *slot += 1;
        }
    }
    pred_starts.copy_within(0..reached, 1);
    pred_starts[0] = 0;
    // The edges' offsets are spare now.
    (pred_starts, preds, starts)
}

/// Semidominators in reverse preorder. On entry `semi` holds the predecessor lists' starts
/// (see [`predecessors`]); on return `semi[w]` is the semidominator of `w` (`w >= 1`).
/// `spare` (at least one `u32` per reached node) becomes the forest's ancestors. Returns an
/// array of one `u32` per reached node to reuse.
fn semidominators(
    semi: &mut [u32],
    preds: Vec<u32>,
    parent: &[u32],
    spare: Vec<u32>,
    progress: &dyn Progress,
) -> Vec<u32> {
    let reached = parent.len();
    // The link-eval forest: a vertex is linked once processed, so "linked" is "numbered
    // above the vertex being processed", and neither array needs a mark for unlinked
    // vertices. `best[x]`: the least semidominator on x's compressed path.
    let mut ancestor = spare;
    ancestor.truncate(reached);
    let mut best: Vec<u32> = zeroed(reached);
    let mut path: Vec<u32> = Vec::new();
    let mut end = semi[reached] as usize;
    let step = 1 << 16;
    for w in (1..reached).rev() {
        let start = semi[w] as usize;
        let mut s = parent[w];
        for &v in &preds[start..end] {
            let candidate = if v <= w as u32 {
                v
            } else {
                eval(v, w as u32, &mut ancestor, &mut best, &mut path)
            };
            s = s.min(candidate);
        }
        end = start;
        semi[w] = s;
        best[w] = s;
        ancestor[w] = parent[w];
        if w.is_multiple_of(step) {
            progress.advance(step as u64);
        }
    }
    drop(ancestor);
    best
}

/// The least semidominator on the forest path from the linked vertex `v` up to (not
/// including) its forest root, compressing the path; vertices above `w` are linked.
#[inline]
fn eval(v: u32, w: u32, ancestor: &mut [u32], best: &mut [u32], path: &mut Vec<u32>) -> u32 {
    let mut u = v;
    while ancestor[u as usize] > w {
        path.push(u);
        u = ancestor[u as usize];
    }
    // `path` holds the vertices whose ancestor is linked; compress it top-down.
    while let Some(x) = path.pop() {
        let a = ancestor[x as usize] as usize;
        if best[a] < best[x as usize] {
            best[x as usize] = best[a];
        }
        ancestor[x as usize] = ancestor[a];
    }
    best[v as usize]
}

/// Dominators by definition, for tests: `v` dominates `w` if `w` is reachable from the
/// roots and not when `v` is removed. Returns the immediate dominator of every node as
/// [`dominators`] does. Quadratic: small graphs only.
pub fn naive_dominators(graph: Csr<'_>, roots: &[u32]) -> Vec<u32> {
    let n = graph.len();
    let reach = |removed: Option<u32>| -> Vec<bool> {
        let mut seen = vec![false; n];
        let mut stack: Vec<u32> = roots
            .iter()
            .copied()
            .filter(|&r| Some(r) != removed)
            .collect();
        while let Some(v) = stack.pop() {
            if seen[v as usize] {
                continue;
            }
            seen[v as usize] = true;
            for &w in graph.successors(v) {
                if Some(w) != removed && !seen[w as usize] {
                    stack.push(w);
                }
            }
        }
        seen
    };
    let all = reach(None);
    // dom[w] = the set of nodes dominating w (w itself excluded).
    let mut doms: Vec<Vec<u32>> = vec![Vec::new(); n];
    for v in 0..n as u32 {
        if !all[v as usize] {
            continue;
        }
        let without = reach(Some(v));
        for w in 0..n {
            if all[w] && !without[w] && w as u32 != v {
                doms[w].push(v);
            }
        }
    }
    // The immediate dominator is the dominator dominated by all the others: the one with
    // the most dominators of its own.
    (0..n)
        .map(|w| {
            if !all[w] {
                NONE
            } else {
                doms[w]
                    .iter()
                    .copied()
                    .max_by_key(|&d| doms[d as usize].len())
                    .unwrap_or(n as u32)
            }
        })
        .collect()
}
