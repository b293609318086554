//! Guards DESIGN §4.3 "Processes": `memlens record` writes one trace, of the
//! program the user launched, following `exec` (a shell script that runs
//! helpers and then `exec`s the program leaves one file, holding the program),
//! and says how many other processes it left out; with `--follow-fork` every
//! process writes its own trace, named from `-o` with its pid.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::{
    FRAME_POINTER_FLAGS, Lang, compile, process_record, record, summary, test_dir, traces_in,
};

/// Compiles `tests/programs/NAME.c` into `dir/NAME` (with `-fno-builtin`, so
/// the compiler keeps every `malloc`).
macro_rules! program {
    ($dir:expr, $name:literal) => {{
        let mut flags = FRAME_POINTER_FLAGS.to_vec();
        flags.push("-fno-builtin");
        let source = include_str!(concat!("../programs/", $name, ".c"));
        compile($dir, $name, Lang::C, source, &flags)
    }};
}

fn utf8(path: &Path) -> &str {
    path.to_str().expect("test paths are UTF-8")
}

/// Writes `dir/shim.sh`: a shell script that forks helpers (command
/// substitutions, a pipeline, a background job) and then `exec`s `used_blocks`
/// next to it.
fn shim(dir: &Path) -> PathBuf {
    program!(dir, "used_blocks");
    let script = dir.join("shim.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\n\
         x=$(readlink -f /bin/sh)\n\
         y=$(env | wc -l)\n\
         sleep 0 &\n\
         wait\n\
         exec \"$(dirname \"$0\")/used_blocks\" \"$x\" \"$y\"\n",
    )
    .expect("cannot write the script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
        .expect("cannot make the script executable");
    script
}

/// The number in stderr's `N child processes were not recorded` line.
fn unrecorded(stderr: &str) -> usize {
    let line = stderr
        .lines()
        .find(|l| l.contains("not recorded (record them too with --follow-fork)"))
        .unwrap_or_else(|| panic!("stderr says how many processes were left out:\n{stderr}"));
    let count = line
        .strip_prefix("memlens: ")
        .and_then(|l| l.split(' ').next());
    count.and_then(|n| n.parse().ok()).expect("a count")
}

/// Checks that `trace` holds `used_blocks` (in `dir`), with its 1000 blocks.
fn holds_used_blocks(trace: &Path, dir: &Path) -> u32 {
    let process = process_record(trace);
    let program = dir.join("used_blocks").canonicalize().expect("built");
    assert_eq!(
        Path::new(&process.exe),
        program,
        "{} holds the program",
        trace.display()
    );
    let s = summary(trace);
    assert!(
        s.get("allocations") >= 1000 && s.get("frees") >= 1000,
        "{}",
        s.json
    );
    assert!(s.complete(), "{}", s.json);
    process.pid
}

#[test]
fn a_script_that_execs_the_program_leaves_one_trace_of_the_program() {
    let dir = test_dir("processes-shim");
    let script = shim(dir.path());
    let out = dir.path().join("f.mlens");
    let recorded = record(dir.path(), &["-o", utf8(&out)], &[utf8(&script)], &[]);
    assert_eq!(recorded.run.code, 0, "{}", recorded.run.stderr);
    assert!(recorded.run.stdout.starts_with("2 arguments; sum "));
    holds_used_blocks(&out, dir.path());
    assert_eq!(traces_in(dir.path()), [out], "{}", recorded.run.stderr);
    // readlink, env, wc, sleep and the shells that ran them.
    let left_out = unrecorded(&recorded.run.stderr);
    assert!(left_out >= 4, "{}", recorded.run.stderr);
}

#[test]
fn without_output_the_trace_is_named_after_the_command() {
    let dir = test_dir("processes-default-name");
    shim(dir.path());
    let recorded = record(dir.path(), &[], &["./shim.sh"], &[]);
    assert_eq!(recorded.run.code, 0, "{}", recorded.run.stderr);
    let traces = traces_in(dir.path());
    assert_eq!(traces.len(), 1, "{traces:?}\n{}", recorded.run.stderr);
    let pid = holds_used_blocks(&traces[0], dir.path());
    assert_eq!(
        traces[0],
        dir.path().join(format!("memlens.shim.sh.{pid}.mlens"))
    );
    assert!(unrecorded(&recorded.run.stderr) >= 4);
}

#[test]
fn follow_fork_gives_every_child_its_own_trace_named_after_the_output() {
    let dir = test_dir("processes-follow");
    let program = program!(dir.path(), "fork_children");
    let out = dir.path().join("f.mlens");
    let recorded = record(
        dir.path(),
        &["--follow-fork", "-o", utf8(&out)],
        &[utf8(&program)],
        &[],
    );
    assert_eq!(recorded.run.code, 0, "{}", recorded.run.stderr);
    assert!(
        !recorded.run.stderr.contains("not recorded"),
        "{}",
        recorded.run.stderr
    );
    // Each child prints `child K pid P sum S`.
    let mut children: Vec<(usize, u32)> = (recorded.run.stdout.lines())
        .filter_map(|l| {
            let words: Vec<&str> = l.split(' ').collect();
            match words[..] {
                ["child", k, "pid", pid, "sum", _] => Some((k.parse().ok()?, pid.parse().ok()?)),
                _ => None,
            }
        })
        .collect();
    children.sort();
    assert_eq!(children.len(), 2, "{}", recorded.run.stdout);
    let child_trace = |pid: u32| dir.path().join(format!("f.{pid}.mlens"));
    let mut expected = vec![
        out.clone(),
        child_trace(children[0].1),
        child_trace(children[1].1),
    ];
    expected.sort();
    assert_eq!(traces_in(dir.path()), expected, "{}", recorded.run.stderr);
    let parent = process_record(&out);
    let s = summary(&out);
    assert!((100..150).contains(&s.get("allocations")), "{}", s.json);
    for (k, pid) in children {
        let trace = child_trace(pid);
        let record = process_record(&trace);
        assert_eq!((record.pid, record.ppid), (pid, parent.pid));
        let s = summary(&trace);
        let blocks = 300 + 200 * k as u64;
        assert!(
            (blocks..blocks + 10).contains(&s.get("allocations")),
            "child {k}: {}",
            s.json
        );
        assert!(s.complete(), "{}", s.json);
    }
}

#[test]
fn recording_over_a_trace_removes_its_stale_index() {
    let dir = test_dir("processes-index");
    program!(dir.path(), "used_blocks");
    let out = dir.path().join("f.mlens");
    let argv = [utf8(&dir.path().join("used_blocks")).to_owned()];
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let first = record(dir.path(), &["-q", "-o", utf8(&out)], &argv, &[]);
    assert_eq!(first.run.code, 0, "{}", first.run.stderr);
    let tree = |what: &str| {
        let done = crate::support::run(
            crate::support::memlens()
                .args(["tree", "--points", "1"])
                .arg(&out),
            what,
        );
        assert_eq!(done.code, 0, "{what}: {}", done.stderr);
        done.stderr
    };
    tree("the first tree");
    let index = dir.path().join("f.mlens.mlidx");
    assert!(index.exists(), "the first tree wrote an index");
    let again = record(dir.path(), &["-q", "-f", "-o", utf8(&out)], &argv, &[]);
    assert_eq!(again.run.code, 0, "{}", again.run.stderr);
    assert!(!index.exists(), "the index of the old trace is gone");
    let stderr = tree("the tree of the new trace");
    assert!(!stderr.contains("rebuilding"), "{stderr}");
}
