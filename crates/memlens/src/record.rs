//! `memlens record [-o FILE] [--unwind fp|dwarf] [--latency] -- CMD ARGS…`: runs a
//! program under the LD_PRELOAD recorder and reports the trace files.
//!
//! The recorder library is looked for in `$MEMLENS_PRELOAD`, next to this
//! executable (a `cargo build` puts both in `target/<profile>/`), and in
//! `../lib/memlens/`. Children are followed: a forked child writes its own
//! trace, and a program started through a wrapper script that `exec`s it
//! keeps the requested file name (see `memlens-preload`'s `output.rs`).
//! The exit status is the program's (128 + N when it was killed by signal N).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use object::{Object, ObjectSymbol};

use crate::summary_cmd::{bytes, duration};
use crate::{UsageError, launch};

/// Arguments of `memlens record`.
#[derive(clap::Args)]
pub struct RecordArgs {
    /// Where to write the trace (default: memlens.<prog>.<pid>.mlens in the
    /// current directory). Forked children write next to it.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// How to capture call stacks: `fp` walks frame pointers (fast; DWARF
    /// steps through system libraries such as libstdc++'s operator new);
    /// `dwarf` unwinds every frame with DWARF CFI (for code built without
    /// frame pointers).
    #[arg(long, value_parser = ["fp", "dwarf"], default_value = "fp")]
    unwind: String,
    /// Place a mark periodically, e.g. `100ms` or `1s` (marks are natural
    /// snapshot times for the heap-evolution lens).
    #[arg(long, value_name = "DURATION")]
    mark_every: Option<String>,
    /// Also record how long each malloc/calloc/realloc/free/aligned call
    /// took inside the allocator (in ns, shown by `memlens summary` and
    /// `memlens dump`); costs two clock reads per call.
    #[arg(long)]
    latency: bool,
    /// Record a Java program through the JVMTI agent (libmemlens_jvmti.so)
    /// instead of LD_PRELOAD: typed objects, Java stacks, threads, deaths and
    /// garbage collections as marks (see docs/java.md).
    #[arg(long, conflicts_with_all = ["mark_every", "latency"])]
    java: bool,
    /// With --java: record about one allocation per BYTES allocated (JVMTI
    /// heap sampling) instead of every allocation.
    #[arg(long, value_name = "BYTES", requires = "java")]
    java_sample: Option<u64>,
    /// With --java: Java frames kept per stack.
    #[arg(long, value_name = "N", requires = "java", default_value_t = 16)]
    java_depth: u32,
    /// Overwrite the output file if it exists.
    #[arg(short, long)]
    force: bool,
    /// Print nothing but errors.
    #[arg(short, long)]
    quiet: bool,
    /// After the run, print the full summary of each trace (as `memlens summary`).
    #[arg(long)]
    summary: bool,
    /// The program and its arguments.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    command: Vec<OsString>,
}

fn find_preload() -> Result<PathBuf> {
    launch::helper_library(
        "MEMLENS_PRELOAD",
        "libmemlens_preload.so",
        "the recorder library",
        "build it with `cargo build --release` (it is part of the workspace)",
    )
}

/// What the executable's ELF says about interposition.
enum Interposition {
    Fine,
    StaticBinary,
    OwnAllocator(String),
}

fn inspect(path: &Path) -> Interposition {
    let Ok(data) = std::fs::read(path) else {
        return Interposition::Fine;
    };
    let Ok(file) = object::File::parse(&*data) else {
        return Interposition::Fine; // a script: its interpreter is checked when it runs
    };
    let dynamic = file
        .sections()
        .any(|s| object::ObjectSection::name(&s) == Ok(".interp"));
    if !dynamic && file.kind() == object::ObjectKind::Executable {
        return Interposition::StaticBinary;
    }
    for sym in file.dynamic_symbols().chain(file.symbols()) {
        let Ok(name) = sym.name() else { continue };
        if sym.is_definition()
            && matches!(
                name,
                "malloc" | "je_malloc" | "_rjem_malloc" | "mi_malloc" | "tc_malloc"
            )
        {
            return Interposition::OwnAllocator(name.to_string());
        }
    }
    Interposition::Fine
}

#[path = "record_java.rs"]
mod java;

/// Runs `memlens record`.
pub fn run(args: RecordArgs) -> Result<i32> {
    if args.java {
        return java::run(args);
    }
    let preload = find_preload()?;
    let program = PathBuf::from(&args.command[0]);
    let Some(resolved) = launch::find_on_path(&program) else {
        return Err(UsageError(format!(
            "cannot find the program `{}` (not a file, and not on PATH)",
            program.display()
        ))
        .into());
    };
    match inspect(&resolved) {
        Interposition::StaticBinary => bail!(
            "{} is statically linked, so LD_PRELOAD cannot intercept its allocations; rebuild it dynamically linked",
            resolved.display()
        ),
        Interposition::OwnAllocator(name) if !args.quiet => eprintln!(
            "memlens: warning: {} defines its own allocator ({name}); allocations through it are invisible to LD_PRELOAD and will not be recorded",
            resolved.display()
        ),
        _ => {}
    }
    launch::refuse_existing_output(args.output.as_deref(), args.force)?;
    if let Some(every) = &args.mark_every
        && parse_duration(every).is_none()
    {
        return Err(UsageError(format!(
            "--mark-every {every}: expected a duration such as 100ms, 1.5s or 250us"
        ))
        .into());
    }
    let manifest = launch::new_manifest_path();
    let mut cmd = Command::new(&args.command[0]);
    cmd.args(&args.command[1..]);
    let mut ld_preload = preload.as_os_str().to_os_string();
    if let Some(existing) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        ld_preload.push(" ");
        ld_preload.push(existing);
    }
    cmd.env("LD_PRELOAD", ld_preload)
        .env("MEMLENS_MANIFEST", &manifest)
        .env("MEMLENS_UNWIND", &args.unwind)
        .env_remove("MEMLENS_CLAIMED");
    match &args.output {
        Some(out) => {
            let abs = std::path::absolute(out).unwrap_or_else(|_| out.clone());
            cmd.env("MEMLENS_OUTPUT", &abs);
        }
        None => {
            cmd.env_remove("MEMLENS_OUTPUT");
            cmd.env("MEMLENS_DIR", std::env::current_dir()?);
        }
    }
    if let Some(every) = &args.mark_every {
        cmd.env("MEMLENS_MARK_EVERY", every);
    }
    if args.latency {
        cmd.env("MEMLENS_LATENCY", "1");
    } else {
        cmd.env_remove("MEMLENS_LATENCY");
    }
    launch::leave_signals_to_the_program();
    let status = cmd
        .status()
        .with_context(|| format!("cannot start {}", program.display()))?;
    let code = launch::exit_code(status);
    let paths = launch::traces_in_manifest(&manifest);
    std::fs::remove_file(&manifest).ok();
    if !args.quiet {
        report(&paths, &resolved);
    }
    if args.summary
        && let Some(main) = paths.first()
    {
        println!();
        crate::summary_cmd::print(main, false, 5)?;
    }
    Ok(code)
}

fn parse_duration(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = [("ms", 1e6), ("us", 1e3), ("ns", 1.0), ("s", 1e9)]
        .iter()
        .find_map(|(suffix, m)| s.strip_suffix(suffix).map(|n| (n, *m)))?;
    let v: f64 = num.parse().ok()?;
    (v > 0.0).then_some((v * mult) as u64)
}

/// Prints where the traces are, with a one-line summary of each.
fn report(paths: &[PathBuf], program: &Path) {
    if paths.is_empty() {
        eprintln!(
            "memlens: no trace was written: {} never started the recorder (is it a setuid program, or does it clear LD_PRELOAD?)",
            program.display()
        );
        return;
    }
    const SHOWN: usize = 3;
    for path in paths.iter().take(SHOWN) {
        let Ok(loaded) = crate::load::open(path) else {
            eprintln!("memlens: wrote {}", path.display());
            continue;
        };
        let md = &loaded.metadata;
        let name = md
            .process
            .as_ref()
            .map(|p| format!("{} (pid {})", p.exe, p.pid))
            .unwrap_or_default();
        let (s, _) = crate::summary_cmd::summarize(&loaded);
        eprintln!(
            "memlens: wrote {} — {name}: {} allocations, {} frees, {} reallocations; peak {} at {}; {} leaked in {} blocks",
            path.display(),
            s.allocations,
            s.frees,
            s.reallocations,
            bytes(s.peak_bytes),
            duration(s.peak_time_ns),
            bytes(s.leaked_bytes),
            s.leaked_allocations
        );
        for (_, w) in &md.warnings {
            eprintln!("memlens: warning: {w}");
        }
        if s.allocations == 0 && md.event_records == 0 {
            eprintln!(
                "memlens: warning: no allocation was recorded; the program may use a statically linked allocator (jemalloc, mimalloc, …) that LD_PRELOAD cannot see"
            );
        }
    }
    if paths.len() > SHOWN {
        eprintln!(
            "memlens: and {} smaller traces of other processes of the run (forked children, shells): {}",
            paths.len() - SHOWN,
            paths[SHOWN..]
                .iter()
                .map(|p| p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default())
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    if let Some(first) = paths.first() {
        eprintln!("memlens: next: memlens summary {}", first.display());
    }
}
