// The glyph rasterizer of the cache lens: tens of thousands of small glyphs are
// blended straight into an opaque RGBA pixel buffer (one `putImageData` per frame)
// instead of being drawn as antialiased canvas paths, which a software-rasterizing
// browser would replay path by path after the script ran. Discs get an analytic
// antialiased edge, boxes exact per-pixel coverage, so glyphs keep their sub-pixel
// positions while they move. Pure functions over a `Uint32Array` (one pixel per
// element, little-endian RGBA as in `ImageData`), unit-tested without a browser.

/** A colour packed for the buffer: r | g << 8 | b << 16 (alpha comes per call). */
export type Rgb = number;

/** Packs `#rrggbb`. */
export function packHex(hex: string): Rgb {
  const n = parseInt(hex.slice(1, 7), 16);
  return ((n >> 16) & 255) | (n & 0xff00) | ((n & 255) << 16);
}

/** An opaque buffer pixel of a packed colour. */
export function opaque(rgb: Rgb): number {
  return (0xff000000 | rgb) >>> 0;
}

/** Blends `rgb` at `a` (0…256) over the opaque pixel `i`. */
function blend(buf: Uint32Array, i: number, rgb: Rgb, a: number): void {
  const d = buf[i];
  const ia = 256 - a;
  const r = ((rgb & 255) * a + (d & 255) * ia) >> 8;
  const g = (((rgb >> 8) & 255) * a + ((d >> 8) & 255) * ia) >> 8;
  const b = (((rgb >> 16) & 255) * a + ((d >> 16) & 255) * ia) >> 8;
  buf[i] = 0xff000000 | (b << 16) | (g << 8) | r;
}

/**
 * A filled disc of radius `r` about (`x`, `y`) in buffer pixels, with opacity `alpha`
 * (0…1); edge pixels are covered by how far their centre lies inside the circle.
 */
export function fillDisc(buf: Uint32Array, width: number, height: number, x: number, y: number, r: number, rgb: Rgb, alpha: number): void {
  const x0 = Math.max(0, Math.floor(x - r));
  const x1 = Math.min(width - 1, Math.ceil(x + r));
  const y0 = Math.max(0, Math.floor(y - r));
  const y1 = Math.min(height - 1, Math.ceil(y + r));
  const full = Math.round(alpha * 256);
  const edge = r + 0.5;
  const inner = Math.max(0, r - 0.5);
  const inner2 = inner * inner;
  const edge2 = edge * edge;
  for (let py = y0; py <= y1; py++) {
    const dy = py + 0.5 - y;
    const dy2 = dy * dy;
    const row = py * width;
    for (let px = x0; px <= x1; px++) {
      const dx = px + 0.5 - x;
      const d2 = dx * dx + dy2;
      if (d2 >= edge2) continue;
      if (d2 <= inner2) blend(buf, row + px, rgb, full);
      else blend(buf, row + px, rgb, Math.round(full * (edge - Math.sqrt(d2))));
    }
  }
}

/** Column coverages of the current box (boxes wider than this are split in rows of it). */
const COLUMNS = new Float64Array(64);

/** A filled box of half-size `r` about (`x`, `y`), each pixel covered by its overlap. */
export function fillBox(buf: Uint32Array, width: number, height: number, x: number, y: number, r: number, rgb: Rgb, alpha: number): void {
  const left = x - r;
  const right = x + r;
  const top = y - r;
  const bottom = y + r;
  const x0 = Math.max(0, Math.floor(left));
  const x1 = Math.min(width - 1, Math.ceil(right) - 1, x0 + COLUMNS.length - 1);
  const y0 = Math.max(0, Math.floor(top));
  const y1 = Math.min(height - 1, Math.ceil(bottom) - 1);
  if (x1 < x0 || y1 < y0) return;
  const full = alpha * 256;
  for (let px = x0; px <= x1; px++) COLUMNS[px - x0] = full * (Math.min(px + 1, right) - Math.max(px, left));
  const sr = rgb & 255;
  const sg = (rgb >> 8) & 255;
  const sb = (rgb >> 16) & 255;
  for (let py = y0; py <= y1; py++) {
    const cy = Math.min(py + 1, bottom) - Math.max(py, top);
    const row = py * width;
    for (let px = x0; px <= x1; px++) {
      const a = (COLUMNS[px - x0] * cy + 0.5) | 0;
      if (a <= 0) continue;
      const i = row + px;
      const d = buf[i];
      const ia = 256 - a;
      buf[i] =
        0xff000000 |
        (((sb * a + ((d >> 16) & 255) * ia) >> 8) << 16) |
        (((sg * a + ((d >> 8) & 255) * ia) >> 8) << 8) |
        ((sr * a + (d & 255) * ia) >> 8);
    }
  }
}
