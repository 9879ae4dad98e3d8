//! The semi-NCA dominator tree equals the definition ("v dominates w iff w is unreachable
//! from the roots once v is removed") on thousands of random graphs.

use hprof_heap::dominators::{Csr, dominators, naive_dominators};
use proptest::prelude::*;

/// A random graph: a node count, edges and roots (some nodes may be unreachable).
fn graph() -> impl Strategy<Value = (usize, Vec<(u32, u32)>, Vec<u32>)> {
    (1usize..40).prop_flat_map(|n| {
        let node = 0..n as u32;
        (
            Just(n),
            proptest::collection::vec((node.clone(), node.clone()), 0..n * 3),
            proptest::collection::vec(node, 1..4),
        )
    })
}

fn csr(n: usize, edges: &[(u32, u32)]) -> (Vec<u32>, Vec<u32>) {
    let mut starts = vec![0u32; n + 1];
    for &(from, _) in edges {
        starts[from as usize + 1] += 1;
    }
    for i in 0..n {
        starts[i + 1] += starts[i];
    }
    let mut fill = starts.clone();
    let mut targets = vec![0u32; edges.len()];
    for &(from, to) in edges {
        targets[fill[from as usize] as usize] = to;
        fill[from as usize] += 1;
    }
    (starts, targets)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn semi_nca_equals_the_definition((n, edges, roots) in graph()) {
        let (starts, targets) = csr(n, &edges);
        let g = Csr { starts: &starts, targets: &targets };
        let fast = dominators(g, &roots);
        let naive = naive_dominators(g, &roots);
        prop_assert_eq!(&fast.idom, &naive);
        // The preorder lists every reachable node once, each after its dominator.
        let mut position = vec![usize::MAX; n];
        for (i, &v) in fast.preorder.iter().enumerate() {
            prop_assert_eq!(position[v as usize], usize::MAX);
            position[v as usize] = i;
        }
        for v in 0..n {
            let d = fast.idom[v];
            prop_assert_eq!(position[v] == usize::MAX, d == u32::MAX);
            if d != u32::MAX && (d as usize) < n {
                prop_assert!(position[d as usize] < position[v]);
            }
        }
    }
}

#[test]
fn long_chains_do_not_overflow_the_stack() {
    // 1,000,000 nodes in a chain with a back edge to the start: every node dominates
    // the next, and recursion would overflow.
    let n = 1_000_000usize;
    let mut edges: Vec<(u32, u32)> = (0..n as u32 - 1).map(|i| (i, i + 1)).collect();
    edges.push((n as u32 - 1, 0));
    let (starts, targets) = csr(n, &edges);
    let d = dominators(
        Csr {
            starts: &starts,
            targets: &targets,
        },
        &[0],
    );
    assert_eq!(d.idom[0], n as u32);
    assert!((1..n).all(|i| d.idom[i] == i as u32 - 1));
}
