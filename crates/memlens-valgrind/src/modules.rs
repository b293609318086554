//! What a loaded object adds to the address map: its data symbols as regions
//! (`global: checksum`, or `global: stdout (libc.so.6)` for a library's) and the
//! rest of its segments as one region per object (`static: libc.so.6`). The
//! symbols come from memlens-symbols, which reads the object's file.

use std::path::Path;

use crate::regions::Regions;

/// Adds the object at `path`, loaded with `bias`, to `regions`. The recorded
/// program's own globals (`main_exe`, canonical) get plain names. Valgrind's own
/// files hold no program data and are left out; a file that cannot be read adds
/// nothing.
pub(crate) fn add_module(regions: &mut Regions, path: &Path, bias: u64, main_exe: Option<&Path>) {
    let file = (path.file_name())
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    if file.starts_with("vgpreload_") || file.ends_with("-amd64-linux") {
        return;
    }
    let is_main = match (main_exe, std::fs::canonicalize(path)) {
        (Some(main), Ok(canonical)) => main == canonical,
        _ => false,
    };
    let found = memlens_symbols::data_symbols(path).unwrap_or_default();
    let symbols = (found.symbols.into_iter())
        .map(|s| (s.name, s.address.wrapping_add(bias), s.size))
        .collect();
    regions.symbols(if is_main { None } else { Some(&file) }, symbols);
    for segment in found.segments.iter().filter(|s| s.memsz > 0) {
        let lo = segment.vaddr.wrapping_add(bias);
        regions.object_segment(lo, lo.saturating_add(segment.memsz), &file);
    }
}
