//! One `memlens attach PID` from start to end: the checks, the trace file,
//! the control socket, the recorder started inside the process, then the
//! wait for a reason to stop (Ctrl-C, the duration, `memlens detach PID`, or
//! the program's own end), and the detach.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use memlens_record::HelperLibrary;

use crate::control;
use crate::error::AttachError;
use crate::inject::start_recorder;
use crate::process::Process;

/// What `memlens attach` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct AttachOptions {
    /// The process.
    pub pid: u32,
    /// The trace (default: `memlens.<prog>.<pid>.mlens`, numbered when it exists).
    pub output: Option<PathBuf>,
    /// Overwrite `output` when it exists.
    pub force: bool,
    /// Detach by itself after this long.
    pub duration: Option<Duration>,
    /// Unwind with frame pointers instead of DWARF.
    pub frame_pointers: bool,
}

/// The session, once recording.
#[derive(Debug, Clone)]
pub struct Attached {
    /// The process.
    pub pid: u32,
    /// Its executable.
    pub exe: String,
    /// The trace being written.
    pub trace: PathBuf,
    /// What the recorder said when it started (`attached slots=N modules=M`).
    pub routed: String,
}

/// Why the recording stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// Ctrl-C (or SIGTERM, SIGHUP) on `memlens attach`.
    Interrupted,
    /// `--duration` elapsed.
    Duration,
    /// `memlens detach PID`.
    DetachCommand,
    /// The program exited (or `exec`ed) while recorded: the trace ends there.
    ProgramEnded,
}

/// A finished session.
#[derive(Debug, Clone)]
pub struct AttachOutcome {
    /// The session.
    pub attached: Attached,
    /// Why it stopped.
    pub stopped: Stopped,
    /// How long it recorded.
    pub recorded_for: Duration,
    /// False when the recorder did not confirm the detach in time.
    pub confirmed: bool,
}

impl Attached {
    /// The line `memlens attach` prints once recording has begun.
    pub fn sentence(&self) -> String {
        format!(
            "attached to process {} ({}), recording to {}; stop with Ctrl-C or `memlens detach {}`",
            self.pid,
            self.exe,
            self.trace.display(),
            self.pid
        )
    }
}

impl AttachOutcome {
    /// The line `memlens attach` prints at the end (it starts with `wrote PATH — `).
    pub fn sentence(&self) -> String {
        let how = match self.stopped {
            Stopped::ProgramEnded => {
                "the program exited or exec'd while recorded; the trace ends there"
            }
            _ if !self.confirmed => "the recorder did not confirm the detach",
            _ => "detached; the program runs on",
        };
        format!(
            "wrote {} — {:.1} s of process {} ({how})",
            self.attached.trace.display(),
            self.recorded_for.as_secs_f64(),
            self.attached.pid
        )
    }

    /// The exit status of `memlens attach`: 1 when the detach was not confirmed.
    pub fn exit_code(&self) -> i32 {
        i32::from(!self.confirmed && self.stopped != Stopped::ProgramEnded)
    }
}

/// Set by SIGINT, SIGTERM and SIGHUP while a session runs.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

fn catch_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installing an async-signal-safe handler (one atomic store).
        unsafe {
            let mut action: libc::sigaction = core::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as usize;
            libc::sigaction(sig, &action, core::ptr::null_mut());
        }
    }
}

/// The default trace name: `memlens.<prog>.<pid>.mlens`, or `.2`, `.3`, …
/// before `.mlens` when it exists.
fn default_output(process: &Process) -> PathBuf {
    let prog = process
        .exe
        .file_name()
        .map_or("prog".into(), |n| n.to_string_lossy().into_owned());
    let pid = process.pid;
    (1..)
        .map(|n| match n {
            1 => PathBuf::from(format!("memlens.{prog}.{pid}.mlens")),
            n => PathBuf::from(format!("memlens.{prog}.{pid}.{n}.mlens")),
        })
        .find(|p| !p.exists())
        .unwrap_or_default()
}

/// Accepts the recorder's connection (only from the process itself) and sends
/// it the trace file; gives up when `cancel` is set.
fn hand_over_trace(
    listener: &UnixListener,
    pid: u32,
    trace: &File,
    cancel: &AtomicBool,
) -> Option<UnixStream> {
    let _ = listener.set_nonblocking(true);
    while !cancel.load(Ordering::Acquire) {
        match listener.accept() {
            Ok((stream, _)) => {
                if control::peer(&stream).map(|(p, _)| p) == Some(pid)
                    && control::send_fd(&stream, trace.as_raw_fd()).is_ok()
                {
                    return Some(stream);
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(_) => return None,
        }
    }
    None
}

/// Checks the process, creates the trace and starts the recorder in the process;
/// returns the process, the trace's path and the recorder's connection. On an
/// error nothing is left behind (the trace is removed).
fn start(
    options: &AttachOptions,
    library: &Path,
    listener: &UnixListener,
) -> Result<(Process, PathBuf, UnixStream), AttachError> {
    let pid = options.pid;
    let mut process = Process::read(pid)?;
    process.check_dynamic_allocator()?;
    if let Some((tracer, name)) = process.tracer() {
        return Err(AttachError::Traced { pid, tracer, name });
    }
    let trace_path = match &options.output {
        Some(path) => {
            memlens_record::refuse_existing_output(Some(path), options.force)?;
            path.clone()
        }
        None => default_output(&process),
    };
    let trace = File::create(&trace_path).map_err(|source| AttachError::Output {
        path: trace_path.clone(),
        source,
    })?;
    let settings = format!(
        "MEMLENS_ATTACH_CONTROL={}\nMEMLENS_ATTACH_PROCESS_START={}\nMEMLENS_UNWIND={}\n",
        control::name(pid),
        process.start_unix_ns(),
        if options.frame_pointers {
            "fp"
        } else {
            "dwarf"
        },
    );
    let cancel = AtomicBool::new(false);
    let started = std::thread::scope(|scope| {
        let handing = scope.spawn(|| hand_over_trace(listener, pid, &trace, &cancel));
        let injected = start_recorder(&mut process, library, &settings);
        cancel.store(true, Ordering::Release);
        let stream = handing.join().ok().flatten();
        injected.and_then(|()| {
            stream.ok_or_else(|| AttachError::Injection {
                pid,
                reason: "the recorder started but did not connect".into(),
            })
        })
    });
    match started {
        Ok(stream) => Ok((process, trace_path, stream)),
        Err(e) => {
            let _ = std::fs::remove_file(&trace_path);
            Err(e)
        }
    }
}

/// Attaches to the process, records until told to stop, and detaches;
/// `on_attached` hears when recording has begun.
///
/// # Errors
///
/// An [`AttachError`] sentence for every way the attach can fail; once
/// recording has begun, the session always ends with an outcome.
pub fn attach(
    options: &AttachOptions,
    on_attached: impl FnOnce(&Attached),
) -> Result<AttachOutcome, AttachError> {
    let pid = options.pid;
    let library = HelperLibrary::PRELOAD.find()?;
    let library = library.canonicalize().unwrap_or(library);
    let listener = control::listen(pid)?;
    catch_signals();
    // A process that `exec`s meanwhile (a wrapper script, a version-manager
    // shim) or has only just started is looked at again, a few times.
    let mut attempts = 0;
    let (process, trace_path, stream) = loop {
        attempts += 1;
        match start(options, &library, &listener) {
            Err(AttachError::Changing { .. }) if attempts < 5 => {
                std::thread::sleep(Duration::from_millis(100));
            }
            result => break result?,
        }
    };
    let attached = Attached {
        pid,
        exe: process.exe_name(),
        trace: std::path::absolute(&trace_path).unwrap_or(trace_path),
        routed: control::read_line(&stream, Duration::from_secs(5)),
    };
    on_attached(&attached);
    let began = Instant::now();
    let (stopped, mut waiting) = wait_for_stop(&listener, &stream, options.duration, began);
    let recorded_for = began.elapsed();
    let confirmed = stopped != Stopped::ProgramEnded && stop_recorder(&stream);
    for client in &mut waiting {
        let _ = writeln!(client, "detached {}", attached.trace.display());
    }
    Ok(AttachOutcome {
        attached,
        stopped,
        recorded_for,
        confirmed,
    })
}

/// Waits for a reason to stop; returns it and the `memlens detach` clients
/// waiting for the answer.
fn wait_for_stop(
    listener: &UnixListener,
    recorder: &UnixStream,
    duration: Option<Duration>,
    began: Instant,
) -> (Stopped, Vec<UnixStream>) {
    let _ = listener.set_nonblocking(true);
    let _ = recorder.set_nonblocking(true);
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    loop {
        if INTERRUPTED.load(Ordering::SeqCst) {
            return (Stopped::Interrupted, Vec::new());
        }
        if duration.is_some_and(|d| began.elapsed() >= d) {
            return (Stopped::Duration, Vec::new());
        }
        let mut byte = [0u8; 64];
        match (&*recorder).read(&mut byte) {
            Ok(0) => return (Stopped::ProgramEnded, Vec::new()),
            Err(e) if e.kind() != ErrorKind::WouldBlock && e.kind() != ErrorKind::Interrupted => {
                return (Stopped::ProgramEnded, Vec::new());
            }
            _ => {}
        }
        if let Ok((client, _)) = listener.accept() {
            let allowed = control::peer(&client).is_some_and(|(_, uid)| uid == me || uid == 0);
            if allowed && control::read_line(&client, Duration::from_secs(2)) == "detach" {
                return (Stopped::DetachCommand, vec![client]);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Tells the recorder to detach and waits (at most ten seconds) for it to
/// say it has; true when it did.
fn stop_recorder(recorder: &UnixStream) -> bool {
    let _ = recorder.set_nonblocking(false);
    if (&*recorder).write_all(b"s").is_err() {
        return false;
    }
    let answer = control::read_line(recorder, Duration::from_secs(10));
    answer == "detached"
}

/// `memlens detach PID`: asks the `memlens attach` recording `pid` to
/// detach, waits for it, and returns the trace it wrote.
///
/// # Errors
///
/// [`AttachError::NotAttached`] when no session records `pid`.
pub fn detach(pid: u32) -> Result<PathBuf, AttachError> {
    let answer = control::request_detach(pid)?;
    Ok(Path::new(answer.strip_prefix("detached ").unwrap_or(&answer)).to_path_buf())
}
