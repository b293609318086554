//! A checkpoint of the allocation map's builder before its window starts
//! (`AllocModelBuilder::checkpoint`, `resume_at`): on random event streams
//! (allocations, frees, reallocations, reused addresses, frees of unknown addresses,
//! the program's mappings mapped over and partly unmapped, allocator latencies, sites
//! and threads first met on either side of the checkpoint), the builder resumed from
//! it and fed the events from there finishes into exactly the model (byte for byte)
//! of the builder fed every event from the run's start. Damaged checkpoints are
//! refused, never a panic.

use memlens_alloc::*;
use memlens_vocab::Site;
use proptest::prelude::*;

/// One event: (time step, kind, address slot, size, thread, latency).
type Ev = (u64, u8, u8, u16, u8, u16);

/// Feeds the events at times in `[from, until)`; sites and threads are found by
/// name and id as the trace reader finds them, so a resumed builder meets them again.
fn feed(b: &mut AllocModelBuilder, events: &[Ev], from: u64, until: u64) {
    for &(t, kind, slot, size, tid, latency) in events {
        if t < from || t >= until {
            continue;
        }
        let thread = b.thread(ProcessId(0), 100 + u32::from(tid), &format!("w{tid}"));
        let addr = 0x1000 + u64::from(slot) * 0x100;
        let size = u64::from(size) + 1;
        let function = format!("site{}", slot % 5);
        let site = b.site(&Site {
            function,
            ..Site::default()
        });
        let latency_ns = (latency > 2000).then_some(u32::from(latency));
        match kind {
            0 | 1 => b.alloc(AllocEvent {
                t,
                thread,
                addr,
                size,
                site,
                latency_ns,
            }),
            2 => b.free(FreeEvent {
                t,
                thread,
                addr,
                site,
                latency_ns,
            }),
            3 => b.realloc(ReallocEvent {
                t,
                thread,
                old_addr: addr,
                new_addr: 0x1000 + u64::from(slot.wrapping_mul(7) % 32) * 0x100,
                size,
                site,
                latency_ns,
            }),
            4 => b.map(MapEvent {
                t,
                thread,
                addr: 0x10_0000 + u64::from(slot % 8) * 0x1000,
                len: size * 8,
                site,
            }),
            _ => b.unmap(UnmapEvent {
                t,
                thread,
                addr: 0x10_0000 + u64::from(slot % 8) * 0x1000 + 0x1000,
                len: 0x1000,
            }),
        }
    }
}

fn builder() -> AllocModelBuilder {
    let mut b = AllocModelBuilder::new();
    b.add_process(ProcessInfo {
        pid: 7,
        ppid: 1,
        name: "w".into(),
    });
    b
}

fn timed(steps: Vec<Ev>) -> Vec<Ev> {
    let mut t = 0;
    steps
        .into_iter()
        .map(|(dt, kind, slot, size, tid, latency)| {
            t += dt;
            (t, kind, slot, size, tid, latency)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn a_builder_resumed_from_a_checkpoint_makes_the_same_model(
        steps in prop::collection::vec(
            (0u64..4, 0u8..6, 0u8..32, 0u16..3000, 0u8..3, 0u16..4000), 1..400),
        at_frac in 0.0f64..1.0,
        from_frac in 0.0f64..1.0,
        len_frac in 0.0f64..1.0,
    ) {
        let events = timed(steps);
        let last = events.last().map_or(0, |e| e.0);
        let from = (from_frac * last as f64) as u64;
        let to = (from + 1 + (len_frac * (last - from) as f64) as u64).min(last + 1);
        let at = (at_frac * from as f64) as u64;

        let mut straight = builder();
        straight.start_at(from);
        feed(&mut straight, &events, 0, to);
        let straight = straight.finish(to).encode();

        // The checkpoint is of a builder whose own window starts later still.
        let mut first = builder();
        first.start_at(last + 1);
        feed(&mut first, &events, 0, at);
        let Some(bytes) = first.checkpoint() else {
            return Err(TestCaseError::fail("no checkpoint before the window"));
        };
        let mut resumed = AllocModelBuilder::resume_at(&bytes, from)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        feed(&mut resumed, &events, at, to);
        prop_assert_eq!(resumed.finish(to).encode(), straight);
    }

    #[test]
    fn a_damaged_checkpoint_is_refused_never_a_panic(
        steps in prop::collection::vec(
            (0u64..4, 0u8..6, 0u8..32, 0u16..3000, 0u8..3, 0u16..4000), 1..200),
        flips in prop::collection::vec((any::<usize>(), 1u8..=255), 1..4),
        cut in any::<usize>(),
    ) {
        let events = timed(steps);
        let mut b = builder();
        b.start_at(u64::MAX);
        feed(&mut b, &events, 0, u64::MAX);
        let bytes = b.checkpoint().expect("a checkpoint before the window");
        let mut damaged = bytes.clone();
        for (at, x) in flips {
            let at = at % damaged.len();
            damaged[at] ^= x;
        }
        let _ = AllocModelBuilder::resume_at(&damaged, 5);
        let cut = cut % bytes.len();
        prop_assert!(AllocModelBuilder::resume_at(&bytes[..cut], 5).is_err());
    }
}

#[test]
fn no_checkpoint_once_the_window_has_started_or_without_one() {
    let events = timed(vec![(1, 0, 1, 10, 0, 0), (1, 0, 2, 10, 0, 0)]);
    let mut b = builder();
    b.start_at(1);
    feed(&mut b, &events, 0, u64::MAX);
    assert!(b.checkpoint().is_none(), "the window has started");
    let mut whole = builder();
    feed(&mut whole, &events, 0, u64::MAX);
    assert!(whole.checkpoint().is_none(), "no window: nothing to resume");
}
