//! What the page animates: the simulator's event stream for a range of references,
//! and the full contents of every set at one reference, as column containers
//! ([`columns`](super::columns)).
//!
//! A **batch** holds, per reference: which level served it, the per-level hit and
//! miss bits, its kind, region, label and address, each level's temperature scaled to
//! −127…127, and where its events and set orders end. Per event: type (0 probe hit, 1
//! probe miss, 2 fill, 3 eviction), level, destination (an eviction's level, 255 for
//! memory; a probe's traffic kind), flags (dirty; eviction cause), set, way, region
//! and line address. Per set the reference touched: the level, the set and, in the
//! `ranks` column, the eviction rank of each way after the reference (255 = empty),
//! `ways` bytes per set. Position events are not sent: the ranks say more.
//!
//! A **state** holds, per level, every slot (set-major, way-minor): the line (NaN
//! when empty), region, rank and dirty bit, plus the temperatures at that point.

use memlens_cache::events::{Destination, Event, EventSink, EvictionCause, ProbeKind};
use memlens_cache::{Outcome, Reference, SlotView};
use serde_json::{Map, Value};

use super::columns::{Column, pack};
use super::session::{Cursor, Session};

/// Rank of an empty slot.
pub const EMPTY: u8 = 255;

/// Event type codes.
pub(crate) const PROBE_HIT: u8 = 0;
pub(crate) const PROBE_MISS: u8 = 1;
pub(crate) const FILL: u8 = 2;
pub(crate) const EVICT: u8 = 3;
/// The destination code of memory.
pub(crate) const MEMORY: u8 = 255;

#[derive(Default)]
struct Recorder {
    ev_type: Vec<u8>,
    ev_level: Vec<u8>,
    ev_to: Vec<u8>,
    ev_flags: Vec<u8>,
    ev_set: Vec<u32>,
    ev_way: Vec<u16>,
    ev_region: Vec<u16>,
    ev_line: Vec<f64>,
    /// (level, set) pairs touched by the current reference.
    touched: Vec<(u8, u32)>,
}

impl Recorder {
    fn touch(&mut self, level: u8, set: u32) {
        if !self.touched.contains(&(level, set)) {
            self.touched.push((level, set));
        }
    }

    /// Appends an event; `head` is its type, level, destination and flags.
    fn push(&mut self, head: [u8; 4], set: u32, way: u32, region: u16, line: u64) {
        let [ty, level, to, flags] = head;
        self.ev_type.push(ty);
        self.ev_level.push(level);
        self.ev_to.push(to);
        self.ev_flags.push(flags);
        self.ev_set.push(set);
        self.ev_way.push(way.min(u32::from(u16::MAX)) as u16);
        self.ev_region.push(region);
        self.ev_line.push(line as f64);
    }
}

impl EventSink for Recorder {
    fn begin_reference(&mut self, _reference: &Reference) {
        self.touched.clear();
    }

    fn event(&mut self, event: Event) {
        match event {
            Event::Probe(p) => {
                let kind = match p.kind {
                    ProbeKind::Read => 0,
                    ProbeKind::Write => 1,
                    ProbeKind::WriteBack => 2,
                };
                let ty = if p.hit { PROBE_HIT } else { PROBE_MISS };
                self.push([ty, p.level, kind, 0], p.set, 0, 0, p.line_addr);
                self.touch(p.level, p.set);
            }
            Event::Fill(f) => {
                self.push(
                    [FILL, f.level, f.level, 0],
                    f.set,
                    f.way,
                    f.region.0,
                    f.line_addr,
                );
                self.touch(f.level, f.set);
            }
            Event::Evict(e) => {
                let to = match e.to {
                    Destination::Level(l) => l,
                    Destination::Memory => MEMORY,
                };
                let cause = match e.cause {
                    EvictionCause::Replacement => 0,
                    EvictionCause::BackInvalidation => 1,
                    EvictionCause::Promotion => 2,
                    EvictionCause::Flush => 3,
                };
                let flags = u8::from(e.dirty) | cause << 1;
                self.push(
                    [EVICT, e.from, to, flags],
                    e.set,
                    e.way,
                    e.region.0,
                    e.line_addr,
                );
                self.touch(e.from, e.set);
            }
            Event::Position(_) => {}
        }
    }

    fn end_reference(&mut self, _reference: &Reference, _outcome: &Outcome) {}
}

fn temperature_byte(value: f64) -> i8 {
    (value.clamp(-1.0, 1.0) * 127.0).round() as i8
}

fn temperatures(cursor: &Cursor) -> Vec<f64> {
    (0..cursor.cache.level_count())
        .map(|l| cursor.temperature.normalized(l))
        .collect()
}

/// The events of references `[start, start + count)` (clamped to the trace).
pub(crate) fn batch(session: &mut Session, start: usize, count: usize) -> Vec<u8> {
    let len = session.len();
    let start = start.min(len);
    let end = start.saturating_add(count).min(len);
    let refs = std::sync::Arc::clone(&session.references);
    let cursor = session.seek(start);
    let levels = cursor.cache.level_count();
    let n = end - start;
    let mut rec = Recorder::default();
    let (mut served, mut hit, mut missed) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut kind, mut region, mut label, mut addr) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut events_end, mut sets_end) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut temp = Vec::with_capacity(n * levels);
    let (mut set_level, mut set_index, mut ranks) = (Vec::new(), Vec::new(), Vec::new());
    let mut slots: Vec<SlotView> = Vec::new();
    for reference in &refs[start..end] {
        let outcome = cursor
            .cache
            .access(reference, &mut (&mut rec, &mut cursor.temperature));
        served.push(outcome.served_by);
        hit.push(outcome.hit);
        missed.push(outcome.missed);
        kind.push(reference.kind as u8);
        region.push(reference.region.0);
        label.push(reference.label.0);
        addr.push(reference.addr as f64);
        events_end.push(rec.ev_type.len() as u32);
        for &(level, set) in &rec.touched {
            let ways = cursor.cache.geometry(usize::from(level)).ways as usize;
            cursor
                .cache
                .set_contents(usize::from(level), set as usize, &mut slots);
            let at = ranks.len();
            ranks.resize(at + ways, EMPTY);
            for slot in &slots {
                ranks[at + slot.way as usize] = slot.rank.min(254) as u8;
            }
            set_level.push(level);
            set_index.push(set);
        }
        sets_end.push(set_level.len() as u32);
        for l in 0..levels {
            temp.push(temperature_byte(cursor.temperature.normalized(l)));
        }
    }
    cursor.at = end;
    let mut fields = Map::new();
    fields.insert("kind".into(), Value::from("batch"));
    fields.insert("start".into(), Value::from(start));
    fields.insert("count".into(), Value::from(n));
    fields.insert("levels".into(), Value::from(levels));
    fields.insert("events".into(), Value::from(rec.ev_type.len()));
    fields.insert("sets".into(), Value::from(set_level.len()));
    pack(
        fields,
        &[
            ("served", Column::U8(served)),
            ("hit", Column::U16(hit)),
            ("missed", Column::U16(missed)),
            ("kind", Column::U8(kind)),
            ("region", Column::U16(region)),
            ("label", Column::U16(label)),
            ("addr", Column::F64(addr)),
            ("events_end", Column::U32(events_end)),
            ("sets_end", Column::U32(sets_end)),
            ("temp", Column::I8(temp)),
            ("ev_type", Column::U8(rec.ev_type)),
            ("ev_level", Column::U8(rec.ev_level)),
            ("ev_to", Column::U8(rec.ev_to)),
            ("ev_flags", Column::U8(rec.ev_flags)),
            ("ev_set", Column::U32(rec.ev_set)),
            ("ev_way", Column::U16(rec.ev_way)),
            ("ev_region", Column::U16(rec.ev_region)),
            ("ev_line", Column::F64(rec.ev_line)),
            ("set_level", Column::U8(set_level)),
            ("set_index", Column::U32(set_index)),
            ("ranks", Column::U8(ranks)),
        ],
    )
}

/// Every slot of every level before reference `at`.
pub(crate) fn state(session: &mut Session, at: usize) -> Vec<u8> {
    let cursor = session.seek(at);
    let levels = cursor.cache.level_count();
    let mut columns = Vec::with_capacity(levels * 4);
    let mut names = Vec::with_capacity(levels * 4);
    let mut slots = Vec::new();
    for level in 0..levels {
        let g = cursor.cache.geometry(level);
        let total = g.sets as usize * g.ways as usize;
        let mut line = vec![f64::NAN; total];
        let mut region = vec![0u16; total];
        let mut rank = vec![EMPTY; total];
        let mut dirty = vec![0u8; total];
        for set in 0..g.sets as usize {
            cursor.cache.set_contents(level, set, &mut slots);
            for slot in &slots {
                let i = set * g.ways as usize + slot.way as usize;
                line[i] = slot.line_addr as f64;
                region[i] = slot.region.0;
                rank[i] = slot.rank.min(254) as u8;
                dirty[i] = u8::from(slot.dirty);
            }
        }
        names.push(format!("l{level}_line"));
        columns.push(Column::F64(line));
        names.push(format!("l{level}_region"));
        columns.push(Column::U16(region));
        names.push(format!("l{level}_rank"));
        columns.push(Column::U8(rank));
        names.push(format!("l{level}_dirty"));
        columns.push(Column::U8(dirty));
    }
    let mut fields = Map::new();
    fields.insert("kind".into(), Value::from("state"));
    fields.insert("at".into(), Value::from(cursor.at));
    fields.insert("levels".into(), Value::from(levels));
    fields.insert("temperature".into(), Value::from(temperatures(cursor)));
    let named: Vec<(&str, Column)> = names.iter().map(String::as_str).zip(columns).collect();
    pack(fields, &named)
}

/// The number of lines each level holds before reference `at`.
pub(crate) fn occupancy(session: &mut Session, at: usize) -> (usize, Vec<u64>) {
    let cursor = session.seek(at);
    let mut slots = Vec::new();
    let counts = (0..cursor.cache.level_count())
        .map(|level| {
            let sets = cursor.cache.geometry(level).sets as usize;
            (0..sets)
                .map(|set| {
                    cursor.cache.set_contents(level, set, &mut slots);
                    slots.len() as u64
                })
                .sum()
        })
        .collect();
    (cursor.at, counts)
}

/// The temperatures (−1…1) per level before reference `at`.
pub(crate) fn temperatures_at(session: &mut Session, at: usize) -> Vec<f64> {
    temperatures(session.seek(at))
}
