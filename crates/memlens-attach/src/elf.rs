//! The few facts memlens attach needs from ELF files on disk: a dynamic
//! symbol's address (libc's `dlopen`, the recorder's entry points), whether
//! an executable defines a function itself, and where its first segment is
//! (to turn file addresses into the process's).

use std::path::Path;

use object::{Object, ObjectSegment, ObjectSymbol};

fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    std::fs::read(path)
}

fn parse(data: &[u8]) -> std::io::Result<object::File<'_>> {
    object::File::parse(data).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// The address (file-relative) of the defined dynamic symbol `name`, if any.
pub fn dynamic_symbol(path: &Path, name: &str) -> std::io::Result<Option<u64>> {
    let data = read(path)?;
    let file = parse(&data)?;
    Ok(file
        .dynamic_symbols()
        .find(|s| s.is_definition() && s.name() == Ok(name))
        .map(|s| s.address()))
}

/// True when the file defines `name` (in its dynamic or static symbol table).
pub fn defines(path: &Path, name: &str) -> std::io::Result<bool> {
    let data = read(path)?;
    let file = parse(&data)?;
    let defined = |s: &object::Symbol| s.is_definition() && s.name() == Ok(name);
    Ok(file.dynamic_symbols().any(|s| defined(&s)) || file.symbols().any(|s| defined(&s)))
}

/// True when the file names a dynamic loader (`PT_INTERP`): a dynamically linked
/// program, whose libc is mapped once the loader has run.
pub fn has_interpreter(path: &Path) -> std::io::Result<bool> {
    use object::read::elf::{ElfFile64, ProgramHeader};
    let data = read(path)?;
    let file = ElfFile64::<object::Endianness>::parse(data.as_slice())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    let endian = file.endian();
    Ok(file
        .elf_program_headers()
        .iter()
        .any(|h| h.p_type(endian) == object::elf::PT_INTERP))
}

/// The lowest address of the file's loadable segments.
pub fn lowest_segment_address(path: &Path) -> std::io::Result<u64> {
    let data = read(path)?;
    let file = parse(&data)?;
    Ok(file.segments().map(|s| s.address()).min().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_test_binary_does_not_define_malloc_but_libc_does() {
        let exe = std::env::current_exe().unwrap();
        assert!(!defines(&exe, "malloc").unwrap());
        assert!(has_interpreter(&exe).unwrap());
        let libc = crate::process::Process::read(std::process::id()).unwrap();
        let libc = libc.module(crate::process::is_libc).unwrap().to_string();
        assert!(
            dynamic_symbol(Path::new(&libc), "dlopen")
                .unwrap()
                .is_some()
        );
        assert!(
            dynamic_symbol(Path::new(&libc), "no_such_symbol")
                .unwrap()
                .is_none()
        );
    }
}
