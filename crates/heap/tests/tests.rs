//! Tests of hprof-heap: the dominator tree against its definition on random graphs, and
//! the graph, retained sizes and paths of small heap dumps written with hprof-format.

mod dominator_props;
mod sites_join;
mod small_dumps;
