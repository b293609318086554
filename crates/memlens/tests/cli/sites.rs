//! Guards allocation-site naming end to end: stacks captured by the
//! recorder (frame pointers with DWARF steps through libstdc++, or DWARF
//! everywhere) and symbolized by `summary` name the user's functions with
//! `file:line`, never the allocator's wrappers.

use crate::support::{
    FRAME_POINTER_FLAGS, Lang, Summary, alloc_bench_source, compile, record, summary, test_dir,
};

/// Records `program` with `options` and returns its summary.
fn summarize(dir: &std::path::Path, options: &[&str], argv: &[&str]) -> (Summary, String) {
    let mut all = vec!["-q", "-o", "sites.mlens", "--force"];
    all.extend_from_slice(options);
    let recorded = record(dir, &all, argv, &[]);
    assert_eq!(
        recorded.run.code, 0,
        "the program failed:\n{}",
        recorded.run.stderr
    );
    (summary(&dir.join("sites.mlens")), recorded.run.stderr)
}

/// The 1-based line of the first line of `source` containing `needle`.
fn line_of(source: &str, needle: &str) -> usize {
    source
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("the source has no line containing {needle:?}"))
        + 1
}

#[test]
fn alloc_bench_sites_name_each_allocating_function_with_its_line() {
    let Some((_, source)) = alloc_bench_source() else {
        return;
    };
    let dir = test_dir("sites-bench");
    let mut flags = FRAME_POINTER_FLAGS.to_vec();
    flags.push("-fno-builtin");
    let bench = compile(dir.path(), "alloc-bench", Lang::C, &source, &flags);
    let (s, stderr) = summarize(
        dir.path(),
        &[],
        &[bench.to_str().expect("UTF-8"), "1", "20000"],
    );
    for list in ["top_sites", "top_sites_by_count"] {
        let sites = s.sites(list);
        for function in ["alloc_a", "alloc_b", "alloc_c", "alloc_d", "grow"] {
            let line = line_of(&source, &format!(" *{function}("));
            let frame = format!("{function} (alloc-bench.c:{line})");
            assert!(
                sites.iter().any(|r| r.stack.contains(&frame)),
                "no site in {list} has the frame {frame:?}: {sites:#?}"
            );
        }
        // Every site starts in the program's code, never in libc.
        for r in &sites {
            assert!(
                r.stack
                    .first()
                    .is_some_and(|f| f.contains("alloc-bench.c:")),
                "a site in {list} does not start in alloc-bench.c: {r:#?}"
            );
        }
        // All sites fit in the list, so together they hold every call.
        let listed: u64 = sites.iter().map(|r| r.allocations).sum();
        assert_eq!(
            listed,
            s.get("allocations") + s.get("reallocations"),
            "{list}"
        );
    }
    // `grow` is the only caller of realloc: its site holds every one of them.
    let reallocs: u64 = stderr
        .split("realloc_calls=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .expect("alloc-bench prints realloc_calls=N");
    let grow_line = line_of(&source, " *grow(");
    let grow = s
        .sites("top_sites_by_count")
        .into_iter()
        .find(|r| r.stack[0] == format!("grow (alloc-bench.c:{grow_line})"))
        .expect("a site starting in grow");
    assert_eq!(grow.allocations, reallocs);
    assert_eq!(s.get("reallocations"), reallocs);
}

const WIDGETS: &str = r#"
#include <cstdio>
#include <vector>
struct Widget { long values[16]; };
__attribute__((noinline)) Widget *make_widget(int i) {
    Widget *w = new Widget;
    w->values[0] = i;
    return w;
}
__attribute__((noinline)) void fill(std::vector<long> &v, long n) {
    for (long i = 0; i < n; i++) v.push_back(i);
}
int main() {
    std::vector<Widget *> widgets;
    widgets.reserve(5000);
    for (int i = 0; i < 5000; i++) widgets.push_back(make_widget(i));
    std::vector<long> numbers;
    fill(numbers, 200000);
    for (Widget *w : widgets) delete w;
    std::printf("%zu\n", numbers.size());
}
"#;

/// `operator new` lives in libstdc++, which Debian builds without frame
/// pointers; the default unwinder takes a DWARF step there to find the
/// caller. Most calls come from `make_widget`, most bytes from `fill`.
fn cxx_sites_name_the_caller(unwind: &str) {
    let dir = test_dir("sites-cxx");
    let program = compile(
        dir.path(),
        "widgets",
        Lang::Cxx,
        WIDGETS,
        FRAME_POINTER_FLAGS,
    );
    let (s, _) = summarize(
        dir.path(),
        &["--unwind", unwind],
        &[program.to_str().expect("UTF-8")],
    );
    let first = |list: &str| s.sites(list)[0].stack[0].clone();
    assert!(
        first("top_sites_by_count").starts_with("make_widget("),
        "--unwind {unwind}: the top site by count is {:?}",
        s.sites("top_sites_by_count")[0]
    );
    assert!(
        first("top_sites").starts_with("fill("),
        "--unwind {unwind}: the top site by bytes is {:?}",
        s.sites("top_sites")[0]
    );
    for r in s.sites("top_sites") {
        let function = r.stack[0].split('(').next().unwrap_or("");
        assert!(
            !function.starts_with("operator new") && !function.starts_with("std::"),
            "--unwind {unwind}: a site is named after a wrapper: {r:#?}"
        );
    }
}

#[test]
fn cxx_sites_name_the_caller_with_frame_pointers() {
    cxx_sites_name_the_caller("fp");
}

#[test]
fn cxx_sites_name_the_caller_with_dwarf() {
    cxx_sites_name_the_caller("dwarf");
}

const NO_FRAME_POINTERS: &str = r#"
#include <stdio.h>
#include <stdlib.h>
/* The empty asm after each call keeps the call from becoming a tail call. */
__attribute__((noinline)) void *leaf_alloc(size_t n) {
    void *p = malloc(n);
    __asm__ volatile("" ::: "memory");
    return p;
}
__attribute__((noinline)) void *middle_alloc(size_t n) {
    void *p = leaf_alloc(n + 1);
    __asm__ volatile("" ::: "memory");
    return p;
}
__attribute__((noinline)) void *outer_alloc(size_t n) {
    void *p = middle_alloc(n * 2);
    __asm__ volatile("" ::: "memory");
    return p;
}
int main(void) {
    static void *blocks[1000];
    for (int i = 0; i < 1000; i++) blocks[i] = outer_alloc(100 + i);
    for (int i = 0; i < 1000; i++) free(blocks[i]);
    puts("done");
    return 0;
}
"#;

#[test]
fn default_unwinding_finds_callers_without_frame_pointers() {
    let dir = test_dir("sites-nofp");
    let flags = ["-O2", "-g", "-fomit-frame-pointer"];
    let program = compile(dir.path(), "nofp", Lang::C, NO_FRAME_POINTERS, &flags);
    let (s, _) = summarize(dir.path(), &[], &[program.to_str().expect("UTF-8")]);
    let top = &s.sites("top_sites")[0];
    let names: Vec<&str> = top
        .stack
        .iter()
        .map(|f| f.split(' ').next().unwrap_or(""))
        .collect();
    assert_eq!(top.allocations, 1000, "{top:#?}");
    assert_eq!(
        names.get(..3),
        Some(&["leaf_alloc", "middle_alloc", "outer_alloc"][..]),
        "{top:#?}"
    );
}

const POOL_WRAPPER: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) void *my_pool_alloc(size_t n) {
    void *p = malloc(n);
    __asm__ volatile("" ::: "memory");
    return p;
}
__attribute__((noinline)) char *load_rows(int i) {
    char *p = my_pool_alloc(64 + i % 7);
    snprintf(p, 64, "row %d", i);
    return p;
}
__attribute__((noinline)) char *load_index(int i) {
    char *p = my_pool_alloc(32);
    snprintf(p, 32, "key %d", i);
    return p;
}
int main(void) {
    static char *rows[3000], *keys[1000];
    size_t total = 0;
    for (int i = 0; i < 3000; i++) rows[i] = load_rows(i);
    for (int i = 0; i < 1000; i++) keys[i] = load_index(i);
    for (int i = 0; i < 3000; i++) total += strlen(rows[i]);
    for (int i = 0; i < 1000; i++) total += strlen(keys[i]);
    printf("%zu\n", total);
    return 0;
}
"#;

/// The names of the functions of the top sites by calls, innermost first.
fn top_functions(s: &Summary) -> Vec<Vec<String>> {
    s.sites("top_sites_by_count")
        .iter()
        .map(|r| {
            r.stack
                .iter()
                .map(|f| f.split(' ').next().unwrap_or("").to_string())
                .collect()
        })
        .collect()
}

#[test]
fn record_wrapper_makes_the_callers_of_a_wrapper_the_sites() {
    let dir = test_dir("sites-wrapper");
    let program = compile(dir.path(), "pool", Lang::C, POOL_WRAPPER, &["-O2", "-g"]);
    let argv = [program.to_str().expect("UTF-8")];
    // Without `--wrapper`, the wrapper is the site of every allocation.
    let (plain, _) = summarize(dir.path(), &[], &argv);
    let functions = top_functions(&plain);
    assert_eq!(functions[0][0], "my_pool_alloc", "{functions:?}");
    // With it, the trace carries the pattern and every command names the callers.
    let (wrapped, _) = summarize(dir.path(), &["--wrapper", "my_pool_*"], &argv);
    let functions = top_functions(&wrapped);
    assert_eq!(functions[0][0], "load_rows", "{functions:?}");
    assert_eq!(functions[1][0], "load_index", "{functions:?}");
    let counts: Vec<u64> = wrapped
        .sites("top_sites_by_count")
        .iter()
        .map(|r| r.allocations)
        .collect();
    assert_eq!(counts[..2], [3000, 1000], "{counts:?}");
    let dump = crate::support::dump(&dir.path().join("sites.mlens"));
    assert!(
        dump.stdout.contains(r#"wrapper pattern="my_pool_*""#),
        "the trace holds the pattern"
    );
    let tree = crate::support::memlens()
        .args(["tree", "--by", "site", "--points", "1"])
        .arg(dir.path().join("sites.mlens"))
        .output()
        .expect("memlens tree runs");
    let tree = String::from_utf8_lossy(&tree.stdout);
    assert!(
        tree.contains("load_rows") && !tree.contains("my_pool_alloc"),
        "tree applies the trace's wrapper:\n{tree}"
    );
}
