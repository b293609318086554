//! The module map: which object files were loaded where in the recorded process.
//!
//! The recorder walks `dl_iterate_phdr` in the target and writes one [`ModuleInfo`] per
//! loaded object. This file holds those plain input types and [`ModuleMap`], the index
//! that turns an absolute runtime address (AVMA) into the module that contains it and
//! the module-relative address (SVMA) that its symbol tables and DWARF use.
//!
//! Architecture invariant: this file does no IO. It only does address arithmetic on data
//! handed to it, so it can be tested with made-up maps.

use std::fmt;

/// The segment is executable (`PF_X` in the ELF program header).
pub const PF_X: u32 = 1;
/// The segment is writable (`PF_W` in the ELF program header).
pub const PF_W: u32 = 2;
/// The segment is readable (`PF_R` in the ELF program header).
pub const PF_R: u32 = 4;

/// A typed handle for a module: its position in the list given to the symbolizer.
///
/// Invariant: a `ModuleIdx` is only meaningful for the [`ModuleMap`] (or
/// [`Symbolizer`](crate::Symbolizer)) that handed it out; indices are never reused, and a
/// module added later always gets a larger index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ModuleIdx(pub u32);

impl ModuleIdx {
    /// Returns the index as a `usize`, for indexing the module list.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for ModuleIdx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "module#{}", self.0)
    }
}

/// One loadable segment (`PT_LOAD` program header) of a module, as recorded.
///
/// Only `PT_LOAD` segments belong here: other program headers (`PT_NOTE`,
/// `PT_GNU_STACK`, ...) do not map memory and would make addresses look covered that
/// are not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The segment's virtual address in the file (`p_vaddr`), before relocation.
    pub vaddr: u64,
    /// The segment's size in memory (`p_memsz`).
    pub memsz: u64,
    /// The segment's offset in the file (`p_offset`).
    pub file_offset: u64,
    /// The segment's permission flags (`p_flags`): a combination of [`PF_R`], [`PF_W`]
    /// and [`PF_X`].
    pub flags: u32,
}

/// One loaded object of the recorded process, as `dl_iterate_phdr` reported it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleInfo {
    /// The object's path (`dlpi_name`).
    ///
    /// It is empty for the main executable; the symbolizer then uses
    /// [`SymbolizerOptions::main_executable`](crate::SymbolizerOptions::main_executable).
    /// It may also name an object that has no file, such as `linux-vdso.so.1`.
    pub path: String,
    /// The difference between runtime and file addresses (`dlpi_addr`): zero for a
    /// non-PIE executable, the load address for a shared object or PIE.
    pub load_bias: u64,
    /// The object's `PT_LOAD` segments.
    pub segments: Vec<Segment>,
    /// The GNU build id (`NT_GNU_BUILD_ID` note) read in the target, if it had one.
    pub build_id: Option<Vec<u8>>,
}

impl ModuleInfo {
    /// Returns the last path component, or the whole path when it has no `/`.
    ///
    /// This is the short name to print next to an unresolved address
    /// (`0x7f12… in libfoo.so`). It is empty for the main executable's empty path.
    pub fn file_name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// Returns `true` when the object has no file on disk, such as the vDSO.
    ///
    /// Such modules are never opened; their addresses keep the module but get no
    /// function name.
    pub fn is_virtual(&self) -> bool {
        let name = self.file_name();
        name.starts_with("linux-vdso")
            || name.starts_with("linux-gate")
            || name == "[vdso]"
            || name == "[vsyscall]"
    }

    /// Returns the runtime address range `[start, end)` of `segment` in this module, or
    /// `None` when the arithmetic overflows (a corrupt record).
    pub fn runtime_range(&self, segment: &Segment) -> Option<(u64, u64)> {
        let start = self.load_bias.checked_add(segment.vaddr)?;
        let end = start.checked_add(segment.memsz)?;
        Some((start, end))
    }
}

/// Where an absolute address falls: its module and the address the module's own
/// tables use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModuleAddress {
    /// The module that contains the address.
    pub module: ModuleIdx,
    /// The address relative to the module's file (SVMA): runtime address minus load bias.
    pub svma: u64,
}

/// One runtime range of the index, owned by one module.
#[derive(Clone, Copy, Debug)]
struct RuntimeRange {
    start: u64,
    end: u64,
    module: ModuleIdx,
}

/// An index from absolute runtime addresses to modules.
///
/// Invariant: `ranges` is sorted by `start` and no two ranges overlap. When recorded
/// segments overlap (a module was unloaded and another loaded at the same place), the
/// module added later wins, because it is the one the later addresses belong to.
#[derive(Clone, Debug, Default)]
pub struct ModuleMap {
    modules: Vec<ModuleInfo>,
    ranges: Vec<RuntimeRange>,
}

impl ModuleMap {
    /// Builds the index for `modules`; module `i` of the list gets `ModuleIdx(i)`.
    pub fn new(modules: Vec<ModuleInfo>) -> Self {
        let mut map = ModuleMap::default();
        for module in modules {
            map.push(module);
        }
        map
    }

    /// Adds a module (for instance one loaded by a later `dlopen`) and returns its index.
    ///
    /// The new module's segments take precedence over any older module they overlap.
    pub fn push(&mut self, module: ModuleInfo) -> ModuleIdx {
        let idx = ModuleIdx(self.modules.len() as u32);
        for segment in &module.segments {
            if let Some((start, end)) = module.runtime_range(segment)
                && start < end
            {
                self.insert_range(RuntimeRange {
                    start,
                    end,
                    module: idx,
                });
            }
        }
        self.modules.push(module);
        idx
    }

    /// Returns the module with index `idx`, or `None` if there is no such module.
    pub fn get(&self, idx: ModuleIdx) -> Option<&ModuleInfo> {
        self.modules.get(idx.index())
    }

    /// Returns all modules in index order.
    pub fn modules(&self) -> &[ModuleInfo] {
        &self.modules
    }

    /// Returns the runtime ranges `[start, end)` that belong to `idx` after overlaps
    /// were resolved.
    pub fn ranges_of(&self, idx: ModuleIdx) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ranges
            .iter()
            .filter(move |range| range.module == idx)
            .map(|range| (range.start, range.end))
    }

    /// Finds the module containing the absolute address `address`.
    ///
    /// Returns `None` for an address outside every recorded segment.
    pub fn find(&self, address: u64) -> Option<ModuleAddress> {
        let after = self.ranges.partition_point(|range| range.start <= address);
        let range = self.ranges[..after].last()?;
        if address >= range.end {
            return None;
        }
        let module = &self.modules[range.module.index()];
        Some(ModuleAddress {
            module: range.module,
            svma: address.wrapping_sub(module.load_bias),
        })
    }

    /// Inserts `new`, cutting any older range it overlaps so the invariant holds.
    fn insert_range(&mut self, new: RuntimeRange) {
        let mut kept = Vec::with_capacity(self.ranges.len() + 2);
        for old in self.ranges.drain(..) {
            if old.end <= new.start || old.start >= new.end {
                kept.push(old);
                continue;
            }
            if old.start < new.start {
                kept.push(RuntimeRange {
                    end: new.start,
                    ..old
                });
            }
            if old.end > new.end {
                kept.push(RuntimeRange {
                    start: new.end,
                    ..old
                });
            }
        }
        kept.push(new);
        kept.sort_by_key(|range| range.start);
        self.ranges = kept;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(path: &str, load_bias: u64, vaddr: u64, memsz: u64) -> ModuleInfo {
        ModuleInfo {
            path: path.to_owned(),
            load_bias,
            segments: vec![Segment {
                vaddr,
                memsz,
                file_offset: vaddr,
                flags: PF_R | PF_X,
            }],
            build_id: None,
        }
    }

    #[test]
    fn finds_module_and_module_relative_address() {
        let map = ModuleMap::new(vec![
            module("/bin/a", 0x5555_0000_0000, 0x1000, 0x2000),
            module("/lib/libc.so.6", 0x7f00_0000_0000, 0x28000, 0x100),
        ]);
        let hit = map.find(0x7f00_0002_8010).unwrap();
        assert_eq!(hit.module, ModuleIdx(1));
        assert_eq!(hit.svma, 0x28010);
        assert_eq!(map.find(0x5555_0000_1000).unwrap().module, ModuleIdx(0));
        assert_eq!(map.find(0x5555_0000_2fff).unwrap().svma, 0x2fff);
        assert_eq!(map.find(0x5555_0000_3000), None);
        assert_eq!(map.find(0), None);
        assert_eq!(map.find(u64::MAX), None);
    }

    #[test]
    fn later_module_wins_where_ranges_overlap() {
        let mut map = ModuleMap::new(vec![module("/old.so", 0x1000, 0, 0x3000)]);
        let new = map.push(module("/new.so", 0x2000, 0, 0x800));
        assert_eq!(map.find(0x1800).unwrap().module, ModuleIdx(0));
        assert_eq!(map.find(0x2400).unwrap().module, new);
        assert_eq!(map.find(0x2900).unwrap().module, ModuleIdx(0));
        assert_eq!(map.ranges_of(ModuleIdx(0)).count(), 2);
    }

    #[test]
    fn corrupt_segments_are_ignored() {
        let map = ModuleMap::new(vec![module("/x", u64::MAX, 0x10, 0x10)]);
        assert_eq!(map.find(5), None);
    }

    #[test]
    fn vdso_is_virtual_and_file_name_is_basename() {
        assert!(module("linux-vdso.so.1", 0, 0, 1).is_virtual());
        assert!(!module("/usr/lib/libc.so.6", 0, 0, 1).is_virtual());
        assert_eq!(
            module("/usr/lib/libc.so.6", 0, 0, 1).file_name(),
            "libc.so.6"
        );
    }
}
