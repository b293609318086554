//! The repository's structure, checked inside `cargo test`: every source file opens
//! with a `//!` paragraph and stays under 800 lines, the CLI stays glue (at most 3,000
//! lines), the engines' and the recorder's modules import each other without cycles,
//! and the crates depend on each other in one direction only (ARCHITECTURE.md, "Dependencies between crates"). Each failure
//! names the file and the rule it breaks.

use std::fs;
use std::path::{Path, PathBuf};

use memlens_tidy::{ModuleGraph, memlens_dependencies, rust_files};

/// The most lines a source file may have; split files well before this.
const MAX_LINES: usize = 800;

/// The most lines the CLI's sources may have together: argument parsing, dispatch and
/// printing; anything tested with numbers belongs in an engine.
const MAX_CLI_LINES: usize = 3_000;

/// The pure analysis crates: they may depend on the vocabulary crate only.
const ANALYSIS_CRATES: [&str; 3] = ["memlens-heap", "memlens-alloc", "memlens-cache"];

/// The leaf crate of shared words (units, frame kinds) that every crate may use.
const VOCABULARY_CRATE: &str = "memlens-vocab";

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `crates/*/src/**/*.rs` file, as (path relative to the root, text).
fn crate_sources() -> Vec<(String, String)> {
    let root = workspace_root();
    let mut crates: Vec<PathBuf> = fs::read_dir(root.join("crates"))
        .expect("the workspace has a crates/ directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    let mut sources = Vec::new();
    for dir in crates {
        for file in rust_files(&dir.join("src")) {
            let text = fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: cannot read: {e}", file.display()));
            let relative = file.strip_prefix(&root).unwrap_or(&file);
            sources.push((relative.display().to_string(), text));
        }
    }
    assert!(!sources.is_empty(), "no sources under crates/*/src");
    sources
}

fn fail_if_any(rule: &str, violations: &[String]) {
    assert!(
        violations.is_empty(),
        "rule: {rule}\n{}",
        violations.join("\n")
    );
}

/// Whether the first line is a `//!` comment with words in it.
fn opens_with_doc_paragraph(text: &str) -> bool {
    let first = text.lines().next().unwrap_or("");
    first
        .strip_prefix("//!")
        .is_some_and(|words| !words.trim().is_empty())
}

#[test]
fn every_source_file_starts_with_a_doc_paragraph() {
    let violations: Vec<String> = crate_sources()
        .into_iter()
        .filter(|(_, text)| !opens_with_doc_paragraph(text))
        .map(|(file, _)| format!("{file}: does not start with a `//!` paragraph"))
        .collect();
    fail_if_any(
        "every file under crates/*/src opens with a `//!` paragraph saying what it is and why",
        &violations,
    );
}

#[test]
fn no_source_file_is_over_800_lines() {
    let violations: Vec<String> = crate_sources()
        .into_iter()
        .filter_map(|(file, text)| {
            let lines = text.lines().count();
            (lines > MAX_LINES).then(|| format!("{file}: {lines} lines"))
        })
        .collect();
    fail_if_any(
        &format!(
            "no file under crates/*/src is over {MAX_LINES} lines; split it into files named after what they hold"
        ),
        &violations,
    );
}

#[test]
fn the_cli_is_glue_of_at_most_3000_lines() {
    let cli = "crates/memlens/src/";
    let files: Vec<(String, usize)> = crate_sources()
        .into_iter()
        .filter(|(file, _)| file.starts_with(cli))
        .map(|(file, text)| (file, text.lines().count()))
        .collect();
    let total: usize = files.iter().map(|(_, n)| n).sum();
    assert!(!files.is_empty(), "no sources under {cli}");
    let mut largest = files.clone();
    largest.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let listed: Vec<String> = largest
        .iter()
        .take(5)
        .map(|(f, n)| format!("{f}: {n} lines"))
        .collect();
    fail_if_any(
        &format!(
            "{cli} is at most {MAX_CLI_LINES} lines of argument parsing, dispatch and printing \
             (it is {total}); move analysis into an engine"
        ),
        &if total > MAX_CLI_LINES {
            listed
        } else {
            Vec::new()
        },
    );
}

fn assert_no_module_cycles(crate_name: &str) {
    let dir = workspace_root().join("crates").join(crate_name);
    let graph =
        ModuleGraph::read_crate(&dir).unwrap_or_else(|e| panic!("crates/{crate_name}/src/{e}"));
    let cycles: Vec<String> = graph.cycles().iter().map(|c| c.to_string()).collect();
    fail_if_any(
        &format!(
            "no import cycle between the modules of {crate_name} \
             (files below are relative to crates/{crate_name}/src; move shared words into leaf modules)"
        ),
        &cycles,
    );
}

#[test]
fn no_module_cycles_in_memlens_heap() {
    assert_no_module_cycles("memlens-heap");
}

#[test]
fn no_module_cycles_in_memlens_alloc() {
    assert_no_module_cycles("memlens-alloc");
}

#[test]
fn no_module_cycles_in_memlens_preload() {
    assert_no_module_cycles("memlens-preload");
}

#[test]
fn the_cycle_check_finds_two_modules_that_import_each_other() {
    let sources = [
        ("lib.rs", "mod reader; mod writer;"),
        (
            "reader.rs",
            "use crate::writer::Writer; pub struct Reader(Writer);",
        ),
        (
            "writer.rs",
            "pub struct Writer; fn back() -> crate::reader::Reader { todo!() }",
        ),
    ]
    .map(|(path, text)| (path.to_owned(), text.to_owned()))
    .into();
    let cycles = ModuleGraph::from_sources(&sources).unwrap().cycles();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert_eq!(cycles[0].modules, ["reader", "writer"]);
    assert_eq!(cycles[0].example, ["reader", "writer", "reader"]);
}

/// The memlens crates that `crate_name`'s manifest depends on.
fn dependencies_of(crate_name: &str) -> Vec<String> {
    let manifest = workspace_root()
        .join("crates")
        .join(crate_name)
        .join("Cargo.toml");
    let text = fs::read_to_string(&manifest)
        .unwrap_or_else(|e| panic!("crates/{crate_name}/Cargo.toml: cannot read: {e}"));
    memlens_dependencies(&text).unwrap_or_else(|e| panic!("crates/{crate_name}/Cargo.toml: {e}"))
}

#[test]
fn analysis_crates_depend_on_no_memlens_crate_but_the_vocabulary() {
    let mut violations = Vec::new();
    for crate_name in ANALYSIS_CRATES {
        for dependency in dependencies_of(crate_name) {
            if dependency != VOCABULARY_CRATE {
                violations.push(format!(
                    "crates/{crate_name}/Cargo.toml: depends on {dependency}"
                ));
            }
        }
    }
    fail_if_any(
        &format!(
            "the analysis crates ({}) depend on no other memlens crate except {VOCABULARY_CRATE}; the CLI converts between them",
            ANALYSIS_CRATES.join(", ")
        ),
        &violations,
    );
}

#[test]
fn leaf_crates_depend_on_no_memlens_crate() {
    let mut violations = Vec::new();
    for crate_name in ["memlens-trace", VOCABULARY_CRATE] {
        let optional = crate_name == VOCABULARY_CRATE;
        if optional && !workspace_root().join("crates").join(crate_name).exists() {
            continue;
        }
        for dependency in dependencies_of(crate_name) {
            violations.push(format!(
                "crates/{crate_name}/Cargo.toml: depends on {dependency}"
            ));
        }
    }
    fail_if_any(
        "memlens-trace (the file format) and memlens-vocab (the shared words) depend on no memlens crate",
        &violations,
    );
}
