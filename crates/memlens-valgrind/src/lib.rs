//! The host side of the memlens Valgrind recorder (`memlens cache record`).
//!
//! The memlens Valgrind tool (`tools/valgrind`, C, GPL-2.0-or-later, licensed
//! separately) runs the program and streams every memory reference, and what is
//! needed to find each one's home region, as raw 64-bit words through a FIFO. This
//! crate does everything on the memlens side of that FIFO: it builds the tool,
//! runs Valgrind, decodes the stream and encodes it as a memlens reference trace.
//!
//! ```no_run
//! use memlens_valgrind::{Observer, RecordOptions, Recording};
//! struct Quiet;
//! impl Observer for Quiet {}
//! let options = RecordOptions {
//!     command: vec!["./matmul".into(), "48".into()],
//!     program: "/home/me/matmul".into(),
//!     output: Some("matmul.refs.mlens".into()),
//!     instructions: false,
//!     roi: false,
//!     with_ip: false,
//!     heap: true,
//! };
//! let outcome = Recording::prepare(options, &mut Quiet)?.run(&mut Quiet)?;
//! println!("{} references", outcome.summary.references());
//! # Ok::<(), memlens_valgrind::RecordError>(())
//! ```
//!
//! # Layers
//!
//! - The protocol (`protocol.rs`) is defined once; a test keeps it equal to the
//!   tool's `ml_tool.h`.
//! - The [`Decoder`] does no IO: bytes in, in pieces of any size, records out to a
//!   [`RecordSink`]; errors name the word where the stream went wrong. The IO loop
//!   around it is [`read_stream`].
//! - The [`TraceEncoder`] is the sink that writes the trace: labels per site, home
//!   regions from the address map (`regions.rs`: named, heap site, stack, data
//!   symbol, object; `modules.rs` gets data symbols from memlens-symbols).
//! - [`Tool`] finds Valgrind and builds the tool on first use; [`Recording`] runs
//!   it all and reports through an [`Observer`], so the CLI only parses and prints.
//!
//! # Codemap
//!
//! - `protocol.rs`: word layout, record types, kinds.
//! - `control_record.rs`: [`ControlRecord`] and reading one from its payload.
//! - `decoder.rs`, `decode_error.rs`: the state machine and its errors.
//! - `stream_reader.rs`: the read loop.
//! - `encoder.rs`, `summary.rs`: the trace encoder and its counts.
//! - `regions.rs`, `modules.rs`: the address map.
//! - `valgrind_install.rs`, `tool_build.rs`, `tool.rs`: finding Valgrind, building
//!   the tool.
//! - `fifo.rs`, `recording.rs`: the FIFO and the run.
//! - `report.rs`: the run's notices ([`Notices`]) and closing sentences, as text.

#![deny(missing_docs)]

mod control_record;
mod decode_error;
mod decoder;
mod encoder;
mod fifo;
mod modules;
pub mod protocol;
mod recording;
mod regions;
mod report;
mod stream_reader;
mod summary;
mod tool;
mod tool_build;
mod valgrind_install;

#[cfg(test)]
mod test_stream;

pub use control_record::ControlRecord;
pub use decode_error::DecodeError;
pub use decoder::{Decoder, RecordSink};
pub use encoder::{EncodeError, TraceEncoder};
pub use recording::{Observer, RecordError, RecordOptions, RecordOutcome, Recording};
pub use report::{Notices, millions};
pub use stream_reader::read_stream;
pub use summary::Summary;
pub use tool::{Tool, ToolError};
