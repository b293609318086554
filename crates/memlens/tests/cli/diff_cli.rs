//! `memlens diff BASE NEW`: two runs of `tests/programs/export_leak.c` with different
//! amounts of work. The leaking function ranks first, its Δ bytes at the end equal the
//! difference of the two summaries' leaked bytes, its Δ blocks the difference of their
//! leaked blocks, and each run's totals are its summary's peak and leak; the table names
//! it first too. Bad arguments are one sentence each.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{
    FRAME_POINTER_FLAGS, Lang, Summary, compile, memlens, record, run, summary, test_dir,
};

/// Records export_leak.c with `rounds` rounds per thread as `dir/NAME.mlens`.
fn record_run(dir: &Path, program: &Path, name: &str, rounds: u32) -> (PathBuf, Summary) {
    let trace = dir.join(format!("{name}.mlens"));
    let recorded = record(
        dir,
        &["-q", "-o", trace.to_str().unwrap()],
        &[program.to_str().unwrap(), &rounds.to_string()],
        &[],
    );
    assert_eq!(recorded.run.code, 0, "{}", recorded.run.stderr);
    let s = summary(&trace);
    (trace, s)
}

fn num(v: &Value, key: &str) -> i64 {
    v[key]
        .as_i64()
        .unwrap_or_else(|| panic!("no number {key:?} in {v}"))
}

#[test]
fn the_leak_ranks_first_with_the_difference_of_the_leaked_bytes() {
    let dir = test_dir("diff");
    let mut flags = FRAME_POINTER_FLAGS.to_vec();
    flags.push("-pthread");
    let program = compile(
        dir.path(),
        "export_leak",
        Lang::C,
        include_str!("../programs/export_leak.c"),
        &flags,
    );
    let (base, a) = record_run(dir.path(), &program, "base", 1000);
    let (new, b) = record_run(dir.path(), &program, "new", 3000);
    let leaked = |s: &Summary| s.get("leaked_bytes") as i64;
    let blocks = |s: &Summary| s.get("leaked_allocations") as i64;
    assert!(leaked(&b) > leaked(&a), "the longer run leaks more");

    let done = run(
        memlens().arg("diff").arg(&base).arg(&new).arg("--json"),
        "memlens diff --json",
    );
    assert_eq!(done.code, 0, "{}", done.stderr);
    let diff: Value = serde_json::from_str(&done.stdout).expect("diff --json");
    let first = &diff["groups"][0];
    assert!(
        first["key"].as_str().unwrap().starts_with("leak_records"),
        "{first}"
    );
    assert_eq!(num(first, "delta_bytes"), leaked(&b) - leaked(&a));
    assert_eq!(num(first, "delta_objects"), blocks(&b) - blocks(&a));
    assert!(num(first, "delta_peak_bytes") > 0, "{first}");
    for (run, s) in [(&diff["base"], &a), (&diff["new"], &b)] {
        assert_eq!(num(run, "end_bytes"), leaked(s));
        assert_eq!(num(run, "peak_bytes"), s.get("peak_bytes") as i64);
        assert_eq!(num(run, "peak_time_ns"), s.get("peak_time_ns") as i64);
    }
    // Ranked by |Δ bytes at the end|.
    let deltas: Vec<u64> = diff["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| num(g, "delta_bytes").unsigned_abs())
        .collect();
    assert!(deltas.windows(2).all(|w| w[0] >= w[1]), "{deltas:?}");

    // The table names the same group first.
    let table = run(memlens().arg("diff").arg(&base).arg(&new), "memlens diff");
    assert_eq!(table.code, 0, "{}", table.stderr);
    let row = table
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("1 "))
        .unwrap_or_else(|| panic!("no first row in:\n{}", table.stdout));
    assert!(row.contains("leak_records"), "{}", table.stdout);

    // Bad arguments: one sentence, a non-zero status.
    let missing = run(
        memlens()
            .arg("diff")
            .arg(&base)
            .arg(dir.path().join("nope.mlens")),
        "memlens diff of a missing file",
    );
    assert_eq!(missing.code, 1, "{}", missing.stderr);
    assert!(missing.stderr.contains("nope.mlens"), "{}", missing.stderr);
    assert_eq!(
        missing.stderr.trim().lines().count(),
        1,
        "{}",
        missing.stderr
    );
    let bad_by = run(
        memlens()
            .args(["diff", "--by", "nonsense"])
            .arg(&base)
            .arg(&new),
        "memlens diff --by nonsense",
    );
    assert_eq!(bad_by.code, 2, "{}", bad_by.stderr);
    assert!(bad_by.stderr.contains("nonsense"), "{}", bad_by.stderr);
}
