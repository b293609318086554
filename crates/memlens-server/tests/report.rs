//! The report holds every lens: `report_document` (what `report_html` embeds) over the
//! heap and allocation-map lenses of a small model and over the cache lens of a
//! reference source, checked key by key — the keys the page looks its answers up by,
//! JSON answers as they are, images and binary columns in base64 — and the page itself
//! when this build has the web app.

use std::sync::Arc;

use memlens_alloc::{AllocEvent, AllocModel, AllocModelBuilder, FreeEvent, ProcessInfo};
use memlens_cache::kernels::{Kernel, KernelParams};
use memlens_heap::{AllocKind, FrameInfo, HeapModel, HeapModelBuilder, StackId};
use memlens_server::alloc::report::{REPORT_POOL, TILE_LEVELS};
use memlens_server::assets::WEB_APP_BUILT;
use memlens_server::cache::report::REPORT_BATCH;
use memlens_server::protocol::to_json;
use memlens_server::{
    AllocLens, CacheLens, EngineOptions, HeapLens, LensApi, ReferenceSource, RunInfo,
    report_document, report_html,
};
use serde_json::{Map, Value};

const BASE: u64 = 0x5555_0000_1000;

/// The same small program seen by both engines: `leak` keeps a 100-byte block per
/// step, `churn` frees its 400 bytes at once, on two threads.
fn heap_model() -> HeapModel {
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
    for i in 0..50u64 {
        let t = i * 1_000;
        b.alloc(t + 1, 1, BASE + i * 128, 100, leak, AllocKind::Malloc);
        b.alloc(t + 2, 2, BASE + 0x10_0000, 400, churn, AllocKind::Malloc);
        b.free(t + 900, 2, BASE + 0x10_0000);
    }
    b.end(60_000)
}

fn alloc_model() -> AllocModel {
    let mut b = AllocModelBuilder::new();
    let p = b.add_process(ProcessInfo {
        pid: 7,
        ppid: 1,
        name: "prog".to_owned(),
    });
    let main = b.thread(p, 7, "main");
    let worker = b.thread(p, 8, "worker");
    let leak = b.site(&memlens_vocab::Site::at("leak", "prog.c", 7));
    let churn = b.site(&memlens_vocab::Site::at("churn", "prog.c", 9));
    for i in 0..50u64 {
        let t = i * 1_000;
        b.alloc(AllocEvent {
            t: t + 1,
            thread: main,
            addr: BASE + i * 128,
            size: 100,
            site: leak,
            latency_ns: None,
        });
        b.alloc(AllocEvent {
            t: t + 2,
            thread: worker,
            addr: BASE + 0x10_0000,
            size: 400,
            site: churn,
            latency_ns: None,
        });
        b.free(FreeEvent {
            t: t + 900,
            thread: worker,
            addr: BASE + 0x10_0000,
            site: memlens_alloc::SiteId::UNKNOWN,
            latency_ns: None,
        });
    }
    b.finish(60_000)
}

fn info() -> RunInfo {
    RunInfo {
        program: "./prog".into(),
        pid: Some(7),
        trace_name: "prog.mlens".into(),
        sampling: None,
        mid_run: None,
    }
}

/// The report data of `lenses`, as the page reads it.
fn document(lenses: &[Arc<dyn LensApi>]) -> Value {
    let info = info();
    serde_json::from_str(&to_json(&report_document(&info, lenses))).unwrap()
}

fn answers(doc: &Value) -> &Map<String, Value> {
    doc["answers"].as_object().unwrap()
}

/// The bytes of a base64 answer of `kind`.
fn bytes(answer: &Value, kind: &str) -> Vec<u8> {
    assert_eq!(answer["type"], kind, "{answer}");
    let text = answer["base64"].as_str().unwrap();
    data_encoding::BASE64.decode(text.as_bytes()).unwrap()
}

#[test]
fn a_report_of_an_allocation_trace_holds_the_heap_and_allocation_map_answers() {
    let heap = HeapLens::new(
        heap_model(),
        EngineOptions {
            points: 4,
            default_classifiers: "site, thread".into(),
        },
    )
    .unwrap();
    let lenses: Vec<Arc<dyn LensApi>> =
        vec![Arc::new(heap), Arc::new(AllocLens::new(alloc_model()))];
    let doc = document(&lenses);
    let meta = &doc["meta"];
    assert_eq!(meta["program"], "./prog");
    let ids: Vec<&str> = meta["lenses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["heap", "alloc"], "tab order as given");
    assert_eq!(
        meta["notes"],
        serde_json::json!([]),
        "every answer embedded"
    );
    let answers = answers(&doc);

    // Heap: its meta, the timeline, the suspects and six tree series of the default
    // grouping, keyed as the page spells its requests.
    let heap_meta = &answers["heap/meta"]["json"];
    assert_eq!(
        heap_meta["default_classifiers"],
        serde_json::json!(["site", "thread"])
    );
    let snapshots = heap_meta["snapshots"].as_array().unwrap().len();
    assert!(answers.contains_key("heap/timeline?points=600"));
    let growth = &answers["heap/growth?by=site%2Cthread&top=20"]["json"];
    assert_eq!(growth["doc"]["suspects"][0]["full_key"][0], "leak");
    let trees: Vec<&String> = answers
        .keys()
        .filter(|k| k.starts_with("heap/tree?"))
        .collect();
    assert_eq!(
        trees.len(),
        6,
        "bytes and objects × growth, start and end: {trees:?}"
    );
    let tree = &answers["heap/tree?by=site%2Cthread&metric=objects&sort=end&times="]["json"];
    assert_eq!(
        tree["doc"]["trees"].as_array().unwrap().len(),
        snapshots,
        "every snapshot time"
    );
    assert_eq!(tree["doc"]["metric"], "objects");

    // Allocation map: meta, the tile pyramid, the context strip, bars, metrics and the
    // grid of bins, for the real run and the suggested pool replay.
    assert_eq!(answers["alloc/meta"]["json"]["blocks"], 100);
    let tile_keys: Vec<&String> = answers
        .keys()
        .filter(|k| k.starts_with("alloc/tile?") && k.contains("zx=") && !k.contains("pool="))
        .collect();
    let pyramid: usize = TILE_LEVELS.iter().map(|(zx, zy)| 1 << (zx + zy)).sum();
    assert_eq!(tile_keys.len(), pyramid);
    let tile =
        &answers["alloc/tile?alpha=0.5&color=thread&cushion=plateau&size=256&x=1&y=0&zx=2&zy=1"];
    let png = bytes(tile, "image/png");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    for key in [
        "alloc/tile?alpha=0.5&color=thread&cushion=plateau&h=420&w=84",
        "alloc/bar?alpha=0.5&h=26&profile=plateau&style=antialiased&t0=1&t1=60000&w=768",
        "alloc/metrics?samples=256&t0=1&t1=60000",
    ] {
        assert!(
            answers.contains_key(key),
            "{key} missing: {:?}",
            answers.keys().collect::<Vec<_>>()
        );
    }
    assert!(answers.keys().any(|k| k.starts_with("alloc/bars?")));
    assert!(
        answers
            .keys()
            .any(|k| k.starts_with("alloc/bar?") && k.contains("bin="))
    );
    let pool = form_pool();
    let replay = &answers[&format!("alloc/meta?overflow=first-fit&pool={pool}")]["json"];
    assert_eq!(replay["pool"], REPORT_POOL);
    assert!(
        !answers.keys().any(|k| k.starts_with("alloc/block")),
        "no brushing"
    );

    if WEB_APP_BUILT {
        let html = report_html(&info(), &lenses).unwrap();
        assert!(html.contains(r#""heap/meta":{"type":"application/json; charset=utf-8","json":"#));
        assert!(!html.contains("</script><script"));
    }
}

/// [`REPORT_POOL`] as a query value.
fn form_pool() -> String {
    REPORT_POOL.replace(':', "%3A").replace(',', "%2C")
}

#[test]
fn a_report_of_a_reference_source_holds_the_cache_answers() {
    let kernel = Kernel::new(
        "array-init",
        None,
        KernelParams {
            n: 20_000,
            ..KernelParams::default()
        },
    )
    .unwrap();
    let references = kernel.references();
    let total = references.len();
    assert!(total > REPORT_BATCH, "more than one batch: {total}");
    let lens = CacheLens::new(Some(ReferenceSource {
        title: "init.mlens".to_owned(),
        references: Arc::from(references),
        info: kernel.info(),
    }));
    let doc = document(&[Arc::new(lens) as Arc<dyn LensApi>]);
    let answers = answers(&doc);
    assert_eq!(answers["cache/sources"]["json"]["default"], "trace");
    let session = &answers["cache/session?source=trace"]["json"];
    assert_eq!(session["references"], total);
    // The page names the session by its hierarchy from then on.
    let levels: Vec<String> = session["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            format!(
                "{}:{}:{}:{}:{}",
                l["name"].as_str().unwrap(),
                l["size"],
                l["ways"],
                l["line_size"],
                l["policy"].as_str().unwrap()
            )
        })
        .collect();
    let named = format!(
        "inclusion={}&levels={}&source=trace",
        session["inclusion"].as_str().unwrap(),
        levels.join(",").replace(':', "%3A").replace(',', "%2C")
    );
    assert!(answers.contains_key(&format!("cache/session?{named}")));
    let first = &answers[&format!("cache/batch?count={REPORT_BATCH}&{named}&start=0")];
    assert_eq!(first["type"], "application/octet-stream");
    assert!(!bytes(first, "application/octet-stream").is_empty());
    // Batches cover every reference of this short source, states sit at their starts.
    let mut covered = 0;
    for (key, _) in answers
        .iter()
        .filter(|(k, _)| k.starts_with("cache/batch?"))
    {
        let count: usize = key
            .split("count=")
            .nth(1)
            .unwrap()
            .split('&')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        covered += count;
        let start = key.split("start=").nth(1).unwrap();
        assert!(
            answers.contains_key(&format!("cache/state?at={start}&{named}")),
            "{key}"
        );
    }
    assert_eq!(covered, total);
    assert!(answers.contains_key(&format!("cache/stats?at=0&{named}")));
    assert!(answers.contains_key(&format!("cache/stats?at={total}&{named}")));
}
