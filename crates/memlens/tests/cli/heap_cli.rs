//! Acceptance tests of the heap-evolution commands, `memlens tree` and `memlens growth`,
//! on real programs: each test compiles a program from `tests/heap_programs/` with
//! `-O1 -g` and frame pointers, records it with the real `memlens record`, and reads the
//! trace back through the CLI's JSON. Every process runs under the time limit of
//! `support::run`.
//!
//! Like the other recorder tests, these need the recorder library next to the binary:
//! run `cargo build --release -p memlens -p memlens-preload` first.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::trace::memlens;
use crate::support::{Finished, Lang, compile, record, run, test_dir};

/// The flags of the issue: light optimisation, debug info for names, frame pointers
/// everywhere and no tail calls, so every caller keeps a frame the unwinder can walk.
const FLAGS: &[&str] = &[
    "-O1",
    "-g",
    "-fno-omit-frame-pointer",
    "-fno-optimize-sibling-calls",
    "-pthread",
];

const LEAKY_LIST: &str = include_str!("../heap_programs/leaky_list.c");
const LEAKY_CACHE: &str = include_str!("../heap_programs/leaky_cache.cpp");
const NAMED_THREADS: &str = include_str!("../heap_programs/named_threads.c");

/// Compiles `source` as `dir/name`, runs it under `memlens record` and returns the trace.
fn record_program(dir: &Path, name: &str, lang: Lang, source: &str) -> PathBuf {
    let exe = compile(dir, name, lang, source, FLAGS);
    let trace = format!("{name}.mlens");
    let recorded = record(
        dir,
        &["-q", "-o", &trace, "--force"],
        &[exe.to_str().expect("a UTF-8 temporary path")],
        &[],
    );
    assert_eq!(
        recorded.run.code, 0,
        "{name} failed under the recorder:\n{}",
        recorded.run.stderr
    );
    dir.join(trace)
}

/// Runs `memlens ARGS` whatever its status, failing on a panic.
fn memlens_run(args: &[&str]) -> Finished {
    let what = format!("memlens {}", args.join(" "));
    let done = run(memlens().args(args), &what);
    assert!(
        !done.stderr.contains("panicked"),
        "{what} panicked:\n{}",
        done.stderr
    );
    done
}

/// Runs `memlens ARGS`, which must succeed, and returns its standard output.
fn memlens_ok(args: &[&str]) -> String {
    let done = memlens_run(args);
    assert_eq!(
        done.code,
        0,
        "memlens {} failed:\n{}",
        args.join(" "),
        done.stderr
    );
    done.stdout
}

/// Runs `memlens ARGS`, which must succeed, and parses its standard output as JSON.
fn memlens_json(args: &[&str]) -> Value {
    let stdout = memlens_ok(args);
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "memlens {} printed invalid JSON ({e}):\n{stdout}",
            args.join(" ")
        )
    })
}

/// The ranked suspects of `memlens growth TRACE --json ARGS`.
fn suspects(trace: &Path, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["growth", trace.to_str().expect("UTF-8 path"), "--json"];
    all.extend_from_slice(args);
    let json = memlens_json(&all);
    json["suspects"]
        .as_array()
        .unwrap_or_else(|| panic!("growth JSON has no `suspects` list: {json}"))
        .clone()
}

/// Every node of a tree, parents first.
fn nodes(root: &Value) -> Vec<&Value> {
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        if let Some(children) = out[i]["children"].as_array() {
            out.extend(children.iter());
        }
        i += 1;
    }
    out
}

/// A node's full key as one string, for maps and messages.
fn full_key(node: &Value) -> String {
    let keys: Vec<&str> = node["full_key"]
        .as_array()
        .unwrap_or_else(|| panic!("a node has no `full_key`: {node}"))
        .iter()
        .map(|k| k.as_str().expect("keys are strings"))
        .collect();
    keys.join(" / ")
}

/// Full key → (bytes, objects) of every node of every tree of a `tree --json` document.
fn sizes_by_key(json: &Value) -> Vec<BTreeMap<String, (u64, u64)>> {
    json["trees"]
        .as_array()
        .expect("a `trees` list")
        .iter()
        .map(|tree| {
            nodes(&tree["root"])
                .into_iter()
                .map(|n| {
                    let size = (n["bytes"].as_u64().unwrap(), n["objects"].as_u64().unwrap());
                    (full_key(n), size)
                })
                .collect()
        })
        .collect()
}

#[test]
fn growth_ranks_the_leaking_list_append_first_among_churning_sites() {
    let dir = test_dir("heap-leaky-list");
    let trace = record_program(dir.path(), "leaky_list", Lang::C, LEAKY_LIST);
    let ranked = suspects(&trace, &[]);
    let first = ranked.first().expect("at least one suspect");
    assert!(
        first["key"].as_str().unwrap().contains("remember_request"),
        "the leaking site is not ranked first: {ranked:#?}"
    );
    // 60 000 requests, one 64-byte node each, all live at the end.
    assert_eq!(first["growth_bytes"].as_i64(), Some(64 * 60_000), "{first}");
    for field in ["start_bytes", "end_bytes", "score", "full_key"] {
        assert!(!first[field].is_null(), "suspect lacks `{field}`: {first}");
    }
    // The churning pools hold more live memory at exit than the leak, but are flat.
    for churn in ranked.iter().skip(1) {
        assert!(
            churn["score"].as_f64().unwrap() < first["score"].as_f64().unwrap() / 10.0,
            "a churning site scores close to the leak: {ranked:#?}"
        );
    }
    let text = memlens_ok(&["growth", trace.to_str().unwrap(), "--top", "3"]);
    assert!(
        text.contains("call path: remember_request ← main"),
        "the table lacks the leak's call path:\n{text}"
    );
}

#[test]
fn growth_by_closest_user_frame_ranks_the_never_equal_cache_insertion_first() {
    let dir = test_dir("heap-leaky-cache");
    let trace = record_program(dir.path(), "leaky_cache", Lang::Cxx, LEAKY_CACHE);
    let ranked = suspects(&trace, &["--by", "closest-user-frame"]);
    let first = ranked.first().expect("at least one suspect");
    assert!(
        first["key"].as_str().unwrap().starts_with("cached_price"),
        "the map's insertion site is not ranked first: {ranked:#?}"
    );
    assert!(
        first["growth_bytes"].as_i64().unwrap() > 1 << 20,
        "40 000 map entries grow by more than 1 MiB: {first}"
    );
}

#[test]
fn tree_json_has_the_contract_fields_stable_sort_positions_and_thread_names() {
    let dir = test_dir("heap-tree-json");
    let trace = record_program(dir.path(), "named_threads", Lang::C, NAMED_THREADS);
    let trace = trace.to_str().unwrap();
    let json = memlens_json(&[
        "tree",
        trace,
        "--by",
        "thread,site",
        "--points",
        "3",
        "--json",
    ]);
    assert_eq!(json["classifiers"], serde_json::json!(["thread", "site"]));
    let times: Vec<u64> = json["times_ns"]
        .as_array()
        .expect("a `times_ns` list")
        .iter()
        .map(|t| t.as_u64().unwrap())
        .collect();
    let trees = json["trees"].as_array().expect("a `trees` list");
    assert_eq!(
        (times.len(), trees.len()),
        (3, 3),
        "--points 3 gives 3 trees"
    );
    assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
    let mut positions: BTreeMap<String, u64> = BTreeMap::new();
    for (tree, &time) in trees.iter().zip(&times) {
        assert_eq!(tree["time_ns"].as_u64(), Some(time));
        for node in nodes(&tree["root"]) {
            for field in ["key", "bytes", "objects", "children", "sort_position"] {
                assert!(!node[field].is_null(), "a node lacks `{field}`: {node}");
            }
            let position = node["sort_position"].as_u64().unwrap();
            let previous = positions.entry(full_key(node)).or_insert(position);
            assert_eq!(
                *previous,
                position,
                "{} moves between trees",
                full_key(node)
            );
        }
    }
    let threads: Vec<&str> = trees[2]["root"]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["key"].as_str().unwrap())
        .collect();
    for name in ["parser", "indexer"] {
        assert!(
            threads.iter().any(|k| k.starts_with(name)),
            "no thread named {name}: {threads:?}"
        );
    }
    // `--points 1` is the end of the run, and `--at 50%` its middle.
    let end = memlens_json(&["tree", trace, "--points", "1", "--json"])["times_ns"][0]
        .as_u64()
        .unwrap();
    let middle = memlens_json(&["tree", trace, "--at", "50%", "--json"]);
    assert_eq!(middle["times_ns"][0].as_u64(), Some(end.div_ceil(2)));
    let text = memlens_ok(&["tree", trace, "--by", "thread"]);
    assert!(
        text.contains("Overall") && text.contains("parser") && text.contains("% of the run"),
        "{text}"
    );
}

#[test]
fn tree_anttracks_export_round_trips_through_import() {
    let dir = test_dir("heap-tree-anttracks");
    let trace = record_program(dir.path(), "named_threads", Lang::C, NAMED_THREADS);
    let trace = trace.to_str().unwrap();
    let by = ["--by", "thread,size-class", "--points", "4"];
    let mut args = vec!["tree", trace];
    args.extend_from_slice(&by);
    let original = memlens_json(&[args.as_slice(), &["--json"]].concat());
    let exported = memlens_ok(&[args.as_slice(), &["--format", "anttracks"]].concat());
    let documents: Value = serde_json::from_str(&exported).expect("AntTracks JSON");
    let first = &documents[0];
    assert!(
        first["classifiers"][0]["name"].is_string() && first["classifiers"][0]["id"].is_number(),
        "{first}"
    );
    for field in ["key", "fullKey", "bytes", "objects", "children"] {
        assert!(!first["root"][field].is_null(), "the root lacks `{field}`");
    }
    let file = dir.path().join("trees.json");
    std::fs::write(&file, &exported).unwrap();
    let imported = memlens_json(&["tree", "--import", file.to_str().unwrap(), "--json"]);
    assert_eq!(imported["times_ns"], original["times_ns"]);
    assert_eq!(imported["classifiers"], original["classifiers"]);
    assert_eq!(sizes_by_key(&imported), sizes_by_key(&original));
    let text = memlens_ok(&["tree", "--import", file.to_str().unwrap()]);
    assert!(
        text.contains("Overall") && text.contains("indexer"),
        "{text}"
    );
}

#[test]
fn bad_arguments_exit_2_with_one_sentence() {
    let dir = test_dir("heap-bad-args");
    let trace = record_program(dir.path(), "named_threads", Lang::C, NAMED_THREADS);
    let trace = trace.to_str().unwrap();
    let usage_error = |args: &[&str], needles: &[&str]| {
        let done = memlens_run(args);
        assert_eq!(done.code, 2, "memlens {args:?}:\n{}", done.stderr);
        assert_eq!(
            done.stderr.trim().lines().count(),
            1,
            "not one sentence:\n{}",
            done.stderr
        );
        for needle in needles {
            assert!(
                done.stderr.contains(needle),
                "{needle:?} missing:\n{}",
                done.stderr
            );
        }
    };
    let every_classifier = [
        "site",
        "site-line",
        "closest-user-frame",
        "call-path",
        "module",
        "thread",
        "size-class",
        "age",
        "lifetime",
        "type",
        "closest-domain-site",
    ];
    let unknown = ["unknown classifier `sight`"];
    usage_error(
        &["tree", trace, "--by", "site,sight"],
        &[&unknown[..], &every_classifier[..]].concat(),
    );
    usage_error(
        &["growth", trace, "--by", "sight"],
        &[&unknown[..], &every_classifier[..]].concat(),
    );
    usage_error(
        &["tree", trace, "--at", "999s"],
        &["--at 999s", "outside the recorded run", "spans 0 ns to"],
    );
    usage_error(
        &["tree", trace, "--points", "0"],
        &["--points 0", "between 1 and"],
    );
    usage_error(
        &["tree", trace, "--at", "12parsecs"],
        &["1.5s", "200ms", "50%"],
    );
    usage_error(&["growth", trace, "--to", "150%"], &["between 0 and 100"]);
    // A malformed import is a failure (1), not a usage error.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"trees": []}"#).unwrap();
    let done = memlens_run(&["tree", "--import", bad.to_str().unwrap()]);
    assert_eq!(done.code, 1, "{}", done.stderr);
    assert!(done.stderr.contains("bad.json"), "{}", done.stderr);
}
