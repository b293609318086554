//! Tidy checks for the memlens tree, run by `cargo test` like any other test: the
//! checks themselves live in `tests/tidy.rs`, and this library holds what they need
//! to read the tree.
//!
//! - [`files`] lists and reads a crate's Rust sources.
//! - [`module_graph`] builds the import graph between the modules of one crate from its
//!   sources (parsed with `syn`, test-only code left out) and reports its cycles, found
//!   as the strongly connected components of [`scc`].
//! - [`manifest`] reads which memlens crates a crate depends on.
//!
//! The crate is not published: it exists so that the repository's structure (every
//! file documented, small files, dependencies pointing one way) is part of the one gate.
#![deny(missing_docs)]

pub mod files;
pub mod manifest;
pub mod module_graph;
mod module_tree;
pub mod scc;

pub use files::{read_sources, rust_files};
pub use manifest::memlens_dependencies;
pub use module_graph::{Cycle, ModuleGraph};
pub use scc::strongly_connected_components;
