//! One module's symbol sources, loaded once: its symbol table and its DWARF.
//!
//! Loading opens the module's file, checks that it is the file that was loaded in the
//! recorded process (build id, or segment layout when no build id was recorded), finds
//! its separate debug file, and keeps only owned lookup structures. Lookup turns a
//! module-relative address into frames, preferring DWARF and falling back to the ELF
//! symbol table.

use std::path::{Path, PathBuf};

use crate::debug_files::{self, Candidate};
use crate::demangle::{LanguageHint, demangle};
use crate::diagnostics::DiagnosticKind;
use crate::dwarf::{DwarfFrame, DwarfInfo};
use crate::elf_file::{self, ElfFile};
use crate::frame::Frame;
use crate::module_map::{ModuleIdx, ModuleInfo, PF_X, Segment};
use crate::symbol_table::SymbolTable;

/// What loading a module's file gave.
pub(crate) enum LoadedModule {
    /// The file was usable; lookups work (though they may find nothing).
    Usable(Box<ModuleSymbols>),
    /// The file on disk is not the one that was loaded; lookups must give no names.
    Mismatched,
    /// The file could not be used at all (missing, unreadable, not ELF).
    Unavailable,
}

/// The lookup structures of one usable module.
pub(crate) struct ModuleSymbols {
    symbols: SymbolTable,
    dwarf: Option<LoadedDwarf>,
    /// Set once a DWARF lookup error was reported, so it is reported only once.
    dwarf_error_reported: bool,
}

/// A module's DWARF and the file it came from (its own file or its debug file).
struct LoadedDwarf {
    info: DwarfInfo,
    path: PathBuf,
}

impl ModuleSymbols {
    /// Returns the number of function symbols in the ELF symbol tables.
    pub fn symbol_count(&self) -> usize {
        self.symbols.len()
    }

    /// Returns the file the DWARF came from, or `None` when the module has no DWARF.
    pub fn dwarf_path(&self) -> Option<&Path> {
        self.dwarf.as_ref().map(|dwarf| dwarf.path.as_path())
    }

    /// Returns the frames for the module-relative lookup address `svma` (already
    /// adjusted to point into the call instruction), innermost first.
    ///
    /// A DWARF lookup error is pushed to `diagnostics` the first time only; the lookup
    /// then falls back to the symbol table.
    pub fn frames(
        &mut self,
        svma: u64,
        module: ModuleIdx,
        diagnostics: &mut Vec<DiagnosticKind>,
    ) -> Vec<Frame> {
        let dwarf_frames = match &self.dwarf {
            Some(dwarf) => match dwarf.info.frames(svma) {
                Ok(frames) => frames,
                Err(error) => {
                    if !self.dwarf_error_reported {
                        self.dwarf_error_reported = true;
                        diagnostics.push(DiagnosticKind::DwarfError {
                            path: dwarf.path.clone(),
                            error,
                        });
                    }
                    Vec::new()
                }
            },
            None => Vec::new(),
        };
        let symbol = self.symbols.find(svma);
        if dwarf_frames.is_empty() {
            let mut frame = Frame::unresolved(Some(module));
            if let Some(symbol) = symbol {
                frame.function = Some(demangle(symbol.name, LanguageHint::Unknown));
                frame.raw_name = Some(symbol.name.to_owned());
            }
            return vec![frame];
        }
        let outer = dwarf_frames.len() - 1;
        dwarf_frames
            .into_iter()
            .enumerate()
            .map(|(i, dwarf_frame)| {
                let mut frame = dwarf_to_frame(dwarf_frame, module, i < outer);
                // DWARF can cover an address with line information but no subprogram
                // (assembly, some CRT code): the symbol table names the function.
                if i == outer
                    && frame.raw_name.is_none()
                    && let Some(symbol) = symbol
                {
                    frame.function = Some(demangle(symbol.name, LanguageHint::Unknown));
                    frame.raw_name = Some(symbol.name.to_owned());
                }
                frame
            })
            .collect()
    }
}

/// Converts one DWARF frame, demangling its name.
fn dwarf_to_frame(dwarf_frame: DwarfFrame, module: ModuleIdx, inlined: bool) -> Frame {
    let hint = dwarf_frame.language.unwrap_or(LanguageHint::Unknown);
    Frame {
        function: dwarf_frame
            .raw_name
            .as_deref()
            .map(|raw| demangle(raw, hint)),
        raw_name: dwarf_frame.raw_name,
        file: dwarf_frame.file,
        line: dwarf_frame.line,
        column: dwarf_frame.column,
        inlined,
        module: Some(module),
    }
}

/// Loads the module `info` from the file `path`, searching `debug_dirs` (and the
/// module's own directory) for separate debug files when `use_debug_files` is set.
///
/// Every problem is pushed to `diagnostics`; the result says how far loading got.
pub(crate) fn load(
    info: &ModuleInfo,
    path: &Path,
    debug_dirs: &[PathBuf],
    use_debug_files: bool,
    diagnostics: &mut Vec<DiagnosticKind>,
) -> LoadedModule {
    let main_file = match ElfFile::read(path) {
        Ok(file) => file,
        Err(kind) => {
            diagnostics.push(kind);
            return LoadedModule::Unavailable;
        }
    };
    let main = match main_file.parse() {
        Ok(object) => object,
        Err(kind) => {
            diagnostics.push(kind);
            return LoadedModule::Unavailable;
        }
    };
    let build_id = match check_identity(info, path, &main) {
        Ok(build_id) => build_id,
        Err(kind) => {
            diagnostics.push(kind);
            return LoadedModule::Mismatched;
        }
    };

    let debug_file = if use_debug_files {
        let debuglink = elf_file::debuglink(&main);
        let candidates = debug_files::candidates(
            path,
            build_id.as_deref(),
            debuglink.as_ref().map(|(name, crc)| (name.as_str(), *crc)),
            debug_dirs,
        );
        find_verified(&candidates, diagnostics)
    } else {
        None
    };
    let debug = debug_file.as_ref().and_then(|file| file.parse().ok());

    let mut objects = vec![&main];
    objects.extend(debug.as_ref());
    let symbols = SymbolTable::from_files(&objects);

    // The DWARF lives in the debug file when there is one with DWARF, else (for a
    // binary built with -g and not stripped) in the module's own file.
    let dwarf_source = match (&debug, &debug_file) {
        (Some(object), Some(file)) if elf_file::has_dwarf(object) => Some((object, file)),
        _ if elf_file::has_dwarf(&main) => Some((&main, &main_file)),
        _ => None,
    };
    let dwarf = dwarf_source.and_then(|(object, file)| {
        let supplementary_file = if use_debug_files {
            find_supplementary(object, &file.path, debug_dirs, diagnostics)
        } else {
            None
        };
        let supplementary = supplementary_file.as_ref().and_then(|f| f.parse().ok());
        match DwarfInfo::load(object, supplementary.as_ref()) {
            Ok(info) => Some(LoadedDwarf {
                info,
                path: file.path.clone(),
            }),
            Err(error) => {
                diagnostics.push(DiagnosticKind::DwarfError {
                    path: file.path.clone(),
                    error,
                });
                None
            }
        }
    });

    if symbols.len() == 0 && dwarf.is_none() {
        diagnostics.push(DiagnosticKind::NoSymbols {
            path: path.to_owned(),
        });
    }
    LoadedModule::Usable(Box::new(ModuleSymbols {
        symbols,
        dwarf,
        dwarf_error_reported: false,
    }))
}

/// Checks that the file on disk is the one that was loaded, and returns its build id.
///
/// With a recorded build id the file's must be equal; without one, the executable
/// segments must match.
fn check_identity(
    info: &ModuleInfo,
    path: &Path,
    main: &object::File<'_>,
) -> Result<Option<Vec<u8>>, DiagnosticKind> {
    let on_disk = elf_file::build_id(main);
    match info.build_id.as_deref().filter(|id| !id.is_empty()) {
        Some(recorded) if on_disk.as_deref() != Some(recorded) => {
            Err(DiagnosticKind::BuildIdMismatch {
                path: path.to_owned(),
                recorded: recorded.to_vec(),
                on_disk,
            })
        }
        Some(_) => Ok(on_disk),
        None if executable_segments_match(&info.segments, &elf_file::load_segments(main)) => {
            Ok(on_disk)
        }
        None => Err(DiagnosticKind::SegmentMismatch {
            path: path.to_owned(),
        }),
    }
}

/// Finds the dwz supplementary file named by the `.gnu_debugaltlink` of `object` (read
/// from `path`), if it has one.
fn find_supplementary(
    object: &object::File<'_>,
    path: &Path,
    debug_dirs: &[PathBuf],
    diagnostics: &mut Vec<DiagnosticKind>,
) -> Option<ElfFile> {
    let (name, alt_build_id) = elf_file::debugaltlink(object)?;
    let candidates = debug_files::alt_candidates(path, &name, &alt_build_id, debug_dirs);
    let found = find_verified(&candidates, diagnostics);
    if found.is_none() {
        diagnostics.push(DiagnosticKind::UnusableDebugFile {
            path: PathBuf::from(&name),
            error: "dwz supplementary file not found; shared DWARF (inlined \
                    functions, types) will be missing"
                .to_owned(),
        });
    }
    found
}

/// Returns the first candidate that exists, parses and passes its verification.
///
/// Candidates that do not exist are skipped silently (most never do). When none is
/// accepted, the reasons the existing ones were rejected go to `diagnostics`.
fn find_verified(
    candidates: &[Candidate],
    diagnostics: &mut Vec<DiagnosticKind>,
) -> Option<ElfFile> {
    let mut rejected = Vec::new();
    for candidate in candidates {
        let file = match ElfFile::read(&candidate.path) {
            Ok(file) => file,
            Err(DiagnosticKind::MissingFile { .. }) => continue,
            Err(kind) => {
                rejected.push(kind);
                continue;
            }
        };
        let verdict = file.parse().map(|object| {
            let build_id = elf_file::build_id(&object);
            candidate
                .verification
                .check(&file.data, build_id.as_deref())
        });
        match verdict {
            Ok(Ok(())) => return Some(file),
            Ok(Err(error)) => rejected.push(DiagnosticKind::UnusableDebugFile {
                path: candidate.path.clone(),
                error,
            }),
            Err(kind) => rejected.push(kind),
        }
    }
    diagnostics.extend(rejected);
    None
}

/// Returns `true` when every recorded executable segment is also an executable
/// `PT_LOAD` segment of the file, with the same address and size.
///
/// This is the check used when no build id was recorded. A recording without
/// executable segments (or without segment flags) cannot be checked and passes.
fn executable_segments_match(recorded: &[Segment], on_disk: &[Segment]) -> bool {
    recorded
        .iter()
        .filter(|segment| segment.flags & PF_X != 0)
        .all(|segment| {
            on_disk.iter().any(|disk| {
                disk.flags & PF_X != 0 && disk.vaddr == segment.vaddr && disk.memsz == segment.memsz
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(vaddr: u64, memsz: u64, flags: u32) -> Segment {
        Segment {
            vaddr,
            memsz,
            file_offset: vaddr,
            flags,
        }
    }

    #[test]
    fn segment_check_compares_executable_segments_only() {
        let disk = [segment(0, 0x500, 4), segment(0x1000, 0x200, 5)];
        assert!(executable_segments_match(
            &[segment(0x1000, 0x200, 5)],
            &disk
        ));
        assert!(executable_segments_match(&[segment(0, 0x999, 4)], &disk));
        assert!(executable_segments_match(&[], &disk));
        assert!(!executable_segments_match(
            &[segment(0x1000, 0x208, 5)],
            &disk
        ));
    }
}
