//! How much of a run the allocation map reads. Its model holds every block it draws
//! in memory (~200 bytes each with its spatial index and the viewer's colour caches),
//! within a **budget**: 1 GiB by default, `MEMLENS_ALLOC_MEMORY` when set, and never
//! more than three quarters of the memory available. When the whole run's blocks
//! would not fit in it, the map reads a window instead: the one the user asked for
//! (`render alloc --time A..B`), or else the last stretch of the run that fits, at
//! the run's mean allocation rate, with a fifth kept for the blocks already live as
//! it starts. A window's model holds the live set until the window starts and the
//! blocks that overlap it (`memlens-alloc`'s `AllocModelBuilder::start_at`), and the
//! pass stops reading at its end. So the map's memory is bounded by the budget plus
//! the live set, whatever the number of events. The sentence saying which window is
//! decided here, once.

use memlens_heap::{format_bytes, format_duration};

use memlens_trace::Metadata;

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

/// The plan for a run of about `blocks` blocks ending at `run_end` ns, with `asked`
/// the user's window (used only when the whole run does not fit) and `budget` bytes
/// the map may use.
pub(crate) fn plan(blocks: u64, run_end: u64, asked: Option<(u64, u64)>, budget: u64) -> AllocPlan {
    let need = memory_of(blocks);
    if need <= budget {
        return AllocPlan {
            window: None,
            blocks,
            note: None,
        };
    }
    let run_end = run_end.max(1);
    let (from, to) = asked.unwrap_or_else(|| {
        let share = budget as f64 / need as f64 * 0.8;
        let len = ((run_end as f64 * share) as u64).clamp(1, run_end);
        (run_end - len, run_end)
    });
    let share = (to.saturating_sub(from)) as f64 / run_end as f64;
    let note = window_note(blocks, budget, (from, to), run_end, asked.is_some());
    AllocPlan {
        window: Some((from, to)),
        blocks: ((blocks as f64 * share.min(1.0)) as u64).max(1),
        note: Some(note),
    }
}

/// The sentence saying which window `[from, to)` of a run ending at `run_end` the
/// allocation map holds, its `blocks` blocks being too many for `budget` bytes;
/// `asked` when the user chose the window.
pub(crate) fn window_note(
    blocks: u64,
    budget: u64,
    (from, to): (u64, u64),
    run_end: u64,
    asked: bool,
) -> String {
    let share = (to.saturating_sub(from)) as f64 / run_end.max(1) as f64;
    let which = if asked {
        "the window asked for".to_owned()
    } else {
        format!("its last {:.1} %", share * 100.0)
    };
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
        let whole = plan(1_000_000, 10_000_000_000, None, DEFAULT_BUDGET);
        assert_eq!((whole.window, whole.note), (None, None));

        // 500 M blocks need 100 GB; 1 GiB is 1.07 % of it, 0.86 % of the run is read.
        let last = plan(500_000_000, 10_000_000_000, None, DEFAULT_BUDGET);
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
        let small = plan(1_000, 10_000, Some((1, 2)), DEFAULT_BUDGET);
        assert_eq!(small.window, None);
    }
}
