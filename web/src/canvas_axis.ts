// Axes drawn on a canvas, shared by the allocation map's and the cache lens's charts:
// a horizontal axis (ticks under a plot) and a vertical one (ticks left of a plot),
// from the ticks format.ts computes, labels kept inside the canvas and never on top
// of each other (a label that would overlap the previous one is left out).

import type { Tick } from "./format";

export const AXIS_FONT = "10.5px system-ui, sans-serif";
const INK = "#5d6575";
const TICK = "#b9bec7";

/**
 * Ticks along y = `y` from x = `x0` to x0 + `width`; `xOf` maps a tick's value to a
 * pixel column (relative to x0). `title` (the quantity and unit) goes right-aligned.
 */
export function drawXAxis(g: CanvasRenderingContext2D, ticks: Tick[], xOf: (v: number) => number, x0: number, y: number, width: number): void {
  g.save();
  g.font = AXIS_FONT;
  g.textBaseline = "top";
  g.textAlign = "left";
  g.strokeStyle = TICK;
  g.fillStyle = INK;
  g.beginPath();
  g.moveTo(x0, y + 0.5);
  g.lineTo(x0 + width, y + 0.5);
  g.stroke();
  let lastEnd = -Infinity;
  for (const t of ticks) {
    const x = Math.round(x0 + xOf(t.value)) + 0.5;
    if (x < x0 - 1 || x > x0 + width + 1) continue;
    g.beginPath();
    g.moveTo(x, y);
    g.lineTo(x, y + 4);
    g.stroke();
    const w = g.measureText(t.label).width;
    const left = Math.min(Math.max(x - w / 2, x0), x0 + width - w);
    if (left < lastEnd + 6) continue;
    g.fillText(t.label, left, y + 5);
    lastEnd = left + w;
  }
  g.restore();
}

/**
 * Ticks along x = `x` (the plot's left edge) from y = `top` to `top + height`; `yOf`
 * maps a value to a pixel row (relative to top); labels right-aligned left of the axis.
 * With `grid`, faint lines across `gridWidth` pixels right of the axis.
 */
export function drawYAxis(
  g: CanvasRenderingContext2D,
  ticks: Tick[],
  yOf: (v: number) => number,
  x: number,
  top: number,
  height: number,
  grid?: { ctx: CanvasRenderingContext2D; width: number },
): void {
  g.save();
  g.font = AXIS_FONT;
  g.textAlign = "right";
  g.textBaseline = "middle";
  g.strokeStyle = TICK;
  g.fillStyle = INK;
  g.beginPath();
  g.moveTo(x - 0.5, top);
  g.lineTo(x - 0.5, top + height);
  g.stroke();
  let lastTop = Infinity;
  for (const t of ticks) {
    const y = Math.round(top + yOf(t.value)) + 0.5;
    if (y < top - 1 || y > top + height + 1) continue;
    g.beginPath();
    g.moveTo(x - 4, y);
    g.lineTo(x, y);
    g.stroke();
    const ly = Math.min(Math.max(y, top + 5), top + height - 5);
    if (ly > lastTop - 11) continue;
    g.fillText(t.label, x - 6, ly);
    lastTop = ly;
    if (grid) {
      const gc = grid.ctx;
      gc.save();
      gc.strokeStyle = "rgba(0,0,0,0.07)";
      gc.beginPath();
      gc.moveTo(0, y - top);
      gc.lineTo(grid.width, y - top);
      gc.stroke();
      gc.restore();
    }
  }
  g.restore();
}
