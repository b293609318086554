//! A viewer that follows a trace still being written (`memlens record --view`): its
//! lenses are replaced by fresh ones after every read of the grown trace (each a
//! [`PendingLens`](crate::PendingLens) slot made ready again), and `api/live` tells the
//! page when that happened, how much of the run is recorded and whether the program
//! is still running, so the page updates itself without a reload.

use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use ts_rs::TS;

use crate::lens_api::LensApi;
use crate::pending::PendingLens;

/// The lenses of a followed trace: one slot per lens the viewer started with, each
/// made ready again with the lens of every new read.
pub struct LiveLenses {
    slots: Vec<Arc<PendingLens>>,
    /// What `api/live` answers.
    pub status: Arc<LiveStatus>,
}

impl LiveLenses {
    /// Slots holding `lenses` (the first read, `recorded_ns` of the run).
    pub fn new(lenses: Vec<Arc<dyn LensApi>>, recorded_ns: u64) -> LiveLenses {
        let slots = lenses
            .into_iter()
            .map(|lens| {
                let slot = PendingLens::new(lens.descriptor());
                slot.ready(lens);
                slot
            })
            .collect();
        LiveLenses {
            slots,
            status: Arc::new(LiveStatus::new(recorded_ns)),
        }
    }

    /// The lenses to serve (the slots).
    pub fn served(&self) -> Vec<Arc<dyn LensApi>> {
        self.slots
            .iter()
            .map(|s| Arc::clone(s) as Arc<dyn LensApi>)
            .collect()
    }

    /// Answers with `lens` from now on in the slot of its id (a lens the viewer did
    /// not start with has no tab on the page, and is dropped).
    pub fn replace(&self, lens: Arc<dyn LensApi>) {
        let id = lens.descriptor().id;
        if let Some(slot) = self.slots.iter().find(|s| s.descriptor().id == id) {
            slot.ready(lens);
        }
    }
}

/// `api/live`: how far a followed trace is read.
#[derive(Serialize, TS, Debug, Clone, Default, PartialEq, Eq)]
#[ts(export_to = "viewer.ts")]
pub struct LiveWire {
    /// Bumped after every read: the lenses answer from the new read once it changed.
    pub generation: u64,
    /// Whether the program is still running (more reads follow).
    pub running: bool,
    /// The run recorded so far, ns since the process start.
    pub recorded_ns: u64,
    /// When the latest read finished, ms since the Unix epoch.
    pub updated_unix_ms: u64,
    /// How long the latest read took, ms (updates come no faster).
    pub read_ms: u64,
}

/// The state of a followed trace, shared by the reader and the server.
#[derive(Debug, Default)]
pub struct LiveStatus {
    wire: Mutex<LiveWire>,
}

impl LiveStatus {
    /// A trace read once, its program still running.
    pub fn new(recorded_ns: u64) -> LiveStatus {
        LiveStatus {
            wire: Mutex::new(LiveWire {
                generation: 0,
                running: true,
                recorded_ns,
                updated_unix_ms: now_ms(),
                read_ms: 0,
            }),
        }
    }

    /// A new read is in the lenses: `recorded_ns` of the run, read in `read_ms`;
    /// `running` false when the program has ended (the last update).
    pub fn updated(&self, recorded_ns: u64, read_ms: u64, running: bool) {
        if let Ok(mut wire) = self.wire.lock() {
            wire.generation += 1;
            wire.running = running;
            wire.recorded_ns = recorded_ns;
            wire.read_ms = read_ms;
            wire.updated_unix_ms = now_ms();
        }
    }

    /// What `api/live` answers.
    pub fn wire(&self) -> LiveWire {
        self.wire.lock().map(|w| w.clone()).unwrap_or_default()
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_bump_the_generation_until_the_program_ends() {
        let live = LiveStatus::new(5);
        assert_eq!((live.wire().generation, live.wire().running), (0, true));
        live.updated(10, 3, true);
        live.updated(20, 4, false);
        let wire = live.wire();
        assert_eq!(
            (wire.generation, wire.running, wire.recorded_ns),
            (2, false, 20)
        );
    }
}
