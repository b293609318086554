//! The whole run at a glance, for a run whose blocks do not fit in the allocation
//! map's memory (the map then holds a window of it): how full each stretch of the
//! address space was over the whole run, on a fixed grid of [`COLUMNS`] time columns
//! by at most [`MAX_ROWS`] address rows, built while the events stream past, in
//! memory that does not grow with the number of blocks.
//!
//! **Rows.** A row is one aligned range of `row_bytes` (a power of two, 4 KiB at
//! first) of one process's address space that some block touched; rows that no block
//! touched are left out, so the rows stacked in address order are a compact address
//! axis, like the map's. When more than [`MAX_ROWS`] rows are touched, `row_bytes`
//! doubles and each pair of neighbouring rows becomes one (exactly: the sums below
//! add), as often as needed.
//!
//! **Cells.** A cell's value is its **occupancy**: the bytes live in the row during
//! the column, integrated over the column's time, over the row's bytes × the column's
//! duration (1: the row was full the whole column). The allocation-map builder gives
//! a block's bytes as those the program asked for (a mapping's: its pages), which it
//! knows as the block begins (`whole_run_feed.rs`). A block adds, in each row it
//! touches, its bytes there to the columns it covers in full (a difference array: two
//! additions whatever its lifetime) and its byte·time to the two columns it covers in
//! part. So a block costs one lookup of its row (the last row is remembered) and four
//! additions, and the builder holds [`MAX_ROWS`] rows at most (twice that while
//! a block wider than the rest is added): 16 bytes per cell, 16 MiB at most, of which
//! the pages of the rows used are touched. The cells are kept column by column, so
//! that the blocks of about the same time, which come one after the other, touch the
//! same few pages.
//!
//! **Picture.** [`WholeRunMap::render`] draws any size: each pixel averages the
//! occupancy of the cells it covers on the continuous blue (empty) → red (full)
//! scale of the map's other occupancy views; pixels whose cells no block touched are
//! transparent.
//!
//! **Storage.** [`WholeRunMap::encode`] and [`WholeRunMap::decode`] keep it as bytes
//! (`MLWR`, a version, varints, then a byte per cell: occupancy in 255 steps, 0 kept for
//! cells no block touched), so that a trace's index holds it beside the window's
//! model. Decoding never panics and names the offset of what it refuses.

use rustc_hash::FxHashMap;

use memlens_vocab::codec::{DecodeError, Reader, Writer};

use crate::colormap::{continuous_color, to_u8};
use crate::ids::ProcessId;
use crate::image::RgbaImage;

/// The time columns of the whole run.
pub const COLUMNS: usize = 1024;

/// The most address rows kept (more make the rows twice as wide).
pub const MAX_ROWS: usize = 512;

/// `log2` of the first rows' width (4 KiB).
const FIRST_SHIFT: u32 = 12;

/// The version of [`WholeRunMap::encode`]'s layout; bump it when it changes.
pub const WHOLE_RUN_CODEC_VERSION: u32 = 1;

/// The first four bytes of an encoded map.
const MAGIC: [u8; 4] = *b"MLWR";

/// The largest quantised occupancy (a full cell).
const FULL: u8 = u8::MAX;

/// One row: a process and the aligned address range `[page << shift, (page + 1) << shift)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RowKey {
    /// The process whose addresses these are.
    pub process: ProcessId,
    /// The range's index (its first address over the row width).
    pub page: u64,
}

/// Eight-byte entries per page.
const PAGE_ENTRIES: usize = 4096 / 8;

/// The index of the first entry at a page boundary in an array of eight-byte entries
/// starting at `at` (below [`PAGE_ENTRIES`]).
fn page_start<T>(at: *const T) -> usize {
    let offset = at as usize % 4096;
    ((4096 - offset) % 4096) / 8
}

/// The rows a column has room for: the limit, plus the rows of one block wider than
/// the rest, added before the rows widen.
const ROW_ROOM: usize = 2 * MAX_ROWS;

/// Adds up the whole run's occupancy while the events stream past (see the module
/// documentation).
#[derive(Clone, Debug)]
pub struct WholeRunBuilder {
    start: u64,
    end: u64,
    /// A column's duration, ns (`(end − start) / COLUMNS`).
    width: f64,
    /// Columns per ns, `1 / width` (a multiplication per block, not a division).
    per_ns: f64,
    shift: u32,
    rows: FxHashMap<RowKey, u32>,
    /// Per column, [`ROW_ROOM`] entries, one per row index: bytes that begin
    /// (positive) or stop (negative) covering whole columns from that column on.
    /// Column by column, so that blocks of about the same time, which come one after
    /// the other, touch the same few pages (allocated as first touched).
    rates: Vec<i64>,
    /// Where column 0 starts in `rates` and `partial`: each column starts on a page
    /// of its own, so a column of up to 512 rows touches one page of each.
    first: (usize, usize),
    /// Per column, [`ROW_ROOM`] entries: byte·ns of the columns covered in part.
    partial: Vec<f64>,
    /// The row found last, and its index.
    last: Option<(RowKey, u32)>,
}

impl WholeRunBuilder {
    /// An empty grid over the run `[start, end]` (ns on the model's timeline).
    pub fn new(start: u64, end: u64) -> WholeRunBuilder {
        let end = end.max(start.saturating_add(1));
        let width = (end - start) as f64 / COLUMNS as f64;
        // Zeroed by the kernel, page by page as first touched (a page more, to start
        // on a page).
        let rates = vec![0i64; COLUMNS * ROW_ROOM + PAGE_ENTRIES];
        let partial = vec![0f64; COLUMNS * ROW_ROOM + PAGE_ENTRIES];
        let first = (page_start(rates.as_ptr()), page_start(partial.as_ptr()));
        WholeRunBuilder {
            start,
            end,
            width,
            per_ns: 1.0 / width,
            shift: FIRST_SHIFT,
            rows: FxHashMap::default(),
            rates,
            partial,
            first,
            last: None,
        }
    }

    /// Adds a block of `process`: `bytes` bytes from `addr`, live from `t_alloc` to
    /// `t_free` (clamped to the run).
    pub fn add(&mut self, process: ProcessId, addr: u64, bytes: u64, t_alloc: u64, t_free: u64) {
        let ta = t_alloc.clamp(self.start, self.end);
        let tf = t_free.clamp(self.start, self.end);
        if tf <= ta || bytes == 0 {
            return;
        }
        let last_byte = addr.saturating_add(bytes - 1);
        while (last_byte >> self.shift) - (addr >> self.shift) >= MAX_ROWS as u64 {
            self.coarsen();
        }
        let (c0, c1) = (self.column(ta), self.column(tf));
        let mut page = addr >> self.shift;
        loop {
            let lo = (page << self.shift).max(addr);
            let hi = ((page << self.shift) | ((1u64 << self.shift) - 1)).min(last_byte);
            let b = hi - lo + 1;
            let row = self.row(RowKey { process, page });
            let (r, p) = self.first;
            let cell = |c: usize| c * ROW_ROOM + row;
            if c0 == c1 {
                self.partial[p + cell(c0)] += b as f64 * (tf - ta) as f64;
            } else {
                let first_end = self.start as f64 + (c0 + 1) as f64 * self.width;
                let last_start = self.start as f64 + c1 as f64 * self.width;
                self.partial[p + cell(c0)] += b as f64 * (first_end - ta as f64).max(0.0);
                self.partial[p + cell(c1)] += b as f64 * (tf as f64 - last_start).max(0.0);
                // Columns c0 + 1 to c1 − 1 are covered whole.
                self.rates[r + cell(c0 + 1)] += b as i64;
                self.rates[r + cell(c1)] -= b as i64;
            }
            if page >= last_byte >> self.shift {
                break;
            }
            page += 1;
        }
        // (Rows of 2⁶³ bytes are two per process: only more than 512 processes could
        // leave more rows than the limit there.)
        while self.rows.len() > MAX_ROWS && self.shift < 63 {
            self.coarsen();
        }
    }

    /// The column holding instant `t` (the run's end is in the last one; an instant
    /// within rounding of a boundary may fall either side, moving that sliver only).
    fn column(&self, t: u64) -> usize {
        (((t - self.start) as f64 * self.per_ns) as usize).min(COLUMNS - 1)
    }

    /// The index of row `key`, added when new (below [`ROW_ROOM`]: see `add`).
    fn row(&mut self, key: RowKey) -> usize {
        if let Some((k, i)) = self.last
            && k == key
        {
            return i as usize;
        }
        let next = self.rows.len() as u32;
        let i = *self.rows.entry(key).or_insert(next);
        self.last = Some((key, i));
        i as usize
    }

    /// Doubles the rows' width, merging each pair of neighbouring rows, column by
    /// column in place.
    fn coarsen(&mut self) {
        self.shift += 1;
        self.last = None;
        let mut keys: Vec<(RowKey, u32)> = self.rows.drain().collect();
        keys.sort_unstable();
        // Each old row's new index.
        let mut to = vec![0usize; keys.len()];
        for &(key, i) in &keys {
            let merged = RowKey {
                process: key.process,
                page: key.page >> 1,
            };
            to[i as usize] = self.row(merged);
        }
        let n = keys.len();
        let (mut rates, mut partial) = (vec![0i64; n], vec![0f64; n]);
        let (r, p) = self.first;
        for c in 0..COLUMNS {
            let (at_r, at_p) = (r + c * ROW_ROOM, p + c * ROW_ROOM);
            rates.fill(0);
            partial.fill(0.0);
            for (old, &new) in to.iter().enumerate() {
                rates[new] += self.rates[at_r + old];
                partial[new] += self.partial[at_p + old];
            }
            self.rates[at_r..at_r + n].copy_from_slice(&rates);
            self.partial[at_p..at_p + n].copy_from_slice(&partial);
        }
    }

    /// The grid of occupancies.
    pub fn finish(self) -> WholeRunMap {
        let mut keys: Vec<(RowKey, u32)> = self.rows.into_iter().collect();
        keys.sort_unstable();
        let row_bytes = 1u64 << self.shift;
        let capacity = row_bytes as f64 * self.width;
        let mut occupancy = vec![0u8; keys.len() * COLUMNS];
        for (r, &(_, i)) in keys.iter().enumerate() {
            let mut rate = 0i64;
            let (first_r, first_p) = self.first;
            for c in 0..COLUMNS {
                let cell = c * ROW_ROOM + i as usize;
                rate += self.rates[first_r + cell];
                let covered = rate as f64 * self.width + self.partial[first_p + cell];
                occupancy[r * COLUMNS + c] = quantise(covered / capacity, covered > 0.0);
            }
        }
        WholeRunMap {
            start: self.start,
            end: self.end,
            row_bytes,
            rows: keys.into_iter().map(|(k, _)| k).collect(),
            occupancy,
        }
    }
}

/// An occupancy as 8 bits: 0 only for a cell no block touched.
fn quantise(occupancy: f64, touched: bool) -> u8 {
    if !touched {
        return 0;
    }
    ((occupancy.clamp(0.0, 1.0) * f64::from(FULL)).round() as u8).max(1)
}

/// The whole run's occupancy on a grid of [`COLUMNS`] time columns by address rows
/// (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WholeRunMap {
    /// The run's first instant, ns on the model's timeline.
    pub start: u64,
    /// The run's last instant.
    pub end: u64,
    /// The bytes of address space per row (a power of two).
    pub row_bytes: u64,
    /// The rows, lowest address first (by process, then address).
    pub rows: Vec<RowKey>,
    /// Per row, `COLUMNS` occupancies (0: untouched; [`u8::MAX`]: full).
    occupancy: Vec<u8>,
}

impl WholeRunMap {
    /// The occupancy of `row` during column `column`, 0 to 1; `None` when no block
    /// touched that cell.
    pub fn occupancy(&self, row: usize, column: usize) -> Option<f64> {
        let q = *self.occupancy.get(row * COLUMNS + column)?;
        (q > 0 && column < COLUMNS).then(|| f64::from(q) / f64::from(FULL))
    }

    /// The picture at `width × height` pixels (the highest addresses at the top).
    pub fn render(&self, width: u32, height: u32) -> RgbaImage {
        let mut image = RgbaImage::new(width, height);
        let rows = self.rows.len();
        if rows == 0 || width == 0 || height == 0 {
            return image;
        }
        let span = |i: u32, n: u32, cells: usize| {
            let lo = i as usize * cells / n as usize;
            let hi = ((i as usize + 1) * cells / n as usize).max(lo + 1);
            lo.min(cells - 1)..hi.min(cells)
        };
        for y in 0..height {
            // Pixel row 0 is the top: the last (highest) rows.
            let rows_here = span(height - 1 - y, height, rows);
            for x in 0..width {
                let columns = span(x, width, COLUMNS);
                let (mut sum, mut cells, mut touched) = (0u64, 0u64, false);
                for row in rows_here.clone() {
                    for &q in &self.occupancy[row * COLUMNS..][columns.clone()] {
                        sum += u64::from(q);
                        touched |= q > 0;
                        cells += 1;
                    }
                }
                if touched {
                    let mean = sum as f64 / (cells as f64 * f64::from(FULL));
                    let [r, g, b] = to_u8(continuous_color(mean as f32));
                    image.set(x, y, [r, g, b, 255]);
                }
            }
        }
        image
    }

    /// Its bytes (see the module documentation).
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.out.extend_from_slice(&MAGIC);
        w.out
            .extend_from_slice(&WHOLE_RUN_CODEC_VERSION.to_le_bytes());
        for v in [self.start, self.end, self.row_bytes, COLUMNS as u64] {
            w.varint(v);
        }
        w.varint(self.rows.len() as u64);
        let mut previous: Option<RowKey> = None;
        for row in &self.rows {
            w.varint(u64::from(row.process.0));
            // Within a process, the gap from the previous row (rows are sorted).
            match previous {
                Some(p) if p.process == row.process => w.varint(row.page - p.page),
                _ => w.varint(row.page),
            }
            previous = Some(*row);
        }
        w.varint(self.occupancy.len() as u64);
        w.out.extend_from_slice(&self.occupancy);
        w.out
    }

    /// The map [`WholeRunMap::encode`] wrote into `bytes`, or why they are not that
    /// (one sentence naming the byte offset).
    pub fn decode(bytes: &[u8]) -> Result<WholeRunMap, DecodeError> {
        let mut r = Reader::new(bytes, "whole-run map");
        let magic = r.take(MAGIC.len())?;
        r.check(magic == MAGIC, 0, || "no \"MLWR\"".to_owned())?;
        let version = r.take(4)?;
        let version = u32::from_le_bytes([version[0], version[1], version[2], version[3]]);
        r.check(version == WHOLE_RUN_CODEC_VERSION, 4, || {
            format!(
                "codec version {version}, but this memlens reads only version {WHOLE_RUN_CODEC_VERSION}"
            )
        })?;
        r.section = "grid";
        let (start, end) = (r.varint()?, r.varint()?);
        r.check(start < end, 8, || {
            format!("the run ends ({end}) before it starts ({start})")
        })?;
        let at = r.pos;
        let row_bytes = r.varint()?;
        r.check(row_bytes.is_power_of_two(), at, || {
            format!("a row of {row_bytes} bytes is not a power of two")
        })?;
        let at = r.pos;
        let columns = r.varint()?;
        r.check(columns == COLUMNS as u64, at, || {
            format!("{columns} columns instead of {COLUMNS}")
        })?;
        r.section = "rows";
        let mut previous: Option<RowKey> = None;
        let rows = r.column(None, "row", |r, _| {
            let at = r.pos;
            let process = ProcessId(r.u32()?);
            let gap = r.varint()?;
            // Sorted: a new process starts from 0, the same one goes up by the gap.
            let page = match previous {
                Some(p) if p.process == process => p.page.checked_add(gap).filter(|_| gap > 0),
                Some(p) if p.process > process => None,
                _ => Some(gap),
            };
            let Some(page) = page else {
                return Err(r.invalid(at, "the rows are not in address order".to_owned()));
            };
            let row = RowKey { process, page };
            previous = Some(row);
            Ok(row)
        })?;
        r.check(rows.len() <= 2 * MAX_ROWS, r.pos, || {
            format!("{} rows, more than {}", rows.len(), 2 * MAX_ROWS)
        })?;
        r.section = "occupancy";
        let cells = r.length(Some(rows.len() * COLUMNS), "occupancy")?;
        let occupancy = r.take(cells)?.to_vec();
        r.finish()?;
        Ok(WholeRunMap {
            start,
            end,
            row_bytes,
            rows,
            occupancy,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small xorshift generator.
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// Random blocks `(process, addr, bytes, t_alloc, t_free)` within `[0, end)` over a
    /// few pages of two processes.
    fn blocks(seed: u64, n: usize, end: u64) -> Vec<(ProcessId, u64, u64, u64, u64)> {
        let mut next = rng(seed);
        (0..n)
            .map(|_| {
                let process = ProcessId((next() % 2) as u32);
                let addr = 0x10_0000 + next() % (40 << 12);
                let bytes = 1 + next() % 9000;
                let a = next() % end;
                let f = a + next() % (end - a + 1);
                (process, addr, bytes, a, f)
            })
            .collect()
    }

    #[test]
    fn every_cell_is_the_exact_share_of_its_bytes_and_time() {
        let end = 1_000_003;
        for seed in 1..6 {
            let blocks = blocks(seed, 300, end);
            let mut b = WholeRunBuilder::new(0, end);
            for &(p, a, s, t0, t1) in &blocks {
                b.add(p, a, s, t0, t1);
            }
            let map = b.finish();
            assert_eq!(map.row_bytes, 4096, "no coarsening needed");
            let width = end as f64 / COLUMNS as f64;
            for (r, key) in map.rows.iter().enumerate() {
                let (lo, hi) = (key.page << 12, (key.page + 1) << 12);
                for c in 0..COLUMNS {
                    let (c0, c1) = (c as f64 * width, (c + 1) as f64 * width);
                    let covered: f64 = blocks
                        .iter()
                        .filter(|b| b.0 == key.process)
                        .map(|&(_, a, s, t0, t1)| {
                            let bytes = (a + s).min(hi).saturating_sub(a.max(lo)) as f64;
                            let time = (t1 as f64).min(c1) - (t0 as f64).max(c0);
                            bytes * time.max(0.0)
                        })
                        .sum();
                    let want = covered / (4096.0 * width);
                    let got = map.occupancy(r, c).unwrap_or(0.0);
                    assert!(
                        (got - want.min(1.0)).abs() <= 1.01 / 255.0,
                        "seed {seed}, row {r}, column {c}: {got} against {want}"
                    );
                }
            }
            // Every touched row is a row; no other is.
            assert!(map.rows.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn rows_widen_to_stay_within_the_limit_and_keep_every_byte() {
        let mut b = WholeRunBuilder::new(0, 1 << 20);
        let mut next = rng(7);
        let mut total = 0.0;
        for _ in 0..20_000 {
            // Scattered over 64 GiB: far more 4 KiB rows than the limit.
            let addr = next() % (64 << 30);
            let (t0, t1) = (0, 1 << 20);
            b.add(ProcessId(0), addr, 64, t0, t1);
            total += 64.0;
        }
        // One block wider than every row allowed at the current width.
        b.add(ProcessId(1), 1 << 40, 1 << 40, 0, 1 << 20);
        total += (1u64 << 40) as f64;
        // One at the top of the address space: its bytes end there.
        b.add(ProcessId(2), u64::MAX - 10, 100, 0, 1 << 20);
        total += 11.0;
        let map = b.finish();
        assert!(map.rows.len() <= MAX_ROWS, "{} rows", map.rows.len());
        assert!(map.row_bytes > 4096);
        // Every block lives the whole run: each column holds every byte.
        let column = 0;
        let bytes: f64 = (0..map.rows.len())
            .map(|r| map.occupancy(r, column).unwrap_or(0.0) * map.row_bytes as f64)
            .sum();
        assert!((bytes - total).abs() / total < 1e-3, "{bytes} of {total}");
    }

    #[test]
    fn the_picture_puts_high_addresses_on_top_and_leaves_untouched_cells_clear() {
        let mut b = WholeRunBuilder::new(0, 1000);
        // A full low row for the whole run, a high row full in the first half only.
        b.add(ProcessId(0), 0, 4096, 0, 1000);
        b.add(ProcessId(0), 1 << 20, 4096, 0, 500);
        let map = b.finish();
        assert_eq!(map.rows.len(), 2);
        let image = map.render(4, 2);
        let red = {
            let [r, g, b] = to_u8(continuous_color(1.0));
            [r, g, b, 255]
        };
        // Top row: the high addresses, full then untouched.
        assert_eq!(image.pixel(0, 0), red);
        assert_eq!(image.pixel(3, 0)[3], 0, "untouched: transparent");
        // Bottom row: the low addresses, full throughout.
        assert_eq!(image.pixel(0, 1), red);
        assert_eq!(image.pixel(3, 1), red);
        // Any size, even larger than the grid.
        let big = map.render(2000, 5);
        assert_eq!((big.width, big.height), (2000, 5));
    }

    #[test]
    fn its_bytes_read_back_and_damage_is_refused_without_a_panic() {
        let mut b = WholeRunBuilder::new(5, 1_000_000);
        for &(p, a, s, t0, t1) in &blocks(3, 200, 1_000_000) {
            b.add(p, a, s, t0, t1);
        }
        let map = b.finish();
        let bytes = map.encode();
        assert_eq!(WholeRunMap::decode(&bytes), Ok(map));
        // Every prefix of the header and rows, and of the last cells; some between.
        let n = bytes.len();
        let cuts = (0..200.min(n))
            .chain((0..n).step_by(97))
            .chain(n.saturating_sub(200)..n);
        for cut in cuts {
            assert!(WholeRunMap::decode(&bytes[..cut]).is_err(), "prefix {cut}");
        }
        for at in (0..bytes.len()).step_by(211) {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0xA5;
            let _ = WholeRunMap::decode(&flipped);
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(WholeRunMap::decode(&longer).is_err(), "bytes after the end");
        let mut version = bytes;
        version[4] = 9;
        let e = WholeRunMap::decode(&version).unwrap_err();
        assert!(e.to_string().contains("version 9"), "{e}");
    }
}
