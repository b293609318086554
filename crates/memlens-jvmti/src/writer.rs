//! The writer thread: drains the callbacks' buffers every 20 ms into a
//! [`TraceWriter`], closes chunks at least every 200 ms (so a killed JVM loses at most
//! that much), and at VM death writes the totals and end records and tells the
//! exiting JVM.
//!
//! It is a plain native thread, never attached to the JVM: it makes no JVM call, so
//! the locks it shares with the callbacks can never wait on a safepoint.

use std::fs::File;
use std::io::BufWriter;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use memlens_trace::{Meta, Totals, TraceWriter};

use crate::agent::{Agent, Buffer, lock};

/// How often the buffers are drained.
const DRAIN_EVERY: Duration = Duration::from_millis(20);
/// How often chunks are closed and written.
const FLUSH_EVERY: Duration = Duration::from_millis(200);

/// The trace file's sink.
pub type Sink = TraceWriter<BufWriter<File>>;

/// Runs the writer loop until VM death; then completes the trace.
pub fn run(agent: &'static Agent, mut sink: Sink) {
    let mut last_flush = Instant::now();
    let mut events = Vec::new();
    let mut failed = false;
    // The events written, for the totals record before the end record.
    let mut totals = Totals::default();
    loop {
        let (metas, buffers, stop) = {
            let mut shared = lock(&agent.shared);
            if !shared.stop {
                shared = agent
                    .signal
                    .wait_timeout(shared, DRAIN_EVERY)
                    .map(|(g, _)| g)
                    .unwrap_or_else(|e| e.into_inner().0);
            }
            // Forget the buffers of threads that ended (only this list still holds
            // them) once they are drained, so thread-per-task programs stay cheap.
            shared
                .buffers
                .retain(|b| Arc::strong_count(b) > 1 || !lock(b).events.is_empty());
            let buffers: Vec<Arc<std::sync::Mutex<Buffer>>> = shared.buffers.clone();
            (std::mem::take(&mut shared.metas), buffers, shared.stop)
        };
        let interned = lock(&agent.interner).take_pending();
        if !failed {
            let result = (|| -> std::io::Result<()> {
                for m in interned.iter().chain(&metas) {
                    sink.meta(m)?;
                }
                for buffer in &buffers {
                    std::mem::swap(&mut lock(buffer).events, &mut events);
                    for e in events.drain(..) {
                        totals.count(&e);
                        sink.event(&e)?;
                    }
                }
                if stop {
                    sink.meta(&Meta::Totals(totals))?;
                    sink.meta(&Meta::End {
                        t: agent.now(),
                        how: "exit".into(),
                    })?;
                    sink.flush_chunks()?;
                } else if last_flush.elapsed() >= FLUSH_EVERY {
                    sink.flush_chunks()?;
                    last_flush = Instant::now();
                }
                Ok(())
            })();
            if let Err(e) = result {
                eprintln!("memlens: cannot write the trace: {e}; recording stops");
                agent.stopped.store(true, Ordering::SeqCst);
                failed = true;
            }
        } else {
            // Keep draining so the buffers do not grow.
            for buffer in &buffers {
                lock(buffer).events.clear();
            }
        }
        if stop {
            let mut shared = lock(&agent.shared);
            shared.done = true;
            agent.signal.notify_all();
            return;
        }
    }
}
