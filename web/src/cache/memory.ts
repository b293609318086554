// Main memory's ring: every line of the named regions has its home there (one arc
// per region, lines in address order), plus an arc for lines of no region. When the
// regions hold too many lines to draw, only lines the cache has seen get glyphs.

import type { MemoryArc } from "./layout";
import { memoryArcs, type Ring } from "./layout";
import type { MemoryIndex } from "./paths";
import type { RegionInfo } from "./types";

/** Above this many lines in named regions, memory draws only the lines seen. */
export const MEMORY_GLYPH_LIMIT = 20_000;

/** Positions around the "other" arc for lines outside every region. */
const OTHER_SLOTS = 256;

export class MemoryLayout implements MemoryIndex {
  readonly arcs: MemoryArc[] = [];
  /** The lines drawn in memory, with their regions. */
  readonly lines = new Map<number, number>();
  private readonly sorted: RegionInfo[];
  private readonly arcByRegion = new Map<number, MemoryArc>();
  readonly allLines: boolean;

  constructor(
    regions: RegionInfo[],
    readonly lineSize: number,
    ring: Ring,
    glyph: number,
  ) {
    this.sorted = [...regions].filter((r) => r.len > 0).sort((a, b) => a.start - b.start);
    const counts = this.sorted.map((r) => ({ id: r.id, lines: this.linesOf(r) }));
    // Lines of no region get a small arc when regions are named, the whole ring if not.
    counts.push({ id: 0, lines: this.sorted.length > 0 ? Math.max(8, Math.round(total0(counts) / 16)) : OTHER_SLOTS });
    for (const arc of memoryArcs(counts, ring, glyph)) {
      this.arcs.push(arc);
      this.arcByRegion.set(arc.region, arc);
    }
    const total = counts.reduce((a, c) => a + (c.id === 0 ? 0 : c.lines), 0);
    this.allLines = total <= MEMORY_GLYPH_LIMIT;
    if (this.allLines) {
      for (const r of this.sorted) {
        const first = Math.floor(r.start / lineSize) * lineSize;
        for (let i = 0; i < this.linesOf(r); i++) this.lines.set(first + i * lineSize, r.id);
      }
    }
  }

  private linesOf(r: RegionInfo): number {
    const first = Math.floor(r.start / this.lineSize);
    const last = Math.floor((r.start + r.len - 1) / this.lineSize);
    return last - first + 1;
  }

  /** The region whose range holds `addr`, or undefined. */
  regionAt(addr: number): RegionInfo | undefined {
    let lo = 0;
    let hi = this.sorted.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const r = this.sorted[mid];
      if (addr < r.start) hi = mid - 1;
      else if (addr >= r.start + r.len) lo = mid + 1;
      else return r;
    }
    return undefined;
  }

  /** The home of a line (given at any line size): its arc and place there. */
  arcOf(line: number): { arc: MemoryArc; index: number } {
    const aligned = Math.floor(line / this.lineSize) * this.lineSize;
    const region = this.regionAt(line);
    if (region) {
      const arc = this.arcByRegion.get(region.id)!;
      const first = Math.floor(region.start / this.lineSize) * this.lineSize;
      return { arc, index: (aligned - first) / this.lineSize };
    }
    const arc = this.arcByRegion.get(0)!;
    // Spread unnamed lines over the arc by a hash of their address.
    const h = Math.imul((aligned / this.lineSize) >>> 0, 0x9e3779b1) >>> 0;
    return { arc, index: h % arc.lines };
  }

  /** Records a line the cache has seen, so that memory draws its home. */
  see(line: number, region: number): void {
    const aligned = Math.floor(line / this.lineSize) * this.lineSize;
    if (!this.lines.has(aligned) && this.lines.size < MEMORY_GLYPH_LIMIT * 2) this.lines.set(aligned, region);
  }
}

function total0(counts: { lines: number }[]): number {
  return counts.reduce((a, c) => a + c.lines, 0);
}
