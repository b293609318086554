//! Recording a native program with the LD_PRELOAD library (`memlens-preload`):
//! the checks before the run (the program can be interposed, the options are
//! sound) and the environment that tells the library what to do.
//!
//! Children are followed: a forked child writes its own trace, and a program
//! started through a wrapper script that `exec`s it keeps the requested file name
//! (see `memlens-preload`'s `output.rs`). Every trace is listed in the manifest.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use memlens_symbols::Interposition;

use crate::helper_library::HelperLibrary;
use crate::launch::{Launch, prepend};
use crate::manifest::Manifest;
use crate::output::{absolute, refuse_existing_output};
use crate::program::find_program;
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
    /// The trace to write; `None` for `memlens.<prog>.<pid>.mlens` in the current
    /// directory. Forked children write next to it.
    pub output: Option<PathBuf>,
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
    let traces = match &options.output {
        Some(out) => TraceNames::File(absolute(out)),
        None => TraceNames::In(std::env::current_dir().map_err(RecordError::CurrentDir)?),
    };
    let launch = native_launch(
        options,
        &preload,
        manifest.path(),
        &traces,
        std::env::var_os("LD_PRELOAD"),
    );
    let exit_code = launch.run()?;
    Ok(RecordOutcome {
        program,
        exit_code,
        traces: manifest.traces(),
    })
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

/// Where the library names the traces.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TraceNames {
    /// The requested file (absolute).
    File(PathBuf),
    /// Default names in this folder.
    In(PathBuf),
}

/// The program with the library preloaded (before any library memlens inherited
/// in `LD_PRELOAD`) and the library's settings; variables memlens inherited that
/// would mislead the library are removed.
fn native_launch(
    options: &NativeOptions,
    preload: &Path,
    manifest: &Path,
    traces: &TraceNames,
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
    match traces {
        TraceNames::File(file) => launch.set("MEMLENS_OUTPUT", file),
        TraceNames::In(folder) => {
            launch.remove("MEMLENS_OUTPUT");
            launch.set("MEMLENS_DIR", folder);
        }
    }
    if let Some(every) = &options.mark_every {
        launch.set("MEMLENS_MARK_EVERY", every);
    }
    if options.wrappers.is_empty() {
        launch.remove("MEMLENS_WRAPPERS");
    } else {
        launch.set("MEMLENS_WRAPPERS", options.wrappers.join("\n"));
    }
    if options.latency {
        launch.set("MEMLENS_LATENCY", "1");
    } else {
        launch.remove("MEMLENS_LATENCY");
    }
    launch
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

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
            &TraceNames::In("/work".into()),
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
        assert_eq!(launch.change("MEMLENS_DIR"), set("/work"));
        for removed in [
            "MEMLENS_CLAIMED",
            "MEMLENS_OUTPUT",
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
        asked.wrappers = vec!["my_alloc*".into(), "Arena::make".into()];
        let launch = native_launch(
            &asked,
            Path::new("/m/libmemlens_preload.so"),
            Path::new("/tmp/m"),
            &TraceNames::File("/out/run.mlens".into()),
            Some("".into()),
        );
        assert_eq!(launch.change("LD_PRELOAD"), set("/m/libmemlens_preload.so"));
        assert_eq!(launch.change("MEMLENS_UNWIND"), set("fp"));
        assert_eq!(launch.change("MEMLENS_OUTPUT"), set("/out/run.mlens"));
        assert_eq!(launch.change("MEMLENS_DIR"), None);
        assert_eq!(launch.change("MEMLENS_MARK_EVERY"), set("50ms"));
        assert_eq!(launch.change("MEMLENS_LATENCY"), set("1"));
        assert_eq!(
            launch.change("MEMLENS_WRAPPERS"),
            set("my_alloc*\nArena::make")
        );
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
