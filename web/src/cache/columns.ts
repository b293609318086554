// Decodes the cache lens's binary answers: `MLCB`, a u32 header length, a JSON
// header naming each column's type, byte offset and length, then 8-byte aligned
// little-endian columns, mapped onto typed arrays without copying.

export type ColumnArray = Uint8Array | Int8Array | Uint16Array | Uint32Array | Float64Array;

export interface Container {
  header: Record<string, unknown>;
  columns: Map<string, ColumnArray>;
}

const CONSTRUCTORS = {
  u8: Uint8Array,
  i8: Int8Array,
  u16: Uint16Array,
  u32: Uint32Array,
  f64: Float64Array,
} as const;

/** Reads a container, or throws one sentence saying what is wrong with it. */
export function decodeContainer(buffer: ArrayBuffer): Container {
  const bytes = new Uint8Array(buffer);
  if (bytes.length < 8 || String.fromCharCode(bytes[0], bytes[1], bytes[2], bytes[3]) !== "MLCB") {
    throw new Error("The cache lens's answer is not a column container (no MLCB magic).");
  }
  const length = new DataView(buffer).getUint32(4, true);
  if (8 + length > bytes.length) throw new Error("The cache lens's answer is cut short.");
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length))) as Record<string, unknown>;
  const described = (header.columns ?? {}) as Record<string, [keyof typeof CONSTRUCTORS, number, number]>;
  const columns = new Map<string, ColumnArray>();
  for (const [name, [type, offset, count]] of Object.entries(described)) {
    const Make = CONSTRUCTORS[type];
    if (!Make) throw new Error(`The cache lens's column ${name} has an unknown type ${type}.`);
    if (offset + count * Make.BYTES_PER_ELEMENT > bytes.length) {
      throw new Error(`The cache lens's column ${name} runs past the end of the answer.`);
    }
    columns.set(name, new Make(buffer, offset, count));
  }
  return { header, columns };
}

/** One batch: the events of references [start, start + count). */
export interface Batch {
  start: number;
  count: number;
  levels: number;
  served: Uint8Array;
  hit: Uint16Array;
  missed: Uint16Array;
  kind: Uint8Array;
  region: Uint16Array;
  label: Uint16Array;
  addr: Float64Array;
  eventsEnd: Uint32Array;
  setsEnd: Uint32Array;
  temp: Int8Array;
  evType: Uint8Array;
  evLevel: Uint8Array;
  evTo: Uint8Array;
  evFlags: Uint8Array;
  evSet: Uint32Array;
  evWay: Uint16Array;
  evRegion: Uint16Array;
  evLine: Float64Array;
  setLevel: Uint8Array;
  setIndex: Uint32Array;
  ranks: Uint8Array;
}

function column<T extends ColumnArray>(c: Container, name: string): T {
  const found = c.columns.get(name);
  if (!found) throw new Error(`The cache lens's answer lacks the column ${name}.`);
  return found as T;
}

export function decodeBatch(buffer: ArrayBuffer): Batch {
  const c = decodeContainer(buffer);
  return {
    start: Number(c.header.start),
    count: Number(c.header.count),
    levels: Number(c.header.levels),
    served: column(c, "served"),
    hit: column(c, "hit"),
    missed: column(c, "missed"),
    kind: column(c, "kind"),
    region: column(c, "region"),
    label: column(c, "label"),
    addr: column(c, "addr"),
    eventsEnd: column(c, "events_end"),
    setsEnd: column(c, "sets_end"),
    temp: column(c, "temp"),
    evType: column(c, "ev_type"),
    evLevel: column(c, "ev_level"),
    evTo: column(c, "ev_to"),
    evFlags: column(c, "ev_flags"),
    evSet: column(c, "ev_set"),
    evWay: column(c, "ev_way"),
    evRegion: column(c, "ev_region"),
    evLine: column(c, "ev_line"),
    setLevel: column(c, "set_level"),
    setIndex: column(c, "set_index"),
    ranks: column(c, "ranks"),
  };
}

/** Every slot of every level at one reference. */
export interface CacheState {
  at: number;
  temperature: number[];
  levels: { line: Float64Array; region: Uint16Array; rank: Uint8Array; dirty: Uint8Array }[];
}

export function decodeState(buffer: ArrayBuffer): CacheState {
  const c = decodeContainer(buffer);
  const count = Number(c.header.levels);
  const levels = [];
  for (let l = 0; l < count; l++) {
    levels.push({
      line: column<Float64Array>(c, `l${l}_line`),
      region: column<Uint16Array>(c, `l${l}_region`),
      rank: column<Uint8Array>(c, `l${l}_rank`),
      dirty: column<Uint8Array>(c, `l${l}_dirty`),
    });
  }
  return { at: Number(c.header.at), temperature: (c.header.temperature as number[]) ?? [], levels };
}

/** Event type codes of a batch. */
export const PROBE_HIT = 0;
export const PROBE_MISS = 1;
export const FILL = 2;
export const EVICT = 3;
/** The destination code of memory, and the rank of an empty slot. */
export const MEMORY = 255;
export const EMPTY = 255;
