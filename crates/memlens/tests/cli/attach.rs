//! `memlens attach PID` / `memlens detach PID`: a multi-threaded request server with a
//! slow leak (`programs/request_server.c`) is attached to three times while it runs;
//! it must finish with the same output and status as a run left alone, and the first
//! trace must hold its allocations with stacks naming its functions, say it starts
//! mid-run, and rank the leaking function first in `growth`. The failures that have
//! their own sentence are checked too: no such process, a static program, a
//! statically linked allocator, a process already being recorded.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::support::{
    FRAME_POINTER_FLAGS, Lang, clean_command, compile, memlens, preload_library, run, spawn,
    test_dir,
};

/// Requests per worker and the pause between two (µs): about 9 s per run, some
/// 50,000 allocations in the first 2 s attached (10,000 even at a fifth of the pace).
const REQUESTS: &str = "32000";
const PACE_US: &str = "250";

fn server(dir: &Path) -> std::path::PathBuf {
    compile(
        dir,
        "request_server",
        Lang::C,
        include_str!("../programs/request_server.c"),
        FRAME_POINTER_FLAGS,
    )
}

/// `memlens ARGS` run in `dir`.
fn memlens_in(dir: &Path, args: &[&str]) -> super::support::Finished {
    run(
        memlens().current_dir(dir).args(args),
        &format!("memlens {}", args.join(" ")),
    )
}

#[test]
fn three_attaches_leave_the_server_unchanged_and_the_first_trace_finds_its_leak() {
    preload_library();
    let dir = test_dir("attach");
    let prog = server(dir.path());
    let alone = run(
        clean_command(&prog).args([REQUESTS, PACE_US]),
        "the request server alone",
    );
    assert_eq!(alone.code, 3, "the server's own status:\n{}", alone.stderr);

    let running = spawn(
        clean_command(&prog).args([REQUESTS, PACE_US]),
        Duration::from_secs(120),
        "the request server, attached to",
    );
    let pid = running.id().to_string();
    std::thread::sleep(Duration::from_millis(800));
    let first = memlens_in(
        dir.path(),
        &["attach", &pid, "-o", "first.mlens", "--duration", "2s"],
    );
    assert_eq!(first.code, 0, "first attach:\n{}", first.stderr);
    assert!(
        first.stderr.contains("detached; the program runs on"),
        "{}",
        first.stderr
    );
    let second = memlens_in(
        dir.path(),
        &["attach", &pid, "-o", "second.mlens", "--duration", "500ms"],
    );
    assert_eq!(second.code, 0, "second attach:\n{}", second.stderr);
    // The third ends with `memlens detach PID`.
    let third = spawn(
        memlens()
            .current_dir(dir.path())
            .args(["attach", &pid, "-o", "third.mlens"]),
        Duration::from_secs(60),
        "the third attach",
    );
    std::thread::sleep(Duration::from_millis(1500));
    let detach = memlens_in(dir.path(), &["detach", &pid]);
    assert_eq!(detach.code, 0, "detach:\n{}", detach.stderr);
    assert!(detach.stderr.contains("third.mlens"), "{}", detach.stderr);
    let third = third.wait();
    assert_eq!(third.code, 0, "third attach:\n{}", third.stderr);

    let attached = running.wait();
    assert_eq!(
        (attached.code, &attached.stdout),
        (alone.code, &alone.stdout),
        "the attached server's status and output differ from its run alone:\n{}",
        attached.stderr
    );

    let trace = dir.path().join("first.mlens");
    let summary = memlens_in(
        dir.path(),
        &["summary", "first.mlens", "--json", "--top", "10"],
    );
    assert_eq!(summary.code, 0, "summary:\n{}", summary.stderr);
    let json: Value = serde_json::from_str(&summary.stdout).expect("summary --json");
    let allocations = json["allocations"].as_u64().unwrap_or(0);
    assert!(
        allocations >= 10_000,
        "only {allocations} allocations in {}",
        trace.display()
    );
    let frames = json["top_sites"].to_string();
    for function in [
        "build_response",
        "parse_request",
        "handle_request",
        "worker_main",
    ] {
        assert!(
            frames.contains(function),
            "no stack names {function}: {frames}"
        );
    }
    let mid_run = json["mid_run"].as_str().unwrap_or_default();
    assert!(
        mid_run.starts_with(&format!(
            "the trace starts mid-run (attached to PID {pid} at "
        )),
        "{mid_run:?}"
    );
    let text = memlens_in(dir.path(), &["summary", "first.mlens"]);
    assert!(
        text.stdout.contains("the trace starts mid-run"),
        "{}",
        text.stdout
    );
    for command in ["tree", "growth"] {
        let out = memlens_in(dir.path(), &[command, "first.mlens"]);
        assert_eq!(out.code, 0, "{command}:\n{}", out.stderr);
        let notes = out.stderr.matches("the trace starts mid-run").count();
        assert_eq!(notes, 1, "{command} says it once:\n{}", out.stderr);
    }
    let growth = memlens_in(dir.path(), &["growth", "first.mlens", "--json"]);
    let growth: Value = serde_json::from_str(&growth.stdout).expect("growth --json");
    assert_eq!(
        growth["suspects"][0]["key"].as_str(),
        Some("leak_session"),
        "growth ranks the leak first: {growth}"
    );
    let dump = memlens_in(dir.path(), &["dump", "first.mlens"]);
    assert!(
        dump.stdout.contains(&format!("attached pid={pid} ")),
        "dump shows the record"
    );
    assert!(
        dump.stdout.contains("end how=detach"),
        "the trace ends with the detach"
    );
    for later in ["second.mlens", "third.mlens"] {
        let out = memlens_in(dir.path(), &["summary", later, "--json"]);
        let json: Value = serde_json::from_str(&out.stdout).expect("summary --json");
        assert!(
            json["allocations"].as_u64().unwrap_or(0) > 0,
            "{later} records too"
        );
    }
}

/// Runs `memlens attach` on the process `prog` (with `args`) and returns its status
/// and stderr; the process is killed afterwards.
fn attach_to(prog: &mut Command, dir: &Path) -> (i32, String) {
    let mut child = prog.spawn().expect("start the program");
    std::thread::sleep(Duration::from_millis(300));
    let out = memlens_in(
        dir,
        &["attach", &child.id().to_string(), "--duration", "200ms"],
    );
    child.kill().ok();
    child.wait().ok();
    (out.code, out.stderr)
}

#[test]
fn attach_refuses_what_it_cannot_record_in_one_sentence() {
    preload_library();
    let dir = test_dir("attach-refusals");
    let none = memlens_in(dir.path(), &["attach", "999999999"]);
    assert_eq!(
        (none.code, none.stderr.trim()),
        (1, "memlens: there is no process 999999999")
    );
    let detach = memlens_in(dir.path(), &["detach", &std::process::id().to_string()]);
    assert_eq!(detach.code, 1);
    assert!(
        detach
            .stderr
            .contains("no `memlens attach` is recording process"),
        "{}",
        detach.stderr
    );

    let own = compile(
        dir.path(),
        "own_malloc",
        Lang::C,
        r#"#include <stddef.h>
           #include <unistd.h>
           static char heap[1 << 20]; static size_t used;
           void *malloc(size_t n) { void *p = heap + used; used += (n + 15) & ~15; return p; }
           void free(void *p) { (void)p; }
           void *calloc(size_t n, size_t s) { return malloc(n * s); }
           void *realloc(void *p, size_t n) { (void)p; return malloc(n); }
           int main(void) { for (;;) { free(malloc(100)); usleep(1000); } }"#,
        &["-O1"],
    );
    let (code, stderr) = attach_to(&mut clean_command(&own), dir.path());
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("uses a statically linked allocator (its executable defines malloc)"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "one sentence: {stderr}");

    let loop_source = "#include <stdlib.h>\n#include <unistd.h>\n\
                       int main(void) { for (;;) { free(malloc(100)); usleep(1000); } }";
    let src = dir.path().join("static_loop.c");
    std::fs::write(&src, loop_source).unwrap();
    let built = Command::new("cc")
        .arg("-static")
        .arg("-o")
        .arg(dir.path().join("static_loop"))
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    if built {
        let (code, stderr) = attach_to(
            &mut clean_command(dir.path().join("static_loop")),
            dir.path(),
        );
        assert_eq!(code, 1, "{stderr}");
        assert!(
            stderr.contains("is statically linked: it has no dynamic loader"),
            "{stderr}"
        );
    } else {
        eprintln!("skipped the static program: `cc -static` cannot link here (no libc.a)");
    }

    // Attaching twice at once: the second is refused while the first records,
    // and attaching again after the detach works.
    let prog = server(dir.path());
    let running = spawn(
        clean_command(&prog).args(["4000", "1000"]),
        Duration::from_secs(60),
        "the request server",
    );
    let pid = running.id().to_string();
    std::thread::sleep(Duration::from_millis(300));
    let first = spawn(
        memlens().current_dir(dir.path()).args([
            "attach",
            &pid,
            "-o",
            "a.mlens",
            "--duration",
            "2s",
        ]),
        Duration::from_secs(60),
        "the first attach",
    );
    std::thread::sleep(Duration::from_millis(800));
    let second = memlens_in(dir.path(), &["attach", &pid, "-o", "b.mlens"]);
    assert_eq!(second.code, 1, "{}", second.stderr);
    assert_eq!(
        second.stderr.trim(),
        format!(
            "memlens: process {pid} is already being recorded by another `memlens attach` \
             (stop it with `memlens detach {pid}`)"
        )
    );
    assert!(
        !dir.path().join("b.mlens").exists(),
        "a refused attach leaves no file"
    );
    assert_eq!(first.wait().code, 0);
    let again = memlens_in(
        dir.path(),
        &["attach", &pid, "-o", "c.mlens", "--duration", "300ms"],
    );
    assert_eq!(
        again.code, 0,
        "attaching again after a detach:\n{}",
        again.stderr
    );
    assert_eq!(running.wait().code, 3);

    // A process that runs under `memlens record` is already recorded.
    let recorded = spawn(
        memlens()
            .current_dir(dir.path())
            .args(["record", "-o", "r.mlens", "--"])
            .arg(&prog)
            .args(["3000", "1000"]),
        Duration::from_secs(60),
        "the recorded server",
    );
    std::thread::sleep(Duration::from_millis(500));
    let children = format!("/proc/{0}/task/{0}/children", recorded.id());
    let children = std::fs::read_to_string(children).unwrap_or_default();
    let server_pid = children
        .split_whitespace()
        .next()
        .expect("memlens record runs the server");
    let out = memlens_in(dir.path(), &["attach", server_pid]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("it runs under `memlens record`"),
        "{}",
        out.stderr
    );
    assert_eq!(recorded.wait().code, 3);
}
