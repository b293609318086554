//! The frame policy: what kind of code each symbolized frame is in — user code, a
//! library, the allocator or an allocator wrapper, the C/C++/Rust runtime, the loader
//! or the recorder ([`FrameKind`]).
//!
//! Decided here, once, for every command and the viewer: the ingest layer classifies
//! each frame when it symbolizes it, and the engines only read the answer. The site of
//! a stack is its innermost frame that can be a site (user code or a library); recorder
//! frames are never shown. Pure: it looks at names and paths, never at files.
//!
//! The rules, first match wins:
//! 1. **Recorder**: a frame in memlens's own libraries (`libmemlens_preload.so`,
//!    `libmemlens_jvmti.so`).
//! 2. **Loader**: a frame in `ld-linux*.so`/`ld-*.so`, or a `_dl_` function.
//! 3. **Allocator**: the malloc family, C++ `operator new`/`delete`, Rust's allocator
//!    shims and the allocating code of its standard library (by source file, since
//!    its inlined frames have bare names), the allocation wrappers of well-known programs and libraries (Perl,
//!    SQLite, GLib, CPython, GNU `xmalloc`, the C++ standard allocators) and the
//!    user's own `--wrapper` patterns.
//! 4. **Runtime**: libc, libstdc++, libc++, libgcc, libpthread and libm; C++ standard
//!    library internals (`std::`, `__gnu_cxx::`, `__cxa_`, code inlined from
//!    `/usr/include/`); Rust's `core`, `alloc` and `std` (by name, or by a source file
//!    of its standard library); the Java platform's classes;
//!    the C start-up code (`_start`, `__libc_start_main`).
//! 5. **Library**: any other shared object than the main executable.
//! 6. **User**: the rest: the main executable, and named frames outside every module
//!    (Java frames).

use memlens_vocab::FrameKind;

/// Modules of memlens's recorders, by file-name prefix.
const RECORDER_MODULES: &[&str] = &["libmemlens_preload", "libmemlens_jvmti", "libmemlens"];

/// Runtime modules, by file-name prefix.
const RUNTIME_MODULES: &[&str] = &[
    "libc.so",
    "libc-",
    "libstdc++",
    "libc++",
    "libc++abi",
    "libgcc_s",
    "libpthread",
    "libm.so",
    "libm-",
    "libdl",
    "libjemalloc",
    "libtcmalloc",
    "libmimalloc",
];

/// Allocator entry points and allocation wrappers, by function-name prefix.
const ALLOCATOR_PREFIXES: &[&str] = &[
    // The C allocator and glibc's internals.
    "malloc",
    "calloc",
    "realloc",
    "reallocarray",
    "free",
    "memalign",
    "posix_memalign",
    "aligned_alloc",
    "valloc",
    "pvalloc",
    "strdup",
    "strndup",
    "__strdup",
    "__strndup",
    "__libc_malloc",
    "__libc_calloc",
    "__libc_realloc",
    "__libc_memalign",
    "_int_malloc",
    "_int_realloc",
    "_int_memalign",
    "tcache_",
    // C++.
    "operator new",
    "operator delete",
    "__gnu_cxx::new_allocator",
    "__gnu_cxx::__new_allocator",
    "std::allocator",
    "std::__new_allocator",
    "std::allocator_traits",
    // Rust's allocator shims.
    "__rust_alloc",
    "__rust_realloc",
    "__rdl_",
    "__rg_",
    "alloc::alloc::",
    "<alloc::alloc::Global",
    // Perl.
    "Perl_safesys",
    // SQLite.
    "sqlite3Malloc",
    "sqlite3MemMalloc",
    "sqlite3MemRealloc",
    "sqlite3Realloc",
    "sqlite3_malloc",
    "sqlite3_realloc",
    "sqlite3DbMalloc",
    "sqlite3DbRealloc",
    "dbMallocRawFinish",
    "dbReallocFinish",
    // GLib.
    "g_malloc",
    "g_malloc0",
    "g_realloc",
    "g_try_malloc",
    "g_try_realloc",
    "g_slice_alloc",
    "g_memdup",
    // CPython.
    "PyMem_",
    "_PyMem_",
    "PyObject_Malloc",
    "PyObject_Calloc",
    "PyObject_Realloc",
    "_PyObject_Malloc",
    "_PyObject_Calloc",
    "_PyObject_Realloc",
    "pymalloc_",
    // GNU and git's checked allocators.
    "xmalloc",
    "xcalloc",
    "xrealloc",
    "xzalloc",
    "xstrdup",
    "xstrndup",
    "xmemdupz",
    "do_xmalloc",
];

/// Runtime code, by function-name prefix.
const RUNTIME_PREFIXES: &[&str] = &[
    "std::",
    "__gnu_cxx::",
    "__cxxabiv1::",
    "__cxa_",
    "__gxx_",
    "_Unwind_",
    "core::",
    "alloc::",
    "<core::",
    "<alloc::",
    "<std::",
    "_ZN4core",
    "_ZN5alloc",
    "_ZN3std",
    "_start",
    "__libc_start",
    "__libc_",
    "_IO_",
    // The Java platform's own classes (Java frames are `package.Class.method`).
    "java.",
    "javax.",
    "jdk.",
    "sun.",
    "com.sun.",
];

/// The frame policy, with the user's own allocation wrappers.
#[derive(Debug, Clone, Default)]
pub struct FramePolicy {
    wrappers: Vec<glob::Pattern>,
}

/// A `--wrapper` pattern that is not a valid glob.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{pattern}` is not a valid wrapper pattern: {reason}")]
pub struct WrapperPatternError {
    /// The pattern as given.
    pub pattern: String,
    /// What is wrong with it.
    pub reason: String,
}

/// One frame as the policy sees it.
#[derive(Debug, Clone, Copy, Default)]
pub struct FrameFacts<'a> {
    /// The demangled function name; empty when unknown.
    pub function: &'a str,
    /// The source file; empty when unknown.
    pub file: &'a str,
    /// The path (or file name) of the module the address is in; empty when outside
    /// every module.
    pub module: &'a str,
    /// Whether that module is the main executable.
    pub in_main_executable: bool,
}

impl FramePolicy {
    /// The built-in policy plus the user's allocation wrappers: glob patterns over
    /// demangled function names (`*` any text, `?` one character, `[…]` a class),
    /// e.g. `my_alloc*` or `Arena::allocate*`.
    pub fn with_wrappers<S: AsRef<str>>(patterns: &[S]) -> Result<Self, WrapperPatternError> {
        let wrappers = patterns
            .iter()
            .map(|p| {
                glob::Pattern::new(p.as_ref()).map_err(|e| WrapperPatternError {
                    pattern: p.as_ref().to_owned(),
                    reason: e.msg.to_owned(),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(FramePolicy { wrappers })
    }

    /// The kind every frame of the module at `module_path` has whatever its function,
    /// when the module alone decides it (memlens's recorder, the loader, the C and C++
    /// runtime libraries): lets a caller skip symbolizing frames it will not show as
    /// sites.
    pub fn module_kind(&self, module_path: &str) -> Option<FrameKind> {
        let name = module_path.rsplit('/').next().unwrap_or(module_path);
        if RECORDER_MODULES.iter().any(|m| name.starts_with(m)) {
            Some(FrameKind::Recorder)
        } else if is_loader_module(name) {
            Some(FrameKind::Loader)
        } else if RUNTIME_MODULES.iter().any(|m| name.starts_with(m)) {
            Some(FrameKind::Runtime)
        } else {
            None
        }
    }

    /// The kind of code `frame` is in (see the module documentation for the rules).
    pub fn classify(&self, frame: &FrameFacts<'_>) -> FrameKind {
        let module_name = frame.module.rsplit('/').next().unwrap_or(frame.module);
        let function = frame.function;
        if RECORDER_MODULES.iter().any(|m| module_name.starts_with(m)) {
            return FrameKind::Recorder;
        }
        if is_loader_module(module_name) || function.starts_with("_dl_") {
            return FrameKind::Loader;
        }
        let rust_std = rust_std_source(frame.file);
        if (!function.is_empty()
            && (ALLOCATOR_PREFIXES.iter().any(|p| function.starts_with(p))
                || self.wrappers.iter().any(|w| w.matches(function))))
            || rust_std.is_some_and(|f| RUST_ALLOCATOR_SOURCES.iter().any(|s| f.starts_with(s)))
        {
            return FrameKind::Allocator;
        }
        if RUNTIME_MODULES.iter().any(|m| module_name.starts_with(m))
            || RUNTIME_PREFIXES.iter().any(|p| function.starts_with(p))
            || frame.file.starts_with("/usr/include/")
            || rust_std.is_some()
        {
            return FrameKind::Runtime;
        }
        if !frame.module.is_empty() && !frame.in_main_executable {
            return FrameKind::Library;
        }
        FrameKind::User
    }
}

/// Rust's standard library sources, below their `library/` folder, whose code is the
/// allocator (the global allocator's entry points and `RawVec`'s growth).
const RUST_ALLOCATOR_SOURCES: &[&str] = &[
    "alloc/src/alloc.rs",
    "alloc/src/raw_vec",
    "std/src/alloc.rs",
    "std/src/sys/alloc/",
];

/// The path below `library/` of a source file of Rust's standard library
/// (`/rustc/<commit>/library/alloc/src/alloc.rs`, or under a toolchain's
/// `lib/rustlib/src/rust/library/`). Its inlined frames carry a bare name (`alloc`,
/// `grow_impl`) without the `alloc::` path the name rules look for: the file tells.
fn rust_std_source(file: &str) -> Option<&str> {
    let rest = file
        .strip_prefix("/rustc/")
        .or_else(|| file.split_once("/rustlib/src/rust/").map(|(_, r)| r))?;
    rest.split_once("library/").map(|(_, r)| r)
}

/// `ld-linux-x86-64.so.2`, `ld-2.31.so`, `ld64.so.1`.
fn is_loader_module(name: &str) -> bool {
    name.starts_with("ld-linux")
        || (name.starts_with("ld") && name.contains(".so") && {
            let stem = name.split(".so").next().unwrap_or("");
            stem == "ld64" || stem.starts_with("ld-")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(policy: &FramePolicy, function: &str, module: &str) -> FrameKind {
        policy.classify(&FrameFacts {
            function,
            file: "",
            module,
            in_main_executable: module == "/bin/app",
        })
    }

    #[test]
    fn allocators_runtime_and_wrappers_are_not_sites() {
        let p = FramePolicy::default();
        let not_sites = [
            ("operator new(unsigned long)", "/usr/lib/libstdc++.so.6"),
            (
                "std::_Rb_tree<Key, Value>::_M_emplace_hint_unique",
                "/bin/app",
            ),
            (
                "<alloc::vec::Vec<T> as core::clone::Clone>::clone",
                "/bin/app",
            ),
            ("alloc::raw_vec::finish_grow", "/bin/app"),
            ("__rust_alloc", "/bin/app"),
            ("malloc", "/lib/x86_64-linux-gnu/libc.so.6"),
            ("Perl_safesysmalloc", "/usr/bin/perl"),
            ("sqlite3Malloc", "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0"),
            ("g_malloc0", "/usr/lib/x86_64-linux-gnu/libglib-2.0.so.0"),
            ("PyMem_Malloc", "/usr/bin/python3"),
            ("_PyObject_Malloc", "/usr/bin/python3"),
            ("xmalloc", "/usr/bin/git"),
            ("_dl_start", "/lib64/ld-linux-x86-64.so.2"),
            ("dlopen", "/work/target/release/libmemlens_preload.so"),
            ("java.util.HashMap.put", ""),
            ("", "/lib/x86_64-linux-gnu/libc.so.6"),
        ];
        for (function, module) in not_sites {
            let k = kind(&p, function, module);
            assert!(!k.can_be_site(), "{function} in {module} is {k:?}");
        }
        assert_eq!(
            kind(&p, "dlopen", "/x/libmemlens_preload.so"),
            FrameKind::Recorder
        );
        assert_eq!(
            kind(&p, "_dl_start", "/lib64/ld-linux-x86-64.so.2"),
            FrameKind::Loader
        );
    }

    #[test]
    fn rust_standard_library_frames_with_bare_names_are_told_by_their_file() {
        let p = FramePolicy::default();
        let frame = |function: &'static str, file: &str| {
            p.classify(&FrameFacts {
                function,
                file,
                module: "/bin/app",
                in_main_executable: true,
            })
        };
        let std = "/rustc/17067e9ac6d7e98f18d4d1bd2e5ed2a1e0e3f1a2/library";
        for (function, file, want) in [
            ("alloc", "alloc/src/alloc.rs", FrameKind::Allocator),
            (
                "finish_grow<alloc::alloc::Global>",
                "alloc/src/raw_vec/mod.rs",
                FrameKind::Allocator,
            ),
            ("grow_one", "alloc/src/raw_vec.rs", FrameKind::Allocator),
            ("push", "alloc/src/vec/mod.rs", FrameKind::Runtime),
            ("to_vec", "alloc/src/slice.rs", FrameKind::Runtime),
            ("args", "std/src/sys/args/unix.rs", FrameKind::Runtime),
        ] {
            let path = format!("{std}/{file}");
            assert_eq!(frame(function, &path), want, "{path}");
        }
        let toolchain =
            "/home/u/.rustup/toolchains/stable/lib/rustlib/src/rust/library/alloc/src/alloc.rs";
        assert_eq!(frame("alloc", toolchain), FrameKind::Allocator);
        // The user's own files of the same names stay the user's.
        assert_eq!(frame("alloc", "/src/app/alloc.rs"), FrameKind::User);
        assert_eq!(
            frame("push", "/src/app/library/alloc/src/vec/mod.rs"),
            FrameKind::User
        );
    }

    #[test]
    fn user_code_and_libraries_are_sites() {
        let p = FramePolicy::default();
        assert_eq!(
            kind(&p, "Cache::insert(Key const&)", "/bin/app"),
            FrameKind::User
        );
        assert_eq!(
            kind(&p, "app::store::Store::put", "/bin/app"),
            FrameKind::User
        );
        assert_eq!(kind(&p, "", "/bin/app"), FrameKind::User);
        assert_eq!(kind(&p, "com.example.Cache.put", ""), FrameKind::User);
        for (function, module) in [
            (
                "sqlite3VdbeExec",
                "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0",
            ),
            ("xmlNewNode", "/usr/lib/x86_64-linux-gnu/libxml2.so.2"),
            ("", "/usr/lib/x86_64-linux-gnu/libssl.so.3"),
        ] {
            assert_eq!(kind(&p, function, module), FrameKind::Library, "{function}");
        }
    }

    #[test]
    fn inlined_standard_library_code_is_runtime() {
        let p = FramePolicy::default();
        let inlined = FrameFacts {
            function: "push_back",
            file: "/usr/include/c++/12/bits/stl_vector.h",
            module: "/bin/app",
            in_main_executable: true,
        };
        assert_eq!(p.classify(&inlined), FrameKind::Runtime);
    }

    #[test]
    fn user_wrappers_are_allocator_frames() {
        let p = FramePolicy::with_wrappers(&["helpers::make_*", "arena_?lloc"]).unwrap();
        assert_eq!(
            kind(&p, "helpers::make_buffer", "/bin/app"),
            FrameKind::Allocator
        );
        assert_eq!(kind(&p, "arena_alloc", "/bin/app"), FrameKind::Allocator);
        assert_eq!(kind(&p, "app::run", "/bin/app"), FrameKind::User);
        let bad = FramePolicy::with_wrappers(&["[oops"]).unwrap_err();
        assert!(
            bad.to_string()
                .contains("`[oops` is not a valid wrapper pattern")
        );
    }
}
