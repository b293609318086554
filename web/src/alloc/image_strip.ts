// A canvas showing one server image of a time window (an occupancy bar, a bin's map,
// the stacked bars) with the cushion cursors drawn over it. While a new image for a
// new window loads, the old one is stretched to where its window now lies, so zooming
// and panning stay continuous; requests wait until the window has been still briefly.

import type { AllocContext } from "./context";
import { drawCursors } from "./cursors";
import { xOf } from "./viewport";

/** What to draw: the image's URL and the time window it covers. */
export interface StripRequest {
  url: string;
  t0: number;
  t1: number;
}

const SETTLE_MS = 120;

export class ImageStrip {
  private image: ImageBitmap | null = null;
  private shown: StripRequest | null = null;
  private wanted = "";
  private timer = 0;
  private window: { t0: number; t1: number } = { t0: 0, t1: 1 };

  constructor(
    private readonly ctx: AllocContext,
    readonly canvas: HTMLCanvasElement,
  ) {}

  /** True when the image on screen is the one last asked for. */
  get settled(): boolean {
    return this.shown !== null && this.shown.url === this.wanted;
  }

  /** Shows `request` (fetched after a short pause) and paints at once. */
  update(request: StripRequest): void {
    this.window = { t0: request.t0, t1: request.t1 };
    if (request.url !== this.wanted) {
      this.wanted = request.url;
      window.clearTimeout(this.timer);
      const delay = this.shown ? SETTLE_MS : 0;
      this.timer = window.setTimeout(() => this.fetch(request), delay);
    }
    this.paint();
  }

  private fetch(request: StripRequest): void {
    this.ctx.api
      .image(request.url)
      .then((img) => {
        if (request.url !== this.wanted) return;
        this.image?.close();
        this.image = img;
        this.shown = request;
        this.paint();
        this.canvas.dataset.loaded = "1";
      })
      .catch((err: unknown) => this.ctx.report(err instanceof Error ? err.message : String(err)));
  }

  /** Repaints image and cursors. */
  paint(): void {
    const g = this.canvas.getContext("2d")!;
    const { width, height } = this.canvas;
    g.fillStyle = "#fff";
    g.fillRect(0, 0, width, height);
    if (this.image && this.shown) {
      const x0 = xOf(this.window, width, this.shown.t0);
      const x1 = xOf(this.window, width, this.shown.t1);
      g.imageSmoothingEnabled = true;
      g.drawImage(this.image, 0, 0, this.image.width, this.image.height, x0, 0, x1 - x0, height);
    }
    const xs = this.ctx.state.cursors.map((t) => xOf(this.window, width, t));
    drawCursors(g, xs, height, this.ctx.cursorStyle());
  }
}
