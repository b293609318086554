// The allocation map's viewport: a window of time (x, left to right) and of the
// compact address axis (y, bottom to top) in data units, with the zoom and pan math
// of the main view and the context view. Pure functions, unit-tested.

/** A data window: times in ns on the model's timeline, positions on the address axis. */
export interface Extent {
  t0: number;
  t1: number;
  a0: number;
  a1: number;
}

/** A time window, ns. */
export interface TimeWindow {
  t0: number;
  t1: number;
}

/** What the window may show: the whole model, and the smallest spans worth zooming to. */
export interface Limits {
  tStart: number;
  tEnd: number;
  aStart: number;
  aEnd: number;
  /** Smallest time span, ns. */
  minDt: number;
  /** Smallest address span, bytes. */
  minDa: number;
}

/** Limits of a model whose run is `[tStart, tEnd)` and axis `[0, axisLen)`. */
export function limitsOf(tStart: number, tEnd: number, axisLen: number): Limits {
  return { tStart, tEnd, aStart: 0, aEnd: axisLen, minDt: 64, minDa: 16 };
}

/** The whole model. */
export function wholeExtent(lim: Limits): Extent {
  return { t0: lim.tStart, t1: lim.tEnd, a0: lim.aStart, a1: lim.aEnd };
}

/** Fits one axis's `[lo, hi)` inside `[min, max)` with a span of at least `minSpan`,
 * keeping its centre where possible. */
function clampAxis(lo: number, hi: number, min: number, max: number, minSpan: number): [number, number] {
  const full = max - min;
  let span = Math.min(Math.max(hi - lo, Math.min(minSpan, full)), full);
  if (!(span > 0)) span = full;
  const centre = (lo + hi) / 2;
  let a = centre - span / 2;
  a = Math.min(Math.max(a, min), max - span);
  return [a, a + span];
}

/** The extent moved and resized as little as needed to respect the limits. */
export function clampExtent(v: Extent, lim: Limits): Extent {
  const [t0, t1] = clampAxis(v.t0, v.t1, lim.tStart, lim.tEnd, lim.minDt);
  const [a0, a1] = clampAxis(v.a0, v.a1, lim.aStart, lim.aEnd, lim.minDa);
  return { t0, t1, a0, a1 };
}

/**
 * Zooms by `kx` in time and `ky` in address (factors above 1 zoom in) around an
 * anchor that stays put: `fx` is its fraction of the width from the left, `fy` of the
 * height from the bottom.
 */
export function zoomAt(v: Extent, lim: Limits, kx: number, ky: number, fx: number, fy: number): Extent {
  const tAnchor = v.t0 + fx * (v.t1 - v.t0);
  const aAnchor = v.a0 + fy * (v.a1 - v.a0);
  let dt = (v.t1 - v.t0) / kx;
  let da = (v.a1 - v.a0) / ky;
  dt = Math.min(Math.max(dt, Math.min(lim.minDt, lim.tEnd - lim.tStart)), lim.tEnd - lim.tStart);
  da = Math.min(Math.max(da, Math.min(lim.minDa, lim.aEnd - lim.aStart)), lim.aEnd - lim.aStart);
  const t0 = tAnchor - fx * dt;
  const a0 = aAnchor - fy * da;
  return shiftInto({ t0, t1: t0 + dt, a0, a1: a0 + da }, lim);
}

/** Moves the extent (without resizing it) back inside the limits. */
function shiftInto(v: Extent, lim: Limits): Extent {
  const dt = v.t1 - v.t0;
  const da = v.a1 - v.a0;
  const t0 = Math.min(Math.max(v.t0, lim.tStart), lim.tEnd - dt);
  const a0 = Math.min(Math.max(v.a0, lim.aStart), lim.aEnd - da);
  return { t0, t1: t0 + dt, a0, a1: a0 + da };
}

/** Pans by a drag of (`dxPx`, `dyPx`) screen pixels on a `width × height` view: the
 * content follows the mouse (dragging right shows earlier times, dragging down higher
 * addresses). */
export function panBy(v: Extent, lim: Limits, dxPx: number, dyPx: number, width: number, height: number): Extent {
  const dt = (-dxPx / width) * (v.t1 - v.t0);
  const da = (dyPx / height) * (v.a1 - v.a0);
  return shiftInto({ t0: v.t0 + dt, t1: v.t1 + dt, a0: v.a0 + da, a1: v.a1 + da }, lim);
}

/** Moves the address window so its centre is at `a` (the context view's click). */
export function centreAddressAt(v: Extent, lim: Limits, a: number): Extent {
  const da = v.a1 - v.a0;
  return shiftInto({ ...v, a0: a - da / 2, a1: a + da / 2 }, lim);
}

/** Screen x (pixels from the left) of time `t`. */
export function xOf(v: TimeWindow, width: number, t: number): number {
  return ((t - v.t0) / (v.t1 - v.t0)) * width;
}

/** Screen y (pixels from the top) of axis position `a`. */
export function yOf(v: Extent, height: number, a: number): number {
  return height - ((a - v.a0) / (v.a1 - v.a0)) * height;
}

/** The time at screen x. */
export function timeAt(v: TimeWindow, width: number, x: number): number {
  return v.t0 + (x / width) * (v.t1 - v.t0);
}

/** The axis position at screen y (from the top). */
export function addressAt(v: Extent, height: number, y: number): number {
  return v.a0 + ((height - y) / height) * (v.a1 - v.a0);
}

/** True when two extents are the same to within a thousandth of a pixel on a 4K screen. */
export function sameExtent(a: Extent, b: Extent): boolean {
  const eps = (x0: number, x1: number) => Math.abs(x1 - x0) * 2.5e-7;
  return (
    Math.abs(a.t0 - b.t0) <= eps(a.t0, a.t1) &&
    Math.abs(a.t1 - b.t1) <= eps(a.t0, a.t1) &&
    Math.abs(a.a0 - b.a0) <= eps(a.a0, a.a1) &&
    Math.abs(a.a1 - b.a1) <= eps(a.a0, a.a1)
  );
}
