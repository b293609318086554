//! The symbolizer: a recorded process's module map in, frames per address out.
//!
//! [`Symbolizer`] owns the module map, each module's loaded symbol sources and the
//! per-address cache. It loads a module's files the first time one of its addresses is
//! asked for, and symbolizes the addresses of different modules in parallel.
//!
//! Architecture invariant: nothing here panics on odd input or returns an error. Every
//! address gets frames (at worst one [`Frame::unresolved`]), and every problem becomes
//! one [`Diagnostic`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use crate::cache::AddressCache;
use crate::debug_files::DEFAULT_DEBUG_DIR;
use crate::diagnostics::{Diagnostic, DiagnosticKind};
use crate::frame::{Frame, SymbolizedAddress};
use crate::module_map::{ModuleAddress, ModuleIdx, ModuleInfo, ModuleMap};
use crate::module_symbols::{self, LoadedModule};

/// How many example addresses the "outside every module" diagnostic keeps.
const OUTSIDE_EXAMPLES: usize = 8;

/// Settings for a [`Symbolizer`].
#[derive(Clone, Debug)]
pub struct SymbolizerOptions {
    /// The main executable's path on disk, used for modules recorded with an empty
    /// path (`dl_iterate_phdr` reports the main program as `""`).
    pub main_executable: Option<PathBuf>,
    /// Directories holding separate debug files, searched by build id
    /// (`<dir>/.build-id/ab/cdef….debug`) and by debug link (`<dir>/<module dir>/<link>`).
    /// The default is `/usr/lib/debug`.
    pub debug_dirs: Vec<PathBuf>,
    /// Whether to look for separate debug files at all. When `false`, only the
    /// module's own file is read (its DWARF if it has any, else its symbol tables).
    pub use_debug_files: bool,
}

impl Default for SymbolizerOptions {
    fn default() -> Self {
        SymbolizerOptions {
            main_executable: None,
            debug_dirs: vec![PathBuf::from(DEFAULT_DEBUG_DIR)],
            use_debug_files: true,
        }
    }
}

/// How far the symbolizer got with a module's files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModuleStatus {
    /// No address in the module has been asked for yet, so its files were not opened.
    NotLoaded,
    /// The module's files were read.
    Loaded {
        /// The file DWARF is read from (the module itself or its separate debug file),
        /// or `None` when only the ELF symbol tables are available.
        dwarf_file: Option<PathBuf>,
        /// The number of function symbols in the ELF symbol tables.
        symbol_count: usize,
    },
    /// The file on disk is not the file that was loaded (build id or segments differ);
    /// its addresses get no function names.
    Mismatched,
    /// The module has no usable file (missing, unreadable, not ELF, or virtual like
    /// the vDSO); its addresses get no function names.
    Unavailable,
}

/// One module's slot: where its file is and what loading it gave.
struct ModuleSlot {
    /// Where the module's symbols come from.
    source: ModuleSource,
    /// The short name to print.
    name: String,
    /// The loading state.
    state: SlotState,
}

/// Where a module's symbols come from.
enum ModuleSource {
    /// A file on disk.
    File(PathBuf),
    /// Nowhere: the module has no file (the vDSO).
    Virtual,
    /// Nowhere: the main executable, whose path was neither recorded nor configured.
    UnknownMainExecutable,
}

/// The loading state of a module.
enum SlotState {
    /// Not opened yet.
    NotLoaded,
    /// Opened; see [`LoadedModule`].
    Loaded(LoadedModule),
}

/// Summary of the addresses found outside every module.
#[derive(Default)]
struct OutsideAddresses {
    count: u64,
    examples: Vec<u64>,
}

/// Symbolizes the addresses of one recorded process.
///
/// All addresses are **return addresses** (frame 0 of a recorded stack is the return
/// address into malloc's caller), so each is looked up at `address - 1`, inside the
/// call instruction; otherwise a call at the end of a function or of an inlined range
/// would be attributed to the next one. Results report the address as given.
pub struct Symbolizer {
    options: SymbolizerOptions,
    map: ModuleMap,
    modules: Vec<ModuleSlot>,
    cache: AddressCache,
    diagnostics: Vec<Diagnostic>,
    outside: OutsideAddresses,
}

impl Symbolizer {
    /// Creates a symbolizer for `modules` (module `i` gets `ModuleIdx(i)`). No file is
    /// opened until an address needs it.
    pub fn new(modules: Vec<ModuleInfo>, options: SymbolizerOptions) -> Self {
        let mut symbolizer = Symbolizer {
            options,
            map: ModuleMap::default(),
            modules: Vec::new(),
            cache: AddressCache::default(),
            diagnostics: Vec::new(),
            outside: OutsideAddresses::default(),
        };
        for module in modules {
            symbolizer.add_module(module);
        }
        symbolizer
    }

    /// Adds a module loaded later (a `dlopen` in the trace) and returns its index.
    ///
    /// Where it overlaps an older module it takes precedence, and cached results for
    /// addresses in its ranges are forgotten.
    pub fn add_module(&mut self, info: ModuleInfo) -> ModuleIdx {
        let (source, name) = self.source_of(&info);
        let idx = self.map.push(info);
        let ranges: Vec<(u64, u64)> = self.map.ranges_of(idx).collect();
        for (start, end) in ranges {
            self.cache.forget_range(start, end);
        }
        self.modules.push(ModuleSlot {
            source,
            name,
            state: SlotState::NotLoaded,
        });
        idx
    }

    /// Names `address` as `frame` without any lookup: the recorder already knew its
    /// name (a synthetic frame of a managed runtime, such as a Java method and line).
    /// Named addresses take precedence over the module map and produce no
    /// diagnostics.
    pub fn name_address(&mut self, address: u64, frame: Frame) {
        self.cache.insert(address, Arc::from(vec![frame]));
    }

    /// Symbolizes one address. Prefer [`Symbolizer::symbolize_all`] for many.
    pub fn symbolize(&mut self, address: u64) -> SymbolizedAddress {
        // `symbolize_all` returns one result per input address, so there is exactly one.
        self.symbolize_all(&[address])
            .pop()
            .unwrap_or_else(|| SymbolizedAddress {
                address,
                frames: Arc::from(vec![Frame::unresolved(None)]),
            })
    }

    /// Symbolizes `addresses`, returning one result per input address, in input order.
    ///
    /// Each unique address is looked up once per symbolizer (later calls hit the
    /// cache). The addresses not yet cached are grouped by module, and the modules are
    /// processed in parallel on the rayon thread pool; each module's files are opened
    /// and parsed once, on first use.
    pub fn symbolize_all(&mut self, addresses: &[u64]) -> Vec<SymbolizedAddress> {
        self.resolve_uncached(addresses);
        addresses
            .iter()
            .map(|&address| SymbolizedAddress {
                address,
                frames: self
                    .cache
                    .get(address)
                    .cloned()
                    .unwrap_or_else(|| Arc::from(vec![Frame::unresolved(None)])),
            })
            .collect()
    }

    /// The module that holds `address` and the address's offset in its file, from the
    /// module map alone (no file is read), or `None` outside every module.
    pub fn find_module(&self, address: u64) -> Option<ModuleAddress> {
        self.map.find(address)
    }

    /// Returns the recorded information of module `idx`.
    pub fn module(&self, idx: ModuleIdx) -> Option<&ModuleInfo> {
        self.map.get(idx)
    }

    /// Returns all modules in index order.
    pub fn modules(&self) -> &[ModuleInfo] {
        self.map.modules()
    }

    /// Returns the path of module `idx`'s file on disk: the recorded path, or
    /// [`SymbolizerOptions::main_executable`] for the main program. `None` for a module
    /// without a file.
    pub fn module_path(&self, idx: ModuleIdx) -> Option<&Path> {
        match &self.modules.get(idx.index())?.source {
            ModuleSource::File(path) => Some(path),
            ModuleSource::Virtual | ModuleSource::UnknownMainExecutable => None,
        }
    }

    /// Returns the short name to print for module `idx` (`libc.so.6`, the executable's
    /// file name, `linux-vdso.so.1`), or `"?"` for an unknown index.
    pub fn module_name(&self, idx: ModuleIdx) -> &str {
        self.modules.get(idx.index()).map_or("?", |slot| &slot.name)
    }

    /// Returns how far loading module `idx` got.
    pub fn module_status(&self, idx: ModuleIdx) -> ModuleStatus {
        let Some(slot) = self.modules.get(idx.index()) else {
            return ModuleStatus::Unavailable;
        };
        match &slot.state {
            SlotState::NotLoaded => ModuleStatus::NotLoaded,
            SlotState::Loaded(LoadedModule::Usable(symbols)) => ModuleStatus::Loaded {
                dwarf_file: symbols.dwarf_path().map(Path::to_owned),
                symbol_count: symbols.symbol_count(),
            },
            SlotState::Loaded(LoadedModule::Mismatched) => ModuleStatus::Mismatched,
            SlotState::Loaded(LoadedModule::Unavailable) => ModuleStatus::Unavailable,
        }
    }

    /// Returns every problem found so far, each once, in the order found; addresses
    /// outside every module are summed up in one final diagnostic.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut all = self.diagnostics.clone();
        if self.outside.count > 0 {
            all.push(Diagnostic {
                module: None,
                kind: DiagnosticKind::AddressesOutsideModules {
                    count: self.outside.count,
                    examples: self.outside.examples.clone(),
                },
            });
        }
        all
    }

    /// Returns the number of unique addresses symbolized so far.
    pub fn cached_addresses(&self) -> usize {
        self.cache.len()
    }

    /// Works out where a module's symbols come from, and its display name.
    fn source_of(&self, info: &ModuleInfo) -> (ModuleSource, String) {
        if info.is_virtual() {
            return (ModuleSource::Virtual, info.file_name().to_owned());
        }
        if !info.path.is_empty() {
            let path = PathBuf::from(&info.path);
            return (ModuleSource::File(path), info.file_name().to_owned());
        }
        match &self.options.main_executable {
            Some(path) => {
                let name = path
                    .file_name()
                    .map_or_else(|| "[main]".to_owned(), |n| n.to_string_lossy().into_owned());
                (ModuleSource::File(path.clone()), name)
            }
            None => (ModuleSource::UnknownMainExecutable, "[main]".to_owned()),
        }
    }

    /// Symbolizes the addresses not in the cache yet and caches them.
    fn resolve_uncached(&mut self, addresses: &[u64]) {
        let mut pending: Vec<u64> = addresses
            .iter()
            .copied()
            .filter(|&address| !self.cache.contains(address))
            .collect();
        if pending.is_empty() {
            return;
        }
        pending.sort_unstable();
        pending.dedup();

        // Group by module: (address as given, module-relative lookup address).
        let mut groups: Vec<Vec<(u64, u64)>> = vec![Vec::new(); self.modules.len()];
        for address in pending {
            let found = address
                .checked_sub(1)
                .and_then(|lookup| self.map.find(lookup));
            match found {
                Some(hit) => groups[hit.module.index()].push((address, hit.svma)),
                None => {
                    self.outside.count += 1;
                    if self.outside.examples.len() < OUTSIDE_EXAMPLES {
                        self.outside.examples.push(address);
                    }
                    let frames = Arc::from(vec![Frame::unresolved(None)]);
                    self.cache.insert(address, frames);
                }
            }
        }

        let options = &self.options;
        let infos = self.map.modules();
        let results: Vec<ModuleBatch> = self
            .modules
            .par_iter_mut()
            .zip(groups.into_par_iter())
            .enumerate()
            .filter(|(_, (_, group))| !group.is_empty())
            .map(|(index, (slot, group))| {
                let idx = ModuleIdx(index as u32);
                symbolize_module(idx, &infos[index], slot, &group, options)
            })
            .collect();

        for batch in results {
            for (address, frames) in batch.frames {
                self.cache.insert(address, frames);
            }
            self.diagnostics
                .extend(batch.diagnostics.into_iter().map(|kind| Diagnostic {
                    module: Some(batch.module),
                    kind,
                }));
        }
    }
}

/// The result of symbolizing one module's share of a batch.
struct ModuleBatch {
    module: ModuleIdx,
    frames: Vec<(u64, Arc<[Frame]>)>,
    diagnostics: Vec<DiagnosticKind>,
}

/// Symbolizes `group` (addresses with their module-relative lookup addresses) in one
/// module, loading the module first if needed. Runs on a rayon worker.
fn symbolize_module(
    idx: ModuleIdx,
    info: &ModuleInfo,
    slot: &mut ModuleSlot,
    group: &[(u64, u64)],
    options: &SymbolizerOptions,
) -> ModuleBatch {
    let mut diagnostics = Vec::new();
    if let SlotState::NotLoaded = slot.state {
        let loaded = match &slot.source {
            ModuleSource::File(path) => module_symbols::load(
                info,
                path,
                &options.debug_dirs,
                options.use_debug_files,
                &mut diagnostics,
            ),
            ModuleSource::Virtual => {
                diagnostics.push(DiagnosticKind::VirtualModule {
                    name: info.path.clone(),
                });
                LoadedModule::Unavailable
            }
            ModuleSource::UnknownMainExecutable => {
                diagnostics.push(DiagnosticKind::NoMainExecutablePath);
                LoadedModule::Unavailable
            }
        };
        slot.state = SlotState::Loaded(loaded);
    }
    let frames = group
        .iter()
        .map(|&(address, svma)| {
            let frames = match &mut slot.state {
                SlotState::Loaded(LoadedModule::Usable(symbols)) => {
                    symbols.frames(svma, idx, &mut diagnostics)
                }
                _ => vec![Frame::unresolved(Some(idx))],
            };
            (address, Arc::from(frames))
        })
        .collect();
    ModuleBatch {
        module: idx,
        frames,
        diagnostics,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module_map::{PF_R, PF_X, Segment};

    fn module(path: &str, load_bias: u64) -> ModuleInfo {
        ModuleInfo {
            path: path.to_owned(),
            load_bias,
            segments: vec![Segment {
                vaddr: 0x1000,
                memsz: 0x1000,
                file_offset: 0x1000,
                flags: PF_R | PF_X,
            }],
            build_id: None,
        }
    }

    #[test]
    fn symbolizer_can_move_to_another_thread() {
        fn assert_send<T: Send>() {}
        assert_send::<Symbolizer>();
    }

    #[test]
    fn later_module_replaces_cached_results_in_its_range() {
        let mut symbolizer = Symbolizer::new(
            vec![module("/nonexistent/old.so", 0x10_0000)],
            SymbolizerOptions::default(),
        );
        let address = 0x10_1800;
        assert_eq!(symbolizer.symbolize(address).module(), Some(ModuleIdx(0)));
        let new = symbolizer.add_module(module("/nonexistent/new.so", 0x10_0000));
        assert_eq!(symbolizer.symbolize(address).module(), Some(new));
        assert_eq!(symbolizer.module_name(new), "new.so");
        assert_eq!(symbolizer.module_name(ModuleIdx(99)), "?");
        assert_eq!(symbolizer.module_status(new), ModuleStatus::Unavailable);
        // Each missing file is reported once.
        let kinds: Vec<_> = symbolizer
            .diagnostics()
            .into_iter()
            .map(|d| d.kind)
            .collect();
        assert_eq!(
            kinds,
            [
                DiagnosticKind::MissingFile {
                    path: "/nonexistent/old.so".into()
                },
                DiagnosticKind::MissingFile {
                    path: "/nonexistent/new.so".into()
                },
            ]
        );
    }

    #[test]
    fn return_address_at_the_end_of_a_segment_belongs_to_it() {
        let mut symbolizer = Symbolizer::new(
            vec![module("/nonexistent/a.so", 0)],
            SymbolizerOptions::default(),
        );
        // A call as the segment's last instruction returns to one past its end.
        assert_eq!(symbolizer.symbolize(0x2000).module(), Some(ModuleIdx(0)));
        assert_eq!(symbolizer.symbolize(0x2001).module(), None);
        assert_eq!(symbolizer.symbolize(0x1000).module(), None);
    }
}
