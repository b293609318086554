// The context view to the right of the main view (the paper's Figure 1): the whole
// address range over the whole run in a narrow strip, with a red frame around what the
// main view shows. It works as a scrollbar: press or drag to centre the main view's
// addresses there, wheel to zoom the addresses.

import { h } from "../app/dom";
import { mapQuery, queryKey } from "./api";
import type { AllocContext } from "./context";
import { centreAddressAt, wholeExtent, xOf, yOf, zoomAt } from "./viewport";

export const CONTEXT_WIDTH = 84;

export class ContextView {
  readonly el: HTMLElement;
  readonly canvas: HTMLCanvasElement;
  private image: ImageBitmap | null = null;
  private imageKey = "";
  private loading = "";
  private dragging = false;

  constructor(
    private readonly ctx: AllocContext,
    private readonly height: number,
  ) {
    this.canvas = h("canvas", { class: "alloc-context", width: CONTEXT_WIDTH, height, "data-testid": "alloc-context", title: "The whole address range: drag to scroll, wheel to zoom" });
    this.el = h("div", { class: "alloc-context-wrap" }, this.canvas);
    this.canvas.addEventListener("mousedown", (e) => {
      e.preventDefault();
      this.dragging = true;
      this.scrollTo(e);
    });
    window.addEventListener("mousemove", (e) => this.dragging && this.scrollTo(e));
    window.addEventListener("mouseup", () => (this.dragging = false));
    this.canvas.addEventListener(
      "wheel",
      (e) => {
        e.preventDefault();
        const r = this.canvas.getBoundingClientRect();
        const v = this.ctx.state.view;
        const whole = wholeExtent(this.ctx.limits);
        const a = whole.a0 + (1 - (e.clientY - r.top) / height) * (whole.a1 - whole.a0);
        const fy = (a - v.a0) / (v.a1 - v.a0);
        const k = Math.exp(-e.deltaY * 0.0018);
        this.ctx.setView(zoomAt(v, this.ctx.limits, 1, k, 0.5, Math.min(Math.max(fy, 0), 1)));
      },
      { passive: false },
    );
  }

  private scrollTo(e: MouseEvent): void {
    const r = this.canvas.getBoundingClientRect();
    const whole = wholeExtent(this.ctx.limits);
    const a = whole.a0 + (1 - (e.clientY - r.top) / this.height) * (whole.a1 - whole.a0);
    this.ctx.setView(centreAddressAt(this.ctx.state.view, this.ctx.limits, a));
  }

  /** Fetches the picture when the drawing parameters changed, and redraws the frame. */
  draw(): void {
    const q = { ...mapQuery(this.ctx.state.draw, []), w: CONTEXT_WIDTH, h: this.height };
    const key = queryKey(Object.fromEntries(Object.entries(q).map(([k, v]) => [k, String(v)])));
    if (key !== this.imageKey && key !== this.loading) {
      this.loading = key;
      this.ctx.api
        .image(this.ctx.api.url("tile", q))
        .then((img) => {
          if (this.loading !== key) return;
          this.image = img;
          this.imageKey = key;
          this.loading = "";
          this.paint();
        })
        .catch((err: unknown) => this.ctx.report(err instanceof Error ? err.message : String(err)));
    }
    this.paint();
  }

  private paint(): void {
    const g = this.canvas.getContext("2d")!;
    g.fillStyle = "#fff";
    g.fillRect(0, 0, CONTEXT_WIDTH, this.height);
    if (this.image) g.drawImage(this.image, 0, 0);
    const whole = wholeExtent(this.ctx.limits);
    const v = this.ctx.state.view;
    const x0 = xOf(whole, CONTEXT_WIDTH, v.t0);
    const x1 = xOf(whole, CONTEXT_WIDTH, v.t1);
    let y0 = yOf(whole, this.height, v.a1);
    let y1 = yOf(whole, this.height, v.a0);
    if (y1 - y0 < 4) {
      const c = (y0 + y1) / 2;
      y0 = c - 2;
      y1 = c + 2;
    }
    // A dark halo keeps the red frame visible over red blocks.
    const rect = [Math.max(1.5, x0), Math.max(1.5, y0), Math.min(CONTEXT_WIDTH - 3, x1 - x0), Math.min(this.height - 3, y1 - y0)] as const;
    g.strokeStyle = "rgba(0,0,0,0.65)";
    g.lineWidth = 4;
    g.strokeRect(...rect);
    g.strokeStyle = "#ff2a1f";
    g.lineWidth = 2;
    g.strokeRect(...rect);
  }
}
