//! Free sites and the program's own mappings: a block freed by a recorded free names
//! the freeing site (unknown without free stacks, the `realloc` that moved it); mapping
//! events become blocks of one mapping bin per process, a partial `munmap` shrinks or
//! splits a mapping, mapping over a live mapping replaces it, and a replay leaves the
//! mappings out.

use memlens_alloc::*;
use memlens_vocab::Site;

const PAGE: u64 = 4096;

fn site(b: &mut AllocModelBuilder, function: &str) -> SiteId {
    b.site(&Site {
        function: function.into(),
        file: "prog.c".into(),
        line: 7,
        ..Site::default()
    })
}

fn builder() -> (AllocModelBuilder, ThreadId) {
    let mut b = AllocModelBuilder::new();
    let p = b.add_process(ProcessInfo {
        pid: 100,
        ppid: 1,
        name: "prog".into(),
    });
    let thread = b.thread(p, 100, "main");
    (b, thread)
}

fn alloc(b: &mut AllocModelBuilder, thread: ThreadId, t: u64, addr: u64, site: SiteId) {
    b.alloc(AllocEvent {
        t,
        thread,
        addr,
        size: 100,
        site,
        latency_ns: None,
    });
}

fn free(b: &mut AllocModelBuilder, thread: ThreadId, t: u64, addr: u64, site: SiteId) {
    b.free(FreeEvent {
        t,
        thread,
        addr,
        site,
        latency_ns: None,
    });
}

/// The block allocated at `addr`, first in time.
fn block_at_addr(m: &AllocModel, addr: u64) -> BlockInfo {
    let i = m.blocks().iter().position(|b| b.addr == addr).unwrap();
    m.info(BlockId(i as u32))
}

#[test]
fn blocks_name_the_site_that_freed_them() {
    let (mut b, thread) = builder();
    let make = site(&mut b, "make_a");
    let drop = site(&mut b, "drop_a");
    let grow = site(&mut b, "grow");
    alloc(&mut b, thread, 10, 0x1000, make);
    alloc(&mut b, thread, 20, 0x2000, make);
    alloc(&mut b, thread, 25, 0x3000, make);
    free(&mut b, thread, 30, 0x1000, drop);
    // No free stack recorded: unknown.
    free(&mut b, thread, 40, 0x2000, SiteId::UNKNOWN);
    b.realloc(ReallocEvent {
        t: 50,
        thread,
        old_addr: 0x3000,
        new_addr: 0x4000,
        size: 300,
        site: grow,
        latency_ns: None,
    });
    let m = b.finish(100);
    let first = block_at_addr(&m, 0x1000);
    assert_eq!((first.site, first.free_site), (make, drop));
    assert_eq!(first.site_label, "make_a (prog.c:7)");
    assert_eq!(first.free_site_label, "drop_a (prog.c:7)");
    let second = block_at_addr(&m, 0x2000);
    assert_eq!(second.free_site, SiteId::UNKNOWN);
    assert_eq!(second.free_site_label, "");
    // Moved by realloc: the realloc freed it; the new block is not freed.
    assert_eq!(block_at_addr(&m, 0x3000).free_site, grow);
    let moved = block_at_addr(&m, 0x4000);
    assert_eq!((moved.t_free, moved.free_site), (None, SiteId::UNKNOWN));
    assert!(!moved.mapping);
}

fn map(b: &mut AllocModelBuilder, thread: ThreadId, t: u64, addr: u64, len: u64, site: SiteId) {
    b.map(MapEvent {
        t,
        thread,
        addr,
        len,
        site,
    });
}

fn unmap(b: &mut AllocModelBuilder, thread: ThreadId, t: u64, addr: u64, len: u64) {
    b.unmap(UnmapEvent {
        t,
        thread,
        addr,
        len,
    });
}

/// `(t_alloc, t_free, addr, reserved)` of the mapping blocks, by address then time.
fn mapping_blocks(m: &AllocModel) -> Vec<(u64, Option<u64>, u64, u64)> {
    let mut out: Vec<(u64, Option<u64>, u64, u64)> = m
        .blocks()
        .iter()
        .filter(|b| b.mapping)
        .map(|b| (b.t_alloc, b.freed.then_some(b.t_free), b.addr, b.reserved))
        .collect();
    out.sort_by_key(|&(t, _, addr, _)| (addr, t));
    out
}

#[test]
fn a_partial_munmap_shrinks_or_splits_a_mapping_in_a_bin_of_its_own() {
    let (mut b, thread) = builder();
    let pool = site(&mut b, "map_pool");
    let base = 0x7f00_0000_0000;
    alloc(&mut b, thread, 5, 0x5555_0000_1000, SiteId::UNKNOWN);
    map(&mut b, thread, 10, base, 64 * PAGE, pool);
    // The upper half goes: the mapping shrinks.
    unmap(&mut b, thread, 20, base + 32 * PAGE, 32 * PAGE);
    // A page in the middle of what is left: it splits.
    unmap(&mut b, thread, 30, base + 8 * PAGE, 100);
    // Unmapping what was never mapped (the loader's, the allocator's): ignored.
    unmap(&mut b, thread, 35, base + 1000 * PAGE, PAGE);
    let m = b.finish(100);
    assert_eq!(
        mapping_blocks(&m),
        [
            (10, Some(20), base, 64 * PAGE),
            (20, Some(30), base, 32 * PAGE),
            (30, None, base, 8 * PAGE),
            (30, None, base + 9 * PAGE, 23 * PAGE),
        ]
    );
    // Every piece keeps the mapping's site and thread; a mapping is no heap block.
    for i in 0..m.blocks().len() {
        let info = m.info(BlockId(i as u32));
        if info.mapping {
            assert_eq!(info.site_label, "map_pool (prog.c:7)");
            assert_eq!(info.tid, 100);
            assert_eq!(info.waste, 0);
        }
    }
    let kinds: Vec<BinKind> = m.bins().iter().map(|b| b.kind).collect();
    assert_eq!(kinds, [BinKind::MainHeap, BinKind::Mapping]);
    let bin = &m.bins()[1];
    assert_eq!(bin.name, "mappings");
    assert_eq!(
        (bin.start, bin.end, bin.blocks),
        (base, base + 64 * PAGE, 4)
    );
    assert!(m.blocks().iter().all(|b| b.mapping == (b.addr >= base)));
    let at_end: u64 = m
        .blocks()
        .iter()
        .filter(|b| b.mapping && !b.freed)
        .map(|b| b.reserved)
        .sum();
    assert_eq!(at_end, 31 * PAGE);
}

#[test]
fn mapping_over_a_live_mapping_replaces_it_and_an_mremap_moves_it() {
    let (mut b, thread) = builder();
    let first = site(&mut b, "first");
    let second = site(&mut b, "second");
    let base = 0x7f00_0000_0000;
    map(&mut b, thread, 10, base, 4 * PAGE, first);
    // MAP_FIXED over the middle two pages.
    map(&mut b, thread, 20, base + PAGE, 2 * PAGE + 1, second);
    // An mremap: the old range goes, the new one comes, at the same time.
    unmap(&mut b, thread, 30, base + 3 * PAGE, PAGE);
    map(&mut b, thread, 30, base + 100 * PAGE, 2 * PAGE, second);
    let m = b.finish(40);
    assert_eq!(
        mapping_blocks(&m),
        [
            (10, Some(20), base, 4 * PAGE),
            (20, None, base, PAGE),
            // 2 pages + 1 byte map 3 whole pages; the mremap takes the last.
            (20, Some(30), base + PAGE, 3 * PAGE),
            (30, None, base + PAGE, 2 * PAGE),
            (30, None, base + 100 * PAGE, 2 * PAGE),
        ]
    );
    // Without a single heap block the mappings still make their bin.
    assert_eq!(m.bins().len(), 1);
    assert_eq!(m.bins()[0].kind.name(), "mapping");
}

#[test]
fn mapped_bytes_match_the_mapping_blocks() {
    let mut mapped = MappedBytes::new();
    let base = 0x7f00_0000_0000;
    mapped.map(10, base, 64 * PAGE);
    mapped.unmap(base + 32 * PAGE, 32 * PAGE);
    mapped.unmap(base + 8 * PAGE, 100);
    assert_eq!(mapped.bytes(), 31 * PAGE);
    assert_eq!(mapped.peak(), (64 * PAGE, 10));
}

#[test]
fn a_replay_leaves_the_programs_own_mappings_out() {
    let (mut b, thread) = builder();
    alloc(&mut b, thread, 5, 0x5555_0000_1000, SiteId::UNKNOWN);
    map(
        &mut b,
        thread,
        10,
        0x7f00_0000_0000,
        64 * PAGE,
        SiteId::UNKNOWN,
    );
    let m = b.finish(100);
    let config = PoolConfig::new(vec![PoolBin {
        block_size: 128,
        count: 4,
    }]);
    let (replayed, report) = replay(&m, &config).unwrap();
    assert_eq!(report.requests, 1);
    assert_eq!(replayed.blocks().len(), 1);
    assert!(replayed.blocks().iter().all(|b| !b.mapping));
}
