//! Decodes the word stream of the memlens Valgrind tool (`tools/valgrind`,
//! `ml_stream.c` documents it) and writes it as a memlens reference trace:
//! sites become labels, references get their home region, and
//! memlens-trace's [`ReferenceWriter`] encodes them.
//!
//! The stream is little-endian 64-bit words. A word whose top 16 bits are a site
//! id (1..=0xFFFE) is a reference of that site to the address in its low 48
//! bits; a word whose top 16 bits are 0 starts a control record: type in bits
//! 40..48, the number of payload words in the low 32 bits.

use std::io::{self, Read, Write};
use std::path::Path;

use memlens_trace::{RefKind, RefRecord, ReferenceWriter, TraceWriter};

use super::regions::Regions;

/// Control record types (`ml_tool.h`).
mod rec {
    pub const SITE: u64 = 1;
    pub const ALLOC: u64 = 2;
    pub const FREE: u64 = 3;
    pub const HEAPSITE: u64 = 4;
    pub const NAME: u64 = 5;
    pub const START: u64 = 6;
    pub const STOP: u64 = 7;
    pub const STACK: u64 = 8;
    pub const MODULE: u64 = 9;
    pub const END: u64 = 10;
    pub const BIGREF: u64 = 11;
}

const ADDR_MASK: u64 = (1 << 48) - 1;

/// What a recording produced.
#[derive(Debug, Default, Clone)]
pub struct Summary {
    /// Data references (reads, writes, modifies).
    pub data: u64,
    /// Instruction fetches.
    pub fetches: u64,
    /// Reference sites (instruction operands) seen.
    pub sites: u64,
    /// Regions declared in the trace.
    pub regions: u64,
    /// Heap blocks allocated.
    pub allocations: u64,
    /// `MEMLENS_START`/`MEMLENS_STOP` requests seen.
    pub roi_marks: u64,
    /// Sites that got no label because all 65,535 label ids were taken.
    pub unlabelled_sites: u64,
    /// How the stream ended (`exit`), or `None` when it stopped without an end
    /// record (the program called exec or was killed).
    pub ended: Option<String>,
}

impl Summary {
    /// All references.
    pub fn references(&self) -> u64 {
        self.data + self.fetches
    }
}

#[derive(Debug, Clone, Copy)]
struct Site {
    kind: RefKind,
    size: u16,
    label: u16,
    // The region cache: [lo, hi) maps to `region` while `generation` holds.
    lo: u64,
    hi: u64,
    region: u16,
    generation: u64,
}

/// Turns the tool's stream into trace records.
pub struct Encoder<W: Write> {
    trace: TraceWriter<W>,
    refs: ReferenceWriter,
    sites: Vec<Option<Site>>,
    regions: Regions,
    next_label: u32,
    fetch_label: Option<u16>,
    main_exe: Option<std::path::PathBuf>,
    summary: Summary,
}

fn corrupt(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the Valgrind tool's stream is corrupt: {what}"),
    )
}

fn kind_of(code: u64) -> RefKind {
    match code & 3 {
        0 => RefKind::Read,
        1 => RefKind::Write,
        2 => RefKind::Modify,
        _ => RefKind::Instruction,
    }
}

/// A string payload: a byte-length word and the bytes, zero-padded to words.
fn string(words: &[u64]) -> Option<String> {
    let (&len, rest) = words.split_first()?;
    let len = usize::try_from(len).ok()?;
    if len.div_ceil(8) > rest.len() {
        return None;
    }
    let bytes: Vec<u8> = rest[..len.div_ceil(8)]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .take(len)
        .collect();
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The data symbols (name, address, size) and loadable segments (start, end) of
/// the ELF file at `path`, moved by `bias`.
type Symbols = (Vec<(String, u64, u64)>, Vec<(u64, u64)>);

fn data_symbols(path: &Path, bias: u64) -> Symbols {
    use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind};
    let Ok(bytes) = std::fs::read(path) else {
        return Default::default();
    };
    let Ok(file) = object::File::parse(&*bytes) else {
        return Default::default();
    };
    let segments = (file.segments())
        .filter(|s| s.size() > 0)
        .map(|s| {
            let lo = s.address().wrapping_add(bias);
            (lo, lo.saturating_add(s.size()))
        })
        .collect();
    let mut out = Vec::new();
    for sym in file.symbols().chain(file.dynamic_symbols()) {
        if sym.kind() != SymbolKind::Data || sym.size() == 0 || sym.is_undefined() {
            continue;
        }
        if let Ok(name) = sym.name()
            && !name.is_empty()
        {
            out.push((
                name.to_owned(),
                sym.address().wrapping_add(bias),
                sym.size(),
            ));
        }
    }
    (out, segments)
}

impl<W: Write> Encoder<W> {
    /// An encoder writing into `trace`; `main_exe` is the recorded program (its
    /// globals are named plainly, other objects' with the object's file name).
    pub fn new(trace: TraceWriter<W>, main_exe: Option<std::path::PathBuf>) -> Encoder<W> {
        Encoder {
            trace,
            refs: ReferenceWriter::new(),
            sites: vec![None],
            regions: Regions::new(),
            next_label: 1,
            fetch_label: None,
            main_exe,
            summary: Summary::default(),
        }
    }

    /// Reads the whole stream from `input`, calling `progress` now and then.
    pub fn run(
        &mut self,
        mut input: impl Read,
        progress: &mut dyn FnMut(&Summary),
    ) -> io::Result<()> {
        let mut buf = vec![0u8; 4 << 20];
        let mut filled = 0usize;
        let mut words: Vec<u64> = Vec::with_capacity(buf.len() / 8);
        let mut carry: Vec<u64> = Vec::new();
        loop {
            let n = match input.read(&mut buf[filled..]) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            filled += n;
            let whole = filled / 8 * 8;
            if n == 0 && filled - whole != 0 {
                return Err(corrupt("it ends inside a word"));
            }
            words.clear();
            words.extend_from_slice(&carry);
            carry.clear();
            words.extend(
                buf[..whole]
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))),
            );
            buf.copy_within(whole..filled, 0);
            filled -= whole;
            let used = self.words(&words)?;
            carry.extend_from_slice(&words[used..]);
            progress(&self.summary);
            if n == 0 {
                if !carry.is_empty() {
                    return Err(corrupt("it ends inside a record"));
                }
                return Ok(());
            }
        }
    }

    /// Handles whole records of `words`; returns how many words were used (the
    /// rest begin a record that continues in the next read).
    fn words(&mut self, words: &[u64]) -> io::Result<usize> {
        let mut i = 0;
        while i < words.len() {
            let w = words[i];
            let site = (w >> 48) as usize;
            if site != 0 {
                self.reference(site, w & ADDR_MASK)?;
                i += 1;
                continue;
            }
            let n = usize::try_from(w & 0xFFFF_FFFF).unwrap_or(usize::MAX);
            if n > 1 << 16 {
                return Err(corrupt("a control record claims too many words"));
            }
            if words.len() - i - 1 < n {
                break;
            }
            self.control((w >> 40) & 0xFF, &words[i + 1..i + 1 + n])?;
            i += 1 + n;
        }
        Ok(i)
    }

    fn reference(&mut self, site: usize, addr: u64) -> io::Result<()> {
        let generation = self.regions.generation();
        let s = match self.sites.get_mut(site) {
            Some(Some(s)) => s,
            _ => return Err(corrupt("a reference names an unknown site")),
        };
        if addr.wrapping_sub(s.lo) >= s.hi.wrapping_sub(s.lo) || s.generation != generation {
            let hit = self.regions.lookup(addr);
            (s.lo, s.hi, s.region, s.generation) = (hit.lo, hit.hi, hit.id, generation);
        }
        let record = RefRecord {
            addr,
            size: s.size,
            kind: s.kind,
            region: s.region,
            label: s.label,
        };
        if record.kind == RefKind::Instruction {
            self.summary.fetches += 1;
        } else {
            self.summary.data += 1;
        }
        if self.regions.has_new() {
            for r in self.regions.take_new() {
                self.refs
                    .region(&mut self.trace, r.id, r.start, r.len, &r.name)?;
                self.summary.regions += 1;
            }
        }
        self.refs.reference(&mut self.trace, record)
    }

    fn new_label(&mut self, text: &str) -> io::Result<u16> {
        let Ok(id) = u16::try_from(self.next_label) else {
            self.summary.unlabelled_sites += 1;
            return Ok(0);
        };
        self.next_label += 1;
        self.refs.label(&mut self.trace, id, text)?;
        Ok(id)
    }

    fn control(&mut self, kind: u64, p: &[u64]) -> io::Result<()> {
        let short = || corrupt("a control record is too short");
        match kind {
            rec::SITE => {
                let (&[id, _ip, kind_size], rest) = p.split_first_chunk::<3>().ok_or_else(short)?;
                let text = string(rest).ok_or_else(short)?;
                let id = usize::try_from(id)
                    .ok()
                    .filter(|&id| id > 0 && id < (1 << 32))
                    .ok_or_else(|| corrupt("a site id is impossible"))?;
                let kind = kind_of(kind_size);
                let label = if kind == RefKind::Instruction {
                    match self.fetch_label {
                        Some(l) => l,
                        None => {
                            let l = self.new_label(&text)?;
                            self.fetch_label = Some(l);
                            l
                        }
                    }
                } else {
                    self.new_label(&text)?
                };
                if self.sites.len() <= id {
                    self.sites.resize(id + 1, None);
                }
                self.sites[id] = Some(Site {
                    kind,
                    size: u16::try_from(kind_size >> 8).unwrap_or(u16::MAX),
                    label,
                    lo: 0,
                    hi: 0,
                    region: 0,
                    generation: 0,
                });
                self.summary.sites += 1;
            }
            rec::BIGREF => {
                let &[site, addr] = p.first_chunk::<2>().ok_or_else(short)?;
                let site = usize::try_from(site).map_err(|_| corrupt("a site id is impossible"))?;
                self.reference(site, addr)?;
            }
            rec::ALLOC => {
                let &[addr, size, site] = p.first_chunk::<3>().ok_or_else(short)?;
                self.regions.alloc(addr, size, site);
                self.summary.allocations += 1;
            }
            rec::FREE => self.regions.free(*p.first().ok_or_else(short)?),
            rec::HEAPSITE => {
                let (&[id, _ip], rest) = p.split_first_chunk::<2>().ok_or_else(short)?;
                self.regions.heap_site(id, string(rest).ok_or_else(short)?);
            }
            rec::NAME => {
                let (&[addr, len], rest) = p.split_first_chunk::<2>().ok_or_else(short)?;
                self.regions
                    .name(addr, len, string(rest).ok_or_else(short)?);
            }
            rec::START | rec::STOP => self.summary.roi_marks += 1,
            rec::STACK => {
                let &[lo, hi] = p.first_chunk::<2>().ok_or_else(short)?;
                self.regions.stack(lo, hi);
            }
            rec::MODULE => {
                let (&[_text, _size, bias], rest) = p.split_first_chunk::<3>().ok_or_else(short)?;
                let path = string(rest).ok_or_else(short)?;
                self.module(Path::new(&path), bias);
            }
            rec::END => self.summary.ended = Some(string(p).ok_or_else(short)?),
            _ => {} // a newer tool's record: skipped
        }
        Ok(())
    }

    fn module(&mut self, path: &Path, bias: u64) {
        let file = path.file_name().map(|f| f.to_string_lossy().into_owned());
        let file = file.unwrap_or_default();
        // Valgrind's own files (the tool, its preload) hold no program data.
        if file.starts_with("vgpreload_") || file.ends_with("-amd64-linux") {
            return;
        }
        let is_main = match (&self.main_exe, std::fs::canonicalize(path)) {
            (Some(main), Ok(p)) => *main == p,
            _ => false,
        };
        let (symbols, segments) = data_symbols(path, bias);
        self.regions
            .symbols(if is_main { None } else { Some(&file) }, symbols);
        for (lo, hi) in segments {
            self.regions.object_segment(lo, hi, &file);
        }
    }

    /// Writes what is buffered and returns the finished trace sink.
    pub fn finish(mut self) -> io::Result<(W, Summary)> {
        if self.regions.has_new() {
            for r in self.regions.take_new() {
                self.refs
                    .region(&mut self.trace, r.id, r.start, r.len, &r.name)?;
            }
        }
        self.refs.finish(&mut self.trace)?;
        let out = self.trace.finish()?;
        Ok((out, self.summary))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memlens_trace::{RefItem, TraceFile, read_references};

    fn control(out: &mut Vec<u64>, kind: u64, words: &[u64], text: Option<&str>) {
        let mut payload = words.to_vec();
        if let Some(t) = text {
            payload.push(t.len() as u64);
            for chunk in t.as_bytes().chunks(8) {
                let mut b = [0u8; 8];
                b[..chunk.len()].copy_from_slice(chunk);
                payload.push(u64::from_le_bytes(b));
            }
        }
        out.push(kind << 40 | payload.len() as u64);
        out.extend(payload);
    }

    fn encode(words: &[u64], split: usize) -> (Vec<RefItem>, Summary) {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        // Deliver the stream in pieces that cut words and records anywhere.
        struct Pieces<'a>(&'a [u8], usize);
        impl Read for Pieces<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(self.1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.mlens");
        let file = std::fs::File::create(&path).unwrap();
        let trace = TraceWriter::new(io::BufWriter::new(file), true).unwrap();
        let mut enc = Encoder::new(trace, None);
        enc.run(Pieces(&bytes, split), &mut |_| {}).unwrap();
        let (mut out, summary) = enc.finish().unwrap();
        out.flush().unwrap();
        let trace = TraceFile::open(&path).unwrap();
        let mut items = Vec::new();
        assert!(read_references(&trace, &mut |i| items.push(i)).is_empty());
        (items, summary)
    }

    #[test]
    fn references_get_labels_regions_and_kinds_in_any_read_pieces() {
        let mut w = Vec::new();
        control(
            &mut w,
            rec::SITE,
            &[1, 0x401000, 8 << 8],
            Some("main m.c:9 load"),
        );
        control(
            &mut w,
            rec::SITE,
            &[2, 0x401004, 1 | 8 << 8],
            Some("main m.c:9 store"),
        );
        control(
            &mut w,
            rec::HEAPSITE,
            &[7, 0x401100],
            Some("heap: main m.c:5"),
        );
        control(&mut w, rec::ALLOC, &[0x10000, 0x100, 7], None);
        control(&mut w, rec::NAME, &[0x20000, 0x80], Some("A"));
        for i in 0..100u64 {
            w.push(1 << 48 | (0x10000 + i * 8 % 0x100));
            w.push(2 << 48 | (0x20000 + i * 8 % 0x80));
        }
        control(&mut w, rec::FREE, &[0x10000], None);
        w.push(1 << 48 | 0x10000);
        control(&mut w, rec::BIGREF, &[2, 0x1234_5678_9abc], None);
        control(&mut w, rec::END, &[], Some("exit"));
        for split in [1, 3, 8, 13, 4096] {
            let (items, summary) = encode(&w, split);
            assert_eq!(summary.data, 202);
            assert_eq!(summary.ended.as_deref(), Some("exit"));
            let refs: Vec<RefRecord> = (items.iter())
                .filter_map(|i| match i {
                    RefItem::Reference(r) => Some(*r),
                    _ => None,
                })
                .collect();
            assert_eq!(refs.len(), 202);
            let regions: Vec<(u16, String)> = (items.iter())
                .filter_map(|i| match i {
                    RefItem::Region { id, name, .. } => Some((*id, name.clone())),
                    _ => None,
                })
                .collect();
            assert_eq!(regions, [(1, "A".into()), (2, "heap: main m.c:5".into())]);
            assert!(refs[..200].iter().all(|r| r.size == 8));
            assert_eq!(
                (refs[0].kind, refs[0].region, refs[0].label),
                (RefKind::Read, 2, 1)
            );
            assert_eq!(
                (refs[1].kind, refs[1].region, refs[1].label),
                (RefKind::Write, 1, 2)
            );
            assert_eq!(refs[200].region, 0, "freed block");
            assert_eq!(refs[201].addr, 0x1234_5678_9abc);
        }
    }

    #[test]
    fn corrupt_streams_are_errors_not_panics() {
        let w = [5u64 << 48 | 0x1000]; // an unknown site
        let bytes: Vec<u8> = w.iter().flat_map(|w| w.to_le_bytes()).collect();
        let trace = TraceWriter::new(Vec::new(), false).unwrap();
        let mut enc = Encoder::new(trace, None);
        assert!(enc.run(&bytes[..], &mut |_| {}).is_err());
        let trace = TraceWriter::new(Vec::new(), false).unwrap();
        let mut enc = Encoder::new(trace, None);
        assert!(enc.run(&[1u8, 2, 3][..], &mut |_| {}).is_err());
        let mut w = Vec::new();
        control(&mut w, rec::SITE, &[1, 0, 0], None); // no text
        let bytes: Vec<u8> = w.iter().flat_map(|w| w.to_le_bytes()).collect();
        let trace = TraceWriter::new(Vec::new(), false).unwrap();
        let mut enc = Encoder::new(trace, None);
        assert!(enc.run(&bytes[..], &mut |_| {}).is_err());
    }
}
