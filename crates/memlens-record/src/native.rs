//! Recording a native program with the LD_PRELOAD library (`memlens-preload`):
//! the checks before the run (the program can be interposed, the options are
//! sound) and the environment that tells the library what to do.
//!
//! One trace for the program the user launched, following `exec`: the library
//! always gets `MEMLENS_OUTPUT`, the absolute `-o` path or, without one,
//! `<cwd>/memlens.<command>.%p.mlens` after the command the user typed (the
//! library puts the pid for `%p`), and a wrapper script that `exec`s the real
//! program leaves one trace, of the program. The other processes of the run
//! (forked children, the programs they run) are recorded only with
//! `follow_fork`, each under the name with its pid (`f.mlens` → `f.<pid>.mlens`);
//! otherwise they are counted ([`RecordOutcome::unfollowed`]). See
//! `memlens-preload`'s `output.rs`. Every trace is listed in the manifest.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;

use memlens_symbols::Interposition;

use crate::helper_library::HelperLibrary;
use crate::launch::{Launch, prepend};
use crate::manifest::Manifest;
use crate::output::{absolute, refuse_existing_output};
use crate::program::find_program;
use crate::trace_watch;
use crate::{Observer, RecordError, RecordOutcome, Warning};

/// How the preload library captures call stacks.
///
/// DWARF is the default: distributions build their packages without frame
/// pointers, and with the recorder's stack cache (only the frames that changed
/// since the thread's previous allocation are unwound) it costs about what a
/// frame-pointer walk does: 2.9× native against 2.9× on alloc-bench, 1.54×
/// against 1.45× on Debian's perl (`bench/record/run.sh`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unwind {
    /// Walk frame pointers (the fastest mode; DWARF steps through system
    /// libraries such as libstdc++'s `operator new`). Code built without frame
    /// pointers hides its callers.
    FramePointers,
    /// Unwind every frame with DWARF CFI, falling back to the frame pointer
    /// where a module has none (JIT code).
    #[default]
    Dwarf,
}

impl Unwind {
    /// The name the library reads from `MEMLENS_UNWIND`.
    pub fn name(self) -> &'static str {
        match self {
            Unwind::FramePointers => "fp",
            Unwind::Dwarf => "dwarf",
        }
    }
}

/// What to record with the LD_PRELOAD library, and how.
#[derive(Debug, Clone, Default)]
pub struct NativeOptions {
    /// The program and its arguments.
    pub command: Vec<OsString>,
    /// The trace to write; `None` for `memlens.<command>.<pid>.mlens` in the
    /// current directory. `%p` in it is replaced by the pid.
    pub output: Option<PathBuf>,
    /// Record the other processes of the run too (forked children, the programs
    /// they run), each under the output's name with its pid.
    pub follow_fork: bool,
    /// Overwrite the output if it exists.
    pub force: bool,
    /// How to capture call stacks.
    pub unwind: Unwind,
    /// Place a mark this often: a duration as the user typed it (`100ms`),
    /// handed to the library as it is.
    pub mark_every: Option<String>,
    /// Also record how long each allocator call took.
    pub latency: bool,
    /// Allocation wrappers (globs over demangled function names) written into the
    /// trace, so every command treats their frames as the allocator's.
    pub wrappers: Vec<String>,
    /// Also record the call stack of every free.
    pub free_stacks: bool,
    /// Also record the program's own `mmap`, `munmap` and `mremap` calls.
    pub mmap: bool,
    /// Record a Poisson sample by bytes: about one allocation per this many bytes
    /// (`MEMLENS_SAMPLE`; `None` records every allocation).
    pub sample_bytes: Option<u64>,
    /// Told the main trace's path once it holds the process stream, while the program
    /// runs (`memlens record --view` opens the viewer on it).
    pub on_trace: Option<Sender<PathBuf>>,
}

/// Runs the program under the LD_PRELOAD library until it ends. A program that
/// links its own allocator is a [`Warning`] given to `observer` before it starts.
///
/// # Errors
///
/// Usage errors ([`RecordError::is_usage`]): the program is not found, the
/// output exists, `mark_every` is not a positive duration. Others: the library
/// is not found, the program is statically linked, it cannot start.
pub fn record_native(
    options: &NativeOptions,
    observer: &mut dyn Observer,
) -> Result<RecordOutcome, RecordError> {
    let given = Path::new(options.command.first().ok_or(RecordError::NoCommand)?);
    let preload = HelperLibrary::PRELOAD.find()?;
    let program = find_program(given)?;
    match memlens_symbols::interposition(&program) {
        Interposition::StaticBinary => return Err(RecordError::StaticBinary { program }),
        Interposition::OwnAllocator(allocator) => observer.warning(&Warning::OwnAllocator {
            program: program.clone(),
            allocator,
        }),
        Interposition::Fine => {}
    }
    refuse_existing_output(options.output.as_deref(), options.force)?;
    if let Some(every) = &options.mark_every {
        check_mark_every(every)?;
    }
    memlens_symbols::FramePolicy::with_wrappers(&options.wrappers)?;
    let manifest = Manifest::create();
    let template = match &options.output {
        Some(out) => absolute(out),
        None => {
            let cwd = std::env::current_dir().map_err(RecordError::CurrentDir)?;
            default_template(&cwd, given.as_os_str())
        }
    };
    let launch = native_launch(
        options,
        &preload,
        manifest.path(),
        &template,
        std::env::var_os("LD_PRELOAD"),
    );
    let done = Arc::new(AtomicBool::new(false));
    if let Some(to) = options.on_trace.clone() {
        trace_watch::watch(manifest.path().to_owned(), to, Arc::clone(&done));
    }
    let exit_code = launch.run();
    done.store(true, Ordering::Release);
    let exit_code = exit_code?;
    Ok(RecordOutcome {
        program,
        exit_code,
        traces: manifest.traces(),
        unfollowed: manifest.unfollowed(),
    })
}

/// `<cwd>/memlens.<name>.%p.mlens`, named after the file name of the command the
/// user typed (`python3` even when a shell script `exec`s it); a `%` in that name
/// becomes `_`, so only the library's `%p` is replaced.
fn default_template(cwd: &Path, command: &OsStr) -> PathBuf {
    let name = Path::new(command)
        .file_name()
        .map(|n| n.to_string_lossy().replace('%', "_"))
        .unwrap_or_else(|| "prog".into());
    cwd.join(format!("memlens.{name}.%p.mlens"))
}

/// A usage error unless `every` is a positive duration.
fn check_mark_every(every: &str) -> Result<(), RecordError> {
    if memlens_vocab::parse_duration(every).is_ok_and(|ns| ns > 0) {
        Ok(())
    } else {
        Err(RecordError::MarkEvery {
            text: every.to_owned(),
        })
    }
}

/// The program with the library preloaded (before any library memlens inherited
/// in `LD_PRELOAD`) and the library's settings; variables memlens inherited that
/// would mislead the library are removed.
fn native_launch(
    options: &NativeOptions,
    preload: &Path,
    manifest: &Path,
    template: &Path,
    inherited_preload: Option<OsString>,
) -> Launch {
    let mut launch = Launch::new(&options.command[0]);
    launch.args.extend_from_slice(&options.command[1..]);
    launch.set(
        "LD_PRELOAD",
        prepend(preload.as_os_str(), inherited_preload),
    );
    launch.set("MEMLENS_MANIFEST", manifest);
    launch.set("MEMLENS_UNWIND", options.unwind.name());
    launch.remove("MEMLENS_CLAIMED");
    launch.set("MEMLENS_OUTPUT", template);
    launch.remove("MEMLENS_DIR");
    if let Some(every) = &options.mark_every {
        launch.set("MEMLENS_MARK_EVERY", every);
    }
    match options.sample_bytes {
        Some(bytes) => launch.set("MEMLENS_SAMPLE", bytes.to_string()),
        None => launch.remove("MEMLENS_SAMPLE"),
    }
    if options.wrappers.is_empty() {
        launch.remove("MEMLENS_WRAPPERS");
    } else {
        launch.set("MEMLENS_WRAPPERS", options.wrappers.join("\n"));
    }
    // Switches: `1` when asked for, and never inherited otherwise.
    for (on, name) in [
        (options.follow_fork, "MEMLENS_FOLLOW_FORK"),
        (options.latency, "MEMLENS_LATENCY"),
        (options.free_stacks, "MEMLENS_FREE_STACKS"),
        (options.mmap, "MEMLENS_MMAP"),
    ] {
        if on {
            launch.set(name, "1");
        } else {
            launch.remove(name);
        }
    }
    launch
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The change that sets a variable to `value`.
    fn set(value: &str) -> Option<Option<&OsStr>> {
        Some(Some(OsStr::new(value)))
    }

    fn options(command: &[&str]) -> NativeOptions {
        NativeOptions {
            command: command.iter().map(OsString::from).collect(),
            ..NativeOptions::default()
        }
    }

    #[test]
    fn the_library_goes_first_and_the_defaults_are_named() {
        let launch = native_launch(
            &options(&["./prog", "-n", "3"]),
            Path::new("/m/libmemlens_preload.so"),
            Path::new("/tmp/memlens-manifest-x"),
            &default_template(Path::new("/work"), OsStr::new("./prog")),
            Some("/lib/other.so".into()),
        );
        assert_eq!(launch.program, "./prog");
        assert_eq!(launch.args, ["-n", "3"]);
        assert_eq!(
            launch.change("LD_PRELOAD"),
            set("/m/libmemlens_preload.so /lib/other.so")
        );
        assert_eq!(
            launch.change("MEMLENS_MANIFEST"),
            set("/tmp/memlens-manifest-x")
        );
        assert_eq!(launch.change("MEMLENS_UNWIND"), set("dwarf"));
        assert_eq!(
            launch.change("MEMLENS_OUTPUT"),
            set("/work/memlens.prog.%p.mlens")
        );
        for removed in [
            "MEMLENS_CLAIMED",
            "MEMLENS_DIR",
            "MEMLENS_FOLLOW_FORK",
            "MEMLENS_LATENCY",
            "MEMLENS_WRAPPERS",
        ] {
            assert_eq!(launch.change(removed), Some(None), "{removed}");
        }
        // Inherited as it is: memlens only sets it when asked to.
        assert_eq!(launch.change("MEMLENS_MARK_EVERY"), None);
    }

    #[test]
    fn the_options_become_the_librarys_variables() {
        let mut asked = options(&["prog"]);
        asked.unwind = Unwind::FramePointers;
        asked.mark_every = Some("50ms".into());
        asked.latency = true;
        asked.follow_fork = true;
        asked.wrappers = vec!["my_alloc*".into(), "Arena::make".into()];
        let launch = native_launch(
            &asked,
            Path::new("/m/libmemlens_preload.so"),
            Path::new("/tmp/m"),
            Path::new("/out/run.mlens"),
            Some("".into()),
        );
        assert_eq!(launch.change("LD_PRELOAD"), set("/m/libmemlens_preload.so"));
        assert_eq!(launch.change("MEMLENS_UNWIND"), set("fp"));
        assert_eq!(launch.change("MEMLENS_OUTPUT"), set("/out/run.mlens"));
        assert_eq!(launch.change("MEMLENS_FOLLOW_FORK"), set("1"));
        assert_eq!(launch.change("MEMLENS_MARK_EVERY"), set("50ms"));
        assert_eq!(launch.change("MEMLENS_LATENCY"), set("1"));
        assert_eq!(
            launch.change("MEMLENS_WRAPPERS"),
            set("my_alloc*\nArena::make")
        );
    }

    #[test]
    fn the_default_trace_is_named_after_the_command_the_user_typed() {
        let name = |command: &str| default_template(Path::new("/w"), OsStr::new(command));
        assert_eq!(name("python3"), Path::new("/w/memlens.python3.%p.mlens"));
        assert_eq!(
            name("./tools/shim.sh"),
            Path::new("/w/memlens.shim.sh.%p.mlens")
        );
        assert_eq!(name("/bin/50%pc"), Path::new("/w/memlens.50_pc.%p.mlens"));
    }

    #[test]
    fn free_stacks_and_mappings_are_asked_for_or_cleared() {
        let launch = |asked: &NativeOptions| {
            let out = Path::new("/out/run.mlens");
            native_launch(asked, Path::new("/m/lib.so"), Path::new("/m"), out, None)
        };
        let plain = launch(&options(&["prog"]));
        assert_eq!(plain.change("MEMLENS_FREE_STACKS"), Some(None));
        assert_eq!(plain.change("MEMLENS_MMAP"), Some(None));
        let mut asked = options(&["prog"]);
        (asked.free_stacks, asked.mmap) = (true, true);
        let both = launch(&asked);
        assert_eq!(both.change("MEMLENS_FREE_STACKS"), set("1"));
        assert_eq!(both.change("MEMLENS_MMAP"), set("1"));
    }

    #[test]
    fn sampling_is_asked_for_or_cleared() {
        let lib = Path::new("/m/lib.so");
        let out = Path::new("/out/run.mlens");
        let plain = native_launch(&options(&["p"]), lib, Path::new("/m"), out, None);
        assert_eq!(plain.change("MEMLENS_SAMPLE"), Some(None));
        let sampled = NativeOptions {
            sample_bytes: Some(512 << 10),
            ..options(&["p"])
        };
        let sampled = native_launch(&sampled, lib, Path::new("/m"), out, None);
        assert_eq!(sampled.change("MEMLENS_SAMPLE"), set("524288"));
    }

    #[test]
    fn mark_every_is_a_positive_duration() {
        assert!(check_mark_every("100ms").is_ok());
        assert!(check_mark_every("1.5s").is_ok());
        for bad in ["0ms", "100", "soon"] {
            let refused = check_mark_every(bad).unwrap_err();
            assert!(refused.is_usage());
            assert_eq!(
                refused.to_string(),
                format!("--mark-every {bad}: expected a duration such as 100ms, 1.5s or 250us")
            );
        }
    }

    #[test]
    fn the_warning_names_the_program_and_the_allocator() {
        let warning = Warning::OwnAllocator {
            program: "/bin/app".into(),
            allocator: "je_malloc".into(),
        };
        assert_eq!(
            warning.to_string(),
            "/bin/app defines its own allocator (je_malloc); allocations through it are \
             invisible to LD_PRELOAD and will not be recorded"
        );
    }
}
