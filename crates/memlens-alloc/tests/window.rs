//! The allocation map of a window of a run (`AllocModelBuilder::start_at`, then no
//! events from the window's end on): on random event streams (allocations, frees,
//! reallocations, reused addresses, frees of unknown addresses, two threads), its
//! blocks are exactly the whole run's blocks that overlap the window, with the same
//! allocation times, addresses, sizes, threads and sites, ending where they ended or
//! at the window's end; and the model's run is the window. The whole run at a glance
//! that a window reaching the run's end carries (`track_whole_run`) is that of every
//! block of the run.

use memlens_alloc::*;
use proptest::prelude::*;

/// One event: (time step, kind 0 alloc / 1 free / 2 realloc, address slot, size, thread).
type Ev = (u64, u8, u8, u16, bool);

fn feed(
    b: &mut AllocModelBuilder,
    threads: [ThreadId; 2],
    events: &[(u64, u8, u8, u16, bool)],
    until: u64,
) {
    for &(t, kind, slot, size, second) in events {
        if t >= until {
            break;
        }
        let thread = threads[usize::from(second)];
        let addr = 0x1000 + u64::from(slot) * 0x100;
        let size = u64::from(size) + 1;
        let site = SiteId(u32::from(slot % 3));
        match kind {
            0 => b.alloc(AllocEvent {
                t,
                thread,
                addr,
                size,
                site,
                latency_ns: None,
            }),
            1 => b.free(FreeEvent {
                t,
                thread,
                addr,
                site: SiteId::UNKNOWN,
                latency_ns: None,
            }),
            _ => b.realloc(ReallocEvent {
                t,
                thread,
                old_addr: addr,
                new_addr: 0x1000 + u64::from(slot.wrapping_mul(7) % 32) * 0x100,
                size,
                site,
                latency_ns: None,
            }),
        }
    }
}

/// Events at the times their steps add up to.
fn timed(steps: Vec<Ev>) -> Vec<Ev> {
    let mut t = 0;
    steps
        .into_iter()
        .map(|(dt, kind, slot, size, second)| {
            t += dt;
            (t, kind, slot, size, second)
        })
        .collect()
}

fn builder() -> (AllocModelBuilder, [ThreadId; 2]) {
    let mut b = AllocModelBuilder::new();
    let p = b.add_process(ProcessInfo {
        pid: 7,
        ppid: 1,
        name: "w".into(),
    });
    for _ in 0..3 {
        b.site(&memlens_vocab::Site::default());
    }
    let threads = [b.thread(p, 7, ""), b.thread(p, 8, "")];
    (b, threads)
}

/// What a block of a window must equal: everything but the end, which is clipped.
#[allow(clippy::type_complexity, reason = "a tuple to sort and compare")]
fn key(b: &Block, end: u64) -> (u64, u64, u64, u64, u32, u32, bool, u64, bool, u32) {
    let t_free = b.t_free.min(end);
    (
        b.t_alloc,
        b.addr,
        b.requested,
        b.reserved,
        b.thread.0,
        b.site.0,
        b.from_realloc,
        t_free,
        b.freed && b.t_free < end,
        if b.t_free < end { b.free_site.0 } else { 0 },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn a_window_holds_the_runs_blocks_that_overlap_it(
        steps in prop::collection::vec((0u64..4, 0u8..3, 0u8..32, 0u16..3000, any::<bool>()), 1..400),
        from_frac in 0.0f64..1.0,
        len_frac in 0.0f64..1.0,
    ) {
        let events = timed(steps);
        let t = events.last().map_or(0, |e| e.0);
        let last = t;
        let from = (from_frac * last as f64) as u64;
        let to = (from + 1 + (len_frac * (last - from) as f64) as u64).min(last + 1);

        let (mut whole, threads) = builder();
        feed(&mut whole, threads, &events, u64::MAX);
        let whole = whole.finish(last + 1);
        let (mut window, threads) = builder();
        window.start_at(from);
        feed(&mut window, threads, &events, to);
        let window = window.finish(to);

        prop_assert_eq!(window.run().start_ns, from);
        prop_assert_eq!(window.run().end_ns, to);
        let mut want: Vec<_> = whole
            .blocks()
            .iter()
            .filter(|b| b.t_alloc < to && b.t_free >= from)
            .map(|b| key(b, to))
            .collect();
        let mut got: Vec<_> = window.blocks().iter().map(|b| key(b, to)).collect();
        want.sort_unstable();
        got.sort_unstable();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn a_window_to_the_end_carries_the_whole_run_of_every_block(
        steps in prop::collection::vec((0u64..4, 0u8..3, 0u8..32, 0u16..3000, any::<bool>()), 1..400),
        from_frac in 0.0f64..1.0,
    ) {
        let events = timed(steps);
        let t = events.last().map_or(0, |e| e.0);
        let end = t + 1;
        let from = (from_frac * t as f64) as u64;

        let (mut whole, threads) = builder();
        feed(&mut whole, threads, &events, u64::MAX);
        let whole = whole.finish(end);
        prop_assert!(whole.whole_run().is_none(), "only when asked for");
        let mut direct = WholeRunBuilder::new(0, end);
        for b in whole.blocks() {
            direct.add(ProcessId(0), b.addr, b.requested, b.t_alloc, b.t_free);
        }
        let direct = direct.finish();

        let (mut window, threads) = builder();
        window.start_at(from);
        window.track_whole_run(0, end);
        feed(&mut window, threads, &events, u64::MAX);
        let window = window.finish(end);
        let Some(carried) = window.whole_run() else {
            return Err(TestCaseError::fail("the window carries no whole-run map"));
        };
        prop_assert_eq!((&carried.rows, carried.row_bytes), (&direct.rows, direct.row_bytes));
        for row in 0..direct.rows.len() {
            for column in 0..whole_run::COLUMNS {
                let (a, b) = (carried.occupancy(row, column), direct.occupancy(row, column));
                // Added in another order: at most one step of 1/255 apart.
                let same = match (a, b) {
                    (Some(a), Some(b)) => (a - b).abs() <= 1.5 / 255.0,
                    (a, b) => a == b,
                };
                prop_assert!(same, "row {}, column {}: {:?} against {:?}", row, column, a, b);
            }
        }
    }
}
