//! `memlens record --latency`: a real C program (`tests/programs/latency.c`)
//! recorded with allocator latencies has one on every allocation, free and
//! reallocation, each plausible, and `memlens summary` shows the latency
//! percentiles per function; recorded without the option, the trace has no
//! latency and reads exactly as before.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support::{
    self, FRAME_POINTER_FLAGS, Lang, clean_command, compile, dump, record, run, summary,
};

fn build(dir: &Path) -> PathBuf {
    let mut flags = FRAME_POINTER_FLAGS.to_vec();
    flags.push("-fno-builtin");
    compile(
        dir,
        "latency",
        Lang::C,
        include_str!("../programs/latency.c"),
        &flags,
    )
}

/// Records `latency` in `dir` with `options`, checking it behaves as
/// without the recorder; returns the trace.
fn record_program(dir: &Path, options: &[&str]) -> PathBuf {
    let program = build(dir);
    let plain = run(
        clean_command(&program).current_dir(dir),
        "latency without the recorder",
    );
    let mut all = vec!["-q", "-o", "trace.mlens"];
    all.extend_from_slice(options);
    let recorded = record(dir, &all, &["./latency"], &[]);
    assert_eq!(recorded.run.code, 0, "{}", recorded.run.stderr);
    assert_eq!(recorded.run.stdout, plain.stdout);
    assert!(plain.stdout.contains("gone=yes"), "{}", plain.stdout);
    dir.join("trace.mlens")
}

/// One event line of `memlens dump`: its kind, size (allocations) and
/// latency in ns when present.
struct Line {
    kind: String,
    size: Option<u64>,
    latency: Option<u64>,
}

fn event_lines(trace: &Path) -> Vec<Line> {
    let done = dump(trace);
    assert_eq!(done.code, 0, "{}", done.stderr);
    done.stdout
        .lines()
        .filter_map(|l| {
            let mut words = l.split(' ');
            words.next()?.parse::<u64>().ok()?;
            let kind = words.next()?;
            if !matches!(kind, "alloc" | "free" | "realloc") {
                return None;
            }
            let field = |name: &str| {
                l.split(' ')
                    .find_map(|w| w.strip_prefix(name))
                    .map(|v| v.trim_end_matches("ns").parse::<u64>().expect("a number"))
            };
            Some(Line {
                kind: kind.to_string(),
                size: field("size="),
                latency: field("latency="),
            })
        })
        .collect()
}

#[test]
fn latency_is_recorded_on_every_call_and_summarized_per_function() {
    let dir = support::test_dir("latency");
    let trace = record_program(dir.path(), &["--latency"]);
    let lines = event_lines(&trace);
    let s = summary(&trace);
    assert!(s.complete());
    let events = s.get("allocations") + s.get("frees") + s.get("reallocations");
    assert_eq!(lines.len() as u64, events + s.get("unknown_frees"));
    assert!(lines.len() > 8000, "{} events", lines.len());
    // Every event has a latency, and each is below a second.
    let mut latencies: Vec<u64> = Vec::new();
    for l in &lines {
        let ns = l
            .latency
            .unwrap_or_else(|| panic!("a {} event without latency", l.kind));
        assert!(ns < 1_000_000_000, "a {} took {ns} ns", l.kind);
        latencies.push(ns);
    }
    // Plausible: the clock resolves most calls (a fast call may read as 0
    // on a coarse clock, never most of them), and the mmap'd 64 MiB block
    // costs a system call to map and another to unmap.
    let zero = latencies.iter().filter(|&&ns| ns == 0).count();
    assert!(zero * 4 < latencies.len(), "{zero} zero latencies");
    latencies.sort_unstable();
    assert!(latencies[latencies.len() / 2] > 0);
    let big = lines
        .iter()
        .position(|l| l.kind == "alloc" && l.size == Some(64 << 20))
        .expect("the 64 MiB allocation");
    assert!(lines[big].latency > Some(0));
    // The latency section of the summary, per function.
    let rows = s.json["latency"]
        .as_array()
        .expect("summary --json has a latency list");
    let by_fn: BTreeMap<String, (u64, u64, u64, u64)> = rows
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
            (
                r["function"].as_str().unwrap().to_string(),
                (n("calls"), n("p50_ns"), n("p99_ns"), n("max_ns")),
            )
        })
        .collect();
    for f in [
        "malloc",
        "calloc",
        "realloc",
        "free",
        "posix_memalign",
        "aligned_alloc",
        "memalign",
        "valloc",
    ] {
        let (calls, p50, p99, max) = by_fn[f];
        assert!(
            calls >= 1 && p50 <= p99 && p99 <= max,
            "{f}: {:?}",
            by_fn[f]
        );
    }
    assert!(
        by_fn["malloc"].0 >= 2000 && by_fn["free"].0 >= 4000,
        "{by_fn:?}"
    );
    let calls: u64 = by_fn.values().map(|v| v.0).sum();
    assert_eq!(calls, lines.len() as u64, "every event is in the table");
    assert_eq!(by_fn["free"].3, {
        let frees = lines.iter().filter(|l| l.kind == "free");
        frees.filter_map(|l| l.latency).max().unwrap()
    });
    let text = run(
        support::memlens().arg("summary").arg(&trace),
        "memlens summary",
    );
    assert!(text.stdout.contains("allocator latency"), "{}", text.stdout);
    assert!(
        text.stdout
            .lines()
            .any(|l| l.trim_start().starts_with("malloc ") && l.contains(" ns")),
        "{}",
        text.stdout
    );
}

#[test]
fn without_the_option_the_trace_has_no_latency() {
    let dir = support::test_dir("no-latency");
    let trace = record_program(dir.path(), &[]);
    let lines = event_lines(&trace);
    assert!(lines.len() > 8000);
    assert!(lines.iter().all(|l| l.latency.is_none()));
    let s = summary(&trace);
    assert!(s.json.get("latency").is_none(), "{}", s.json);
    assert_eq!(s.get("reallocations"), 2000);
    let text = run(
        support::memlens().arg("summary").arg(&trace),
        "memlens summary",
    );
    assert!(
        !text.stdout.contains("allocator latency"),
        "{}",
        text.stdout
    );
}

#[test]
fn forked_and_execed_processes_record_latencies_too() {
    // With --follow-fork the setting reaches every process of the run: the
    // forked child (which starts its own writer) and the program the child
    // `exec`s (which writes the child's file again).
    let dir = support::test_dir("latency-fork");
    let mut flags = FRAME_POINTER_FLAGS.to_vec();
    flags.push("-fno-builtin");
    let program = compile(
        dir.path(),
        "fork_exec",
        Lang::C,
        include_str!("../programs/fork_exec.c"),
        &flags,
    );
    let argv = [program.to_str().expect("UTF-8 path"), "execv"];
    let recorded = record(
        dir.path(),
        &["-q", "--latency", "--follow-fork"],
        &argv,
        &[],
    );
    assert!(recorded.run.stdout.contains("exec child done"));
    let traces = support::traces_in(dir.path());
    assert_eq!(traces.len(), 2, "parent, exec'd child: {traces:?}");
    for trace in &traces {
        let lines = event_lines(trace);
        assert!(!lines.is_empty(), "{} has events", trace.display());
        let missing = lines.iter().filter(|l| l.latency.is_none()).count();
        assert_eq!(missing, 0, "{}: events without latency", trace.display());
    }
}
