//! `memlens view` of a trace another `memlens record` is still writing: the viewer
//! follows it (`api/live`), reading it again as it grows, and its final read is the
//! whole run — the same totals `memlens summary` gives once the program has ended.
//! (The browser side, with `record --view`, is `web/e2e/live.test.mjs`.)

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::trace::memlens;
use crate::support::viewer::Viewer;
use crate::support::{FRAME_POINTER_FLAGS, Lang, compile, summary, test_dir};

const GROWING: &str = include_str!("../../../../web/e2e/growing.c");

/// `api/live` as (generation, running, recorded ns).
fn live(viewer: &Viewer) -> (u64, bool, u64) {
    let (status, body) = viewer.get("api/live");
    assert_eq!(status, 200, "api/live: {body}");
    let v: serde_json::Value = serde_json::from_str(&body).expect("api/live is JSON");
    let n = |k: &str| {
        v[k].as_u64()
            .unwrap_or_else(|| panic!("api/live lacks {k}: {body}"))
    };
    (n("generation"), v["running"] == true, n("recorded_ns"))
}

#[test]
fn view_follows_a_trace_still_being_written_to_its_end() {
    let dir = test_dir("view-live");
    let exe = compile(dir.path(), "growing", Lang::C, GROWING, FRAME_POINTER_FLAGS);
    let trace = dir.path().join("growing.mlens");
    let mut recording = memlens()
        .args(["record", "-q", "-o"])
        .arg(&trace)
        .arg("--")
        .arg(&exe)
        .arg("3")
        .stdout(Stdio::null())
        .spawn()
        .expect("memlens record starts");
    // The trace names its process after the first flush (100 ms).
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::metadata(&trace).map_or(0, |m| m.len()) < 4096 {
        assert!(Instant::now() < deadline, "no trace appeared");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let viewer = Viewer::start(&trace, &[]);
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    let end = loop {
        let state = live(&viewer);
        if !state.1 {
            break state;
        }
        seen.push(state);
        assert!(
            Instant::now() < deadline,
            "the viewer never saw the end: {seen:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(recording.wait().expect("the recording ends").success());
    let grew = seen.windows(2).filter(|w| w[1].2 > w[0].2).count();
    assert!(
        grew >= 2,
        "the followed run grew only {grew} times while running: {seen:?}"
    );
    assert!(
        end.0 > seen.first().map_or(0, |s| s.0),
        "the end is a new read"
    );

    // The last read is the whole run.
    let (status, meta) = viewer.get("api/heap/meta");
    assert_eq!(status, 200, "{meta}");
    let meta: serde_json::Value = serde_json::from_str(&meta).expect("heap meta is JSON");
    assert_eq!(meta["run"]["end_ns"].as_u64(), Some(end.2));
    let counts = summary(&trace);
    assert_eq!(
        meta["stats"]["allocations"].as_u64(),
        Some(counts.get("allocations")),
        "the final read holds every allocation"
    );
    let (status, _) = viewer.get("api/alloc/meta");
    assert_eq!(status, 200, "the allocation map follows too");
}

#[test]
fn a_finished_trace_is_not_followed() {
    let dir = test_dir("view-not-live");
    let exe = compile(dir.path(), "growing", Lang::C, GROWING, FRAME_POINTER_FLAGS);
    let trace = dir.path().join("done.mlens");
    let done = memlens()
        .args(["record", "-q", "-o"])
        .arg(&trace)
        .arg("--")
        .arg(&exe)
        .arg("1")
        .stdout(Stdio::null())
        .status()
        .expect("memlens record runs");
    assert!(done.success());
    let viewer = Viewer::start(&trace, &[]);
    let (status, body) = viewer.get("api/live");
    assert_eq!(status, 404, "a finished trace is served as it is: {body}");
    let (status, meta) = viewer.get("api/meta");
    assert_eq!(status, 200);
    assert!(meta.contains("\"live\":false"), "{meta}");
}
