//! The colouring attribute of every block (thread, site, process, size, waste,
//! age, latency), in the time × address index's order, computed once per model
//! and colouring, on first use: a category id per block with a palette, or a value
//! in 0..=1 (the logarithm of the value over that of the largest).
//!
//! This is what the first picture or tile of a new colouring waits for, so it reads
//! what it can from the index's own records (sizes and lifetimes are there, in the
//! order it writes) instead of each block's record, and a big model's blocks are
//! shared among the cores ([`map_in_parts`]).

use std::sync::OnceLock;

use super::ColorBy;
use super::parts::map_in_parts;
use crate::colormap::{Rgb, categorical_color};
use crate::error::AllocError;
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
type AttributeCache = [OnceLock<Attributes>; ColorBy::COUNT];

/// The message for colouring by latency a trace without latencies.
pub const NO_LATENCY: &str = "this trace has no latency: record with `memlens record --latency`";

/// Logarithmic normalisation of the non-negative values `value(0..n)` to 0..=1 by
/// the largest: `ln(1 + v) / ln(1 + max)`. `1 + v` is taken in `f64` and its `ln`
/// is 2.3 times as fast as `ln_1p` (within one `f32` step of it: integers need no
/// `ln_1p` near zero).
fn log_normalised(n: usize, value: impl Fn(usize) -> u64 + Sync) -> Vec<f32> {
    let ln_1p = |v: u64| (v as f64 + 1.0).ln();
    let max = (0..n).map(&value).max().unwrap_or(0);
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
        let slot = &self.attributes.get_or_init(AttributeCache::default)[by as usize];
        Ok(slot.get_or_init(|| self.compute_attributes(by)))
    }

    fn compute_attributes(&self, by: ColorBy) -> Attributes {
        let recs = self.index.records();
        let n = recs.len();
        let block = |i: usize| &self.blocks[recs[i].id as usize];
        match by {
            ColorBy::Thread => categorical(map_in_parts(n, |i| block(i).thread.0)),
            ColorBy::Site => categorical(map_in_parts(n, |i| block(i).site.0)),
            ColorBy::Process => {
                categorical(map_in_parts(n, |i| self.process_of(block(i).thread).0))
            }
            ColorBy::Size => {
                Attributes::Continuous(log_normalised(n, |i| requested(self, &recs[i])))
            }
            ColorBy::Waste => Attributes::Continuous(log_normalised(n, |i| block(i).waste())),
            // The index's times are the block's: `t1 − t0` is its lifetime.
            ColorBy::Age => {
                Attributes::Continuous(log_normalised(n, |i| recs[i].t1.saturating_sub(recs[i].t0)))
            }
            ColorBy::Latency => {
                let lat = self.latency.as_deref().unwrap_or(&[]);
                Attributes::Continuous(log_normalised(n, |i| {
                    lat.get(recs[i].id as usize)
                        .and_then(|l| l.alloc_ns)
                        .map_or(0, u64::from)
                }))
            }
        }
    }

    /// The colour of the category id `id` under `by` (for legends).
    pub fn category_color(&self, id: u32) -> Rgb {
        categorical_color(id)
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
