//! The output of symbolization: source-level frames for one recorded address.
//!
//! One machine address can stand for several source-level frames when the compiler
//! inlined functions into each other. [`SymbolizedAddress`] holds all of them in a fixed
//! order, so reporters can print them without knowing how they were found.

use std::sync::Arc;

use crate::module_map::ModuleIdx;

/// One source-level frame.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    /// The demangled function name (Rust legacy and v0, C++ Itanium), or `None` when no
    /// symbol covers the address.
    pub function: Option<String>,
    /// The name as stored in the file (the mangled linkage name when there is one).
    pub raw_name: Option<String>,
    /// The source file, as the DWARF line table names it (usually an absolute path).
    pub file: Option<String>,
    /// The 1-based source line, when DWARF line information covers the address.
    pub line: Option<u32>,
    /// The 1-based source column, when the compiler recorded one.
    pub column: Option<u32>,
    /// `true` when this function was inlined into the next frame of the list.
    pub inlined: bool,
    /// The module the address belongs to, or `None` for an address outside every module.
    pub module: Option<ModuleIdx>,
}

impl Frame {
    /// Returns a frame that knows only its module (or not even that): what an
    /// unresolvable address gives, so callers can still print `0x7f… in libfoo.so`.
    pub fn unresolved(module: Option<ModuleIdx>) -> Self {
        Frame {
            function: None,
            raw_name: None,
            file: None,
            line: None,
            column: None,
            inlined: false,
            module,
        }
    }

    /// Returns the last component of [`Frame::file`], e.g. `main.c`.
    pub fn file_name(&self) -> Option<&str> {
        let file = self.file.as_deref()?;
        Some(file.rsplit('/').next().unwrap_or(file))
    }
}

/// All frames for one recorded address.
///
/// Order: **innermost first**. `frames[0]` is the function whose code contains the
/// address (possibly inlined); each following frame is the function it was inlined
/// into; the last frame is the real, out-of-line function (`inlined == false`). This is
/// the order of a backtrace, so a stack's frames can be concatenated as they are.
///
/// Invariant: `frames` is never empty. An unresolvable address has exactly one frame,
/// made by [`Frame::unresolved`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolizedAddress {
    /// The address as given by the caller (not the `address - 1` used for lookup).
    pub address: u64,
    /// The frames, innermost first; shared with the symbolizer's cache.
    pub frames: Arc<[Frame]>,
}

impl SymbolizedAddress {
    /// Returns the module of the address, or `None` when it lies outside every module.
    pub fn module(&self) -> Option<ModuleIdx> {
        self.frames.first().and_then(|frame| frame.module)
    }

    /// Returns the out-of-line function that contains the address (the last frame).
    ///
    /// It is `None` only for a value built by hand with no frames; the symbolizer never
    /// returns one.
    pub fn outer_frame(&self) -> Option<&Frame> {
        self.frames.last()
    }

    /// Returns `true` when at least one frame has a function name.
    pub fn is_resolved(&self) -> bool {
        self.frames.iter().any(|frame| frame.function.is_some())
    }
}
