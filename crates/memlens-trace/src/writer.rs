//! [`TraceWriter`]: the sink that turns records into a trace file.
//!
//! It keeps one [`ChunkBuilder`] for the process stream and one per thread,
//! frames a chunk when its payload reaches the target size, and writes each
//! finished chunk at once, so whatever was written before a crash stays
//! readable. The LD_PRELOAD recorder drives [`ChunkBuilder`]s itself with the
//! same framing; tests, kernels and importers use this type.

use std::collections::HashMap;
use std::io::{self, Write};

use crate::encode::ChunkBuilder;
use crate::format::ChunkKind;
use crate::header::header_bytes;
use crate::record::{Event, Meta};

/// The default payload size at which a chunk is closed.
pub const DEFAULT_CHUNK_BYTES: usize = 256 << 10;

/// Writes records to `W` as a trace file.
pub struct TraceWriter<W: Write> {
    out: W,
    compressor: Option<crate::chunk::Compressor>,
    process: ChunkBuilder,
    threads: HashMap<u32, ChunkBuilder>,
    /// Streams for other chunk kinds (references), keyed by (kind, stream).
    others: HashMap<(u8, u32), ChunkBuilder>,
    framed: Vec<u8>,
    chunk_bytes: usize,
}

impl<W: Write> std::fmt::Debug for TraceWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceWriter").finish_non_exhaustive()
    }
}

impl<W: Write> TraceWriter<W> {
    /// Writes the file header and returns a writer that compresses chunks
    /// (with [`crate::chunk::compressor`]) when `compress` is true.
    pub fn new(mut out: W, compress: bool) -> io::Result<Self> {
        out.write_all(&header_bytes())?;
        let compressor = if compress {
            Some(crate::chunk::compressor()?)
        } else {
            None
        };
        Ok(TraceWriter {
            out,
            compressor,
            process: ChunkBuilder::new(ChunkKind::Process, 0),
            threads: HashMap::new(),
            others: HashMap::new(),
            framed: Vec::new(),
            chunk_bytes: DEFAULT_CHUNK_BYTES,
        })
    }

    /// Sets the payload size at which chunks are closed (tests use tiny chunks).
    pub fn with_chunk_bytes(mut self, bytes: usize) -> Self {
        self.chunk_bytes = bytes.max(1);
        self
    }

    /// Adds a process-stream record.
    pub fn meta(&mut self, meta: &Meta) -> io::Result<()> {
        self.process.meta(meta);
        if self.process.len() >= self.chunk_bytes {
            self.process
                .finish(&mut self.framed, self.compressor.as_mut());
            self.write_framed()?;
        }
        Ok(())
    }

    /// Adds an allocation event to its thread's stream.
    pub fn event(&mut self, event: &Event) -> io::Result<()> {
        self.event_with_latency(event, None)
    }

    /// Adds an allocation event with how long its allocator call took, in ns
    /// (`None`: not measured).
    pub fn event_with_latency(&mut self, event: &Event, latency_ns: Option<u32>) -> io::Result<()> {
        let tid = event.tid();
        let builder = self
            .threads
            .entry(tid)
            .or_insert_with(|| ChunkBuilder::new(ChunkKind::Events, tid));
        builder.event_with_latency(event, latency_ns);
        if builder.len() >= self.chunk_bytes {
            builder.finish(&mut self.framed, self.compressor.as_mut());
            self.write_framed()?;
        }
        Ok(())
    }

    /// Gives access to the builder of a stream of another chunk kind, then
    /// closes its chunk when it reached the target size.
    pub fn with_stream<R>(
        &mut self,
        kind: ChunkKind,
        stream: u32,
        f: impl FnOnce(&mut ChunkBuilder) -> R,
    ) -> io::Result<R> {
        let builder = self
            .others
            .entry((kind as u8, stream))
            .or_insert_with(|| ChunkBuilder::new(kind, stream));
        let r = f(builder);
        if builder.len() >= self.chunk_bytes {
            builder.finish(&mut self.framed, self.compressor.as_mut());
            self.write_framed()?;
        }
        Ok(r)
    }

    fn write_framed(&mut self) -> io::Result<()> {
        if !self.framed.is_empty() {
            self.out.write_all(&self.framed)?;
            self.framed.clear();
        }
        Ok(())
    }

    /// Closes every open chunk (process stream last, so it can describe
    /// everything before it) and writes it.
    pub fn flush_chunks(&mut self) -> io::Result<()> {
        let mut tids: Vec<u32> = self.threads.keys().copied().collect();
        tids.sort_unstable();
        for tid in tids {
            if let Some(b) = self.threads.get_mut(&tid) {
                b.finish(&mut self.framed, self.compressor.as_mut());
            }
        }
        let mut keys: Vec<(u8, u32)> = self.others.keys().copied().collect();
        keys.sort_unstable();
        for key in keys {
            if let Some(b) = self.others.get_mut(&key) {
                b.finish(&mut self.framed, self.compressor.as_mut());
            }
        }
        self.process
            .finish(&mut self.framed, self.compressor.as_mut());
        self.write_framed()?;
        self.out.flush()
    }

    /// Flushes everything and returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.flush_chunks()?;
        Ok(self.out)
    }
}
