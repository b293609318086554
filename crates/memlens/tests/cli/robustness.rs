//! Guards DESIGN §9 "the target never breaks": under the recorder, a program
//! prints the same stdout and stderr and exits with the same status as
//! without it, through threads, fork, exec, dlopen with TLS, signal
//! handlers, exceptions, exit from a thread, late destructors, SIGKILL,
//! `_exit` and crashes; and the trace holds what the program did.
//!
//! The programs live in `tests/programs/`, one file each, with a comment
//! saying what they exercise.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::{
    self, FRAME_POINTER_FLAGS, Lang, Recorded, TIME_LIMIT, clean_command, compile, dump,
    process_record, record, record_command, run, spawn, summary, summary_run, test_dir, traces_in,
    written_paths,
};

/// Compiles `tests/programs/NAME.c` (`C`) or `NAME.cpp` (`Cxx`) into
/// `dir/NAME` with the given extra flags (see [`build`]).
macro_rules! program {
    ($dir:expr, $name:literal, C $(, $flag:expr)*) => {
        build($dir, $name, Lang::C, include_str!(concat!("../programs/", $name, ".c")), &[$($flag),*])
    };
    ($dir:expr, $name:literal, Cxx $(, $flag:expr)*) => {
        build($dir, $name, Lang::Cxx, include_str!(concat!("../programs/", $name, ".cpp")), &[$($flag),*])
    };
}

/// Compiles `source` into `dir/name`. Every program is built with
/// `-fno-builtin` so the compiler keeps `free(malloc(n))` pairs.
fn build(dir: &Path, name: &str, lang: Lang, source: &str, extra: &[&str]) -> PathBuf {
    let mut flags = FRAME_POINTER_FLAGS.to_vec();
    flags.push("-fno-builtin");
    flags.extend_from_slice(extra);
    compile(dir, name, lang, source, &flags)
}

fn utf8(path: &Path) -> &str {
    path.to_str().expect("test paths are UTF-8")
}

/// Runs `argv` in `dir` without and then with the recorder (`-q` plus
/// `options`), asserts both runs print the same and exit the same, and
/// returns the recorded run.
fn same_as_without_recorder(dir: &Path, options: &[&str], argv: &[&str]) -> Recorded {
    let mut plain = clean_command(argv[0]);
    plain.args(&argv[1..]).current_dir(dir);
    let plain = run(&mut plain, &format!("{} without the recorder", argv[0]));
    let mut all = vec!["-q"];
    all.extend_from_slice(options);
    let recorded = record(dir, &all, argv, &[]);
    let what = argv.join(" ");
    assert_eq!(
        recorded.run.stdout, plain.stdout,
        "{what}: stdout differs under the recorder"
    );
    assert_eq!(
        recorded.run.stderr, plain.stderr,
        "{what}: stderr differs under the recorder"
    );
    assert_eq!(
        recorded.run.code, plain.code,
        "{what}: exit status differs under the recorder"
    );
    recorded
}

/// The one trace of a single-process recording.
fn only_trace(recorded: &Recorded) -> PathBuf {
    assert_eq!(
        recorded.traces.len(),
        1,
        "expected one trace: {:?}",
        recorded.traces
    );
    recorded.traces[0].clone()
}

#[test]
fn sixteen_threads_allocating_at_once() {
    let dir = test_dir("threads");
    let program = program!(dir.path(), "threads", C);
    let recorded = same_as_without_recorder(dir.path(), &[], &[utf8(&program)]);
    let s = summary(&only_trace(&recorded));
    assert!(s.complete(), "{}", s.json);
    // 16 workers × 4000 malloc and 4000 non-null free, plus a few calls by
    // libc itself (thread set-up, the stdout buffer).
    assert!(
        (64_000..64_100).contains(&s.get("allocations")),
        "{}",
        s.json
    );
    assert!((64_000..64_100).contains(&s.get("frees")), "{}", s.json);
    assert!(s.get("threads") >= 16, "{}", s.json);
    assert_eq!(s.get("unknown_frees"), 0, "{}", s.json);
}

/// The `memlens: …` lines removed, leaving the program's own stderr.
fn program_stderr(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| !l.starts_with("memlens: "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Checks a trace reads back without damage and frees no more than it allocated.
fn assert_consistent(trace: &Path) -> support::Summary {
    let s = summary(trace);
    assert!(
        s.strings("damage").is_empty(),
        "{}: {}",
        trace.display(),
        s.json
    );
    assert!(
        s.get("frees") <= s.get("allocations") + s.get("reallocations"),
        "{}: more frees than allocations: {}",
        trace.display(),
        s.json
    );
    s
}

#[test]
fn fork_gives_parent_and_child_their_own_consistent_traces() {
    let dir = test_dir("fork");
    let program = program!(dir.path(), "fork", C);
    let mut plain = clean_command(&program);
    let plain = run(plain.current_dir(dir.path()), "fork without the recorder");
    let recorded = record(dir.path(), &["--follow-fork"], &[utf8(&program)], &[]);
    assert_eq!(recorded.run.stdout, plain.stdout);
    assert_eq!(program_stderr(&recorded.run.stderr), plain.stderr);
    assert_eq!(recorded.run.code, plain.code);
    let traces = written_paths(&recorded.run.stderr);
    assert_eq!(
        traces.len(),
        2,
        "stderr names two traces:\n{}",
        recorded.run.stderr
    );
    let records = [process_record(&traces[0]), process_record(&traces[1])];
    let (parent, child) = if records[1].ppid == records[0].pid {
        (0, 1)
    } else {
        (1, 0)
    };
    assert_eq!(
        records[child].ppid, records[parent].pid,
        "one trace is the other's child"
    );
    let parent = assert_consistent(&traces[parent]);
    let child = assert_consistent(&traces[child]);
    assert!(parent.complete() && child.complete());
    // The parent churns 100 then 2000 blocks (each with its array); the
    // child, which starts recording at the fork, 1000.
    assert!(parent.get("allocations") >= 2102, "{}", parent.json);
    assert!(
        (1001..1010).contains(&child.get("allocations")),
        "{}",
        child.json
    );
}

/// Runs `fork_exec.c` with `--follow-fork` and the given exec function, and
/// returns the test directory and the child's trace (its last image writes
/// the child's one file), checking the parent's and how the two relate.
fn fork_then_exec(exec_function: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = test_dir("fork-exec");
    let program = program!(dir.path(), "fork_exec", C);
    let argv = [utf8(&program), exec_function];
    let recorded = same_as_without_recorder(dir.path(), &["--follow-fork"], &argv);
    assert_eq!(recorded.run.code, 0);
    let traces = traces_in(dir.path());
    assert_eq!(traces.len(), 2, "the parent and the child: {traces:?}");
    let records: Vec<_> = traces.iter().map(|t| process_record(t)).collect();
    let (parent, child) = if records[1].ppid == records[0].pid {
        (0, 1)
    } else {
        (1, 0)
    };
    assert_eq!(records[child].ppid, records[parent].pid, "{records:?}");
    let name = format!("memlens.fork_exec.{}.mlens", records[child].pid);
    assert_eq!(traces[child], dir.path().join(name));
    let parent = assert_consistent(&traces[parent]);
    assert!(parent.complete(), "{}", parent.json);
    (dir, traces[child].clone())
}

/// The exec'd image replaces the child's trace: the file holds the program
/// the child became, not the 300 blocks before the exec.
fn exec_replaces_the_childs_trace(exec_function: &str) {
    let (_dir, child) = fork_then_exec(exec_function);
    let after = assert_consistent(&child);
    assert!(
        (500..520).contains(&after.get("allocations")),
        "{}",
        after.json
    );
    assert!(after.complete(), "{}", after.json);
    assert!(!dump(&child).stdout.contains("name=\"exec\""));
}

#[test]
fn fork_then_execv_of_a_child_that_allocates() {
    exec_replaces_the_childs_trace("execv");
}

#[test]
fn fork_then_execl_of_a_child_that_allocates() {
    exec_replaces_the_childs_trace("execl");
}

/// glibc's `execle` (like `execl`) calls its internal `__execve` directly, so
/// a recorder that interposes only `execve`/`execv`/`execvp`/`execvpe`/
/// `fexecve` never sees it and cannot flush before the image is replaced.
/// Here the new image runs without the recorder (an empty environment), so
/// the child's trace is the one it wrote up to the exec.
#[test]
fn fork_then_execle_without_the_recorder_keeps_the_child_up_to_the_exec() {
    let (_dir, child) = fork_then_exec("execle");
    let before = assert_consistent(&child);
    assert_eq!(
        (before.get("allocations"), before.get("frees")),
        (300, 300),
        "the child's allocations before exec: {}",
        before.json
    );
    assert!(dump(&child).stdout.contains("name=\"exec\""));
}

/// Builds `programs/tls_library.c` into `dir/libtls.so`.
fn tls_library(dir: &Path) -> PathBuf {
    let source = include_str!("../programs/tls_library.c");
    build(dir, "libtls.so", Lang::C, source, &["-shared", "-fPIC"])
}

#[test]
fn dlopen_of_a_library_with_tls_that_allocates_from_a_thread() {
    let dir = test_dir("dlopen-tls");
    let library = tls_library(dir.path());
    let program = program!(dir.path(), "dlopen_tls", C, "-ldl");
    let recorded = same_as_without_recorder(dir.path(), &[], &[utf8(&program), utf8(&library)]);
    assert_eq!(recorded.run.code, 0);
    let trace = only_trace(&recorded);
    let s = summary(&trace);
    assert!(s.get("allocations") >= 10_000, "{}", s.json);
    assert!(s.get("threads") >= 2, "{}", s.json);
}

/// The recorder learns of a `dlopen` in its hook but rescans the module
/// map only in the writer's next round, so a library loaded and unloaded
/// in between never appears in the trace, and its allocation sites cannot
/// be symbolized. Twenty quick load/unload cycles make that certain.
#[test]
fn every_dlopen_and_dlclose_is_in_the_module_map() {
    let dir = test_dir("dlopen-cycle");
    let library = tls_library(dir.path());
    let program = program!(dir.path(), "dlopen_cycle", C, "-ldl");
    let recorded = same_as_without_recorder(dir.path(), &[], &[utf8(&program), utf8(&library)]);
    let text = dump(&only_trace(&recorded)).stdout;
    for record in ["module-load", "module-unload"] {
        let wanted = format!("{record} path={:?}", utf8(&library));
        let found = text.lines().filter(|l| l.contains(&wanted)).count();
        assert_eq!(found, 20, "one {record} record per cycle");
    }
}

#[test]
fn signal_handler_that_allocates() {
    let dir = test_dir("signal");
    let program = program!(dir.path(), "signal_alloc", C);
    let recorded = same_as_without_recorder(dir.path(), &[], &[utf8(&program), "handler-count"]);
    let counts: Vec<u64> = std::fs::read_to_string(dir.path().join("handler-count"))
        .expect("the program wrote its counts")
        .split_whitespace()
        .map(|n| n.parse().expect("a number"))
        .collect();
    let (main_loop, handler) = (counts[0], counts[1]);
    let s = summary(&only_trace(&recorded));
    // Every allocation of the main loop and of the handler, plus the few
    // libc makes for fopen and stdout.
    let expected = main_loop + handler;
    assert!(
        (expected..expected + 10).contains(&s.get("allocations")),
        "{main_loop} main-loop and {handler} handler allocations: {}",
        s.json
    );
    assert!(s.complete(), "{}", s.json);
}

#[test]
fn cxx_exceptions_through_allocating_frames() {
    let dir = test_dir("exceptions");
    let program = program!(dir.path(), "exceptions", Cxx);
    for unwind in ["fp", "dwarf"] {
        let recorded = same_as_without_recorder(
            dir.path(),
            &["--force", "-o", "ex.mlens", "--unwind", unwind],
            &[utf8(&program)],
        );
        let s = summary(&dir.path().join("ex.mlens"));
        // Each of the 2000 throws allocates the exception and its message,
        // and every frame on the way down a string, a vector and an array.
        assert!(
            s.get("allocations") >= 2000 * 5,
            "--unwind {unwind}: {}",
            s.json
        );
        assert!(s.complete(), "--unwind {unwind}: {}", s.json);
        assert_eq!(recorded.run.code, 0);
    }
}

#[test]
fn exit_from_a_thread_while_others_allocate() {
    let dir = test_dir("exit-thread");
    let program = program!(dir.path(), "exit_from_thread", C);
    let recorded = same_as_without_recorder(dir.path(), &[], &[utf8(&program)]);
    assert_eq!(recorded.run.code, 4);
    let s = summary(&only_trace(&recorded));
    assert!(s.get("allocations") >= 20_000, "{}", s.json);
    assert!(s.complete(), "{}", s.json);
}

#[test]
fn frees_in_atexit_handlers_and_static_destructors_are_recorded() {
    let dir = test_dir("late-frees");
    let program = program!(dir.path(), "late_frees", Cxx);
    let recorded = same_as_without_recorder(dir.path(), &[], &[utf8(&program)]);
    let s = summary(&only_trace(&recorded));
    // main allocates 102 blocks; the atexit handler, the static destructor
    // and the destructor function each free theirs and allocate one more.
    assert_eq!(s.get("allocations"), 105, "{}", s.json);
    assert_eq!(s.get("frees"), 105, "{}", s.json);
    assert_eq!(s.get("leaked_allocations"), 0, "{}", s.json);
    assert_eq!(s.get("leaked_bytes"), 0, "{}", s.json);
    assert!(s.complete(), "{}", s.json);
}

#[test]
fn sigkill_mid_run_leaves_a_readable_trace() {
    let dir = test_dir("sigkill");
    let program = program!(dir.path(), "allocate_forever", C);
    let pid_file = dir.path().join("pid");
    let mut cmd = record_command(
        dir.path(),
        &["-q", "-o", "killed.mlens"],
        &[utf8(&program), utf8(&pid_file)],
        &[],
    );
    let running = spawn(&mut cmd, TIME_LIMIT, "memlens record -- allocate_forever");
    let started = Instant::now();
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
        {
            break pid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the program never started"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill has no memory-safety preconditions; `pid` is the program
    // this test started, still running (it never exits by itself).
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let done = running.wait();
    assert_eq!(
        done.code,
        128 + libc::SIGKILL,
        "memlens record reports the kill"
    );
    let trace = dir.path().join("killed.mlens");
    let (status, s) = summary_run(&trace, &[]);
    assert!(
        matches!(status.code, 0 | 1),
        "summary of a killed trace:\n{}",
        status.stderr
    );
    let s = s.expect("summary --json of a killed trace");
    assert!(s.get("allocations") >= 10_000, "{}", s.json);
    assert!(
        !s.complete(),
        "a killed trace has no end record: {}",
        s.json
    );
    let text = dump(&trace);
    assert!(
        matches!(text.code, 0 | 1),
        "dump of a killed trace:\n{}",
        text.stderr
    );
    assert!(text.stdout.contains(" alloc "), "dump prints the events");
}

#[test]
fn underscore_exit_right_after_allocating_keeps_the_events() {
    let dir = test_dir("underscore-exit");
    let program = program!(dir.path(), "underscore_exit", C);
    let recorded = same_as_without_recorder(dir.path(), &[], &[utf8(&program)]);
    assert_eq!(recorded.run.code, 3);
    let trace = only_trace(&recorded);
    let s = summary(&trace);
    assert_eq!(
        (s.get("allocations"), s.get("frees")),
        (1000, 500),
        "{}",
        s.json
    );
    assert!(dump(&trace).stdout.contains("end how=_exit"));
}

#[test]
fn wrapper_script_that_execs_the_real_binary_keeps_the_output_name() {
    let dir = test_dir("wrapper");
    let real = program!(dir.path(), "wrapped_program", C);
    let script = dir.path().join("wrapper.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nexec \"$(dirname \"$0\")/wrapped_program\" \"$@\"\n",
    )
    .expect("cannot write the wrapper");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
        .expect("cannot make the wrapper executable");
    let recorded =
        same_as_without_recorder(dir.path(), &["-o", "out.mlens"], &[utf8(&script), "a", "b"]);
    assert_eq!(recorded.run.stdout, "real program ran with 2 arguments\n");
    let out = dir.path().join("out.mlens");
    let process = process_record(&out);
    let real = real.canonicalize().expect("the program exists");
    assert_eq!(
        Path::new(&process.exe),
        real,
        "out.mlens holds the real program"
    );
    assert!(summary(&out).get("allocations") >= 1234);
    // The shell's trace was replaced by the program's: one file.
    assert_eq!(traces_in(dir.path()), [out]);
}

#[test]
fn user_marks_and_periodic_marks_are_in_the_dump() {
    let dir = test_dir("marks");
    let program = program!(dir.path(), "marks", C, "-ldl");
    let recorded =
        same_as_without_recorder(dir.path(), &["--mark-every", "50ms"], &[utf8(&program)]);
    let text = dump(&only_trace(&recorded)).stdout;
    let user: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" mark ") && l.ends_with("name=\"phase 2\""))
        .collect();
    assert_eq!(user.len(), 1, "one user mark named \"phase 2\":\n{text}");
    let periodic = text
        .lines()
        .filter(|l| l.contains(" mark tid=0 name=\"+"))
        .count();
    assert!(
        periodic >= 3,
        "a 300 ms run with --mark-every 50ms has periodic marks:\n{text}"
    );
}

#[test]
fn errno_is_preserved_across_allocation_calls() {
    let dir = test_dir("errno");
    let program = program!(dir.path(), "errno_kept", C);
    let recorded = same_as_without_recorder(dir.path(), &[], &[utf8(&program)]);
    assert_eq!(recorded.run.stdout, "errno preserved\n");
    assert_eq!(recorded.run.code, 0);
}

#[test]
fn exit_status_of_the_program_is_passed_on() {
    let dir = test_dir("exit-status");
    let recorded = same_as_without_recorder(dir.path(), &[], &["/bin/sh", "-c", "exit 7"]);
    assert_eq!(recorded.run.code, 7);
}

#[test]
fn sigsegv_gives_139_and_a_readable_trace() {
    let dir = test_dir("segfault");
    let program = program!(dir.path(), "segfault", C);
    let recorded = same_as_without_recorder(dir.path(), &[], &[utf8(&program)]);
    assert_eq!(recorded.run.code, 139);
    let (status, _) = summary_run(&only_trace(&recorded), &[]);
    assert!(
        matches!(status.code, 0 | 1),
        "summary of a crashed trace:\n{}",
        status.stderr
    );
}

#[test]
fn garbage_in_the_frame_pointer_register_does_not_crash_the_target() {
    let dir = test_dir("garbage-rbp");
    let source = include_str!("../programs/garbage_frame_pointer.c");
    let program = compile(
        dir.path(),
        "garbage_rbp",
        Lang::C,
        source,
        &["-O2", "-fomit-frame-pointer"],
    );
    let recorded = same_as_without_recorder(dir.path(), &[], &[utf8(&program)]);
    assert_eq!(recorded.run.code, 0);
    assert_eq!(summary(&only_trace(&recorded)).get("allocations"), 7);
}
