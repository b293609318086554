// Colours of the cache lens (Table I, colour): a glyph's base colour is its home
// region (low frequency); a miss flashes it red (high frequency). Temperature uses a
// diverging map: blue (misses dominate) – white (neutral) – red (reuse).

/** Region colours, by region id (0, lines of no named region, is grey). */
const PALETTE = [
  "#8a8f98",
  "#7b4fd6",
  "#2ca25f",
  "#e6891f",
  "#3182bd",
  "#c2399a",
  "#17a3a3",
  "#b58b00",
  "#6b6ecf",
  "#8c564b",
  "#5aa02c",
  "#d6616b",
];

export function regionColor(region: number): string {
  if (region === 0) return PALETTE[0];
  return PALETTE[1 + ((region - 1) % (PALETTE.length - 1))];
}

export const FLASH = [235, 25, 25] as const;

export function hexToRgb(hex: string): [number, number, number] {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** `base` blended towards red by `amount` (0…1). */
export function flashColor(base: string, amount: number): string {
  const [r, g, b] = hexToRgb(base);
  const a = Math.min(1, Math.max(0, amount));
  const mix = (x: number, y: number) => Math.round(x + (y - x) * a);
  return `rgb(${mix(r, FLASH[0])},${mix(g, FLASH[1])},${mix(b, FLASH[2])})`;
}

const COLD = [44, 123, 214];
const NEUTRAL = [247, 247, 247];
const WARM = [215, 25, 28];

/** The diverging temperature colour of `t` in −1 (cold) … 1 (warm), as r, g, b. */
export function temperatureRgb(t: number): [number, number, number] {
  const x = Math.min(1, Math.max(-1, t));
  const end = x < 0 ? COLD : WARM;
  const f = Math.abs(x);
  return [0, 1, 2].map((i) => Math.round(NEUTRAL[i] + (end[i] - NEUTRAL[i]) * f)) as [number, number, number];
}
