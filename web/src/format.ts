// Human-readable numbers, the same units as the CLI: binary bytes with three
// significant digits, durations in ns/µs/ms/s, signed growth and percentages.

const BYTE_UNITS = ["KiB", "MiB", "GiB", "TiB", "PiB"];

/** `1536` → `1.50 KiB`; below 1 KiB exact (`512 B`). */
export function formatBytes(bytes: number): string {
  if (Math.abs(bytes) < 1024) return `${Math.round(bytes)} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit + 1 < BYTE_UNITS.length) {
    value /= 1024;
    unit += 1;
  }
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${value.toFixed(digits)} ${BYTE_UNITS[unit]}`;
}

/** `+1.50 KiB`, `-512 B`, `0 B`. */
export function formatSignedBytes(bytes: number): string {
  if (bytes === 0) return "0 B";
  return bytes > 0 ? `+${formatBytes(bytes)}` : `-${formatBytes(-bytes)}`;
}

/** `12345` → `12,345`. */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** `+12` / `-3` / `0`. */
export function formatSignedCount(n: number): string {
  return n > 0 ? `+${formatCount(n)}` : n < 0 ? `-${formatCount(-n)}` : "0";
}

/** `1_500_000` → `1.5 ms`. */
export function formatDuration(ns: number): string {
  if (ns < 1_000) return `${Math.round(ns)} ns`;
  const [scale, unit] =
    ns < 1_000_000 ? [1e3, "µs"] : ns < 1_000_000_000 ? [1e6, "ms"] : [1e9, "s"];
  const text = (ns / scale).toFixed(3).replace(/\.?0+$/, "");
  return `${text} ${unit}`;
}

/** A share as `42.1 %` (`<0.1 %` for tiny non-zero shares). */
export function formatPercent(part: number, whole: number): string {
  if (whole <= 0) return "–";
  const p = (100 * part) / whole;
  if (p > 0 && p < 0.1) return "<0.1 %";
  return `${p.toFixed(p >= 10 ? 0 : 1)} %`;
}

// Axis ticks. Every axis gets round steps (1, 2 or 5 × a power of ten of one unit),
// one unit for the whole axis, and an origin that says its unit ("0 s", never "0 ns").

/** One tick: where (in the axis's own quantity) and what it says. */
export interface Tick {
  value: number;
  label: string;
}

/** The 1-2-5 step (1, 2 or 5 × 10^k) nearest to `raw` (on a log scale, as d3's ticks). */
export function niceStep(raw: number): number {
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw) + 1e-12);
  const f = raw / power;
  const m = f >= Math.sqrt(50) ? 10 : f >= Math.sqrt(10) ? 5 : f >= Math.sqrt(2) ? 2 : 1;
  return m * power;
}

/** Multiples of a 1-2-5 step covering [lo, hi], about `count` of them. */
function stepsIn(lo: number, hi: number, count: number): { values: number[]; step: number } {
  const step = niceStep((hi - lo) / Math.max(1, count));
  const first = Math.ceil(lo / step - 1e-9);
  const last = Math.floor(hi / step + 1e-9);
  const values: number[] = [];
  for (let k = first; k <= last && values.length < 1000; k++) values.push(k * step);
  return { values, step };
}

/** `v` with as many decimals as `step` needs (at most 3). */
function decimal(v: number, step: number): string {
  const digits = Math.min(3, Math.max(0, -Math.floor(Math.log10(step) + 1e-9)));
  const text = v.toFixed(digits);
  if (Number(text) === 0) return "0";
  return digits > 0 ? text.replace(/\.?0+$/, "") : text;
}

/**
 * Ticks of a bytes axis from 0 to `max`: 1-2-5 steps of one binary unit, the unit the
 * largest value is written in (0, 4 MiB, 8 MiB, 12 MiB; never 4.77 MiB).
 */
export function byteTicks(max: number, count = 4): Tick[] {
  const top = Math.max(max, 1);
  let unit = 0;
  while (unit < BYTE_UNITS.length && top >= 1024 ** (unit + 1)) unit++;
  const size = 1024 ** unit;
  const name = unit === 0 ? "B" : BYTE_UNITS[unit - 1];
  const { values, step } = stepsIn(0, top / size, count);
  const usable = unit === 0 ? values.filter((v) => Number.isInteger(v)) : values;
  return usable.map((v) => ({ value: v * size, label: v === 0 ? "0" : `${decimal(v, unit === 0 ? Math.max(1, step) : step)} ${name}` }));
}

const TIME_UNITS: [number, string][] = [
  [1e9, "s"],
  [1e6, "ms"],
  [1e3, "µs"],
  [1, "ns"],
];

/**
 * Ticks of a time axis over [t0, t1] ns (times from the run's start): 1-2-5 steps in
 * the unit of the step (s, ms, µs; ns only below a microsecond), the origin "0 s".
 */
export function timeTicks(t0: number, t1: number, count = 6): Tick[] {
  const { values, step } = stepsIn(t0, Math.max(t1, t0 + 1), count);
  const largest = Math.max(Math.abs(t0), Math.abs(t1), step);
  const [scale, unit] = TIME_UNITS.find(([s]) => largest >= s) ?? TIME_UNITS[3];
  return values.map((v) => ({ value: v, label: Math.abs(v) < step / 2 ? "0 s" : `${decimal(v / scale, step / scale)} ${unit}` }));
}

/** Ticks of a plain quantity from 0 to `max` with a unit after each (`unit` empty: none). */
export function countTicks(max: number, unit: string, count = 4): Tick[] {
  const { values, step } = stepsIn(0, Math.max(max, 1e-12), count);
  return values.map((v) => {
    const text = v >= 1e6 ? formatSi(v) : v >= 1000 && step >= 1 ? formatCount(v) : decimal(v, step);
    return { value: v, label: unit && text !== "0" ? `${text} ${unit}` : text };
  });
}

/** A share axis 0 … 1 written as 0 % … 100 %, in steps of 20, 25 or 50 %. */
export function percentTicks(count = 4): Tick[] {
  const step = count >= 5 ? 0.2 : count >= 3 ? 0.25 : 0.5;
  const ticks: Tick[] = [];
  for (let k = 0; k * step <= 1 + 1e-9; k++) ticks.push({ value: k * step, label: `${Math.round(k * step * 100)} %` });
  return ticks;
}

/** `3_990_000` → `3.99 M` (counts too long to write in full on an axis). */
export function formatSi(n: number): string {
  const [scale, unit] = Math.abs(n) >= 1e9 ? [1e9, "G"] : Math.abs(n) >= 1e6 ? [1e6, "M"] : Math.abs(n) >= 1e3 ? [1e3, "k"] : [1, ""];
  const text = (n / scale).toFixed(2).replace(/\.?0+$/, "");
  return unit ? `${text} ${unit}` : text;
}

/**
 * `text` cut with an ellipsis to fit `width` (as `measure` measures it); the caller puts
 * the full text in a title or tooltip.
 */
export function ellipsize(text: string, width: number, measure: (s: string) => number): string {
  if (measure(text) <= width) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (measure(`${text.slice(0, mid)}…`) <= width) lo = mid;
    else hi = mid - 1;
  }
  return lo === 0 ? "" : `${text.slice(0, lo)}…`;
}
