//! Prints "<id> <shallow> <retained>" for every object of a dump (ids in decimal), the
//! format of java/tools/RetainedCheck.java, to compare with VisualVM's heap library by hand.

use hprof_heap::{Analysis, HeapGraph};

fn main() {
    let path = std::env::args().nth(1).expect("usage: sizes FILE");
    let bytes = std::fs::read(&path).expect("readable file");
    let mut graph = HeapGraph::build(&bytes, &()).expect("valid HPROF");
    let (analysis, _strong) = Analysis::new(&mut graph, &());
    for id in std::env::args().skip(2) {
        referrers(&graph, id.parse().expect("decimal id"));
    }
    for v in 0..graph.len() as u32 {
        println!(
            "{} {} {} {} {}",
            graph.id(v),
            graph.shallow(v),
            analysis.retained[v as usize],
            analysis.idom[v as usize],
            graph.class(v).name
        );
    }
}

/// Prints who refers to the object `id`, for debugging by hand.
#[allow(dead_code)]
fn referrers(graph: &HeapGraph<'_>, id: u64) {
    let target = graph.node(id).expect("object in the dump");
    for v in 0..graph.len() as u32 {
        if graph.csr().successors(v).contains(&target) {
            eprintln!(
                "referrer {} {} {}",
                graph.id(v),
                graph.class(v).name,
                graph.reference_name(v, target)
            );
        }
    }
    for r in graph.roots().iter().filter(|r| r.node == target) {
        eprintln!("root {:?}", r);
    }
}
