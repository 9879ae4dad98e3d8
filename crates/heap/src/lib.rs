//! The object graph of an HPROF heap dump and what it tells about memory: the dominator
//! tree, retained sizes (per object and per class), shortest paths from GC roots and
//! leak suspects with their accumulation points.
//!
//! [`HeapGraph::build`] indexes a dump held in memory (usually a memory map) without
//! copying object data: objects become `u32` nodes numbered in id order, references a CSR
//! edge list. [`Analysis::new`] computes the dominator tree and retained sizes.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod compact;
pub mod dominators;
mod graph;
mod progress;

pub use graph::{Class, ClassKind, Field, FrameInfo, HeapGraph, Result, Root, RootKind};
pub use progress::Progress;
mod analysis;
mod loaders;
mod sites;
mod waste;

pub use analysis::{Analysis, LoaderGroups, Paths, roots_of};
pub use loaders::{
    DuplicateClass, LoaderReport, LoaderRow, loader_name, loader_report, loaders_in,
};
pub use sites::{Breakdown, FrameRow, Site, SiteJoin, SiteRow};
pub use waste::{
    CollectionKind, CollectionWaste, DuplicateString, DuplicateStrings, Fill, NullArrays, Tally,
    WasteReport, waste,
};
