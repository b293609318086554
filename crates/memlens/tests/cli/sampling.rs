//! Guards `memlens record --sample BYTES` (Poisson sampling by bytes) end to end, with
//! the real recorder and the real analysis: the estimates are unbiased (the mean over
//! 20 seeds of a known workload's totals and per-site bytes is within 2 % of the
//! truth), a single run's top sites are within 10 % of an unsampled run's on a
//! request-serving program and on alloc-bench, and every output says that it shows
//! estimates. The unsampled counts are guarded by `heaptrack_counts.rs`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::support::{
    FRAME_POINTER_FLAGS, Lang, Summary, alloc_bench_source, compile, memlens, record, run, summary,
    test_dir,
};

const SAMPLED_SIZES: &str = include_str!("../programs/sampled_sizes.c");
const SERVER: &str = include_str!("../heap_programs/server.c");

/// Records `argv` in `dir` to `name`, sampled with `sample` and `seed` when given.
fn record_to(dir: &Path, name: &str, argv: &[&str], sample: Option<(&str, u64)>) -> Summary {
    let mut options = vec!["-q", "--force", "-o", name];
    let seed;
    let mut envs = vec![];
    if let Some((bytes, s)) = sample {
        options.extend(["--sample", bytes]);
        seed = s.to_string();
        envs.push(("MEMLENS_SAMPLE_SEED", seed.as_str()));
    }
    let recorded = record(dir, &options, argv, &envs);
    assert_eq!(recorded.run.code, 0, "{argv:?}:\n{}", recorded.run.stderr);
    summary(&dir.join(name))
}

/// Bytes allocated per site function (the innermost frame's function, e.g.
/// `small_objects`), over every row of `top_sites`.
fn bytes_by_function(s: &Summary) -> HashMap<String, f64> {
    let mut out = HashMap::new();
    for row in s.json["top_sites"].as_array().expect("top_sites") {
        let frame = row["stack"][0].as_str().unwrap_or("");
        let function = frame.split(' ').next().unwrap_or("").to_owned();
        *out.entry(function).or_insert(0.0) += row["bytes"].as_f64().unwrap_or(0.0);
    }
    out
}

/// `allocations + reallocations`: a sampled recording counts a `realloc` as an
/// allocation of its new block.
fn calls(s: &Summary) -> f64 {
    (s.get("allocations") + s.get("reallocations")) as f64
}

#[test]
fn sampled_estimates_are_unbiased_over_twenty_seeds() {
    let dir = test_dir("sampling-unbiased");
    let program = compile(
        dir.path(),
        "sampled_sizes",
        Lang::C,
        SAMPLED_SIZES,
        FRAME_POINTER_FLAGS,
    );
    let argv = [program.to_str().expect("UTF-8"), "20000"];
    let truth = record_to(dir.path(), "full.mlens", &argv, None);
    assert!(truth.json.get("sampling").is_none(), "a full recording");
    let true_sites = bytes_by_function(&truth);
    let functions = ["small_objects", "buffers", "big_tables"];
    let seeds = 20;
    let (mut bytes, mut count) = (0.0, 0.0);
    let mut sites: HashMap<&str, f64> = HashMap::new();
    for seed in 1..=seeds {
        let s = record_to(dir.path(), "s.mlens", &argv, Some(("32K", seed)));
        assert_eq!(s.json["sampling"]["mean_interval_bytes"], 32768);
        bytes += s.get("allocated_bytes") as f64 / seeds as f64;
        count += calls(&s) / seeds as f64;
        let by = bytes_by_function(&s);
        for f in functions {
            *sites.entry(f).or_insert(0.0) += by.get(f).copied().unwrap_or(0.0) / seeds as f64;
        }
    }
    let within = |what: &str, estimate: f64, truth: f64| {
        let error = estimate / truth - 1.0;
        eprintln!(
            "{what}: mean estimate {estimate:.0}, truth {truth:.0} ({:+.2} %)",
            error * 100.0
        );
        assert!(error.abs() < 0.02, "{what}: {estimate} vs {truth}");
    };
    within(
        "allocated bytes",
        bytes,
        truth.get("allocated_bytes") as f64,
    );
    within("allocation calls", count, calls(&truth));
    for f in functions {
        within(f, sites[f], true_sites[f]);
    }
}

/// The top `n` sites of `full` by bytes, with their bytes in `sampled`, each within 10 %.
fn top_sites_agree(what: &str, full: &Summary, sampled: &Summary, n: usize) {
    let truth = full.json["top_sites"].as_array().expect("top_sites");
    let estimates: HashMap<&str, f64> = sampled.json["top_sites"]
        .as_array()
        .expect("top_sites")
        .iter()
        .map(|r| {
            (
                r["site"].as_str().unwrap_or(""),
                r["bytes"].as_f64().unwrap_or(0.0),
            )
        })
        .collect();
    for row in truth.iter().take(n) {
        let site = row["site"].as_str().unwrap_or("");
        let exact = row["bytes"].as_f64().unwrap_or(0.0);
        let estimate = estimates.get(site).copied().unwrap_or(0.0);
        eprintln!("{what}: {site}: {estimate:.0} estimated, {exact:.0} exact");
        assert!(
            (estimate / exact - 1.0).abs() < 0.10,
            "{what}: site {site}: estimated {estimate} bytes, exact {exact}"
        );
    }
}

/// Runs `memlens ARGS` and returns its standard output.
fn stdout_of(args: &[&str]) -> String {
    let done = run(memlens().args(args), &format!("memlens {}", args.join(" ")));
    assert_eq!(done.code, 0, "memlens {args:?}:\n{}", done.stderr);
    done.stdout
}

#[test]
fn a_sampled_request_server_shows_its_top_sites_within_ten_percent_and_says_they_are_estimates() {
    let dir = test_dir("sampling-server");
    let server = compile(dir.path(), "server", Lang::C, SERVER, FRAME_POINTER_FLAGS);
    let argv = [server.to_str().expect("UTF-8"), "2", "50000"];
    let full = record_to(dir.path(), "full.mlens", &argv, None);
    let sampled = record_to(dir.path(), "sampled.mlens", &argv, Some(("64K", 7)));
    top_sites_agree("server", &full, &sampled, 3);
    let trace = dir.path().join("sampled.mlens");
    let trace = trace.to_str().expect("UTF-8");
    let note = "sampled recording: about one allocation per 64 KiB recorded; bytes and counts are unbiased estimates";
    assert_eq!(sampled.json["sampling"]["note"], note);
    assert_eq!(sampled.json["sampling"]["estimates"], true);
    for args in [
        vec!["summary", trace],
        vec!["tree", trace, "--by", "site"],
        vec!["growth", trace],
    ] {
        let text = stdout_of(&args);
        assert!(
            text.contains(note),
            "`memlens {args:?}` does not say so:\n{text}"
        );
    }
    for args in [
        vec!["tree", trace, "--json"],
        vec!["growth", trace, "--json"],
    ] {
        let doc: serde_json::Value = serde_json::from_str(&stdout_of(&args)).expect("JSON");
        assert_eq!(doc["sampling"]["mean_interval_bytes"], 65536, "{args:?}");
    }
    // An unsampled trace's documents have no such field, and its text no such line.
    let full_trace: PathBuf = dir.path().join("full.mlens");
    let full_trace = full_trace.to_str().expect("UTF-8");
    assert!(!stdout_of(&["summary", full_trace]).contains("sampled recording"));
    let doc: serde_json::Value =
        serde_json::from_str(&stdout_of(&["tree", full_trace, "--json"])).expect("JSON");
    assert!(doc.get("sampling").is_none());
}

#[test]
fn alloc_bench_sampled_at_512_kib_shows_its_top_sites_within_ten_percent() {
    let Some((_, source)) = alloc_bench_source() else {
        return;
    };
    let dir = test_dir("sampling-bench");
    let bench = compile(
        dir.path(),
        "alloc-bench",
        Lang::C,
        &source,
        FRAME_POINTER_FLAGS,
    );
    let argv = [bench.to_str().expect("UTF-8"), "1", "4000000"];
    let full = record_to(dir.path(), "full.mlens", &argv, None);
    let sampled = record_to(dir.path(), "sampled.mlens", &argv, Some(("512K", 3)));
    top_sites_agree("alloc-bench", &full, &sampled, 3);
}
