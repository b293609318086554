//! A reference trace of any format the cache lens reads — a memlens trace, Valgrind
//! Lackey text or Dinero `din` text — fed to the simulator (`memlens cache simulate`),
//! with what went wrong kept as sentences: the first malformed lines as `FILE:LINE:
//! reason` (once the file has shown a reference at all: a file with none gets one
//! sentence instead of a screen of them), damaged chunks, and why the import stopped.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use memlens_cache::import::{
    DinOptions, DinReader, ImportCounts, ImportError, ImportErrorKind, LackeyOptions, LackeyReader,
    OnError,
};
use memlens_cache::{Reference, Simulation};
use memlens_trace::TraceFile;
use memlens_trace::format::{ChunkKind, FILE_MAGIC};

use crate::damage::DamageNote;
use crate::references;

/// Malformed lines reported one by one; the rest are only counted.
const SHOWN_ERRORS: u64 = 20;

/// The formats of a reference trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferenceFormat {
    /// A memlens trace with reference chunks (regions and statement labels kept).
    Mlens,
    /// Valgrind Lackey `--trace-mem=yes` text.
    Lackey,
    /// Dinero `din` text (`LABEL ADDRESS [SIZE]`).
    Din,
}

impl ReferenceFormat {
    /// The format of `path`: `mlens` by its magic, `din` for `*.din`, else `lackey`.
    pub fn sniff(path: &Path) -> ReferenceFormat {
        let mut magic = [0u8; 8];
        let is_mlens = File::open(path)
            .and_then(|mut f| f.read_exact(&mut magic))
            .is_ok()
            && magic == FILE_MAGIC;
        if is_mlens {
            ReferenceFormat::Mlens
        } else if path.extension().and_then(|e| e.to_str()) == Some("din") {
            ReferenceFormat::Din
        } else {
            ReferenceFormat::Lackey
        }
    }

    /// `mlens`, `lackey` or `din`.
    pub fn name(self) -> &'static str {
        match self {
            ReferenceFormat::Mlens => "mlens",
            ReferenceFormat::Lackey => "lackey",
            ReferenceFormat::Din => "din",
        }
    }
}

/// How to read a reference trace.
#[derive(Debug, Clone, Copy)]
pub struct ImportOptions {
    /// Its format.
    pub format: ReferenceFormat,
    /// Whether a malformed line or damaged chunk stops the import.
    pub on_error: OnError,
    /// Keep the instruction fetches of text traces.
    pub keep_instructions: bool,
    /// Access size of din lines without one.
    pub din_size: u16,
}

/// What an import did besides feeding the simulator.
#[derive(Debug, Default)]
pub struct Imported {
    /// Sentences for the user, in order (malformed lines, damaged chunks).
    pub notes: Vec<String>,
    /// A text import's line counts.
    pub counts: Option<ImportCounts>,
    /// Why the import stopped early (`FILE: …`), if it did.
    pub failure: Option<String>,
}

/// Reads the reference trace `path` into `simulation`.
pub fn simulate_file(
    path: &Path,
    options: &ImportOptions,
    simulation: &mut Simulation,
) -> Imported {
    let mut imported = Imported::default();
    if options.format == ReferenceFormat::Mlens {
        match TraceFile::open(path) {
            Ok(trace) => {
                let damage = references::simulate(&trace, simulation);
                let notes = DamageNote::all(path, &damage);
                imported.notes = notes.iter().map(ToString::to_string).collect();
                if let (Some(d), OnError::Stop) = (damage.first(), options.on_error) {
                    imported.failure = Some(format!("{}: damaged at {d}", path.display()));
                }
            }
            Err(e) => imported.failure = Some(e.to_string()),
        }
        return imported;
    }
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) => {
            imported.failure = Some(format!("{}: cannot open: {e}", path.display()));
            return imported;
        }
    };
    let input = BufReader::with_capacity(1 << 20, file);
    let keep_instructions = options.keep_instructions;
    let on_error = options.on_error;
    if options.format == ReferenceFormat::Din {
        let din = DinOptions {
            keep_instructions,
            default_size: options.din_size,
            on_error,
        };
        let mut reader = DinReader::new(input, din);
        import_text(path, &mut reader, on_error, simulation, &mut imported);
        imported.counts = Some(reader.counts());
    } else {
        let lackey = LackeyOptions {
            keep_instructions,
            on_error,
        };
        let mut reader = LackeyReader::new(input, lackey);
        import_text(path, &mut reader, on_error, simulation, &mut imported);
        imported.counts = Some(reader.counts());
    }
    imported
}

/// Simulates a text importer's references, noting the first malformed lines and
/// counting the rest; stops at any error with `OnError::Stop`, and at a read error
/// always.
fn import_text(
    path: &Path,
    reader: &mut impl Iterator<Item = Result<Reference, ImportError>>,
    on_error: OnError,
    simulation: &mut Simulation,
    imported: &mut Imported,
) {
    let (mut malformed, mut any, mut feed) = (0u64, false, simulation.feed());
    let mut held = Vec::new();
    for item in reader {
        match item {
            Ok(reference) => {
                if !any {
                    any = true;
                    imported.notes.append(&mut held);
                }
                feed.push(reference);
            }
            Err(error)
                if on_error == OnError::Stop || matches!(error.kind, ImportErrorKind::Io(_)) =>
            {
                imported.failure = Some(format!("{}:{error} (import stopped)", path.display()));
                break;
            }
            Err(error) => {
                if malformed < SHOWN_ERRORS {
                    let line = format!("{}:{error}", path.display());
                    if any {
                        imported.notes.push(line);
                    } else {
                        held.push(line);
                    }
                }
                malformed += 1;
            }
        }
    }
    if any && malformed > SHOWN_ERRORS {
        let (path, hidden) = (path.display(), malformed - SHOWN_ERRORS);
        (imported.notes).push(format!(
            "{path}: {malformed} malformed lines in all, {hidden} not shown"
        ));
    }
}

/// Why a trace gave the simulator nothing to do, in one sentence: text none of whose
/// lines is a reference, or a memlens trace of allocations only.
pub fn no_references(
    path: &Path,
    format: ReferenceFormat,
    counts: Option<&ImportCounts>,
) -> String {
    let allocations = || {
        TraceFile::open(path)
            .is_ok_and(|t| (t.chunks().iter()).any(|c| c.header.kind == ChunkKind::Events))
    };
    let reason = match counts {
        Some(c) => format!(
            "no line of its {} lines is a {format:?} reference ({} malformed, {} ignored)",
            c.lines, c.malformed, c.ignored
        ),
        None if allocations() => "holds allocations but no memory references: the cache lens \
            needs a reference trace (`memlens cache record -- PROGRAM`, or `memlens cache \
            kernel`); the allocations are for `memlens summary`, `tree` and `view`"
            .to_owned(),
        None => "holds no memory references".to_owned(),
    };
    format!("{}: {reason}", path.display())
}
