//! The colouring attribute of every block (thread, site, process, size, waste,
//! age, latency), in the time × address index's order, computed once per model
//! and colouring, on first use: a category id per block with a palette, or a value
//! in 0..=1 (the logarithm of the value over that of the largest).
//!
//! This is what the first picture or tile of a new colouring waits for, so it reads
//! what it can from the index's own records (sizes and lifetimes are there, in the
//! order it writes), takes the rest in the blocks' own order before putting it in
//! the index's ([`AllocModel::per_record`]), and shares a big model's blocks among
//! the cores ([`map_in_parts`]).

use std::sync::{Mutex, OnceLock, PoisonError};

use super::color_by::ColorBy;
use super::parts::{map_in_parts, max_in_parts};
use crate::block::Block;
use crate::colormap::{Rgb, categorical_color};
use crate::error::AllocError;
use crate::ids::ThreadId;
use crate::index::IndexRec;
use crate::model::AllocModel;

/// A colouring attribute of every block, in index order.
#[derive(Debug)]
pub(crate) enum Attributes {
    /// Category ids, and the colour of every id up to the largest.
    Categorical {
        /// Per block.
        ids: Vec<u32>,
        /// Per id.
        palette: Vec<Rgb>,
    },
    /// Values in 0..=1.
    Continuous(Vec<f32>),
}

/// Each colouring attribute of every block, computed on first use: the renderer's cache
/// in [`AllocModel`]'s `attributes` slot.
#[derive(Default)]
struct AttributeCache {
    /// Per colouring.
    slots: [OnceLock<Attributes>; ColorBy::COUNT],
    /// Category ids a pass for one attribute read for another (the thread and the site
    /// come from one pass), until that one is asked for. Kept aside, not set into the
    /// other's slot: that would wait for another thread computing it, which may be
    /// waiting for this one's (a deadlock).
    spare: Mutex<Vec<(ColorBy, Vec<u32>)>>,
}

/// The message for colouring by latency a trace without latencies.
pub const NO_LATENCY: &str = "this trace has no latency: record with `memlens record --latency`";

/// Logarithmic normalisation of the non-negative values `value(0..n)` to 0..=1 by
/// the largest: `ln(1 + v) / ln(1 + max)`. `1 + v` is taken in `f64` and its `ln`
/// is 2.3 times as fast as `ln_1p` (within one `f32` step of it: integers need no
/// `ln_1p` near zero).
fn log_normalised(n: usize, value: impl Fn(usize) -> u64 + Sync) -> Vec<f32> {
    let ln_1p = |v: u64| (v as f64 + 1.0).ln();
    let max = max_in_parts(n, &value);
    let scale = if max == 0 { 0.0 } else { 1.0 / ln_1p(max) };
    map_in_parts(n, |i| (ln_1p(value(i)) * scale) as f32)
}

/// Category ids with the palette up to the largest.
fn categorical(ids: Vec<u32>) -> Attributes {
    let n = ids.iter().max().map_or(0, |&m| m as usize + 1);
    let palette = (0..n).map(|i| categorical_color(i as u32)).collect();
    Attributes::Categorical { ids, palette }
}

impl AllocModel {
    /// The attribute `by` of every block in index order (computed once per model).
    pub(crate) fn attributes(&self, by: ColorBy) -> Result<&Attributes, AllocError> {
        if by == ColorBy::Latency && !self.has_latency() {
            return Err(AllocError::BadOption(NO_LATENCY.to_string()));
        }
        let cache = self.attributes.get_or_init(AttributeCache::default);
        Ok(cache.slots[by as usize].get_or_init(|| self.compute_attributes(cache, by)))
    }

    /// The attribute `by`, and, when the pass that gives it gives another one too, that
    /// one's ids aside in `cache` (unless it is there already): the thread and the site
    /// of a block are read together (reading a block's record costs the same for one
    /// field or two).
    fn compute_attributes(&self, cache: &AttributeCache, by: ColorBy) -> Attributes {
        let recs = self.index.records();
        let n = recs.len();
        match by {
            ColorBy::Thread | ColorBy::Site => {
                let mut spare = cache.spare.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(at) = spare.iter().position(|(kept, _)| *kept == by) {
                    return categorical(spare.swap_remove(at).1);
                }
                drop(spare);
                let pairs = self.per_record(|b| (b.thread.0, b.site.0));
                let threads = map_in_parts(n, |i| pairs[i].0);
                let sites = map_in_parts(n, |i| pairs[i].1);
                drop(pairs);
                let (mine, other, other_by) = match by {
                    ColorBy::Thread => (threads, sites, ColorBy::Site),
                    _ => (sites, threads, ColorBy::Thread),
                };
                // (Being computed at the same time, or there already: then it is dropped.)
                if cache.slots[other_by as usize].get().is_none() {
                    let mut spare = cache.spare.lock().unwrap_or_else(PoisonError::into_inner);
                    spare.push((other_by, other));
                }
                categorical(mine)
            }
            // A block's process is its thread's: from the threads, a small table.
            ColorBy::Process => {
                let Ok(Attributes::Categorical { ids, .. }) = self.attributes(ColorBy::Thread)
                else {
                    unreachable!("the threads are categories")
                };
                let process: Vec<u32> = (0..self.threads.len())
                    .map(|t| self.process_of(ThreadId(t as u32)).0)
                    .collect();
                categorical(map_in_parts(n, |i| process[ids[i] as usize]))
            }
            ColorBy::Size => {
                Attributes::Continuous(log_normalised(n, |i| requested(self, &recs[i])))
            }
            ColorBy::Waste => Attributes::Continuous(log_normalised(n, |i| waste(self, &recs[i]))),
            // The index's times are the block's: `t1 − t0` is its lifetime.
            ColorBy::Age => {
                Attributes::Continuous(log_normalised(n, |i| recs[i].t1.saturating_sub(recs[i].t0)))
            }
            ColorBy::Latency => {
                let lat = self.latency.as_deref().unwrap_or(&[]);
                let by_block: Vec<u64> = map_in_parts(self.blocks.len(), |j| {
                    lat.get(j).and_then(|l| l.alloc_ns).map_or(0, u64::from)
                });
                Attributes::Continuous(log_normalised(n, |i| by_block[recs[i].id as usize]))
            }
        }
    }

    /// `value` of every block, in index order. The index orders blocks by time cell
    /// then address, not by id, so reading each record's block would miss the cache
    /// once a block on a big model: the values are taken in the blocks' own order
    /// first, into a compact array that the index's order then reads.
    fn per_record<T: Send + Sync + Copy + Default>(
        &self,
        value: impl Fn(&Block) -> T + Sync,
    ) -> Vec<T> {
        let by_block = map_in_parts(self.blocks.len(), |j| value(&self.blocks[j]));
        let recs = self.index.records();
        map_in_parts(recs.len(), |i| by_block[recs[i].id as usize])
    }

    /// The colour of the category id `id` under `by` (for legends).
    pub fn category_color(&self, id: u32) -> Rgb {
        categorical_color(id)
    }
}

/// The waste of the block of `rec`, reserved − requested: from the record (its extent
/// on the axis is the reserved size, at least 1), unless its requested size did not
/// fit in it or the extent cannot tell a reserved size of 0 from 1.
#[inline]
fn waste(model: &AllocModel, rec: &IndexRec) -> u64 {
    let reserved = rec.y1 - rec.y0;
    if rec.requested == u32::MAX || reserved <= 1 {
        model.blocks[rec.id as usize].waste()
    } else {
        reserved.saturating_sub(u64::from(rec.requested))
    }
}

/// The requested size of the block of `rec`: the record's own, unless it did not
/// fit in it.
#[inline]
fn requested(model: &AllocModel, rec: &IndexRec) -> u64 {
    if rec.requested == u32::MAX {
        model.blocks[rec.id as usize].requested
    } else {
        u64::from(rec.requested)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{AllocEvent, AllocModelBuilder, FreeEvent};
    use crate::ids::SiteId;
    use crate::process::ProcessInfo;

    /// Blocks of two processes, five threads and seven sites, sizes over five orders
    /// of magnitude (one beyond `u32`), with latencies, every third never freed:
    /// enough of them that the attributes are computed on several threads.
    fn model(n: u64) -> AllocModel {
        let mut b = AllocModelBuilder::new();
        let procs: Vec<_> = (0..2)
            .map(|i| {
                b.add_process(ProcessInfo {
                    pid: 10 + i,
                    ppid: 1,
                    name: format!("p{i}"),
                })
            })
            .collect();
        let threads: Vec<_> = (0..5)
            .map(|i| b.thread(procs[i % 2], 100 + i as u32, ""))
            .collect();
        let sites: Vec<_> = (0..7)
            .map(|i| b.site(&memlens_vocab::Site::at(&format!("f{i}"), "t.c", i)))
            .collect();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for i in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let size = if i == 5 { 1 << 33 } else { 1 + x % 100_000 };
            // Addresses far apart so no block replaces another.
            let addr = 0x1000_0000 + i * (1 << 20);
            b.alloc(AllocEvent {
                t: i * 10,
                thread: threads[(x >> 20) as usize % 5],
                addr,
                size,
                site: sites[(x >> 30) as usize % 7],
                latency_ns: Some((x >> 40) as u32 % 5000),
            });
            if i % 3 != 0 {
                b.free(FreeEvent {
                    t: i * 10 + 1 + (x >> 50) % 50_000,
                    thread: threads[0],
                    addr,
                    site: SiteId::UNKNOWN,
                    latency_ns: None,
                });
            }
        }
        b.finish(n * 10 + 100_000)
    }

    /// Every colouring equals the attribute read block by block in the index's
    /// order, with `ln_1p` (within one `f32` step), whichever is asked for first (the
    /// thread and the site come from one pass, the process from the thread).
    #[test]
    fn attributes_equal_the_blocks_read_in_index_order() {
        let mut reversed = ColorBy::ALL;
        reversed.reverse();
        for order in [ColorBy::ALL, reversed] {
            attributes_asked_in(order);
        }
    }

    /// The thread and the site asked for at once on two threads, each computing the
    /// pass that gives both: neither waits for the other (it deadlocked once), and both
    /// are right.
    #[test]
    fn the_thread_and_the_site_asked_for_at_once_both_answer() {
        for round in 0..8 {
            let m = std::sync::Arc::new(model(50_000));
            let start = std::sync::Arc::new(std::sync::Barrier::new(2));
            let (done, answers) = std::sync::mpsc::channel();
            for by in [ColorBy::Thread, ColorBy::Site] {
                let (m, start, done) = (m.clone(), start.clone(), done.clone());
                std::thread::spawn(move || {
                    start.wait();
                    let ids = match m.attributes(by) {
                        Ok(Attributes::Categorical { ids, .. }) => ids.clone(),
                        _ => Vec::new(),
                    };
                    let _ = done.send((by, ids));
                });
            }
            for _ in 0..2 {
                let (by, ids) = answers
                    .recv_timeout(std::time::Duration::from_secs(20))
                    .unwrap_or_else(|_| panic!("round {round}: an attribute never came"));
                let recs = m.index.records();
                let want: Vec<u32> = recs
                    .iter()
                    .map(|r| match by {
                        ColorBy::Thread => m.blocks[r.id as usize].thread.0,
                        _ => m.blocks[r.id as usize].site.0,
                    })
                    .collect();
                assert_eq!(ids, want, "round {round}, {by:?}");
            }
            // The other one, computed or kept aside, is right too.
            let thread = match m.attributes(ColorBy::Thread) {
                Ok(Attributes::Categorical { ids, .. }) => ids.len(),
                _ => 0,
            };
            assert_eq!(thread, m.index.records().len());
        }
    }

    fn attributes_asked_in(order: [ColorBy; ColorBy::COUNT]) {
        let m = model(250_000);
        let recs = m.index.records();
        assert!(recs.len() >= 250_000);
        let block = |i: usize| &m.blocks[recs[i].id as usize];
        let lat = m.latency.as_deref().unwrap_or(&[]);
        for by in order {
            match (by, m.attributes(by).unwrap()) {
                (_, Attributes::Categorical { ids, palette }) => {
                    let want: Vec<u32> = (0..recs.len())
                        .map(|i| match by {
                            ColorBy::Thread => block(i).thread.0,
                            ColorBy::Site => block(i).site.0,
                            _ => m.process_of(block(i).thread).0,
                        })
                        .collect();
                    assert_eq!(ids, &want, "{by:?}");
                    assert!(palette.len() > *want.iter().max().unwrap() as usize);
                }
                (_, Attributes::Continuous(values)) => {
                    let raw: Vec<u64> = (0..recs.len())
                        .map(|i| match by {
                            ColorBy::Size => block(i).requested,
                            ColorBy::Waste => block(i).waste(),
                            ColorBy::Age => block(i).lifetime(),
                            _ => lat[recs[i].id as usize].alloc_ns.map_or(0, u64::from),
                        })
                        .collect();
                    let max = (*raw.iter().max().unwrap() as f64).ln_1p();
                    for (i, &v) in raw.iter().enumerate() {
                        let want = ((v as f64).ln_1p() / max) as f32;
                        assert!(
                            (values[i] - want).abs() <= 2.0 * f32::EPSILON,
                            "{by:?} at {i}"
                        );
                    }
                }
            }
        }
    }
}
