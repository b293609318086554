//! Symbolizing addresses in the system C library, which ships without DWARF.
//!
//! The program prints the runtime addresses of `malloc` and `printf` (resolved through
//! its GOT, so they point into libc) and its module map. With debug files disabled the
//! names must come from libc's `.dynsym`; with the default options a `libc6-dbg` debug
//! file, if installed, may add DWARF, and the names must still be right.

mod support;

use memlens_symbols::{ModuleIdx, ModuleStatus, Symbolizer, SymbolizerOptions};
use support::{Lang, Recording, compile};

const PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    memlens_print_module_map();
    void *(*volatile m)(size_t) = malloc;
    int (*volatile p)(const char *, ...) = printf;
    /* Return addresses are looked up at address - 1: point 16 bytes into each. */
    printf("addr malloc %p\n", (void *)((char *)m + 16));
    printf("addr printf %p\n", (void *)((char *)p + 16));
    return 0;
}
"#;

fn record() -> (support::Program, Recording) {
    let program = compile(Lang::C, PROGRAM, &["-O1"]);
    let recording = program.run();
    (program, recording)
}

#[test]
fn libc_address_resolves_from_dynsym_without_dwarf() {
    let (program, recording) = record();
    let libc = ModuleIdx(recording.module_index("libc.so.6") as u32);
    let options = SymbolizerOptions {
        main_executable: Some(program.exe.clone()),
        use_debug_files: false,
        ..SymbolizerOptions::default()
    };
    let mut symbolizer = Symbolizer::new(recording.modules.clone(), options);
    let results =
        symbolizer.symbolize_all(&[recording.address("malloc"), recording.address("printf")]);

    for (result, expected) in results.iter().zip(["malloc", "printf"]) {
        assert_eq!(result.frames.len(), 1);
        let frame = &result.frames[0];
        assert_eq!(frame.module, Some(libc));
        assert_eq!(frame.function.as_deref(), Some(expected), "{frame:?}");
        assert_eq!(frame.file, None, "no DWARF, so no file");
        assert_eq!(frame.line, None);
    }
    assert_eq!(symbolizer.module_name(libc), "libc.so.6");
    match symbolizer.module_status(libc) {
        ModuleStatus::Loaded {
            dwarf_file,
            symbol_count,
        } => {
            assert_eq!(dwarf_file, None);
            assert!(symbol_count > 1000, "libc exports thousands of functions");
        }
        other => panic!("libc not loaded: {other:?}"),
    }
}

#[test]
fn libc_address_resolves_with_default_options() {
    let (program, recording) = record();
    let options = SymbolizerOptions {
        main_executable: Some(program.exe.clone()),
        ..SymbolizerOptions::default()
    };
    let mut symbolizer = Symbolizer::new(recording.modules.clone(), options);
    let result = symbolizer.symbolize(recording.address("malloc"));
    let outer = result.outer_frame().expect("a frame");
    // With glibc's debug file installed, DWARF names the function by its internal
    // linkage name (`__GI___libc_malloc`), and adds file and line.
    let name = outer.function.as_deref().unwrap_or("");
    assert!(
        name == "malloc" || (name.ends_with("libc_malloc") && outer.line.is_some()),
        "{:#?}",
        result.frames
    );
    assert!(
        symbolizer.diagnostics().is_empty(),
        "{:?}",
        symbolizer.diagnostics()
    );
}
