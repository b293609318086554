//! `memlens cache kernel` and `memlens cache simulate` end to end: the default
//! hierarchy (a typical x86-64 core: L1 32K, L2 256K, L3 8M) when no `--level` is
//! given, `--level` replacing it, and the text report's regions, busiest first.

use crate::support::trace::memlens;
use crate::support::{run, test_dir};

fn ok(args: &[&str]) -> String {
    let what = format!("memlens {}", args.join(" "));
    let done = run(memlens().args(args), &what);
    assert_eq!(done.code, 0, "{what} failed:\n{}", done.stderr);
    done.stdout
}

#[test]
fn simulate_defaults_to_a_three_level_hierarchy_and_lists_regions_busiest_first() {
    let dir = test_dir("cache-cli");
    let trace = dir.path().join("mm.mlens");
    let path = trace.to_str().expect("UTF-8 path");
    ok(&["cache", "kernel", "matmul", "--n", "24", "-o", path]);

    let text = ok(&["cache", "simulate", path]);
    let levels: Vec<&str> = (text.lines())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| ["L1", "L2", "L3"].contains(w))
        .collect();
    assert_eq!(levels, ["L1", "L2", "L3"], "{text}");
    assert!(
        text.contains("32K") && text.contains("256K") && text.contains("8M"),
        "{text}"
    );

    // Regions, busiest first: A and B are read n^3 times, C n^2 (+ n^3 writes).
    let regions: Vec<(String, u64)> = (text.lines())
        .skip_while(|l| !l.starts_with("region"))
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((f.next()?.to_owned(), f.next()?.parse().ok()?))
        })
        .collect();
    assert!(regions.len() >= 3, "{text}");
    assert!(
        regions.windows(2).all(|w| w[0].1 >= w[1].1),
        "regions are not busiest first: {regions:?}"
    );

    // `--level` replaces the default hierarchy.
    let json = ok(&["cache", "simulate", path, "--json", "--level", "L1:1K:2:64"]);
    let doc: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let names: Vec<&str> = doc["levels"]
        .as_array()
        .expect("levels")
        .iter()
        .map(|l| l["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["L1"], "{json}");
}
