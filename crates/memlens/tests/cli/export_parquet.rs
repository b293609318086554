//! `memlens export --format parquet` read by the real consumers, with the queries of
//! `docs/export.md` taken from the document itself (`tests/export/doc_queries.py`):
//! DuckDB's figures for one export equal `memlens summary --json` (counts, bytes, the
//! peak and its time, leaks, the top sites, glibc's usable sizes as the program's own
//! `malloc_usable_size` reports them); one export of two traces holds a file per process
//! per table; PySpark in local mode over two exports finds the top sites of the sum of
//! the two summaries. Missing, foreign and damaged traces and bad output directories
//! are one sentence and a non-zero exit.
//!
//! Needs python3 with `duckdb` and `pyspark` and a JDK (`.ci/run` installs them), and
//! the recorder library next to `memlens`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::support::{
    FRAME_POINTER_FLAGS, Finished, Lang, compile, memlens, record, run, run_with_timeout, summary,
    summary_run, test_dir,
};

/// Two threads: the worker makes `RECORDS` records (keeping one in four: a leak) and
/// frees the rest; main grows a buffer by `realloc` from NULL (a `malloc`) through 13
/// doublings, takes a 150,000-byte scratch block (an mmap'd chunk) and frees it, makes
/// `TABLES` tables with `calloc` (freeing one in three), shrinks the buffer, and when
/// the worker is done expands it to 240,000 bytes: the peak is at that `realloc`,
/// where the old block's death must count before the new one's birth. It prints
/// glibc's usable size of the scratch block and of the first record.
const PROGRAM: &str = r#"
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned long sink;
static size_t record_usable;

__attribute__((noinline)) static char *make_record(size_t n) {
    char *p = malloc(n);
    memset(p, 'r', n);
    sink += (unsigned char)p[n - 1];
    return p;
}

__attribute__((noinline)) static long *make_table(size_t n) {
    long *t = calloc(n, sizeof(long));
    t[n - 1] = (long)n;
    sink += (unsigned long)t[0] + (unsigned long)t[n - 1];
    return t;
}

__attribute__((noinline)) static char *grow(char *p, size_t n) {
    p = realloc(p, n);
    p[n - 1] = 'g';
    sink += (unsigned char)p[n - 1];
    return p;
}

__attribute__((noinline)) static char *expand(char *p, size_t n) {
    p = realloc(p, n);
    memset(p, 'e', n);
    sink += (unsigned char)p[n / 2];
    return p;
}

__attribute__((noinline)) static size_t scratch(size_t n) {
    char *p = malloc(n);
    memset(p, 's', n);
    sink += (unsigned char)p[n / 2];
    size_t usable = malloc_usable_size(p);
    free(p);
    return usable;
}

static void *worker(void *arg) {
    long n = (long)arg;
    char **kept = malloc(sizeof(char *) * (size_t)n);
    long k = 0;
    for (long i = 0; i < n; i++) {
        char *p = make_record(100 + (size_t)(i % 50));
        if (i == 0)
            record_usable = malloc_usable_size(p);
        if (i % 4 == 0)
            kept[k++] = p;
        else
            free(p);
    }
    for (long i = 0; i < k; i++)
        sink += (unsigned char)kept[i][0];
    return kept;
}

int main(int argc, char **argv) {
    long records = atol(argv[1]);
    long tables = atol(argv[2]);
    pthread_t thread;
    pthread_create(&thread, NULL, worker, (void *)records);
    char *buffer = NULL;
    for (size_t n = 16; n <= 65536; n *= 2)
        buffer = grow(buffer, n);
    size_t scratch_usable = scratch(150000);
    long **kept = malloc(sizeof(long *) * (size_t)tables);
    for (long i = 0; i < tables; i++) {
        kept[i] = make_table(64 + (size_t)(i % 7));
        if (i % 3 == 0) {
            free(kept[i]);
            kept[i] = NULL;
        }
    }
    buffer = grow(buffer, 1000);
    void *worker_kept;
    pthread_join(thread, &worker_kept);
    for (long i = 0; i < tables; i++)
        if (kept[i])
            sink += (unsigned long)kept[i][0];
    /* Before the peak: the first printf allocates stdout's buffer. */
    printf("usable 150000 %zu\nusable 100 %zu\n", scratch_usable, record_usable);
    buffer = expand(buffer, 240000);
    printf("%lu %p %p\n", sink, (void *)buffer, worker_kept);
    return 0;
}
"#;

/// The document whose queries the tests run.
const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/export.md");

/// The scripts that run them.
const SCRIPTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/export");

/// Spark's limit: a JVM start and a few small jobs on a shared 2-core machine.
const SPARK_LIMIT: Duration = Duration::from_secs(300);

/// One recorded run of the program.
struct Recording {
    trace: PathBuf,
    summary: Value,
    /// `(size, malloc_usable_size)` as the program printed them.
    usable: Vec<(u64, u64)>,
}

/// Compiles the program into `dir` (once) and records it with `records` and `tables`
/// as `dir/NAME.mlens`.
fn record_program(dir: &Path, name: &str, records: u32, tables: u32) -> Recording {
    let program = dir.join("parquet_leak");
    if !program.exists() {
        compile(dir, "parquet_leak", Lang::C, PROGRAM, FRAME_POINTER_FLAGS);
    }
    let trace = dir.join(format!("{name}.mlens"));
    let recorded = record(
        dir,
        &["-q", "--force", "-o", trace.to_str().unwrap()],
        &[
            program.to_str().unwrap(),
            &records.to_string(),
            &tables.to_string(),
        ],
        &[],
    );
    assert_eq!(recorded.run.code, 0, "{}", recorded.run.stderr);
    let usable = recorded
        .run
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("usable "))
        .map(|l| {
            let (size, usable) = l.split_once(' ').expect("usable SIZE N");
            (size.parse().unwrap(), usable.parse().unwrap())
        })
        .collect();
    // Checks the trace reads back cleanly and shows no recorder frame.
    summary(&trace);
    let (done, json) = summary_run(&trace, &["--top", "1000"]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    Recording {
        trace,
        summary: json.expect("summary --json printed JSON").json,
        usable,
    }
}

/// Runs `memlens export TRACES… --format parquet ARGS…` and asserts it succeeded.
fn export(traces: &[&Path], args: &[&str]) -> Finished {
    let done = run(
        memlens()
            .arg("export")
            .args(traces)
            .args(["--format", "parquet"])
            .args(args),
        "memlens export --format parquet",
    );
    assert_eq!(done.code, 0, "memlens export: {}", done.stderr);
    assert!(done.stderr.contains("memlens: wrote "), "{}", done.stderr);
    done
}

/// Fails, saying how to get it, unless python3 can import `module`.
fn require_python(module: &str) {
    let found = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "python3 cannot import `{module}`: run .ci/run, which installs it (pip install {module})"
    );
}

/// Runs `tests/export/SCRIPT DOC DIR` within `limit` and parses the JSON it prints.
fn run_script(script: &str, dir: &Path, limit: Duration) -> Value {
    let done = run_with_timeout(
        Command::new("python3")
            .arg(Path::new(SCRIPTS).join(script))
            .arg(DOC)
            .arg(dir),
        limit,
        script,
    );
    assert_eq!(done.code, 0, "{script} failed:\n{}", done.stderr);
    let line = done.stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("{script} printed no JSON ({e}):\n{}", done.stdout))
}

/// The rows of query `name`.
fn rows<'a>(results: &'a Value, name: &str) -> &'a [Value] {
    results[name]
        .as_array()
        .unwrap_or_else(|| panic!("no results for {name}: {results}"))
}

/// The number at `key` of `v`.
fn num(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("no number {key:?} in {v}"))
}

/// Asserts a row of `sql/totals` and one of `sql/peak` reproduce `summary`.
fn assert_figures(totals: &Value, peak: &Value, summary: &Value) {
    let pid = num(summary, "pid");
    assert_eq!(num(totals, "pid"), pid);
    for key in [
        "allocations",
        "reallocations",
        "frees",
        "allocated_bytes",
        "leaked_allocations",
        "leaked_bytes",
    ] {
        assert_eq!(num(totals, key), num(summary, key), "{key} of pid {pid}");
    }
    assert_eq!(num(peak, "pid"), pid);
    for key in ["peak_bytes", "peak_time_ns"] {
        assert_eq!(num(peak, key), num(summary, key), "{key} of pid {pid}");
    }
}

/// The summaries' top sites by bytes, summed per site, as the document's call-path
/// query ranks them: bytes descending, then the site; its first ten.
fn summed_sites(summaries: &[&Value]) -> Vec<(String, u64, u64)> {
    let mut sums: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for s in summaries {
        for site in s["top_sites"].as_array().expect("top_sites") {
            let sum = sums
                .entry(site["site"].as_str().expect("site").to_owned())
                .or_default();
            sum.0 += num(site, "bytes");
            sum.1 += num(site, "allocations");
        }
    }
    let mut ranked: Vec<(String, u64, u64)> =
        sums.into_iter().map(|(k, (b, a))| (k, b, a)).collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked.truncate(10);
    ranked
}

/// The `(site, bytes, allocations)` rows of a call-path query.
fn sites(rows: &[Value]) -> Vec<(String, u64, u64)> {
    rows.iter()
        .map(|r| {
            (
                r["site"].as_str().expect("site").to_owned(),
                num(r, "bytes"),
                num(r, "allocations"),
            )
        })
        .collect()
}

/// The innermost frame of a summary's top site.
fn top_frame(summary: &Value, list: &str) -> String {
    summary[list][0]["stack"][0]
        .as_str()
        .unwrap_or_else(|| panic!("no {list} in {summary}"))
        .to_owned()
}

/// The pids that have a file in every table of the export `dir`.
fn pids_of(dir: &Path) -> Vec<u64> {
    let mut per_table = Vec::new();
    for table in [
        "allocations",
        "stacks",
        "frames",
        "marks",
        "threads",
        "processes",
    ] {
        let mut pids: Vec<u64> = std::fs::read_dir(dir.join(table))
            .unwrap_or_else(|e| panic!("{}/{table}: {e}", dir.display()))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .map(|n| {
                n.strip_suffix(".parquet")
                    .and_then(|p| p.parse().ok())
                    .unwrap_or_else(|| panic!("{table}/{n} is not PID.parquet"))
            })
            .collect();
        pids.sort_unstable();
        per_table.push(pids);
    }
    assert!(per_table.windows(2).all(|w| w[0] == w[1]), "{per_table:?}");
    per_table.swap_remove(0)
}

#[test]
fn duckdb_runs_the_documented_queries_and_gets_the_summary() {
    require_python("duckdb");
    let dir = test_dir("export-parquet-duckdb");
    let app = record_program(dir.path(), "app", 3000, 200);
    let s = &app.summary;
    assert!(
        num(s, "reallocations") > 0 && num(s, "frees") > 0 && num(s, "leaked_bytes") > 0,
        "the program reallocates, frees and leaks: {s}"
    );
    // The default output: the trace's name with `.parquet`, beside it.
    export(&[&app.trace], &[]);
    assert_eq!(pids_of(&dir.path().join("app.parquet")), [num(s, "pid")]);

    let results = run_script("duckdb_checks.py", dir.path(), Duration::from_secs(120));
    assert_figures(
        &rows(&results, "sql/totals")[0],
        &rows(&results, "sql/peak")[0],
        s,
    );
    assert_eq!(
        sites(rows(&results, "duckdb/top-call-paths")),
        summed_sites(&[s]),
        "top call paths"
    );
    // The program's sites have one caller each, so the innermost frames rank as the
    // call paths do.
    let top = &rows(&results, "sql/top-sites")[0];
    assert_eq!(
        top["site"].as_str(),
        Some(top_frame(s, "top_sites").as_str())
    );
    assert!(
        top["site"].as_str().unwrap().starts_with("make_record ("),
        "{top}"
    );
    let leak = &rows(&results, "sql/leaks-by-site")[0];
    assert_eq!(
        leak["site"].as_str(),
        Some(top_frame(s, "top_leak_sites").as_str())
    );
    assert_eq!(
        num(leak, "bytes"),
        num(&s["top_leak_sites"][0], "leaked_bytes")
    );
    let blocks: u64 = rows(&results, "sql/by-thread")
        .iter()
        .map(|r| num(r, "blocks"))
        .sum();
    assert_eq!(
        blocks,
        num(s, "allocations") + num(s, "reallocations"),
        "a row per block"
    );

    // Live at the middle of the run: what `memlens tree --at` finds at that ns.
    let live = rows(&results, "sql/live-at");
    let t_ns = num(&live[0], "t_ns");
    let live_bytes: u64 = live.iter().map(|r| num(r, "bytes")).sum();
    let tree = run(
        memlens()
            .args(["tree", "--by", "site", "--json", "--at"])
            .arg(format!("{t_ns}ns"))
            .arg(&app.trace),
        "memlens tree --at",
    );
    assert_eq!(tree.code, 0, "{}", tree.stderr);
    let tree: Value = serde_json::from_str(&tree.stdout).expect("tree --json");
    assert_eq!(num(&tree["trees"][0], "time_ns"), t_ns);
    assert_eq!(
        live_bytes,
        num(&tree["trees"][0]["root"], "bytes"),
        "live at {t_ns} ns"
    );
    // The lifetime histogram has every block once, the leaks in its last row.
    let lifetimes = rows(&results, "sql/lifetimes");
    let counted: u64 = lifetimes.iter().map(|r| num(r, "blocks")).sum();
    assert_eq!(counted, num(s, "allocations") + num(s, "reallocations"));
    let last = lifetimes.last().unwrap();
    assert_eq!(last["lifetime"].as_str(), Some("7 live at the end"));
    assert_eq!(num(last, "bytes"), num(s, "leaked_bytes"));

    // glibc's usable sizes, as the program asked malloc_usable_size.
    assert_eq!(app.usable.len(), 2, "the program prints two usable sizes");
    let usable: Vec<(u64, u64)> = rows(&results, "usable")
        .iter()
        .map(|r| (num(r, "size"), num(r, "usable_size")))
        .collect();
    for pair in &app.usable {
        assert!(usable.contains(pair), "{pair:?} not in {usable:?}");
    }

    // Rows in order of death, then the live blocks by address.
    let order = rows(&results, "order");
    let dead: Vec<u64> = order.iter().map_while(|r| r["free_seq"].as_u64()).collect();
    assert!(dead.windows(2).all(|w| w[0] <= w[1]), "deaths in order");
    let live: Vec<&Value> = order[dead.len()..].iter().collect();
    assert_eq!(live.len() as u64, num(s, "leaked_allocations"));
    assert!(live.iter().all(|r| r["free_seq"].is_null()));
    assert!(
        live.windows(2)
            .all(|w| num(w[0], "address") < num(w[1], "address")),
        "live blocks by address"
    );
}

#[test]
fn one_export_of_two_traces_has_a_file_per_process_per_table() {
    require_python("duckdb");
    let dir = test_dir("export-parquet-two");
    let a = record_program(dir.path(), "a", 3000, 200);
    let b = record_program(dir.path(), "b", 1000, 600);
    let out = dir.path().join("both");
    std::fs::create_dir(&out).unwrap();
    let done = export(
        &[&a.trace, &b.trace],
        &["-o", out.join("app.parquet").to_str().unwrap()],
    );
    assert!(done.stderr.contains("of 2 processes"), "{}", done.stderr);
    let mut pids = [num(&a.summary, "pid"), num(&b.summary, "pid")];
    pids.sort_unstable();
    assert_eq!(pids_of(&out.join("app.parquet")), pids);

    let results = run_script("duckdb_checks.py", &out, Duration::from_secs(120));
    let (totals, peak) = (rows(&results, "sql/totals"), rows(&results, "sql/peak"));
    assert_eq!((totals.len(), peak.len()), (2, 2), "a row per process");
    for s in [&a.summary, &b.summary] {
        let i = pids.iter().position(|&p| p == num(s, "pid")).unwrap();
        assert_figures(&totals[i], &peak[i], s);
    }
    assert_eq!(
        sites(rows(&results, "duckdb/top-call-paths")),
        summed_sites(&[&a.summary, &b.summary])
    );
}

#[test]
fn spark_sql_over_two_exports_finds_the_summed_top_sites() {
    require_python("pyspark");
    let dir = test_dir("export-parquet-spark");
    let a = record_program(dir.path(), "a", 3000, 200);
    let b = record_program(dir.path(), "b", 1000, 600);
    let traces = dir.path().join("traces");
    std::fs::create_dir(&traces).unwrap();
    for (recording, name) in [(&a, "a.parquet"), (&b, "b.parquet")] {
        export(
            &[&recording.trace],
            &["-o", traces.join(name).to_str().unwrap()],
        );
    }
    // Records lead in a, tables in b, records in the sum: the combined ranking is
    // neither trace's own.
    let both = summed_sites(&[&a.summary, &b.summary]);
    assert!(both[0].0.starts_with("make_record ("), "{both:?}");
    assert!(
        top_frame(&b.summary, "top_sites").starts_with("make_table ("),
        "b's top site"
    );

    let results = run_script("spark_checks.py", dir.path(), SPARK_LIMIT);
    assert_eq!(sites(rows(&results, "spark/top-call-paths")), both);
    let top = &rows(&results, "sql/top-sites")[0];
    assert_eq!(
        top["site"].as_str(),
        Some(top_frame(&a.summary, "top_sites").as_str())
    );
    assert_eq!(num(top, "bytes"), both[0].1);
    let (totals, peak) = (rows(&results, "sql/totals"), rows(&results, "sql/peak"));
    assert_eq!((totals.len(), peak.len()), (2, 2), "a row per process");
    let mut pids = [num(&a.summary, "pid"), num(&b.summary, "pid")];
    pids.sort_unstable();
    for s in [&a.summary, &b.summary] {
        let i = pids.iter().position(|&p| p == num(s, "pid")).unwrap();
        assert_figures(&totals[i], &peak[i], s);
    }
}

/// Runs `memlens export ARGS… --format parquet`, which must fail with one line on
/// stderr containing `phrase`.
fn refused(dir: &Path, args: &[&str], phrase: &str) {
    let done = run(
        memlens()
            .current_dir(dir)
            .arg("export")
            .args(args)
            .args(["--format", "parquet"]),
        "memlens export",
    );
    assert_ne!(done.code, 0, "{args:?} succeeded: {}", done.stderr);
    assert!(!done.stderr.contains("panicked"), "{}", done.stderr);
    let lines: Vec<&str> = done.stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{args:?}: one sentence, got:\n{}",
        done.stderr
    );
    assert!(lines[0].starts_with("memlens: "), "{}", lines[0]);
    assert!(
        lines[0].contains(phrase),
        "{args:?}: {:?} lacks {phrase:?}",
        lines[0]
    );
    let reason_once = lines[0].matches("(os error").count() <= 1;
    assert!(reason_once, "the reason is given once: {}", lines[0]);
}

#[test]
fn bad_traces_and_outputs_are_one_sentence() {
    let dir = test_dir("export-parquet-errors");
    let d = dir.path();
    refused(d, &["missing.mlens"], "missing.mlens");
    std::fs::write(d.join("foreign.mlens"), "not a trace\n").unwrap();
    refused(d, &["foreign.mlens"], "not a memlens trace");

    let app = record_program(d, "app", 300, 20);
    let app = app.trace.to_str().unwrap();
    std::fs::write(d.join("file"), "").unwrap();
    refused(d, &[app, "-o", "file"], "is a file");
    refused(d, &[app, "-o", "file/app.parquet"], "Not a directory");
    std::fs::create_dir(d.join("photos")).unwrap();
    std::fs::write(d.join("photos/cat.jpg"), "").unwrap();
    refused(d, &[app, "-o", "photos"], "`cat.jpg`");
    refused(
        d,
        &[app, app, "-o", "twice.parquet"],
        "two of the traces are process",
    );
    assert!(!d.join("twice.parquet").exists(), "nothing written");

    // An earlier export is replaced whole: a stale process's files go.
    let stale = d.join("app.parquet/allocations/1.parquet");
    std::fs::create_dir_all(stale.parent().unwrap()).unwrap();
    std::fs::write(&stale, "old").unwrap();
    export(&[Path::new(app)], &[]);
    assert!(!stale.exists(), "the stale table was removed");

    // A damaged trace: what can be read is exported, the damage is one sentence and
    // the exit status says so.
    let bytes = std::fs::read(app).unwrap();
    std::fs::write(d.join("cut.mlens"), &bytes[..bytes.len() * 2 / 3]).unwrap();
    let done = run(
        memlens()
            .current_dir(d)
            .args(["export", "cut.mlens", "--format", "parquet"]),
        "memlens export cut.mlens",
    );
    assert_ne!(done.code, 0, "a damaged trace exits non-zero");
    assert!(!done.stderr.contains("panicked"), "{}", done.stderr);
    let damage: Vec<&str> = done
        .stderr
        .lines()
        .filter(|l| l.contains("damaged at byte offset"))
        .collect();
    assert_eq!(damage.len(), 1, "{}", done.stderr);
    assert!(d.join("cut.parquet/processes").is_dir(), "{}", done.stderr);
}
