//! The batched statistics-only loop behind [`Hierarchy::run`] and
//! [`crate::Simulation::access_all`], for hierarchies of the fast path's shape
//! (non-inclusive, every level write-back, write-allocate, LRU or FIFO with at most
//! 16 ways: see `fast_path.rs`).
//!
//! It computes what [`Hierarchy::fast_access`] computes, level by level instead of
//! reference by reference, in two tight passes over a batch:
//! 1. the first level over the references: its line compared with the set's most
//!    recent one, then the set scanned; a hit ends the reference (most references),
//!    a miss fills the line (dirty for a store) and queues the reference for the
//!    levels below. Every reference is tallied here (its region and access kind, as
//!    served by the first level) and, when the outcomes are wanted, linked to the
//!    previous one of its region (see `tally.rs`);
//! 2. the levels below over the queued misses, in order: each is scanned (its front
//!    is rarely the line: that is the line the level above holds already) until one
//!    hits, then the levels that missed are filled from the bottom up, and the level
//!    that served the reference is counted.
//!
//! Then the outcome codes go to a [`CodeSink`] (the windows of a simulation, or
//! nowhere), which only needs the last ones.
//!
//! Doing the first level for many references before the levels below is exact in a
//! non-inclusive hierarchy: a level never looks at the levels below it, and each
//! level sees its own traffic in the same order as reference by reference. Dirty
//! victims carry data down, in order too: a first-level victim is queued for pass 2
//! right after the miss that evicted it, and delivered there with the general
//! write-back; pass 2 stops after a reference that evicts a dirty line above the
//! last level, which is delivered the same way before the next reference. The first
//! pass stops before a reference that spans lines, which the caller simulates on
//! the general path, and before the first reference of a region the statistics do
//! not have yet (the batch ends there; the next one starts with room for it).
//!
//! Each pass views its levels once ([`LeanLevel`]), with the level count, the way
//! count, the line size and the set indexing made constants for the common shapes,
//! so the loops unroll; they make no calls (which would cost them registers): what
//! needs one ends the loop, and the caller resumes it.

use crate::events::NoEvents;
use crate::geometry::MAX_LEVELS;
use crate::hierarchy::Hierarchy;
use crate::lean::LeanLevel;
use crate::level::key_of;
use crate::outcome::{CodeSink, Outcome};
use crate::reference::{Reference, ReferenceBounds, RegionId};
use crate::tally::{BatchTally, RegionTally, tally};

/// A dirty line that left a level: the level, the line's address, the region that
/// filled it.
type DirtyVictim = (usize, u64, RegionId);

/// The [`Work`] index of a first-level dirty victim, not a miss (a reference index).
const WRITE_BACK: u32 = u32::MAX;

/// A pass-2 queue entry: a first-level miss, with what pass 2 needs of its
/// reference, or a first-level dirty victim (index [`WRITE_BACK`], the line's
/// address and its owner region as `row`).
#[derive(Clone, Copy, Debug, Default)]
struct Work {
    /// The reference's address.
    addr: u64,
    /// The reference's index in the batch.
    index: u32,
    /// The reference's region × 4 + access kind.
    row: u32,
}

impl Work {
    /// Whether the entry is a dirty victim: its index has the top bit set, which no
    /// reference's has (a batch holds fewer than `WRITE_BACK / 2`), so the test is
    /// one of the sign.
    #[inline(always)]
    fn is_write_back(&self) -> bool {
        self.index > WRITE_BACK / 2
    }
}

/// The `LOWER` of a pass over any number of levels below the first (there are
/// fewer than [`MAX_LEVELS`], so no constant count is this one).
const ANY: usize = MAX_LEVELS;

/// The batched loop's buffers, kept from batch to batch.
#[derive(Clone, Debug, Default)]
pub(crate) struct BatchScratch {
    /// Per reference, the level that served it.
    served: Vec<u8>,
    /// Pass 2's work, in order: first-level misses and dirty victims.
    queue: Vec<Work>,
    /// Dirty victims of levels below the first, to deliver when pass 2 stops.
    victims: Vec<DirtyVictim>,
    /// The batch's tally (per region and access kind, its references; per
    /// reference, the previous one of its region), and how many of those references
    /// each level below the first served (see `Statistics::add_batch`).
    tally: BatchTally,
    below: Vec<u32>,
}

/// Why the first-level pass stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// At the end of the references.
    End,
    /// Before a reference that spans lines.
    Span,
    /// Before the first reference of a region the statistics do not have yet.
    Region,
}

/// How far the first-level pass went.
struct FirstPass {
    /// References simulated.
    done: usize,
    /// Why it stopped.
    stop: Stop,
    /// Entries queued for pass 2.
    queued: usize,
}

impl Hierarchy {
    /// Simulates a batch of references on the batched loop (see the module
    /// documentation) and accounts for them in the statistics and `codes`. Returns
    /// how many references it simulated (it stops before a region the statistics
    /// did not have, after making room for it) and whether it stopped before a
    /// reference that spans lines.
    ///
    /// With `bounds` that say no reference spans a first-level line, pass 1 leaves
    /// out its check of each reference's span and region: room is made for every
    /// region first, and the tallies are a power of two long, so that a region
    /// masked into them stays in bounds whatever the bounds said.
    pub(crate) fn fast_batch<C: CodeSink>(
        &mut self,
        references: &[Reference],
        bounds: ReferenceBounds,
        codes: &mut C,
    ) -> (usize, bool) {
        let mut scratch = std::mem::take(&mut self.scratch);
        // (A batch's references are indexed by `u32`s below `WRITE_BACK`.)
        let references = &references[..references.len().min(WRITE_BACK as usize / 2)];
        let n = references.len();
        // Pass 1 leaves the hits' zeros as they are.
        scratch.served.clear();
        scratch.served.resize(n, 0);
        if scratch.queue.len() < 2 * n {
            scratch.queue.resize(2 * n, Work::default());
        }
        let checks = !bounds.within_lines_of(u64::from(self.levels[0].geometry.line_size));
        if !checks {
            self.stats.ensure_region(bounds.max_region);
        }
        let (regions, width) = (self.stats.region_count(), self.levels.len() + 1);
        let tallied = if checks {
            regions
        } else {
            regions.next_power_of_two()
        };
        if scratch.below.len() < 4 * tallied * width {
            scratch.below.resize(4 * tallied * width, 0);
        }
        let BatchScratch {
            served,
            queue,
            victims,
            tally,
            below,
        } = &mut scratch;
        let below = &mut below[..4 * tallied * width];
        let first = {
            let (tallies, previous) = tally.start(n, tallied, C::LINKS);
            let (r, q, t, p) = (references, &mut queue[..], tallies, previous);
            match (C::LINKS, checks) {
                (true, true) => self.first_level_pass::<true, true>(r, q, t, p),
                (true, false) => self.first_level_pass::<true, false>(r, q, t, p),
                (false, true) => self.first_level_pass::<false, true>(r, q, t, p),
                (false, false) => self.first_level_pass::<false, false>(r, q, t, p),
            }
        };
        let mut at = 0;
        while at < first.queued {
            let work = &queue[at..first.queued];
            at += self.lower_levels_pass(work, served, below, victims);
            victims.drain(..).for_each(|victim| self.deliver(victim));
        }
        let done = first.done;
        let code_of: Vec<u32> = (0..width)
            .map(|s| Outcome::served(s, self.levels.len()).code())
            .collect();
        codes.record_batch(&references[..done], &served[..done], tally, &code_of);
        self.stats.add_batch(&tally.regions[..tallied], below);
        tally.clear();
        self.scratch = scratch;
        if first.stop == Stop::Region
            && let Some(reference) = references.get(done)
        {
            // Room for the new region; the caller goes on from it.
            self.stats.ensure_region(reference.region);
        }
        (done, first.stop == Stop::Span)
    }

    /// Counts a dirty victim and writes it back to the level below, if any.
    fn deliver(&mut self, (level, addr, owner): DirtyVictim) {
        self.stats.at(owner, level).write_backs += 1;
        if level + 1 < self.levels.len() {
            self.write_back(level + 1, addr, owner, &mut NoEvents);
        }
    }

    /// Pass 1: the first level over `references`, tallying every reference in
    /// `regions` (every known region) and, when `LINK`, linking it in `previous`,
    /// and queueing the misses and the dirty victims for pass 2 in `queue` (at least
    /// twice as long as `references`).
    fn first_level_pass<const LINK: bool, const CHECKS: bool>(
        &mut self,
        references: &[Reference],
        queue: &mut [Work],
        regions: &mut [RegionTally],
        previous: &mut [u32],
    ) -> FirstPass {
        let g = self.levels[0].geometry;
        let (r, q, t, p) = (references, queue, regions, previous);
        // 64-byte lines (the usual) make the line arithmetic constant too.
        match (g.sets.is_power_of_two(), g.ways, g.line_size == 64) {
            (true, 8, true) => self.first_level_pass_of::<true, 8, 6, LINK, CHECKS>(r, q, t, p),
            (true, 8, false) => self.first_level_pass_of::<true, 8, 0, LINK, CHECKS>(r, q, t, p),
            (true, 16, _) => self.first_level_pass_of::<true, 16, 0, LINK, CHECKS>(r, q, t, p),
            (true, 4, _) => self.first_level_pass_of::<true, 4, 0, LINK, CHECKS>(r, q, t, p),
            (true, _, _) => self.first_level_pass_of::<true, 0, 0, LINK, CHECKS>(r, q, t, p),
            (false, _, _) => self.first_level_pass_of::<false, 0, 0, LINK, CHECKS>(r, q, t, p),
        }
    }

    /// [`Hierarchy::first_level_pass`] for a first level with a power-of-two number
    /// of sets when `POW2`, with `WAYS` ways (0: any number) and lines of `1 <<
    /// SHIFT` bytes (`SHIFT` 0: any size). Not inlined: in a function of its own the
    /// loop's registers are allocated for it alone (inlined, it spilled more).
    #[inline(never)]
    fn first_level_pass_of<
        const POW2: bool,
        const WAYS: usize,
        const SHIFT: u32,
        const LINK: bool,
        const CHECKS: bool,
    >(
        &mut self,
        references: &[Reference],
        queue: &mut [Work],
        tallies: &mut [RegionTally],
        previous: &mut [u32],
    ) -> FirstPass {
        let Some(mut level) = self.levels[0].lean::<WAYS>() else {
            unreachable!("the fast path is only enabled for lean levels")
        };
        let (l, r, t, p, q) = (&mut level, references, tallies, previous, queue);
        first_level_loop::<POW2, WAYS, SHIFT, LINK, CHECKS>(l, r, t, p, q)
    }

    /// Pass 2: the levels below the first over `queue`, pass 1's misses (storing in
    /// `served[i]` the level that served reference `i`, which is 0 until then, and
    /// counting it in `below`, see `Statistics::add_batch`) and first-level dirty
    /// victims. Returns how many entries it went through:
    /// it stops after a victim, or after a miss that evicts dirty lines above the
    /// last level; those are in `victims`, to deliver in order. (With one level,
    /// memory serves every miss and victims only count.)
    fn lower_levels_pass(
        &mut self,
        queue: &[Work],
        served: &mut [u8],
        below: &mut [u32],
        victims: &mut Vec<DirtyVictim>,
    ) -> usize {
        let lower = &self.levels[1..];
        // Power-of-two set counts (the usual case) index sets with a mask only.
        let pow2 = lower.iter().all(|l| l.geometry.sets.is_power_of_two());
        // Eight ways everywhere (the usual data caches, and the benchmark's) makes
        // the way count a constant.
        let eight = pow2 && lower.iter().all(|l| l.geometry.ways == 8);
        // 64-byte lines (the usual) make the line arithmetic constant too.
        let line64 = lower.iter().all(|l| l.geometry.line_size == 64);
        let (q, s, b, v) = (queue, served, below, victims);
        match (lower.len(), pow2, eight, line64) {
            (0, _, _, _) => self.lower_levels_pass_of::<0, true, 0, 0>(q, s, b, v),
            (1, true, true, true) => self.lower_levels_pass_of::<1, true, 8, 6>(q, s, b, v),
            (2, true, true, true) => self.lower_levels_pass_of::<2, true, 8, 6>(q, s, b, v),
            (1, true, true, false) => self.lower_levels_pass_of::<1, true, 8, 0>(q, s, b, v),
            (2, true, true, false) => self.lower_levels_pass_of::<2, true, 8, 0>(q, s, b, v),
            (1, true, false, _) => self.lower_levels_pass_of::<1, true, 0, 0>(q, s, b, v),
            (2, true, false, _) => self.lower_levels_pass_of::<2, true, 0, 0>(q, s, b, v),
            (_, true, _, _) => self.lower_levels_pass_of::<ANY, true, 0, 0>(q, s, b, v),
            (_, false, _, _) => self.lower_levels_pass_of::<ANY, false, 0, 0>(q, s, b, v),
        }
    }

    /// [`Hierarchy::lower_levels_pass`] for `LOWER` levels below the first
    /// ([`ANY`]: any number), all with a power-of-two number of sets when `POW2`,
    /// with `WAYS` ways (0: any number) and with lines of `1 << SHIFT` bytes
    /// (`SHIFT` 0: any size).
    fn lower_levels_pass_of<
        const LOWER: usize,
        const POW2: bool,
        const WAYS: usize,
        const SHIFT: u32,
    >(
        &mut self,
        queue: &[Work],
        served: &mut [u8],
        below: &mut [u32],
        victims: &mut Vec<DirtyVictim>,
    ) -> usize {
        let count = if LOWER == ANY {
            self.levels.len()
        } else {
            LOWER + 1
        };
        let width = count + 1;
        // The levels below the first, level `i` at `i - 1`, viewed once: an array
        // when their count is constant (indexing is then checked against a
        // constant), else a vector.
        let (mut array, mut vector);
        let mut lean = self.levels[1..].iter_mut().map(|level| {
            let Some(lean) = level.lean::<WAYS>() else {
                unreachable!("the fast path is only enabled for lean levels")
            };
            lean
        });
        let lower: &mut [LeanLevel<'_, WAYS>] = if LOWER != ANY {
            array = std::array::from_fn::<_, LOWER, _>(|_| {
                lean.next()
                    .expect("LOWER is the count of levels below the first")
            });
            &mut array
        } else {
            vector = lean.collect::<Vec<_>>();
            &mut vector
        };
        // Room for the dirty victims, so that the loop makes no call: at most one of
        // the last level per entry, and those of the entry it stops after.
        victims.reserve(queue.len() + count);
        // Entries come from pass 1 only, which makes a miss's `index` below the
        // batch's length (`served.len()`) and its `row` below 4 × the regions it
        // tallies (`below.len() / width`).
        debug_assert!(queue.iter().all(|w| w.is_write_back()
            || (w.index as usize) < served.len() && (w.row as usize + 1) * width <= below.len()));
        // (An iterator, not a counter: how far it went is its length left.)
        let mut works = queue.iter();
        while let Some(work) = works.next() {
            if work.is_write_back() {
                push(victims, (0, work.addr, RegionId(work.row as u16)));
                if count > 1 {
                    return queue.len() - works.len();
                }
                continue;
            }
            let mut by = count;
            #[allow(clippy::needless_range_loop)] // constant indices unroll
            for i in 1..count {
                let level = &mut lower[i - 1];
                let line = level.line_of::<SHIFT>(work.addr);
                let set = level.set_of::<POW2>(line);
                let key = key_of(line);
                if let Some(way) = level.scan(set, key) {
                    let queue = level.queue(set);
                    level.touch(set, queue, way, key);
                    by = i;
                    break;
                }
            }
            // SAFETY: `index < served.len()` and `(row + 1) × width ≤ below.len()`
            // (see above), and `by < width`.
            unsafe {
                *served.get_unchecked_mut(work.index as usize) = by as u8;
                *below.get_unchecked_mut(work.row as usize * width + by) += 1;
            }
            // Fill the levels that missed, the deepest first.
            let (owner, mut stop) = (RegionId((work.row / 4) as u16), false);
            for j in (1..count).rev() {
                if j >= by {
                    continue; // (a test per level: the loop unrolls for a constant count)
                }
                let level = &mut lower[j - 1];
                let line = level.line_of::<SHIFT>(work.addr);
                let set = level.set_of::<POW2>(line);
                let queue = level.queue(set);
                let filled = level.fill(set, queue, line, false, owner);
                if filled.old_tag & 1 != 0 {
                    let dirty = (
                        j,
                        level.line_addr::<SHIFT>(filled.old_tag >> 1),
                        filled.old_owner,
                    );
                    // Above the last level: written back before the next reference.
                    stop |= j + 1 < count;
                    push(victims, dirty);
                }
            }
            if stop {
                return queue.len() - works.len();
            }
        }
        queue.len()
    }
}

/// The loop of pass 1 (see [`Hierarchy::first_level_pass`]). Without `CHECKS`, no
/// reference spans lines and the tallies are a power of two long, covering every
/// region (see [`Hierarchy::fast_batch`]): a region is then masked into them
/// instead of checked.
#[inline(always)]
fn first_level_loop<
    const POW2: bool,
    const WAYS: usize,
    const SHIFT: u32,
    const LINK: bool,
    const CHECKS: bool,
>(
    level: &mut LeanLevel<'_, WAYS>,
    references: &[Reference],
    tallies: &mut [RegionTally],
    previous: &mut [u32],
    queue: &mut [Work],
) -> FirstPass {
    let (n, regions) = (references.len(), tallies.len());
    assert!(!LINK || previous.len() >= n, "room to link every reference");
    assert!(queue.len() >= 2 * n, "room for every miss and victim");
    assert!(
        CHECKS || regions.is_power_of_two() && regions <= 1 << 16,
        "unchecked regions are masked into a power of two of tallies"
    );
    let mask = regions.wrapping_sub(1) as u16;
    let mut queued = 0;
    for (index, reference) in references.iter().enumerate() {
        let addr = reference.addr;
        if CHECKS && level.spans::<SHIFT>(addr, reference.size) {
            return FirstPass {
                done: index,
                stop: Stop::Span,
                queued,
            };
        }
        let region = match CHECKS {
            true => reference.region,
            false => RegionId(reference.region.0 & mask),
        };
        if CHECKS && region.index() >= regions {
            return FirstPass {
                done: index,
                stop: Stop::Region,
                queued,
            };
        }
        // SAFETY: `region < regions = tallies.len()` (checked, or masked below a
        // power of two); with `LINK`, `index < n ≤ previous.len()`.
        unsafe { tally::<LINK>(tallies, previous, index, region, reference.kind) };
        let line = level.line_of::<SHIFT>(addr);
        let set = level.set_of::<POW2>(line);
        let key = key_of(line);
        let writes = reference.kind.writes();
        if level.at_front(set, key) {
            // The most common reference: nothing changes but for a store.
            if writes {
                let front = (level.queue(set) & 0xF) as usize;
                level.mark_dirty(set, front);
            }
            continue;
        }
        let lru_queue = level.queue(set);
        if let Some(way) = level.scan(set, key) {
            level.touch(set, lru_queue, way, key);
            if writes {
                level.mark_dirty(set, way);
            }
            continue;
        }
        let filled = level.fill(set, lru_queue, line, writes, region);
        let work = Work {
            addr,
            index: index as u32,
            row: (region.index() * 4 + reference.kind as usize) as u32,
        };
        // SAFETY: at most two entries per reference (asserted room).
        unsafe { *queue.get_unchecked_mut(queued) = work };
        queued += 1;
        if filled.old_tag & 1 != 0 {
            // Queued after the miss that evicted it, as `fast_access` writes it back.
            let victim = Work {
                addr: level.line_addr::<SHIFT>(filled.old_tag >> 1),
                index: WRITE_BACK,
                row: u32::from(filled.old_owner.0),
            };
            // SAFETY: as above.
            unsafe { *queue.get_unchecked_mut(queued) = victim };
            queued += 1;
        }
    }
    FirstPass {
        done: n,
        stop: Stop::End,
        queued,
    }
}

/// Pushes onto a vector with room reserved (checked), without a call.
#[inline(always)]
fn push(victims: &mut Vec<DirtyVictim>, victim: DirtyVictim) {
    let len = victims.len();
    let Some(slot) = victims.spare_capacity_mut().first_mut() else {
        unreachable!("room is reserved for every victim")
    };
    slot.write(victim);
    // SAFETY: the slot after the `len` initialised ones was just written.
    unsafe { victims.set_len(len + 1) };
}
