//! The record decoder: the mirror of `encode.rs`, over one chunk payload.
//!
//! It never panics: malformed bytes end the chunk with a [`DecodeError`]
//! that names the byte offset inside the payload, and every record decoded
//! before it is kept by the caller.

use crate::chunk::ChunkHeader;
use crate::columns::ColumnDecoder;
use crate::format::ChunkKind;
use crate::format::tag;
use crate::record::{
    Attached, ClockSource, Contained, Event, HeapWalk, Mapping, Meta, Module, ProcessInfo, Segment,
    Totals, Unmapping,
};
use crate::varint::Cursor;

/// One decoded record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// An allocation event (event chunks).
    Event(Event),
    /// A process-stream record.
    Meta(Meta),
    /// A sized record this decoder does not interpret (newer writer, or a
    /// record kind decoded by another module such as references).
    Other {
        /// Its tag.
        tag: u8,
        /// Its body.
        body: Vec<u8>,
    },
}

/// Why a payload stopped decoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// Offset inside the decompressed payload where the bad record starts.
    pub offset: usize,
    /// What was wrong.
    pub reason: String,
}

/// Decodes the records of one chunk payload, in order.
#[derive(Debug)]
pub struct RecordDecoder<'a> {
    /// Set for event chunks: the columnar decoder.
    columns: Option<ColumnDecoder<'a>>,
    /// Set when an event chunk's column table does not parse.
    bad_table: bool,
    cur: Cursor<'a>,
    failed: bool,
}

impl<'a> RecordDecoder<'a> {
    /// Starts decoding `payload`, the decompressed bytes of the chunk `header`.
    pub fn new(header: &ChunkHeader, payload: &'a [u8]) -> Self {
        let mut bad_table = false;
        let columns = (header.kind == ChunkKind::Events).then(|| {
            let cols = split_columns(payload).unwrap_or_else(|| {
                bad_table = true;
                Vec::new()
            });
            ColumnDecoder::new(cols, header.records, header.stream, header.t_first)
        });
        RecordDecoder {
            columns,
            bad_table,
            cur: Cursor::new(payload),
            failed: false,
        }
    }

    /// How long the allocator call of the event last returned took, in ns:
    /// `None` for records without a measured latency (see `columns.rs`).
    pub fn latency_ns(&self) -> Option<u32> {
        self.columns.as_ref().and_then(ColumnDecoder::latency_ns)
    }
}

fn meta(record_tag: u8, body: &[u8]) -> Option<Option<Meta>> {
    let mut c = Cursor::new(body);
    let m = match record_tag {
        tag::PROCESS => {
            let pid = c.u32()?;
            let ppid = c.u32()?;
            let exe = c.string()?;
            let n = c.u64()?;
            let mut cmdline = Vec::new();
            for _ in 0..n {
                cmdline.push(c.string()?);
            }
            let start_unix_ns = c.u64()?;
            let clock = if c.u8()? == 1 {
                ClockSource::Tsc
            } else {
                ClockSource::Monotonic
            };
            let unwinder = c.string()?;
            let recorder = c.string()?;
            Meta::Process(ProcessInfo {
                pid,
                ppid,
                exe,
                cmdline,
                start_unix_ns,
                clock,
                unwinder,
                recorder,
            })
        }
        tag::MODULE_LOAD => {
            let t = c.u64()?;
            let path = c.string()?;
            let load_bias = c.u64()?;
            let n = c.u64()?;
            let mut segments = Vec::new();
            for _ in 0..n {
                segments.push(Segment {
                    vaddr: c.u64()?,
                    memsz: c.u64()?,
                    file_offset: c.u64()?,
                    flags: c.u32()?,
                });
            }
            let id_len = usize::try_from(c.u64()?).ok()?;
            let build_id = c.bytes(id_len)?.to_vec();
            Meta::ModuleLoad {
                t,
                module: Module {
                    path,
                    load_bias,
                    segments,
                    build_id,
                },
            }
        }
        tag::MODULE_UNLOAD => Meta::ModuleUnload {
            t: c.u64()?,
            load_bias: c.u64()?,
            path: c.string()?,
        },
        tag::THREAD_NAME => Meta::ThreadName {
            t: c.u64()?,
            tid: c.u32()?,
            name: c.string()?,
        },
        tag::THREAD_END => Meta::ThreadEnd {
            t: c.u64()?,
            tid: c.u32()?,
        },
        tag::STACK_NODE => {
            let id = c.u32()?;
            let back = c.u32()?;
            let parent = id.checked_sub(back)?;
            if parent >= id {
                return None; // parents precede children
            }
            Meta::StackNode {
                id,
                parent,
                ip: c.u64()?,
            }
        }
        tag::MARK => Meta::Mark {
            t: c.u64()?,
            tid: c.u32()?,
            name: c.string()?,
        },
        tag::WARNING => Meta::Warning {
            t: c.u64()?,
            message: c.string()?,
        },
        tag::CLOCK => Meta::Clock {
            t: c.u64()?,
            raw: c.u64()?,
        },
        tag::TOTALS => Meta::Totals(Totals {
            allocations: c.u64()?,
            frees: c.u64()?,
            reallocations: c.u64()?,
            requested_bytes: c.u64()?,
        }),
        tag::WRAPPER => Meta::Wrapper {
            pattern: c.string()?,
        },
        tag::END => Meta::End {
            t: c.u64()?,
            how: c.string()?,
        },
        tag::MMAP => {
            let (t, tid, addr, len) = (c.u64()?, c.u32()?, c.u64()?, c.u64()?);
            let (prot, flags, source) = (c.u32()?, c.u32()?, c.u8()?);
            Meta::Mmap(Mapping {
                t,
                tid,
                addr,
                len,
                prot,
                flags,
                file: source & 1 != 0,
                remap: source & 2 != 0,
                stack: c.u32()?,
            })
        }
        tag::MUNMAP => Meta::Munmap(Unmapping {
            t: c.u64()?,
            tid: c.u32()?,
            addr: c.u64()?,
            len: c.u64()?,
        }),
        tag::TYPE_NAME => Meta::TypeName {
            id: c.u32()?,
            name: c.string()?,
        },
        tag::FRAME_NAME => Meta::FrameName {
            ip: c.u64()?,
            function: c.string()?,
            file: c.string()?,
            line: c.u32()?,
        },
        tag::TYPED_STACK => {
            let id = c.u32()?;
            let back = c.u32()?;
            if back == 0 {
                return None; // the base stack precedes the typed one
            }
            Meta::TypedStack {
                id,
                stack: id.checked_sub(back)?,
                type_id: c.u32()?,
            }
        }
        tag::HEAP_WALK => Meta::HeapWalk(HeapWalk {
            t: c.u64()?,
            duration_ns: c.u64()?,
            pause_ns: c.u64()?,
            objects: c.u64()?,
            references: c.u64()?,
        }),
        tag::SAMPLING => Meta::Sampling {
            mean_interval_bytes: c.u64()?,
        },
        tag::ATTACHED => Meta::Attached(Attached {
            pid: c.u32()?,
            attach_unix_ns: c.u64()?,
            process_start_unix_ns: c.u64()?,
        }),
        tag::CONTAINED => {
            let (container, container_type, n) = (c.u64()?, c.u32()?, c.u64()?);
            // A damaged count ends at the body's end; reserve only a bounded guess.
            let mut members = Vec::with_capacity(n.min(4096) as usize);
            let mut previous = 0u64;
            for _ in 0..n {
                previous = previous.wrapping_add(c.u64()?);
                members.push(previous);
            }
            Meta::Contained(Contained {
                container,
                container_type,
                members,
            })
        }
        _ => return Some(None),
    };
    Some(Some(m))
}

impl Iterator for RecordDecoder<'_> {
    type Item = Result<Record, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if self.bad_table {
            self.failed = true;
            return Some(Err(DecodeError {
                offset: 0,
                reason: "the column table is malformed".into(),
            }));
        }
        if let Some(cols) = &mut self.columns {
            return cols.next().map(|r| {
                r.map(Record::Event).map_err(|at| DecodeError {
                    offset: at,
                    reason: "an event does not decode (damaged or inconsistent columns)".into(),
                })
            });
        }
        if self.cur.is_empty() {
            return None;
        }
        let start = self.cur.position();
        let fail = |reason: &str| DecodeError {
            offset: start,
            reason: reason.to_string(),
        };
        let Some(record_tag) = self.cur.u8() else {
            self.failed = true;
            return Some(Err(fail("truncated record")));
        };
        let result = if record_tag >= tag::SIZED {
            let body = self
                .cur
                .u64()
                .and_then(|n| usize::try_from(n).ok())
                .and_then(|n| self.cur.bytes(n));
            match body {
                None => Err(fail("sized record runs past the end of its chunk")),
                Some(body) => match meta(record_tag, body) {
                    Some(Some(m)) => Ok(Record::Meta(m)),
                    Some(None) => Ok(Record::Other {
                        tag: record_tag,
                        body: body.to_vec(),
                    }),
                    None => Err(fail(&format!(
                        "malformed record with tag {record_tag:#04x}"
                    ))),
                },
            }
        } else {
            Err(fail(&format!("unknown record tag {record_tag:#04x}")))
        };
        if result.is_err() {
            self.failed = true;
        }
        Some(result)
    }
}

/// Splits a decompressed columnar payload into its columns.
fn split_columns(payload: &[u8]) -> Option<Vec<&[u8]>> {
    let mut c = Cursor::new(payload);
    let n = usize::try_from(c.u64()?).ok()?;
    if n > 64 {
        return None;
    }
    let mut lens = Vec::with_capacity(n);
    for _ in 0..n {
        lens.push(usize::try_from(c.u64()?).ok()?);
    }
    let mut cols = Vec::with_capacity(n);
    for len in lens {
        cols.push(c.bytes(len)?);
    }
    c.is_empty().then_some(cols)
}

/// Decodes the events of an event chunk straight into `out` (the fast path
/// of the time merge: no [`Record`] wrapping). On damage, the events before
/// it are kept in `out` and the error names the payload offset.
pub fn decode_events(
    header: &ChunkHeader,
    payload: &[u8],
    out: &mut Vec<Event>,
) -> Result<(), DecodeError> {
    decode_events_with_latency(header, payload, out, &mut Vec::new())
}

/// [`decode_events`], also filling `latencies` with one stored latency per
/// event (0 = not measured, else `ns + 1`: see
/// [`crate::columns::latency_from_code`]) when the chunk has latencies; left
/// empty when it has none.
pub fn decode_events_with_latency(
    header: &ChunkHeader,
    payload: &[u8],
    out: &mut Vec<Event>,
    latencies: &mut Vec<u32>,
) -> Result<(), DecodeError> {
    let cols = split_columns(payload).ok_or_else(|| DecodeError {
        offset: 0,
        reason: "the column table is malformed".into(),
    })?;
    out.reserve(header.records as usize);
    let mut decoder = ColumnDecoder::new(cols, header.records, header.stream, header.t_first);
    let with_latency = decoder.has_latency();
    if with_latency {
        latencies.reserve(header.records as usize);
    }
    while let Some(e) = decoder.next() {
        match e {
            Ok(e) => {
                out.push(e);
                if with_latency {
                    latencies.push(decoder.latency_code());
                }
            }
            Err(at) => {
                return Err(DecodeError {
                    offset: at,
                    reason: "an event does not decode (damaged or inconsistent columns)".into(),
                });
            }
        }
    }
    Ok(())
}
