//! The one pass: a trace's events, read once in time order, fed to every model asked
//! for. The first trace feeds the heap model, the summary and the allocation map; the
//! others (forked children) feed the allocation map only. The program's own mappings
//! (`memlens record --mmap`, in the process stream) go to the allocation map, merged
//! with the events by time, and to one figure of the summary ([`MappedPeak`]); the
//! heap model leaves them out.

use std::cell::OnceCell;
use std::sync::Arc;

use memlens_alloc::{AllocModel, AllocModelBuilder, MappedBytes, ProcessId, WholeRunMap};
use memlens_heap::latency::LatencyTable;
use memlens_heap::summary::Summary;
use memlens_heap::{HeapModel, format_bytes, format_duration};
use memlens_trace::{EventStream, MapChange, Metadata};

use crate::alloc_feed::AllocFeed;
use crate::alloc_plan;
use crate::checkpoints::{self, Taker};
use crate::follow::Following;
use crate::heap_feed::HeapFeed;
use crate::index::{self, Lookup};
use crate::input::TraceInput;
use crate::live::{LiveRead, can_read_live};
use crate::progress::{ChunkProgress, Progress};
use crate::summary_feed::SummaryFeed;
use crate::symbols::StackSymbols;

/// The fewest events whose summary is kept in the trace's index: below, reading them
/// again takes a fraction of a second, less than an index file beside every small
/// trace is worth (`record --summary` would leave one beside each recording).
const KEEP_SUMMARY_FROM: u64 = 5_000_000;

/// Which models a pass builds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wanted {
    /// The heap-evolution model of the first trace (from its index when it has a valid
    /// one; the pass writes the index otherwise).
    pub heap: bool,
    /// Times at which the heap model must be exact besides its grid, marks, peaks and
    /// dips (the times a user typed).
    pub heap_instants: Vec<u64>,
    /// The allocation-map model of all traces.
    pub alloc: bool,
    /// The window `[from, to)` (ns on the allocation map's timeline) the allocation
    /// map reads when the whole run does not fit in memory (`render alloc --time`);
    /// without it, the last stretch of the run that fits.
    pub alloc_window: Option<(u64, u64)>,
    /// The streaming summary and allocator latencies of the first trace (from its
    /// index when it has them; the pass writes them there otherwise, for a trace of
    /// at least 5 M events).
    pub summary: bool,
    /// A later pass reads the first trace to its end too (the viewer's allocation map,
    /// read in the background once the first tree is served): this one leaves keeping
    /// the summary in the index to it, so that the first answer comes sooner.
    pub summary_later: bool,
    /// The trace is still being written ([`follow`](crate::follow)): its index is
    /// neither read nor written, since it would be stale a moment later, and (one trace,
    /// not the Java agent's) it is read as following it reads, up to half a second
    /// before its latest event, leaving [`Models::following`] to go on from.
    pub growing: bool,
}

impl Wanted {
    /// The allocation-map model alone.
    pub fn alloc() -> Wanted {
        Wanted {
            alloc: true,
            ..Wanted::default()
        }
    }

    /// The summary alone.
    pub fn summary() -> Wanted {
        Wanted {
            summary: true,
            ..Wanted::default()
        }
    }

    /// The heap and allocation-map models of a trace still being written.
    pub fn growing() -> Wanted {
        Wanted {
            heap: true,
            alloc: true,
            growing: true,
            ..Wanted::default()
        }
    }

    /// The heap model alone, exact at `instants` besides its grid.
    pub fn heap_at(instants: Vec<u64>) -> Wanted {
        Wanted {
            heap: true,
            heap_instants: instants,
            ..Wanted::default()
        }
    }
}

/// What a pass built.
#[derive(Default)]
pub struct Models {
    /// The heap-evolution model, when asked for.
    pub heap: Option<HeapModel>,
    /// The allocation-map model, when asked for.
    pub alloc: Option<AllocModel>,
    /// The summary, when asked for.
    pub summary: Option<Summary>,
    /// Allocator latencies per function (empty unless recorded with `--latency`), with
    /// the summary.
    pub latency: Option<LatencyTable>,
    /// The program's own mappings at their peak, with the summary of a trace recorded
    /// with `--mmap` that has any.
    pub mapped: Option<MappedPeak>,
    /// Sentences for the user: why an index was rebuilt or could not be written, why
    /// the allocation map was left out.
    pub notes: Vec<String>,
    /// Where following the trace goes on from, when it was read as still being written.
    pub following: Option<Following>,
}

/// The most bytes the program's own mappings held at once (`memlens record --mmap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MappedPeak {
    /// Bytes mapped at the peak (whole pages).
    pub bytes: u64,
    /// When the peak was first reached, ns.
    pub t_ns: u64,
    /// Mappings made in the whole run.
    pub mappings: u64,
}

impl MappedPeak {
    /// The peak of `md`'s mappings, if it has any.
    fn of(md: &Metadata) -> Option<MappedPeak> {
        let mut mapped = MappedBytes::new();
        for change in &md.mappings {
            match *change {
                MapChange::Map(m) => mapped.map(m.t, m.addr, m.len),
                MapChange::Unmap(u) => mapped.unmap(u.addr, u.len),
            }
        }
        let (bytes, t_ns) = mapped.peak();
        (mapped.mappings() > 0).then_some(MappedPeak {
            bytes,
            t_ns,
            mappings: mapped.mappings(),
        })
    }
}

impl std::fmt::Display for MappedPeak {
    /// `mapped by the program itself (mmap): 128 KiB at the peak, at 1.2 ms; 3 mappings`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "mapped by the program itself (mmap): {} at the peak, at {}; {} mapping{}",
            format_bytes(self.bytes),
            format_duration(self.t_ns),
            self.mappings,
            if self.mappings == 1 { "" } else { "s" }
        )
    }
}

/// Reads the events of `inputs` once and builds the `wanted` models. `symbols` holds
/// one namer per input, in the same order. Damage met in the event chunks is added to
/// each input's [`TraceInput::damage`].
pub fn ingest(
    inputs: &mut [TraceInput],
    symbols: &mut [StackSymbols],
    wanted: Wanted,
    progress: &dyn Progress,
) -> Models {
    if wanted.growing
        && let [input] = inputs
        && can_read_live(&input.metadata)
    {
        let mut read = LiveRead::start(input, &wanted, progress);
        input.damage.extend(read.damage().iter().cloned());
        let models = read.models(input);
        return Models {
            following: Some(Following(read)),
            ..models
        };
    }
    let mut models = Models::default();
    models
        .notes
        .extend(inputs.iter().filter_map(TraceInput::mid_run_note));
    // The first trace's index, read once (when a lookup needs it) for every lookup
    // below, and let go before the events are read.
    let opened = OnceCell::new();
    let index = || opened.get_or_init(|| index::open(&inputs[0]));
    let mut heap_wanted = wanted.heap && !inputs.is_empty();
    if heap_wanted && !wanted.growing {
        match index().heap(&wanted.heap_instants) {
            Lookup::Found(model) => {
                models.heap = Some(*model);
                heap_wanted = false;
            }
            Lookup::Missing => {}
            Lookup::Rejected(why) => models.notes.push(why),
        }
    }
    let mut summary_wanted = wanted.summary && !inputs.is_empty();
    if summary_wanted && !wanted.growing {
        match index().summary() {
            Lookup::Found(found) => {
                let (summary, latency) = *found;
                models.summary = Some(summary);
                models.latency = Some(latency);
                models.mapped = MappedPeak::of(&inputs[0].metadata);
                summary_wanted = false;
            }
            Lookup::Missing => {}
            Lookup::Rejected(why) => models.notes.push(why),
        }
    }
    let offsets = alloc_plan::clock_offsets(inputs);
    let blocks: u64 = inputs
        .iter()
        .map(|i| alloc_plan::blocks_of(&i.metadata))
        .sum();
    let run_end = alloc_plan::timeline_end(inputs);
    let spread = wanted.alloc.then(|| alloc_plan::Spread::of(inputs));
    let run_start = spread.as_ref().map_or(0, |s| s.first().min(run_end));
    let plan = spread.as_ref().map(|spread| {
        let (budget, why) = alloc_plan::memory_budget();
        models.notes.extend(why);
        alloc_plan::plan(blocks, run_end, spread, wanted.alloc_window, budget)
    });
    // A window reaching the run's end is read from its start to its end: that pass
    // also adds up the whole run at a glance, which every window then carries.
    let to_the_end = plan
        .as_ref()
        .and_then(|p| p.window)
        .is_some_and(|w| w.1 >= run_end);
    let alloc_until = plan
        .as_ref()
        .and_then(|p| p.window)
        .map_or(u64::MAX, |w| w.1);
    let window_note = plan.as_ref().and_then(|p| p.note.clone());
    // The window of a run too large for the map's memory is kept in the trace's index
    // (`index::store_alloc` says why only that; forked children's maps are not kept).
    let indexed =
        |window: Option<(u64, u64)>| window.filter(|_| inputs.len() == 1 && !wanted.growing);
    // The whole run at a glance kept in the index, for a window short of the run's
    // end read from the events.
    let mut whole_run = None;
    let plan = match plan.as_ref().and_then(|p| indexed(p.window)) {
        Some(window) => match index().alloc(Some(window)) {
            Lookup::Found(model) => match kept_whole_run(index(), &mut models.notes) {
                // The window to the run's end is read again, which rebuilds the
                // whole-run map; another is shown without it.
                None if to_the_end => plan,
                whole_run => {
                    let model = with_whole_run(*model, whole_run);
                    models.alloc = Some(with_note(model, window_note.clone()));
                    None
                }
            },
            lookup => {
                if let Lookup::Rejected(why) = lookup {
                    models.notes.push(why);
                }
                if !to_the_end {
                    whole_run = kept_whole_run(index(), &mut models.notes);
                }
                plan
            }
        },
        None => plan,
    };
    // A pass that reads a large first trace to its end anyway (for the heap model, or
    // for an allocation map reaching the run's end) keeps its summary in the index
    // too, unless the index has it: `summary` after `growth`, `tree`, `view` or
    // `render alloc` then reads no event, for the price of the summary's feed in a
    // pass that decodes the events anyway (see `bench/index/README.md`).
    let reads_to_end = heap_wanted
        || plan
            .as_ref()
            .is_some_and(|p| p.window.is_none_or(|w| w.1 >= run_end));
    let keep_summary = !summary_wanted
        && !wanted.summary_later
        && !wanted.growing
        && reads_to_end
        && inputs
            .first()
            .is_some_and(|i| i.metadata.event_records >= KEEP_SUMMARY_FROM)
        && match index().summary() {
            Lookup::Found(_) => false,
            Lookup::Missing => true,
            Lookup::Rejected(why) => {
                models.notes.push(why);
                true
            }
        };
    let kept_window = plan.as_ref().and_then(|p| indexed(p.window));
    // A window short of the run's end read from the events goes on from the latest
    // checkpoint kept before it, when nothing else wants the events before it; and
    // the reading of a window takes the checkpoints missing before it (see
    // `checkpoints.rs`).
    let mut resume = match kept_window {
        Some((from, _)) if !to_the_end && !heap_wanted && !summary_wanted && !keep_summary => {
            index().checkpoint(from).or_note(&mut models.notes)
        }
        _ => None,
    };
    let resumed_at = resume.as_ref().map(|&(t, fed, _)| (t, fed));
    let mut taker = kept_window
        .zip(spread.as_ref())
        .and_then(|((from, _), spread)| {
            let after = resumed_at.map_or(run_start, |(t, _)| t);
            let kept = index().checkpoint_times();
            let times = checkpoints::schedule(spread, run_end, (after, from), &kept);
            Taker::new(times, index::checkpoint_room(&inputs[0]))
        });
    drop(opened);
    let mut alloc = plan.map(|plan| {
        let mut builder = resume.take().map_or_else(
            || {
                let mut builder = AllocModelBuilder::new();
                if let Some((from, _)) = plan.window {
                    builder.start_at(from);
                    if to_the_end {
                        builder.track_whole_run(run_start, run_end);
                    }
                }
                builder
            },
            |(_, _, resumed)| resumed,
        );
        builder.reserve(plan.blocks as usize);
        builder
    });
    let mut alloc_end = 0u64;
    for (n, (input, names)) in inputs.iter_mut().zip(symbols.iter_mut()).enumerate() {
        let first = n == 0;
        let md = &input.metadata;
        let mut heap =
            (first && heap_wanted).then(|| HeapFeed::new(md, names, &wanted.heap_instants));
        let mut alloc_feed = alloc.as_mut().map(|b| match resumed_at {
            // (The resumed builder has the one trace's process already.)
            Some(_) => AllocFeed::resumed(ProcessId(0), offsets[n]),
            None => AllocFeed::new(b, md, input.file.path(), offsets[n]),
        });
        let beside = heap.is_some() || alloc_feed.is_some();
        let mut summary =
            (first && (summary_wanted || keep_summary)).then(|| SummaryFeed::new(md, beside));
        // The allocation map's window ends here on this trace's clock.
        let alloc_until = alloc_feed
            .as_ref()
            .map_or(0, |f| alloc_until.saturating_sub(f.offset()));
        if heap.is_none() && summary.is_none() && alloc_feed.is_none() {
            continue;
        }
        // From the checkpoint resumed, if any: its time, its mapping changes fed.
        let (from, mut fed) = resumed_at.map_or((0, 0), |(t, fed)| {
            let fed = fed.min(md.mappings.len() as u64);
            (t.saturating_sub(offsets[n]), fed)
        });
        progress.start(
            &input.file.path().display().to_string(),
            input.event_chunks_from(from),
        );
        let mut stream = EventStream::from_time(&input.file, from);
        let mut marks = md.marks.iter().peekable();
        let mut mappings = md.mappings[fed as usize..].iter().peekable();
        let mut ticks = ChunkProgress::default();
        while let Some(event) = stream.next() {
            let latency = stream.latency_ns();
            if let Some(heap) = heap.as_mut() {
                while let Some(mark) = marks.next_if(|m| m.t <= event.time()) {
                    heap.mark(mark.t, &mark.name);
                }
                heap.event(&event);
            }
            if let Some(summary) = summary.as_mut() {
                summary.event(&event, latency);
            }
            if let (Some(feed), Some(builder)) = (alloc_feed.as_mut(), alloc.as_mut())
                && event.time() < alloc_until
            {
                if let Some(taker) = taker.as_mut() {
                    taker.before_event(event.time() + feed.offset(), builder, fed);
                }
                while let Some(change) = mappings.next_if(|m| m.time() <= event.time()) {
                    feed.mapping(builder, md, names, change);
                    fed += 1;
                }
                feed.event(builder, md, names, &event, latency);
            } else if heap.is_none() && summary.is_none() {
                // Past the allocation map's window, and nothing else to build.
                break;
            }
            ticks.event(&stream, progress);
        }
        progress.finish();
        if let (Some(feed), Some(builder)) = (alloc_feed.as_mut(), alloc.as_mut()) {
            for change in mappings.take_while(|m| m.time() < alloc_until) {
                feed.mapping(builder, md, names, change);
            }
        }
        input.damage.extend(stream.take_damage());
        if let Some(mut heap) = heap {
            for mark in marks {
                heap.mark(mark.t, &mark.name);
            }
            let model = heap.finish(md.last_time);
            // A damaged trace is read again (and its damage reported) every time.
            if input.damage.is_empty()
                && !wanted.growing
                && let Err(why) = index::store(input, &model)
            {
                models.notes.push(format!("no index kept: {why}"));
            }
            models.heap = Some(model);
        }
        if let Some(summary) = summary {
            let (summary, latency) = summary.finish(md.last_time);
            // A damaged trace is read again (and its damage reported) every time.
            if input.damage.is_empty()
                && !wanted.growing
                && md.event_records >= KEEP_SUMMARY_FROM
                && let Err(why) = index::store_summary(input, &summary, &latency)
            {
                models.notes.push(format!("no index kept: {why}"));
            }
            if summary_wanted {
                models.summary = Some(summary);
                models.latency = Some(latency);
                models.mapped = MappedPeak::of(md);
            }
        }
        if let Some(feed) = alloc_feed {
            let end = md.last_time.min(alloc_until);
            alloc_end = alloc_end.max(end.saturating_add(feed.offset()));
        }
    }
    if let Some(builder) = alloc {
        let model = builder.finish(alloc_end);
        // A damaged trace is read again (and its damage reported) every time.
        if let (Some(window), [input]) = (kept_window, &inputs[..])
            && input.damage.is_empty()
            && let taken = taker.map_or_else(Vec::new, Taker::finish)
            && let Err(why) = index::store_alloc(input, Some(window), &model, &taken)
        {
            models.notes.push(format!("no index kept: {why}"));
        }
        // A window short of the run's end carries the whole-run map a read to the end
        // kept in the index, if any.
        models.alloc = Some(with_note(with_whole_run(model, whole_run), window_note));
    }
    models
}

/// The whole run at a glance kept in `index`, if any; a damaged one adds its sentence
/// to `notes`.
fn kept_whole_run(index: &index::Opened, notes: &mut Vec<String>) -> Option<Arc<WholeRunMap>> {
    index.whole_run().or_note(notes).map(Arc::new)
}

/// The allocation map of a window carrying the whole run at a glance, when there is one.
fn with_whole_run(mut model: AllocModel, whole_run: Option<Arc<WholeRunMap>>) -> AllocModel {
    if let Some(map) = whole_run {
        model.set_whole_run(map);
    }
    model
}

/// The allocation map saying which window it holds (`note`): every view of it shows
/// the sentence.
fn with_note(mut model: AllocModel, note: Option<String>) -> AllocModel {
    if let Some(note) = note {
        model.add_note(note);
    }
    model
}
