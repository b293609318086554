//! `memlens view` lets no one in (DESIGN §9): a real recorded trace served by the real
//! binary, then requests without the token (403), with it to unknown paths (404), with a
//! foreign `Host` (403), and a non-loopback `--host` refused unless `--allow-remote`.
//! Also what it serves before its allocation map is read: the tab at once, then 503 with
//! a sentence until the map answers.
//!
//! Like the other recorder tests, this needs the recorder library next to `memlens`
//! (`cargo build --release -p memlens-preload` first).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::viewer::{Viewer, request};
use crate::support::{FRAME_POINTER_FLAGS, Lang, compile, memlens, record, test_dir};

/// Records the viewer's end-to-end test program into `dir`.
fn recorded_trace(dir: &Path) -> PathBuf {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../web/e2e/leaky.c"
    ))
    .expect("web/e2e/leaky.c is readable");
    let program = compile(dir, "leaky", Lang::C, &source, FRAME_POINTER_FLAGS);
    let trace = dir.join("leaky.mlens");
    let recorded = record(
        dir,
        &["-o", trace.to_str().unwrap()],
        &[program.to_str().unwrap()],
        &[],
    );
    assert_eq!(recorded.run.code, 0, "{}", recorded.run.stderr);
    trace
}

/// The status of `GET target` sent to `address` with `Host: host`.
fn status(address: &str, target: &str, host: &str) -> u16 {
    request(address, target, host).0
}

#[test]
fn view_requires_the_token_and_serves_nothing_else() {
    let dir = test_dir("viewer-security");
    let trace = recorded_trace(dir.path());
    let view = Viewer::start(&trace, &[]);
    assert!(
        view.url.starts_with("http://127.0.0.1:"),
        "loopback by default: {}",
        view.url
    );
    let (address, token) = view.parts();
    assert!(token.len() >= 32, "an unguessable token: {token}");
    let ok = |target: &str| status(&address, target, &address);
    assert_eq!(ok(&format!("/{token}/")), 200);
    assert_eq!(ok(&format!("/{token}/api/meta")), 200);
    assert_eq!(ok(&format!("/{token}/api/heap/tree?by=site,thread")), 200);
    for without_token in ["/", "/api/meta", "/index.html", "/x/api/tree"] {
        assert_eq!(ok(without_token), 403, "{without_token}");
    }
    assert_eq!(ok(&format!("/{}/", "a".repeat(token.len()))), 403);
    for unknown in [
        "nope",
        "api/unknown",
        "assets/x.js",
        "..%2F..%2Fetc%2Fpasswd",
    ] {
        assert_eq!(ok(&format!("/{token}/{unknown}")), 404, "{unknown}");
    }
    assert_eq!(
        status(&address, &format!("/{token}/"), "attacker.example"),
        403,
        "DNS rebinding: a foreign Host is refused"
    );
    drop(view);
}

#[test]
fn non_loopback_host_needs_allow_remote() {
    let dir = test_dir("viewer-remote");
    let trace = recorded_trace(dir.path());
    let refused = memlens()
        .arg("view")
        .arg(&trace)
        .args(["--no-open", "--port", "0", "--host", "0.0.0.0"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--allow-remote") && stderr.contains("0.0.0.0"),
        "{stderr}"
    );
    assert!(refused.stdout.is_empty(), "no URL is printed");

    let mut view = Viewer::start(&trace, &["--host", "0.0.0.0", "--allow-remote"]);
    let (address, token) = view.parts();
    assert_eq!(status(&address, &format!("/{token}/"), &address), 200);
    let _ = view.child.kill();
    let _ = view.child.wait();
    let mut stderr = String::new();
    view.child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(
        stderr.contains("warning") && stderr.contains("other machines"),
        "{stderr}"
    );
}

#[test]
fn the_allocation_map_is_read_in_the_background_and_answers_once_read() {
    let dir = test_dir("viewer-background");
    let trace = recorded_trace(dir.path());
    let view = Viewer::start(&trace, &[]);
    let (address, token) = view.parts();
    let (code, meta) = request(&address, &format!("/{token}/api/meta"), &address);
    assert_eq!(code, 200);
    assert!(
        meta.contains("\"alloc\""),
        "the allocation map's tab is listed at once: {meta}"
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let body = loop {
        let (code, body) = request(&address, &format!("/{token}/api/alloc/meta"), &address);
        if code == 200 {
            break body;
        }
        assert_eq!(code, 503, "only 503 while it is read: {body}");
        assert!(
            body.contains("still being read"),
            "a 503 says what is going on: {body}"
        );
        assert!(
            Instant::now() < deadline,
            "the allocation map was not read in time"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        body.contains("\"bins\""),
        "the allocation map's meta: {body}"
    );
    let (code, _) = request(
        &address,
        &format!("/{token}/api/heap/tree?by=site"),
        &address,
    );
    assert_eq!(code, 200);
}
