//! The object graph of an HPROF heap dump and what it tells about memory: the dominator
//! tree, retained sizes (per object, per class and per class loader), shortest paths from
//! GC roots, leak suspects with their accumulation points, waste (duplicate strings,
//! collections with more room than elements, arrays mostly null) and, for the hprof
//! agent's dumps, the allocation sites of what each part of the heap holds.
//!
//! [`HeapGraph::build`] indexes a dump held in memory (usually a memory map) without
//! copying object data: objects become `u32` nodes numbered in id order, references a CSR
//! edge list. [`Analysis::new`] computes the dominator tree and retained sizes
//! ([`Analysis::new_with`] runs [`waste`] beside it); [`SiteJoin`] reads the agent's
//! allocation sites.
//!
//! [`Chains`] groups the retained memory by its path of classes and fields from the GC roots;
//! [`HeapSummary`] keeps what a comparison needs of a dump, and [`HeapDiff`] compares two
//! dumps (classes and chains), rendered by [`diff::report`].

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod anomalies;
mod compact;
pub mod dominators;
mod graph;
mod progress;

pub use anomalies::{Anomalies, Anomaly};
pub use graph::{Class, ClassKind, Field, FrameInfo, HeapGraph, Result, Root, RootKind};
pub use progress::Progress;
mod analysis;
pub mod chains;
pub mod diff;
mod loaders;
mod sites;
mod waste;

pub use analysis::{Analysis, LoaderGroups, Paths, roots_of};
pub use chains::Chains;
pub use diff::{HeapDiff, HeapSummary};
pub use loaders::{
    DuplicateClass, LoaderReport, LoaderRow, loader_name, loader_report, loaders_in,
};
pub use sites::{Breakdown, FrameRow, Site, SiteJoin, SiteRow};
pub use waste::{
    CollectionKind, CollectionWaste, DuplicateString, DuplicateStrings, Fill, NullArrays, Tally,
    WasteReport, waste,
};
