//! The one-pass memory trees (difference arrays, segments for `realloc` and `age`) must
//! equal a naive recomputation that classifies every live block at every snapshot time.
//! Random traces come from proptest; the naive side uses only the public classifier API.

use std::collections::BTreeMap;

use memlens_heap::*;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Alloc {
        dt: u64,
        slot: u64,
        size: u64,
        stack: usize,
        tid: u64,
    },
    Free {
        dt: u64,
        slot: u64,
    },
    Realloc {
        dt: u64,
        slot: u64,
        new_slot: u64,
        size: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..3_000_000u64, 0..12u64, 0..300u64, 0..6usize, 1..4u64)
            .prop_map(|(dt, slot, size, stack, tid)| Op::Alloc { dt, slot, size, stack, tid }),
        3 => (0..3_000_000u64, 0..12u64).prop_map(|(dt, slot)| Op::Free { dt, slot }),
        2 => (0..3_000_000u64, 0..12u64, 0..12u64, 0..300u64)
            .prop_map(|(dt, slot, new_slot, size)| Op::Realloc { dt, slot, new_slot, size }),
    ]
}

/// Builds a model with six stacks over a small call graph and three threads.
fn build(ops: &[Op]) -> HeapModel {
    let mut b = HeapModelBuilder::new();
    b.start(0);
    b.name_thread(1, "main");
    let frame = |b: &mut HeapModelBuilder, name: &str, module: &str| {
        b.add_frame(FrameInfo {
            function: name,
            module,
            file: "x.c",
            line: 1,
            ..Default::default()
        })
    };
    let main = frame(&mut b, "main", "/bin/app");
    let load = frame(&mut b, "load", "/bin/app");
    let new = frame(&mut b, "operator new", "/lib/libstdc++.so.6");
    let parse = frame(&mut b, "parse", "/bin/app");
    let s_main = b.add_stack(StackId::ROOT, main);
    let s_load = b.add_stack(s_main, load);
    let stacks = [
        StackId::ROOT,
        s_main,
        s_load,
        b.add_stack(s_load, new),
        b.add_stack(s_main, parse),
        {
            let p = b.add_stack(s_main, parse);
            b.add_stack(p, new)
        },
    ];
    let mut t = 0;
    for op in ops {
        match *op {
            Op::Alloc {
                dt,
                slot,
                size,
                stack,
                tid,
            } => {
                t += dt;
                b.alloc(
                    t,
                    tid,
                    0x1000 + slot * 0x100,
                    size,
                    stacks[stack],
                    AllocKind::Malloc,
                );
            }
            Op::Free { dt, slot } => {
                t += dt;
                b.free(t, 1, 0x1000 + slot * 0x100);
            }
            Op::Realloc {
                dt,
                slot,
                new_slot,
                size,
            } => {
                t += dt;
                b.realloc(
                    t,
                    2,
                    0x1000 + slot * 0x100,
                    0x1000 + new_slot * 0x100,
                    size,
                    stacks[1],
                );
            }
        }
    }
    b.end(t + 1)
}

type Values = BTreeMap<Vec<String>, (u64, u64)>;

/// full key → (bytes, objects) at time `t`, by classifying every live block directly.
fn naive(model: &HeapModel, chain: &ClassifierChain, t: u64) -> Values {
    let classifiers = chain.bind(model);
    let mut out = Values::new();
    for a in 0..model.len() as u32 {
        let alloc = AllocId(a);
        if !model.is_live_at(alloc, t) {
            continue;
        }
        let size = model.size_at(alloc, t);
        let mut path = Vec::new();
        for c in &classifiers {
            let mut keys = Vec::new();
            c.key_path(c.class_of(alloc, size, t), &mut keys);
            path.extend(keys.iter().map(|&k| c.label(k)));
        }
        for depth in 0..=path.len() {
            let entry = out.entry(path[..depth].to_vec()).or_default();
            entry.0 += size;
            entry.1 += 1;
        }
    }
    out
}

/// full key → (bytes, objects) of the non-empty nodes of `tree`.
fn flatten(tree: &Tree) -> Values {
    let mut out = Values::new();
    tree.root.walk(&mut |n: &Node| {
        if n.objects > 0 {
            out.insert(n.full_key.clone(), (n.bytes, n.objects));
        }
    });
    out
}

const CHAINS: [&str; 7] = [
    "site",
    "size-class,thread",
    "call-path,size-class",
    "age,site-line",
    "closest-user-frame,age,module",
    "lifetime,call-path",
    "thread,type,size-class",
];

fn unpruned() -> TreeOptions {
    TreeOptions {
        prune: None,
        ..TreeOptions::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn one_pass_equals_naive_recomputation(
        ops in prop::collection::vec(op(), 1..60),
        chain_index in 0..CHAINS.len(),
        fractions in prop::collection::vec(0.0..=1.0f64, 1..8),
    ) {
        let model = build(&ops);
        let run = model.run();
        let times: Vec<u64> = fractions.iter().map(|f| run.start_ns + (run.duration_ns() as f64 * f) as u64).collect();
        let chain = parse_classifiers(CHAINS[chain_index], ClassifierOptions::default()).unwrap();
        let series = TreeSeries::compute(&model, &chain, &times).unwrap();
        let trees = series.trees(&unpruned());
        for tree in &trees.trees {
            prop_assert_eq!(flatten(tree), naive(&model, &chain, tree.time_ns), "at {}", tree.time_ns);
        }
    }

    #[test]
    fn added_times_equal_naive_recomputation(
        ops in prop::collection::vec(op(), 1..60),
        chain_index in 0..CHAINS.len(),
        first in 0.0..=1.0f64,
        added in prop::collection::vec(0.0..=1.0f64, 1..5),
    ) {
        let model = build(&ops);
        let run = model.run();
        let at = |f: f64| run.start_ns + (run.duration_ns() as f64 * f) as u64;
        let chain = parse_classifiers(CHAINS[chain_index], ClassifierOptions::default()).unwrap();
        let mut series = TreeSeries::compute(&model, &chain, &[at(first)]).unwrap();
        for &f in &added {
            series.add_time(at(f)).unwrap();
        }
        let trees = series.trees(&unpruned());
        prop_assert!(trees.times_ns.windows(2).all(|w| w[0] < w[1]));
        for tree in &trees.trees {
            prop_assert_eq!(flatten(tree), naive(&model, &chain, tree.time_ns), "at {}", tree.time_ns);
        }
    }
}

#[test]
fn realloc_growth_is_exact_in_trees() {
    // One block grows 100 → 300 → 50 through realloc; the trees see each size at its time.
    let mut b = HeapModelBuilder::new();
    b.start(0);
    b.alloc(10, 1, 0x100, 100, StackId::ROOT, AllocKind::Malloc);
    b.realloc(20, 1, 0x100, 0x200, 300, StackId::ROOT);
    b.realloc(30, 1, 0x200, 0x300, 50, StackId::ROOT);
    b.free(40, 1, 0x300);
    let model = b.end(50);
    let chain = parse_classifiers("size-class", ClassifierOptions::default()).unwrap();
    let series = TreeSeries::compute(&model, &chain, &[5, 10, 19, 20, 35, 40, 50]).unwrap();
    let trees = series.trees(&unpruned());
    let totals: Vec<(u64, u64)> = trees
        .trees
        .iter()
        .map(|t| (t.root.bytes, t.root.objects))
        .collect();
    assert_eq!(
        totals,
        vec![
            (0, 0),
            (100, 1),
            (100, 1),
            (300, 1),
            (50, 1),
            (0, 0),
            (0, 0)
        ]
    );
    let classes: Vec<String> = trees.trees[3]
        .root
        .children
        .iter()
        .filter(|c| c.bytes > 0)
        .map(|c| c.key.clone())
        .collect();
    assert_eq!(classes, vec!["257 B–512 B"]);
}
