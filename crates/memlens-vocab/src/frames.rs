//! The frame policy's vocabulary: what kind of code a symbolized frame is in
//! ([`FrameKind`]) and the structured allocation [`Site`].
//!
//! The policy itself (which names and modules are which kind) lives in
//! `memlens-symbols`, which knows modules and names; the ingest layer applies it once
//! per frame, and every engine, command and wire type carries its answer. The rule
//! every view follows: **the site of a stack is its innermost frame that
//! [`can be a site`](FrameKind::can_be_site)** — user code or a library, never the
//! allocator or its wrappers, the C/C++/Rust runtime, the loader or the recorder — and
//! recorder frames are never shown at all.

use std::fmt;

/// What kind of code a frame is in, as the frame policy decides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "kebab-case")
)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export_to = "vocab.ts"))]
#[repr(u8)]
pub enum FrameKind {
    /// The program's own code (the main executable, or a frame nothing else claims).
    #[default]
    User = 0,
    /// A shared library's code (`libsqlite3`, `libssl`, `libxml2`…): a site like user
    /// code.
    Library = 1,
    /// The allocator or an allocator wrapper: `malloc`, `operator new`, `g_malloc`,
    /// `PyMem_Malloc`, `xmalloc`, and whatever `--wrapper GLOB` names.
    Allocator = 2,
    /// The C, C++ or Rust runtime and standard library: libc, libstdc++, `std::`
    /// internals inlined from system headers, Rust's `core`/`alloc`/`std`, the Java
    /// platform's classes.
    Runtime = 3,
    /// The dynamic loader (`ld-linux`, `_dl_*`).
    Loader = 4,
    /// memlens's own recorder: never shown.
    Recorder = 5,
}

impl FrameKind {
    /// Every kind, in the order of their numbers.
    pub const ALL: [FrameKind; 6] = [
        FrameKind::User,
        FrameKind::Library,
        FrameKind::Allocator,
        FrameKind::Runtime,
        FrameKind::Loader,
        FrameKind::Recorder,
    ];

    /// The kind's stored code (its number), as the engines' codecs write it. Explicit,
    /// so that reordering the kinds never changes what is stored; a new kind fails to
    /// compile here until it gets a code.
    pub fn code(self) -> u8 {
        match self {
            FrameKind::User => 0,
            FrameKind::Library => 1,
            FrameKind::Allocator => 2,
            FrameKind::Runtime => 3,
            FrameKind::Loader => 4,
            FrameKind::Recorder => 5,
        }
    }

    /// The kind stored as `code`, if it is one.
    pub fn from_code(code: u8) -> Option<FrameKind> {
        FrameKind::ALL.into_iter().find(|k| k.code() == code)
    }

    /// Whether a frame of this kind can be an allocation site: user code and libraries.
    pub fn can_be_site(self) -> bool {
        matches!(self, FrameKind::User | FrameKind::Library)
    }

    /// Whether frames of this kind appear in stacks at all (all but the recorder's).
    pub fn is_shown(self) -> bool {
        self != FrameKind::Recorder
    }

    /// The kind of number `n` (see [`FrameKind::ALL`]); user code for unknown numbers.
    pub fn from_u8(n: u8) -> FrameKind {
        FrameKind::ALL
            .get(usize::from(n))
            .copied()
            .unwrap_or_default()
    }

    /// The kind's name as users read it: `user`, `library`, `allocator`, `runtime`,
    /// `loader`, `recorder`.
    pub fn name(self) -> &'static str {
        match self {
            FrameKind::User => "user",
            FrameKind::Library => "library",
            FrameKind::Allocator => "allocator",
            FrameKind::Runtime => "runtime",
            FrameKind::Loader => "loader",
            FrameKind::Recorder => "recorder",
        }
    }
}

/// One source-level frame as users see it: an allocation site, or one frame of a
/// stack. Carried as a struct from the symbolizer to the page; [`Site`]'s `Display`
/// is the one way it is written as text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export_to = "vocab.ts"))]
pub struct Site {
    /// The demangled function name; empty when no symbol covers the address.
    pub function: String,
    /// The source file as the debug information names it (usually a full path); empty
    /// when unknown.
    pub file: String,
    /// The 1-based source line; 0 when unknown.
    pub line: u32,
    /// The module's file name (`libsqlite3.so.0`, `perl`); empty when the address lies
    /// outside every module.
    pub module: String,
    /// The recorded return address.
    pub address: u64,
    /// The address's offset into its module's file image (for `0x… (in module+0x…)`).
    pub module_offset: u64,
    /// Whether this function was inlined into the next frame outwards.
    pub inlined: bool,
    /// What the frame policy says of it.
    pub kind: FrameKind,
}

impl Site {
    /// A user-code site at `function (file:line)`, with no address: for tests, fixtures
    /// and hand-made models.
    pub fn at(function: &str, file: &str, line: u32) -> Site {
        Site {
            function: function.to_owned(),
            file: file.to_owned(),
            line,
            ..Site::default()
        }
    }

    /// The last component of [`Site::file`], e.g. `main.c`.
    pub fn file_name(&self) -> &str {
        self.file.rsplit('/').next().unwrap_or(&self.file)
    }

    /// Whether the symbolizer named the function.
    pub fn is_symbolized(&self) -> bool {
        !self.function.is_empty()
    }
}

impl fmt::Display for Site {
    /// `function (file:line)`, `function (in module)` without line information, and
    /// `0xADDRESS (in module+0xOFFSET)` for a frame nothing names.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let module = if self.module.is_empty() {
            "?"
        } else {
            &self.module
        };
        match (
            self.function.is_empty(),
            self.file.is_empty() || self.line == 0,
        ) {
            (false, false) => write!(f, "{} ({}:{})", self.function, self.file_name(), self.line),
            (false, true) => write!(f, "{} (in {module})", self.function),
            (true, _) if self.module.is_empty() => write!(f, "{:#x} (in ?)", self.address),
            (true, _) => write!(
                f,
                "{:#x} (in {module}+{:#x})",
                self.address, self.module_offset
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_and_say_what_can_be_a_site() {
        for kind in FrameKind::ALL {
            assert_eq!(FrameKind::from_u8(kind as u8), kind);
        }
        let sites: Vec<_> = FrameKind::ALL
            .iter()
            .filter(|k| k.can_be_site())
            .map(|k| k.name())
            .collect();
        assert_eq!(sites, ["user", "library"]);
        assert!(!FrameKind::Recorder.is_shown());
        assert_eq!(FrameKind::from_u8(200), FrameKind::User);
    }

    #[test]
    fn sites_print_one_way() {
        let mut site = Site {
            function: "sqlite3VdbeExec".into(),
            file: "/build/sqlite3/src/vdbe.c".into(),
            line: 812,
            module: "libsqlite3.so.0".into(),
            address: 0x7f00_0000_1234,
            module_offset: 0x1234,
            inlined: false,
            kind: FrameKind::Library,
        };
        assert_eq!(site.to_string(), "sqlite3VdbeExec (vdbe.c:812)");
        site.line = 0;
        assert_eq!(site.to_string(), "sqlite3VdbeExec (in libsqlite3.so.0)");
        site.function.clear();
        assert_eq!(
            site.to_string(),
            "0x7f0000001234 (in libsqlite3.so.0+0x1234)"
        );
        site.module.clear();
        assert_eq!(site.to_string(), "0x7f0000001234 (in ?)");
    }
}
