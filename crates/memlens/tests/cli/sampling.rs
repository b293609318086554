//! Guards `memlens record --sample BYTES` (Poisson sampling by bytes) end to end, with
//! the real recorder and the real analysis: the estimates are unbiased (the mean over
//! 20 seeds of a known workload's totals and per-site bytes is within 2 % of the
//! truth), a single run's top sites are within 10 % of an unsampled run's on a
//! request-serving program and on alloc-bench, and every output says that it shows
//! estimates; a single-threaded program is sampled without a writer thread, and
//! loses nothing by it. The unsampled counts are guarded by `heaptrack_counts.rs`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::support::{
    FRAME_POINTER_FLAGS, Lang, Recorded, Summary, alloc_bench_source, compile, memlens, record,
    run, summary, test_dir,
};

const SAMPLED_SIZES: &str = include_str!("../programs/sampled_sizes.c");
const SERVER: &str = include_str!("../heap_programs/server.c");
const SAMPLED_THREADS: &str = include_str!("../programs/sampled_threads.c");

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

/// `programs/sampled_threads.c`, built in `dir`.
fn sampled_threads(dir: &Path) -> PathBuf {
    compile(
        dir,
        "sampled_threads",
        Lang::C,
        SAMPLED_THREADS,
        FRAME_POINTER_FLAGS,
    )
}

/// The thread counts `sampled_threads` printed (`threads=K` lines).
fn thread_counts(recorded: &Recorded) -> Vec<u32> {
    assert_eq!(recorded.run.code, 0, "{}", recorded.run.stderr);
    recorded
        .run
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("threads=")?.parse().ok())
        .collect()
}

#[test]
fn a_single_threaded_program_is_sampled_without_a_writer_thread_and_loses_nothing() {
    let dir = test_dir("sampling-inline");
    let program = sampled_threads(dir.path());
    let program = program.to_str().expect("UTF-8");
    // 300 000 blocks: more events than a ring holds between two rounds, so the
    // program's thread also runs rounds to make room.
    let argv = [program, "300000", "_exit"];
    let full = record(
        dir.path(),
        &["-q", "--force", "-o", "full.mlens"],
        &argv,
        &[],
    );
    assert_eq!(
        thread_counts(&full),
        [2],
        "every allocation: the writer thread runs"
    );
    // One byte: every block is sampled, so the counts are exact.
    let options = ["-q", "--force", "--sample", "1", "-o", "every.mlens"];
    let every = record(dir.path(), &options, &argv, &[("MEMLENS_SAMPLE_SEED", "1")]);
    assert_eq!(thread_counts(&every), [1], "sampled: no writer thread");
    let (full, every) = (
        summary(&dir.path().join("full.mlens")),
        summary(&dir.path().join("every.mlens")),
    );
    assert!(every.complete(), "{}", every.json);
    for key in ["allocations", "frees", "allocated_bytes"] {
        assert_eq!(every.get(key), full.get(key), "{key}");
    }
    let trace = dir.path().join("every.mlens");
    let text = stdout_of(&["summary", trace.to_str().expect("UTF-8")]);
    assert!(text.contains("ended by _exit"), "{text}");
}

#[test]
fn a_sampled_program_that_starts_a_thread_gets_the_writer_thread_then() {
    let dir = test_dir("sampling-thread-starts");
    let program = sampled_threads(dir.path());
    let argv = [program.to_str().expect("UTF-8"), "200000", "exit", "thread"];
    let options = ["-q", "--force", "--sample", "1", "-o", "t.mlens"];
    let recorded = record(dir.path(), &options, &argv, &[("MEMLENS_SAMPLE_SEED", "2")]);
    // One thread while the program has one; the program's joined thread gone,
    // the writer thread stays.
    assert_eq!(thread_counts(&recorded), [1, 2]);
    let s = summary(&dir.path().join("t.mlens"));
    assert!(s.complete(), "{}", s.json);
    assert_eq!(s.get("threads"), 2);
    // Both threads' 200 000 blocks, and the few of stdio and opendir.
    let allocations = s.get("allocations");
    assert!(
        (400_000..400_020).contains(&allocations),
        "{allocations} allocations"
    );
    assert_eq!(s.get("frees") + s.get("leaked_allocations"), allocations);
}
