//! Diagnostics: the problems symbolization met, reported instead of failing.
//!
//! Symbolization never fails as a whole: a missing library, a rebuilt binary or a
//! truncated file only costs the names of that module's frames. Each such problem is
//! recorded once, as a [`Diagnostic`], so the CLI can print a short list of warnings
//! after the report ("libfoo.so: build id differs from the recorded one").

use std::fmt;
use std::path::PathBuf;

use crate::module_map::ModuleIdx;

/// One problem found while symbolizing, attached to a module when it concerns one. Its
/// message is the kind's, which names the file (or module) concerned itself.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind}")]
pub struct Diagnostic {
    /// The module concerned, or `None` for problems that concern no module.
    pub module: Option<ModuleIdx>,
    /// What went wrong.
    pub kind: DiagnosticKind,
}

/// The kinds of problem symbolization reports.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DiagnosticKind {
    /// The module's file does not exist on this machine.
    #[error("{}: file not found; its frames get no names", .path.display())]
    MissingFile {
        /// The path that was tried.
        path: PathBuf,
    },
    /// The module's file exists but could not be read.
    #[error("{}: cannot read: {error}", .path.display())]
    UnreadableFile {
        /// The path that was tried.
        path: PathBuf,
        /// The IO error, as text.
        error: String,
    },
    /// The module's file is not a valid ELF file (for example, it is truncated).
    #[error("{}: not a valid ELF file: {error}", .path.display())]
    InvalidElf {
        /// The file that failed to parse.
        path: PathBuf,
        /// The parser's error, as text.
        error: String,
    },
    /// The main executable's recorded path is empty and no path was configured with
    /// [`SymbolizerOptions::main_executable`](crate::SymbolizerOptions::main_executable).
    #[error("the main executable's path was not recorded and none was given")]
    NoMainExecutablePath,
    /// The module has no file on disk (the vDSO); its frames get no function names.
    #[error("{name}: has no file on disk; its frames get no names")]
    VirtualModule {
        /// The module's recorded name.
        name: String,
    },
    /// The file on disk is not the one that was loaded: its build id differs from the
    /// recorded one. Its frames get the module but no function names, because any
    /// names would be wrong.
    #[error(
        "{}: build id on disk ({}) differs from the recorded one ({}); \
         the file changed since recording, so its frames get no names",
        .path.display(),
        .on_disk.as_deref().map_or_else(|| "none".to_owned(), hex),
        hex(.recorded),
    )]
    BuildIdMismatch {
        /// The file on disk.
        path: PathBuf,
        /// The build id recorded in the target process.
        recorded: Vec<u8>,
        /// The build id of the file on disk, or `None` when it has none.
        on_disk: Option<Vec<u8>>,
    },
    /// No build id was recorded, and the file's executable `PT_LOAD` segments differ
    /// from the recorded ones, so the file is not the one that was loaded.
    #[error(
        "{}: executable segments differ from the recorded ones; \
         the file changed since recording, so its frames get no names",
        .path.display()
    )]
    SegmentMismatch {
        /// The file on disk.
        path: PathBuf,
    },
    /// A separate debug file was found but could not be used; the module falls back to
    /// what its own file holds.
    #[error("{}: debug file ignored: {error}", .path.display())]
    UnusableDebugFile {
        /// The debug file.
        path: PathBuf,
        /// Why it was rejected.
        error: String,
    },
    /// The module's DWARF could not be parsed, or a lookup in it failed; the module
    /// falls back to its ELF symbol table. Reported once per module.
    #[error(
        "{}: DWARF unusable, falling back to the symbol table: {error}",
        .path.display()
    )]
    DwarfError {
        /// The file whose DWARF failed.
        path: PathBuf,
        /// The parser's error, as text.
        error: String,
    },
    /// The module has neither DWARF nor an ELF symbol table; its frames get no names.
    #[error("{}: no symbol table and no DWARF", .path.display())]
    NoSymbols {
        /// The file on disk.
        path: PathBuf,
    },
    /// Some addresses lie outside every recorded module (JIT code, a corrupt stack, or
    /// an incomplete module map).
    #[error(
        "{count} address(es) outside every module, e.g.{}",
        spaced_addresses(.examples)
    )]
    AddressesOutsideModules {
        /// How many unique addresses were outside.
        count: u64,
        /// The first few of them, for the message.
        examples: Vec<u64>,
    },
}

/// ` 0x1000 0x2000`: addresses in hex, each after a space.
fn spaced_addresses(addresses: &[u64]) -> String {
    addresses.iter().map(|a| format!(" {a:#x}")).collect()
}

/// Formats a build id as lowercase hex, the way `readelf -n` and `.build-id/` paths
/// spell it.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use fmt::Write;
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        // Writing to a `String` cannot fail.
        let _ = write!(text, "{byte:02x}");
    }
    text
}
