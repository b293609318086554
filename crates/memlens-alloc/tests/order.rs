//! Blocks fed out of time order (two processes whose events are fed one trace after
//! the other, the second's clock starting earlier): the model still holds them in
//! (allocation time, address) order, ends the run at the latest time any block
//! began or ended, and ends the blocks never freed there.

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
    let mut b = AllocModelBuilder::new();
    let p = b.add_process(ProcessInfo {
        pid: 1,
        ppid: 0,
        name: "p".into(),
    });
    let t = b.thread(p, 1, "");
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
