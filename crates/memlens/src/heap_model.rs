//! Trace → [`HeapModel`]: the glue that `memlens tree` and `memlens growth` share
//! between the trace reader, the symbolizer and the heap-evolution engine.
//!
//! Every unique return address of the trace's stack table is symbolized once, in one
//! [`Symbolizer::symbolize_all`] batch (parallel across modules), and becomes a chain
//! of engine frames: the out-of-line function first, then each function inlined into
//! it, so the engine sees inlined calls as frames of their own. Stack nodes keep their
//! trace ids (both sides number them densely from 1, parents first). The events then
//! stream through [`HeapModelBuilder`] in time order, with the marks merged in, under
//! the progress bar of [`load`]. The run starts at time 0, the process start, so the
//! times users type (`1.5s`, `50%`) mean the same as in every other command.
//!
//! The argument helpers both commands need live here too: `--by` lists, times and
//! windows, each checked against the run before the events are read, with engine
//! errors turned into usage errors (exit status 2).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use indicatif::ProgressBar;
use memlens_heap::{
    AllocKind, ClassifierChain, ClassifierOptions, FrameId, FrameInfo, HeapError, HeapModel,
    HeapModelBuilder, StackId, TimeWindow, TypeId, format_duration, parse_classifiers,
};
use memlens_trace::{AllocFn, Event, Metadata};

use crate::UsageError;
use crate::load::{self, Loaded};

/// A trace read into the heap engine's model.
pub struct HeapTrace {
    /// The opened file, with all damage met while reading it.
    pub loaded: Loaded,
    /// Every allocation's lifetime, with symbolized stacks and named threads.
    pub model: HeapModel,
    /// Problems the symbolizer met (missing files, rebuilt binaries), one sentence each.
    symbol_notes: Vec<String>,
}

impl HeapTrace {
    /// Builds the model of an opened trace: symbolizes its stacks, then streams its
    /// events through the builder.
    pub fn build(mut loaded: Loaded) -> HeapTrace {
        let md = &loaded.metadata;
        let mut builder = HeapModelBuilder::new();
        builder.start(0);
        builder.reserve((md.event_records / 2) as usize);
        let symbol_notes = add_context(&mut builder, md);
        let types = stack_types(&mut builder, md);
        let bar = load::progress(&loaded);
        let mut marks = md.marks.iter().peekable();
        let damage = load::for_each_event(&loaded, &bar, |event| {
            while let Some(mark) = marks.next_if(|m| m.t <= event.time()) {
                builder.mark(mark.t, &mark.name);
            }
            add_event(&mut builder, event, &types);
        });
        for mark in marks {
            builder.mark(mark.t, &mark.name);
        }
        let model = builder.end(md.last_time);
        loaded.damage.extend(damage);
        HeapTrace {
            loaded,
            model,
            symbol_notes,
        }
    }

    /// The trace's path.
    pub fn path(&self) -> PathBuf {
        self.loaded.trace.path().to_path_buf()
    }

    /// Prints what went wrong while reading (damage, unnamed frames, repaired events) on
    /// stderr and returns the exit status: 1 when the file is damaged, else 0.
    pub fn finish(&self) -> i32 {
        let path = self.path();
        for note in &self.symbol_notes {
            eprintln!("memlens: warning: {note}");
        }
        for message in self.model.diagnostics().messages() {
            eprintln!("memlens: note: {}: {message}", path.display());
        }
        load::report_damage(&path, &self.loaded.damage);
        i32::from(!self.loaded.damage.is_empty())
    }
}

/// The run as the model sees it, known from the metadata alone: from the process
/// start (time 0) to the last record of the trace. Lets a command check the times it
/// was given before it reads the events.
pub fn run_window(md: &Metadata) -> TimeWindow {
    TimeWindow {
        start_ns: 0,
        end_ns: md.last_time,
    }
}

/// Parses a `--by` list with the `--domain` prefixes; a bad list is a usage error whose
/// message lists the valid classifier names.
pub fn classifier_chain(by: &str, domains: &[String]) -> Result<ClassifierChain> {
    let options = ClassifierOptions {
        domain_prefixes: domains.to_vec(),
        ..ClassifierOptions::default()
    };
    parse_classifiers(by, options).map_err(usage)
}

/// A query error of the engine (a time outside the run, no marks, …) as a usage error:
/// its message is already one sentence naming the argument at fault.
pub fn usage(error: HeapError) -> anyhow::Error {
    UsageError(error.to_string()).into()
}

/// Parses the time given to option `arg`: a number with a unit (`ns`, `us`/`µs`, `ms`,
/// `s`) or a percentage of the run, and checks that it lies inside the run.
pub fn parse_time(arg: &str, text: &str, run: TimeWindow) -> Result<u64> {
    let text = text.trim();
    let bad = || {
        UsageError(format!(
            "`{arg} {text}` is not a time: write a number with a unit (`1.5s`, `200ms`, \
             `10us`, `500ns`) or a percentage of the run (`50%`)"
        ))
    };
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(bad)?;
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().map_err(|_| bad())?;
    let time_ns = match unit.trim() {
        "%" if value <= 100.0 => {
            run.start_ns + (run.duration_ns() as f64 * value / 100.0).round() as u64
        }
        "%" => {
            return Err(UsageError(format!(
                "`{arg} {text}` is out of range: a percentage of the run must be between 0 and 100"
            ))
            .into());
        }
        "ns" => value.round() as u64,
        "us" | "µs" => (value * 1e3).round() as u64,
        "ms" => (value * 1e6).round() as u64,
        "s" => (value * 1e9).round() as u64,
        _ => return Err(bad().into()),
    };
    if !run.contains(time_ns) {
        let outside = HeapError::TimeOutsideRun { time_ns, run };
        return Err(UsageError(format!("`{arg} {text}`: {outside}")).into());
    }
    Ok(time_ns)
}

/// The window of `--from` and `--to` (either may be missing), or `None` for the whole
/// run. A window that ends before it starts is a usage error.
pub fn window(from: Option<&str>, to: Option<&str>, run: TimeWindow) -> Result<Option<TimeWindow>> {
    if from.is_none() && to.is_none() {
        return Ok(None);
    }
    let start_ns = from.map_or(Ok(run.start_ns), |t| parse_time("--from", t, run))?;
    let end_ns = to.map_or(Ok(run.end_ns), |t| parse_time("--to", t, run))?;
    if end_ns < start_ns {
        return Err(UsageError(format!(
            "`--to` ({}) is before `--from` ({}); the window must not end before it starts",
            format_duration(end_ns),
            format_duration(start_ns)
        ))
        .into());
    }
    Ok(Some(TimeWindow { start_ns, end_ns }))
}

/// Adds the frames, stacks and thread names of `md`; returns the symbolizer's notes.
fn add_context(builder: &mut HeapModelBuilder, md: &Metadata) -> Vec<String> {
    let stacks = &md.stacks;
    let nodes = stacks.len() as u32;
    let mut addresses: Vec<u64> = (1..nodes).map(|id| stacks.ip(id)).collect();
    addresses.sort_unstable();
    addresses.dedup();
    // Address 0 stands for a node the stack table never defined: nothing to look up.
    addresses.retain(|&a| a != 0);
    let mut symbolizer = crate::sites::symbolizer_for(md);
    let bar = symbolizing_spinner(addresses.len());
    let symbolized_addresses = symbolizer.symbolize_all(&addresses);
    bar.finish_and_clear();
    let mut innermost: HashMap<u64, FrameId> = HashMap::with_capacity(addresses.len());
    for symbolized in symbolized_addresses {
        // Frames come innermost first; the engine wants the outer frame of a chain
        // first, each inlined frame naming the frame it was inlined into.
        let mut frame = FrameId::UNKNOWN;
        for (i, f) in symbolized.frames.iter().rev().enumerate() {
            frame = builder.add_frame(FrameInfo {
                function: f.function.as_deref().unwrap_or(""),
                file: f.file_name().unwrap_or(""),
                line: f.line.unwrap_or(0),
                module: f.module.map_or("", |m| symbolizer.module_name(m)),
                inlined_into: (i > 0).then_some(frame),
            });
        }
        innermost.insert(symbolized.address, frame);
    }
    for id in 1..nodes {
        let frame = innermost
            .get(&stacks.ip(id))
            .copied()
            .unwrap_or(FrameId::UNKNOWN);
        let added = builder.add_stack(StackId(stacks.parent(id)), frame);
        debug_assert_eq!(added, StackId(id), "stack ids are kept");
    }
    let mut named: Vec<(u32, &str)> = md
        .threads
        .iter()
        .filter(|(_, t)| !t.name.is_empty())
        .map(|(&tid, t)| (tid, t.name.as_str()))
        .collect();
    named.sort_unstable();
    for (tid, name) in named {
        builder.name_thread(u64::from(tid), name);
    }
    symbolizer
        .diagnostics()
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// The engine type of every stack id of a trace with typed stacks (Java traces),
/// empty for other traces. Types with the same name share one engine type.
fn stack_types(builder: &mut HeapModelBuilder, md: &Metadata) -> Vec<TypeId> {
    if !md.stacks.has_types() {
        return Vec::new();
    }
    let mut by_name: HashMap<&str, TypeId> = HashMap::new();
    let mut ids: Vec<(&u32, &String)> = md.types.iter().collect();
    ids.sort_unstable();
    let mut by_id: HashMap<u32, TypeId> = HashMap::new();
    for (&id, name) in ids {
        let ty = *by_name
            .entry(name.as_str())
            .or_insert_with(|| builder.add_type(name));
        by_id.insert(id, ty);
    }
    (0..md.stacks.len() as u32)
        .map(|s| match md.stacks.type_of(s) {
            0 => TypeId::UNKNOWN,
            t => by_id.get(&t).copied().unwrap_or(TypeId::UNKNOWN),
        })
        .collect()
}

/// A spinner for symbolizing many addresses (a large program's debug information can
/// take seconds to read), shown only on a terminal.
fn symbolizing_spinner(addresses: usize) -> ProgressBar {
    if addresses < 5_000 {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_message(format!("symbolizing {addresses} return addresses"));
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

/// Feeds one trace event to the builder; `types` gives typed stacks their type.
fn add_event(builder: &mut HeapModelBuilder, event: &Event, types: &[TypeId]) {
    match *event {
        Event::Alloc {
            t,
            tid,
            addr,
            size,
            stack,
            func,
        } => {
            let ty = types
                .get(stack as usize)
                .copied()
                .unwrap_or(TypeId::UNKNOWN);
            let kind = match func {
                _ if ty != TypeId::UNKNOWN => AllocKind::New,
                AllocFn::Malloc => AllocKind::Malloc,
                AllocFn::Calloc => AllocKind::Calloc,
                _ => AllocKind::Aligned,
            };
            let id = builder.alloc(t, u64::from(tid), addr, size, StackId(stack), kind);
            if ty != TypeId::UNKNOWN {
                builder.set_type(id, ty);
            }
        }
        Event::Free { t, tid, addr } => builder.free(t, u64::from(tid), addr),
        Event::Realloc {
            t,
            tid,
            old_addr,
            new_addr,
            size,
            stack,
        } => {
            builder.realloc(t, u64::from(tid), old_addr, new_addr, size, StackId(stack));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: TimeWindow = TimeWindow {
        start_ns: 0,
        end_ns: 4_000_000_000,
    };

    #[test]
    fn times_take_units_and_percentages_of_the_run() {
        let at = |text| parse_time("--at", text, RUN).unwrap();
        assert_eq!(at("1.5s"), 1_500_000_000);
        assert_eq!(at("200ms"), 200_000_000);
        assert_eq!(at("10us"), 10_000);
        assert_eq!(at("10 µs"), 10_000);
        assert_eq!(at("500ns"), 500);
        assert_eq!(at("25%"), 1_000_000_000);
        assert_eq!(at("100%"), RUN.end_ns);
    }

    #[test]
    fn bad_times_are_usage_errors_naming_the_argument() {
        let error = |text| {
            let e = parse_time("--at", text, RUN).unwrap_err();
            assert!(e.downcast_ref::<UsageError>().is_some(), "{e}");
            e.to_string()
        };
        assert!(error("5").contains("`--at 5` is not a time"));
        assert!(error("-1s").contains("is not a time"));
        assert!(error("1.5 parsecs").contains("is not a time"));
        assert!(error("101%").contains("between 0 and 100"));
        let outside = error("5s");
        assert!(outside.contains("outside the recorded run"), "{outside}");
    }

    #[test]
    fn windows_default_to_the_run_ends_and_must_not_be_reversed() {
        assert_eq!(window(None, None, RUN).unwrap(), None);
        assert_eq!(
            window(Some("1s"), None, RUN).unwrap(),
            Some(TimeWindow {
                start_ns: 1_000_000_000,
                end_ns: RUN.end_ns
            })
        );
        let reversed = window(Some("3s"), Some("1s"), RUN).unwrap_err();
        assert!(
            reversed.to_string().contains("before `--from`"),
            "{reversed}"
        );
    }
}
