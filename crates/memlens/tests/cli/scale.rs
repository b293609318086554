//! Heap analysis at scale through the on-disk index (`<trace>.mlidx`): `memlens growth`
//! on a request-serving program (`tests/heap_programs/server.c`) recorded to tens of
//! millions of events must find its slow leak with a peak memory bounded by the live
//! set, not by the number of events; a second run must reuse the index instead of
//! reading the events again; and a damaged, truncated or foreign index must be rebuilt
//! with one note and the same answer. The viewer's first tree of the indexed trace is
//! answered with a peak memory under the same bound (the child's `VmHWM` at the moment
//! it answered: the allocation map, read meanwhile on a thread of its own, still holds
//! every block and is the Scale issue's open half).
//!
//! The peak memory of each `memlens growth` is the child's `ru_maxrss` from `wait4`.
//! The scale test records 50 M events when the tests are built with optimisations
//! (`cargo test --release`, as `test.sh` runs them; the release binary takes ≈ 13 s for
//! its commands) and 12 M in a debug build, whose recorder and reader are about ten
//! times slower (≈ 0.8 µs per event to record, 1 µs to summarize, 2 µs for the first
//! `growth`), so that it stays under a minute.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use crate::support::trace::memlens;
use crate::support::viewer::Viewer;
use crate::support::{FRAME_POINTER_FLAGS, Lang, compile, record, summary, test_dir};

const SERVER: &str = include_str!("../heap_programs/server.c");

/// The server's worker threads.
const THREADS: u64 = 2;
/// Events (allocations + frees + reallocations) the scale test records; the server
/// makes about 8 per request.
const EVENTS: u64 = if cfg!(debug_assertions) {
    12_000_000
} else {
    50_000_000
};
/// The bound on the peak RSS of `memlens growth`: the budget for 300 M events.
/// Measured in a release build: 170–270 MiB at 50 M events on a quiet machine, up to
/// 550 MiB when the program was recorded on a loaded one (its blocks' lifetimes then
/// span more instants, and the coalesced model has a row per group, birth instant and
/// death instant). Holding every allocation, as the reader did before the index, costs
/// ≈ 170 B per allocation (half the events): 4 GiB at 50 M events, 1 GiB at 12 M.
const PEAK_RSS_LIMIT_KIB: u64 = 1024 * 1024;
/// The limit for one `memlens growth`.
const GROWTH_TIME_LIMIT: Duration = Duration::from_secs(180);

/// A finished child and what the kernel accounted for it.
#[derive(Debug)]
pub(crate) struct Measured {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) elapsed: Duration,
    /// Peak resident set size in KiB (`ru_maxrss`).
    pub(crate) peak_rss_kib: u64,
}

/// Reads all of `pipe` on a thread.
fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        pipe.read_to_end(&mut buf).ok();
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// Runs `cmd` to completion under `limit`, reaping it with `wait4` for its peak RSS.
#[allow(
    clippy::zombie_processes,
    reason = "the child is reaped by `wait4`, which clippy does not see"
)]
pub(crate) fn run_measured(cmd: &mut Command, limit: Duration, what: &str) -> Measured {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let stdout = drain(child.stdout.take().expect("piped"));
    let stderr = drain(child.stderr.take().expect("piped"));
    let pid = child.id() as libc::pid_t;
    let (status, usage) = loop {
        let mut status = 0;
        // SAFETY: rusage is plain old data, for which all zero bytes are valid.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: both pointers are to live locals; `pid` is our child, not yet reaped
        // (nothing else waits for it: `child` is never waited on).
        let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if reaped == pid {
            break (status, usage);
        }
        if reaped < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            panic!(
                "cannot wait for {what}: {}",
                std::io::Error::last_os_error()
            );
        }
        if start.elapsed() > limit {
            child.kill().ok();
            child.wait().ok();
            panic!("{what} did not finish within {limit:?} and was killed");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = start.elapsed();
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    let done = Measured {
        code,
        stdout: stdout.join().expect("the stdout reader does not panic"),
        stderr: stderr.join().expect("the stderr reader does not panic"),
        elapsed,
        peak_rss_kib: usage.ru_maxrss as u64,
    };
    assert!(
        !done.stderr.contains("panicked"),
        "{what} panicked:\n{}",
        done.stderr
    );
    done
}

/// Compiles the server and records `requests` requests on each of its threads as
/// `dir/server.mlens`.
fn record_server(dir: &Path, requests: u64) -> PathBuf {
    let exe = compile(dir, "server", Lang::C, SERVER, FRAME_POINTER_FLAGS);
    let (threads, requests) = (THREADS.to_string(), requests.to_string());
    let recorded = record(
        dir,
        &["-q", "-o", "server.mlens", "--force"],
        &[
            exe.to_str().expect("a UTF-8 temporary path"),
            &threads,
            &requests,
        ],
        &[],
    );
    assert_eq!(
        recorded.run.code, 0,
        "the server failed under the recorder:\n{}",
        recorded.run.stderr
    );
    dir.join("server.mlens")
}

/// Runs `memlens growth TRACE`, measured, with the index cache directory (used only
/// when the trace's directory is not writable) moved to `cache`.
fn growth(trace: &Path, cache: &Path) -> Measured {
    measured(&["growth"], trace, cache)
}

/// Runs `memlens ARGS… TRACE` as [`growth`] runs `growth`.
fn measured(args: &[&str], trace: &Path, cache: &Path) -> Measured {
    let mut cmd = memlens();
    cmd.args(args).arg(trace).env("XDG_CACHE_HOME", cache);
    let what = format!("memlens {} {}", args.join(" "), trace.display());
    run_measured(&mut cmd, GROWTH_TIME_LIMIT, &what)
}

/// Asserts that `done` succeeded and ranked the server's session leak first.
fn assert_session_leak_first(done: &Measured, what: &str) {
    assert_eq!(done.code, 0, "{what} failed:\n{}", done.stderr);
    let first_group = done
        .stdout
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("group:"))
        .map(str::trim);
    assert_eq!(
        first_group,
        Some("remember_session"),
        "{what} does not rank the session leak first:\n{}",
        done.stdout
    );
    assert!(
        done.stdout
            .contains("call path: remember_session ← serve ← work"),
        "{what} lacks the leak's call path:\n{}",
        done.stdout
    );
}

/// The index beside `trace`.
fn index_of(trace: &Path) -> PathBuf {
    let mut name = trace.as_os_str().to_owned();
    name.push(".mlidx");
    PathBuf::from(name)
}

fn modified(path: &Path) -> SystemTime {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or_else(|e| panic!("{} has no modification time: {e}", path.display()))
}

/// The lines of `stderr` that say an index is being rebuilt.
pub(crate) fn rebuild_notes(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("rebuilding"))
        .collect()
}

#[test]
fn growth_at_scale_is_bounded_by_the_live_set_and_reopens_from_its_index() {
    let dir = test_dir("scale-growth");
    let cache = dir.path().join("cache");
    let start = Instant::now();
    let trace = record_server(dir.path(), EVENTS / (8 * THREADS));
    let recorded = start.elapsed();
    let counts = summary(&trace);
    let summarized = start.elapsed() - recorded;
    let events = counts.get("allocations") + counts.get("frees") + counts.get("reallocations");
    assert!(
        events.abs_diff(EVENTS) < EVENTS / 100,
        "the server made {events} events, not about {EVENTS}"
    );
    let trace_len = std::fs::metadata(&trace).expect("the trace exists").len();
    // `summary` kept its answer in the index; the heap model is not there yet.
    let index = index_of(&trace);
    assert!(index.exists(), "summary kept no index");

    let first = growth(&trace, &cache);
    assert_session_leak_first(&first, "the first growth");
    assert!(
        rebuild_notes(&first.stderr).is_empty(),
        "the first growth complains about an index:\n{}",
        first.stderr
    );
    let index_len = std::fs::metadata(&index)
        .unwrap_or_else(|e| panic!("growth wrote no index {}: {e}", index.display()))
        .len();
    assert!(
        !cache.exists(),
        "the index went to the cache, not beside the trace"
    );
    let written = modified(&index);
    eprintln!(
        "{events} events recorded in {:.1} s, summarized in {:.1} s; trace {:.1} MiB, index \
         {:.2} MiB; first growth {:.2} s, peak RSS {:.1} MiB",
        recorded.as_secs_f64(),
        summarized.as_secs_f64(),
        trace_len as f64 / 1048576.0,
        index_len as f64 / 1048576.0,
        first.elapsed.as_secs_f64(),
        first.peak_rss_kib as f64 / 1024.0
    );
    assert!(
        first.peak_rss_kib < PEAK_RSS_LIMIT_KIB,
        "the first growth over {events} events peaked at {} KiB, above the bound of {} KiB",
        first.peak_rss_kib,
        PEAK_RSS_LIMIT_KIB
    );

    let second = growth(&trace, &cache);
    eprintln!(
        "second growth {:.2} s, peak RSS {:.1} MiB",
        second.elapsed.as_secs_f64(),
        second.peak_rss_kib as f64 / 1024.0
    );
    assert_eq!(
        second.code, 0,
        "the second growth failed:\n{}",
        second.stderr
    );
    assert_eq!(
        second.stdout, first.stdout,
        "the second growth answers differently"
    );
    assert!(
        rebuild_notes(&second.stderr).is_empty(),
        "the second growth complains about the index:\n{}",
        second.stderr
    );
    assert_eq!(
        modified(&index),
        written,
        "the second growth rewrote the index instead of reusing it"
    );
    assert!(
        second.elapsed < first.elapsed / 2,
        "the second growth ({:?}) is not much faster than the first ({:?})",
        second.elapsed,
        first.elapsed
    );

    // The viewer's first tree, from the index: the default grouping at every snapshot time.
    let viewer = Viewer::start(&trace, &[]);
    let asked = Instant::now();
    let (status, body) = viewer.get("api/heap/tree?by=site,thread&times=");
    let answered = asked.elapsed();
    assert_eq!(status, 200, "the first tree failed: {body}");
    assert!(
        body.contains("remember_session"),
        "the first tree lacks the leak"
    );
    let hwm = peak_rss_kib(viewer.child.id());
    eprintln!(
        "viewer: first tree in {:.2} s, peak RSS {:.1} MiB",
        answered.as_secs_f64(),
        hwm as f64 / 1024.0
    );
    assert!(
        hwm < PEAK_RSS_LIMIT_KIB,
        "the viewer's first tree over {events} events peaked at {hwm} KiB, above {PEAK_RSS_LIMIT_KIB} KiB"
    );
}

/// The peak resident set (`VmHWM`, KiB) of the running process `pid`.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("a live process");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status")
}

#[test]
fn a_damaged_truncated_or_foreign_index_is_rebuilt_with_one_note() {
    let dir = test_dir("scale-index-damage");
    let cache = dir.path().join("cache");
    // 2 × 50 000 requests: 800 000 events, 100 leaked sessions. (The caches warm up
    // over a sixth of so short a run, enough to outrank the leak: the answer is only
    // compared, not checked.)
    let trace = record_server(dir.path(), 50_000);
    let clean = growth(&trace, &cache);
    assert_eq!(clean.code, 0, "growth failed:\n{}", clean.stderr);
    assert!(
        clean.stdout.contains("remember_session"),
        "growth does not list the session leak:\n{}",
        clean.stdout
    );
    let index = index_of(&trace);
    let good = std::fs::read(&index)
        .unwrap_or_else(|e| panic!("growth wrote no index {}: {e}", index.display()));
    assert!(good.len() > 100, "the index is only {} bytes", good.len());

    let mut flipped = good.clone();
    let middle = good.len() / 2;
    for byte in &mut flipped[middle..middle + 16] {
        *byte ^= 0xa5;
    }
    let cases = [
        ("with 16 bytes flipped in its middle", flipped),
        ("truncated to half", good[..middle].to_vec()),
        (
            "replaced by a text file",
            b"this is a text file, not a memlens index\n".to_vec(),
        ),
    ];
    for (what, bytes) in cases {
        std::fs::write(&index, &bytes).expect("cannot write the index");
        let rebuilt = growth(&trace, &cache);
        assert_eq!(
            rebuilt.code, 0,
            "growth with the index {what} failed:\n{}",
            rebuilt.stderr
        );
        assert_eq!(
            rebuilt.stdout, clean.stdout,
            "growth with the index {what} answers differently"
        );
        let notes = rebuild_notes(&rebuilt.stderr);
        assert_eq!(
            notes.len(),
            1,
            "growth with the index {what} does not say once that it rebuilds it:\n{}",
            rebuilt.stderr
        );
        assert!(
            notes[0].starts_with("memlens: note: the index") && notes[0].contains("is damaged"),
            "growth with the index {what} says: {}",
            notes[0]
        );
        let others: Vec<&str> = rebuilt
            .stderr
            .lines()
            .filter(|l| !l.contains("rebuilding"))
            .collect();
        assert_eq!(
            others,
            clean.stderr.lines().collect::<Vec<_>>(),
            "growth with the index {what} prints more than the note"
        );

        // The rebuilt index is whole again: the next run reuses it silently.
        let rewritten = std::fs::read(&index).expect("the rebuilt index exists");
        assert_ne!(rewritten, bytes, "the index {what} was not rewritten");
        let written = modified(&index);
        let reopened = growth(&trace, &cache);
        assert_eq!(reopened.code, 0, "{}", reopened.stderr);
        assert_eq!(reopened.stdout, clean.stdout);
        assert!(
            rebuild_notes(&reopened.stderr).is_empty(),
            "the index rebuilt after it was {what} is rejected again:\n{}",
            reopened.stderr
        );
        assert_eq!(
            modified(&index),
            written,
            "the index rebuilt after it was {what} was rebuilt again"
        );
    }
    assert!(
        !cache.exists(),
        "an index went to the cache, not beside the trace"
    );
}

/// `memlens summary --json`, as [`growth`] runs `growth`.
fn summary_json(trace: &Path, cache: &Path) -> Measured {
    measured(&["summary", "--json"], trace, cache)
}

#[test]
fn a_pass_to_the_end_keeps_the_summary_in_the_index_for_summary() {
    let dir = test_dir("scale-summary-index");
    let cache = dir.path().join("cache");
    // 2 × 400 000 requests: about 6.4 M events, above the 5 M from which a summary is
    // kept (below, reading the events again is quicker than an index is worth).
    let trace = record_server(dir.path(), 400_000);
    let grown = growth(&trace, &cache);
    assert_eq!(grown.code, 0, "growth failed:\n{}", grown.stderr);
    // Growth read every event anyway, so it kept the summary too.
    let index = index_of(&trace);
    let bytes = std::fs::read(&index).expect("growth wrote no index");
    let part = bytes
        .windows(4)
        .position(|w| w == b"SUMM")
        .expect("growth kept no summary in the index");
    let written = modified(&index);
    let first = summary_json(&trace, &cache);
    assert_eq!(first.code, 0, "summary failed:\n{}", first.stderr);
    assert!(first.stdout.contains("\"allocations\""), "{}", first.stdout);
    assert!(rebuild_notes(&first.stderr).is_empty(), "{}", first.stderr);
    assert_eq!(
        modified(&index),
        written,
        "summary after growth read the events again"
    );
    // The same answer as a summary read from the events.
    std::fs::remove_file(&index).expect("cannot remove the index");
    let read = summary_json(&trace, &cache);
    assert_eq!(read.code, 0, "summary failed:\n{}", read.stderr);
    assert_eq!(
        read.stdout, first.stdout,
        "the summary growth kept differs from the one read from the events"
    );
    std::fs::write(&index, &bytes).expect("cannot write the index");

    // Read again from the index: the same answer, silently, the index untouched.
    let written = modified(&index);
    for what in ["summary", "growth"] {
        let again = match what {
            "summary" => summary_json(&trace, &cache),
            _ => growth(&trace, &cache),
        };
        let before = if what == "summary" { &first } else { &grown };
        assert_eq!(again.code, 0, "{what} again failed:\n{}", again.stderr);
        assert_eq!(
            again.stdout, before.stdout,
            "{what} again answers differently"
        );
        assert!(rebuild_notes(&again.stderr).is_empty(), "{}", again.stderr);
        assert_eq!(modified(&index), written, "{what} again rewrote the index");
    }

    // A damaged summary part: one note, the same answer, and the part rewritten.
    let mut damaged = bytes.clone();
    let payload = part + 44;
    for byte in &mut damaged[payload..(payload + 8).min(bytes.len())] {
        *byte ^= 0x5a;
    }
    std::fs::write(&index, &damaged).expect("cannot write the index");
    let fixed = summary_json(&trace, &cache);
    assert_eq!(fixed.code, 0, "{}", fixed.stderr);
    assert_eq!(fixed.stdout, first.stdout);
    let notes = rebuild_notes(&fixed.stderr);
    assert!(
        notes.len() == 1 && notes[0].contains("is damaged (its summary:"),
        "summary with a damaged part says: {}",
        fixed.stderr
    );
    let rewritten = std::fs::read(&index).expect("the index exists");
    assert_eq!(
        rewritten, bytes,
        "the summary part was not written back as it was"
    );
    assert!(!cache.exists(), "an index went to the cache directory");

    // The viewer's first tree leaves the summary to the allocation map's read in the
    // background, which keeps it.
    std::fs::remove_file(&index).expect("cannot remove the index");
    let viewer = Viewer::start(&trace, &[]);
    let (status, body) = viewer.get("api/heap/tree?by=site,thread&times=");
    assert_eq!(status, 200, "{body}");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (status, body) = viewer.get("api/alloc/meta");
        if status == 200 {
            break;
        }
        assert_eq!(status, 503, "{body}");
        assert!(Instant::now() < deadline, "the allocation map was not read");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(viewer);
    let kept = std::fs::read(&index).expect("the viewer kept no index");
    assert!(
        kept.windows(4).any(|w| w == b"SUMM"),
        "the viewer's reads kept no summary in the index"
    );
    let kept_at = modified(&index);
    let after_view = summary_json(&trace, &cache);
    assert_eq!(after_view.stdout, first.stdout, "{}", after_view.stderr);
    assert!(
        rebuild_notes(&after_view.stderr).is_empty(),
        "{}",
        after_view.stderr
    );
    assert_eq!(
        modified(&index),
        kept_at,
        "summary after view read the events"
    );

    // A small trace's summary is read again every time: no index file beside it.
    let small_dir = test_dir("scale-summary-small");
    let small = record_server(small_dir.path(), 20_000);
    let read = summary_json(&small, &cache);
    assert_eq!(read.code, 0, "{}", read.stderr);
    assert!(
        !index_of(&small).exists() && !cache.exists(),
        "the summary of a small trace left an index"
    );
}
