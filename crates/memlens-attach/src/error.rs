//! Why an attach or a detach failed, each reason one sentence as `memlens
//! attach` prints it (the CLI exits with status 1 for all of them).

use std::path::PathBuf;

/// Why `memlens attach PID` or `memlens detach PID` could not do its work.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    /// No such process.
    #[error("there is no process {pid}")]
    NoProcess {
        /// The process asked for.
        pid: u32,
    },
    /// The kernel refused to let memlens trace the process.
    #[error(
        "memlens may not trace process {pid} ({reason}): run memlens as root or with the \
         CAP_SYS_PTRACE capability (in a container: --cap-add=SYS_PTRACE), or as the process's \
         user with /proc/sys/kernel/yama/ptrace_scope set to 0 (`sudo sysctl kernel.yama.ptrace_scope=0`)"
    )]
    Permission {
        /// The process asked for.
        pid: u32,
        /// What the kernel said.
        reason: String,
    },
    /// The program has no dynamic loader: nothing can be loaded into it.
    #[error(
        "process {pid} ({exe}) is statically linked: it has no dynamic loader to load the \
         recorder into, so its allocations cannot be recorded (neither by attach nor by `memlens record`)"
    )]
    StaticProgram {
        /// The process asked for.
        pid: u32,
        /// Its executable.
        exe: String,
    },
    /// The executable brings its own allocator, called without GOT slots.
    #[error(
        "process {pid} ({exe}) uses a statically linked allocator (its executable defines \
         {symbol}), whose calls go through no GOT slot that memlens attach could route, so its \
         allocations cannot be recorded"
    )]
    StaticAllocator {
        /// The process asked for.
        pid: u32,
        /// Its executable.
        exe: String,
        /// The allocator function it defines.
        symbol: String,
    },
    /// Another `memlens attach` records the process.
    #[error(
        "process {pid} is already being recorded by another `memlens attach` (stop it with \
         `memlens detach {pid}`)"
    )]
    AlreadyAttached {
        /// The process asked for.
        pid: u32,
    },
    /// The process runs under `memlens record`.
    #[error(
        "process {pid} is already being recorded: it runs under `memlens record` (the recorder is preloaded)"
    )]
    Preloaded {
        /// The process asked for.
        pid: u32,
    },
    /// Another tracer (a debugger) holds the process.
    #[error(
        "process {pid} is being traced by process {tracer} ({name}), and a process can have \
         only one tracer: detach that one first"
    )]
    Traced {
        /// The process asked for.
        pid: u32,
        /// The tracer's pid.
        tracer: u32,
        /// The tracer's name.
        name: String,
    },
    /// The process ended while memlens was attaching.
    #[error("process {pid} exited during the attach; nothing was recorded")]
    Exited {
        /// The process asked for.
        pid: u32,
    },
    /// The process `exec`ed another program, or was still starting, while memlens
    /// looked at it (`memlens attach` tries again a few times first).
    #[error(
        "process {pid} was replaced by another program (exec) or was still starting while \
         memlens attached; try again"
    )]
    Changing {
        /// The process asked for.
        pid: u32,
    },
    /// Loading or starting the recorder inside the process failed.
    #[error("could not start the recorder in process {pid}: {reason}")]
    Injection {
        /// The process asked for.
        pid: u32,
        /// What went wrong, in words.
        reason: String,
    },
    /// `memlens detach PID` found no session.
    #[error("no `memlens attach` is recording process {pid}")]
    NotAttached {
        /// The process asked for.
        pid: u32,
    },
    /// Only x86-64 Linux is supported.
    #[error("memlens attach works on x86-64 Linux only")]
    Unsupported,
    /// The trace file could not be created.
    #[error("cannot create {}: {source}", .path.display())]
    Output {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Finding the recorder or refusing an existing output.
    #[error(transparent)]
    Record(#[from] memlens_record::RecordError),
    /// Something else went wrong talking to the kernel or the session.
    #[error("{what}: {source}")]
    Io {
        /// What memlens was doing.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
}

impl AttachError {
    /// True for the command line's own mistakes (an output that exists).
    pub fn is_usage(&self) -> bool {
        matches!(self, AttachError::Record(e) if e.is_usage())
    }
}
