//! `memlens export --format pprof|collapsed` read by the real consumers: `go tool pprof`
//! (Debian `golang-go`) lists the leaking function of `tests/programs/export_leak.c`
//! first, with totals equal to the summary's leaked bytes (`--at end`), peak bytes (the
//! default `--at peak`) and allocated bytes (`alloc_space`); inferno's
//! `inferno-flamegraph` renders the collapsed export, whose heaviest stack names the
//! leak and whose total is the summary's. Bad arguments are one sentence each.
//!
//! Needs `go` and `inferno-flamegraph` on the PATH (`.ci/run` installs both) and the
//! recorder library next to `memlens`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{
    FRAME_POINTER_FLAGS, Lang, Summary, compile, memlens, record, run, summary, test_dir,
};

/// Records export_leak.c (two threads, 20,000 rounds each) in `dir`: enough for
/// its allocations to outlast the recorder's start-up and final flush, so half
/// of the run ends among them (with 2,000 rounds a fast recording allocated
/// everything in the first half of the run's time).
fn record_leak(dir: &Path) -> (PathBuf, Summary) {
    let mut flags = FRAME_POINTER_FLAGS.to_vec();
    flags.push("-pthread");
    let program = compile(
        dir,
        "export_leak",
        Lang::C,
        include_str!("../programs/export_leak.c"),
        &flags,
    );
    let recorded = record(
        dir,
        &["-q", "-o", "leak.mlens"],
        &[program.to_str().unwrap(), "20000"],
        &[],
    );
    assert_eq!(recorded.run.code, 0, "{}", recorded.run.stderr);
    let trace = dir.join("leak.mlens");
    let s = summary(&trace);
    (trace, s)
}

/// Runs `memlens export TRACE ARGS…` and asserts it succeeded.
fn export(trace: &Path, args: &[&str]) {
    let done = run(
        memlens().arg("export").arg(trace).args(args),
        "memlens export",
    );
    assert_eq!(done.code, 0, "memlens export {args:?}: {}", done.stderr);
    assert!(done.stderr.contains("wrote"), "{}", done.stderr);
}

/// A tool the test needs, or a panic saying where it comes from.
fn tool(name: &str) -> Command {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(found, "`{name}` is not installed (.ci/run installs it)");
    Command::new(name)
}

/// `go tool pprof -top -unit=B -sample_index=INDEX`: the total and the first row's
/// function.
fn pprof_top(profile: &Path, index: &str) -> (u64, String) {
    let done = run(
        tool("go")
            .args([
                "tool",
                "pprof",
                "-top",
                "-unit=B",
                &format!("-sample_index={index}"),
            ])
            .arg(profile),
        "go tool pprof -top",
    );
    assert_eq!(done.code, 0, "go tool pprof: {}", done.stderr);
    let total = done
        .stdout
        .lines()
        .find_map(|l| l.split("Total samples = ").nth(1))
        .and_then(|t| t.trim().trim_end_matches('B').parse().ok())
        .unwrap_or_else(|| panic!("no total in:\n{}", done.stdout));
    let header = done.stdout.lines().position(|l| l.contains("flat%"));
    let first = header
        .and_then(|h| done.stdout.lines().nth(h + 1))
        .and_then(|l| l.split_whitespace().last())
        .unwrap_or_else(|| panic!("no rows in:\n{}", done.stdout));
    (total, first.to_owned())
}

#[test]
fn go_tool_pprof_lists_the_leak_first_with_the_summarys_totals() {
    let dir = test_dir("export-pprof");
    let (trace, s) = record_leak(dir.path());
    let at_end = dir.path().join("end.pb.gz");
    export(
        &trace,
        &[
            "--format",
            "pprof",
            "--at",
            "end",
            "-o",
            at_end.to_str().unwrap(),
        ],
    );
    let (inuse, first) = pprof_top(&at_end, "inuse_space");
    assert_eq!(inuse, s.get("leaked_bytes"), "in use at the end");
    assert_eq!(first, "leak_records");
    let (allocated, _) = pprof_top(&at_end, "alloc_space");
    assert_eq!(allocated, s.get("allocated_bytes"));
    let (objects, _) = pprof_top(&at_end, "alloc_objects");
    assert_eq!(objects, s.get("allocations") + s.get("reallocations"));

    // The default instant is the peak; the default output sits beside the trace.
    export(&trace, &["--format", "pprof"]);
    let (at_peak, _) = pprof_top(&dir.path().join("leak.pb.gz"), "inuse_space");
    assert_eq!(at_peak, s.get("peak_bytes"), "in use at the peak");

    // A window counts the allocations inside it only.
    let half = dir.path().join("half.pb.gz");
    export(
        &trace,
        &[
            "--format",
            "pprof",
            "--to",
            "50%",
            "-o",
            half.to_str().unwrap(),
        ],
    );
    let (in_window, _) = pprof_top(&half, "alloc_space");
    assert!(
        in_window > 0 && in_window < s.get("allocated_bytes"),
        "{in_window} of {}",
        s.get("allocated_bytes")
    );
}

#[test]
fn inferno_renders_the_collapsed_export_whose_heaviest_stack_is_the_leak() {
    let dir = test_dir("export-collapsed");
    let (trace, s) = record_leak(dir.path());
    let collapsed = dir.path().join("leak.collapsed.txt");
    export(&trace, &["--format", "collapsed", "--at", "end"]);
    let text = std::fs::read_to_string(&collapsed).unwrap();
    let lines: Vec<(&str, u64)> = text
        .lines()
        .map(|l| {
            let (stack, value) = l.rsplit_once(' ').expect("`STACK VALUE`");
            (stack, value.parse().expect("a number"))
        })
        .collect();
    let total: u64 = lines.iter().map(|(_, v)| v).sum();
    assert_eq!(total, s.get("leaked_bytes"));
    let heaviest = lines.iter().max_by_key(|(_, v)| *v).unwrap();
    assert!(
        heaviest.0.ends_with(";leak_records") && heaviest.0.contains("work;"),
        "{heaviest:?}"
    );
    let done = run(
        tool("inferno-flamegraph")
            .args(["--title", "export_leak", "--countname", "bytes"])
            .arg(&collapsed),
        "inferno-flamegraph",
    );
    assert_eq!(done.code, 0, "inferno-flamegraph: {}", done.stderr);
    assert!(done.stdout.starts_with("<?xml"), "an SVG");
    assert!(done.stdout.contains("leak_records"));

    let allocated = dir.path().join("allocated.txt");
    export(
        &trace,
        &[
            "--format",
            "collapsed",
            "--value",
            "allocated",
            "-o",
            allocated.to_str().unwrap(),
        ],
    );
    let sum: u64 = std::fs::read_to_string(&allocated)
        .unwrap()
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, s.get("allocated_bytes"));
}

#[test]
fn bad_export_arguments_are_one_sentence() {
    let dir = test_dir("export-bad");
    let (trace, _) = record_leak(dir.path());
    let cases: [(&[&str], i32, &str); 4] = [
        (&["--format", "svg"], 2, "unknown format `svg`"),
        (&["--format", "pprof", "--at", "99h"], 2, "--at"),
        (
            &["--format", "collapsed", "--value", "peak"],
            2,
            "unknown value `peak`",
        ),
        (
            &["--format", "pprof", "-o", "/no/such/dir/x.pb.gz"],
            1,
            "/no/such/dir/x.pb.gz",
        ),
    ];
    for (args, code, says) in cases {
        let done = run(
            memlens().arg("export").arg(&trace).args(args),
            "memlens export",
        );
        assert_eq!(done.code, code, "{args:?}: {}", done.stderr);
        assert_eq!(done.stderr.trim().lines().count(), 1, "{}", done.stderr);
        assert!(done.stderr.contains(says), "{args:?}: {}", done.stderr);
    }
    let two = run(
        memlens()
            .args(["export", "--format", "pprof"])
            .arg(&trace)
            .arg(&trace),
        "memlens export of two traces",
    );
    assert_eq!(two.code, 2, "{}", two.stderr);
    assert!(two.stderr.contains("one process"), "{}", two.stderr);
}
