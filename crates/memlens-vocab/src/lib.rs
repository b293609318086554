//! The vocabulary every memlens crate shares, decided once:
//!
//! - [`units`]: sizes (`32K`, `256KiB`, `8M`), durations (`100ms`, `1.5s`) and times in
//!   a run (`1.5s`, `50%`) as users type them on the command line, in environment
//!   variables and in configuration files; one grammar each, one error type.
//! - [`batch_thread`]: a value added up on a thread of its own, fed in batches, beside
//!   a pass that reads the events (the whole run at a glance, the summary).
//! - [`codec`]: the varint encoding the engines keep their models in (a trace's on-disk
//!   index), with a reader that never panics and names the offset of any damage.
//! - [`frames`]: what the frame policy says of a frame ([`FrameKind`]) and the
//!   structured allocation [`Site`] that every engine and every wire type carries
//!   instead of `"function (file:line)"` strings. With the `serde` feature they
//!   serialize for the wire; with `ts` they also derive their TypeScript declarations
//!   (ts-rs), from which the server generates the web app's types.
//!
//! A leaf crate: it depends on no memlens crate and nothing heavy, so the recorder
//! (which must stay light) and the pure engines (which depend on no other memlens
//! crate but this one) can use it.
#![deny(missing_docs)]

pub mod batch_thread;
pub mod codec;
pub mod frames;
pub mod units;

pub use frames::{FrameKind, Site};
pub use units::{
    UnitError, format_count, format_duration, format_size, parse_address, parse_duration,
    parse_size, parse_time, split_range,
};
