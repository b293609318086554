//! The Firefox Profiler's processed profile (<https://profiler.firefox.com>), written
//! with samply's `fxprof-processed-profile` crate: every allocation and free of the
//! run (or of `--from`/`--to`) as a native allocation sample, and a memory track of the
//! bytes live over time.
//!
//! - **One thread carries the allocations.** The profiler matches a free to its
//!   allocation by address within one thread's `nativeAllocations` table (its "Retained
//!   Memory" view), and a block is often freed by another thread than the one that
//!   allocated it; so, as the Gecko profiler and the crate do, every sample goes to the
//!   process's main thread. When the trace has several threads, each stack starts at a
//!   frame naming its thread (`thread NAME (TID)`), so the call tree still splits the
//!   heap by thread.
//! - **Births and deaths.** A birth is `+size` at the block's address with its
//!   allocating stack; a death is `-size` at the same address with the stack that freed
//!   it: the `free` stack when recorded (`memlens record --free-stacks`), the `realloc`
//!   call for a block a `realloc` replaced, and otherwise one frame saying that the
//!   stack was not recorded. The profiler's "Deallocation sites" view shows where memory
//!   was freed, so an allocating stack there would be a lie; its "Deallocated memory" and
//!   "Retained memory" views find the allocating stack by address themselves.
//! - **Frames** are labels — the function as every memlens view names it (inlined
//!   frames included, `0x… (in module+0x…)` when unnamed) — coloured by the frame
//!   policy's kind (user code, library, runtime…). The crate writes no file or line.
//! - **The memory track** ("Memory" counter) is the requested bytes live, downsampled
//!   ([`crate::firefox_counter`]): at most about 100,000 intervals, none shorter than
//!   100 µs, each giving its maximum and its closing value.
//! - **Bound.** The profiler loads the whole JSON into a browser tab, so an export holds
//!   at most [`MAX_EVENTS`] events: a longer trace needs `--from`/`--to`, and a window
//!   holding more is refused, each with one sentence. `--at` and `--value` do not apply.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use fxprof_processed_profile::{
    CategoryColor, CategoryPairHandle, Frame, FrameFlags, FrameInfo, ProcessHandle, Profile,
    ReferenceTimestamp, SamplingInterval, StackHandle, ThreadHandle, Timestamp,
};
use memlens_heap::TimeWindow;
use memlens_ingest::{Progress, StackSymbols, TraceInput, visit_events};
use memlens_trace::Metadata;
use memlens_vocab::{FrameKind, format_count};
use rustc_hash::FxHashMap;

use crate::firefox_counter::LiveTrack;
use crate::{Block, Death, ExportError, ExportStacks, Lifetimes, Options, Step};

/// The most events one export holds (the profiler opens a few hundred MB of JSON).
pub const MAX_EVENTS: u64 = 5_000_000;

/// The shortest interval of the memory track, and its most intervals.
const TRACK_MIN_INTERVAL_NS: u64 = 100_000;
const TRACK_MAX_INTERVALS: u64 = 100_000;

/// The frame of a death whose stack was not recorded.
const FREE_NOT_RECORDED: &str = "[free stack not recorded: memlens record --free-stacks]";
/// The frame of a block whose address was reused without a recorded free.
const FREE_MISSING: &str = "[no free recorded: the address was allocated again]";

/// Writes `input` as a Firefox Profiler profile to `out`.
pub fn write(
    input: &mut TraceInput,
    names: &mut StackSymbols,
    options: &Options,
    out: &Path,
    progress: &dyn Progress,
) -> Result<String, ExportError> {
    let events = input.metadata.event_records;
    if options.window.is_none() && events > MAX_EVENTS {
        return Err(too_many(out, events, "the trace"));
    }
    let window = options.window.unwrap_or(TimeWindow {
        start_ns: 0,
        end_ns: u64::MAX,
    });
    // The pass borrows the input; the metadata the stacks are named from is set aside
    // for it (the event pass reads the file only) and put back afterwards.
    let md = std::mem::take(&mut input.metadata);
    let end_ns = window.end_ns.min(md.last_time);
    let mut writer = Writer::new(&md, names, window, end_ns);
    let mut life = Lifetimes::new();
    let mut counted = 0u64;
    visit_events(input, progress, |event| {
        let t = event.time();
        if t > window.end_ns {
            // Nothing after the window shows; what was live then stays live.
            return;
        }
        let inside = window.contains(t);
        if inside {
            counted += 1;
            if counted > MAX_EVENTS {
                return;
            }
        }
        writer.before(t);
        life.event(event, &mut |step| writer.step(step, inside));
        if inside {
            writer.after(t);
        }
    });
    let written = (counted <= MAX_EVENTS).then(|| writer.finish());
    input.metadata = md;
    let written = written.ok_or_else(|| too_many(out, counted, "the window"))?;
    let mut file = crate::create(out)?;
    serde_json::to_writer(&mut file, &written.profile)
        .map_err(|e| ExportError::io(out, e.into()))?;
    file.flush().map_err(|e| ExportError::io(out, e))?;
    Ok(format!(
        "{} {}, {} allocations and {} frees",
        format_count(written.threads),
        if written.threads == 1 {
            "thread"
        } else {
            "threads"
        },
        format_count(written.births),
        format_count(written.deaths)
    ))
}

/// The sentence refusing an export of `events` events from `what`.
fn too_many(out: &Path, events: u64, what: &str) -> ExportError {
    ExportError::format(
        out,
        format!(
            "{what} has {} events, more than the Firefox Profiler can open ({}); \
             export a part of the run with --from and --to",
            format_count(events),
            format_count(MAX_EVENTS)
        ),
    )
}

/// The finished profile and its counts.
struct Written {
    profile: Profile,
    threads: u64,
    births: u64,
    deaths: u64,
}

/// The profile under construction.
struct Writer<'a> {
    md: &'a Metadata,
    names: &'a mut StackSymbols,
    stacks: ExportStacks,
    profile: Profile,
    process: ProcessHandle,
    thread: ThreadHandle,
    /// Category pairs by frame kind (`FrameKind as usize`), and for memlens' own labels.
    kinds: Vec<CategoryPairHandle>,
    label: CategoryPairHandle,
    /// Profile stacks by (thread frame, trace stack); thread 0 when stacks carry none.
    interned: FxHashMap<(u32, u32), Option<StackHandle>>,
    labels: FxHashMap<(u32, &'static str), Option<StackHandle>>,
    thread_frames: bool,
    /// The death of a block a `realloc` replaced, waiting for the new block's stack.
    pending: Option<Block>,
    live_bytes: u64,
    /// The memory track, from the first event at or after the window's start.
    track: Option<LiveTrack>,
    interval_ns: u64,
    window: TimeWindow,
    end_ns: u64,
    tids: Vec<u32>,
    births: u64,
    deaths: u64,
}

impl<'a> Writer<'a> {
    fn new(
        md: &'a Metadata,
        names: &'a mut StackSymbols,
        window: TimeWindow,
        end_ns: u64,
    ) -> Writer<'a> {
        let (pid, exe, start_unix_ns) = md.process.as_ref().map_or((0, String::new(), 0), |p| {
            (p.pid, p.exe.clone(), p.start_unix_ns)
        });
        let exe = exe.rsplit('/').next().unwrap_or_default().to_owned();
        let product = if exe.is_empty() {
            "memlens trace".to_owned()
        } else {
            exe
        };
        let start = window.start_ns.min(end_ns);
        let interval =
            LiveTrack::interval_for(end_ns - start, TRACK_MAX_INTERVALS, TRACK_MIN_INTERVAL_NS);
        let mut profile = Profile::new(
            &product,
            ReferenceTimestamp::from_duration_since_unix_epoch(Duration::from_nanos(start_unix_ns)),
            SamplingInterval::from_nanos(interval),
        );
        profile.set_symbolicated(true);
        profile.set_os_name("Linux");
        let process = profile.add_process(&product, pid, Timestamp::from_nanos_since_reference(0));
        profile.set_process_end_time(process, Timestamp::from_nanos_since_reference(md.last_time));
        let thread =
            profile.add_thread(process, pid, Timestamp::from_nanos_since_reference(0), true);
        if let Some(name) = md.threads.get(&pid).map(|t| t.name.as_str())
            && !name.is_empty()
        {
            profile.set_thread_name(thread, name);
        }
        profile.add_initial_visible_thread(thread);
        profile.add_initial_selected_thread(thread);
        let kinds = FrameKind::ALL
            .iter()
            .map(|&kind| {
                let color = match kind {
                    FrameKind::User => CategoryColor::Blue,
                    FrameKind::Library => CategoryColor::Green,
                    FrameKind::Allocator => CategoryColor::Red,
                    FrameKind::Runtime => CategoryColor::Orange,
                    FrameKind::Loader => CategoryColor::Brown,
                    FrameKind::Recorder => CategoryColor::DarkGray,
                };
                profile.add_category(&category_name(kind), color).into()
            })
            .collect();
        let label = profile.add_category("memlens", CategoryColor::Gray).into();
        Writer {
            md,
            names,
            stacks: ExportStacks::new(),
            profile,
            process,
            thread,
            kinds,
            label,
            interned: FxHashMap::default(),
            labels: FxHashMap::default(),
            thread_frames: md.threads.len() > 1,
            pending: None,
            live_bytes: 0,
            track: None,
            interval_ns: interval,
            window,
            end_ns,
            tids: Vec::new(),
            births: 0,
            deaths: 0,
        }
    }

    /// Before the event at `t_ns`: the memory track starts at the window's start with
    /// what was live when it opened.
    fn before(&mut self, t_ns: u64) {
        if self.track.is_none() && t_ns >= self.window.start_ns {
            self.start_track();
        }
    }

    /// After an event inside the window, at `t_ns`.
    fn after(&mut self, t_ns: u64) {
        if let Some(track) = &mut self.track {
            track.record(t_ns, self.live_bytes);
        }
    }

    fn start_track(&mut self) {
        let start = self.window.start_ns.min(self.end_ns);
        self.track = Some(LiveTrack::new(self.interval_ns, start, self.live_bytes));
    }

    /// Applies one step of the live set; `inside` when its event lies in the window.
    fn step(&mut self, step: Step<'_>, inside: bool) {
        match step {
            Step::Born(block) => {
                self.live_bytes += block.size;
                if !inside {
                    return;
                }
                if let Some(pending) = self.pending.take() {
                    let stack = if pending.died_seq == Some(block.born_seq) {
                        self.stack(pending.died_tid.unwrap_or(block.tid), block.stack)
                    } else {
                        self.death_label(&pending)
                    };
                    self.death(&pending, stack);
                }
                let stack = self.stack(block.tid, block.stack);
                let t = Timestamp::from_nanos_since_reference(block.born_ns);
                self.profile.add_allocation_sample(
                    self.thread,
                    t,
                    stack,
                    block.address,
                    signed(block.size),
                );
                self.births += 1;
                self.seen(block.tid);
            }
            Step::Died(block) => {
                self.live_bytes -= block.size;
                if !inside {
                    return;
                }
                if block.death == Some(Death::Realloc) {
                    if let Some(pending) = self.pending.replace(*block) {
                        let stack = self.death_label(&pending);
                        self.death(&pending, stack);
                    }
                    return;
                }
                let tid = block.died_tid.unwrap_or(block.tid);
                let stack = if block.died_stack != 0 {
                    self.stack(tid, block.died_stack)
                } else {
                    self.death_label(block)
                };
                self.death(block, stack);
            }
        }
    }

    /// The stack of a death whose freeing stack is unknown.
    fn death_label(&mut self, block: &Block) -> Option<StackHandle> {
        let text = if block.death == Some(Death::Conflict) {
            FREE_MISSING
        } else {
            FREE_NOT_RECORDED
        };
        self.label_stack(block.died_tid.unwrap_or(block.tid), text)
    }

    fn death(&mut self, block: &Block, stack: Option<StackHandle>) {
        let t = Timestamp::from_nanos_since_reference(block.died_ns.unwrap_or(block.born_ns));
        self.profile.add_allocation_sample(
            self.thread,
            t,
            stack,
            block.address,
            -signed(block.size),
        );
        self.deaths += 1;
        if let Some(tid) = block.died_tid {
            self.seen(tid);
        }
    }

    fn seen(&mut self, tid: u32) {
        if !self.tids.contains(&tid) {
            self.tids.push(tid);
        }
    }

    /// The profile stack of trace stack `stack` on thread `tid`.
    fn stack(&mut self, tid: u32, stack: u32) -> Option<StackHandle> {
        let key = (if self.thread_frames { tid } else { 0 }, stack);
        if let Some(&handle) = self.interned.get(&key) {
            return handle;
        }
        let path = self.stacks.path(self.md, self.names, stack).to_vec();
        let mut frames = self.thread_frame(tid);
        for &id in path.iter().rev() {
            let kind = self.stacks.frame(id).kind;
            let name = self.stacks.name(id);
            frames.push(FrameInfo {
                frame: Frame::Label(self.profile.intern_string(&name)),
                category_pair: self.kinds[kind as usize],
                flags: FrameFlags::empty(),
            });
        }
        if path.is_empty() {
            frames.push(self.label_frame("[unknown stack]"));
        }
        let handle = self
            .profile
            .intern_stack_frames(self.thread, frames.into_iter());
        self.interned.insert(key, handle);
        handle
    }

    /// A stack of one label under thread `tid`'s frame.
    fn label_stack(&mut self, tid: u32, text: &'static str) -> Option<StackHandle> {
        let key = (if self.thread_frames { tid } else { 0 }, text);
        if let Some(&handle) = self.labels.get(&key) {
            return handle;
        }
        let mut frames = self.thread_frame(tid);
        frames.push(self.label_frame(text));
        let handle = self
            .profile
            .intern_stack_frames(self.thread, frames.into_iter());
        self.labels.insert(key, handle);
        handle
    }

    /// The root frame naming thread `tid`, when stacks carry one.
    fn thread_frame(&mut self, tid: u32) -> Vec<FrameInfo> {
        if !self.thread_frames {
            return Vec::new();
        }
        let text = match self.md.threads.get(&tid).map(|t| t.name.as_str()) {
            Some(name) if !name.is_empty() => format!("thread {name} ({tid})"),
            _ => format!("thread {tid}"),
        };
        vec![self.label_frame(&text)]
    }

    fn label_frame(&mut self, text: &str) -> FrameInfo {
        FrameInfo {
            frame: Frame::Label(self.profile.intern_string(text)),
            category_pair: self.label,
            flags: FrameFlags::empty(),
        }
    }

    /// The profile with its memory track.
    fn finish(mut self) -> Written {
        if let Some(pending) = self.pending.take() {
            let stack = self.death_label(&pending);
            self.death(&pending, stack);
        }
        if self.track.is_none() {
            self.start_track();
        }
        let counter = self.profile.add_counter(
            self.process,
            "malloc",
            "Memory",
            "Requested bytes live in the heap",
        );
        let mut previous = 0u64;
        let track = self.track.take().expect("the track was started");
        for point in track.finish(self.end_ns) {
            let delta = point.bytes as f64 - previous as f64;
            previous = point.bytes;
            self.profile.add_counter_sample(
                counter,
                Timestamp::from_nanos_since_reference(point.t_ns),
                delta,
                point.ops,
            );
        }
        Written {
            profile: self.profile,
            threads: self.tids.len() as u64,
            births: self.births,
            deaths: self.deaths,
        }
    }
}

/// The category of frames of `kind`: `User code`, `Library`…
fn category_name(kind: FrameKind) -> String {
    let name = kind.name();
    let mut text: String = name[..1].to_uppercase();
    text.push_str(&name[1..]);
    if kind == FrameKind::User {
        text.push_str(" code");
    }
    text
}

/// `size` as the signed bytes of a sample.
fn signed(size: u64) -> i64 {
    i64::try_from(size).unwrap_or(i64::MAX)
}
