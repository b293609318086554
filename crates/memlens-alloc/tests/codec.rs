//! The stored allocation map (`AllocModel::encode`, `AllocModel::decode`): on random
//! event streams (allocations, frees, reallocations, reused and unknown addresses,
//! large mmap'd-looking blocks, two threads, sites, latencies; whole runs and
//! windows), the model read back is the model written — blocks, bins, tables, repairs,
//! latencies, what lies under any point, and the pixels of the map at two sizes — and
//! encodes to the same bytes; and damaged bytes (flipped, cut short or lengthened)
//! are refused or read into a model that draws, never a panic.

use memlens_alloc::*;
use proptest::prelude::*;

/// One event: (time step, kind 0 alloc / 1 free / 2 realloc, address slot, size,
/// second thread, large).
type Ev = (u64, u8, u8, u16, bool, bool);

fn model(events: &[Ev], window: Option<(f64, f64)>, latency: bool) -> AllocModel {
    let mut b = AllocModelBuilder::new();
    let p = b.add_process(ProcessInfo {
        pid: 7,
        ppid: 1,
        name: "codec".into(),
    });
    let sites: Vec<SiteId> = (0..3)
        .map(|i| b.site(&memlens_vocab::Site::at(&format!("f{i}"), "c.c", i + 1)))
        .collect();
    let threads = [b.thread(p, 7, "main"), b.thread(p, 8, "worker")];
    let mut t = 0;
    let timed: Vec<(u64, &Ev)> = events
        .iter()
        .map(|e| {
            t += e.0;
            (t, e)
        })
        .collect();
    let last = t + 1;
    let (from, to) = window.map_or((0, u64::MAX), |(a, len)| {
        let from = (a * last as f64) as u64;
        (from, from + 1 + (len * (last - from) as f64) as u64)
    });
    if window.is_some() {
        b.start_at(from);
    }
    for &(t, &(_, kind, slot, size, second, large)) in &timed {
        if t >= to {
            break;
        }
        let thread = threads[usize::from(second)];
        // Large blocks 16 bytes past a page in the mapping area look mmap'd.
        let (addr, size) = match large {
            true => (
                0x7f00_0000_0010 + u64::from(slot) * 0x40_0000,
                200_000 + u64::from(size),
            ),
            false => (0x1000 + u64::from(slot) * 0x100, u64::from(size) + 1),
        };
        let site = sites[usize::from(slot % 3)];
        let latency_ns = latency.then_some(u32::from(size as u16) * 3);
        match kind {
            0 => b.alloc(AllocEvent {
                t,
                thread,
                addr,
                size,
                site,
                latency_ns,
            }),
            1 => b.free(FreeEvent {
                t,
                thread,
                addr,
                site: sites[1],
                latency_ns,
            }),
            _ => b.realloc(ReallocEvent {
                t,
                thread,
                old_addr: addr,
                new_addr: 0x1000 + u64::from(slot.wrapping_mul(7) % 32) * 0x100,
                size,
                site,
                latency_ns,
            }),
        }
    }
    let mut model = b.finish(to.min(last));
    model.add_note("a note the reader added".into());
    model
}

fn picture(model: &AllocModel, width: u32, height: u32) -> Vec<u8> {
    let view = View::whole(model, width, height);
    render(model, &view, &RenderOptions::default())
        .map(|image| image.pixels)
        .unwrap_or_default()
}

fn events() -> impl Strategy<Value = Vec<Ev>> {
    prop::collection::vec(
        (
            0u64..5,
            0u8..3,
            0u8..32,
            0u16..3000,
            any::<bool>(),
            prop::bool::weighted(0.05),
        ),
        0..300,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn a_stored_model_reads_back_as_it_was(
        events in events(),
        window in prop::option::of((0.0f64..1.0, 0.0f64..1.0)),
        latency in any::<bool>(),
    ) {
        let written = model(&events, window, latency);
        let bytes = written.encode();
        let read = AllocModel::decode(&bytes).expect("its own bytes decode");
        prop_assert_eq!(read.blocks(), written.blocks());
        prop_assert_eq!(read.bins(), written.bins());
        prop_assert_eq!(read.run(), written.run());
        prop_assert_eq!(read.time_origin(), written.time_origin());
        prop_assert_eq!(read.is_window(), written.is_window());
        prop_assert_eq!(read.threads(), written.threads());
        prop_assert_eq!(read.processes(), written.processes());
        prop_assert_eq!(read.sites(), written.sites());
        prop_assert_eq!(read.diagnostics(), written.diagnostics());
        prop_assert_eq!(read.axis(), written.axis());
        for (i, _) in written.blocks().iter().enumerate() {
            let id = BlockId(i as u32);
            prop_assert_eq!(read.latency(id), written.latency(id));
            prop_assert_eq!(read.info(id), written.info(id));
        }
        let run = written.run();
        for k in 0..16u64 {
            let t = run.start_ns + (run.end_ns - run.start_ns) * k / 16;
            let y = written.axis().len() * k / 16;
            prop_assert_eq!(read.block_at(t, y), written.block_at(t, y));
        }
        prop_assert_eq!(picture(&read, 97, 61), picture(&written, 97, 61));
        prop_assert_eq!(picture(&read, 256, 256), picture(&written, 256, 256));
        prop_assert_eq!(read.encode(), bytes);
    }

    #[test]
    fn damaged_bytes_are_refused_or_draw(
        events in events(),
        cuts in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        mode in 0u8..3,
    ) {
        let mut bytes = model(&events, None, true).encode();
        match mode {
            0 => cuts.iter().for_each(|(at, x)| {
                let i = at.index(bytes.len());
                bytes[i] ^= x | 1;
            }),
            1 => bytes.truncate(cuts[0].0.index(bytes.len())),
            _ => bytes.extend(cuts.iter().map(|c| c.1)),
        }
        if let Ok(read) = AllocModel::decode(&bytes) {
            picture(&read, 64, 64);
        }
    }
}

#[test]
fn foreign_and_newer_bytes_are_refused_with_a_sentence() {
    let e = AllocModel::decode(b"MLHM\x02\0\0\0").unwrap_err();
    assert!(
        e.to_string().contains("not a memlens allocation map"),
        "{e}"
    );
    let mut bytes = model(&[(1, 0, 1, 10, false, false)], None, false).encode();
    bytes[4] = 99;
    let e = AllocModel::decode(&bytes).unwrap_err();
    assert!(e.to_string().contains("codec version 99"), "{e}");
    assert_eq!(e.offset, 4);
}
