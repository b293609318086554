// The page's copy of the cache's contents and the mapping from the simulator's
// events to the paper's glyph motions (Table I):
//   - a fill that answers a miss brings the line straight in from where it was (a
//     slower level's copy, or its home in memory), flashing red (colour, high
//     frequency) — the glyph moves towards the CPU;
//   - an eviction sends the line along a wider circular path to the next level or
//     home to memory (motion, high frequency);
//   - a change of eviction order moves glyphs along their arm; a hit moves the line
//     to the head of its set (motion, low frequency);
//   - every probe that hits pulses the glyph (size, high frequency).
// Positions are kept as places (level, set, rank, or a memory line), so this file
// knows nothing of pixels and is unit-tested on its own.

import { type Batch, EMPTY, EVICT, FILL, MEMORY, PROBE_HIT, type CacheState } from "./columns";

export interface LevelShape {
  name: string;
  sets: number;
  ways: number;
  lineSize: number;
}

/** Where a glyph is: a slot of a level at some rank, or its line's home in memory. */
export type Place =
  | { kind: "slot"; level: number; set: number; rank: number }
  | { kind: "memory"; line: number };

export type MoveKind = "enter" | "evict" | "shift";

export interface Move {
  kind: MoveKind;
  /** The line that moves (at its destination's line size when it lands in a level). */
  line: number;
  region: number;
  from: Place;
  to: Place;
  /** The level and slot the glyph occupies afterwards (none when it went home). */
  level: number;
  slot: number;
  /** The slot it left (evictions and shifts; -1 for entries, which leave a copy behind). */
  fromSlot: number;
  /** The glyph flashes red: it answers a miss, moving towards the CPU. */
  flash: boolean;
}

export interface Effects {
  moves: Move[];
  /** Slots (level, slot) whose glyph was accessed: they pulse. */
  pulses: { level: number; slot: number }[];
  /** Levels that missed. */
  missed: number;
}

interface LevelStore {
  shape: LevelShape;
  line: Float64Array;
  region: Uint16Array;
  rank: Uint8Array;
  index: Map<number, number>;
}

export class CacheModel {
  readonly levels: LevelStore[];

  constructor(shapes: LevelShape[]) {
    this.levels = shapes.map((shape) => {
      const n = shape.sets * shape.ways;
      const line = new Float64Array(n).fill(NaN);
      return { shape, line, region: new Uint16Array(n), rank: new Uint8Array(n).fill(EMPTY), index: new Map() };
    });
  }

  /** Replaces the contents with a state from the server. */
  load(state: CacheState): void {
    state.levels.forEach((s, l) => {
      const store = this.levels[l];
      if (!store) return;
      store.line.set(s.line);
      store.region.set(s.region);
      store.rank.set(s.rank);
      store.index.clear();
      for (let i = 0; i < s.line.length; i++) if (!Number.isNaN(s.line[i])) store.index.set(s.line[i], i);
    });
  }

  /** Lines held per level. */
  occupancy(): number[] {
    return this.levels.map((s) => s.index.size);
  }

  /** The slot holding `line` in `level`, or -1. */
  slotOf(level: number, line: number): number {
    return this.levels[level]?.index.get(line) ?? -1;
  }

  /** The place of a resident slot. */
  place(level: number, slot: number): Place {
    const ways = this.levels[level].shape.ways;
    return { kind: "slot", level, set: Math.floor(slot / ways), rank: this.levels[level].rank[slot] };
  }

  /** Where the data of `line` (at level `below`'s line size or finer) is now, looking from `from` down. */
  private whereIs(line: number, from: number): Place {
    for (let l = from; l < this.levels.length; l++) {
      const size = this.levels[l].shape.lineSize;
      const aligned = Math.floor(line / size) * size;
      const slot = this.slotOf(l, aligned);
      if (slot >= 0) return this.place(l, slot);
    }
    return { kind: "memory", line };
  }

  /** Applies reference `i` of `batch` and says how the glyphs move. */
  apply(batch: Batch, i: number): Effects {
    const effects: Effects = { moves: [], pulses: [], missed: batch.missed[i] };
    const e0 = i === 0 ? 0 : batch.eventsEnd[i - 1];
    const e1 = batch.eventsEnd[i];
    const s0 = i === 0 ? 0 : batch.setsEnd[i - 1];
    const s1 = batch.setsEnd[i];
    // Ranks before the reference, for the places moves start from.
    const before = new Map<number, { line: number; rank: number }>();
    const key = (level: number, slot: number) => level * 0x1000000 + slot;
    let rankAt = 0;
    const rankOffsets: number[] = [];
    for (let s = 0; s < s0; s++) rankAt += this.levels[batch.setLevel[s]]?.shape.ways ?? 0;
    for (let s = s0; s < s1; s++) {
      const level = batch.setLevel[s];
      const store = this.levels[level];
      const ways = store.shape.ways;
      rankOffsets.push(rankAt);
      rankAt += ways;
      const base = batch.setIndex[s] * ways;
      for (let w = 0; w < ways; w++) {
        before.set(key(level, base + w), { line: store.line[base + w], rank: store.rank[base + w] });
      }
    }
    const pending: Move[] = [];
    const placed = new Set<number>();
    for (let e = e0; e < e1; e++) {
      const type = batch.evType[e];
      const level = batch.evLevel[e];
      const store = this.levels[level];
      if (!store) continue;
      const line = batch.evLine[e];
      const slot = batch.evSet[e] * store.shape.ways + batch.evWay[e];
      if (type === PROBE_HIT) {
        if (batch.evTo[e] !== 2) {
          const at = this.slotOf(level, line);
          if (at >= 0) effects.pulses.push({ level, slot: at });
        }
      } else if (type === EVICT) {
        const old = before.get(key(level, slot));
        const from: Place = {
          kind: "slot",
          level,
          set: batch.evSet[e],
          rank: old && old.line === line ? old.rank : store.rank[slot],
        };
        if (store.line[slot] === line) {
          store.index.delete(line);
          store.line[slot] = NaN;
          store.rank[slot] = EMPTY;
        }
        const to = batch.evTo[e];
        const move: Move = {
          kind: "evict",
          line,
          region: batch.evRegion[e],
          from,
          to: { kind: "memory", line },
          level: to === MEMORY ? -1 : to,
          slot: -1,
          fromSlot: slot,
          flash: false,
        };
        pending.push(move);
        effects.moves.push(move);
      } else if (type === FILL) {
        // A fill that continues an eviction of this reference (a victim moving down)
        // is that eviction's landing, not a miss.
        const landing = pending.find((m) => m.line === line && m.level === level && m.slot < 0);
        const from = landing ? landing.from : this.whereIs(line, level + 1);
        const previous = store.line[slot];
        if (!Number.isNaN(previous) && previous !== line) store.index.delete(previous);
        store.line[slot] = line;
        store.region[slot] = batch.evRegion[e];
        store.index.set(line, slot);
        placed.add(key(level, slot));
        if (landing) {
          landing.slot = slot;
        } else {
          effects.moves.push({
            kind: "enter",
            line,
            region: batch.evRegion[e],
            from,
            to: { kind: "slot", level, set: batch.evSet[e], rank: 0 },
            level,
            slot,
            fromSlot: -1,
            flash: true,
          });
          effects.pulses.push({ level, slot });
        }
      }
    }
    // The new eviction order of every touched set.
    for (let s = s0; s < s1; s++) {
      const level = batch.setLevel[s];
      const store = this.levels[level];
      const ways = store.shape.ways;
      const base = batch.setIndex[s] * ways;
      const offset = rankOffsets[s - s0];
      for (let w = 0; w < ways; w++) {
        const r = batch.ranks[offset + w];
        store.rank[base + w] = r;
        if (r === EMPTY && !Number.isNaN(store.line[base + w])) {
          store.index.delete(store.line[base + w]);
          store.line[base + w] = NaN;
        }
        const old = before.get(key(level, base + w));
        if (
          old &&
          !placed.has(key(level, base + w)) &&
          old.line === store.line[base + w] &&
          !Number.isNaN(old.line) &&
          old.rank !== r
        ) {
          effects.moves.push({
            kind: "shift",
            line: old.line,
            region: store.region[base + w],
            from: { kind: "slot", level, set: batch.setIndex[s], rank: old.rank },
            to: { kind: "slot", level, set: batch.setIndex[s], rank: r },
            level,
            slot: base + w,
            fromSlot: base + w,
            flash: false,
          });
        }
      }
    }
    // Destinations now have their final ranks.
    for (const move of effects.moves) {
      if (move.level >= 0 && move.slot >= 0) move.to = this.place(move.level, move.slot);
      else if (move.level >= 0) {
        // An eviction into a level whose fill was not reported: it stayed there.
        const at = this.slotOf(move.level, move.line);
        if (at >= 0) {
          move.slot = at;
          move.to = this.place(move.level, at);
        } else move.level = -1;
      }
    }
    return effects;
  }

  /**
   * Whether the glyph in `slot` of `level` is a ghost: a faster level also holds
   * (part of) its data, so the paper draws this copy lighter.
   */
  isGhost(level: number, slot: number): boolean {
    const line = this.levels[level].line[slot];
    if (Number.isNaN(line)) return false;
    return this.heldAbove(level, line, this.levels[level].shape.lineSize);
  }

  /** Whether a level above `level` holds any part of [line, line + size). */
  heldAbove(level: number, line: number, size: number): boolean {
    for (let k = 0; k < level; k++) {
      const s = this.levels[k].shape.lineSize;
      if (s >= size) {
        if (this.levels[k].index.has(Math.floor(line / s) * s)) return true;
      } else {
        for (let a = line; a < line + size; a += s) if (this.levels[k].index.has(a)) return true;
      }
    }
    return false;
  }
}
