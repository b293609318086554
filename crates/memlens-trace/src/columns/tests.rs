//! The column encoder's and decoder's tests: events written and read back.

use super::*;
use proptest::prelude::*;

/// One chunk's events from a small pool of addresses and a few sizes, so
/// that addresses are freed and reused within and across size classes,
/// reallocated in place and elsewhere, and freed without having been
/// allocated in the chunk (or twice).
fn events(ops: &[(u8, u8, u8, u8)]) -> Vec<Event> {
    let addr = |a: u8| u64::from(a % 48) * 48;
    let size = |s: u8| [1u64, 24, 40, 100, 1000, 70_000, 1 << 40][usize::from(s % 7)];
    let mut t = 1000;
    ops.iter()
        .map(|&(kind, a, b, s)| {
            t += u64::from(s % 3);
            match kind % 4 {
                0 | 1 => Event::Alloc {
                    t,
                    tid: 7,
                    addr: addr(a),
                    size: size(s),
                    stack: u32::from(b),
                    func: AllocFn::Malloc,
                },
                2 => Event::Free {
                    t,
                    tid: 7,
                    addr: addr(a),
                    stack: 0,
                },
                _ => Event::Realloc {
                    t,
                    tid: 7,
                    old_addr: addr(a),
                    new_addr: addr(b),
                    size: size(s),
                    stack: 3,
                },
            }
        })
        .collect()
}

proptest! {
    #[test]
    fn reused_addresses_round_trip(ops in proptest::collection::vec(any::<(u8, u8, u8, u8)>(), 1..3000)) {
        let events = events(&ops);
        let mut enc = ColumnEncoder::default();
        enc.reset(1000);
        for e in &events {
            enc.push(e);
        }
        let columns = enc.columns().iter().map(Vec::as_slice).collect();
        let got: Result<Vec<Event>, usize> =
            ColumnDecoder::new(columns, events.len() as u32, 7, 1000).collect();
        prop_assert_eq!(got, Ok(events));
    }
}
