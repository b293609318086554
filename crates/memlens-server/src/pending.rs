//! A lens whose data is still being read: the viewer opens with the lenses that are
//! ready, and this one's tab answers every request with status 503 and a sentence
//! saying how far the reading is (`api/<id>/…` → `{"error": "… 43 % …"}`), until the
//! reader hands it the real lens ([`PendingLens::ready`]) or says why there is none
//! ([`PendingLens::failed`]). The page shows the sentence and asks again.
//!
//! `memlens view` reads the allocation map this way: the heap lens comes from the
//! trace's index in a fraction of a second, while the map needs a pass over every
//! event.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::error::ApiError;
use crate::lens_api::{ApiBody, LensApi, ReportRequest};
use crate::protocol::LensWire;

/// The HTTP status of an answer that is not ready yet.
pub const NOT_READY: u16 = 503;

enum State {
    /// `done` of `total` units read (0 of 0 before the reader starts).
    Reading {
        done: u64,
        total: u64,
    },
    Ready(Arc<dyn LensApi>),
    Failed(String),
}

/// A lens being read; see the module documentation.
pub struct PendingLens {
    descriptor: LensWire,
    state: RwLock<State>,
}

impl PendingLens {
    /// A lens with tab `descriptor`, not read yet.
    pub fn new(descriptor: LensWire) -> Arc<PendingLens> {
        Arc::new(PendingLens {
            descriptor,
            state: RwLock::new(State::Reading { done: 0, total: 0 }),
        })
    }

    /// `done` of `total` units are read.
    pub fn progress(&self, done: u64, total: u64) {
        if let Ok(mut state) = self.state.write()
            && let State::Reading { .. } = *state
        {
            *state = State::Reading { done, total };
        }
    }

    /// The lens is read: every request goes to it from now on.
    pub fn ready(&self, lens: Arc<dyn LensApi>) {
        if let Ok(mut state) = self.state.write() {
            *state = State::Ready(lens);
        }
    }

    /// There will be no lens: every request gets `why` (one sentence).
    pub fn failed(&self, why: String) {
        if let Ok(mut state) = self.state.write() {
            *state = State::Failed(why);
        }
    }

    /// The lens, once ready.
    fn lens(&self) -> Result<Arc<dyn LensApi>, ApiError> {
        let state = self
            .state
            .read()
            .map_err(|_| ApiError::internal("the lens's reader stopped"))?;
        match &*state {
            State::Ready(lens) => Ok(Arc::clone(lens)),
            State::Failed(why) => Err(ApiError {
                status: 404,
                message: why.clone(),
            }),
            State::Reading { done, total } => {
                let share = match total {
                    0 => String::new(),
                    _ => format!(" ({} %)", done.min(total) * 100 / total),
                };
                Err(ApiError {
                    status: NOT_READY,
                    message: format!(
                        "the {} is still being read{share}; it appears here when done",
                        self.descriptor.title.to_lowercase()
                    ),
                })
            }
        }
    }
}

impl LensApi for PendingLens {
    fn descriptor(&self) -> LensWire {
        self.descriptor.clone()
    }

    fn answer(&self, route: &str, query: &HashMap<String, String>) -> Result<ApiBody, ApiError> {
        self.lens()?.answer(route, query)
    }

    fn report_requests(&self) -> Vec<ReportRequest> {
        self.lens()
            .map(|lens| lens.report_requests())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed;

    impl LensApi for Fixed {
        fn descriptor(&self) -> LensWire {
            LensWire {
                id: "alloc",
                title: "Allocation map",
                question: "?",
            }
        }

        fn answer(&self, route: &str, _: &HashMap<String, String>) -> Result<ApiBody, ApiError> {
            Ok(ApiBody::json(format!("\"{route}\"")))
        }

        fn report_requests(&self) -> Vec<ReportRequest> {
            Vec::new()
        }
    }

    #[test]
    fn answers_not_ready_with_the_progress_then_delegates() {
        let pending = PendingLens::new(Fixed.descriptor());
        let q = HashMap::new();
        let e = pending.answer("meta", &q).err().unwrap();
        assert_eq!(e.status, NOT_READY);
        assert_eq!(
            e.message,
            "the allocation map is still being read; it appears here when done"
        );
        pending.progress(43, 100);
        let e = pending.answer("meta", &q).err().unwrap();
        assert!(e.message.contains("(43 %)"), "{}", e.message);
        pending.ready(Arc::new(Fixed));
        assert!(pending.answer("meta", &q).is_ok());
        pending.progress(1, 2);
        assert!(
            pending.answer("meta", &q).is_ok(),
            "progress after ready is ignored"
        );
    }

    #[test]
    fn a_failed_read_answers_its_sentence() {
        let pending = PendingLens::new(Fixed.descriptor());
        pending.failed("the allocation map is left out".to_owned());
        let e = pending.answer("tile", &HashMap::new()).err().unwrap();
        assert_eq!(
            (e.status, e.message.as_str()),
            (404, "the allocation map is left out")
        );
    }
}
