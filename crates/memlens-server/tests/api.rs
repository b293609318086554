//! The viewer's HTTP API end to end: a real server on a loopback port with the heap
//! lens over a small generated model and a second lens, spoken to with raw HTTP/1.1 so
//! that every header (and a hostile `Host`) is under the test's control. Covers the
//! router's checks — the token (403), unknown paths (404), methods, sizes and hosts —
//! and the shape of every heap lens document under `api/heap/`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::OnceLock;

use memlens_heap::{AllocKind, FrameInfo, HeapModel, HeapModelBuilder, StackId};
use std::collections::HashMap;
use std::sync::Arc;

use memlens_server::protocol::LensWire;
use memlens_server::{
    ApiBody, ApiError, EngineOptions, HeapLens, LensApi, ReportRequest, RunInfo, ServeError,
    Viewer, ViewerConfig,
};
use serde_json::Value;

/// A leak (`leak`, never freed) and churn (`churn`, freed soon) on two threads.
fn model() -> HeapModel {
    {
        let mut b = HeapModelBuilder::new();
        b.start(0);
        let mut stack = |name: &str| {
            let frame = b.add_frame(FrameInfo {
                function: name,
                file: "prog.c",
                line: 7,
                module: "prog",
                inlined_into: None,
                kind: memlens_vocab::FrameKind::User,
            });
            b.add_stack(StackId::ROOT, frame)
        };
        let (leak, churn) = (stack("leak"), stack("churn"));
        b.name_thread(1, "main");
        b.name_thread(2, "worker");
        for i in 0..1000u64 {
            let t = i * 1_000;
            b.alloc(
                t + 1,
                1 + i % 2,
                0x1000 + i * 64,
                100,
                leak,
                AllocKind::Malloc,
            );
            b.alloc(t + 2, 2, 0x10_0000 + i * 64, 400, churn, AllocKind::Malloc);
            b.free(t + 900, 2, 0x10_0000 + i * 64);
        }
        b.end(1_000_000)
    }
}

/// A second lens that echoes its route and query, and fails on `fail`.
struct EchoLens;

impl LensApi for EchoLens {
    fn descriptor(&self) -> LensWire {
        LensWire {
            id: "echo",
            title: "Echo",
            question: "What did the page ask?",
        }
    }

    fn answer(&self, route: &str, query: &HashMap<String, String>) -> Result<ApiBody, ApiError> {
        if route == "fail" {
            return Err(ApiError::bad_request("echo cannot fail politely"));
        }
        let mut keys: Vec<_> = query.iter().collect();
        keys.sort();
        Ok(ApiBody::json(
            serde_json::json!({ "route": route, "query": keys }).to_string(),
        ))
    }

    fn report_requests(&self) -> Vec<ReportRequest> {
        Vec::new()
    }
}

struct Server {
    address: String,
    token: String,
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let config = ViewerConfig {
            host: "127.0.0.1".parse().unwrap(),
            port: 0,
            allow_remote: false,
        };
        let info = RunInfo {
            program: "./prog --serve".into(),
            pid: Some(42),
            trace_name: "prog.mlens".into(),
            sampling: None,
            mid_run: None,
        };
        let heap = HeapLens::new(
            model(),
            EngineOptions {
                points: 8,
                default_classifiers: "site,thread".into(),
            },
        )
        .expect("valid options");
        let viewer = Viewer::bind(info, config, vec![Arc::new(heap), Arc::new(EchoLens)])
            .expect("binds a loopback port");
        let url = viewer.url().to_owned();
        std::thread::spawn(move || viewer.run_until(std::future::pending()));
        let rest = url.strip_prefix("http://").unwrap();
        let (address, token) = rest.split_once('/').unwrap();
        Server {
            address: address.to_owned(),
            token: token.trim_end_matches('/').to_owned(),
        }
    })
}

struct Answer {
    status: u16,
    head: String,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Sends `METHOD TARGET` with `Host: host` (and any extra header lines).
fn request(method: &str, target: &str, host: &str, extra: &str) -> Answer {
    let s = server();
    let mut stream = TcpStream::connect(&s.address).unwrap();
    write!(
        stream,
        "{method} {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{extra}\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    Answer {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    }
}

fn get(target: &str) -> Answer {
    request("GET", target, &server().address, "")
}

fn api(path_and_query: &str) -> Answer {
    get(&format!("/{}/api/{path_and_query}", server().token))
}

#[test]
fn requests_without_the_token_are_forbidden() {
    let s = server();
    for target in [
        "/".to_owned(),
        "/index.html".to_owned(),
        "/api/meta".to_owned(),
        format!("/{}x/", s.token),
        format!("/{}/", &s.token[..s.token.len() - 1]),
        "/favicon.ico".to_owned(),
    ] {
        assert_eq!(get(&target).status, 403, "{target}");
    }
}

#[test]
fn the_page_is_served_under_the_token_and_nothing_else() {
    let s = server();
    let page = get(&format!("/{}/", s.token));
    assert_eq!(page.status, 200);
    assert!(
        page.header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    assert!(
        page.header("content-security-policy")
            .unwrap()
            .contains("default-src 'none'")
    );
    assert_eq!(page.header("referrer-policy"), Some("no-referrer"));
    assert_eq!(page.header("cache-control"), Some("no-store"));
    let bare = get(&format!("/{}", s.token));
    assert_eq!(bare.status, 308);
    assert_eq!(
        bare.header("location"),
        Some(format!("/{}/", s.token).as_str())
    );
    for unknown in [
        "nope",
        "api/nope",
        "api",
        "../etc/passwd",
        "index.html/x",
        "api/meta/x",
        "api/heap/nope",
    ] {
        assert_eq!(
            get(&format!("/{}/{unknown}", s.token)).status,
            404,
            "{unknown}"
        );
    }
}

#[test]
fn only_get_without_a_body_from_a_loopback_host() {
    let s = server();
    let page = format!("/{}/", s.token);
    let post = request("POST", &page, &s.address, "Content-Length: 0\r\n");
    assert_eq!(post.status, 405);
    assert_eq!(post.header("allow"), Some("GET, HEAD"));
    let body = request("GET", &page, &s.address, "Content-Length: 5\r\n\r\nhello");
    assert_eq!(body.status, 413);
    for host in [
        "evil.example",
        "evil.example:80",
        "10.0.0.1",
        "127.0.0.1.evil.example",
    ] {
        assert_eq!(request("GET", &page, host, "").status, 403, "Host: {host}");
    }
    for host in ["localhost", "127.0.0.1:1", "[::1]:8080"] {
        assert_eq!(request("GET", &page, host, "").status, 200, "Host: {host}");
    }
    let long = format!("/{}/api/heap/tree?by={}", s.token, "a".repeat(20_000));
    assert_eq!(get(&long).status, 414);
}

#[test]
fn a_non_loopback_address_needs_explicit_consent() {
    let config = ViewerConfig {
        host: "0.0.0.0".parse().unwrap(),
        port: 0,
        allow_remote: false,
    };
    let refused = Viewer::bind(RunInfo::default(), config, Vec::new());
    assert!(matches!(refused, Err(ServeError::NonLoopback { .. })));
    let message = refused.err().unwrap().to_string();
    assert!(message.contains("--allow-remote"), "{message}");
}

#[test]
fn meta_names_the_run_classifiers_snapshots_and_lenses() {
    let viewer = api("meta").json();
    assert_eq!(viewer["program"], "./prog --serve");
    assert_eq!(viewer["trace"], "prog.mlens");
    assert_eq!(viewer["lenses"][0]["id"], "heap");
    let meta = api("heap/meta").json();
    assert_eq!(meta["run"]["end_ns"], 1_000_000);
    assert_eq!(
        meta["default_classifiers"],
        serde_json::json!(["site", "thread"])
    );
    let snapshots = meta["snapshots"].as_array().unwrap();
    assert_eq!(snapshots[0]["kind"], "start");
    assert_eq!(snapshots.last().unwrap()["time_ns"], 1_000_000);
    assert!(snapshots.len() >= 9, "start and 8 points");
    let names: Vec<&str> = meta["classifiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"site") && names.contains(&"call-path"));
    assert_eq!(meta["threads"].as_array().unwrap().len(), 2);
}

#[test]
fn tree_answers_the_requested_times_in_stable_order() {
    let answer = api("heap/tree?by=site,thread&times=500000,1000000&metric=bytes&sort=growth");
    assert_eq!(answer.status, 200, "{}", answer.body);
    let tree = answer.json();
    let doc = &tree["doc"];
    assert_eq!(doc["times_ns"], serde_json::json!([500_000, 1_000_000]));
    assert_eq!(doc["classifiers"], serde_json::json!(["site", "thread"]));
    let end = &doc["trees"][1]["root"];
    assert_eq!(end["bytes"], 100 * 1000);
    let first = &end["children"][0];
    assert_eq!(first["key"], "leak");
    assert_eq!(first["sort_position"], 0);
    assert_eq!(
        first["children"].as_array().unwrap().len(),
        2,
        "two threads"
    );
    // Totals cover every time of the series, including the start.
    let totals = tree["totals"].as_array().unwrap();
    assert_eq!(totals[0]["time_ns"], 0);
    assert!(tree.get("drill").is_none());
    // A time between the snapshots is added to the series.
    let between = api("heap/tree?times=123457").json();
    assert_eq!(between["doc"]["times_ns"], serde_json::json!([123_457]));
    let root = &between["doc"]["trees"][0]["root"];
    assert_eq!(
        root["children"][0]["key"], "leak",
        "the order survives a new time"
    );
    assert_eq!(root["children"][0]["objects"], 124);
}

#[test]
fn tree_follows_a_drill_down_path_to_its_closest_ancestor() {
    let exact = api("heap/tree?times=1000000&path=%5B%22leak%22%5D&depth=1").json();
    assert_eq!(exact["drill"]["found"], true);
    let root = &exact["doc"]["trees"][0]["root"];
    assert_eq!(root["key"], "leak");
    assert!(
        root["children"][0]["children"]
            .as_array()
            .is_none_or(|c| c.is_empty())
    );
    let missing = api("heap/tree?times=1000000&path=%5B%22leak%22,%22nobody%22%5D").json();
    assert_eq!(missing["drill"]["found"], false);
    assert_eq!(missing["drill"]["path"], serde_json::json!(["leak"]));
    // Nothing is live at the start: the whole heap it is.
    let empty = api("heap/tree?times=0&path=%5B%22leak%22%5D").json();
    assert_eq!(empty["drill"]["path"], serde_json::json!([]));
}

#[test]
fn bad_arguments_are_400_with_one_sentence() {
    for query in [
        "tree?by=sight",
        "tree?times=2000000",
        "tree?times=abc",
        "tree?metric=size",
        "tree?path=nope",
        "growth?top=0",
        "timeline?points=0",
    ] {
        let answer = api(&format!("heap/{query}"));
        assert_eq!(answer.status, 400, "{query}: {}", answer.body);
        let error = answer.json()["error"].as_str().unwrap().to_owned();
        assert!(
            !error.is_empty() && !error.contains('\n'),
            "{query}: {error}"
        );
    }
}

#[test]
fn growth_ranks_the_leak_and_timeline_has_columns() {
    let growth = api("heap/growth?by=site&top=5").json();
    assert_eq!(growth["by"], "site");
    let suspects = growth["doc"]["suspects"].as_array().unwrap();
    assert_eq!(suspects[0]["key"], "leak");
    assert!(suspects.iter().all(|s| s["key"] != "churn"));
    let timeline = api("heap/timeline?points=50").json();
    assert_eq!(
        timeline["buckets"]["max_bytes"].as_array().unwrap().len(),
        50
    );
    assert_eq!(timeline["peak"]["bytes"], 100 * 1000 + 400);
}

#[test]
fn other_lenses_answer_under_their_id_and_are_listed_in_meta() {
    let meta = api("meta").json();
    let ids: Vec<&str> = meta["lenses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["heap", "echo"]);
    let echo = api("echo/some/route?b=2&a=1");
    assert_eq!(echo.status, 200, "{}", echo.body);
    assert_eq!(
        echo.header("content-type"),
        Some("application/json; charset=utf-8")
    );
    assert_eq!(echo.header("cache-control"), Some("no-store"));
    assert_eq!(
        echo.json(),
        serde_json::json!({ "route": "some/route", "query": [["a", "1"], ["b", "2"]] })
    );
    assert_eq!(api("echo").json()["route"], "");
    let failed = api("echo/fail");
    assert_eq!(failed.status, 400);
    assert_eq!(failed.json()["error"], "echo cannot fail politely");
    assert_eq!(api("nolens/x").status, 404);
    assert_eq!(get("/wrong-token/api/echo/x").status, 403);
}
