//! Stable order and pruning over a series of trees: the paper's Figure 6 (meta tree,
//! sorting, pruning), each sort strategy, the 90 % / 9 rule with ties, and the same kept
//! keys at every time.

use memlens_heap::*;

/// One group of blocks: `count` blocks of `size` bytes of type `name`, live in
/// `[from, to)` (`to == None`: never freed).
struct Group {
    name: &'static str,
    size: u64,
    count: u64,
    from: u64,
    to: Option<u64>,
}

fn g(name: &'static str, size: u64, from: u64, to: Option<u64>) -> Group {
    Group {
        name,
        size,
        count: 1,
        from,
        to,
    }
}

/// A model whose blocks carry the group name as their type.
fn model(groups: &[Group]) -> HeapModel {
    let mut events: Vec<(u64, bool, u64, &'static str, u64)> = Vec::new();
    let mut addr = 0x1000;
    for group in groups {
        for _ in 0..group.count {
            addr += 0x100;
            events.push((group.from, true, addr, group.name, group.size));
            if let Some(to) = group.to {
                events.push((to, false, addr, group.name, 0));
            }
        }
    }
    events.sort_by_key(|e| (e.0, e.1));
    let mut b = HeapModelBuilder::new();
    b.start(0);
    let mut types = std::collections::HashMap::new();
    for (t, is_alloc, addr, name, size) in events {
        if is_alloc {
            let a = b.alloc(t, 1, addr, size, StackId::ROOT, AllocKind::New);
            let ty = *types.entry(name).or_insert_with(|| b.add_type(name));
            b.set_type(a, ty);
        } else {
            b.free(t, 1, addr);
        }
    }
    b.end(100)
}

fn trees(model: &HeapModel, times: &[u64], sort: SortStrategy, prune: Option<PruneRule>) -> Trees {
    let chain = parse_classifiers("type", ClassifierOptions::default()).unwrap();
    let series = TreeSeries::compute(model, &chain, times).unwrap();
    series.trees(&TreeOptions {
        metric: Metric::Bytes,
        sort,
        prune,
    })
}

/// `(key, bytes, sort_position)` of the root's children.
fn level(tree: &Tree) -> Vec<(String, u64, u32)> {
    tree.root
        .children
        .iter()
        .map(|c| (c.key.clone(), c.bytes, c.sort_position))
        .collect()
}

fn row(key: &str, bytes: u64, position: u32) -> (String, u64, u32) {
    (key.to_owned(), bytes, position)
}

/// Figure 6: at T = 1 the heap holds Pers 50, String 10, Buf 40; at T = 2 Pers 100,
/// String 30, Buf 40. The meta tree's absolute growth (Pers +50, String +20, Buf 0) fixes
/// the order Pers, String, Buf at both times, and pruning to two nodes in that order at
/// the reference time keeps Pers and String at both times although Buf is bigger than
/// String at T = 2. Buf is also one of the two largest at T = 1, so the union keeps it.
fn figure_6() -> HeapModel {
    model(&[
        g("Pers", 50, 5, None),
        g("Pers", 50, 15, None),
        g("String", 10, 5, None),
        g("String", 20, 15, None),
        g("Buf", 40, 5, None),
    ])
}

const TWO: Option<PruneRule> = Some(PruneRule {
    coverage: 1.0,
    max_children: 2,
});

#[test]
fn figure_6_absolute_growth() {
    let t = trees(&figure_6(), &[10, 20], SortStrategy::AbsoluteGrowth, TWO);
    assert_eq!(
        level(&t.trees[0]),
        vec![row("Pers", 50, 0), row("String", 10, 1), row("Buf", 40, 2)]
    );
    assert_eq!(
        level(&t.trees[1]),
        vec![row("Pers", 100, 0), row("String", 30, 1), row("Buf", 40, 2)]
    );
    assert_eq!(t.trees[1].root.children[1].growth_bytes, 20);
}

#[test]
fn figure_6_start_and_end_size() {
    let start = trees(&figure_6(), &[10, 20], SortStrategy::StartSize, TWO);
    assert_eq!(
        level(&start.trees[1]),
        vec![row("Pers", 100, 0), row("Buf", 40, 1), row("Other", 30, 2)]
    );
    let end = trees(&figure_6(), &[10, 20], SortStrategy::EndSize, TWO);
    assert_eq!(
        level(&end.trees[0]),
        vec![row("Pers", 50, 0), row("Buf", 40, 1), row("Other", 10, 2)]
    );
    // Unpruned, each strategy gives its own full order.
    let by = |sort| {
        let t = trees(&figure_6(), &[10, 20], sort, None);
        t.trees[0]
            .root
            .children
            .iter()
            .map(|c| c.key.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(by(SortStrategy::AbsoluteGrowth), ["Pers", "String", "Buf"]);
    assert_eq!(by(SortStrategy::StartSize), ["Pers", "Buf", "String"]);
    assert_eq!(by(SortStrategy::EndSize), ["Pers", "Buf", "String"]);
}

#[test]
fn ninety_percent_rule_on_a_series() {
    // At the end (the reference tree): A 50, B 30, C 15, D 5 → keep A, B, C; D to Other.
    // E owns the heap at the start and is gone at the end: its growth is negative, so
    // it sorts last, and it is kept because it is the largest at the start — the
    // owners of every time are named, not merged into Other.
    let m = model(&[
        g("A", 50, 5, None),
        g("B", 30, 5, None),
        g("C", 15, 5, None),
        g("D", 5, 5, None),
        g("E", 500, 5, Some(15)),
    ]);
    let t = trees(
        &m,
        &[10, 20],
        SortStrategy::AbsoluteGrowth,
        Some(PruneRule::default()),
    );
    let keys = |node: &Node| {
        node.children
            .iter()
            .map(|c| c.key.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(&t.trees[0].root), ["A", "B", "C", "E", "Other"]);
    assert_eq!(
        keys(&t.trees[1].root),
        keys(&t.trees[0].root),
        "the same keys survive at every time"
    );
    assert_eq!(t.trees[0].root.children[3].bytes, 500, "E at the start");
    assert_eq!(t.trees[1].root.children[3].bytes, 0, "E at the end");
    let other = &t.trees[0].root.children[4];
    assert_eq!(
        (other.bytes, t.trees[1].root.children[4].bytes),
        (5, 5),
        "D"
    );
    // Other opens into its members.
    assert_eq!(keys(other), ["D"]);
    assert_eq!(other.children[0].full_key, ["Other", "D"]);
    assert_eq!(other.children[0].bytes, 5);
}

#[test]
fn at_most_nine_children_and_ties_by_key() {
    // Twelve equal groups: the ties are broken by key text, and only nine are kept.
    let names = ["l", "k", "j", "i", "h", "g", "f", "e", "d", "c", "b", "a"];
    let groups: Vec<Group> = names.iter().map(|&n| g(n, 10, 5, None)).collect();
    let t = trees(
        &model(&groups),
        &[10],
        SortStrategy::AbsoluteGrowth,
        Some(PruneRule::default()),
    );
    let keys: Vec<String> = t.trees[0]
        .root
        .children
        .iter()
        .map(|c| c.key.clone())
        .collect();
    assert_eq!(keys, ["a", "b", "c", "d", "e", "f", "g", "h", "i", "Other"]);
    assert_eq!(t.trees[0].root.children[9].bytes, 30);
    let positions: Vec<u32> = t.trees[0]
        .root
        .children
        .iter()
        .map(|c| c.sort_position)
        .collect();
    assert_eq!(positions, (0..10).collect::<Vec<u32>>());
}

#[test]
fn equal_growth_is_broken_by_reference_size() {
    // X and Y both grow by 10; Y is larger at the end, so it comes first.
    let m = model(&[
        g("X", 10, 15, None),
        g("Y", 10, 15, None),
        g("Y", 5, 5, None),
    ]);
    let t = trees(&m, &[10, 20], SortStrategy::AbsoluteGrowth, None);
    assert_eq!(level(&t.trees[1]), vec![row("Y", 15, 0), row("X", 10, 1)]);
}

#[test]
fn nodes_absent_at_some_time_are_zero_placeholders() {
    let m = model(&[g("early", 10, 5, Some(15)), g("late", 10, 15, None)]);
    let t = trees(&m, &[10, 20], SortStrategy::AbsoluteGrowth, None);
    assert_eq!(
        level(&t.trees[0]),
        vec![row("late", 0, 0), row("early", 10, 1)]
    );
    assert_eq!(
        level(&t.trees[1]),
        vec![row("late", 10, 0), row("early", 0, 1)]
    );
    assert_eq!(t.trees[1].root.children[1].full_key, ["early"]);
}
