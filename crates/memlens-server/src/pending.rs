//! A lens whose data is still being read: the viewer opens with the lenses that are
//! ready, and this one's tab answers every request with status 503 and a sentence
//! saying how far the reading is (`api/<id>/…` → `{"error": "… 43 % …"}`), until the
//! reader hands it the real lens ([`PendingLens::ready`]) or says why there is none
//! ([`PendingLens::failed`]). The page shows the sentence and asks again.
//!
//! `memlens view` reads the allocation map this way: the heap lens comes from the
//! trace's index in a fraction of a second, while the map needs a pass over every
//! event. A lens made with a [`Reader`] ([`PendingLens::reading`]) can also be read
//! again for another window of the run: `api/<id>/window?from_ns=A&to_ns=B` starts
//! that reading and answers at once; the lens is pending again until it is done (the
//! allocation map of a run too large for its memory, which holds one window of it).

use std::collections::HashMap;
use std::sync::{Arc, RwLock, Weak};

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

/// Reads a [`PendingLens`]'s lens for a window `[from, to)` of the run (ns on its
/// timeline; `None`: the window it was first asked for), reporting to it and handing
/// it the lens (or the reason there is none).
pub type Reader = dyn Fn(&PendingLens, Option<(u64, u64)>) + Send + Sync;

/// A lens being read; see the module documentation.
pub struct PendingLens {
    descriptor: LensWire,
    state: RwLock<State>,
    /// What reads it again for another window, when it can be.
    reader: Option<Arc<Reader>>,
    /// Itself, for the thread that reads it again.
    me: Weak<PendingLens>,
}

impl PendingLens {
    /// A lens with tab `descriptor`, not read yet.
    pub fn new(descriptor: LensWire) -> Arc<PendingLens> {
        PendingLens::with_reader(descriptor, None)
    }

    /// A lens with tab `descriptor` that `reader` reads, now on a thread of its own,
    /// and again for every window the page asks for.
    pub fn reading(descriptor: LensWire, reader: Arc<Reader>) -> Arc<PendingLens> {
        let pending = PendingLens::with_reader(descriptor, Some(reader));
        pending.read_window(None);
        pending
    }

    fn with_reader(descriptor: LensWire, reader: Option<Arc<Reader>>) -> Arc<PendingLens> {
        Arc::new_cyclic(|me| PendingLens {
            descriptor,
            state: RwLock::new(State::Reading { done: 0, total: 0 }),
            reader,
            me: me.clone(),
        })
    }

    /// Starts reading the lens for `window` on a thread of its own; the lens is pending
    /// until it is read.
    fn read_window(&self, window: Option<(u64, u64)>) {
        let (Some(reader), Some(me)) = (self.reader.clone(), self.me.upgrade()) else {
            return;
        };
        if let Ok(mut state) = self.state.write() {
            *state = State::Reading { done: 0, total: 0 };
        }
        std::thread::spawn(move || reader(&me, window));
    }

    /// Answers `window?from_ns=A&to_ns=B`: starts reading that window, unless the lens
    /// cannot be read again or is being read.
    fn answer_window(&self, query: &HashMap<String, String>) -> Result<ApiBody, ApiError> {
        let bad = |message: String| ApiError {
            status: 400,
            message,
        };
        if self.reader.is_none() {
            return Err(bad(format!(
                "this {} cannot be read for another window",
                self.descriptor.title.to_lowercase()
            )));
        }
        let end = |key: &str| {
            let text = query.get(key).map(String::as_str).unwrap_or("");
            text.parse::<u64>()
                .map_err(|_| bad(format!("`{key}` must be a time in ns, not `{text}`")))
        };
        let (from, to) = (end("from_ns")?, end("to_ns")?);
        if to <= from {
            return Err(bad(format!(
                "the window {from}..{to} ns is empty: its end must be after its start"
            )));
        }
        if self.lens().is_err_and(|e| e.status == NOT_READY) {
            return Err(ApiError {
                status: 409,
                message: "a window is being read already".to_owned(),
            });
        }
        self.read_window(Some((from, to)));
        Ok(ApiBody::json("{\"reading\":true}".to_owned()))
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
        match route {
            "window" => self.answer_window(query),
            _ => self.lens()?.answer(route, query),
        }
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
    fn a_lens_with_a_reader_is_read_again_for_the_window_asked_for() {
        let windows = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = Arc::clone(&windows);
        let reader = move |pending: &PendingLens, window: Option<(u64, u64)>| {
            seen.lock().unwrap().push(window);
            pending.ready(Arc::new(Fixed));
        };
        let pending = PendingLens::reading(Fixed.descriptor(), Arc::new(reader));
        let ready = |pending: &PendingLens| {
            let waited = std::time::Instant::now();
            while pending.answer("meta", &HashMap::new()).is_err() {
                assert!(waited.elapsed().as_secs() < 10, "never read");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        };
        ready(&pending);
        let ask = |from: &str, to: &str| {
            let q = HashMap::from([("from_ns".into(), from.into()), ("to_ns".into(), to.into())]);
            pending.answer("window", &q)
        };
        for (from, to) in [("5", "5"), ("x", "9"), ("7", "")] {
            assert_eq!(
                ask(from, to).err().map(|e| e.status),
                Some(400),
                "{from}..{to}"
            );
        }
        assert!(ask("5", "9").is_ok());
        ready(&pending);
        assert_eq!(*windows.lock().unwrap(), [None, Some((5, 9))]);
        // A lens without a reader cannot be read again.
        let fixed = PendingLens::new(Fixed.descriptor());
        let q = HashMap::from([("from_ns".into(), "1".into()), ("to_ns".into(), "2".into())]);
        assert_eq!(
            fixed.answer("window", &q).err().map(|e| e.status),
            Some(400)
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
