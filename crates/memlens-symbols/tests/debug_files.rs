//! Separate debug files: found by build id under a debug directory, or by
//! `.gnu_debuglink` next to the binary (verified by CRC when there is no build id);
//! a debug file that does not match is rejected and reported.
//!
//! The programs are split the way distributions do it: `objcopy --only-keep-debug`
//! makes the debug file, `strip --strip-all` removes DWARF and `.symtab` from the
//! binary, so the program's own functions can only be named through the debug file.

mod support;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use memlens_symbols::{DiagnosticKind, ModuleIdx, ModuleStatus, Symbolizer, SymbolizerOptions};
use support::{Lang, Program, Recording, compile, run_tool};

const PROGRAM: &str = r#"
#include <stdio.h>
volatile void *sink;

__attribute__((noinline)) void *where_am_i(void) {
    return __builtin_return_address(0);
}

__attribute__((noinline)) void *caller_function(void) {
    void *ret = where_am_i(); /* CALL_LINE */
    sink = ret;
    return ret;
}

int main(void) {
    memlens_print_module_map();
    printf("addr caller %p\n", caller_function());
    return 0;
}
"#;

/// Compiles and runs the program, then splits its DWARF into `prog.debug`.
fn split_program(flags: &[&str]) -> (Program, Recording, PathBuf) {
    let program = compile(Lang::C, PROGRAM, flags);
    let recording = program.run();
    let debug = program.dir.path().join("prog.debug");
    let exe = program.exe.as_os_str();
    run_tool(
        "objcopy",
        &[OsStr::new("--only-keep-debug"), exe, debug.as_os_str()],
    );
    run_tool("strip", &[OsStr::new("--strip-all"), exe]);
    (program, recording, debug)
}

fn symbolizer_with(recording: &Recording, exe: &Path, debug_dirs: Vec<PathBuf>) -> Symbolizer {
    let options = SymbolizerOptions {
        main_executable: Some(exe.to_owned()),
        debug_dirs,
        use_debug_files: true,
    };
    Symbolizer::new(recording.modules.clone(), options)
}

/// Asserts that `kinds` holds the rejection of `debug` (with `reason` in its message)
/// and, since the stripped program names none of its own functions, `NoSymbols`.
fn assert_rejected_once(kinds: Vec<DiagnosticKind>, debug: &Path, reason: &str) {
    assert!(
        matches!(&kinds[..], [
            DiagnosticKind::UnusableDebugFile { path, error },
            DiagnosticKind::NoSymbols { .. },
        ] if path == debug && error.contains(reason)),
        "{kinds:?}"
    );
}

#[test]
fn debug_file_is_found_by_build_id() {
    let (program, recording, debug) = split_program(&["-g", "-O1"]);
    let build_id = recording.modules[0].build_id.clone().expect("a build id");
    let hex: String = build_id.iter().map(|b| format!("{b:02x}")).collect();
    let debug_dir = program.dir.path().join("debug");
    let by_id = debug_dir
        .join(".build-id")
        .join(&hex[..2])
        .join(format!("{}.debug", &hex[2..]));
    std::fs::create_dir_all(by_id.parent().unwrap()).unwrap();
    std::fs::rename(&debug, &by_id).unwrap();

    // Without the debug directory, the stripped program has no name for it.
    let mut bare = symbolizer_with(&recording, &program.exe, Vec::new());
    assert!(!bare.symbolize(recording.address("caller")).is_resolved());

    let mut symbolizer = symbolizer_with(&recording, &program.exe, vec![debug_dir]);
    let result = symbolizer.symbolize(recording.address("caller"));
    let frame = result.outer_frame().expect("a frame");
    assert_eq!(frame.function.as_deref(), Some("caller_function"));
    assert_eq!(frame.line, Some(program.line_of("CALL_LINE")));
    assert!(matches!(
        symbolizer.module_status(ModuleIdx(0)),
        ModuleStatus::Loaded { dwarf_file: Some(path), .. } if path == by_id
    ));
}

#[test]
fn debug_file_is_found_by_debuglink_and_checked_by_crc() {
    let (program, recording, debug) = split_program(&["-g", "-O1", "-Wl,--build-id=none"]);
    assert_eq!(recording.modules[0].build_id, None);
    // objcopy records the link's base name, so run it in the program's directory.
    let status = std::process::Command::new("objcopy")
        .arg("--add-gnu-debuglink=prog.debug")
        .arg("prog")
        .current_dir(program.dir.path())
        .status()
        .expect("run objcopy");
    assert!(status.success());

    let mut symbolizer = symbolizer_with(&recording, &program.exe, Vec::new());
    let frame = symbolizer.symbolize(recording.address("caller")).frames[0].clone();
    assert_eq!(frame.function.as_deref(), Some("caller_function"));
    assert_eq!(frame.line, Some(program.line_of("CALL_LINE")));
    assert!(
        symbolizer
            .diagnostics()
            .iter()
            .all(|d| d.module != Some(ModuleIdx(0)))
    );

    // A debug file changed after linking fails the CRC: rejected and reported.
    let mut bytes = std::fs::read(&debug).unwrap();
    bytes.push(0);
    std::fs::write(&debug, bytes).unwrap();
    let mut symbolizer = symbolizer_with(&recording, &program.exe, Vec::new());
    assert!(
        !symbolizer
            .symbolize(recording.address("caller"))
            .is_resolved()
    );
    let kinds = symbolizer
        .diagnostics()
        .into_iter()
        .map(|d| d.kind)
        .collect();
    assert_rejected_once(kinds, &debug, "CRC");
}

#[test]
fn debug_file_of_another_build_is_rejected() {
    let (program, recording, _debug) = split_program(&["-g", "-O1"]);
    let (other, other_recording, other_debug) = split_program(&["-g", "-O2"]);
    assert_ne!(
        recording.modules[0].build_id,
        other_recording.modules[0].build_id
    );

    // Put the other build's debug file where this build's should be.
    let hex: String = recording.modules[0]
        .build_id
        .as_ref()
        .unwrap()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let debug_dir = other.dir.path().join("debug");
    let by_id = debug_dir
        .join(".build-id")
        .join(&hex[..2])
        .join(format!("{}.debug", &hex[2..]));
    std::fs::create_dir_all(by_id.parent().unwrap()).unwrap();
    std::fs::copy(&other_debug, &by_id).unwrap();

    let mut symbolizer = symbolizer_with(&recording, &program.exe, vec![debug_dir]);
    assert!(
        !symbolizer
            .symbolize(recording.address("caller"))
            .is_resolved()
    );
    let kinds = symbolizer
        .diagnostics()
        .into_iter()
        .map(|d| d.kind)
        .collect();
    assert_rejected_once(kinds, &by_id, "build id");
}

/// The header both dwz test programs include: its inline function's DWARF is identical
/// in both, so `dwz -m` moves it into the supplementary file.
const DWZ_HEADER: &str = r#"
#include <stdio.h>
void *where_am_i(void);
struct shared_thing { int a; long b; char name[32]; struct shared_thing *next; };
static inline __attribute__((always_inline)) void *shared_inline(struct shared_thing *t) {
    void *ret = where_am_i(); /* SHARED_CALL_LINE */
    t->a += (int)t->b;
    return ret;
}
"#;

const DWZ_PROGRAM: &str = r#"
#include "common.h"
volatile void *sink;
__attribute__((noinline)) void *where_am_i(void) { return __builtin_return_address(0); }
__attribute__((noinline)) void *caller_function(struct shared_thing *t) {
    void *ret = shared_inline(t); /* OUTER_CALL_LINE */
    sink = ret;
    return ret;
}
int main(void) {
    struct shared_thing t = {1, 2, "x", 0};
    memlens_print_module_map();
    printf("addr caller %p\n", caller_function(&t));
    return 0;
}
"#;

#[test]
fn dwz_supplementary_file_is_followed() {
    if std::process::Command::new("dwz")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: dwz is not installed (Debian package `dwz`)");
        return;
    }
    let first = compile_dwz_program();
    let second = compile_dwz_program();
    let common = first.0.dir.path().join("common.debug");
    run_tool(
        "dwz",
        &[
            OsStr::new("-m"),
            common.as_os_str(),
            OsStr::new("-M"),
            common.as_os_str(),
            first.0.exe.as_os_str(),
            second.0.exe.as_os_str(),
        ],
    );
    let (program, recording) = first;
    let mut symbolizer = symbolizer_with(&recording, &program.exe, Vec::new());
    let result = symbolizer.symbolize(recording.address("caller"));
    let names: Vec<_> = result
        .frames
        .iter()
        .map(|f| f.function.as_deref())
        .collect();
    assert_eq!(
        names,
        [Some("shared_inline"), Some("caller_function")],
        "{:#?} {:?}",
        result.frames,
        symbolizer.diagnostics()
    );
    assert_eq!(
        result.frames[0].line,
        Some(support::line_of(DWZ_HEADER, "SHARED_CALL_LINE"))
    );
    assert!(
        symbolizer.diagnostics().is_empty(),
        "{:?}",
        symbolizer.diagnostics()
    );

    // Without the supplementary file, the shared inline function cannot be named.
    std::fs::remove_file(&common).unwrap();
    let mut symbolizer = symbolizer_with(&recording, &program.exe, Vec::new());
    let result = symbolizer.symbolize(recording.address("caller"));
    assert_ne!(result.frames[0].function.as_deref(), Some("shared_inline"));
    let kinds: Vec<_> = symbolizer
        .diagnostics()
        .into_iter()
        .map(|d| d.kind)
        .collect();
    assert!(
        matches!(&kinds[0], DiagnosticKind::UnusableDebugFile { path, .. } if *path == common),
        "{kinds:?}"
    );
}

/// Compiles and runs one of the dwz test programs in its own directory.
fn compile_dwz_program() -> (Program, Recording) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("common.h"), DWZ_HEADER).unwrap();
    let program = support::compile_in(dir, Lang::C, DWZ_PROGRAM, &["-g", "-O1"]);
    let recording = program.run();
    (program, recording)
}
