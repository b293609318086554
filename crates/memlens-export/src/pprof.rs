//! pprof: a gzip-compressed `profile.proto` with Go's heap sample types —
//! `alloc_objects/count`, `alloc_space/bytes` (allocated in the window),
//! `inuse_objects/count`, `inuse_space/bytes` (in use at the instant) — one sample per
//! (stack, thread, size class) with `thread` and `size class` labels; locations carry
//! their mapping (with build id) and one line per frame, inlined frames first; functions
//! their file. `go tool pprof`, Pyroscope, Parca, Perfetto UI and speedscope read it.

use std::io::Write;
use std::path::Path;

use flate2::Compression;
use flate2::write::GzEncoder;
use memlens_heap::{format_bytes, format_duration, size_class_label};
use memlens_ingest::{StackSymbols, TraceInput};
use memlens_trace::Metadata;
use prost::Message;
use rustc_hash::FxHashMap;

use crate::pprof_proto::{Function, Label, Line, Location, Mapping, Profile, Sample, ValueType};
use crate::{At, ExportError, ExportStacks, Options, StackProfile, Value};

/// The string table of a profile under construction.
#[derive(Default)]
struct Strings {
    table: Vec<String>,
    index: FxHashMap<String, i64>,
}

impl Strings {
    fn new() -> Strings {
        let mut s = Strings::default();
        s.id("");
        s
    }

    fn id(&mut self, text: &str) -> i64 {
        if let Some(&id) = self.index.get(text) {
            return id;
        }
        let id = self.table.len() as i64;
        self.table.push(text.to_owned());
        self.index.insert(text.to_owned(), id);
        id
    }
}

/// Writes `profile` as a gzip-compressed pprof profile to `out`.
pub fn write(
    input: &TraceInput,
    names: &mut StackSymbols,
    stacks: &mut ExportStacks,
    profile: &StackProfile,
    options: &Options,
    out: &Path,
) -> Result<String, ExportError> {
    let proto = build(input, names, stacks, profile, options);
    let mut file = GzEncoder::new(crate::create(out)?, Compression::default());
    file.write_all(&proto.encode_to_vec())
        .and_then(|()| file.finish()?.flush())
        .map_err(|e| ExportError::io(out, e))?;
    let total = profile.total();
    Ok(format!(
        "{} samples; {} in use at {}, {} allocated",
        proto.sample.len(),
        format_bytes(total.inuse_bytes),
        format_duration(profile.at_ns),
        format_bytes(total.alloc_bytes)
    ))
}

/// The profile message of `profile`.
fn build(
    input: &TraceInput,
    names: &mut StackSymbols,
    stacks: &mut ExportStacks,
    profile: &StackProfile,
    options: &Options,
) -> Profile {
    let md = &input.metadata;
    let mut strings = Strings::new();
    let mut p = Profile {
        sample_type: [
            ("alloc_objects", "count"),
            ("alloc_space", "bytes"),
            ("inuse_objects", "count"),
            ("inuse_space", "bytes"),
        ]
        .iter()
        .map(|(t, u)| ValueType {
            r#type: strings.id(t),
            unit: strings.id(u),
        })
        .collect(),
        period_type: Some(ValueType {
            r#type: strings.id("space"),
            unit: strings.id("bytes"),
        }),
        period: 1,
        default_sample_type: strings.id(match options.value {
            Value::Inuse => "inuse_space",
            Value::Allocated => "alloc_space",
        }),
        time_nanos: md.process.as_ref().map_or(0, |p| p.start_unix_ns) as i64,
        duration_nanos: input.run_end_ns() as i64,
        ..Profile::default()
    };
    let instant = match options.at {
        At::Peak => "the peak",
        At::End => "the end",
        At::Time(_) => "a chosen time",
    };
    p.comment.push(strings.id(&format!(
        "memlens export of {}: in use at {} ({}); allocated from {} to {}",
        input.path().display(),
        instant,
        format_duration(profile.at_ns),
        format_duration(profile.window.start_ns),
        format_duration(profile.window.end_ns.min(input.run_end_ns())),
    )));
    let mappings = Mappings::of(md, &mut strings, &mut p.mapping);
    let mut locations: FxHashMap<Vec<u32>, u64> = FxHashMap::default();
    let mut functions: FxHashMap<(String, String), u64> = FxHashMap::default();
    let (thread_key, class_key) = (strings.id("thread"), strings.id("size class"));
    for (key, values) in &profile.samples {
        let path = stacks.path(md, names, key.stack).to_vec();
        let mut location_id = Vec::new();
        // Consecutive frames at one return address are one location (inlined first).
        for group in path.chunk_by(|&a, &b| stacks.frame(a).address == stacks.frame(b).address) {
            let next = locations.len() as u64 + 1;
            let id = *locations.entry(group.to_vec()).or_insert(next);
            if id == next {
                let address = stacks.frame(group[0]).address;
                let line = group
                    .iter()
                    .map(|&f| {
                        let site = stacks.frame(f);
                        let name = stacks.name(f);
                        let next = functions.len() as u64 + 1;
                        let function_id = *functions
                            .entry((name.clone(), site.file.clone()))
                            .or_insert(next);
                        if function_id == next {
                            p.function.push(Function {
                                id: function_id,
                                name: strings.id(&name),
                                system_name: strings.id(&name),
                                filename: strings.id(&site.file),
                            });
                        }
                        Line {
                            function_id,
                            line: i64::from(site.line),
                        }
                    })
                    .collect();
                p.location.push(Location {
                    id,
                    mapping_id: mappings.of_address(address),
                    address,
                    line,
                });
            }
            location_id.push(id);
        }
        let thread = match md.threads.get(&key.tid).map(|t| t.name.as_str()) {
            Some(name) if !name.is_empty() => format!("{name} ({})", key.tid),
            _ => key.tid.to_string(),
        };
        p.sample.push(Sample {
            location_id,
            value: vec![
                values.alloc_objects as i64,
                values.alloc_bytes as i64,
                values.inuse_objects as i64,
                values.inuse_bytes as i64,
            ],
            label: vec![
                Label {
                    key: thread_key,
                    str: strings.id(&thread),
                    ..Label::default()
                },
                Label {
                    key: class_key,
                    str: strings.id(&size_class_label(key.size_class)),
                    ..Label::default()
                },
            ],
        });
    }
    p.string_table = strings.table;
    p
}

/// The address ranges of the trace's modules, as pprof mappings.
struct Mappings {
    /// (start, limit, mapping id), sorted by start.
    ranges: Vec<(u64, u64, u64)>,
}

impl Mappings {
    /// Adds one mapping per module of `md` to `out`.
    fn of(md: &Metadata, strings: &mut Strings, out: &mut Vec<Mapping>) -> Mappings {
        let mut ranges = Vec::new();
        for loaded in &md.modules {
            let m = &loaded.module;
            let Some(first) = m.segments.iter().min_by_key(|s| s.vaddr) else {
                continue;
            };
            let start = m.load_bias.wrapping_add(first.vaddr);
            let limit = m
                .segments
                .iter()
                .map(|s| m.load_bias.wrapping_add(s.vaddr).wrapping_add(s.memsz))
                .max()
                .unwrap_or(start);
            let id = out.len() as u64 + 1;
            let build_id: String = m.build_id.iter().map(|b| format!("{b:02x}")).collect();
            out.push(Mapping {
                id,
                memory_start: start,
                memory_limit: limit,
                file_offset: first.file_offset,
                filename: strings.id(&m.path),
                build_id: strings.id(&build_id),
                has_functions: true,
                has_filenames: true,
                has_line_numbers: true,
                has_inline_frames: true,
            });
            ranges.push((start, limit, id));
        }
        ranges.sort_unstable();
        Mappings { ranges }
    }

    /// The id of the mapping holding `address`, or 0.
    fn of_address(&self, address: u64) -> u64 {
        let i = self.ranges.partition_point(|r| r.0 <= address);
        match i.checked_sub(1).map(|i| self.ranges[i]) {
            Some((_, limit, id)) if address < limit => id,
            _ => 0,
        }
    }
}
