//! The grid of the viewer's tiles and the overview's cells: [`grid_bounds`] splits an
//! axis into the tiles of a level, and a [`GridAxis`] finds the tile that given bounds
//! are and the cell of `n = 256·2^K` that holds a span in one real pixel at every level
//! up to `K` (see the overview's documentation for why that is exact).

/// The side of the grid tiles the overview serves, pixels (the viewer's tiles).
pub const TILE_SIDE: u32 = 256;

/// The finest grid level the overview serves on each axis (`K`): tiles of levels
/// 0..=K, i.e. at most 4 × 4 tiles across the model, come from the cell sums.
pub const OVERVIEW_LEVELS: u32 = 2;

/// `[lo, hi)` of part `i` when `[start, start + len)` is split into `2^level` equal
/// parts, each bound rounded down to a whole unit (so neighbours share their bounds):
/// the bounds of grid tiles.
pub fn grid_bounds(start: u64, len: u64, level: u32, i: u64) -> (u64, u64) {
    let at = |k: u64| start + ((u128::from(len) * u128::from(k)) >> level) as u64;
    (at(i), at(i + 1))
}

/// One axis of the cell grid.
#[derive(Clone, Copy, Debug)]
pub(super) struct GridAxis {
    pub(super) start: u64,
    pub(super) len: u64,
    /// The finest level served (`K` of this axis).
    pub(super) levels: u32,
    /// Cells: `TILE_SIDE << levels`.
    pub(super) n: u64,
}

impl GridAxis {
    /// The grid over `[start, start + len)`, if the axis has at least one unit per pixel
    /// at level 0.
    pub(super) fn new(start: u64, len: u64) -> Option<GridAxis> {
        let side = u64::from(TILE_SIDE);
        if len < side {
            return None;
        }
        let mut levels = OVERVIEW_LEVELS;
        while side << levels > len {
            levels -= 1;
        }
        Some(GridAxis {
            start,
            len,
            levels,
            n: side << levels,
        })
    }

    /// The level of the grid tile whose bounds are `[lo, hi)` with `pixels` pixels, and
    /// its number, if it is one the overview serves.
    pub(super) fn tile(&self, lo: u64, hi: u64, pixels: u32) -> Option<(u32, u64)> {
        if pixels != TILE_SIDE || lo < self.start {
            return None;
        }
        let rel = u128::from(lo - self.start);
        (0..=self.levels).find_map(|level| {
            let guess = ((rel << level) / u128::from(self.len)) as u64;
            (guess.saturating_sub(1)..=guess + 1)
                .filter(|&i| i < 1 << level)
                .find(|&i| grid_bounds(self.start, self.len, level, i) == (lo, hi))
                .map(|i| (level, i))
        })
    }

    /// The cell holding `[a, b)` (whole units, `a < b`) in the same real pixel at every
    /// level `0..=levels`, as the overview's documentation explains; `None` when there is none.
    pub(super) fn cell(&self, a: u64, b: u64) -> Option<u64> {
        if a < self.start || b - self.start > self.len {
            return None;
        }
        let (u, v) = (u128::from(a - self.start), u128::from(b - self.start));
        let (n, len) = (u128::from(self.n), u128::from(self.len));
        // c = ⌊u·n / len⌋ from a floating-point guess and exact corrections.
        let un = u * n;
        let mut c = ((a - self.start) as f64 * (self.n as f64 / self.len as f64)) as u128;
        c = c.min(n - 1);
        while c > 0 && c * len > un {
            c -= 1;
        }
        while (c + 1) * len <= un {
            c += 1;
        }
        // n × the cell's ideal upper bound.
        let upper = (c + 1) * len;
        let vn = v * n;
        if vn + n <= upper {
            return Some(c as u64);
        }
        if vn > upper {
            return None;
        }
        let tiny_everywhere = (0..=self.levels).all(|level| {
            let pixel = c >> (self.levels - level);
            self.ends_by_pixel_end(level, pixel, v)
        });
        tiny_everywhere.then_some(c as u64)
    }

    /// True when `v` (relative to the start) is at or before the real upper bound of
    /// pixel `pixel` (counted across the axis) at `level`.
    fn ends_by_pixel_end(&self, level: u32, pixel: u128, v: u128) -> bool {
        let side = u128::from(TILE_SIDE);
        let next = pixel + 1;
        let (tile, i) = (next / side, next % side);
        let len = u128::from(self.len);
        let t0 = (len * tile) >> level;
        if i == 0 {
            return v <= t0;
        }
        let t1 = (len * (tile + 1)) >> level;
        // The bound is t0 + (t1 − t0)·i / side.
        side * v <= side * t0 + (t1 - t0) * i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_bounds_split_exactly_and_share_edges() {
        assert_eq!(grid_bounds(100, 1000, 0, 0), (100, 1100));
        assert_eq!(grid_bounds(100, 1000, 1, 1), (600, 1100));
        assert_eq!(grid_bounds(0, 10, 2, 1), (2, 5));
        assert_eq!(grid_bounds(0, 10, 2, 2), (5, 7));
    }

    #[test]
    fn grid_tiles_are_recognised_by_their_bounds() {
        let axis = GridAxis::new(7, 100_003).unwrap();
        assert_eq!((axis.levels, axis.n), (2, 1024));
        for level in 0..=2 {
            for i in 0..1u64 << level {
                let (lo, hi) = grid_bounds(7, 100_003, level, i);
                assert_eq!(axis.tile(lo, hi, 256), Some((level, i)));
                assert_eq!(axis.tile(lo, hi, 255), None);
                assert_eq!(axis.tile(lo, hi + 1, 256), None);
            }
        }
        let (lo, hi) = grid_bounds(7, 100_003, 3, 5);
        assert_eq!(
            axis.tile(lo, hi, 256),
            None,
            "level 3 is finer than the grid"
        );
        // A short axis gets fewer levels, and one shorter than a tile none.
        assert_eq!(GridAxis::new(0, 600).unwrap().levels, 1);
        assert!(GridAxis::new(0, 255).is_none());
    }

    /// Brute force: the real pixel of `[a, b)` at `level` (exact rationals), if tiny.
    fn real_pixel(len: u64, level: u32, a: u64, b: u64) -> Option<u64> {
        let side = 256u128;
        for tile in 0..1u64 << level {
            let (t0, t1) = grid_bounds(0, len, level, tile);
            let (t0, t1) = (u128::from(t0), u128::from(t1));
            for i in 0..side {
                // Pixel i: [t0 + (t1 − t0)·i/256, t0 + (t1 − t0)·(i + 1)/256).
                let lo = side * t0 + (t1 - t0) * i;
                let hi = side * t0 + (t1 - t0) * (i + 1);
                let (a, b) = (side * u128::from(a), side * u128::from(b));
                if lo <= a && b <= hi {
                    return Some(tile * 256 + i as u64);
                }
            }
        }
        None
    }

    #[test]
    fn clustered_spans_are_tiny_in_the_nested_pixel_at_every_level() {
        let mut x = 12345u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for len in [1024u64, 1500, 3071, 4096, 5003, 20_011] {
            let axis = GridAxis::new(0, len).unwrap();
            let mut clustered = 0;
            for _ in 0..3000 {
                let a = next() % len;
                let b = (a + 1 + next() % 4).min(len);
                let Some(c) = axis.cell(a, b) else {
                    // Loose spans must really straddle a pixel at some level (or the cell).
                    let tiny_all = (0..=axis.levels).all(|l| real_pixel(len, l, a, b).is_some());
                    let ideal = (u128::from(a) * 1024 / u128::from(len)) as u64;
                    let in_cell = u128::from(b) * u128::from(axis.n)
                        <= (u128::from(ideal) + 1) * u128::from(len);
                    assert!(!(tiny_all && in_cell), "{len}: [{a}, {b}) loose");
                    continue;
                };
                clustered += 1;
                for level in 0..=axis.levels {
                    assert_eq!(
                        real_pixel(len, level, a, b),
                        Some(c >> (axis.levels - level)),
                        "{len}: [{a}, {b}) at level {level}"
                    );
                }
            }
            assert!(clustered > 200, "{len}: {clustered}");
        }
    }
}
