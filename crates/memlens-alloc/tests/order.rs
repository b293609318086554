//! Blocks fed out of time order (two processes whose events are fed one trace after
//! the other, the second's clock starting earlier): the model still holds them in
//! (allocation time, address) order, ends the run at the latest time any block
//! began or ended, and ends the blocks never freed there. And a builder still being
//! fed (a trace still being written): its snapshots are the model so far, and sliding
//! its window keeps what a window started there would have.

use memlens_alloc::*;

fn alloc(b: &mut AllocModelBuilder, thread: ThreadId, t: u64, addr: u64) {
    b.alloc(AllocEvent {
        t,
        thread,
        addr,
        size: 32,
        site: SiteId::UNKNOWN,
        latency_ns: None,
    });
}

fn free(b: &mut AllocModelBuilder, thread: ThreadId, t: u64, addr: u64) {
    b.free(FreeEvent {
        t,
        thread,
        addr,
        site: SiteId::UNKNOWN,
        latency_ns: None,
    });
}

#[test]
fn blocks_fed_out_of_order_are_put_in_order() {
    let mut b = AllocModelBuilder::new();
    let info = |pid| ProcessInfo {
        pid,
        ppid: 1,
        name: format!("p{pid}"),
    };
    let (first, second) = (b.add_process(info(10)), b.add_process(info(11)));
    let (t1, t2) = (b.thread(first, 10, ""), b.thread(second, 11, ""));
    // The first process: two blocks, one freed at 900 (the latest time of all).
    alloc(&mut b, t1, 500, 0x2000);
    alloc(&mut b, t1, 600, 0x1000);
    free(&mut b, t1, 900, 0x2000);
    // The second process, fed after it, ran earlier; a block at the same time as
    // another, at a lower address.
    alloc(&mut b, t2, 100, 0x9000);
    alloc(&mut b, t2, 100, 0x8000);
    free(&mut b, t2, 200, 0x9000);
    let model = b.finish(0);
    let keys: Vec<(u64, u64)> = model.blocks().iter().map(|b| (b.t_alloc, b.addr)).collect();
    assert_eq!(
        keys,
        [(100, 0x8000), (100, 0x9000), (500, 0x2000), (600, 0x1000)]
    );
    assert_eq!(model.run().end_ns, 900);
    let ends: Vec<(u64, bool)> = model.blocks().iter().map(|b| (b.t_free, b.freed)).collect();
    assert_eq!(ends, [(900, false), (200, true), (900, true), (900, false)]);
}

#[test]
fn the_run_ends_at_the_latest_free_even_after_the_last_allocation() {
    let (mut b, t) = one_process();
    alloc(&mut b, t, 10, 0x1000);
    alloc(&mut b, t, 20, 0x2000);
    free(&mut b, t, 5_000, 0x1000);
    let model = b.finish(100);
    assert_eq!(model.run().end_ns, 5_000);
    assert_eq!(
        model.blocks()[1].t_free,
        5_000,
        "the live block ends with the run"
    );
}

/// A builder of one process with one thread.
fn one_process() -> (AllocModelBuilder, ThreadId) {
    let mut b = AllocModelBuilder::new();
    let p = b.add_process(ProcessInfo {
        pid: 1,
        ppid: 0,
        name: "p".into(),
    });
    let t = b.thread(p, 1, "");
    (b, t)
}

/// A snapshot of a builder still being fed (a trace still being written) is the
/// model of the events so far, and the builder goes on as if none had been taken.
#[test]
fn a_snapshot_is_the_model_so_far_and_leaves_the_builder_going_on() {
    let events = |b: &mut AllocModelBuilder, thread: ThreadId, from: u64, to: u64| {
        for i in from..to {
            let addr = 0x1000 + (i % 5) * 0x40;
            match i % 3 {
                0 => free(b, thread, i * 10, addr),
                _ => alloc(b, thread, i * 10, addr),
            }
        }
    };
    let ((mut going, t), (mut prefix, _), (mut whole, _)) =
        (one_process(), one_process(), one_process());
    events(&mut going, t, 0, 40);
    events(&mut prefix, t, 0, 40);
    assert_eq!(going.block_count(), prefix.block_count());
    let snapshot = going.snapshot(400);
    let so_far = prefix.finish(400);
    assert_eq!(snapshot.blocks(), so_far.blocks());
    assert_eq!(snapshot.run().end_ns, so_far.run().end_ns);
    assert!(snapshot.blocks().iter().any(|b| !b.freed));
    events(&mut going, t, 40, 90);
    events(&mut whole, t, 0, 90);
    let (going, whole) = (going.finish(900), whole.finish(900));
    assert_eq!(going.blocks(), whole.blocks());
    assert_eq!(going.run().end_ns, whole.run().end_ns);
}

/// Sliding the window of a builder being fed keeps exactly what a builder whose
/// window started there from the beginning keeps: the blocks live at the new start
/// or allocated after it, with their true times.
#[test]
fn sliding_the_window_keeps_what_a_window_started_there_keeps() {
    // Blocks of many lifetimes: some live through the whole run.
    let events = |b: &mut AllocModelBuilder, thread: ThreadId, from: u64, to: u64| {
        for i in from..to {
            let addr = 0x1000 + (i % 13) * 0x40;
            match i % 4 {
                0 | 1 if i % 13 != 3 => free(b, thread, i * 10, addr),
                _ => alloc(b, thread, i * 10, addr),
            }
        }
    };
    let (mut sliding, t) = one_process();
    events(&mut sliding, t, 0, 300);
    let before = sliding.block_count();
    let from = sliding.slide_window(40).expect("more than 40 blocks");
    assert!(sliding.block_count() < before);
    assert!(sliding.block_count() >= 40);
    events(&mut sliding, t, 300, 500);
    let (mut started, _) = one_process();
    started.start_at(from);
    events(&mut started, t, 0, 500);
    let (sliding, started) = (sliding.finish(5000), started.finish(5000));
    assert_eq!(sliding.blocks(), started.blocks());
    assert_eq!(sliding.run(), started.run());
    assert!(sliding.blocks().iter().any(|b| b.t_alloc < from));
}
