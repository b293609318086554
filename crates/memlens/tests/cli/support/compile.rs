//! Compiling a test program from a C, C++ or Rust source string with the system
//! compiler (`cc` or `c++`) or the toolchain's `rustc`.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::run::run;

/// The usual flags: optimised, with debug info for file:line site names,
/// frame pointers everywhere and no tail calls (so every caller keeps a
/// frame the default unwinder can walk), and threads.
pub const FRAME_POINTER_FLAGS: &[&str] = &[
    "-O2",
    "-g",
    "-fno-omit-frame-pointer",
    "-fno-optimize-sibling-calls",
    "-pthread",
];

/// The source language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// C, compiled with `cc`.
    C,
    /// C++, compiled with `c++`.
    Cxx,
    /// Rust, compiled with the `rustc` beside the `cargo` running the tests (flags are
    /// `rustc`'s).
    Rust,
}

/// Writes `source` to `dir/<name>.c` (or `.cpp`) and compiles it with
/// `flags` into `dir/<name>`, which is returned. Flags such as `-shared`
/// make it a library instead; the output name is then `dir/<name>` as well.
pub fn compile(dir: &Path, name: &str, lang: Lang, source: &str, flags: &[&str]) -> PathBuf {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let (compiler, ext) = match lang {
        Lang::C => ("cc", "c"),
        Lang::Cxx => ("c++", "cpp"),
        Lang::Rust => (rustc.as_str(), "rs"),
    };
    let src = dir.join(format!("{name}.{ext}"));
    let out = dir.join(name);
    std::fs::write(&src, source).expect("cannot write the test program's source");
    let done = run(
        // Flags go after the source so libraries such as `-ldl` link.
        Command::new(compiler)
            .arg("-o")
            .arg(&out)
            .arg(&src)
            .args(flags),
        &format!("{compiler} {}", src.display()),
    );
    assert_eq!(
        done.code,
        0,
        "{compiler} failed on {}:\n{}",
        src.display(),
        done.stderr
    );
    out
}
