//! Free stacks and mappings (`memlens record --free-stacks --mmap`): the
//! optional free-stack column of event chunks round-trips through the writer,
//! the time merge and the dump, alone and with latencies; chunks without it are
//! byte for byte what they were; readers that know ten or twelve columns read
//! chunks with it unchanged; a damaged free-stack column is damage with the
//! events before it kept; mmap and munmap records round-trip through the
//! process stream.

mod common;

use memlens_trace::columns::{
    BASE_COLUMNS, COLUMNS, ColumnDecoder, ColumnEncoder, LATENCY_COLUMNS, col,
};
use memlens_trace::{Event, MapChange, Mapping, Meta, Metadata, TraceWriter, Unmapping};
use proptest::prelude::*;

/// `events` with a stack on every free for which `stack_of` gives one.
fn with_free_stacks(events: &[Event], stack_of: impl Fn(usize) -> u32) -> Vec<Event> {
    events
        .iter()
        .enumerate()
        .map(|(i, e)| match *e {
            Event::Free { t, tid, addr, .. } => Event::Free {
                t,
                tid,
                addr,
                stack: stack_of(i),
            },
            e => e,
        })
        .collect()
}

fn write(events: &[Event], chunk_bytes: usize, latency: impl Fn(usize) -> Option<u32>) -> Vec<u8> {
    let mut w = TraceWriter::new(Vec::new(), true)
        .unwrap()
        .with_chunk_bytes(chunk_bytes);
    w.meta(&common::process()).unwrap();
    for (i, e) in events.iter().enumerate() {
        w.event_with_latency(e, latency(i)).unwrap();
    }
    w.finish().unwrap()
}

fn sorted(events: &[Event], latency: impl Fn(usize) -> Option<u32>) -> Vec<(Event, Option<u32>)> {
    let mut want: Vec<(Event, Option<u32>)> = events
        .iter()
        .enumerate()
        .map(|(i, e)| (*e, latency(i)))
        .collect();
    want.sort_by_key(|(e, _)| (e.time(), e.tid()));
    want
}

#[test]
fn free_stacks_come_back_with_their_frees_with_and_without_latencies() {
    // Some frees without a stack (0), in chunks small enough that some chunks
    // have no free stack at all.
    let events = with_free_stacks(&common::events(6000), |i| {
        if i % 700 < 300 { 0 } else { 1 + i as u32 % 4 }
    });
    let lat = |i: usize| i.is_multiple_of(3).then_some(40 + i as u32 % 90);
    for latency in [false, true] {
        let latency_of = |i| if latency { lat(i) } else { None };
        let bytes = write(&events, 900, latency_of);
        let (got, damage) = common::read_back(&bytes);
        assert!(damage.is_empty(), "{damage:?}");
        assert_eq!(got, sorted(&events, latency_of), "latency {latency}");
    }
}

#[test]
fn traces_without_free_stacks_are_unchanged() {
    // The frees of `common::events` have no stack: the bytes are those of the
    // plain writer, and the chunks keep their ten columns.
    let events = common::events(3000);
    assert_eq!(
        write(&events, 700, |_| None),
        write(&with_free_stacks(&events, |_| 0), 700, |_| None)
    );
    let mut enc = ColumnEncoder::default();
    enc.reset(0);
    for e in &events[..200] {
        enc.push(e);
    }
    assert!(!enc.has_free_stacks() && !enc.has_latency());
    assert_eq!(enc.columns().len(), BASE_COLUMNS);
}

fn decode(columns: &[Vec<u8>], events: &[Event]) -> Vec<Result<(Event, Option<u32>), usize>> {
    let cols: Vec<&[u8]> = columns.iter().map(Vec::as_slice).collect();
    let mut d = ColumnDecoder::new(cols, events.len() as u32, 9, events[0].time());
    let mut out = Vec::new();
    while let Some(r) = d.next() {
        out.push(r.map(|e| (e, d.latency_ns())));
    }
    out
}

#[test]
fn the_first_free_stack_in_the_middle_of_a_chunk_gives_earlier_frees_none() {
    let events = with_free_stacks(&common::thread9(200), |i| if i >= 40 { 7 } else { 0 });
    let cols = common::encode(&events, |_| None);
    assert_eq!(cols.len(), COLUMNS);
    // The latency columns are there, all "not measured".
    assert!(cols[col::LAT_ALLOC].iter().all(|&b| b == 0));
    assert!(cols[col::LAT_FREE].iter().all(|&b| b == 0));
    let got = decode(&cols, &events);
    let got: Vec<(Event, Option<u32>)> = got.into_iter().map(Result::unwrap).collect();
    let want: Vec<(Event, Option<u32>)> = events.iter().map(|e| (*e, None)).collect();
    assert_eq!(got, want);
    // With latencies that start later still.
    let cols = common::encode(&events, |i| (i >= 100).then_some(i as u32));
    let got: Vec<(Event, Option<u32>)> = decode(&cols, &events)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let want: Vec<(Event, Option<u32>)> = events
        .iter()
        .enumerate()
        .map(|(i, e)| (*e, (i >= 100).then_some(i as u32)))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn older_readers_read_chunks_with_free_stacks() {
    // A reader that knows ten or twelve columns passes only those: it reads the
    // same events, with the frees' stacks as 0 (unknown).
    let events = with_free_stacks(&common::thread9(300), |i| 1 + i as u32);
    let cols = common::encode(&events, |_| None);
    let plain = with_free_stacks(&events, |_| 0);
    for known in [BASE_COLUMNS, LATENCY_COLUMNS] {
        let got: Vec<Event> = decode(&cols[..known], &events)
            .into_iter()
            .map(|r| r.unwrap().0)
            .collect();
        assert_eq!(got, plain, "{known} columns");
    }
}

#[test]
fn a_damaged_free_stack_column_is_reported_and_earlier_events_kept() {
    let events = with_free_stacks(&common::thread9(400), |i| 1 + (i % 100) as u32);
    let frees: Vec<usize> = (0..events.len())
        .filter(|&i| matches!(events[i], Event::Free { .. }))
        .collect();
    let mut cols = common::encode(&events, |_| None);
    cols[col::FREE_STACK].truncate(10);
    let (got, damage) = common::read_back(&common::file_with_chunk(&cols, &events));
    assert_eq!(got.len(), frees[10], "every event before the 11th free");
    assert_eq!(damage.len(), 1);
    assert!(damage[0].reason.contains("does not decode"), "{damage:?}");
}

#[test]
fn dump_names_free_stacks_and_mappings() {
    let events = with_free_stacks(&common::events(40), |i| if i == 3 { 4 } else { 0 });
    let mut w = TraceWriter::new(Vec::new(), true).unwrap();
    w.meta(&common::process()).unwrap();
    for m in mappings() {
        w.meta(&m).unwrap();
    }
    for e in &events {
        w.event(e).unwrap();
    }
    let bytes = w.finish().unwrap();
    let (_dir, trace) = common::open(&bytes);
    let mut out = Vec::new();
    memlens_trace::dump::dump(&trace, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let frees: Vec<&str> = text.lines().filter(|l| l.contains(" free ")).collect();
    assert_eq!(frees.len(), 10);
    assert_eq!(
        frees.iter().filter(|l| l.ends_with(" stack=4")).count(),
        1,
        "{text}"
    );
    assert!(
        text.contains(
            "2000 mmap tid=7 addr=0x7f0000000000 len=65536 prot=0x3 flags=0x22 anonymous stack=3"
        ),
        "{text}"
    );
    assert!(text.contains("3000 munmap tid=7 addr=0x7f0000008000 len=32768"));
    assert!(text.contains("4000 mmap tid=9 addr=0x7f0000100000 len=4096 prot=0x1 flags=0x1 file"));
    assert!(text.contains(
        "5000 mmap tid=9 addr=0x7f0000200000 len=8192 prot=0x0 flags=0x0 anonymous remap stack=0"
    ));
}

fn mappings() -> Vec<Meta> {
    let map = |t, tid, addr, len, prot, flags, file, remap, stack| {
        Meta::Mmap(Mapping {
            t,
            tid,
            addr,
            len,
            prot,
            flags,
            file,
            remap,
            stack,
        })
    };
    vec![
        map(2000, 7, 0x7f00_0000_0000, 65536, 3, 0x22, false, false, 3),
        Meta::Munmap(Unmapping {
            t: 3000,
            tid: 7,
            addr: 0x7f00_0000_8000,
            len: 32768,
        }),
        map(4000, 9, 0x7f00_0010_0000, 4096, 1, 1, true, false, 2),
        Meta::Munmap(Unmapping {
            t: 5000,
            tid: 9,
            addr: 0x7f00_0010_0000,
            len: 4096,
        }),
        map(5000, 9, 0x7f00_0020_0000, 8192, 0, 0, false, true, 0),
    ]
}

#[test]
fn mappings_round_trip_in_time_order() {
    let mut w = TraceWriter::new(Vec::new(), false)
        .unwrap()
        .with_chunk_bytes(64);
    w.meta(&common::process()).unwrap();
    // Written out of order across chunks: the metadata sorts them by time,
    // keeping an mremap's unmapping before its mapping.
    let mut records = mappings();
    records.rotate_left(2);
    for m in &records {
        w.meta(m).unwrap();
    }
    let bytes = w.finish().unwrap();
    let (_dir, trace) = common::open(&bytes);
    let mut damage = Vec::new();
    let md = Metadata::load(&trace, &mut damage);
    assert!(damage.is_empty());
    let want: Vec<MapChange> = mappings()
        .into_iter()
        .map(|m| match m {
            Meta::Mmap(m) => MapChange::Map(m),
            Meta::Munmap(u) => MapChange::Unmap(u),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(md.mappings, want);
    // Without them, none.
    let (_dir, plain) = common::open(&common::write_trace(10, 1 << 20, true));
    assert!(Metadata::load(&plain, &mut damage).mappings.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any mix of events, free stacks and latencies, cut into chunks of any
    /// size, reads back exactly.
    #[test]
    fn free_stacks_and_latencies_round_trip(
        n in 1u64..600,
        chunk in 64usize..4000,
        stack_every in 0usize..5,
        latency_every in 0usize..5,
    ) {
        let events = with_free_stacks(&common::events(n), |i| {
            if stack_every > 0 && i.is_multiple_of(stack_every) { 1 + i as u32 } else { 0 }
        });
        let latency = |i: usize| (latency_every > 0 && i.is_multiple_of(latency_every)).then_some(i as u32);
        let (got, damage) = common::read_back(&write(&events, chunk, latency));
        prop_assert!(damage.is_empty());
        prop_assert_eq!(got, sorted(&events, latency));
    }
}
