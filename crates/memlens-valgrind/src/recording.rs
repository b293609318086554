//! One recording, start to end: prepare the tool and the FIFO, run the program
//! under Valgrind, and encode the tool's stream into the trace on a second thread
//! while the program runs (on the other core). Progress goes to an [`Observer`];
//! the caller prints.

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use memlens_trace::{ClockSource, Meta, ProcessInfo, TraceWriter};

use crate::decoder::Decoder;
use crate::encoder::{EncodeError, TraceEncoder};
use crate::fifo::Fifo;
use crate::stream_reader::read_stream;
use crate::summary::Summary;
use crate::tool::{Tool, ToolError};

/// What to record, and how.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// The program and its arguments, as given (Valgrind runs them so).
    pub command: Vec<OsString>,
    /// The program's file, resolved and canonical: it names the default output,
    /// goes in the trace, and its globals get plain region names.
    pub program: PathBuf,
    /// The trace to write; `None` for `memlens.<program>.<pid>.refs.mlens` in the
    /// current directory.
    pub output: Option<PathBuf>,
    /// Record instruction fetches too.
    pub instructions: bool,
    /// Record only between `MEMLENS_START()` and `MEMLENS_STOP()`.
    pub roi: bool,
    /// Start each label with its instruction address.
    pub with_ip: bool,
    /// Track heap blocks (their references fall in heap-site regions).
    pub heap: bool,
}

/// Told how a recording goes. Every method does nothing unless overridden.
pub trait Observer: Send {
    /// The tool is about to be built (once) into `dir`.
    fn building_tool(&mut self, dir: &Path) {
        let _ = dir;
    }

    /// About once a second while the stream flows: the references so far.
    fn references_so_far(&mut self, references: u64) {
        let _ = references;
    }

    /// The stream ended; the trace is being finished.
    fn stream_ended(&mut self) {}
}

/// Why a recording failed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// Valgrind or the tool cannot run.
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// The FIFO for the tool's stream could not be made.
    #[error("cannot create a FIFO in {}", .dir.display())]
    Fifo {
        /// Where it was tried.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Valgrind could not be started.
    #[error("cannot start {}", .valgrind.display())]
    Start {
        /// The launcher.
        valgrind: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Waiting for Valgrind failed.
    #[error("cannot wait for valgrind")]
    Wait {
        /// Why.
        source: std::io::Error,
    },
    /// The trace file could not be created.
    #[error("cannot create {}", .path.display())]
    CreateOutput {
        /// The trace.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The FIFO could not be opened.
    #[error("cannot open {}", .fifo.display())]
    OpenStream {
        /// The FIFO.
        fifo: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Writing the trace failed.
    #[error("cannot write {}", .path.display())]
    WriteOutput {
        /// The trace.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The stream could not be read or decoded; the trace holds what came before.
    #[error("recording into {}", .path.display())]
    Stream {
        /// The trace.
        path: PathBuf,
        /// Why.
        source: EncodeError,
    },
    /// The encoder thread panicked.
    #[error("the trace encoder failed")]
    EncoderPanicked,
}

/// What a finished recording gives.
#[derive(Debug)]
pub struct RecordOutcome {
    /// How Valgrind (so the program) ended.
    pub status: ExitStatus,
    /// The trace written.
    pub output: PathBuf,
    /// Its size in bytes.
    pub trace_bytes: u64,
    /// What it holds.
    pub summary: Summary,
}

/// A recording ready to run: Valgrind with the tool, and the FIFO.
pub struct Recording {
    options: RecordOptions,
    tool: Tool,
    fifo: Fifo,
}

impl Recording {
    /// Finds Valgrind, builds the tool if needed and makes the FIFO.
    ///
    /// # Errors
    ///
    /// [`RecordError::Tool`] when Valgrind or the tool cannot run (the sentence
    /// names what to install), [`RecordError::Fifo`].
    pub fn prepare(
        options: RecordOptions,
        observer: &mut dyn Observer,
    ) -> Result<Recording, RecordError> {
        let tool = Tool::prepare(&mut |dir| observer.building_tool(dir))?;
        // An output that cannot be created must fail now, before the program runs
        // (the encoder would fail only once Valgrind is running). Nothing is left
        // behind by the check.
        if let Some(path) = &options.output {
            let existed = path.exists();
            File::create(path).map_err(|source| RecordError::CreateOutput {
                path: path.clone(),
                source,
            })?;
            if !existed {
                let _ = std::fs::remove_file(path);
            }
        }
        let fifo = Fifo::new().map_err(|source| RecordError::Fifo {
            dir: std::env::temp_dir(),
            source,
        })?;
        Ok(Recording {
            options,
            tool,
            fifo,
        })
    }

    /// The Valgrind that will run.
    pub fn tool(&self) -> &Tool {
        &self.tool
    }

    /// Runs the program under Valgrind and writes the trace; returns when both
    /// are done.
    ///
    /// # Errors
    ///
    /// A [`RecordError`] when Valgrind cannot start or the trace cannot be written.
    /// The program's own failure is not an error: see [`RecordOutcome::status`].
    pub fn run(self, observer: &mut dyn Observer) -> Result<RecordOutcome, RecordError> {
        let mut child = self
            .valgrind_command()
            .spawn()
            .map_err(|source| RecordError::Start {
                valgrind: self.tool.valgrind.clone(),
                source,
            })?;
        let pid = child.id();
        let output = (self.options.output.clone())
            .unwrap_or_else(|| default_output(&self.options.program, pid));
        let process = self.process_info(pid);
        let (status, encoded) = std::thread::scope(|scope| {
            let encoder = scope.spawn(|| {
                encode(
                    self.fifo.path(),
                    &output,
                    process,
                    &self.options.program,
                    observer,
                )
            });
            let status = child.wait();
            self.fifo.release_reader();
            (status, encoder.join())
        });
        let status = status.map_err(|source| RecordError::Wait { source })?;
        let summary = encoded.map_err(|_| RecordError::EncoderPanicked)??;
        let trace_bytes = std::fs::metadata(&output).map_or(0, |m| m.len());
        Ok(RecordOutcome {
            status,
            output,
            trace_bytes,
            summary,
        })
    }

    fn valgrind_command(&self) -> Command {
        let yes_no = |b: bool| if b { "yes" } else { "no" };
        let options = &self.options;
        let mut out = OsString::from("--out=");
        out.push(self.fifo.path());
        let mut cmd = Command::new(&self.tool.valgrind);
        // The program sees the user's environment: memlens's own settings would
        // change what the C library does at start-up (and the reference count).
        for key in [
            "MEMLENS_VALGRIND",
            "MEMLENS_VALGRIND_LIB",
            "MEMLENS_TOOL_CACHE",
        ] {
            cmd.env_remove(key);
        }
        cmd.env("VALGRIND_LIB", &self.tool.lib_dir)
            .arg("-q")
            .arg("--tool=memlens")
            .arg(out)
            .arg(format!("--roi={}", yes_no(options.roi)))
            .arg(format!("--instructions={}", yes_no(options.instructions)))
            .arg(format!("--with-ip={}", yes_no(options.with_ip)))
            .arg(format!("--heap={}", yes_no(options.heap)))
            .arg("--")
            .args(&options.command);
        cmd
    }

    fn process_info(&self, pid: u32) -> ProcessInfo {
        ProcessInfo {
            pid,
            ppid: std::process::id(),
            exe: self.options.program.display().to_string(),
            cmdline: (self.options.command.iter())
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            start_unix_ns: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
            clock: ClockSource::Monotonic,
            unwinder: String::new(),
            recorder: format!("memlens-valgrind {}", env!("CARGO_PKG_VERSION")),
        }
    }
}

/// `memlens.<program>.<pid>.refs.mlens`.
fn default_output(program: &Path, pid: u32) -> PathBuf {
    let base = (program.file_name())
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".into());
    PathBuf::from(format!("memlens.{base}.{pid}.refs.mlens"))
}

/// The encoder thread: creates the trace, reads the FIFO to its end through the
/// decoder into the encoder, and finishes the trace (also after a damaged stream,
/// so it keeps what came before the damage).
fn encode(
    fifo: &Path,
    output: &Path,
    process: ProcessInfo,
    program: &Path,
    observer: &mut dyn Observer,
) -> Result<Summary, RecordError> {
    let write_error = |source| RecordError::WriteOutput {
        path: output.to_path_buf(),
        source,
    };
    let file = match File::create(output) {
        Ok(file) => file,
        Err(source) => {
            // Let the tool go: it blocks until someone reads its FIFO.
            if let Ok(mut stream) = File::open(fifo) {
                let _ = std::io::copy(&mut stream, &mut std::io::sink());
            }
            return Err(RecordError::CreateOutput {
                path: output.to_path_buf(),
                source,
            });
        }
    };
    let mut trace =
        TraceWriter::new(BufWriter::with_capacity(1 << 20, file), true).map_err(write_error)?;
    trace.meta(&Meta::Process(process)).map_err(write_error)?;
    let mut encoder = TraceEncoder::new(trace, Some(program.to_path_buf()));
    // Blocks until the tool opens its end (or `Fifo::release_reader` runs).
    let input = File::open(fifo).map_err(|source| RecordError::OpenStream {
        fifo: fifo.to_path_buf(),
        source,
    })?;
    let mut last_report = Instant::now();
    let read = read_stream(
        input,
        &mut Decoder::new(),
        &mut encoder,
        &mut |encoder: &TraceEncoder<_>| {
            if last_report.elapsed() > Duration::from_secs(1) {
                last_report = Instant::now();
                observer.references_so_far(encoder.summary().references());
            }
        },
    );
    observer.stream_ended();
    let (mut out, summary) = encoder.finish().map_err(write_error)?;
    out.flush().map_err(write_error)?;
    read.map_err(|source: EncodeError| RecordError::Stream {
        path: output.to_path_buf(),
        source,
    })?;
    Ok(summary)
}
