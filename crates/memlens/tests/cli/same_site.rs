//! One frame policy, one site: `summary`, `tree`, `growth` and the viewer name the same
//! allocation site for the same stacks. The program is C++ with the wrappers that used
//! to split them: its own `xmalloc` (a wrapper the frame policy knows by name),
//! `operator new`, and `std::vector` internals inlined from system headers. Every byte
//! it keeps is allocated on behalf of `leak_records`.

use std::path::Path;

use serde_json::Value;

use crate::support::viewer::Viewer;
use crate::support::{FRAME_POINTER_FLAGS, Lang, compile, memlens, record, summary, test_dir};

const PROGRAM: &str = r#"
#include <cstdio>
#include <cstdlib>
#include <vector>

// The program's own allocation wrapper, named like GNU's.
extern "C" __attribute__((noinline)) void *xmalloc(size_t n) {
    void *p = malloc(n);
    if (!p) abort();
    return p;
}

struct Record {
    char *name;
    std::vector<int> values;
};

static std::vector<Record *> kept;

__attribute__((noinline)) void churn(int n) {
    for (int i = 0; i < n; i++) {
        char *p = static_cast<char *>(xmalloc(32));
        p[0] = static_cast<char>(i);
        std::printf("%s", p[0] == 1 ? "" : "");
        free(p);
    }
}

__attribute__((noinline)) void leak_records(int n) {
    for (int i = 0; i < n; i++) {
        Record *r = new Record;
        r->name = static_cast<char *>(xmalloc(64));
        std::snprintf(r->name, 64, "record %d", i);
        r->values.assign(16, i);
        kept.push_back(r);
    }
}

int main() {
    churn(1000);
    leak_records(2000);
    std::printf("%zu records\n", kept.size());
    return 0;
}
"#;

/// The site every command must name.
const SITE: &str = "leak_records(int)";

/// Runs `memlens ARGS --json` and parses its output.
fn json(args: &[&str]) -> Value {
    let out = memlens().args(args).output().expect("memlens runs");
    assert!(
        out.status.success(),
        "memlens {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "memlens {args:?} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// The key of the largest first-level group of the last tree of a `tree` document.
fn largest_group(doc: &Value) -> String {
    let trees = doc["trees"].as_array().expect("trees");
    let root = &trees.last().expect("one tree at least")["root"];
    root["children"]
        .as_array()
        .expect("children")
        .iter()
        .max_by_key(|c| c["bytes"].as_u64().unwrap_or(0))
        .and_then(|c| c["key"].as_str())
        .expect("a named group")
        .to_owned()
}

/// The heap lens's largest first-level group by `site` in `memlens view`.
fn viewer_site(trace: &Path) -> String {
    let view = Viewer::start(trace, &["--by", "site"]);
    let target = "api/heap/tree?by=site&metric=bytes&sort=end";
    let (code, body) = view.get(target);
    assert_eq!(code, 200, "{target}: {body}");
    let answer: Value =
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{target}: {e}: {body}"));
    largest_group(&answer["doc"])
}

#[test]
fn summary_tree_growth_and_the_viewer_name_the_same_site() {
    let dir = test_dir("same-site");
    let mut flags = FRAME_POINTER_FLAGS.to_vec();
    flags.push("-O2");
    let program = compile(dir.path(), "records", Lang::Cxx, PROGRAM, &flags);
    let trace = dir.path().join("records.mlens");
    let recorded = record(
        dir.path(),
        &["-q", "-o", trace.to_str().unwrap()],
        &[program.to_str().unwrap()],
        &[],
    );
    assert_eq!(recorded.run.code, 0, "{}", recorded.run.stderr);
    let path = trace.to_str().unwrap();

    // summary: the leaked bytes' call path starts at the site, past every wrapper.
    let s = summary(&trace);
    let leaks = s.sites("top_leak_sites");
    let first = leaks[0].stack[0].clone();
    assert!(
        first.starts_with(&format!("{SITE} (")),
        "summary names {first:?}: {leaks:#?}"
    );
    // tree: the largest group by site at the end of the run.
    let tree = json(&["tree", path, "--by", "site", "--at", "100%", "--json"]);
    assert_eq!(largest_group(&tree), SITE, "tree --by site");
    // growth: the first suspect by site, and by the default classifier.
    for by in ["site", "closest-user-frame"] {
        let growth = json(&["growth", path, "--by", by, "--json"]);
        assert_eq!(
            growth["suspects"][0]["key"].as_str(),
            Some(SITE),
            "growth --by {by}: {growth}"
        );
    }
    // The viewer's heap lens.
    assert_eq!(viewer_site(&trace), SITE, "the viewer's tree by site");
}
