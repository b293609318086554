//! Helpers shared by the engine's tests: a one-process model from a list of blocks.

#![allow(dead_code, reason = "each test binary uses a part")]

use memlens_alloc::*;

/// `(t_alloc, t_free or None, addr, size, tid)`.
pub type Spec = (u64, Option<u64>, u64, u64, u32);

/// Builds a model of one process from blocks given as specs, ending at `end`.
pub fn model(blocks: &[Spec], end: u64) -> AllocModel {
    let mut b = AllocModelBuilder::new();
    let p = b.add_process(ProcessInfo {
        pid: 100,
        ppid: 1,
        name: "test".into(),
    });
    let mut events: Vec<(u64, u8, usize)> = Vec::new();
    for (i, s) in blocks.iter().enumerate() {
        events.push((s.0, 1, i));
        if let Some(t) = s.1 {
            events.push((t, 0, i));
        }
    }
    events.sort();
    for (t, kind, i) in events {
        let s = blocks[i];
        let thread = b.thread(p, s.4, "");
        if kind == 1 {
            b.alloc(AllocEvent {
                t,
                thread,
                addr: s.2,
                size: s.3,
                site: SiteId::UNKNOWN,
                latency_ns: None,
            });
        } else {
            b.free(FreeEvent {
                t,
                thread,
                addr: s.2,
                site: SiteId::UNKNOWN,
                latency_ns: None,
            });
        }
    }
    b.finish(end)
}
