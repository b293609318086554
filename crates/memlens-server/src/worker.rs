//! The engine thread: one OS thread owns the [`Engine`] and answers jobs in order.
//!
//! The engine's tree series hold classifier trait objects that are not `Send`, and its
//! caches want one owner anyway, so the async handlers never touch it: they send a
//! closure over a channel and await the reply. Jobs run one at a time, which on the
//! 2-core machines we target is also the fastest order.

use std::sync::mpsc;
use std::thread;

use memlens_heap::HeapModel;
use tokio::sync::oneshot;

use crate::engine::{Engine, EngineOptions};
use crate::error::ApiError;
use crate::run_info::RunInfo;

type Job = Box<dyn FnOnce(&mut Engine<'static>) + Send>;

/// A cheap, cloneable handle to the engine thread.
#[derive(Clone)]
pub struct EngineHandle {
    jobs: mpsc::Sender<Job>,
}

impl EngineHandle {
    /// Starts the engine thread for `model` and waits until the engine is built (its
    /// snapshot times found); fails when the options are invalid.
    pub fn spawn(
        model: &'static HeapModel,
        info: RunInfo,
        options: EngineOptions,
    ) -> Result<EngineHandle, ApiError> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let (ready, built) = mpsc::channel::<Result<(), ApiError>>();
        thread::Builder::new()
            .name("memlens-engine".to_owned())
            .spawn(move || {
                let mut engine = match Engine::new(model, &info, options) {
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

    /// Runs `job` on the engine thread and returns its result.
    pub async fn call<R: Send + 'static>(
        &self,
        job: impl FnOnce(&mut Engine<'static>) -> R + Send + 'static,
    ) -> Result<R, ApiError> {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Box::new(move |engine| {
                let _ = reply.send(job(engine));
            }))
            .map_err(|_| ApiError::internal("the engine thread has stopped"))?;
        answer
            .await
            .map_err(|_| ApiError::internal("the engine thread stopped while answering"))
    }

    /// Queues `job` without waiting for it (used to warm the caches).
    pub fn submit(&self, job: impl FnOnce(&mut Engine<'static>) + Send + 'static) {
        let _ = self.jobs.send(Box::new(job));
    }
}
