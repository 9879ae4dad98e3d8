//! The object graph of an HPROF heap dump and what it tells about memory: the dominator
//! tree, retained sizes (per object and per class), shortest paths from GC roots and
//! leak suspects with their accumulation points.
//!
//! [`HeapGraph::build`] indexes a dump held in memory (usually a memory map) without
//! copying object data: objects become `u32` nodes numbered in id order, references a CSR
//! edge list. [`Analysis::new`] computes the dominator tree and retained sizes.
//!
//! [`Chains`] groups the retained memory by its path of classes and fields from the GC roots;
//! [`HeapSummary`] keeps what a comparison needs of a dump, and [`HeapDiff`] compares two
//! dumps (classes and chains), rendered by [`diff::report`].

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod compact;
pub mod dominators;
mod graph;
mod progress;

pub use graph::{Class, ClassKind, Field, FrameInfo, HeapGraph, Result, Root, RootKind};
pub use progress::Progress;
mod analysis;
pub mod chains;
pub mod diff;

pub use analysis::{Analysis, Paths, roots_of};
pub use chains::Chains;
pub use diff::{HeapDiff, HeapSummary};
