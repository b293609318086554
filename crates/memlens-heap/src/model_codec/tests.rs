//! Tests of the model codec: exact and coalesced models (with types, heap walks and
//! every kind of frame) round-trip byte for byte, rows cost a few bytes, and damaged
//! or foreign bytes are refused with a sentence or decode to a usable model.

use super::*;
use crate::{AllocKind, ClassifierOptions, FrameInfo, GrowthQuery, HeapModelBuilder};
use crate::{Resolution, SnapshotTimes, TreeOptions, TreeQuery};
use crate::{growth_suspects, memory_trees, parse_classifiers};

/// Frames of every kind (one inlined), stacks, named threads, types, marks, heap walks,
/// reallocs, frees and odd input, given to an exact or a coalescing builder.
fn build(mut b: HeapModelBuilder, allocations: u64) -> HeapModel {
    b.start(100);
    b.name_thread(7, "main");
    b.name_thread(9, "wörker");
    let names = ["parse", "sqlite", "malloc", "push", "_dl_init", "hook"];
    let mut frames = vec![];
    for (i, (function, kind)) in names.into_iter().zip(FrameKind::ALL).enumerate() {
        let mut info = FrameInfo::default();
        (info.function, info.file, info.line) = (function, "src/app.rs", 10 * i as u32);
        (info.module, info.inlined_into, info.kind) = ("app", Some(FrameId(1)), kind);
        info.inlined_into = info.inlined_into.filter(|_| i == 3);
        frames.push(b.add_frame(info));
    }
    let mut stacks = vec![StackId::ROOT];
    for (parent, frame) in [(0, 0), (1, 3), (1, 1), (3, 2), (0, 4), (4, 5)] {
        stacks.push(b.add_stack(stacks[parent], frames[frame]));
    }
    let types = [TypeId::UNKNOWN, b.add_type("Node"), b.add_type("Edge")];
    b.mark(150, "warm-up done");
    b.free(160, 7, 0xdead);
    let mut live = Vec::new();
    let every = (allocations / 4).max(1);
    for i in 0..allocations {
        let (t, tid, addr) = (200 + i * 37, 7 + i % 2 * 2, 0x1000 + i * 0x40);
        let kind = [AllocKind::New, AllocKind::Malloc][usize::from(i % 5 != 0)];
        let a = b.alloc(t, tid, addr, 16 << (i % 4), stacks[i as usize % 7], kind);
        b.set_type(a, types[i as usize % 3]);
        live.push(addr);
        if i % 6 == 5 {
            let old = live.swap_remove(i as usize * 31 % live.len());
            b.realloc(t + 5, tid, old, old + 0x100_0000, 100 + i, stacks[2]);
            live.push(old + 0x100_0000);
        }
        if i % 3 == 2 {
            let addr = live.swap_remove(i as usize * 17 % live.len());
            b.free(t + 11, tid, addr);
        }
        // Four marks (a coalesced model is exact at each, so rows meet between them).
        if i % every == every / 2 {
            b.mark(t + 20, &format!("mark {i}"));
            b.heap_walk(t + 21, &live.iter().map(|&a| (a, a % 5)).collect());
        }
    }
    b.end(1200 + allocations * 37)
}

/// A coalesced model with a grid line every `step` ns.
fn coalesced(allocations: u64, step: usize) -> HeapModel {
    let grid = (100..200 + allocations * 37).step_by(step);
    build(HeapModelBuilder::coalescing(grid.collect()), allocations)
}

fn assert_round_trip(model: &HeapModel) {
    let bytes = model.encode();
    let decoded = HeapModel::decode(&bytes).unwrap();
    assert_eq!(format!("{decoded:?}"), format!("{model:?}"));
    assert_eq!(decoded.encode(), bytes, "re-encoding gives the same bytes");
    // The string and thread indexes were rebuilt.
    let mut cx = decoded.context.clone();
    for i in 0..cx.strings.len() as u32 {
        let text = cx.strings.get(StringId(i)).to_owned();
        assert_eq!(cx.strings.intern(&text), StringId(i));
    }
    for (i, &tid) in decoded.context.threads.tid.iter().enumerate() {
        assert_eq!(cx.threads.index_of(tid).index(), i);
    }
}

#[test]
fn exact_and_coalesced_models_round_trip() {
    let exact = build(HeapModelBuilder::new(), 300);
    assert!(exact.resizes.alloc.len() > 10 && exact.has_types() && exact.marks.len() > 3);
    assert!(!exact.diagnostics.is_clean() && exact.free_order.len() > 50);
    let coalesced = coalesced(3000, 20_000);
    assert!(coalesced.exact_instants().is_some() && coalesced.has_types());
    assert!(exact.containers.len() == exact.len() && !coalesced.containers.is_empty());
    assert!(coalesced.objects.iter().any(|&n| n > 1) && !coalesced.free_order.is_empty());
    let empty = HeapModelBuilder::new().end(0);
    for model in [exact, coalesced, build(HeapModelBuilder::new(), 0), empty] {
        assert_round_trip(&model);
    }
}

#[test]
fn a_coalesced_model_takes_a_few_bytes_per_row() {
    let model = coalesced(60_000, 40_000);
    let (rows, bytes) = (model.len(), model.encode());
    let per_row = bytes.len() as f64 / rows as f64;
    println!("{rows} rows: {} bytes, {per_row:.2} per row", bytes.len());
    assert!(rows > 5_000 && per_row < 12.0, "{per_row} bytes per row");
    assert_eq!(HeapModel::decode(&bytes).unwrap().len(), rows);
}

#[test]
fn other_versions_and_damage_are_refused_with_a_sentence() {
    let error = |bytes: &[u8]| HeapModel::decode(bytes).unwrap_err().to_string();
    let mut bytes = coalesced(20, 100).encode();
    assert!(error(&bytes[..bytes.len() - 1]).ends_with("inside the resize table"));
    bytes.push(0);
    let end = bytes.len() - 1;
    assert!(error(&bytes).ends_with(&format!("at offset {end}, but 1 more bytes follow")));
    bytes[4..8].copy_from_slice(&(MODEL_CODEC_VERSION + 1).to_le_bytes());
    let expected = format!(
        "the heap model at offset 4 has codec version {}, but this memlens reads only version {MODEL_CODEC_VERSION}; rebuild it from the trace",
        MODEL_CODEC_VERSION + 1
    );
    assert_eq!(error(&bytes), expected);
    let found = HeapModel::decode(&bytes).unwrap_err().found_version();
    assert_eq!(found, Some(MODEL_CODEC_VERSION + 1));
    assert!(error(b"PK\x03\x04").starts_with("the bytes at offset 0 are not a memlens"));
    assert_eq!(
        error(b"MLH"),
        "model bytes end at offset 3 inside the header"
    );
}

/// Uses a decoded model the way the engine does; must not panic.
fn exercise(m: &HeapModel) {
    let _ = m.timeline(Resolution::Points(16), None);
    for a in (0..m.len() as u32).map(AllocId) {
        let _ = (m.final_size(a), m.type_of(a), m.exact_at_or_before(0));
    }
    let all = "site,thread,type,call-path,module,size-class,age,lifetime,site-line";
    let all = &format!("{all},data-structure");
    for spec in [all, "closest-user-frame"] {
        let classifiers = parse_classifiers(spec, ClassifierOptions::default()).unwrap();
        for times in [SnapshotTimes::Points(3), SnapshotTimes::Marks] {
            let (classifiers, options) = (classifiers.clone(), TreeOptions::default());
            let query = TreeQuery {
                classifiers,
                times,
                window: None,
                options,
            };
            let _ = memory_trees(m, &query);
        }
        let growth = GrowthQuery {
            samples: 4,
            ..GrowthQuery::new(classifiers)
        };
        let _ = growth_suspects(m, &growth);
    }
}

#[test]
fn damaged_bytes_are_refused_or_decode_to_a_usable_model() {
    for model in [build(HeapModelBuilder::new(), 12), coalesced(12, 150)] {
        let bytes = model.encode();
        for len in 0..bytes.len() {
            assert!(HeapModel::decode(&bytes[..len]).is_err(), "cut at {len}");
        }
        let mut damaged = bytes.clone();
        for at in 0..bytes.len() {
            for mask in [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff] {
                damaged[at] = bytes[at] ^ mask;
                if let Ok(m) = HeapModel::decode(&damaged) {
                    exercise(&m);
                }
            }
            damaged[at] = bytes[at];
        }
    }
}
