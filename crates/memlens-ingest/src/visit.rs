//! Every event of one trace, in time order, to a caller's visitor: the pass of the
//! exporters (`memlens export`), which write other tools' formats from the events
//! themselves rather than from a model. Damage met in the event chunks is added to the
//! input's [`TraceInput::damage`], as [`crate::ingest`] does.

use memlens_trace::{Event, EventStream};

use crate::input::TraceInput;
use crate::progress::{ChunkProgress, Progress};

/// Reads the events of `input` once, in time order, and hands each to `visit`, with
/// progress in event chunks.
pub fn visit_events(
    input: &mut TraceInput,
    progress: &dyn Progress,
    mut visit: impl FnMut(&Event),
) {
    progress.start(
        &input.file.path().display().to_string(),
        input.event_chunks(),
    );
    let mut stream = EventStream::new(&input.file);
    let mut ticks = ChunkProgress::default();
    while let Some(event) = stream.next() {
        visit(&event);
        ticks.event(&stream, progress);
    }
    progress.finish();
    input.damage.extend(stream.take_damage());
}
