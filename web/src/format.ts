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
