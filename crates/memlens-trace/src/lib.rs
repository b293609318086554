//! The memlens trace format: records, chunk framing, a writer and a
//! streaming reader.
//!
//! A trace is a file header followed by self-framed, checksummed,
//! independently compressed chunks (see `docs/trace-format.md` for every
//! byte). Chunks belong to streams: the process stream carries metadata
//! (process, modules, threads, interned stacks, marks) and each thread has an
//! event stream (allocations, frees, reallocations) with delta/varint
//! records. A crash loses at most the chunks not yet written; the reader
//! reports the exact byte offset of any damage and keeps every complete chunk.
//!
//! Map of the crate:
//! - [`format`](mod@format): magic, versions, kinds, tags;
//! - [`record`]: the plain record types;
//! - [`varint`]: the integer encoding;
//! - [`chunk`], [`header`]: framing;
//! - [`encode`], [`decode`]: record bytes, mirrors of each other;
//! - [`columns`]: the columnar, predictive encoding of event chunks,
//!   `predict`, the address-prediction state both of its sides keep,
//!   `live_blocks`, its encoder's table of the chunk's blocks, `prefetch`, the
//!   hint that loads those tables' lines ahead, and `column_room`, its
//!   encoder's byte columns;
//! - [`writer`]: the sink for whole files;
//! - [`reader`], [`metadata`], [`merge`]: the source side;
//! - [`dump`]: one line per record.
#![deny(missing_docs)]

pub mod chunk;
mod column_room;
pub mod columns;
pub mod decode;
pub mod dump;
pub mod encode;
pub mod format;
pub mod header;
mod live_blocks;
pub mod merge;
pub mod metadata;
mod predict;
mod prefetch;
pub mod reader;
pub mod record;
pub mod refs;
pub mod varint;
pub mod writer;

pub use decode::{Record, RecordDecoder};
pub use encode::ChunkBuilder;
pub use merge::EventStream;
pub use metadata::{
    FrameName, HeapWalkRecord, LoadedModule, MapChange, Mark, Metadata, StackTable, ThreadInfo,
};
pub use reader::{ChunkInfo, Damage, OpenError, TraceFile};
pub use record::{
    AllocFn, Attached, ClockSource, Contained, Event, HeapWalk, Mapping, Meta, Module, ProcessInfo,
    SYNTHETIC_FRAME_BASE, Segment, StackId, TimeNs, Totals, Unmapping,
};
pub use refs::{
    ConvertRef, RefBatch, RefBounds, RefItem, RefKind, RefRecord, ReferenceWriter,
    read_reference_batches, read_reference_batches_ahead, read_reference_batches_as,
    read_references,
};
pub use writer::TraceWriter;
