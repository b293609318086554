//! The data symbols of an ELF file: named variables with their addresses and sizes,
//! and the loadable segments that hold them.
//!
//! Symbolization needs functions; a recorder that names the home region of a memory
//! reference needs variables (`STT_OBJECT`, `STT_COMMON`) instead: the cache lens calls
//! a reference to `checksum` "global: checksum". This file reads them from the same
//! sources the function table uses (`.symtab` and `.dynsym`), so no other crate parses
//! ELF for it.

use std::path::Path;

use object::{Object, ObjectSymbol, SymbolKind};

use crate::diagnostics::DiagnosticKind;
use crate::elf_file::{ElfFile, load_segments};
use crate::module_map::Segment;

/// One defined data symbol, at its address in the file (SVMA, before relocation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataSymbol {
    /// The symbol's name as stored (mangled, if it is).
    pub name: String,
    /// The first byte, as a file address: add the load bias for the runtime address.
    pub address: u64,
    /// The size in bytes (never 0: symbols without a size are left out).
    pub size: u64,
}

/// What [`data_symbols`] found in one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DataSymbols {
    /// The defined, sized, named data symbols: those of `.symtab` first, then those of
    /// `.dynsym` (an exported variable appears in both).
    pub symbols: Vec<DataSymbol>,
    /// The file's `PT_LOAD` segments, as file addresses.
    pub segments: Vec<Segment>,
}

/// Reads the data symbols and loadable segments of the ELF file at `path`.
///
/// # Errors
///
/// Returns the diagnostic for a file that is missing, unreadable or not ELF.
pub fn data_symbols(path: &Path) -> Result<DataSymbols, DiagnosticKind> {
    let file = ElfFile::read(path)?;
    let object = file.parse()?;
    let symbols = (object.symbols().chain(object.dynamic_symbols()))
        .filter(|symbol| {
            symbol.kind() == SymbolKind::Data && symbol.size() > 0 && !symbol.is_undefined()
        })
        .filter_map(|symbol| {
            let name = symbol.name().ok().filter(|name| !name.is_empty())?;
            Some(DataSymbol {
                name: name.to_owned(),
                address: symbol.address(),
                size: symbol.size(),
            })
        })
        .collect();
    Ok(DataSymbols {
        symbols,
        segments: load_segments(&object),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A variable of this test binary with a plain name and a known size.
    #[unsafe(no_mangle)]
    #[used]
    static MEMLENS_DATA_SYMBOL_PROBE: [u64; 3] = [1, 2, 3];

    #[test]
    fn finds_a_variable_of_this_binary_with_its_size() {
        let exe = std::env::current_exe().unwrap();
        let found = data_symbols(&exe).unwrap();
        let probe = (found.symbols.iter())
            .find(|s| s.name == "MEMLENS_DATA_SYMBOL_PROBE")
            .expect("the probe variable");
        assert_eq!(probe.size, 24);
        assert!(
            (found.segments.iter())
                .any(|s| probe.address >= s.vaddr && probe.address < s.vaddr + s.memsz),
            "the variable lies in a loadable segment"
        );
        assert!(
            found
                .symbols
                .iter()
                .all(|s| s.size > 0 && !s.name.is_empty())
        );
    }

    #[test]
    fn a_missing_file_is_a_diagnostic() {
        let missing = Path::new("/nonexistent/memlens/libnothing.so");
        assert!(matches!(
            data_symbols(missing),
            Err(DiagnosticKind::MissingFile { .. })
        ));
    }
}
