//! How much of a run the allocation map reads. Its model holds every block it draws
//! in memory (~200 bytes each with its spatial index and the viewer's colour caches),
//! within a **budget**: 1 GiB by default, `MEMLENS_ALLOC_MEMORY` when set, and never
//! more than three quarters of the memory available. When the whole run's blocks
//! would not fit in it, the map reads a window instead: the one the user asked for
//! (`render alloc --time A..B`), or else the last stretch of the run that fits, with
//! a fifth kept for the blocks already live as it starts. How many blocks a stretch
//! holds is read from the event chunks' headers ([`Spread`]: each chunk's time span
//! and record count), so a run that allocates in bursts (idle, then busy) gets the
//! stretch that fits, not the one its mean allocation rate would give. A window's model holds the live set until the window starts and the
//! blocks that overlap it (`memlens-alloc`'s `AllocModelBuilder::start_at`), and the
//! pass stops reading at its end. So the map's memory is bounded by the budget plus
//! the live set, whatever the number of events. The sentence saying which window is
//! decided here, once.

use memlens_heap::{format_bytes, format_duration};

use memlens_trace::Metadata;
use memlens_trace::format::ChunkKind;

use crate::input::TraceInput;

/// The memory the allocation map's model, its spatial index and the viewer's colour
/// caches take per block, measured on alloc-bench (`render alloc`: ~135 bytes; the
/// viewer: ~180).
const BYTES_PER_BLOCK: u64 = 200;

/// The memory the allocation map may use unless [`MEMORY_VARIABLE`] says otherwise.
pub const DEFAULT_BUDGET: u64 = 1 << 30;

/// The variable that sets the memory the allocation map may use (`512M`, `8G`).
pub const MEMORY_VARIABLE: &str = "MEMLENS_ALLOC_MEMORY";

/// What the allocation map reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AllocPlan {
    /// The window `[from, to)` on the model's timeline (ns), or `None` for the whole run.
    pub window: Option<(u64, u64)>,
    /// About how many blocks it will hold (for reserving).
    pub blocks: u64,
    /// The sentence for the user when it reads a window.
    pub note: Option<String>,
}

/// How a run's events spread over the allocation map's timeline, from the event
/// chunks' headers alone: each chunk's first and last times (with its trace's clock
/// offset) and its records. Within a chunk the events are taken as evenly spread.
#[derive(Debug, Clone, Default)]
pub(crate) struct Spread {
    /// `(first, last, records)` per event chunk.
    chunks: Vec<(u64, u64, u64)>,
    records: u64,
}

impl Spread {
    /// The spread of the event chunks of `inputs`, each trace at its clock offset.
    pub(crate) fn of(inputs: &[TraceInput]) -> Spread {
        let offsets = clock_offsets(inputs);
        let chunks = inputs.iter().zip(offsets).flat_map(|(input, offset)| {
            let events = input.file.chunks().iter();
            events
                .filter(|c| c.header.kind == ChunkKind::Events)
                .map(move |c| {
                    let h = &c.header;
                    let first = h.t_first.saturating_add(offset);
                    let last = h.t_last.max(h.t_first).saturating_add(offset);
                    (first, last, u64::from(h.records))
                })
        });
        Spread::from_chunks(chunks.collect())
    }

    /// The run's first instant: the earliest chunk's first time (0 without chunks).
    pub(crate) fn first(&self) -> u64 {
        self.chunks.iter().map(|c| c.0).min().unwrap_or(0)
    }

    /// The spread of chunks `(first, last, records)`.
    pub(crate) fn from_chunks(chunks: Vec<(u64, u64, u64)>) -> Spread {
        let records = chunks.iter().map(|c| c.2).sum();
        Spread { chunks, records }
    }

    /// The share of the events recorded in `[from, to)`, or `None` when no chunk
    /// says (the chunks hold no records).
    fn share(&self, from: u64, to: u64) -> Option<f64> {
        if self.records == 0 {
            return None;
        }
        let inside: f64 = self
            .chunks
            .iter()
            .map(|&(first, last, records)| {
                let (start, end) = (from.max(first), to.min(last.saturating_add(1)));
                let span = last - first + 1;
                end.saturating_sub(start) as f64 / span as f64 * records as f64
            })
            .sum();
        Some((inside / self.records as f64).min(1.0))
    }

    /// The earliest time by which `share` of the events up to `end` have been
    /// recorded (by bisection, as the share only grows with the time), or `None` when
    /// no chunk says.
    pub(crate) fn time_at_share(&self, share: f64, end: u64) -> Option<u64> {
        let first = self.first();
        let (mut lo, mut hi) = (first, end.max(first));
        let total = self.share(first, end)?;
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            match self.share(first, mid)? >= share * total {
                true => hi = mid,
                false => lo = mid,
            }
        }
        Some(hi)
    }

    /// The start of the longest stretch ending at `end` that holds at most `share` of
    /// the events (at least 1 ns long): the share only grows as the start moves back,
    /// so a bisection finds it.
    fn start_for(&self, share: f64, end: u64) -> Option<u64> {
        let (mut lo, mut hi) = (0u64, end.saturating_sub(1));
        if self.share(lo, end)? <= share {
            return Some(lo);
        }
        // Invariant: the stretch from `lo` holds more than `share`; the one from `hi`
        // holds at most `share`, or it is the shortest there is.
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            match self.share(mid, end)? <= share {
                true => hi = mid,
                false => lo = mid,
            }
        }
        Some(hi)
    }
}

/// The plan for a run of about `blocks` blocks ending at `run_end` ns, spread over it
/// as `spread` says, with `asked` the user's window (used only when the whole run does
/// not fit) and `budget` bytes the map may use.
pub(crate) fn plan(
    blocks: u64,
    run_end: u64,
    spread: &Spread,
    asked: Option<(u64, u64)>,
    budget: u64,
) -> AllocPlan {
    let need = memory_of(blocks);
    if need <= budget {
        return AllocPlan {
            window: None,
            blocks,
            note: None,
        };
    }
    let run_end = run_end.max(1);
    let time_share = |(from, to): (u64, u64)| to.saturating_sub(from) as f64 / run_end as f64;
    let (from, to) = asked.unwrap_or_else(|| {
        // A fifth of the budget is kept for the blocks live as the window starts.
        let share = budget as f64 / need as f64 * 0.8;
        let from = spread.start_for(share, run_end).unwrap_or_else(|| {
            let len = ((run_end as f64 * share) as u64).clamp(1, run_end);
            run_end - len
        });
        (from, run_end)
    });
    let share = spread
        .share(from, to)
        .unwrap_or_else(|| time_share((from, to)));
    // Where the run's events are not spread evenly, the share of its time says little
    // about what the window holds: the sentence then says how many of its blocks.
    let uneven = spread.records > 0 && (share - time_share((from, to))).abs() > 0.05;
    let held = uneven.then_some(share);
    let note = window_note(blocks, budget, (from, to), run_end, asked.is_some(), held);
    AllocPlan {
        window: Some((from, to)),
        blocks: ((blocks as f64 * share.min(1.0)) as u64).max(1),
        note: Some(note),
    }
}

/// `share` (0–1) as a percentage for a sentence: whole above 10 %, else to a tenth.
fn percent(share: f64) -> String {
    match share * 100.0 {
        p if p >= 10.0 => format!("{p:.0}"),
        p => format!("{p:.1}"),
    }
}

/// The sentence saying which window `[from, to)` of a run ending at `run_end` the
/// allocation map holds, its `blocks` blocks being too many for `budget` bytes;
/// `asked` when the user chose the window; `held` the share of the blocks it holds,
/// when that is worth saying.
pub(crate) fn window_note(
    blocks: u64,
    budget: u64,
    (from, to): (u64, u64),
    run_end: u64,
    asked: bool,
    held: Option<f64>,
) -> String {
    let share = (to.saturating_sub(from)) as f64 / run_end.max(1) as f64;
    let mut which = if asked {
        "the window asked for".to_owned()
    } else {
        format!("its last {:.1} %", share * 100.0)
    };
    if let Some(held) = held {
        which += &format!(" (about {} % of its blocks)", percent(held));
    }
    format!(
        "the allocation map of all {blocks} blocks would need about {}, more than the {} it \
         may use ({MEMORY_VARIABLE}): it shows {which}, {} – {} (with the blocks live as it \
         starts); `--time A..B` (`view`, `report`, `render alloc`) chooses another window",
        format_bytes(blocks.saturating_mul(BYTES_PER_BLOCK)),
        format_bytes(budget),
        format_duration(from),
        format_duration(to),
    )
}

/// About how many blocks the allocation map of the trace `md` describes holds: one per
/// allocation and reallocation, as the recorder counted them when it wrote its totals,
/// else about half the events.
pub(crate) fn blocks_of(md: &Metadata) -> u64 {
    match &md.totals {
        Some(t) => t.allocations + t.reallocations,
        None => md.event_records / 2,
    }
}

/// The memory the allocation map's model takes for `blocks` blocks (see
/// [`BYTES_PER_BLOCK`]).
pub(crate) fn memory_of(blocks: u64) -> u64 {
    blocks.saturating_mul(BYTES_PER_BLOCK)
}

/// Each trace's clock offset on the allocation map's common timeline: traces (a
/// parent and its forked children) are aligned on the wall-clock time of each one's
/// time 0, so the earliest starts the timeline at 0.
pub(crate) fn clock_offsets(inputs: &[TraceInput]) -> Vec<u64> {
    let start = |i: &TraceInput| i.metadata.process.as_ref().map(|p| p.start_unix_ns);
    let origin = inputs.iter().filter_map(start).min().unwrap_or(0);
    inputs
        .iter()
        .map(|i| start(i).map_or(0, |s| s.saturating_sub(origin)))
        .collect()
}

/// The end of the allocation map's timeline of `inputs` (ns), before reading their
/// events: what a window the user types (`--time 50%..`) is measured against.
pub fn timeline_end(inputs: &[TraceInput]) -> u64 {
    inputs
        .iter()
        .zip(clock_offsets(inputs))
        .map(|(i, offset)| i.metadata.last_time.saturating_add(offset))
        .max()
        .unwrap_or(0)
}

/// The memory the allocation map may use: [`MEMORY_VARIABLE`] when set (to a size),
/// else [`DEFAULT_BUDGET`]; never more than three quarters of what the kernel says is
/// available without swapping (`MemAvailable`). With the sentence saying why a value
/// set was not used.
pub(crate) fn memory_budget() -> (u64, Option<String>) {
    let (asked, why) = match std::env::var(MEMORY_VARIABLE) {
        Ok(value) => match memlens_vocab::parse_size(&value) {
            Ok(size) => (size, None),
            Err(e) => (
                DEFAULT_BUDGET,
                Some(format!(
                    "{MEMORY_VARIABLE}={value} is not used: {e}; the allocation map may use {}",
                    format_bytes(DEFAULT_BUDGET)
                )),
            ),
        },
        Err(_) => (DEFAULT_BUDGET, None),
    };
    let available = kernel_estimate().map_or(u64::MAX, |a| a / 4 * 3);
    (asked.min(available), why)
}

/// The memory the kernel says is available without swapping (`MemAvailable`).
fn kernel_estimate() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_whole_run_when_it_fits_else_the_last_stretch_that_does() {
        let whole = plan(1_000_000, 10_000_000_000, &even(), None, DEFAULT_BUDGET);
        assert_eq!((whole.window, whole.note), (None, None));

        // 500 M blocks need 100 GB; 1 GiB is 1.07 % of it, 0.86 % of the run is read.
        let last = plan(500_000_000, 10_000_000_000, &even(), None, DEFAULT_BUDGET);
        let (from, to) = last.window.expect("a window");
        assert_eq!(to, 10_000_000_000);
        let share = (to - from) as f64 / 1e10;
        assert!(
            (share - 0.8 * 1_073_741_824.0 / 1e11).abs() < 1e-6,
            "{share}"
        );
        assert!(last.blocks < 5_000_000, "{}", last.blocks);
        let note = last.note.expect("a sentence");
        assert!(note.contains("all 500000000 blocks"), "{note}");
        assert!(note.contains("more than the 1.00 GiB it may use"), "{note}");
        assert!(note.contains("its last 0.9 %"), "{note}");
        assert!(note.contains("--time A..B"), "{note}");

        // The user's window, when the whole run does not fit.
        let asked = plan(
            500_000_000,
            10_000_000_000,
            &even(),
            Some((1, 2_000_000)),
            DEFAULT_BUDGET,
        );
        assert_eq!(asked.window, Some((1, 2_000_000)));
        assert!(
            asked
                .note
                .expect("a sentence")
                .contains("the window asked for")
        );
        // And not when it does.
        let small = plan(1_000, 10_000, &even(), Some((1, 2)), DEFAULT_BUDGET);
        assert_eq!(small.window, None);
    }

    /// A run of 10 s recorded as 1,000 chunks of 1,000 events, evenly.
    fn even() -> Spread {
        let chunk = |i: u64| (i * 10_000_000, (i + 1) * 10_000_000 - 1, 1_000);
        Spread::from_chunks((0..1_000).map(chunk).collect())
    }

    #[test]
    fn a_run_that_allocates_in_bursts_gets_the_stretch_that_fits_not_its_mean_rate() {
        // 10 s: nothing for 9 s but 10 events, then 1 M events in the last second.
        let mut chunks = vec![(0, 8_999_999_999, 10)];
        let chunk = |i: u64| {
            (
                9_000_000_000 + i * 1_000_000,
                9_000_000_000 + (i + 1) * 1_000_000 - 1,
                1_000,
            )
        };
        chunks.extend((0..1_000).map(chunk));
        let spread = Spread::from_chunks(chunks);
        // 5 M blocks need 1 GB; half that budget reads 40 % of the events: 0.4 s of
        // the burst, not 40 % of the run (which would be all of the burst).
        let budget = 500_000_000;
        let p = plan(5_000_000, 10_000_000_000, &spread, None, budget);
        let (from, to) = p.window.expect("a window");
        assert_eq!(to, 10_000_000_000);
        let read = (to - from) as f64;
        assert!((read - 0.4e9).abs() < 2e6, "{read} ns read");
        let note = p.note.as_deref().expect("a sentence");
        assert!(
            note.contains("its last 4.0 % (about 40 % of its blocks)"),
            "{note}"
        );
        assert!(
            (p.blocks as f64 - 2e6).abs() < 2e4,
            "{} blocks expected",
            p.blocks
        );
        // Evenly spread, the same budget reads 40 % of the run, and the sentence says
        // so only.
        let p = plan(5_000_000, 10_000_000_000, &even(), None, budget);
        let (from, to) = p.window.expect("a window");
        assert!(((to - from) as f64 - 4e9).abs() < 2e7, "{}", to - from);
        let note = p.note.as_deref().expect("a sentence");
        assert!(!note.contains("of its blocks"), "{note}");
        // With no chunk to go by, the mean rate decides.
        let p = plan(5_000_000, 10_000_000_000, &Spread::default(), None, budget);
        let (from, to) = p.window.expect("a window");
        assert!(((to - from) as f64 - 4e9).abs() < 2e7, "{}", to - from);
    }

    #[test]
    fn the_time_by_which_a_share_of_the_events_was_recorded() {
        // Evenly: a share of the events is that share of the run.
        let t = even().time_at_share(0.25, 10_000_000_000).expect("chunks");
        assert!((t as f64 - 2.5e9).abs() < 1e7, "{t}");
        // In a burst: 10 events in 9 s, then 1 M in the last second; half the events
        // are recorded half a second into the burst.
        let mut chunks = vec![(0, 8_999_999_999, 10)];
        chunks.push((9_000_000_000, 9_999_999_999, 1_000_000));
        let t = Spread::from_chunks(chunks).time_at_share(0.5, 10_000_000_000);
        let t = t.expect("chunks");
        assert!((t as f64 - 9.5e9).abs() < 1e7, "{t}");
        assert_eq!(Spread::default().time_at_share(0.5, 100), None);
    }
}
