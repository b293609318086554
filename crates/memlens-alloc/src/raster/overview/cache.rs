//! The overview kept with a model: the geometry, built once, and the sums of the most
//! recently prepared option sets, within a memory budget.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use super::geometry::Geometry;
use super::sums::{Sums, SumsKey};
use crate::model::AllocModel;
use crate::raster::RenderOptions;

/// One option set's sums, computed once even when several threads ask at once.
pub(super) type SumsSlot = Arc<OnceLock<Arc<Sums>>>;

/// Bytes of option sets' sums kept per model (the most recent set is always kept).
const SUMS_BUDGET: usize = 256 << 20;

/// A model's overview: the geometry (built once) and the sums of recent option sets,
/// least recently prepared first.
#[derive(Default)]
pub(super) struct OverviewCache {
    geometry: OnceLock<Option<Geometry>>,
    sums: Mutex<Vec<(SumsKey, SumsSlot)>>,
}

impl OverviewCache {
    /// The overview of `model`, kept in the model's `overview` slot.
    pub(super) fn of(model: &AllocModel) -> &OverviewCache {
        model.overview.get_or_init(OverviewCache::default)
    }

    /// The geometry of `model` (built on first use), or `None` when the model gets no
    /// overview.
    pub(super) fn geometry(&self, model: &AllocModel) -> Option<&Geometry> {
        self.geometry
            .get_or_init(|| Geometry::build(model))
            .as_ref()
    }

    /// True once the geometry is built and `model` gets an overview.
    pub(super) fn has_geometry(&self) -> bool {
        self.geometry.get().is_some_and(Option::is_some)
    }

    /// The slot of the sums for `key`, made the most recently prepared.
    pub(super) fn slot(&self, key: SumsKey) -> SumsSlot {
        let mut list = self.sums.lock().unwrap_or_else(PoisonError::into_inner);
        let slot = match list.iter().position(|(k, _)| *k == key) {
            Some(i) => list.remove(i).1,
            None => SumsSlot::default(),
        };
        list.push((key, Arc::clone(&slot)));
        slot
    }

    /// The slot of the sums for `key` prepared ahead of any request (see
    /// [`AllocModel::prepare_overview_ahead`]), or `None` when `key` has one already.
    /// It goes first in line to be dropped: the sums the user asked for stay.
    pub(super) fn slot_ahead(&self, key: SumsKey) -> Option<SumsSlot> {
        let mut list = self.sums.lock().unwrap_or_else(PoisonError::into_inner);
        if list.iter().any(|(k, _)| *k == key) {
            return None;
        }
        let slot = SumsSlot::default();
        list.insert(0, (key, Arc::clone(&slot)));
        Some(slot)
    }

    /// Whether `key` has sums, ready or being prepared.
    pub(super) fn has(&self, key: &SumsKey) -> bool {
        let list = self.sums.lock().unwrap_or_else(PoisonError::into_inner);
        list.iter().any(|(k, _)| k == key)
    }

    /// Whether sums of `bytes` more, prepared ahead, fit [`SUMS_BUDGET`] beside those
    /// ready (the sums a user then asks for drop those prepared ahead first).
    pub(super) fn has_room_ahead(&self, bytes: usize) -> bool {
        let list = self.sums.lock().unwrap_or_else(PoisonError::into_inner);
        let held: usize = list
            .iter()
            .filter_map(|(_, s)| s.get())
            .map(|s| s.bytes())
            .sum();
        held + bytes <= SUMS_BUDGET
    }

    /// The sums of `options` if they are ready.
    pub(super) fn ready(&self, options: &RenderOptions) -> Option<(&Geometry, Arc<Sums>)> {
        let geo = self.geometry.get()?.as_ref()?;
        let key = SumsKey::of(options);
        let list = self.sums.lock().unwrap_or_else(PoisonError::into_inner);
        let sums = list.iter().find(|(k, _)| *k == key)?.1.get()?;
        Some((geo, Arc::clone(sums)))
    }

    /// Drops the least recently prepared sums beyond [`SUMS_BUDGET`] (keeping the newest).
    pub(super) fn trim(&self) {
        let mut list = self.sums.lock().unwrap_or_else(PoisonError::into_inner);
        let mut total = 0;
        let mut keep_from = 0;
        for (i, (_, slot)) in list.iter().enumerate().rev() {
            total += slot.get().map_or(0, |s| s.bytes());
            if total > SUMS_BUDGET && i + 1 < list.len() {
                keep_from = i + 1;
                break;
            }
        }
        list.drain(..keep_from);
    }
}
