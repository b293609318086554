// The miss-rate timeline under the rings: one line per cache level over the whole
// source (the server's buckets), the current position as a cursor; a click or drag
// scrubs to that reference. The cursor redraws only when it moves by a pixel.

import type { SessionDoc } from "./types";

const LEVEL_COLORS = ["#d9480f", "#1c7ed6", "#2b8a3e", "#862e9c"];

export class MissTimeline {
  readonly canvas: HTMLCanvasElement;
  private doc: SessionDoc | null = null;
  private position = 0;
  /** The cursor's pixel column when last drawn: moves within a pixel redraw nothing. */
  private drawnX = NaN;

  constructor(private readonly onScrub: (reference: number) => void) {
    this.canvas = document.createElement("canvas");
    this.canvas.className = "cl-timeline";
    this.canvas.dataset.testid = "cache-timeline";
    let dragging = false;
    const scrub = (e: PointerEvent) => {
      if (!this.doc) return;
      const rect = this.canvas.getBoundingClientRect();
      const f = Math.min(1, Math.max(0, (e.clientX - rect.left) / rect.width));
      this.onScrub(Math.round(f * this.doc.references));
    };
    this.canvas.addEventListener("pointerdown", (e) => {
      dragging = true;
      scrub(e);
    });
    this.canvas.addEventListener("pointermove", (e) => dragging && scrub(e));
    window.addEventListener("pointerup", () => (dragging = false));
  }

  set(doc: SessionDoc): void {
    this.doc = doc;
    this.draw();
  }

  at(position: number): void {
    this.position = position;
    const width = this.canvas.clientWidth || 600;
    const x = Math.round((position / Math.max(1, this.doc?.references ?? 1)) * width * (window.devicePixelRatio || 1));
    if (x !== this.drawnX) this.draw();
  }

  draw(): void {
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const width = c.clientWidth || 600;
    const height = c.clientHeight || 90;
    if (c.width !== Math.round(width * dpr)) c.width = Math.round(width * dpr);
    if (c.height !== Math.round(height * dpr)) c.height = Math.round(height * dpr);
    const ctx = c.getContext("2d");
    if (!ctx || !this.doc) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    const top = 14;
    const plot = height - top - 4;
    ctx.strokeStyle = "#e3e6ea";
    ctx.beginPath();
    ctx.moveTo(0, top + plot + 0.5);
    ctx.lineTo(width, top + plot + 0.5);
    ctx.moveTo(0, top + 0.5);
    ctx.lineTo(width, top + 0.5);
    ctx.stroke();
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "top";
    const levels = this.doc.timeline.levels;
    let legendX = 4;
    levels.forEach((level, i) => {
      const color = LEVEL_COLORS[i % LEVEL_COLORS.length];
      ctx.strokeStyle = color;
      ctx.lineWidth = 1.3;
      ctx.beginPath();
      const n = level.accesses.length;
      let started = false;
      for (let b = 0; b < n; b++) {
        if (level.accesses[b] === 0) continue;
        const x = ((b + 0.5) / n) * width;
        const y = top + plot * (1 - level.misses[b] / level.accesses[b]);
        if (started) ctx.lineTo(x, y);
        else ctx.moveTo(x, y);
        started = true;
      }
      ctx.stroke();
      ctx.fillStyle = color;
      const label = `${level.name} miss rate`;
      ctx.fillText(label, legendX, 0);
      legendX += ctx.measureText(label).width + 14;
    });
    const x = (this.position / Math.max(1, this.doc.references)) * width;
    this.drawnX = Math.round(x * dpr);
    ctx.strokeStyle = "#222";
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.moveTo(x, top - 2);
    ctx.lineTo(x, height);
    ctx.stroke();
  }
}
