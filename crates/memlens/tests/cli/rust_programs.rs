//! A Rust program under the recorder. Rust's runtime asks glibc for the main thread's
//! stack (`pthread_getattr_np`) before `main`, and glibc's first allocation inside
//! that call used to deadlock the recorder's set-up of the thread (which asked the
//! same thing under the same lock): the run must finish. The standard library's
//! inlined allocation frames carry bare names (`alloc`, `grow_one`), so the frame
//! policy tells them by their source files: the sites must be the program's own
//! functions, and the counts must equal heaptrack's.

use std::time::Duration;

use crate::support::{
    Lang, LibstdcxxStartup, assert_counts_match, compile, heaptrack, record_command,
    run_with_timeout, summary, test_dir,
};

const SOURCE: &str = r#"
use std::hint::black_box;

#[inline(never)]
fn remember(cache: &mut Vec<String>, i: usize) {
    cache.push(format!("request {i:08}"));
}

#[inline(never)]
fn scratch(i: usize) -> usize {
    let v: Vec<u64> = (0..(i % 64 + 1) as u64).collect();
    black_box(v).len()
}

fn main() {
    let mut cache = Vec::new();
    let mut sum = 0;
    for i in 0..20_000 {
        remember(&mut cache, i);
        sum += scratch(i);
    }
    println!("{} {}", cache.len(), sum);
}
"#;

#[test]
fn a_rust_program_records_with_its_own_functions_as_sites() {
    let dir = test_dir("rust-program");
    let program = compile(
        dir.path(),
        "requests",
        Lang::Rust,
        SOURCE,
        &["-C", "opt-level=2", "-g", "-C", "force-frame-pointers=yes"],
    );
    let program = program.to_str().expect("a UTF-8 path");
    let mut cmd = record_command(dir.path(), &["-q", "-o", "ours.mlens"], &[program], &[]);
    let done = run_with_timeout(
        &mut cmd,
        Duration::from_secs(60),
        "memlens record -- a Rust program",
    );
    assert_eq!(
        done.code, 0,
        "memlens record of a Rust program:\n{}",
        done.stderr
    );
    assert!(
        done.stdout.starts_with("20000 "),
        "the program's output: {}",
        done.stdout
    );
    let ours = summary(&dir.path().join("ours.mlens"));
    let sites = ours.sites("top_sites_by_count");
    let firsts: Vec<&str> = sites
        .iter()
        .filter_map(|s| s.stack.first().map(String::as_str))
        .collect();
    for function in ["remember", "scratch"] {
        assert!(
            firsts
                .iter()
                .take(4)
                .any(|f| f.contains(function) && f.contains("requests.rs")),
            "no top site is the program's `{function}`: {firsts:?}"
        );
    }
    assert!(
        !firsts
            .iter()
            .any(|f| f.contains("(alloc.rs:") || f.contains("raw_vec")),
        "a site is inside the standard library's allocation code: {firsts:?}"
    );
    let Some(theirs) = heaptrack(dir.path(), &[program], &[], LibstdcxxStartup::Drop) else {
        return;
    };
    assert_counts_match("a Rust program", &ours, &theirs.counts);
}
