//! `memlens cache record`: run a program under the memlens Valgrind tool and
//! write every memory reference it makes as a memlens reference trace, with
//! named regions (client requests), heap blocks by allocation site, the stack
//! and data symbols as home regions, and one label per instruction operand.
//!
//! The tool (`tools/valgrind`, C, GPL-2.0-or-later) streams raw words through a
//! FIFO; a thread of this process decodes them and encodes the trace
//! (`cache_record/stream.rs`) while the program runs on the other core.
//!
//! Exit status: the program's (128 + signal when a signal killed it); 2 for
//! usage errors; 1 when Valgrind or the tool cannot run, or the trace cannot
//! be written — each error one sentence on stderr.

mod regions;
mod stream;
mod tool;

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use memlens_trace::{ClockSource, Meta, ProcessInfo, TraceWriter};

use crate::{UsageError, launch};

/// Arguments of `memlens cache record`.
#[derive(clap::Args)]
#[command(
    after_help = "The program may name regions and limit recording with the client \
requests of include/memlens.h: MEMLENS_NAME_REGION(ptr, len, \"name\"), MEMLENS_START() and \
MEMLENS_STOP(). Needs Valgrind (Debian package valgrind), a C compiler and make; the tool is \
built once, on first use."
)]
pub struct RecordArgs {
    /// The trace to write (default: `memlens.<program>.<pid>.refs.mlens` in the
    /// current directory).
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    force: bool,
    /// Record instruction fetches too (kind 3, one shared label), like Lackey's
    /// `I` lines; by default only data references, like Cachegrind's `D refs`.
    #[arg(long)]
    instructions: bool,
    /// Record only between MEMLENS_START() and MEMLENS_STOP() (the region of
    /// interest); heap blocks and names are tracked all the time.
    #[arg(long)]
    roi: bool,
    /// Start each label with its instruction address (`0x401136 main m.c:23
    /// load`), for offline symbolization; labels always stand for one operand of
    /// one instruction.
    #[arg(long)]
    with_ip: bool,
    /// Do not track heap blocks (their references then fall in no region).
    #[arg(long)]
    no_heap: bool,
    /// No progress or summary lines on stderr.
    #[arg(short, long)]
    quiet: bool,
    /// The program and its arguments.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    command: Vec<OsString>,
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

fn resolve_program(program: &OsString) -> Option<PathBuf> {
    launch::find_on_path(Path::new(program)).and_then(|c| std::fs::canonicalize(c).ok())
}

/// A FIFO in a fresh private directory, removed on drop.
struct Fifo {
    dir: PathBuf,
    path: PathBuf,
}

impl Fifo {
    fn new() -> Result<Fifo> {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("memlens-refs-{}-{stamp}", std::process::id()));
        std::fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).ok();
        let path = dir.join("refs.fifo");
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())?;
        // SAFETY: mkfifo on a NUL-terminated path we own.
        if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
            return Err(anyhow!(
                "cannot create the FIFO {}: {}",
                path.display(),
                std::io::Error::last_os_error()
            ));
        }
        Ok(Fifo { dir, path })
    }

    /// Lets a reader blocked in `open` go: opens and closes the write side.
    fn release_reader(&self) {
        use std::os::unix::fs::OpenOptionsExt;
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&self.path);
    }
}

impl Drop for Fifo {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn millions(n: u64) -> String {
    if n >= 10_000_000 {
        format!("{:.0} M", n as f64 / 1e6)
    } else if n >= 1_000_000 {
        format!("{:.1} M", n as f64 / 1e6)
    } else {
        n.to_string()
    }
}

/// Runs `memlens cache record` and returns the program's exit status.
pub fn run(args: RecordArgs) -> Result<i32> {
    let program = &args.command[0];
    let resolved = resolve_program(program)
        .ok_or_else(|| UsageError(format!("{}: no such program", program.to_string_lossy())))?;
    launch::refuse_existing_output(args.output.as_deref(), args.force)?;
    let tool = match tool::prepare(args.quiet) {
        Ok(t) => t,
        Err(message) => {
            eprintln!("memlens: {message}");
            return Ok(1);
        }
    };
    let fifo = Fifo::new()?;
    let mut cmd = Command::new(&tool.valgrind);
    // The program sees the user's environment: memlens's own settings would
    // change what the C library does at start-up (and the reference count).
    for key in [
        "MEMLENS_VALGRIND",
        "MEMLENS_VALGRIND_LIB",
        "MEMLENS_TOOL_CACHE",
    ] {
        cmd.env_remove(key);
    }
    cmd.env("VALGRIND_LIB", &tool.lib_dir)
        .arg("-q")
        .arg("--tool=memlens")
        .arg({
            let mut o = OsString::from("--out=");
            o.push(&fifo.path);
            o
        })
        .arg(format!("--roi={}", yes_no(args.roi)))
        .arg(format!("--instructions={}", yes_no(args.instructions)))
        .arg(format!("--with-ip={}", yes_no(args.with_ip)))
        .arg(format!("--heap={}", yes_no(!args.no_heap)))
        .arg("--")
        .args(&args.command);
    launch::leave_signals_to_the_program();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", tool.valgrind.display()))?;
    let pid = child.id();
    let output = args.output.clone().unwrap_or_else(|| {
        let base = resolved
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| "program".into());
        PathBuf::from(format!("memlens.{base}.{pid}.refs.mlens"))
    });
    let process = ProcessInfo {
        pid,
        ppid: std::process::id(),
        exe: resolved.display().to_string(),
        cmdline: (args.command.iter())
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        start_unix_ns: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0),
        clock: ClockSource::Monotonic,
        unwinder: String::new(),
        recorder: format!("memlens-valgrind {}", env!("CARGO_PKG_VERSION")),
    };
    let fifo_path = fifo.path.clone();
    let output_for_thread = output.clone();
    let main_exe = Some(resolved.clone());
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let encoder = std::thread::spawn(move || -> Result<stream::Summary> {
        let file = File::create(&output_for_thread)
            .with_context(|| format!("cannot create {}", output_for_thread.display()))?;
        let mut trace = TraceWriter::new(BufWriter::with_capacity(1 << 20, file), true)?;
        trace.meta(&Meta::Process(process))?;
        let mut enc = stream::Encoder::new(trace, main_exe);
        // Blocks until the tool opens its end (or `release_reader` runs).
        let input = File::open(&fifo_path)
            .with_context(|| format!("cannot open {}", fifo_path.display()))?;
        let mut last = Instant::now();
        let mut progress = |s: &stream::Summary| {
            if show_progress && last.elapsed() > Duration::from_secs(1) {
                last = Instant::now();
                eprint!("\rmemlens: {} references…", millions(s.references()));
            }
        };
        let read = enc.run(input, &mut progress);
        if show_progress {
            eprint!("\r\x1b[K");
        }
        let (mut out, summary) = enc
            .finish()
            .with_context(|| format!("cannot write {}", output_for_thread.display()))?;
        out.flush()
            .with_context(|| format!("cannot write {}", output_for_thread.display()))?;
        read.with_context(|| format!("recording into {}", output_for_thread.display()))?;
        Ok(summary)
    });
    let status = child.wait().context("cannot wait for valgrind")?;
    fifo.release_reader();
    let summary = encoder
        .join()
        .map_err(|_| anyhow!("the trace encoder failed"))??;
    let code = launch::exit_code(status);
    if summary.references() == 0 && summary.sites == 0 {
        eprintln!(
            "memlens: valgrind ended (status {code}) before the memlens tool recorded anything; \
             {} holds no references",
            output.display()
        );
        return Ok(if code == 0 { 1 } else { code });
    }
    if !args.quiet {
        let bytes = std::fs::metadata(&output).map(|m| m.len()).unwrap_or(0);
        let refs = summary.references();
        let fetches = if args.instructions {
            format!(", {} instruction fetches", summary.fetches)
        } else {
            String::new()
        };
        eprintln!(
            "memlens: wrote {} references ({} data{fetches}) of {} to {} ({} bytes, {:.2} bytes/reference; {} regions, {} sites)",
            refs,
            summary.data,
            resolved.display(),
            output.display(),
            bytes,
            bytes as f64 / refs.max(1) as f64,
            summary.regions,
            summary.sites,
        );
        if summary.ended.is_none() {
            eprintln!(
                "memlens: the program stopped without the tool's end record (exec or a kill); the trace holds everything up to there"
            );
        }
        if args.roi && summary.roi_marks == 0 {
            eprintln!(
                "memlens: --roi was given but the program never called MEMLENS_START(): nothing was recorded"
            );
        }
        if summary.unlabelled_sites > 0 {
            eprintln!(
                "memlens: {} instruction operands past the 65,535th have no label",
                summary.unlabelled_sites
            );
        }
    }
    Ok(code)
}
