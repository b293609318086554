//! `memlens report` writes one self-contained HTML file: the viewer page with its data
//! embedded (the answers of every lens; for the heap lens the trees of `site,thread` at
//! the snapshot times for every metric and sort, the timeline and the suspects), no
//! external resource, and a clear error for a file that is not a trace. The browser
//! side is checked by `web/e2e`.
//!
//! Needs the recorder library next to `memlens` (`cargo build --release -p
//! memlens-preload` first).

use serde_json::Value;

use crate::support::{FRAME_POINTER_FLAGS, Lang, compile, memlens, record, test_dir};

#[test]
fn report_embeds_the_data_and_loads_nothing_from_outside() {
    let dir = test_dir("viewer-report");
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../web/e2e/leaky.c"
    ))
    .unwrap();
    let program = compile(dir.path(), "leaky", Lang::C, &source, FRAME_POINTER_FLAGS);
    let trace = dir.path().join("leaky.mlens");
    let recorded = record(
        dir.path(),
        &["-o", trace.to_str().unwrap()],
        &[program.to_str().unwrap()],
        &[],
    );
    assert_eq!(recorded.run.code, 0, "{}", recorded.run.stderr);
    let out = dir.path().join("report.html");
    let done = memlens()
        .arg("report")
        .arg(&trace)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("wrote"), "{stderr}");
    let html = std::fs::read_to_string(&out).unwrap();
    let open = r#"<script id="memlens-data" type="application/json">"#;
    let start = html.find(open).expect("the data element") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: Value = serde_json::from_str(&html[start..end]).expect("the data is JSON");
    assert_eq!(data["meta"]["version"], 2);
    let answers = data["answers"].as_object().unwrap();
    let heap_meta = &answers["heap/meta"]["json"];
    assert_eq!(heap_meta["default_classifiers"][0], "site");
    let trees: Vec<&Value> = answers
        .iter()
        .filter(|(key, _)| key.starts_with("heap/tree?"))
        .map(|(_, answer)| &answer["json"])
        .collect();
    assert_eq!(trees.len(), 6, "bytes and objects × growth, start and end");
    let doc = &answers["heap/tree?by=site%2Cthread&metric=bytes&sort=growth&times="]["json"]["doc"];
    assert_eq!(
        doc["trees"].as_array().unwrap().len(),
        heap_meta["snapshots"].as_array().unwrap().len(),
        "a tree at every snapshot time"
    );
    let last = doc["trees"].as_array().unwrap().last().unwrap();
    let sites: Vec<&str> = last["root"]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        sites[0], "remember_request",
        "the leak grows most: {sites:?}"
    );
    assert_eq!(
        answers["heap/growth?by=site%2Cthread&top=20"]["json"]["doc"]["suspects"][0]["full_key"][0],
        "remember_request"
    );
    for external in ["src=\"http", "href=\"http", "src=\"/", "@import"] {
        assert!(!html.contains(external), "the page loads {external}…");
    }

    let foreign = dir.path().join("not-a-trace.mlens");
    std::fs::write(&foreign, "hello").unwrap();
    let refused = memlens()
        .arg("report")
        .arg(&foreign)
        .arg("-o")
        .arg(dir.path().join("x.html"))
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("not-a-trace.mlens"), "{message}");
    assert_eq!(message.trim().lines().count(), 1, "one sentence: {message}");
}
