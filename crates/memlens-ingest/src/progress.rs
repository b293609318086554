//! How long passes report how far they are: the caller (the CLI, with a progress bar on
//! a terminal) implements [`Progress`]; libraries never print.

/// Receives the progress of a long pass.
pub trait Progress {
    /// A pass named `what` over `total` units (chunks) starts.
    fn start(&self, what: &str, total: u64);
    /// `done` units of the pass are finished.
    fn advance(&self, done: u64);
    /// The pass is over.
    fn finish(&self);
}

/// Progress of a pass over a trace's events, told in event chunks: every 65,536 events
/// it looks at how many chunks the stream has finished, and reports when that changed.
#[derive(Debug, Default)]
pub(crate) struct ChunkProgress {
    seen: u64,
    count: u32,
}

impl ChunkProgress {
    /// One more event of `stream` was read.
    #[inline]
    pub(crate) fn event(
        &mut self,
        stream: &memlens_trace::EventStream<'_>,
        progress: &dyn Progress,
    ) {
        self.count += 1;
        if self.count == 65_536 {
            self.count = 0;
            let done = stream.chunks_done();
            if done != self.seen {
                self.seen = done;
                progress.advance(done);
            }
        }
    }
}

/// Reports to a function of (units done, units in total), e.g. a lens being read.
pub struct ProgressFn<F: Fn(u64, u64)> {
    report: F,
    total: std::cell::Cell<u64>,
}

impl<F: Fn(u64, u64)> ProgressFn<F> {
    /// Progress reported to `report`.
    pub fn new(report: F) -> Self {
        ProgressFn {
            report,
            total: std::cell::Cell::new(0),
        }
    }
}

impl<F: Fn(u64, u64)> Progress for ProgressFn<F> {
    fn start(&self, _what: &str, total: u64) {
        self.total.set(total);
        (self.report)(0, total);
    }
    fn advance(&self, done: u64) {
        (self.report)(done, self.total.get());
    }
    fn finish(&self) {}
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _what: &str, _total: u64) {}
    fn advance(&self, _done: u64) {}
    fn finish(&self) {}
}
