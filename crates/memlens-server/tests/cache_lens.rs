//! The cache lens's API through [`LensApi::answer`]: sources, sessions, the binary
//! batches (replayed event by event, they must rebuild exactly the contents the
//! engine reports), occupancy and statistics, hierarchy changes and bad requests.

use std::collections::HashMap;
use std::sync::Arc;

use memlens_cache::kernels::{Kernel, KernelParams};
use memlens_server::cache::columns::unpack;
use memlens_server::{CacheLens, LensApi, ReferenceSource};
use serde_json::Value;

fn query(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn json(lens: &CacheLens, route: &str, pairs: &[(&str, &str)]) -> Value {
    let body = lens.answer(route, &query(pairs)).expect(route);
    assert!(body.content_type.starts_with("application/json"));
    serde_json::from_slice(&body.bytes).unwrap()
}

/// A column of a container as f64 values.
fn column(bytes: &[u8], columns: &serde_json::Map<String, Value>, name: &str) -> Vec<f64> {
    let c = columns[name].as_array().unwrap();
    let (ty, offset, len) = (
        c[0].as_str().unwrap(),
        c[1].as_u64().unwrap() as usize,
        c[2].as_u64().unwrap() as usize,
    );
    (0..len)
        .map(|i| match ty {
            "u8" => f64::from(bytes[offset + i]),
            "i8" => f64::from(bytes[offset + i] as i8),
            "u16" => f64::from(u16::from_le_bytes(
                bytes[offset + 2 * i..][..2].try_into().unwrap(),
            )),
            "u32" => f64::from(u32::from_le_bytes(
                bytes[offset + 4 * i..][..4].try_into().unwrap(),
            )),
            "f64" => f64::from_le_bytes(bytes[offset + 8 * i..][..8].try_into().unwrap()),
            other => panic!("unknown type {other}"),
        })
        .collect()
}

fn trace_lens() -> CacheLens {
    let kernel = Kernel::new(
        "array-init",
        None,
        KernelParams {
            n: 3000,
            ..KernelParams::default()
        },
    )
    .unwrap();
    CacheLens::new(Some(ReferenceSource {
        title: "init.mlens".to_owned(),
        references: Arc::from(kernel.references()),
        info: kernel.info(),
    }))
}

#[test]
fn sources_list_the_trace_first_then_every_kernel() {
    let doc = json(&trace_lens(), "sources", &[]);
    assert_eq!(doc["default"], "trace");
    let ids: Vec<&str> = doc["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids[0], "trace");
    assert!(ids.contains(&"matmul-standard") && ids.contains(&"matmul-blocked"));
    let kernels_only = json(&CacheLens::new(None), "sources", &[]);
    assert_eq!(kernels_only["default"], "matmul-standard");
}

#[test]
fn a_session_describes_hierarchy_regions_labels_and_timeline() {
    let lens = CacheLens::new(None);
    let doc = json(&lens, "session", &[("source", "matmul-standard")]);
    // 16×16: per (i, j) a load of C, 16 × (A, B) loads and a store of C.
    assert_eq!(doc["references"], 16 * 16 * 34);
    assert_eq!(doc["levels"][0]["sets"], 8);
    assert_eq!(doc["levels"][1]["sets"], 16);
    let regions: Vec<&str> = doc["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(regions, ["A", "B", "C"]);
    assert!(doc["labels"][1].as_str().unwrap().contains("C[i][j]"));
    let timeline = &doc["timeline"]["levels"][0];
    let misses: u64 = timeline["misses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(misses, doc["totals"][0]["misses"].as_u64().unwrap());
}

/// Replays a batch's fills, evictions and set orders on a plain model of the sets.
fn replay(levels: &[(usize, usize)], slots: &mut [Vec<(f64, u8)>], bytes: &[u8]) {
    let (header, columns) = unpack(bytes).unwrap();
    let count = header["count"].as_u64().unwrap() as usize;
    let ev_type = column(bytes, &columns, "ev_type");
    let ev_level = column(bytes, &columns, "ev_level");
    let ev_set = column(bytes, &columns, "ev_set");
    let ev_way = column(bytes, &columns, "ev_way");
    let ev_line = column(bytes, &columns, "ev_line");
    let events_end = column(bytes, &columns, "events_end");
    let sets_end = column(bytes, &columns, "sets_end");
    let set_level = column(bytes, &columns, "set_level");
    let set_index = column(bytes, &columns, "set_index");
    let ranks = column(bytes, &columns, "ranks");
    let (mut e, mut s, mut r) = (0usize, 0usize, 0usize);
    for i in 0..count {
        while e < events_end[i] as usize {
            let level = ev_level[e] as usize;
            let slot = ev_set[e] as usize * levels[level].1 + ev_way[e] as usize;
            match ev_type[e] as u8 {
                2 => slots[level][slot].0 = ev_line[e],
                3 if slots[level][slot].0 == ev_line[e] => slots[level][slot] = (f64::NAN, 255),
                _ => {}
            }
            e += 1;
        }
        while s < sets_end[i] as usize {
            let level = set_level[s] as usize;
            let ways = levels[level].1;
            for w in 0..ways {
                let slot = set_index[s] as usize * ways + w;
                slots[level][slot].1 = ranks[r + w] as u8;
                if ranks[r + w] as u8 == 255 {
                    slots[level][slot].0 = f64::NAN;
                }
            }
            r += ways;
            s += 1;
        }
    }
}

fn state_slots(bytes: &[u8], levels: usize) -> Vec<Vec<(f64, u8)>> {
    let (_, columns) = unpack(bytes).unwrap();
    (0..levels)
        .map(|l| {
            let lines = column(bytes, &columns, &format!("l{l}_line"));
            let ranks = column(bytes, &columns, &format!("l{l}_rank"));
            lines
                .into_iter()
                .zip(ranks)
                .map(|(a, r)| (a, r as u8))
                .collect()
        })
        .collect()
}

fn same(a: &[Vec<(f64, u8)>], b: &[Vec<(f64, u8)>]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(p, q)| (p.0 == q.0 || (p.0.is_nan() && q.0.is_nan())) && p.1 == q.1)
        })
}

#[test]
fn replaying_batches_rebuilds_the_engines_contents() {
    let lens = CacheLens::new(None);
    for (source, inclusion) in [
        ("matmul-standard", "non-inclusive"),
        ("matmul-blocked", "inclusive"),
        ("merge-sort", "exclusive"),
    ] {
        let base = [
            ("source", source),
            ("levels", "L1:1K:2:64:lru,L2:4K:4:64:plru"),
            ("inclusion", inclusion),
        ];
        let doc = json(&lens, "session", &base);
        let levels: Vec<(usize, usize)> = doc["levels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                (
                    l["sets"].as_u64().unwrap() as usize,
                    l["ways"].as_u64().unwrap() as usize,
                )
            })
            .collect();
        let mut slots: Vec<Vec<(f64, u8)>> = levels
            .iter()
            .map(|&(sets, ways)| vec![(f64::NAN, 255); sets * ways])
            .collect();
        // Batches of uneven sizes, out of order with a jump back, like a scrubbing page.
        let at0 = lens
            .answer("state", &query(&[base[0], base[1], base[2], ("at", "0")]))
            .unwrap();
        assert!(same(&state_slots(&at0.bytes, levels.len()), &slots));
        let mut at = 0usize;
        for count in [1usize, 7, 300, 5000, 1234] {
            let mut q = query(&base);
            q.insert("start".into(), at.to_string());
            q.insert("count".into(), count.to_string());
            let batch = lens.answer("batch", &q).unwrap();
            assert_eq!(batch.content_type, "application/octet-stream");
            replay(&levels, &mut slots, &batch.bytes);
            at += count;
            let mut q = query(&base);
            q.insert("at".into(), at.to_string());
            let state = lens.answer("state", &q).unwrap();
            assert!(
                same(&state_slots(&state.bytes, levels.len()), &slots),
                "{source} at {at}"
            );
            let occupancy =
                serde_json::from_slice::<Value>(&lens.answer("occupancy", &q).unwrap().bytes)
                    .unwrap();
            for (l, level) in slots.iter().enumerate() {
                let held = level.iter().filter(|s| !s.0.is_nan()).count() as u64;
                assert_eq!(
                    occupancy["levels"][l]["lines"], held,
                    "{source} at {at} level {l}"
                );
            }
        }
    }
}

#[test]
fn blocking_cuts_misses_and_a_bigger_l1_changes_the_statistics() {
    let lens = CacheLens::new(None);
    let end = (16 * 16 * 34).to_string();
    let misses = |source: &str, levels: &str| {
        let doc = json(
            &lens,
            "stats",
            &[("source", source), ("levels", levels), ("at", &end)],
        );
        doc["levels"][0]["misses"].as_u64().unwrap()
    };
    let small = "L1:512:2:64:lru,L2:4K:4:64:lru";
    let standard = misses("matmul-standard", small);
    let blocked = misses("matmul-blocked", small);
    assert!(
        blocked < standard,
        "blocked {blocked} vs standard {standard}"
    );
    let bigger = misses("matmul-standard", "L1:2K:2:64:lru,L2:4K:4:64:lru");
    assert!(bigger < standard, "a 2 KiB L1 {bigger} vs 512 B {standard}");
    let stats = json(
        &lens,
        "stats",
        &[("source", "matmul-standard"), ("at", "100")],
    );
    assert_eq!(stats["at"], 100);
    assert_eq!(stats["references"], 100);
    let regions: Vec<&str> = stats["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(regions, ["A", "B", "C"]);
    assert_eq!(stats["temperature"].as_array().unwrap().len(), 2);
}

#[test]
fn the_trace_source_and_kernel_sizes_are_served() {
    let lens = trace_lens();
    let doc = json(&lens, "session", &[]);
    assert_eq!(doc["source"], "trace");
    assert_eq!(doc["title"], "init.mlens");
    assert_eq!(doc["levels"][0]["size"], 32 * 1024);
    let doc = json(
        &lens,
        "session",
        &[("source", "matmul-blocked"), ("n", "8")],
    );
    let params = KernelParams {
        n: 8,
        block: 4,
        ..KernelParams::default()
    };
    let expected = Kernel::new("matmul", Some("blocked"), params)
        .unwrap()
        .references()
        .len();
    assert_eq!(doc["references"], expected);
}

#[test]
fn bad_requests_say_what_is_wrong() {
    let lens = CacheLens::new(None);
    let err = |route: &str, pairs: &[(&str, &str)]| lens.answer(route, &query(pairs)).unwrap_err();
    assert_eq!(err("nothing", &[]).status, 404);
    let e = err("session", &[("levels", "L1:1000:3:64")]);
    assert_eq!(e.status, 400);
    assert!(e.message.contains("L1"), "{}", e.message);
    assert!(
        err("session", &[("source", "quicksort")])
            .message
            .contains("unknown source")
    );
    assert!(
        err("session", &[("source", "trace")])
            .message
            .contains("no trace")
    );
    assert!(
        err("session", &[("source", "matmul-standard"), ("n", "100000")])
            .message
            .contains("out of range")
    );
    assert!(
        err("batch", &[("start", "0"), ("count", "100000000")])
            .message
            .contains("too large")
    );
    assert!(
        err("batch", &[("start", "0")])
            .message
            .contains("`count` is missing")
    );
    assert!(err("state", &[("at", "x")]).message.contains("`at=x`"));
    // Past the end is clamped, not an error.
    let doc = json(&lens, "occupancy", &[("at", "99999999")]);
    assert_eq!(doc["at"], 16 * 16 * 34);
}

#[test]
fn the_default_source_and_hierarchy_can_be_chosen() {
    let config = memlens_cache::HierarchyConfig::new(vec![memlens_cache::LevelConfig::new(
        "D1", 2048, 4, 32,
    )]);
    let lens = CacheLens::new(None)
        .with_default_source("matmul-blocked", Some(8))
        .unwrap()
        .with_default_hierarchy(config)
        .unwrap();
    let doc = json(&lens, "session", &[]);
    assert_eq!(doc["source"], "matmul-blocked");
    assert_eq!(doc["n"], 8);
    assert_eq!(doc["levels"][0]["name"], "D1");
    assert!(
        CacheLens::new(None)
            .with_default_source("trace", None)
            .is_err()
    );
    assert_eq!(
        CacheLens::kernel_id("matmul", Some("blocked")).unwrap(),
        "matmul-blocked"
    );
    assert!(CacheLens::kernel_id("matmul", Some("strassen")).is_err());
    assert!(CacheLens::kernel_id("bubble-sort", Some("x")).is_err());
}
