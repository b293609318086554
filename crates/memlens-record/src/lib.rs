//! Running a program under a memlens recorder that lives inside it: the
//! LD_PRELOAD library (`memlens record`) or the Java agent (`memlens record
//! --java`).
//!
//! A recording finds the program as the shell would and the recorder next to the
//! memlens executable, refuses to overwrite an output, builds the environment that
//! tells the recorder what to do, runs the program with Ctrl-C left to it, and
//! reads back from the manifest which traces the run wrote, largest first. It
//! prints nothing: warnings found before the run go to an [`Observer`], errors are
//! [`RecordError`]s whose messages are the CLI's sentences, and the CLI prints.
//!
//! ```no_run
//! use memlens_record::{NativeOptions, Observer, Warning, record_native};
//! struct Stderr;
//! impl Observer for Stderr {
//!     fn warning(&mut self, warning: &Warning) {
//!         eprintln!("warning: {warning}");
//!     }
//! }
//! let options = NativeOptions {
//!     command: vec!["./leaky".into(), "100".into()],
//!     output: Some("leaky.mlens".into()),
//!     ..NativeOptions::default()
//! };
//! let outcome = record_native(&options, &mut Stderr)?;
//! println!("exit {}; main trace {:?}", outcome.exit_code, outcome.traces.first());
//! # Ok::<(), memlens_record::RecordError>(())
//! ```
//!
//! # Codemap
//!
//! - `native.rs`, `java.rs`: the two recorders' checks and environments.
//! - `launch.rs`: a launch as data (program, arguments, environment changes) and
//!   its run.
//! - `program.rs`: finding the program on `PATH`, signals, the exit code.
//! - `helper_library.rs`: finding the preload library and the agent.
//! - `output.rs`: the requested trace.
//! - `manifest.rs`: the list of traces the recorders write, and of the processes
//!   they left unrecorded (without `--follow-fork`); `trace_watch.rs` hands the main
//!   trace's path over while the program runs.
//! - `observer.rs`, `outcome.rs`, `error.rs`: what goes back to the caller.
//!
//! The Valgrind recorder, which runs the program under Valgrind rather than inside
//! it, is `memlens-valgrind`; it shares [`find_on_path`],
//! [`refuse_existing_output`], [`leave_signals_to_the_program`] and [`exit_code`].

#![deny(missing_docs)]

mod error;
mod helper_library;
mod java;
mod java_walks;
mod launch;
mod manifest;
mod native;
mod observer;
mod outcome;
mod output;
mod program;
mod trace_watch;

pub use error::RecordError;
pub use helper_library::HelperLibrary;
pub use java::{JavaOptions, record_java};
pub use java_walks::JavaHeapWalks;
pub use manifest::{Manifest, traces_in_manifest};
pub use native::{NativeOptions, Unwind, record_native};
pub use observer::{Observer, Warning};
pub use outcome::RecordOutcome;
pub use output::refuse_existing_output;
pub use program::{exit_code, find_on_path, find_program, leave_signals_to_the_program};
