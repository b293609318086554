//! A coalesced model ([`HeapModelBuilder::coalescing`]) must agree with the exact model
//! ([`HeapModelBuilder::new`]) built from the same events wherever it claims to be
//! exact: at every time of [`HeapModel::exact_instants`] (the caller's grid, the run's
//! end, and each grid bucket's highest and lowest live heap).
//!
//! Random traces from proptest (reused and unknown addresses, every flavour of
//! `realloc`, zero sizes, many events per timestamp, marks, several threads, types, an
//! occasional undefined stack) are fed to both builders; the run statistics, the
//! diagnostics, the live heap and the unpruned memory trees of several classifier
//! chains at every exact instant, the extremes of every grid bucket, the timeline's
//! peak and the well-defined parts of the growth ranking are compared; the same for a
//! coalescer of a run still being recorded, whose grid coarsens while it is fed
//! ([`HeapModelBuilder::coalescing_growing`]). A hand-made
//! trace checks that a short spike between two grid lines becomes an exact instant.

use std::collections::BTreeMap;

use memlens_heap::classifiers::SizeClassMode;
use memlens_heap::*;
use memlens_vocab::FrameKind;
use proptest::prelude::*;

/// The thread ids a trace may use (the first `threads` of them).
const TIDS: [u64; 3] = [1, 7, 42];
/// Time of the first event; the run may start earlier (at 0) through `start`.
const FIRST_T: u64 = 100;
/// Number of stacks [`add_stacks`] defines; index `STACKS` means an undefined stack.
const STACKS: usize = 8;
/// A stack id the stack table never defines (moved to the root and counted).
const UNDEFINED_STACK: StackId = StackId(1_000);
/// The size of the address pool: small, so live addresses are reused and freed ones
/// freed again, yet large enough for blocks of one group to share a row.
const SLOTS: u64 = 20;
/// An address no event ever allocates.
const UNKNOWN_ADDR: u64 = 0xdead_0000;

/// An address operand: one of the pool of `SLOTS`, the null pointer, or an address never
/// allocated.
#[derive(Debug, Clone, Copy)]
enum Addr {
    Slot(u64),
    Null,
    Unknown,
}

impl Addr {
    fn value(self) -> u64 {
        match self {
            Addr::Slot(s) => 0x1000 + s * 0x40,
            Addr::Null => 0,
            Addr::Unknown => UNKNOWN_ADDR,
        }
    }
}

/// One event; `dt` is the time since the previous event (often 0).
#[derive(Debug, Clone)]
enum Ev {
    Alloc {
        dt: u64,
        slot: u64,
        size: u64,
        stack: usize,
        thread: usize,
        kind: AllocKind,
        /// A type set right after the allocation, as the ingest layer does.
        ty: Option<usize>,
    },
    Free {
        dt: u64,
        addr: Addr,
    },
    /// `realloc(old, size)` returning `new` (`None`: a null result, which frees the
    /// block when `size == 0` and is a failed call otherwise).
    Realloc {
        dt: u64,
        old: Addr,
        new: Option<u64>,
        size: u64,
        stack: usize,
        thread: usize,
    },
    Mark {
        dt: u64,
    },
}

impl Ev {
    fn dt(&self) -> u64 {
        match *self {
            Ev::Alloc { dt, .. } | Ev::Free { dt, .. } | Ev::Realloc { dt, .. } => dt,
            Ev::Mark { dt } => dt,
        }
    }
}

/// A whole generated trace.
#[derive(Debug, Clone)]
struct Case {
    /// Whether the run starts at 0 (`start`) rather than at the first event.
    explicit_start: bool,
    threads: usize,
    events: Vec<Ev>,
    /// Time from the last event to the run's end.
    tail: u64,
    /// Grid lines: `(true, f)` is the time of event `f·len`, `(false, f)` the fraction
    /// `f` of the run.
    grid: Vec<(bool, f64)>,
    /// Times (fractions of the run) at which the snapping of non-instant times is checked.
    probes: Vec<f64>,
    /// Timeline resolution.
    points: usize,
    /// Growth window (a fraction picking its first exact instant) and sample count.
    growth: (f64, usize),
}

impl Case {
    /// The time of every event, in order.
    fn times(&self) -> Vec<u64> {
        let mut t = FIRST_T;
        self.events
            .iter()
            .enumerate()
            .map(|(i, e)| {
                if i > 0 {
                    t += e.dt();
                }
                t
            })
            .collect()
    }

    fn run(&self) -> TimeWindow {
        let times = self.times();
        let end = times.last().map_or(FIRST_T, |&t| t) + self.tail;
        let start = if self.explicit_start {
            0
        } else {
            times.first().copied().unwrap_or(end)
        };
        TimeWindow {
            start_ns: start,
            end_ns: end,
        }
    }

    /// The caller's grid: times inside the run, unsorted, possibly repeated.
    fn grid_times(&self) -> Vec<u64> {
        let run = self.run();
        let times = self.times();
        self.grid
            .iter()
            .map(|&(on_event, f)| match (on_event, times.is_empty()) {
                (true, false) => times[((f * times.len() as f64) as usize).min(times.len() - 1)],
                _ => at(run, f),
            })
            .collect()
    }
}

/// The time at fraction `f` of `run`.
fn at(run: TimeWindow, f: f64) -> u64 {
    run.start_ns + ((run.duration_ns() as f64 * f) as u64).min(run.duration_ns())
}

fn dt() -> impl Strategy<Value = u64> {
    prop_oneof![4 => Just(0u64), 3 => 1..4u64, 2 => 4..100u64, 1 => 100..5_000u64]
}

fn size() -> impl Strategy<Value = u64> {
    // Common sizes make blocks share a row; 0 and equal sizes exercise the edges.
    prop_oneof![
        1 => Just(0u64),
        4 => prop::sample::select(vec![16u64, 24, 64, 100, 1_000]),
        4 => 0..5_000u64,
    ]
}

fn stack() -> impl Strategy<Value = usize> {
    // Mostly a few stacks, so that blocks share rows.
    prop_oneof![20 => 0..3usize, 10 => 0..STACKS, 1 => Just(STACKS)]
}

fn addr() -> impl Strategy<Value = Addr> {
    prop_oneof![12 => (0..SLOTS).prop_map(Addr::Slot), 1 => Just(Addr::Null), 1 => Just(Addr::Unknown)]
}

fn kind() -> impl Strategy<Value = AllocKind> {
    prop_oneof![
        6 => Just(AllocKind::Malloc),
        1 => Just(AllocKind::Calloc),
        1 => Just(AllocKind::New),
    ]
}

fn ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        8 => (dt(), 0..SLOTS, size(), stack(), 0..3usize, kind(), prop::option::weighted(0.3, 0..2usize)).prop_map(
            |(dt, slot, size, stack, thread, kind, ty)| Ev::Alloc { dt, slot, size, stack, thread, kind, ty }
        ),
        5 => (dt(), addr()).prop_map(|(dt, addr)| Ev::Free { dt, addr }),
        4 => (dt(), addr(), prop::option::weighted(0.8, 0..SLOTS), size(), stack(), 0..3usize)
            .prop_map(|(dt, old, new, size, stack, thread)| Ev::Realloc { dt, old, new, size, stack, thread }),
        1 => dt().prop_map(|dt| Ev::Mark { dt }),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        any::<bool>(),
        1..=3usize,
        prop::collection::vec(ev(), 0..300),
        prop_oneof![Just(0u64), 1..1_000u64],
        prop::collection::vec((any::<bool>(), 0.0..=1.0f64), 0..10),
        prop::collection::vec(0.0..=1.0f64, 1..6),
        1..60usize,
        (0.0..=1.0f64, 2..9usize),
    )
        .prop_map(
            |(explicit_start, threads, events, tail, grid, probes, points, growth)| Case {
                explicit_start,
                threads,
                events,
                tail,
                grid,
                probes,
                points,
                growth,
            },
        )
}

/// Defines the frames and the `STACKS` stacks, the same ids in every builder: user
/// code, a library, allocator wrappers, the runtime, the loader, an inlined frame and
/// the empty stack.
fn add_stacks(b: &mut HeapModelBuilder) -> Vec<StackId> {
    let app = "/bin/app";
    let frame = |b: &mut HeapModelBuilder,
                 function: &str,
                 module: &str,
                 kind: FrameKind,
                 inlined_into: Option<FrameId>| {
        b.add_frame(FrameInfo {
            function,
            file: "src.c",
            line: 7,
            module,
            inlined_into,
            kind,
        })
    };
    let main = frame(b, "main", app, FrameKind::User, None);
    let load = frame(b, "load", app, FrameKind::User, None);
    let parse = frame(b, "parse", app, FrameKind::User, None);
    let helper = frame(b, "parse_helper", app, FrameKind::User, Some(parse));
    let sqlite = frame(
        b,
        "sqlite3_malloc",
        "libsqlite3.so",
        FrameKind::Library,
        None,
    );
    let new = frame(
        b,
        "operator new",
        "libstdc++.so.6",
        FrameKind::Allocator,
        None,
    );
    let malloc = frame(b, "malloc", "libc.so.6", FrameKind::Allocator, None);
    let push = frame(
        b,
        "std::vector::push_back",
        "libstdc++.so.6",
        FrameKind::Runtime,
        None,
    );
    let dl = frame(
        b,
        "_dl_init",
        "ld-linux-x86-64.so.2",
        FrameKind::Loader,
        None,
    );
    let path = |b: &mut HeapModelBuilder, frames: &[FrameId]| {
        frames
            .iter()
            .fold(StackId::ROOT, |node, &f| b.add_stack(node, f))
    };
    let stacks = vec![
        StackId::ROOT,
        path(b, &[main]),
        path(b, &[main, load, new]),
        path(b, &[main, parse, push, new, malloc]),
        path(b, &[main, load, sqlite, malloc]),
        path(b, &[dl, malloc]),
        path(b, &[main, helper, malloc]),
        path(b, &[main, parse, malloc]),
    ];
    assert_eq!(stacks.len(), STACKS);
    stacks
}

/// Feeds `case` to `b` and ends the run.
fn feed(case: &Case, mut b: HeapModelBuilder) -> HeapModel {
    if case.explicit_start {
        b.start(0);
    }
    let stacks = add_stacks(&mut b);
    b.name_thread(TIDS[0], "main");
    let types = [b.add_type("Node"), b.add_type("std::string")];
    let stack_of = |s: usize| stacks.get(s).copied().unwrap_or(UNDEFINED_STACK);
    let tid_of = |thread: usize| TIDS[thread % case.threads];
    for (i, (ev, t)) in case.events.iter().zip(case.times()).enumerate() {
        match *ev {
            Ev::Alloc {
                slot,
                size,
                stack,
                thread,
                kind,
                ty,
                ..
            } => {
                let a = b.alloc(
                    t,
                    tid_of(thread),
                    Addr::Slot(slot).value(),
                    size,
                    stack_of(stack),
                    kind,
                );
                if let Some(ty) = ty {
                    b.set_type(a, types[ty]);
                }
            }
            Ev::Free { addr, .. } => b.free(t, tid_of(0), addr.value()),
            Ev::Realloc {
                old,
                new,
                size,
                stack,
                thread,
                ..
            } => {
                b.realloc(
                    t,
                    tid_of(thread),
                    old.value(),
                    new.map_or(0, |s| Addr::Slot(s).value()),
                    size,
                    stack_of(stack),
                );
            }
            Ev::Mark { .. } => b.mark(t, &format!("mark {i}")),
        }
    }
    b.end(case.run().end_ns)
}

/// full key → (bytes, objects) of the non-empty nodes of a tree.
type Values = BTreeMap<Vec<String>, (u64, u64)>;

fn flatten(tree: &Tree) -> Values {
    let mut out = Values::new();
    tree.root.walk(&mut |n: &Node| {
        assert!(!n.is_other, "pruning is off");
        if n.bytes > 0 || n.objects > 0 {
            out.insert(n.full_key.clone(), (n.bytes, n.objects));
        }
    });
    out
}

/// The chains compared, with a name for messages.
fn chains() -> Vec<(&'static str, ClassifierChain)> {
    let parse = |list: &str, size_classes: SizeClassMode| {
        let options = ClassifierOptions {
            size_classes,
            ..ClassifierOptions::default()
        };
        parse_classifiers(list, options).unwrap()
    };
    vec![
        ("site", parse("site", SizeClassMode::PowerOfTwo)),
        ("thread", parse("thread", SizeClassMode::PowerOfTwo)),
        ("size-class", parse("size-class", SizeClassMode::PowerOfTwo)),
        (
            "call-path,thread",
            parse("call-path,thread", SizeClassMode::PowerOfTwo),
        ),
        (
            "size-class (glibc)",
            parse("size-class", SizeClassMode::Glibc),
        ),
        ("type,site", parse("type,site", SizeClassMode::PowerOfTwo)),
    ]
}

fn unpruned() -> TreeOptions {
    TreeOptions {
        prune: None,
        ..TreeOptions::default()
    }
}

/// Live bytes and objects at `t`, summed over the rows directly.
fn live_at(m: &HeapModel, t: u64) -> (u64, u64) {
    (0..m.len() as u32)
        .map(AllocId)
        .filter(|&a| m.is_live_at(a, t))
        .fold((0, 0), |(bytes, objects), a| {
            (bytes + m.size_at(a, t), objects + m.objects_of(a))
        })
}

/// The unpruned trees of `chain` at `times`, through the CLI's entry point.
fn trees_at(m: &HeapModel, chain: &ClassifierChain, times: &[u64]) -> Trees {
    let query = TreeQuery {
        classifiers: chain.clone(),
        times: SnapshotTimes::Explicit(times.to_vec()),
        window: None,
        options: unpruned(),
    };
    memory_trees(m, &query).unwrap()
}

/// The parts of a suspect that read only the window's ends and the run's end.
type SuspectEnds = BTreeMap<Vec<String>, (i64, i64, u64, u64, u64, u64)>;

fn suspect_ends(suspects: &[Suspect]) -> SuspectEnds {
    suspects
        .iter()
        .map(|s| {
            (
                s.full_key.clone(),
                (
                    s.growth_bytes,
                    s.growth_objects,
                    s.start_bytes,
                    s.end_bytes,
                    s.live_at_exit_bytes,
                    s.live_at_exit_objects,
                ),
            )
        })
        .collect()
}

fn check(case: &Case) -> Result<(), TestCaseError> {
    let grid = case.grid_times();
    let coalesced = feed(case, HeapModelBuilder::coalescing(grid.clone()));
    check_model(case, coalesced, &grid)
}

/// [`check`] for a run still being recorded ([`HeapModelBuilder::coalescing_growing`]):
/// its `lines` are spaced over a horizon of `1/2^halvings` of the run, so the grid
/// coarsens `halvings` times or so while the events are fed; the case's grid times are
/// its pinned times. The grid that must be instants at the end is the pinned times and
/// the lines at the last horizon.
fn check_growing(case: &Case, halvings: u32, lines: u64) -> Result<(), TestCaseError> {
    let run = case.run();
    let pinned = case.grid_times();
    let first = (run.end_ns >> halvings).max(1);
    let growing = HeapModelBuilder::coalescing_growing(first, lines, pinned.clone());
    let coalesced = feed(case, growing);
    let mut horizon = first;
    while run.end_ns > horizon {
        horizon *= 2;
    }
    let mut grid = pinned;
    let regular =
        (0..=lines).map(|i| (u128::from(horizon) * u128::from(i) / u128::from(lines)) as u64);
    grid.extend(regular.filter(|&t| run.contains(t)));
    check_model(case, coalesced, &grid)
}

/// Checks `coalesced`, built from `case` to be exact at `grid`, against the exact model.
fn check_model(case: &Case, coalesced: HeapModel, grid: &[u64]) -> Result<(), TestCaseError> {
    let exact = feed(case, HeapModelBuilder::new());
    let run = case.run();
    prop_assert_eq!(exact.run(), run);
    prop_assert_eq!(coalesced.run(), run);
    prop_assert!(exact.exact_instants().is_none());

    // Same events, same repairs and totals.
    prop_assert_eq!(coalesced.stats(), exact.stats());
    prop_assert_eq!(coalesced.diagnostics(), exact.diagnostics());
    prop_assert_eq!(coalesced.marks(), exact.marks());

    // The instants: ascending, inside the run, the grid and the end among them, and the
    // peak too.
    let instants = coalesced
        .exact_instants()
        .expect("a coalesced model has instants");
    prop_assert!(instants.windows(2).all(|w| w[0] < w[1]), "{:?}", instants);
    prop_assert!(instants.iter().all(|&i| run.contains(i)), "{:?}", instants);
    prop_assert_eq!(instants.last().copied(), Some(run.end_ns));
    for g in grid {
        prop_assert!(instants.binary_search(g).is_ok(), "grid line {} lost", g);
    }
    for mark in coalesced.marks() {
        prop_assert!(
            instants.binary_search(&mark.t_ns).is_ok(),
            "mark at {} lost",
            mark.t_ns
        );
    }
    let stats = exact.stats();
    if stats.peak_bytes > 0 {
        prop_assert!(
            instants.binary_search(&stats.peak_time_ns).is_ok(),
            "peak at {} not in {:?}",
            stats.peak_time_ns,
            instants
        );
    }
    check_bucket_extremes(case, &exact, grid, instants)?;

    // The live heap at every instant.
    for &i in instants {
        prop_assert_eq!(
            live_at(&coalesced, i),
            live_at(&exact, i),
            "live heap at {}",
            i
        );
    }

    // Unpruned trees at every instant, by full key.
    let chains = chains();
    for (name, chain) in &chains {
        let e = trees_at(&exact, chain, instants);
        let c = trees_at(&coalesced, chain, instants);
        prop_assert_eq!(&e.times_ns[..], instants);
        prop_assert_eq!(&c.times_ns[..], instants);
        for (te, tc) in e.trees.iter().zip(&c.trees) {
            prop_assert_eq!(
                (tc.root.bytes, tc.root.objects),
                live_at(&exact, te.time_ns),
                "{} total at {}",
                name,
                te.time_ns
            );
            prop_assert_eq!(flatten(tc), flatten(te), "{} at {}", name, te.time_ns);
        }
    }

    // Between two instants the coalesced model shows the earlier one, and a requested
    // time is labelled with the instant it shows.
    let probes: Vec<u64> = case.probes.iter().map(|&f| at(run, f)).collect();
    let (_, chain) = &chains[3];
    let shown = trees_at(&coalesced, chain, &probes);
    let mut snapped: Vec<u64> = probes
        .iter()
        .map(|&t| coalesced.exact_at_or_before(t))
        .collect();
    snapped.sort_unstable();
    snapped.dedup();
    prop_assert_eq!(&shown.times_ns, &snapped);
    let raw = TreeSeries::compute(&coalesced, chain, &probes)
        .unwrap()
        .trees(&unpruned());
    for tree in &raw.trees {
        let t = tree.time_ns;
        let expected = if t < instants[0] {
            Values::new()
        } else {
            let earlier = coalesced.exact_at_or_before(t);
            flatten(&trees_at(&exact, chain, &[earlier]).trees[0])
        };
        prop_assert_eq!(flatten(tree), expected, "raw tree at {}", t);
    }

    // The timeline's peak. With an empty heap throughout, the "peak" is the first event
    // group (0 bytes), whose time a coalesced model does not keep: only the bytes are
    // defined then.
    let te = exact
        .timeline(Resolution::Points(case.points), None)
        .unwrap();
    let tc = coalesced
        .timeline(Resolution::Points(case.points), None)
        .unwrap();
    prop_assert_eq!(tc.peak.bytes, te.peak.bytes);
    if te.peak.bytes > 0 {
        prop_assert_eq!(tc.peak, te.peak);
        prop_assert_eq!(
            (te.peak.bytes, te.peak.time_ns),
            (stats.peak_bytes, stats.peak_time_ns)
        );
    }

    // Growth over a window from an instant to the run's end (also an instant). The
    // ranking samples the window at evenly spaced times, which on a coalesced model are
    // shown as the instant before them: the inner samples (hence monotonicity, R²,
    // slope, persistence, score, the order, and `max_bytes`) legitimately differ. Which
    // groups are suspects depends only on the ends (growth > 0, no child carrying 90 %
    // of it), so the set of suspects and what they read at the ends and at exit must be
    // identical.
    //
    // The window ends at the run's end because `growth_suspects` panics (index out of
    // bounds, growth.rs) on the exact model too when a never-freed block is allocated
    // after the window's end under a key no sample saw: the live-at-exit column adds
    // union-tree nodes that the sampled columns lack.
    let (f0, samples) = case.growth;
    let start = instants[((f0 * instants.len() as f64) as usize).min(instants.len() - 1)];
    let window = TimeWindow {
        start_ns: start,
        end_ns: run.end_ns,
    };
    for (name, chain) in &chains {
        let query = GrowthQuery {
            classifiers: chain.clone(),
            window: Some(window),
            samples,
            limit: None,
        };
        let e = growth_suspects(&exact, &query).unwrap();
        let c = growth_suspects(&coalesced, &query).unwrap();
        prop_assert_eq!(
            suspect_ends(&c),
            suspect_ends(&e),
            "{} growth over {:?}",
            name,
            window
        );
    }
    Ok(())
}

/// Inside every bucket between two grid lines (and before the first), the first time
/// of the highest live heap above the value carried in, and of the lowest below it,
/// are instants. With no grid the whole run is one bucket (the coalescer's default
/// bucket is 1 s; these runs last a few ms at most).
fn check_bucket_extremes(
    case: &Case,
    exact: &HeapModel,
    grid: &[u64],
    instants: &[u64],
) -> Result<(), TestCaseError> {
    let run = case.run();
    let mut lines = grid.to_vec();
    lines.sort_unstable();
    lines.dedup();
    if lines.is_empty() {
        lines.push(run.end_ns);
    }
    // The times at which the live heap is settled: every event's, and the end.
    let mut stamps = case.times();
    stamps.push(run.end_ns);
    stamps.dedup();
    let mut from: Option<u64> = None;
    for &line in &lines {
        let carried = from.map_or(0, |f| live_at(exact, f).0);
        let inside = stamps
            .iter()
            .copied()
            .filter(|&t| from.is_none_or(|f| t > f) && t <= line);
        // (bytes, first time) of the highest and the lowest value.
        let mut high: Option<(u64, u64)> = None;
        let mut low: Option<(u64, u64)> = None;
        for t in inside {
            let bytes = live_at(exact, t).0;
            if bytes > high.map_or(carried, |h| h.0) {
                high = Some((bytes, t));
            }
            if bytes < low.map_or(carried, |l| l.0) {
                low = Some((bytes, t));
            }
        }
        for (bytes, t) in high.into_iter().chain(low) {
            prop_assert!(
                instants.binary_search(&t).is_ok(),
                "extreme {} B at {} in ({:?}, {}] not in {:?}",
                bytes,
                t,
                from,
                line,
                instants
            );
        }
        from = Some(line);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn coalesced_model_is_exact_at_its_instants(case in case()) {
        check(&case)?;
    }

    /// A run still being recorded, whose grid coarsens as it grows (the live view).
    #[test]
    fn growing_coalesced_model_is_exact_at_its_instants(
        case in case(), halvings in 0..6u32, lines in 1..12u64,
    ) {
        // Its grid starts at 0, where the run of a trace starts.
        prop_assume!(case.explicit_start);
        check_growing(&case, halvings, lines)?;
    }
}

#[test]
fn a_short_spike_between_grid_lines_is_an_exact_instant() {
    // Grid lines every 1000 ns. Between 1000 and 2000 a 1 ns spike (a big block, grown
    // by realloc, freed at once) and later a dip below the carried-in level.
    let grid = vec![0, 1000, 2000, 3000];
    let build = |b: HeapModelBuilder| {
        let mut b = b;
        b.start(0);
        let stacks = add_stacks(&mut b);
        b.alloc(10, 1, 0x10, 300, stacks[2], AllocKind::New);
        b.alloc(20, 7, 0x20, 200, stacks[4], AllocKind::Malloc);
        b.alloc(1100, 1, 0x30, 50, stacks[3], AllocKind::Malloc);
        b.alloc(1499, 7, 0x40, 4_000, stacks[6], AllocKind::Malloc);
        b.realloc(1500, 7, 0x40, 0x50, 9_000, stacks[6]);
        b.alloc(1500, 1, 0x60, 16, stacks[5], AllocKind::Calloc);
        b.free(1501, 7, 0x50);
        b.free(1700, 1, 0x10);
        b.free(1700, 1, 0x60);
        b.alloc(1800, 1, 0x10, 100, stacks[2], AllocKind::New);
        b.free(2500, 7, 0x20);
        b.end(3000)
    };
    let exact = build(HeapModelBuilder::new());
    let coalesced = build(HeapModelBuilder::coalescing(grid));
    let stats = coalesced.stats();
    assert_eq!(stats, exact.stats());
    assert_eq!((stats.peak_bytes, stats.peak_time_ns), (9_566, 1500));
    let instants = coalesced.exact_instants().unwrap();
    assert!(instants.contains(&stats.peak_time_ns), "{instants:?}");
    // (0, 1000]: from 0 up to 500 at 20. (1000, 2000]: carried 500, highest 9566 at
    // 1500, lowest 250 at 1700. (2000, 3000]: carried 350, lowest 150 at 2500.
    assert_eq!(instants, [0, 20, 1000, 1500, 1700, 2000, 2500, 3000]);
    for (name, chain) in chains() {
        let e = trees_at(&exact, &chain, &[stats.peak_time_ns]);
        let c = trees_at(&coalesced, &chain, &[stats.peak_time_ns]);
        assert_eq!(c.times_ns, [1500]);
        assert_eq!((c.trees[0].root.bytes, c.trees[0].root.objects), (9_566, 5));
        assert_eq!(flatten(&c.trees[0]), flatten(&e.trees[0]), "{name}");
    }
    // Asking for a time after the spike shows the instant before it.
    let chain = parse_classifiers("site", ClassifierOptions::default()).unwrap();
    let c = trees_at(&coalesced, &chain, &[1600]);
    assert_eq!(c.times_ns, [1500]);
    let peak = coalesced
        .timeline(Resolution::Points(3), None)
        .unwrap()
        .peak;
    assert_eq!((peak.time_ns, peak.bytes, peak.objects), (1500, 9_566, 5));
}
