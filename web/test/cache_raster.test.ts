// Unit tests of the cache lens's glyph rasterizer: discs and boxes blend into an
// opaque pixel buffer with antialiased edges, ghosts at partial opacity, and nothing
// is written outside the buffer.

import { describe, expect, it } from "vitest";
import { fillBox, fillDisc, opaque, packHex } from "../src/cache/raster";

const W = 20;
const H = 12;
const WHITE = opaque(packHex("#ffffff"));

function canvas(): Uint32Array {
  return new Uint32Array(W * H).fill(WHITE);
}

function rgba(buf: Uint32Array, x: number, y: number): [number, number, number, number] {
  const p = buf[y * W + x];
  return [p & 255, (p >>> 8) & 255, (p >>> 16) & 255, p >>> 24];
}

describe("glyph rasterizer", () => {
  it("packs colours in ImageData's byte order", () => {
    const buf = new Uint32Array(1);
    buf[0] = opaque(packHex("#102030"));
    expect(Array.from(new Uint8Array(buf.buffer))).toEqual([0x10, 0x20, 0x30, 255]);
  });

  it("fills a disc solidly inside, partly at its edge, not outside", () => {
    const buf = canvas();
    fillDisc(buf, W, H, 10, 6, 3, packHex("#e01010"), 1);
    expect(rgba(buf, 10, 6)).toEqual([0xe0, 0x10, 0x10, 255]);
    expect(rgba(buf, 9, 5)).toEqual([0xe0, 0x10, 0x10, 255]);
    const [, g] = rgba(buf, 12, 7); // its centre is √(2.5² + 1.5²) ≈ 2.92 px away: partly covered
    expect(g).toBeGreaterThan(0x10);
    expect(g).toBeLessThan(255);
    expect(rgba(buf, 15, 6)).toEqual([255, 255, 255, 255]);
    expect(rgba(buf, 10, 0)).toEqual([255, 255, 255, 255]);
  });

  it("blends ghosts at partial opacity over what is beneath", () => {
    const buf = canvas();
    fillBox(buf, W, H, 5, 5, 1, packHex("#000000"), 1 / 3);
    const [r, g, b, a] = rgba(buf, 4, 4);
    expect(a).toBe(255);
    expect(r).toBe(g);
    expect(g).toBe(b);
    expect(r).toBeGreaterThan(160);
    expect(r).toBeLessThan(180);
  });

  it("covers box pixels by their overlap, so glyphs keep sub-pixel positions", () => {
    const buf = canvas();
    fillBox(buf, W, H, 5.5, 5, 1, packHex("#000000"), 1);
    // The box spans x 4.5…6.5: half of pixel 4, all of pixel 5, half of pixel 6.
    expect(rgba(buf, 5, 4)[0]).toBe(0);
    expect(rgba(buf, 4, 4)[0]).toBeGreaterThan(120);
    expect(rgba(buf, 4, 4)[0]).toBeLessThan(135);
    expect(rgba(buf, 6, 4)[0]).toBe(rgba(buf, 4, 4)[0]);
    expect(rgba(buf, 7, 4)[0]).toBe(255);
  });

  it("clips glyphs at the buffer's borders", () => {
    const buf = canvas();
    fillDisc(buf, W, H, -1, -1, 3, packHex("#000000"), 1);
    fillDisc(buf, W, H, W + 1, H + 1, 3, packHex("#000000"), 1);
    fillBox(buf, W, H, W - 0.5, H - 0.5, 4, packHex("#000000"), 1);
    fillBox(buf, W, H, -100, -100, 2, packHex("#000000"), 1);
    expect(buf.length).toBe(W * H);
    expect(rgba(buf, 0, 0)[0]).toBe(0);
    expect(rgba(buf, W - 1, H - 1)[0]).toBe(0);
    expect(rgba(buf, 10, 6)[0]).toBe(255);
  });
});
