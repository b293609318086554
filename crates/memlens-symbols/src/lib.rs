//! Offline symbolization of recorded return addresses for memlens.
//!
//! The recorder stores raw return addresses and the target's module map (one
//! [`ModuleInfo`] per object `dl_iterate_phdr` reported). After the run, this crate
//! turns each address into source-level [`Frame`]s — function (demangled), file, line,
//! column, and the chain of inlined functions — by opening the module files on disk,
//! plus their separate debug files under `/usr/lib/debug` when installed.
//!
//! ```no_run
//! use memlens_symbols::{Symbolizer, SymbolizerOptions};
//! # let modules = Vec::new();
//! # let stack: Vec<u64> = Vec::new();
//! let options = SymbolizerOptions {
//!     main_executable: Some("/usr/bin/myprog".into()),
//!     ..SymbolizerOptions::default()
//! };
//! let mut symbolizer = Symbolizer::new(modules, options);
//! for address in symbolizer.symbolize_all(&stack) {
//!     for frame in address.frames.iter() {
//!         let module = frame.module.map_or("?", |m| symbolizer.module_name(m));
//!         println!("{:#x} {} in {module}", address.address,
//!                  frame.function.as_deref().unwrap_or("??"));
//!     }
//! }
//! for diagnostic in symbolizer.diagnostics() {
//!     eprintln!("warning: {diagnostic}");
//! }
//! ```
//!
//! # Conventions
//!
//! - **Every address is a return address.** Frame 0 of a recorded stack is the return
//!   address into malloc's caller, so *all* frames are looked up at `address - 1`, inside
//!   the call instruction. Results carry the address as given.
//! - **Frames are innermost first.** For one address, `frames[0]` is the most deeply
//!   inlined function and the last frame is the out-of-line function
//!   (`inlined == false`); see [`SymbolizedAddress`].
//! - **Nothing fails.** Missing files, rebuilt binaries (build id mismatch), truncated
//!   ELF files and addresses outside every module give frames without names and a
//!   [`Diagnostic`], reported once.
//!
//! # Guarantees and responsibilities
//!
//! - Offline: only local files are read (no debuginfod or other network access).
//! - A module whose file on disk has a different build id than the recorded one gets
//!   no names at all: wrong names are worse than none.
//! - DWARF first (also from `.build-id` and `.gnu_debuglink` debug files and dwz
//!   supplementary files); the ELF `.symtab`/`.dynsym` when there is no DWARF.
//! - Each unique address is symbolized once; each module's files are read once; the
//!   modules of a batch are processed in parallel ([`Symbolizer::symbolize_all`]).
//!
//! # Why `addr2line` and not `blazesym`
//!
//! Both were tried on the same 9,836 addresses in glibc 2.36 with its `libc6-dbg` debug
//! file (2 cores, release build). Cold, including parsing, they are equal (blazesym
//! 0.2.7: 64 ms, 6.5 µs/address; `addr2line` 0.27 + `object` + `gimli`: 61 ms,
//! 6.2 µs/address), and they find the same names, lines and 946 inlined frames. Warm,
//! `addr2line` is twice as fast (0.35 against 0.66 µs/address). The choice rests on fit:
//!
//! - blazesym's `Symbolizer` is `!Send` (it uses `Rc`), so a per-module parallel batch
//!   would need a symbolizer per thread and re-parse files; an `addr2line::Context`
//!   over owned buffers moves to a rayon worker.
//! - We need both the raw and the demangled name; blazesym returns one of them.
//! - We need our own module layer anyway: build id verification against the *recorded*
//!   id with a "mismatched" state, and diagnostics that say which file was used.
//! - `addr2line`, `gimli` and `object` are a subset of blazesym's own dependencies.
//!
//! The price is the code blazesym would have given us: debug-file lookup
//! (`debug_files.rs`) and the symbol-table fallback (`symbol_table.rs`).
//!
//! # Speed
//!
//! `cargo run --release -p memlens-symbols --example throughput` symbolizes 9,959
//! unique addresses spread over every function of libc and of a 9.7 MB Rust binary
//! (2 cores): 7.7 µs/address cold with libc's DWARF from `libc6-dbg` (51 ms of it
//! opening and decompressing files, then 4.2 µs/address of first lookups), 3.8
//! µs/address cold with libc from `.dynsym`, and 0.03 µs/address for cached addresses.
//! First lookups are dominated by parsing each touched DWARF unit's line program and
//! functions once; a real trace touches far fewer units than this spread does.
//!
//! # Codemap
//!
//! - `module_map.rs`: the recorded module map and the address → module index.
//! - `symbolizer.rs`: the entry point, [`Symbolizer`], and its options.
//! - `frame.rs` and `diagnostics.rs`: the output types.
//! - `module_symbols.rs`: loading one module's symbol sources, and lookups in them.
//! - `elf_file.rs`: reading ELF files and their build id, debug links and segments.
//! - `debug_files.rs`: where separate debug files may be, and how each is verified.
//! - `symbol_table.rs`: the `.symtab`/`.dynsym` fallback.
//! - `data_symbols.rs`: the variables of an ELF file, for recorders that name memory.
//! - `dwarf.rs`: DWARF lookups with inlined frames.
//! - `demangle.rs`: Rust and C++ demangling.
//! - `cache.rs`: the per-address cache.
//! - `interposition.rs`: whether `LD_PRELOAD` can see an executable's allocations.
//! - `policy.rs`: the frame policy (user code, library, allocator, runtime, loader,
//!   recorder), applied once per frame by the ingest layer.

#![deny(missing_docs)]

mod cache;
mod data_symbols;
mod debug_files;
mod demangle;
mod diagnostics;
mod dwarf;
mod elf_file;
mod frame;
mod interposition;
mod module_map;
mod module_symbols;
mod policy;
mod symbol_table;
mod symbolizer;

pub use data_symbols::{DataSymbol, DataSymbols, data_symbols};
pub use debug_files::DEFAULT_DEBUG_DIR;
pub use demangle::{LanguageHint, demangle};
pub use diagnostics::{Diagnostic, DiagnosticKind};
pub use elf_file::module_info_from_file;
pub use frame::{Frame, SymbolizedAddress};
pub use interposition::{Interposition, interposition};
pub use module_map::{ModuleAddress, ModuleIdx, ModuleInfo, ModuleMap, PF_R, PF_W, PF_X, Segment};
pub use policy::{FrameFacts, FramePolicy, WrapperPatternError};
pub use symbolizer::{ModuleStatus, Symbolizer, SymbolizerOptions};
