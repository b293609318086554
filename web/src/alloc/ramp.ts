// The allocation map's continuous colour scale (the engine's colormap.rs: blue, cyan,
// green, yellow, red) in the page, so that a chart can share the occupancy bar's
// colours, and the legend of that scale with its unit.

import { h } from "../app/dom";

const STOPS: [number, number, number][] = [
  [0.12, 0.2, 0.85],
  [0.1, 0.75, 0.9],
  [0.25, 0.8, 0.25],
  [0.98, 0.85, 0.15],
  [0.88, 0.12, 0.1],
];

/** The scale at `v` in 0…1 (clamped), as CSS. */
export function rampColor(v: number): string {
  const x = Math.min(1, Math.max(0, Number.isFinite(v) ? v : 0)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(x));
  const f = x - i;
  const c = STOPS[i].map((a, k) => Math.round(255 * (a + (STOPS[i + 1][k] - a) * f)));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

/** The CSS gradient of the scale, left to right. */
export const RAMP_GRADIENT = `linear-gradient(to right, ${[0, 0.25, 0.5, 0.75, 1].map(rampColor).join(", ")})`;

/**
 * A one-line legend: `title`, then the ramp from `lo` to `hi`, then what the shading
 * means (`shade`, optional).
 */
export function rampLegend(testid: string, title: string, lo: string, hi: string, shade?: string): HTMLElement {
  return h(
    "div",
    { class: "alloc-ramp-legend", "data-testid": testid },
    h("span", { class: "title" }, title),
    h("span", { class: "end" }, lo),
    h("span", { class: "ramp", style: `background:${RAMP_GRADIENT}` }),
    h("span", { class: "end" }, hi),
    shade ? h("span", { class: "shade" }, shade) : "",
  );
}
