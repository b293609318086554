//! The heap lens's engine thread: one OS thread owns the model and the [`Engine`] over
//! it, and answers jobs in order.
//!
//! The engine's tree series hold classifier trait objects that are not `Send`, and its
//! caches want one owner anyway, so requests never touch it: they send a closure over
//! a channel and wait for the reply. The thread's own function owns the model, and the
//! engine borrows it there, so nothing needs a `'static` model; the thread ends (and
//! frees the model) when the last handle is dropped. Jobs run one at a time, which on
//! the 2-core machines we target is also the fastest order.

use std::sync::mpsc;
use std::thread;

use memlens_heap::HeapModel;

use super::engine::{Base, Engine, EngineOptions};
use crate::error::ApiError;

type Job = Box<dyn for<'m> FnOnce(&mut Engine<'m>) + Send>;

/// A handle to the engine thread.
pub struct EngineHandle {
    jobs: mpsc::Sender<Job>,
}

impl EngineHandle {
    /// Starts the engine thread with `model` (and a base run with its name, which the
    /// trees are compared with) and waits until the engine is built (its snapshot times
    /// found); fails when the options are invalid.
    pub fn spawn(
        model: HeapModel,
        base: Option<(HeapModel, String)>,
        options: EngineOptions,
    ) -> Result<EngineHandle, ApiError> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let (ready, built) = mpsc::channel::<Result<(), ApiError>>();
        thread::Builder::new()
            .name("memlens-engine".to_owned())
            .spawn(move || {
                let base = base.as_ref().map(|(model, name)| Base {
                    model,
                    name: name.clone(),
                });
                let mut engine = match Engine::new(&model, base, options) {
                    Ok(engine) => {
                        let _ = ready.send(Ok(()));
                        engine
                    }
                    Err(e) => {
                        let _ = ready.send(Err(e));
                        return;
                    }
                };
                while let Ok(job) = queue.recv() {
                    job(&mut engine);
                }
            })
            .map_err(|e| ApiError::internal(format!("cannot start the engine thread: {e}")))?;
        built
            .recv()
            .map_err(|_| ApiError::internal("the engine thread stopped while starting"))??;
        Ok(EngineHandle { jobs })
    }

    /// Runs `job` on the engine thread and waits for its result.
    pub fn call<R: Send + 'static>(
        &self,
        job: impl for<'m> FnOnce(&mut Engine<'m>) -> R + Send + 'static,
    ) -> Result<R, ApiError> {
        let (reply, answer) = mpsc::sync_channel(1);
        self.jobs
            .send(Box::new(move |engine: &mut Engine<'_>| {
                let _ = reply.send(job(engine));
            }))
            .map_err(|_| ApiError::internal("the engine thread has stopped"))?;
        answer
            .recv()
            .map_err(|_| ApiError::internal("the engine thread stopped while answering"))
    }

    /// Queues `job` without waiting for it (used to warm the caches).
    pub fn submit(&self, job: impl for<'m> FnOnce(&mut Engine<'m>) + Send + 'static) {
        let _ = self.jobs.send(Box::new(job));
    }
}
