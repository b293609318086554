//! Growth ranking on synthetic programs: a leaking site must rank first among steadily
//! churning sites whose live sets are larger but flat or oscillating, and a C++ map used
//! as a cache that never hits must be found under `closest-user-frame`.

use memlens_heap::*;

const MS: u64 = 1_000_000;

/// One event of a synthetic program: time, address, and `(size, stack)` for an
/// allocation or `None` for a free.
type Event = (u64, u64, Option<(u64, StackId)>);

/// A synthetic program: allocations with a free time (or none), fed in time order.
#[derive(Default)]
struct Program {
    events: Vec<Event>,
    next_addr: u64,
}

impl Program {
    fn block(&mut self, t: u64, free_at: Option<u64>, size: u64, stack: StackId) {
        self.next_addr += 0x40;
        self.events.push((t, self.next_addr, Some((size, stack))));
        if let Some(f) = free_at {
            self.events.push((f, self.next_addr, None));
        }
    }

    fn finish(mut self, mut b: HeapModelBuilder, end: u64) -> HeapModel {
        self.events
            .sort_by_key(|&(t, addr, ev)| (t, ev.is_some(), addr));
        for (t, addr, ev) in self.events {
            match ev {
                Some((size, stack)) => {
                    b.alloc(t, 1, addr, size, stack, AllocKind::Malloc);
                }
                None => b.free(t, 1, addr),
            }
        }
        b.end(end)
    }
}

/// A stack of `(function, module)` frames, outermost first, each classified by the real
/// frame policy as the ingest layer would (the main executable is `/srv/travel`).
fn site_stack(b: &mut HeapModelBuilder, path: &[(&str, &str)]) -> StackId {
    let policy = memlens_symbols::FramePolicy::default();
    let mut node = StackId::ROOT;
    for &(function, module) in path {
        let kind = policy.classify(&memlens_symbols::FrameFacts {
            function,
            file: "",
            module,
            in_main_executable: module == "/srv/travel",
        });
        let frame = b.add_frame(FrameInfo {
            function,
            module,
            kind,
            ..Default::default()
        });
        node = b.add_stack(node, frame);
    }
    node
}

#[test]
fn the_leaking_site_ranks_first_among_churners() {
    let mut b = HeapModelBuilder::new();
    b.start(0);
    let app = "/bin/server";
    let leak = site_stack(&mut b, &[("main", app), ("remember_session", app)]);
    let sawtooth = site_stack(&mut b, &[("main", app), ("batch_buffer", app)]);
    let wave = site_stack(&mut b, &[("main", app), ("request_arena", app)]);
    let steady = site_stack(&mut b, &[("main", app), ("connection_pool", app)]);
    let temps = site_stack(&mut b, &[("main", app), ("format_line", app)]);
    let end = 100_000 * MS;
    let mut p = Program::default();
    for i in 0..1_000u64 {
        // The leak: 1 KiB every 100 ms, never freed (1 MB in total).
        p.block(i * 100 * MS, None, 1024, leak);
    }
    // A sawtooth that fills 8 MB over 9.9 s, drains, and ends the run near its top.
    for cycle in 0..10u64 {
        let start = cycle * 10_000 * MS + 100 * MS;
        for j in 0..99 {
            let free = if cycle == 9 {
                None
            } else {
                Some(start + 9_950 * MS)
            };
            p.block(start + j * 100 * MS, free, 80 * 1024, sawtooth);
        }
    }
    // A wave: 64 blocks of 100 KiB live for 3.7 s, started every 1.3 s, out of phase.
    for i in 0..76u64 {
        let t = i * 1_300 * MS + 50 * MS;
        for j in 0..64 {
            p.block(
                t + j * MS,
                Some((t + 3_700 * MS + j * MS).min(end - 1)),
                100 * 1024,
                wave,
            );
        }
    }
    // A steady pool of 200 × 10 KiB blocks, each replaced every 20 s.
    for i in 0..1_000u64 {
        let t = i * 100 * MS + 7 * MS;
        p.block(
            t,
            Some(t + 20_000 * MS).filter(|&f| f < end),
            10 * 1024,
            steady,
        );
    }
    // Temporaries: many short-lived blocks.
    for i in 0..20_000u64 {
        let t = i * 5 * MS + 3;
        p.block(t, Some(t + 2 * MS), 4096, temps);
    }
    let model = p.finish(b, end);
    let chain = parse_classifiers("site", ClassifierOptions::default()).unwrap();
    let suspects = growth_suspects(&model, &GrowthQuery::new(chain)).unwrap();
    let keys: Vec<&str> = suspects.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(keys[0], "remember_session", "ranking: {suspects:#?}");
    let top = &suspects[0];
    assert_eq!(top.full_key, ["remember_session"]);
    assert!(top.monotonicity > 0.99 && top.r_squared > 0.99, "{top:?}");
    assert_eq!(top.live_at_exit_bytes, 1024 * 1000);
    assert_eq!(top.live_at_exit_objects, 1000);
    // The sawtooth grew more in absolute bytes, but ranks below the leak.
    let saw = suspects
        .iter()
        .find(|s| s.key == "batch_buffer")
        .expect("the sawtooth grew");
    assert!(saw.growth_bytes > top.growth_bytes, "{saw:?}");
    assert!(saw.score < top.score / 2.0, "{saw:?}");
}

#[test]
fn a_cache_that_never_hits_is_found_by_closest_user_frame() {
    let mut b = HeapModelBuilder::new();
    b.start(0);
    let (app, cxx) = ("/srv/travel", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6");
    let new = ("operator new(unsigned long)", cxx);
    let handle = [
        ("main", app),
        ("Server::run()", app),
        ("Server::handle(Request const&)", app),
    ];
    let with = |b: &mut HeapModelBuilder, tail: &[(&str, &str)]| {
        let path: Vec<(&str, &str)> = handle.iter().chain(tail).copied().collect();
        site_stack(b, &path)
    };
    let cache_insert = with(
        &mut b,
        &[
            (
                "LocationCache::insert(QueryKey const&, std::vector<Location> const&)",
                app,
            ),
            (
                "std::map<QueryKey, std::vector<Location>>::operator[](QueryKey const&)",
                app,
            ),
            (
                "std::_Rb_tree<QueryKey, std::pair<QueryKey const, std::vector<Location>>>::_M_emplace_hint_unique",
                app,
            ),
            new,
        ],
    );
    let results = with(
        &mut b,
        &[
            ("JourneyService::findLocations(Query const&)", app),
            ("std::vector<Location>::_M_realloc_insert", app),
            new,
        ],
    );
    let strings = with(
        &mut b,
        &[
            ("parse_request(char const*)", app),
            (
                "std::__cxx11::basic_string<char>::_M_create(unsigned long&, unsigned long)",
                cxx,
            ),
            new,
        ],
    );
    let end = 60_000 * MS;
    let mut p = Program::default();
    for request in 0..6_000u64 {
        let t = request * 10 * MS;
        // Every request parses its query into temporary strings.
        for j in 0..8 {
            p.block(t + j, Some(t + MS), 64, strings);
        }
        // It builds a large result vector that lives for a batch of requests.
        p.block(
            t + 20,
            Some((t + 700 * MS).min(end - 1)),
            48 * 1024,
            results,
        );
        // The cache misses every time (the key has no equality), so it inserts a node.
        p.block(t + 30, None, 96, cache_insert);
    }
    let model = p.finish(b, end);
    let chain = parse_classifiers("closest-user-frame", ClassifierOptions::default()).unwrap();
    let suspects = growth_suspects(&model, &GrowthQuery::new(chain)).unwrap();
    assert_eq!(
        suspects[0].key, "LocationCache::insert(QueryKey const&, std::vector<Location> const&)",
        "ranking: {suspects:#?}"
    );
    assert_eq!(suspects[0].live_at_exit_objects, 6_000);
    // Under `site` the frame policy looks past `operator new` and the standard library's
    // internals too, so the site names the same culprit.
    let chain = parse_classifiers("site", ClassifierOptions::default()).unwrap();
    let by_site = growth_suspects(&model, &GrowthQuery::new(chain)).unwrap();
    assert_eq!(by_site.len(), 1, "{by_site:#?}");
    assert_eq!(
        by_site[0].key,
        "LocationCache::insert(QueryKey const&, std::vector<Location> const&)"
    );
}

#[test]
fn a_node_carried_by_one_child_yields_to_it() {
    let mut b = HeapModelBuilder::new();
    b.start(0);
    let leak = site_stack(
        &mut b,
        &[("main", "/bin/a"), ("worker", "/bin/a"), ("leak", "/bin/a")],
    );
    let mut p = Program::default();
    for i in 0..100 {
        p.block(i * MS, None, 100, leak);
    }
    let model = p.finish(b, 100 * MS);
    let chain = parse_classifiers("call-path", ClassifierOptions::default()).unwrap();
    let suspects = growth_suspects(&model, &GrowthQuery::new(chain)).unwrap();
    let keys: Vec<&[String]> = suspects.iter().map(|s| s.full_key.as_slice()).collect();
    assert_eq!(keys, [["main", "worker", "leak"]]);
}
