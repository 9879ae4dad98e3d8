//! Owns the dominator computation: an iterative semi-NCA (Lengauer-Tarjan's semidominators,
//! immediate dominators by nearest common ancestor) over a graph in CSR form.

use rayon::prelude::*;

/// "No node": unreached, or the super-root's own dominator.
pub const NONE: u32 = u32::MAX;

/// A directed graph in compressed sparse row form: the successors of `v` are
/// `targets[starts[v]..starts[v + 1]]`.
#[derive(Debug, Clone, Copy)]
pub struct Csr<'g> {
    /// `n + 1` edge offsets.
    pub starts: &'g [u64],
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

/// Computes the dominator tree of `graph` below a virtual super-root with an edge to every
/// node of `roots` (duplicates allowed).
pub fn dominators(graph: Csr<'_>, roots: &[u32]) -> Dominators {
    dominators_owned(graph.starts.to_vec(), graph.targets.to_vec(), roots)
}

/// [`dominators`] of the graph `(starts, targets)`, which it frees as soon as it has built
/// the reverse edges, so the two are never held together with the rest of the work arrays.
pub fn dominators_owned(starts: Vec<u64>, targets: Vec<u32>, roots: &[u32]) -> Dominators {
    dominators_with(starts, targets, roots, |_| ()).0
}

/// [`dominators_owned`], running `alongside` on the graph on another thread while the
/// depth-first search (which is sequential) runs; returns its result too.
pub fn dominators_with<R: Send>(
    starts: Vec<u64>,
    targets: Vec<u32>,
    roots: &[u32],
    alongside: impl FnOnce(Csr<'_>) -> R + Send,
) -> (Dominators, R) {
    let graph = Csr {
        starts: &starts,
        targets: &targets,
    };
    let ((pre, vertex, parent), result) =
        rayon::join(|| depth_first(graph, roots), || alongside(graph));
    let dominators = from_preorder(starts, targets, roots, pre, vertex, parent);
    (dominators, result)
}

/// Depth-first preorder from the super-root, iteratively: `pre[v]` is v's preorder number
/// (the super-root is 0), `vertex[i]` the node numbered i, `parent[i]` its DFS parent's number.
fn depth_first(graph: Csr<'_>, roots: &[u32]) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let n = graph.len();
    let root = n as u32;
    let mut pre = vec![NONE; n + 1];
    let mut vertex: Vec<u32> = Vec::with_capacity(n + 1);
    let mut parent: Vec<u32> = Vec::with_capacity(n + 1);
    pre[n] = 0;
    vertex.push(root);
    parent.push(0);
    let mut stack: Vec<(u32, u64)> = Vec::new();
    let successors = |v: u32, at: u64| -> Option<u32> {
        if v == root {
            roots.get(at as usize).copied()
        } else {
            let start = graph.starts[v as usize];
            let end = graph.starts[v as usize + 1];
            (start + at < end).then(|| graph.targets[(start + at) as usize])
        }
    };
    stack.push((root, 0));
    while let Some(top) = stack.last_mut() {
        let (v, at) = *top;
        match successors(v, at) {
            Some(w) => {
                top.1 += 1;
                if (w as usize) < n && pre[w as usize] == NONE {
                    pre[w as usize] = vertex.len() as u32;
                    parent.push(pre[v as usize]);
                    vertex.push(w);
                    stack.push((w, 0));
                }
            }
            None => {
                stack.pop();
            }
        }
    }
    (pre, vertex, parent)
}

/// The rest of semi-NCA after the depth-first search: predecessors, semidominators and
/// immediate dominators.
fn from_preorder(
    starts: Vec<u64>,
    targets: Vec<u32>,
    roots: &[u32],
    pre: Vec<u32>,
    mut vertex: Vec<u32>,
    parent: Vec<u32>,
) -> Dominators {
    let n = starts.len().saturating_sub(1);
    let reached = vertex.len();

    // Renumber the edge targets and roots in preorder (unreached: NONE) and let go of `pre`,
    // so it is not held with both edge lists.
    let mut targets = targets;
    targets
        .par_iter_mut()
        .for_each(|t| *t = pre.get(*t as usize).copied().unwrap_or(NONE));
    let root_pre: Vec<u32> = roots
        .iter()
        .filter(|&&r| (r as usize) < n)
        .map(|&r| pre[r as usize])
        .collect();
    drop(pre);
    let graph = Csr {
        starts: &starts,
        targets: &targets,
    };

    // Predecessors in preorder numbering, as CSR.
    let mut pred_starts = vec![0u32; reached + 1];
    let mut count_edge = |pw: u32| {
        if pw != NONE {
            pred_starts[pw as usize + 1] += 1;
        }
    };
    for &r in &root_pre {
        count_edge(r);
    }
    for &v in &vertex[1..] {
        for &w in graph.successors(v) {
            count_edge(w);
        }
    }
    for i in 0..reached {
        pred_starts[i + 1] = pred_starts[i + 1]
            .checked_add(pred_starts[i])
            .expect("fewer than 2^32 references");
    }
    // Fill each node's slice using its start as a cursor; afterwards `pred_starts[i]` holds
    // the end of i's slice, i.e. the start of i + 1, and one shift restores the starts.
    let mut preds = vec![0u32; pred_starts[reached] as usize];
    let mut add_edge = |from: u32, pw: u32| {
        if pw != NONE {
            let slot = &mut pred_starts[pw as usize];
            preds[*slot as usize] = from;
            *slot += 1;
        }
    };
    for &r in &root_pre {
        add_edge(0, r);
    }
    for (i, &v) in vertex.iter().enumerate().skip(1) {
        for &w in graph.successors(v) {
            add_edge(i as u32, w);
        }
    }
    pred_starts.copy_within(0..reached, 1);
    pred_starts[0] = 0;
    drop(root_pre);
    drop(starts);
    drop(targets);

    // Semidominators, processing vertices in reverse preorder, with a link-eval forest
    // using path compression.
    let mut semi: Vec<u32> = (0..reached as u32).collect();
    let mut label: Vec<u32> = (0..reached as u32).collect();
    let mut ancestor = vec![NONE; reached];
    let mut path: Vec<u32> = Vec::new();
    for w in (1..reached).rev() {
        let mut s = semi[w];
        for &v in &preds[pred_starts[w] as usize..pred_starts[w + 1] as usize] {
            let u = eval(v, &mut ancestor, &mut label, &semi, &mut path);
            s = s.min(semi[u as usize]);
        }
        semi[w] = s;
        ancestor[w] = parent[w];
    }
    drop(preds);
    drop(pred_starts);
    drop(label);
    drop(ancestor);

    // Immediate dominators: start at the DFS parent and climb while above the semidominator.
    let mut idom_pre = parent;
    for w in 1..reached {
        let mut d = idom_pre[w];
        while d > semi[w] {
            d = idom_pre[d as usize];
        }
        idom_pre[w] = d;
    }
    let mut idom = vec![NONE; n];
    for w in 1..reached {
        idom[vertex[w] as usize] = vertex[idom_pre[w] as usize];
    }
    vertex.remove(0);
    Dominators {
        idom,
        preorder: vertex,
    }
}

/// The vertex of least semidominator on the forest path to `v`, compressing the path.
#[inline]
fn eval(v: u32, ancestor: &mut [u32], label: &mut [u32], semi: &[u32], path: &mut Vec<u32>) -> u32 {
    if ancestor[v as usize] == NONE {
        return v;
    }
    // Collect the path up to the vertex just below the forest root, then compress it top-down.
    let mut u = v;
    while ancestor[ancestor[u as usize] as usize] != NONE {
        path.push(u);
        u = ancestor[u as usize];
    }
    while let Some(x) = path.pop() {
        let a = ancestor[x as usize] as usize;
        if semi[label[a] as usize] < semi[label[x as usize] as usize] {
            label[x as usize] = label[a];
        }
        ancestor[x as usize] = ancestor[a];
    }
    label[v as usize]
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
