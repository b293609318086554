//! The cache lens engine: where references come from, how a multi-level cache
//! hierarchy treats them, and the per-reference event stream that drives the ring
//! visualization of Choudhury & Rosen, "Abstract Visualization of Runtime Memory
//! Behavior" (VISSOFT 2011).
//!
//! The crate is pure: it does no file or network IO. Parsers take `impl BufRead`;
//! the CLI opens files and names them in messages.
//!
//! Data flow: a **source** ([`kernels`] generates exact address streams, [`import`]
//! parses Lackey and Dinero traces) yields [`Reference`]s; a [`Hierarchy`] simulates
//! them, keeps [`Statistics`] per level and region, and reports every probe, fill,
//! eviction and position to an [`EventSink`]; consumers such as [`Temperature`] and
//! [`WindowedMissRate`] fold the stream. A [`Simulation`] bundles a hierarchy with
//! those folds and sums a whole run up as a [`SimulationSummary`].
//!
//! With the `serde` feature, `protocol` gives the summary its wire form, the document
//! `memlens cache simulate --json` prints; without it the crate has no dependency
//! but the vocabulary.
//!
//! # Example
//!
//! ```
//! use memlens_cache::{Hierarchy, HierarchyConfig, LevelConfig, Reference, EventBuffer};
//!
//! let config = HierarchyConfig::new(vec![
//!     LevelConfig::new("L1", 32 * 1024, 8, 64),
//!     LevelConfig::new("L2", 256 * 1024, 8, 64),
//! ]);
//! let mut cache = Hierarchy::new(&config).expect("a realisable hierarchy");
//! let mut events = EventBuffer::new();
//! cache.access(&Reference::read(0x1000, 8), &mut events);
//! assert_eq!(events.outcome().served_by, 2, "the first access comes from memory");
//! cache.access(&Reference::read(0x1008, 8), &mut events);
//! assert_eq!(events.outcome().served_by, 0, "the second hits in L1");
//! assert_eq!(cache.statistics().level(0).misses(), 1);
//! ```

#![deny(missing_docs)]

mod batch;
pub mod config;
pub mod events;
mod fast_path;
pub mod geometry;
pub mod hierarchy;
pub mod import;
pub mod kernels;
pub mod label;
mod lean;
mod level;
mod order;
pub mod outcome;
mod policy;
#[cfg(feature = "serde")]
pub mod protocol;
mod recent;
pub mod reference;
pub mod region;
pub mod simulation;
pub mod spec;
pub mod stats;
pub mod summary;
mod tally;
pub mod temperature;
mod transfer;
pub mod window;

pub use config::{HierarchyConfig, Inclusion, LevelConfig, Replacement, WritePolicy};
pub use events::{
    Destination, Event, EventBuffer, EventSink, Eviction, EvictionCause, Fill, NoEvents, Position,
    Probe, ProbeKind,
};
pub use geometry::{ConfigError, Geometry, GeometryProblem};
pub use hierarchy::{Hierarchy, SlotView};
pub use label::{LabelTable, TraceInfo};
pub use outcome::{Involvement, Outcome};
pub use reference::{AccessKind, LabelId, Reference, ReferenceBounds, RegionId};
pub use region::{Region, RegionTable};
pub use simulation::{Feed, Simulation};
pub use stats::{LevelCounters, Statistics};
pub use summary::{LevelActivity, LevelSummary, RegionSummary, SimulationSummary};
pub use temperature::{Temperature, TemperatureConfig, TemperatureWeights};
pub use window::{OutcomeWindow, WindowedMissRate};
