//! The ingest layer: a memlens trace in, every engine's model out, in one pass.
//!
//! Every command and the viewer read traces through here, so a trace is read once per
//! command, symbolized once, and named the same way everywhere:
//!
//! 1. [`TraceInput::open`] opens a trace and loads its process stream (modules,
//!    threads, stacks, marks); damage is kept, never fatal.
//! 2. [`StackSymbols`] symbolizes the trace's return addresses with one symbolizer and
//!    applies the frame policy (`memlens-symbols`' [`FramePolicy`]) once per frame,
//!    giving structured [`Site`]s: a stack's frames, its allocation site and its call
//!    path, the same for `summary`, `tree`, `growth` and the viewer.
//! 3. [`ingest`] streams the events once, in time order, into every model asked for
//!    ([`Wanted`]): the heap-evolution model, the allocation-map model (of several
//!    traces, such as a parent and its forked children), the streaming summary with
//!    allocator latencies; [`references`] reads the reference chunks for the cache
//!    lens and [`reference_import`] a reference trace of any format into the simulator;
//!    [`visit_events`] hands an exporter every event of a trace in time order;
//!    [`follow`] reads a trace still being written a little more whenever it grows.
//!
//! A trace that starts mid-run (`memlens attach`) says so in one sentence
//! ([`TraceInput::mid_run_note`]), which [`ingest`] adds to every command's notes.
//! A sampled trace (`memlens record --sample`) makes every model a sampled one
//! ([`TraceInput::sampling`]): its figures are estimates, which each output says.
//! [`TraceInput::recorded_line`] is what `memlens record` says of a trace it wrote.
//!
//! Architecture invariant: no printing and no policy of its own. Progress goes through
//! the [`Progress`] trait and damage comes back as values ([`DamageNote`] says it in
//! one sentence); which frame is whose is decided by the frame policy, not here.
//!
//! [`FramePolicy`]: memlens_symbols::FramePolicy
//! [`Site`]: memlens_vocab::Site
#![deny(missing_docs)]

mod alloc_feed;
mod alloc_plan;
mod checkpoints;
mod damage;
pub mod follow;
mod heap_feed;
mod index;
mod input;
mod live;
mod mid_run;
mod pass;
mod progress;
mod recorded;
pub mod reference_import;
pub mod references;
mod summary_feed;
mod symbols;
mod visit;

pub use alloc_plan::{DEFAULT_BUDGET, MEMORY_VARIABLE, timeline_end};
pub use damage::DamageNote;
pub use heap_feed::GRID_LINES;
pub use index::{INDEX_EXTENSION, index_path};
pub use input::{IngestError, TraceInput};
pub use pass::{MappedPeak, Models, Wanted, ingest};
pub use progress::{NoProgress, Progress, ProgressFn};
pub use symbols::StackSymbols;
pub use visit::visit_events;
