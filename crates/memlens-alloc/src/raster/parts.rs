//! Big pictures drawn on several cores: the image is split into bands of whole
//! rasterizer bands, one per core ([`parts_for`] decides how many, once for every
//! entry point), and each band is drawn on its own thread by a rasterizer owning its
//! rows ([`Rasterizer::for_rows`]) from the blocks whose addresses reach them, then
//! resolved into its rows of the image. The blocks come in the index's order in
//! every band and each rasterizer decides how to draw a block from the whole block,
//! so the pixels are exactly those of one rasterizer (tested on every kind of
//! rectangle crossing the bands' boundaries).

use std::ops::Range;

use super::rasterizer::{BAND, Rasterizer};
use crate::error::AllocError;

/// The blocks a picture must show before it is drawn on several cores: below it a
/// picture takes a few milliseconds, less than starting a thread is worth.
pub(super) const PARALLEL_BLOCKS: usize = 200_000;

/// The most rasterizers one picture is split into.
const MAX_PARTS: usize = 8;

/// How many rasterizers draw a picture `height` pixels high of a model of `blocks`
/// blocks (one decision, for every entry point): a big picture of many blocks takes
/// one per core, up to [`MAX_PARTS`], each owning at least 64 rows.
pub(super) fn parts_for(blocks: usize, height: u32) -> usize {
    if blocks < PARALLEL_BLOCKS {
        return 1;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.min(MAX_PARTS).min(height as usize / 64).max(1)
}

/// Draws a picture `h` pixels high with `parts` rasterizers on as many threads (this
/// one among them), each owning a band of whole [`BAND`]-row bands: `draw(rows)`
/// makes one owning `rows` (from the bottom) and feeds it, and `finish` turns it into
/// its rows of `out`, which holds `per_row` values per image row, top row first.
pub(super) fn draw_in_parts<T: Send>(
    h: usize,
    parts: usize,
    out: &mut [T],
    per_row: usize,
    draw: impl Fn(Range<usize>) -> Result<Rasterizer, AllocError> + Sync,
    finish: impl Fn(Rasterizer, &mut [T]) + Sync,
) -> Result<(), AllocError> {
    let bands = h.div_ceil(BAND);
    // Rows from the bottom, whole bands, as even as they come.
    let bounds: Vec<usize> = (0..=parts)
        .map(|p| (bands * p / parts * BAND).min(h))
        .collect();
    // Image rows run top first: the highest part's rows come first in `out`.
    let mut slices = Vec::with_capacity(parts);
    let mut rest = out;
    for p in (0..parts).rev() {
        let (lo, hi) = (bounds[p], bounds[p + 1]);
        let (head, tail) = rest.split_at_mut((hi - lo) * per_row);
        slices.push((lo..hi, head));
        rest = tail;
    }
    let draw = |rows: Range<usize>, slice: &mut [T]| {
        finish(draw(rows)?, slice);
        Ok::<(), AllocError>(())
    };
    std::thread::scope(|scope| {
        let mut slices = slices.into_iter();
        let mine = slices.next();
        let others: Vec<_> = slices
            .map(|(rows, slice)| scope.spawn(|| draw(rows, slice)))
            .collect();
        let first = mine.map_or(Ok(()), |(rows, slice)| draw(rows, slice));
        others
            .into_iter()
            .map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .fold(first, Result::and)
    })
}

/// How many shares a pass over `n` blocks is split into: one per core, up to
/// [`MAX_PARTS`], from [`PARALLEL_BLOCKS`] blocks.
fn shares_for(n: usize) -> usize {
    if n < PARALLEL_BLOCKS {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |c| c.get().min(MAX_PARTS))
    }
}

/// The largest of `f(0..n)` (0 when `n` is 0), each core taking a contiguous share
/// of a big model's blocks.
pub(super) fn max_in_parts(n: usize, f: impl Fn(usize) -> u64 + Sync) -> u64 {
    let share = n.div_ceil(shares_for(n)).max(1);
    let max_of = |p: usize| {
        (p * share..((p + 1) * share).min(n))
            .map(&f)
            .max()
            .unwrap_or(0)
    };
    std::thread::scope(|scope| {
        let others: Vec<_> = (1..n.div_ceil(share))
            .map(|p| scope.spawn(move || max_of(p)))
            .collect();
        others.into_iter().fold(max_of(0), |m, t| {
            m.max(t.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
        })
    })
}

/// `(0..n).map(f)` collected, computed in one contiguous share per core (this
/// thread's among them) when `n` is at least [`PARALLEL_BLOCKS`]: the per-block
/// attributes of a big model.
pub(super) fn map_in_parts<T: Send + Copy + Default>(
    n: usize,
    f: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let parts = shares_for(n);
    if parts == 1 {
        return (0..n).map(f).collect();
    }
    let mut out = vec![T::default(); n];
    let share = n.div_ceil(parts);
    let fill = |(p, slice): (usize, &mut [T])| {
        for (k, v) in slice.iter_mut().enumerate() {
            *v = f(p * share + k);
        }
    };
    let fill = &fill;
    std::thread::scope(|scope| {
        let mut shares = out.chunks_mut(share).enumerate();
        let mine = shares.next();
        for s in shares {
            scope.spawn(move || fill(s));
        }
        if let Some(s) = mine {
            fill(s);
        }
    });
    out
}

/// The window of the address axis whose blocks can reach pixel rows `rows` (from
/// the bottom) of a view of the axis window `[a0, a1)` `height` pixels high, with a
/// unit of slack each side: the rasterizer clips the rest.
pub(super) fn addresses_of_rows(
    (a0, a1): (u64, u64),
    height: u32,
    rows: Range<usize>,
) -> (u64, u64) {
    let per_row = (a1 - a0) as f64 / f64::from(height);
    let lo = a0.saturating_add((rows.start as f64 * per_row).floor() as u64);
    let hi = a0.saturating_add((rows.end as f64 * per_row).ceil() as u64);
    let lo = if rows.start == 0 {
        a0
    } else {
        lo.saturating_sub(1).max(a0)
    };
    let hi = if rows.end >= height as usize {
        a1
    } else {
        hi.saturating_add(1).min(a1)
    };
    (lo, hi)
}
