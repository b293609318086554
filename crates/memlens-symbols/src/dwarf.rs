//! DWARF lookups: the inline chain and source location of a module-relative address.
//!
//! This wraps `addr2line::Context`. The DWARF sections are copied (or decompressed)
//! into reference-counted buffers, so the context owns its data: it outlives the file
//! buffer it was read from and can move to another thread, which the parallel batch API
//! relies on.

use std::sync::Arc;

use object::{Object, ObjectSection};

use crate::demangle::LanguageHint;

/// The reader type: DWARF bytes in shared, owned buffers.
type Reader = gimli::EndianArcSlice<gimli::RunTimeEndian>;

/// One frame as DWARF describes it, before demangling.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct DwarfFrame {
    /// The linkage name when there is one, else the plain `DW_AT_name`.
    pub raw_name: Option<String>,
    /// The language of the unit the function is in, for the demangler.
    pub language: Option<LanguageHint>,
    /// The source file.
    pub file: Option<String>,
    /// The source line.
    pub line: Option<u32>,
    /// The source column.
    pub column: Option<u32>,
}

/// The DWARF of one module, ready for lookups.
pub(crate) struct DwarfInfo {
    context: addr2line::Context<Reader>,
}

impl DwarfInfo {
    /// Loads the DWARF sections of `file`, with `supplementary` as the dwz
    /// supplementary file when the debug file has a `.gnu_debugaltlink`.
    pub fn load(
        file: &object::File<'_>,
        supplementary: Option<&object::File<'_>>,
    ) -> Result<DwarfInfo, String> {
        let mut dwarf = gimli::Dwarf::load(|id| load_section(file, id.name()))
            .map_err(|error| error.to_string())?;
        if let Some(supplementary) = supplementary {
            dwarf
                .load_sup(|id| load_section(supplementary, id.name()))
                .map_err(|error| error.to_string())?;
        }
        let context = addr2line::Context::from_dwarf(dwarf).map_err(|error| error.to_string())?;
        Ok(DwarfInfo { context })
    }

    /// Returns the frames for `svma`, innermost (most deeply inlined) first and the
    /// out-of-line function last. An empty list means DWARF does not cover `svma`.
    ///
    /// Split DWARF (`.dwo` files) is not loaded: such units give what the skeleton
    /// unit holds, usually nothing, and the caller falls back to the symbol table.
    pub fn frames(&self, svma: u64) -> Result<Vec<DwarfFrame>, String> {
        let mut iter = self
            .context
            .find_frames(svma)
            .skip_all_loads()
            .map_err(|error| error.to_string())?;
        let mut frames = Vec::new();
        while let Some(frame) = iter.next().map_err(|error| error.to_string())? {
            let (raw_name, language) = match &frame.function {
                Some(function) => (
                    function.raw_name().ok().map(|name| name.into_owned()),
                    Some(LanguageHint::from_dwarf(function.language)),
                ),
                None => (None, None),
            };
            let location = frame.location.as_ref();
            frames.push(DwarfFrame {
                raw_name,
                language,
                file: location.and_then(|l| l.file).map(str::to_owned),
                line: location.and_then(|l| l.line),
                column: location.and_then(|l| l.column),
            });
        }
        Ok(frames)
    }
}

/// Returns the named section's bytes in an owned buffer, decompressing
/// `SHF_COMPRESSED` and `.zdebug` sections; a missing section is empty, as gimli
/// expects.
fn load_section(file: &object::File<'_>, name: &str) -> Result<Reader, gimli::Error> {
    let endian = if file.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let bytes: Arc<[u8]> = match file.section_by_name(name) {
        // A section that fails to decompress is treated as missing: the lookups that
        // need it find nothing, and the symbol table answers instead.
        Some(section) => match section.uncompressed_data() {
            Ok(data) => Arc::from(&*data),
            Err(_) => Arc::from(&[][..]),
        },
        None => Arc::from(&[][..]),
    };
    Ok(gimli::EndianArcSlice::new(bytes, endian))
}
