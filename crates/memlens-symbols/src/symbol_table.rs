//! The ELF symbol table fallback: function names for modules without DWARF.
//!
//! Distribution libraries ship stripped: no DWARF and no `.symtab`, but a `.dynsym` with
//! every exported function. A separate debug file, when installed, adds the full
//! `.symtab`. [`SymbolTable`] merges all of these into one sorted, owned table that maps
//! a module-relative address to the function containing it.
//!
//! Aliases are common (glibc's `malloc`, `__libc_malloc` and `__malloc` share one
//! address). One name is kept per address: global before weak before local, then the
//! one with the fewest leading underscores, then the shortest, so the name a user would
//! call wins.

use object::{Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind, SymbolSection};

/// How far a symbol without a size (`st_size == 0`) may extend when no other symbol
/// follows it.
const UNSIZED_SYMBOL_REACH: u64 = 64 * 1024;

/// One function symbol, after aliases were merged.
#[derive(Clone, Debug)]
struct SymbolEntry {
    /// The first address of the function (SVMA).
    start: u64,
    /// One past the last address the symbol covers.
    end: u64,
    /// The range of the name in [`SymbolTable::names`].
    name: std::ops::Range<usize>,
}

/// A candidate symbol before aliases are merged.
struct RawSymbol<'data> {
    start: u64,
    size: u64,
    name: &'data str,
    rank: (u8, usize, usize),
}

/// Function symbols of one module, sorted by address.
///
/// Invariant: `entries` is sorted by `start`, and no two entries share a `start`.
#[derive(Clone, Debug, Default)]
pub(crate) struct SymbolTable {
    entries: Vec<SymbolEntry>,
    /// All names, concatenated: one allocation instead of one per symbol.
    names: String,
}

/// A symbol found for an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SymbolHit<'a> {
    /// The symbol's name as stored (mangled, if it is).
    pub name: &'a str,
    /// The symbol's first address.
    pub start: u64,
}

impl SymbolTable {
    /// Builds the table from the `.symtab` and `.dynsym` of every file in `files` (the
    /// module's own file and its debug file, which share one address space).
    pub fn from_files(files: &[&object::File<'_>]) -> SymbolTable {
        let mut candidates = Vec::new();
        for file in files {
            for symbol in file.symbols().chain(file.dynamic_symbols()) {
                candidates.extend(function_symbol(file, &symbol));
            }
        }
        SymbolTable::from_candidates(candidates)
    }

    /// Merges aliases and sizes unsized symbols, establishing the invariant.
    fn from_candidates(mut candidates: Vec<RawSymbol<'_>>) -> SymbolTable {
        // Sort so that for each address the preferred alias comes first, then keep it,
        // with the largest size any alias declares.
        candidates.sort_by(|a, b| a.start.cmp(&b.start).then(a.rank.cmp(&b.rank)));
        candidates.dedup_by(|later, kept| {
            let same = later.start == kept.start;
            if same {
                kept.size = kept.size.max(later.size);
            }
            same
        });

        let mut table = SymbolTable::default();
        for (i, symbol) in candidates.iter().enumerate() {
            let end = if symbol.size > 0 {
                symbol.start.saturating_add(symbol.size)
            } else {
                let reach = symbol.start.saturating_add(UNSIZED_SYMBOL_REACH);
                candidates
                    .get(i + 1)
                    .map_or(reach, |next| next.start.min(reach))
            };
            let name_start = table.names.len();
            table.names.push_str(symbol.name);
            table.entries.push(SymbolEntry {
                start: symbol.start,
                end,
                name: name_start..table.names.len(),
            });
        }
        table
    }

    /// Returns the number of function symbols.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Finds the function symbol containing the module-relative address `svma`.
    pub fn find(&self, svma: u64) -> Option<SymbolHit<'_>> {
        let after = self.entries.partition_point(|entry| entry.start <= svma);
        // The closest symbol usually contains the address. When symbols nest (an
        // alias with a shorter size, a local label inside a function), an earlier one
        // may contain it instead, so look back a few entries.
        self.entries[..after]
            .iter()
            .rev()
            .take(8)
            .find(|entry| svma < entry.end)
            .map(|entry| SymbolHit {
                name: &self.names[entry.name.clone()],
                start: entry.start,
            })
    }
}

/// Returns the symbol as a candidate if it names code defined in this file.
fn function_symbol<'data>(
    file: &object::File<'data>,
    symbol: &object::Symbol<'data, '_>,
) -> Option<RawSymbol<'data>> {
    let SymbolSection::Section(section_index) = symbol.section() else {
        return None;
    };
    let is_code = match symbol.kind() {
        SymbolKind::Text => true,
        // Assembly often leaves functions untyped; accept them inside code sections.
        SymbolKind::Unknown => file
            .section_by_index(section_index)
            .is_ok_and(|section| section.kind() == SectionKind::Text),
        _ => false,
    };
    if !is_code || symbol.address() == 0 {
        return None;
    }
    let name = symbol.name().ok()?;
    // Strip a symbol version (`malloc@@GLIBC_2.2.5`) should a tool have put it in the
    // name; skip compiler-local labels and mapping symbols.
    let name = name.split('@').next().unwrap_or(name);
    if name.is_empty() || name.starts_with(".L") || name.starts_with('$') {
        return None;
    }
    let binding = if symbol.is_global() {
        0
    } else if symbol.is_weak() {
        1
    } else {
        2
    };
    Some(RawSymbol {
        start: symbol.address(),
        size: symbol.size(),
        name,
        rank: alias_rank(binding, name),
    })
}

/// Orders aliases of one address, lowest first: by binding (0 global, 1 weak, 2 local),
/// then by the number of leading underscores, then by length.
fn alias_rank(binding: u8, name: &str) -> (u8, usize, usize) {
    let underscores = name.len() - name.trim_start_matches('_').len();
    (binding, underscores, name.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a table from `(start, size, name)` rows, with the alias rank computed as
    /// for real symbols of global binding.
    fn table(rows: &[(u64, u64, &'static str)]) -> SymbolTable {
        let candidates = rows
            .iter()
            .map(|&(start, size, name)| RawSymbol {
                start,
                size,
                name,
                rank: alias_rank(0, name),
            })
            .collect();
        SymbolTable::from_candidates(candidates)
    }

    #[test]
    fn preferred_alias_wins() {
        let table = table(&[
            (0x100, 0x10, "__libc_malloc"),
            (0x100, 0x10, "malloc"),
            (0x100, 0x10, "__malloc"),
        ]);
        assert_eq!(table.len(), 1);
        assert_eq!(table.find(0x105).unwrap().name, "malloc");
    }

    #[test]
    fn finds_containing_symbol() {
        let table = table(&[(0x100, 0x10, "a"), (0x200, 0x20, "b")]);
        assert_eq!(table.find(0x100).unwrap().name, "a");
        assert_eq!(table.find(0x10f).unwrap().name, "a");
        assert_eq!(table.find(0x110), None);
        assert_eq!(table.find(0x21f).unwrap().name, "b");
        assert_eq!(table.find(0xff), None);
        assert_eq!(table.find(u64::MAX), None);
    }

    #[test]
    fn unsized_symbol_extends_to_next() {
        let table = table(&[(0x100, 0, "asm"), (0x180, 8, "c")]);
        assert_eq!(table.find(0x17f).unwrap().name, "asm");
        assert_eq!(table.find(0x180).unwrap().name, "c");
    }

    #[test]
    fn nested_symbol_falls_back_to_outer() {
        let table = table(&[(0x100, 0x100, "outer"), (0x120, 0x10, "inner")]);
        assert_eq!(table.find(0x125).unwrap().name, "inner");
        assert_eq!(table.find(0x150).unwrap().name, "outer");
    }

    #[test]
    fn empty_table_finds_nothing() {
        assert_eq!(SymbolTable::default().find(0x1000), None);
    }
}
