// Cushion cursors (the paper's §4.1.4, Figure 7): a vertical cursor at a chosen time,
// drawn over every view that shares the time axis. Instead of a line it is a shaded
// cushion whose opacity falls off logarithmically with the distance d from its centre:
//
//   opacity(d) = peak · (1 − ln(1 + d/σ) / ln(1 + R/σ))   for d ≤ R, else 0
//
// and whose luminance across it follows a lit parabolic ridge (bright on the side
// facing the light, dark on the other), so several cursors stay soft and readable over
// fine detail. `softness` in 0..1 widens the cursor and lowers its peak opacity.

/** How cursors look. */
export interface CursorStyle {
  /** Half-width R, pixels. */
  radius: number;
  /** Scale σ of the logarithm, pixels: small σ makes a sharp core and a long soft tail. */
  sigma: number;
  /** Opacity at the centre, 0..1. */
  peak: number;
}

/** The style for a softness in 0..1 (0 = narrow and opaque, 1 = wide and faint). */
export function cursorStyle(softness: number): CursorStyle {
  const s = Math.min(Math.max(softness, 0), 1);
  return { radius: 7 + 13 * s, sigma: 1 + 2 * s, peak: 0.9 - 0.6 * s };
}

/** The logarithmic opacity profile at distance `d` pixels from the centre. */
export function cursorOpacity(d: number, style: CursorStyle): number {
  const ad = Math.abs(d);
  if (ad >= style.radius) return 0;
  const v = 1 - Math.log1p(ad / style.sigma) / Math.log1p(style.radius / style.sigma);
  return style.peak * Math.max(0, v);
}

/** Lit parabolic-cushion luminance (0..1) at `u` in −1..1 across the cursor; the light
 * comes from the left and above, as on the map's block cushions. */
export function cursorShade(u: number): number {
  const slope = -2 * Math.min(Math.max(u, -1), 1); // d/du of 1 − u²
  const light = [-0.45, 0.3, 0.84];
  const n = [-slope, 0, 1];
  const len = Math.hypot(n[0], n[1], n[2]);
  const dot = (n[0] * light[0] + n[1] * light[1] + n[2] * light[2]) / len;
  return 0.16 + 0.84 * Math.max(0, dot);
}

/** Draws cursors at screen xs over a `height`-pixel-tall area of `ctx`. */
export function drawCursors(ctx: CanvasRenderingContext2D, xs: number[], height: number, style: CursorStyle, top = 0): void {
  const r = Math.ceil(style.radius);
  ctx.save();
  for (const xc of xs) {
    if (!Number.isFinite(xc)) continue;
    const c0 = Math.floor(xc) - r;
    for (let c = c0; c <= Math.floor(xc) + r; c++) {
      const d = c + 0.5 - xc;
      const a = cursorOpacity(d, style);
      if (a <= 0) continue;
      const g = Math.round(40 + 120 * cursorShade(d / style.radius));
      ctx.fillStyle = `rgba(${g},${g},${Math.round(g * 1.08)},${a.toFixed(3)})`;
      ctx.fillRect(c, top, 1, height);
    }
  }
  ctx.restore();
}

/** The index of the cursor within `tolerancePx` of screen x `x`, or −1. */
export function cursorNear(xs: number[], x: number, tolerancePx: number): number {
  let best = -1;
  let bestD = tolerancePx;
  xs.forEach((xc, i) => {
    const d = Math.abs(xc - x);
    if (d <= bestD) {
      best = i;
      bestD = d;
    }
  });
  return best;
}
