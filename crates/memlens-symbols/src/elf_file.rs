//! Reading ELF files from disk and the few header facts symbolization needs.
//!
//! Everything that touches a module's file goes through here: reading it, checking that
//! it is ELF, and reading its build id, debug links and `PT_LOAD` segments. Errors come
//! back as [`DiagnosticKind`]s, because for the symbolizer a bad file is a warning, not
//! a failure.
//!
//! Files are read into memory whole rather than memory-mapped: that needs no `unsafe`,
//! a file truncated or rewritten while we read it cannot fault the process, and all
//! owned data is extracted before the buffer is dropped.

use std::io;
use std::path::{Path, PathBuf};

use object::{Object, ObjectSection, ObjectSegment, SectionKind, SegmentFlags};

use crate::diagnostics::DiagnosticKind;
use crate::module_map::{ModuleInfo, Segment};

/// The bytes of one ELF file, with the path they came from.
pub(crate) struct ElfFile {
    /// The path that was read.
    pub path: PathBuf,
    /// The whole file.
    pub data: Vec<u8>,
}

impl ElfFile {
    /// Reads `path`, mapping "not found" and other IO errors to their diagnostics.
    pub fn read(path: &Path) -> Result<ElfFile, DiagnosticKind> {
        match std::fs::read(path) {
            Ok(data) => Ok(ElfFile {
                path: path.to_owned(),
                data,
            }),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                Err(DiagnosticKind::MissingFile {
                    path: path.to_owned(),
                })
            }
            Err(error) => Err(DiagnosticKind::UnreadableFile {
                path: path.to_owned(),
                error: error.to_string(),
            }),
        }
    }

    /// Parses the file's headers; anything but a well-formed ELF file is an error.
    pub fn parse(&self) -> Result<object::File<'_>, DiagnosticKind> {
        let invalid = |error: String| DiagnosticKind::InvalidElf {
            path: self.path.clone(),
            error,
        };
        match object::FileKind::parse(&*self.data) {
            Ok(object::FileKind::Elf32 | object::FileKind::Elf64) => {}
            Ok(other) => return Err(invalid(format!("not ELF but {other:?}"))),
            Err(error) => return Err(invalid(error.to_string())),
        }
        object::File::parse(&*self.data).map_err(|error| invalid(error.to_string()))
    }
}

/// Returns the file's GNU build id, or `None` if it has none (or its notes are corrupt).
pub(crate) fn build_id(file: &object::File<'_>) -> Option<Vec<u8>> {
    file.build_id().ok().flatten().map(<[u8]>::to_vec)
}

/// Returns the `.gnu_debuglink` file name and CRC-32, if the file has one.
pub(crate) fn debuglink(file: &object::File<'_>) -> Option<(String, u32)> {
    let (name, crc) = file.gnu_debuglink().ok().flatten()?;
    let name = std::str::from_utf8(name).ok()?;
    Some((name.to_owned(), crc))
}

/// Returns the `.gnu_debugaltlink` (dwz supplementary file) path and its build id.
pub(crate) fn debugaltlink(file: &object::File<'_>) -> Option<(String, Vec<u8>)> {
    let (name, build_id) = file.gnu_debugaltlink().ok().flatten()?;
    let name = std::str::from_utf8(name).ok()?;
    Some((name.to_owned(), build_id.to_vec()))
}

/// Returns `true` when the file holds DWARF debugging information of its own.
///
/// A stripped file has no `.debug_info`; a separate debug file has one, while its code
/// sections are `NOBITS`.
pub(crate) fn has_dwarf(file: &object::File<'_>) -> bool {
    file.section_by_name(".debug_info").is_some_and(|section| {
        section.size() > 0 && section.kind() != SectionKind::UninitializedData
    })
}

/// Returns the file's `PT_LOAD` segments in the module map's form.
pub(crate) fn load_segments(file: &object::File<'_>) -> Vec<Segment> {
    file.segments()
        .map(|segment| Segment {
            vaddr: segment.address(),
            memsz: segment.size(),
            file_offset: segment.file_range().0,
            flags: match segment.flags() {
                SegmentFlags::Elf { p_flags, .. } => p_flags.0,
                _ => 0,
            },
        })
        .collect()
}

/// Builds the [`ModuleInfo`] that `dl_iterate_phdr` would report for `path` loaded with
/// `load_bias`, by reading the file's program headers and build id.
///
/// This is for tools and tests that symbolize a binary without a recorded trace (the
/// load bias of a non-PIE executable is 0). The returned `path` is `path` as given.
///
/// # Errors
///
/// Returns the diagnostic for a file that is missing, unreadable or not ELF.
pub fn module_info_from_file(path: &Path, load_bias: u64) -> Result<ModuleInfo, DiagnosticKind> {
    let file = ElfFile::read(path)?;
    let object = file.parse()?;
    Ok(ModuleInfo {
        path: path.to_string_lossy().into_owned(),
        load_bias,
        segments: load_segments(&object),
        build_id: build_id(&object),
    })
}
