//! `memlens attach PID` and `memlens detach PID`: recording a process that is
//! already running, for a while, and leaving it as it was.
//!
//! The recorder is the same library `memlens record` preloads
//! (`memlens-preload`). Here it is loaded into the running process: memlens
//! borrows one of its threads with ptrace (`ptrace.rs`), makes it call libc's
//! `dlopen` on the library and then the library's `memlens_attach_start`
//! (`inject.rs`), and lets it go. Inside, the recorder routes every loaded
//! module's malloc family to itself by rewriting GOT slots, and records until
//! its control connection (`control.rs`) tells it to stop; it then restores
//! the slots, finishes the trace and stays loaded, idle, for the next attach.
//! This crate is the command's side: the checks that turn into sentences
//! (`process.rs`, `elf.rs`, `error.rs`) and the session (`session.rs`). It
//! prints nothing; the CLI does. `docs/attach.md` explains the design and its
//! limits.
//!
//! ```no_run
//! use memlens_attach::{AttachOptions, attach};
//! let options = AttachOptions { pid: 4242, ..AttachOptions::default() };
//! let outcome = attach(&options, |a| eprintln!("recording {} to {}", a.pid, a.trace.display()))?;
//! println!("{:?} after {:?}", outcome.stopped, outcome.recorded_for);
//! # Ok::<(), memlens_attach::AttachError>(())
//! ```

#![deny(missing_docs)]

mod control;
mod elf;
mod error;
mod inject;
mod process;
mod ptrace;
mod session;

pub use error::AttachError;
pub use session::{AttachOptions, AttachOutcome, Attached, Stopped, attach, detach};
