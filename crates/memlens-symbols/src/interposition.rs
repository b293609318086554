//! Whether an executable's allocations can be interposed with `LD_PRELOAD`: a
//! statically linked executable cannot, and one that links its own allocator (jemalloc,
//! mimalloc, tcmalloc) allocates past the interposed `malloc`. `memlens record` checks
//! before it runs the program so it can say so in one sentence.

use std::path::Path;

use object::{Object, ObjectSection, ObjectSymbol};

/// What an executable's ELF says about interposing its allocator with `LD_PRELOAD`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interposition {
    /// Nothing stands in the way (or it is a script: its interpreter is checked when
    /// it runs).
    Fine,
    /// A statically linked executable: `LD_PRELOAD` does not apply.
    StaticBinary,
    /// The executable defines its own allocator (named here): allocations through it
    /// are invisible to `LD_PRELOAD`.
    OwnAllocator(String),
}

/// Reads the executable at `path`; anything it cannot read or parse is [`Interposition::Fine`]
/// (the program's start will say what is wrong with it).
pub fn interposition(path: &Path) -> Interposition {
    let Ok(data) = std::fs::read(path) else {
        return Interposition::Fine;
    };
    let Ok(file) = object::File::parse(&*data) else {
        return Interposition::Fine; // a script: its interpreter is checked when it runs
    };
    let dynamic = file.sections().any(|s| s.name() == Ok(".interp"));
    if !dynamic && file.kind() == object::ObjectKind::Executable {
        return Interposition::StaticBinary;
    }
    for sym in file.dynamic_symbols().chain(file.symbols()) {
        let Ok(name) = sym.name() else { continue };
        if sym.is_definition()
            && matches!(
                name,
                "malloc" | "je_malloc" | "_rjem_malloc" | "mi_malloc" | "tc_malloc"
            )
        {
            return Interposition::OwnAllocator(name.to_string());
        }
    }
    Interposition::Fine
}
