// The miss-rate timeline under the rings: one line per cache level over the whole
// source (the server's buckets), with a miss-rate axis (0–100 %) on its left and a
// reference axis under it, the current position as a cursor; a click or drag scrubs
// to that reference. The cursor redraws only when it moves by a pixel.

import { drawXAxis, drawYAxis } from "../canvas_axis";
import { countTicks, percentTicks } from "../format";
import type { SessionDoc } from "./types";

/** Room for the miss-rate labels left of the plot, and for the reference axis under it. */
const LEFT = 46;
const BOTTOM = 30;
const RIGHT = 8;

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
      const f = Math.min(1, Math.max(0, (e.clientX - rect.left - LEFT) / (rect.width - LEFT - RIGHT)));
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
    const width = (this.canvas.clientWidth || 600) - LEFT - RIGHT;
    const x = Math.round((LEFT + (position / Math.max(1, this.doc?.references ?? 1)) * width) * (window.devicePixelRatio || 1));
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
    const top = 16;
    const plot = height - top - BOTTOM;
    const plotWidth = width - LEFT - RIGHT;
    const yOf = (rate: number) => plot * (1 - rate);
    drawYAxis(ctx, percentTicks(2), yOf, LEFT, top, plot);
    const references = this.doc.references;
    const xOf = (reference: number) => (reference / Math.max(1, references)) * plotWidth;
    drawXAxis(ctx, countTicks(references, "", Math.max(2, Math.floor(plotWidth / 90))), xOf, LEFT, top + plot, plotWidth);
    ctx.font = "10.5px system-ui, sans-serif";
    ctx.fillStyle = "#5d6575";
    ctx.textAlign = "right";
    ctx.textBaseline = "bottom";
    ctx.fillText("references →", width - RIGHT, height);
    const levels = this.doc.timeline.levels;
    let legendX = LEFT + 4;
    levels.forEach((level, i) => {
      const color = LEVEL_COLORS[i % LEVEL_COLORS.length];
      ctx.strokeStyle = color;
      ctx.lineWidth = 1.3;
      ctx.beginPath();
      const n = level.accesses.length;
      let started = false;
      for (let b = 0; b < n; b++) {
        if (level.accesses[b] === 0) continue;
        const x = LEFT + ((b + 0.5) / n) * plotWidth;
        const y = top + yOf(level.misses[b] / level.accesses[b]);
        if (started) ctx.lineTo(x, y);
        else ctx.moveTo(x, y);
        started = true;
      }
      ctx.stroke();
      ctx.fillStyle = color;
      ctx.textAlign = "left";
      ctx.textBaseline = "top";
      const label = `${level.name} miss rate`;
      ctx.fillText(label, legendX, 0);
      legendX += ctx.measureText(label).width + 14;
    });
    const x = LEFT + xOf(this.position);
    this.drawnX = Math.round(x * dpr);
    ctx.strokeStyle = "#222";
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.moveTo(x, top - 2);
    ctx.lineTo(x, top + plot);
    ctx.stroke();
  }
}
