//! speedscope's JSON file format (<https://www.speedscope.app/file-format-schema.json>):
//! `sampled` profiles in bytes, one sample per distinct call path (frames root first,
//! as indexes into `shared.frames`) weighed by the bytes in use at the instant or
//! allocated in the window (`--value`).
//!
//! The first profile holds every thread: a heap is one heap, and what leaks or peaks is
//! the process's memory, so that is what speedscope opens on (as speedscope's own pprof
//! and collapsed imports do). When more than one thread allocated, one profile per
//! thread follows, for speedscope's profile selector. A frame is a function (its name
//! and file), so that a function is one box in speedscope's flame graphs, as in the
//! profiles speedscope imports from pprof and Chrome; its `line` is given when every
//! call path of the export passes through it at one line (the allocating line of most
//! allocation sites). Samples are ordered by their frames' names, root first, so that
//! the "Time Order" view reads like a flame graph.

use std::io::Write;
use std::path::Path;

use memlens_heap::{format_bytes, format_duration};
use memlens_ingest::{StackSymbols, TraceInput};
use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::{ExportError, ExportStacks, StackProfile, Value};

/// The schema every speedscope file names.
const SCHEMA: &str = "https://www.speedscope.app/file-format-schema.json";

#[derive(Serialize)]
struct File {
    #[serde(rename = "$schema")]
    schema: &'static str,
    name: String,
    exporter: String,
    #[serde(rename = "activeProfileIndex")]
    active_profile_index: usize,
    shared: Shared,
    profiles: Vec<Sampled>,
}

#[derive(Serialize)]
struct Shared {
    frames: Vec<Frame>,
}

#[derive(Serialize)]
struct Frame {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
}

#[derive(Serialize)]
struct Sampled {
    #[serde(rename = "type")]
    kind: &'static str,
    name: String,
    unit: &'static str,
    #[serde(rename = "startValue")]
    start_value: u64,
    #[serde(rename = "endValue")]
    end_value: u64,
    samples: Vec<Vec<u32>>,
    weights: Vec<u64>,
}

/// The frames of an export, one per function, with the lines they were seen at.
#[derive(Default)]
struct Functions {
    frames: Vec<Frame>,
    /// The distinct line of each frame, `None` once it was seen at two.
    lines: Vec<Option<u32>>,
    ids: FxHashMap<(String, String), u32>,
    /// The speedscope frame of each export frame id.
    of_frame: FxHashMap<u32, u32>,
}

impl Functions {
    /// The speedscope frame of export frame `id`.
    fn of(&mut self, stacks: &ExportStacks, id: u32) -> u32 {
        if let Some(&frame) = self.of_frame.get(&id) {
            return frame;
        }
        let site = stacks.frame(id);
        let name = stacks.name(id);
        let key = (name, site.file.clone());
        let frame = match self.ids.get(&key) {
            Some(&frame) => {
                let line = &mut self.lines[frame as usize];
                if *line != Some(site.line) {
                    *line = None;
                }
                frame
            }
            None => {
                let frame = self.frames.len() as u32;
                self.frames.push(Frame {
                    name: key.0.clone(),
                    file: (!site.file.is_empty()).then(|| site.file.clone()),
                    line: None,
                });
                self.lines.push(Some(site.line));
                self.ids.insert(key, frame);
                frame
            }
        };
        self.of_frame.insert(id, frame);
        frame
    }

    /// The frame of a label of memlens' own (no file, no line).
    fn label(&mut self, text: &str) -> u32 {
        let key = (text.to_owned(), String::new());
        if let Some(&frame) = self.ids.get(&key) {
            return frame;
        }
        let frame = self.frames.len() as u32;
        self.frames.push(Frame {
            name: key.0.clone(),
            file: None,
            line: None,
        });
        self.lines.push(None);
        self.ids.insert(key, frame);
        frame
    }

    /// The frames, each with its line when it had one only.
    fn finish(mut self) -> Vec<Frame> {
        for (frame, line) in self.frames.iter_mut().zip(self.lines) {
            frame.line = line.filter(|&l| l > 0);
        }
        self.frames
    }
}

/// Writes `profile` as a speedscope file to `out`.
pub fn write(
    input: &TraceInput,
    names: &mut StackSymbols,
    stacks: &mut ExportStacks,
    profile: &StackProfile,
    value: Value,
    out: &Path,
) -> Result<String, ExportError> {
    let file = build(input, names, stacks, profile, value);
    let mut writer = crate::create(out)?;
    serde_json::to_writer(&mut writer, &file).map_err(|e| ExportError::io(out, e.into()))?;
    writer.flush().map_err(|e| ExportError::io(out, e))?;
    let all = &file.profiles[0];
    // Thread profiles follow the whole when two threads or more have values.
    let threads = match file.profiles.len() {
        1 => usize::from(!all.samples.is_empty()),
        n => n - 1,
    };
    Ok(format!(
        "{}, {}, {} in all ({})",
        counted(all.samples.len(), "call path"),
        counted(file.shared.frames.len(), "frame"),
        format_bytes(all.end_value),
        counted(threads, "thread")
    ))
}

/// `n` and `what`, plural unless one.
fn counted(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// The speedscope document of `profile`.
fn build(
    input: &TraceInput,
    names: &mut StackSymbols,
    stacks: &mut ExportStacks,
    profile: &StackProfile,
    value: Value,
) -> File {
    let md = &input.metadata;
    // Bytes per (thread, trace stack), then per (thread, path of speedscope frames):
    // trace stacks that differ only in frames the policy leaves out are one path.
    let mut by_stack: FxHashMap<(u32, u32), u64> = FxHashMap::default();
    for (key, values) in &profile.samples {
        let bytes = value.bytes(values);
        if bytes > 0 {
            *by_stack.entry((key.tid, key.stack)).or_default() += bytes;
        }
    }
    let mut functions = Functions::default();
    let mut by_path: FxHashMap<(u32, Vec<u32>), u64> = FxHashMap::default();
    for ((tid, stack), bytes) in by_stack {
        let path = stacks.path(md, names, stack).to_vec();
        let mut frames: Vec<u32> = path
            .iter()
            .rev()
            .map(|&id| functions.of(stacks, id))
            .collect();
        if frames.is_empty() {
            frames.push(functions.label("[unknown stack]"));
        }
        *by_path.entry((tid, frames)).or_default() += bytes;
    }
    let frames = functions.finish();

    let mut threads: Vec<u32> = by_path.keys().map(|(tid, _)| *tid).collect();
    threads.sort_unstable();
    threads.dedup();
    let what = match value {
        Value::Inuse => format!("bytes in use at {}", format_duration(profile.at_ns)),
        Value::Allocated => format!(
            "bytes allocated from {} to {}",
            format_duration(profile.window.start_ns),
            format_duration(profile.window.end_ns.min(input.run_end_ns()))
        ),
    };
    let all: FxHashMap<Vec<u32>, u64> =
        by_path
            .iter()
            .fold(FxHashMap::default(), |mut all, ((_, path), bytes)| {
                *all.entry(path.clone()).or_default() += bytes;
                all
            });
    let mut profiles = vec![sampled(
        format!("{what}, all threads"),
        all.into_iter().collect(),
        &frames,
    )];
    if threads.len() > 1 {
        for &tid in &threads {
            let paths = by_path
                .iter()
                .filter(|((t, _), _)| *t == tid)
                .map(|((_, path), bytes)| (path.clone(), *bytes))
                .collect();
            let thread = match md.threads.get(&tid).map(|t| t.name.as_str()) {
                Some(name) if !name.is_empty() => format!("thread {name} ({tid})"),
                _ => format!("thread {tid}"),
            };
            profiles.push(sampled(format!("{what}, {thread}"), paths, &frames));
        }
    }
    File {
        schema: SCHEMA,
        name: input
            .path()
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        exporter: format!("memlens {}", env!("CARGO_PKG_VERSION")),
        active_profile_index: 0,
        shared: Shared { frames },
        profiles,
    }
}

/// One sampled profile of `paths`, ordered by their frames' names root first.
fn sampled(name: String, mut paths: Vec<(Vec<u32>, u64)>, frames: &[Frame]) -> Sampled {
    let text = |path: &[u32]| -> Vec<&str> {
        path.iter()
            .map(|&f| frames[f as usize].name.as_str())
            .collect()
    };
    paths.sort_by(|a, b| text(&a.0).cmp(&text(&b.0)).then_with(|| a.0.cmp(&b.0)));
    let end_value = paths.iter().map(|(_, bytes)| bytes).sum();
    let (samples, weights) = paths.into_iter().unzip();
    Sampled {
        kind: "sampled",
        name,
        unit: "bytes",
        start_value: 0,
        end_value,
        samples,
        weights,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_ordered_by_names_root_first_and_end_at_their_total() {
        let frames: Vec<Frame> = ["main", "b", "a"]
            .iter()
            .map(|n| Frame {
                name: (*n).to_owned(),
                file: None,
                line: None,
            })
            .collect();
        let p = sampled(
            "x".into(),
            vec![(vec![0, 1], 5), (vec![0, 2], 7), (vec![0], 1)],
            &frames,
        );
        assert_eq!(p.samples, vec![vec![0], vec![0, 2], vec![0, 1]]);
        assert_eq!(p.weights, vec![1, 7, 5]);
        assert_eq!((p.start_value, p.end_value), (0, 13));
    }
}
