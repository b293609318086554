//! Why a recording could not run, each reason one sentence as `memlens record`
//! prints it. Some reasons are the user's to fix on the command line (a program
//! that is not there, an output that exists, an option out of range):
//! [`RecordError::is_usage`] tells them apart, so the CLI can exit with status 2
//! for those and 1 for the rest.

use std::path::PathBuf;

use crate::helper_library::HelperLibrary;

/// Why a recording failed before, or instead of, running the program. The
/// program's own failure is not an error: see [`RecordOutcome::exit_code`].
///
/// [`RecordOutcome::exit_code`]: crate::RecordOutcome::exit_code
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The command to run is empty.
    #[error("no program to run")]
    NoCommand,
    /// The program is neither a file nor a name on `PATH`.
    #[error("cannot find the program `{}` (not a file, and not on PATH)", .program.display())]
    ProgramNotFound {
        /// The program as given.
        program: PathBuf,
    },
    /// The output exists and overwriting it was not asked for.
    #[error("{} already exists; pass --force to overwrite it", .path.display())]
    OutputExists {
        /// The output as given.
        path: PathBuf,
    },
    /// `--mark-every` is not a positive duration.
    #[error("--mark-every {text}: expected a duration such as 100ms, 1.5s or 250us")]
    MarkEvery {
        /// The duration as given.
        text: String,
    },
    /// A `--wrapper` pattern is not a valid glob.
    #[error("--wrapper {0}")]
    Wrapper(#[from] memlens_symbols::WrapperPatternError),
    /// The Java sampling interval does not fit the agent's 32-bit option.
    #[error("--sample {bytes} with --java: at most {} bytes", i32::MAX)]
    JavaSample {
        /// The interval as given.
        bytes: u64,
    },
    /// More Java frames per stack than the agent keeps.
    #[error("--java-depth {frames}: at most {} frames", crate::java::MAX_DEPTH)]
    JavaDepth {
        /// The depth as given.
        frames: u32,
    },
    /// `--java-heap-walks` is not a number, `all` or `none`.
    #[error("--java-heap-walks {value}: expected a number of walks per second, all or none")]
    JavaHeapWalks {
        /// The value as given.
        value: String,
    },
    /// `--java-data-structure` is not a class name.
    #[error("--java-data-structure {class}: expected a Java class name such as com.example.Ring")]
    JavaDataStructure {
        /// The class as given.
        class: String,
    },
    /// The environment variable that overrides a helper library's place names a
    /// file that is not there.
    #[error("{} names {}, which does not exist", .library.variable, .path.display())]
    HelperVariable {
        /// The library looked for.
        library: HelperLibrary,
        /// What the variable names.
        path: PathBuf,
    },
    /// The memlens executable, next to which the helper libraries are looked for,
    /// cannot be found.
    #[error("cannot find the memlens executable")]
    CurrentExe {
        /// Why.
        source: std::io::Error,
    },
    /// A helper library is in none of the places it is looked for.
    #[error(
        "cannot find {} {} next to {}; {} or set {}",
        .library.what, .library.file, .exe.display(), .library.build, .library.variable
    )]
    HelperMissing {
        /// The library looked for.
        library: HelperLibrary,
        /// The memlens executable.
        exe: PathBuf,
    },
    /// A statically linked program: `LD_PRELOAD` cannot see its allocations.
    #[error(
        "{} is statically linked, so LD_PRELOAD cannot intercept its allocations; rebuild it dynamically linked",
        .program.display()
    )]
    StaticBinary {
        /// The program's file.
        program: PathBuf,
    },
    /// The current directory, where traces go by default, cannot be read (the
    /// sentence is the system's).
    #[error(transparent)]
    CurrentDir(std::io::Error),
    /// The program could not be started.
    #[error("cannot start {}", .program.display())]
    Start {
        /// The program as given.
        program: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The largest trace could not be given the requested name.
    #[error("cannot rename {} to {}", .from.display(), .to.display())]
    Rename {
        /// The trace the recorder wrote.
        from: PathBuf,
        /// The requested output.
        to: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl RecordError {
    /// Whether the command line is at fault (exit status 2): a missing program, an
    /// existing output without `--force`, an option out of range.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            RecordError::NoCommand
                | RecordError::ProgramNotFound { .. }
                | RecordError::OutputExists { .. }
                | RecordError::MarkEvery { .. }
                | RecordError::Wrapper(_)
                | RecordError::JavaSample { .. }
                | RecordError::JavaDepth { .. }
                | RecordError::JavaHeapWalks { .. }
                | RecordError::JavaDataStructure { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_mistakes_are_usage_errors_and_the_rest_are_not() {
        let usage = [
            RecordError::ProgramNotFound {
                program: "nope".into(),
            },
            RecordError::OutputExists {
                path: "out.mlens".into(),
            },
            RecordError::MarkEvery { text: "10".into() },
            RecordError::JavaSample { bytes: 1 << 40 },
            RecordError::JavaDepth { frames: 5000 },
        ];
        assert!(usage.iter().all(RecordError::is_usage));
        let failures = [
            RecordError::StaticBinary {
                program: "/bin/static".into(),
            },
            RecordError::HelperMissing {
                library: HelperLibrary::PRELOAD,
                exe: "/opt/memlens/bin/memlens".into(),
            },
        ];
        assert!(!failures.iter().any(RecordError::is_usage));
    }

    #[test]
    fn sentences_are_the_command_lines() {
        let missing = RecordError::HelperMissing {
            library: HelperLibrary::JAVA_AGENT,
            exe: "/x/memlens".into(),
        };
        assert_eq!(
            missing.to_string(),
            "cannot find the Java agent libmemlens_jvmti.so next to /x/memlens; \
             build it with `cargo build --release -p memlens-jvmti` or set MEMLENS_JVMTI"
        );
        assert_eq!(
            RecordError::JavaSample { bytes: 1 << 40 }.to_string(),
            "--sample 1099511627776 with --java: at most 2147483647 bytes"
        );
        assert_eq!(
            RecordError::JavaDepth { frames: 5000 }.to_string(),
            "--java-depth 5000: at most 1024 frames"
        );
        assert_eq!(
            RecordError::HelperVariable {
                library: HelperLibrary::PRELOAD,
                path: "/gone.so".into()
            }
            .to_string(),
            "MEMLENS_PRELOAD names /gone.so, which does not exist"
        );
    }
}
