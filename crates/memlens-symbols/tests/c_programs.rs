//! Symbolizing return addresses recorded from C programs built with `-g`.
//!
//! Each test compiles a small program, runs it so it prints its module map and the
//! return addresses it captured with `__builtin_return_address(0)`, then symbolizes
//! them offline and checks function, file and line against markers in the source.

mod support;

use memlens_symbols::{ModuleIdx, ModuleStatus, Symbolizer, SymbolizerOptions};
use support::{Lang, compile};

/// Options for a program whose main executable is `exe`.
fn options_for(exe: &std::path::Path) -> SymbolizerOptions {
    SymbolizerOptions {
        main_executable: Some(exe.to_owned()),
        ..SymbolizerOptions::default()
    }
}

const CALLER_PROGRAM: &str = r#"
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
    printf("addr main %p\n", __builtin_return_address(0));
    return 0;
}
"#;

#[test]
fn return_address_resolves_to_function_file_and_line() {
    let program = compile(Lang::C, CALLER_PROGRAM, &["-g", "-O1"]);
    let recording = program.run();
    assert_eq!(
        recording.modules[0].path, "",
        "dl_iterate_phdr names main ''"
    );

    let mut symbolizer = Symbolizer::new(recording.modules.clone(), options_for(&program.exe));
    let result = symbolizer.symbolize(recording.address("caller"));

    assert_eq!(result.address, recording.address("caller"));
    assert_eq!(result.module(), Some(ModuleIdx(0)));
    assert_eq!(result.frames.len(), 1, "{:?}", result.frames);
    let frame = &result.frames[0];
    assert_eq!(frame.function.as_deref(), Some("caller_function"));
    assert_eq!(frame.raw_name.as_deref(), Some("caller_function"));
    assert_eq!(frame.file_name(), Some("prog.c"));
    assert_eq!(frame.line, Some(program.line_of("CALL_LINE")));
    assert!(frame.column.is_some());
    assert!(!frame.inlined);
    assert_eq!(symbolizer.module_name(ModuleIdx(0)), "prog");
    assert_eq!(
        symbolizer.module_path(ModuleIdx(0)),
        Some(program.exe.as_path())
    );
    assert!(matches!(
        symbolizer.module_status(ModuleIdx(0)),
        ModuleStatus::Loaded {
            dwarf_file: Some(_),
            ..
        }
    ));
    assert!(
        symbolizer
            .diagnostics()
            .iter()
            .all(|d| d.module != Some(ModuleIdx(0))),
        "{:?}",
        symbolizer.diagnostics()
    );
}

const INLINE_PROGRAM: &str = r#"
#include <stdio.h>
volatile void *sink;
volatile int sink_int;

__attribute__((noinline)) void *where_am_i(void) {
    return __builtin_return_address(0);
}

static inline __attribute__((always_inline)) void *inlined_helper(int x) {
    void *r = where_am_i(); /* INLINED_CALL_LINE */
    sink_int = x;
    return r;
}

__attribute__((noinline)) void *outer_function(int x) {
    void *r = inlined_helper(x); /* OUTER_CALL_LINE */
    sink = r;
    return r;
}

int main(int argc, char **argv) {
    (void)argv;
    memlens_print_module_map();
    printf("addr inlined %p\n", outer_function(argc));
    return 0;
}
"#;

#[test]
fn inlined_function_shows_inner_and_outer_frames() {
    let program = compile(Lang::C, INLINE_PROGRAM, &["-g", "-O2"]);
    let recording = program.run();
    let mut symbolizer = Symbolizer::new(recording.modules.clone(), options_for(&program.exe));
    let result = symbolizer.symbolize(recording.address("inlined"));

    let names: Vec<_> = result
        .frames
        .iter()
        .map(|f| f.function.as_deref())
        .collect();
    assert_eq!(
        names,
        [Some("inlined_helper"), Some("outer_function")],
        "{:#?}",
        result.frames
    );
    let (inner, outer) = (&result.frames[0], &result.frames[1]);
    assert!(inner.inlined);
    assert!(!outer.inlined);
    assert_eq!(inner.line, Some(program.line_of("INLINED_CALL_LINE")));
    assert_eq!(outer.line, Some(program.line_of("OUTER_CALL_LINE")));
    assert_eq!(inner.file_name(), Some("prog.c"));
    assert_eq!(outer.file_name(), Some("prog.c"));
    assert_eq!(result.outer_frame(), Some(outer));
}

#[test]
fn batch_keeps_input_order_and_symbolizes_each_address_once() {
    let program = compile(Lang::C, CALLER_PROGRAM, &["-g", "-O1"]);
    let recording = program.run();
    let mut symbolizer = Symbolizer::new(recording.modules.clone(), options_for(&program.exe));
    let caller = recording.address("caller");
    let main = recording.address("main");
    let batch = [caller, 0, main, caller, caller, 0];

    let results = symbolizer.symbolize_all(&batch);
    let addresses: Vec<u64> = results.iter().map(|r| r.address).collect();
    assert_eq!(addresses, batch);
    assert_eq!(symbolizer.cached_addresses(), 3);
    assert_eq!(
        results[0].frames[0].function.as_deref(),
        Some("caller_function")
    );
    assert!(std::sync::Arc::ptr_eq(
        &results[0].frames,
        &results[3].frames
    ));
    assert_eq!(results[1].module(), None);
    assert!(!results[1].is_resolved());

    // `main` returns into libc's startup code, which has a name in `.dynsym` or in
    // the debug file, but not in our program.
    let libc = results[2].module().expect("main's caller is in a module");
    assert_ne!(libc, ModuleIdx(0));
    assert!(symbolizer.module_name(libc).starts_with("libc.so"));

    // A second batch is served from the cache.
    let again = symbolizer.symbolize_all(&[main, caller]);
    assert!(std::sync::Arc::ptr_eq(&again[0].frames, &results[2].frames));
    assert_eq!(symbolizer.cached_addresses(), 3);
}
