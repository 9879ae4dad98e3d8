//! Small heap dumps written with hprof-format: the graph, retained sizes and paths.
