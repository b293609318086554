// Canvas drawing of a partition (sunburst or icicle) for the small multiples and for
// trees too large for SVG: the same geometry as the SVG chart, one Path2D per node.

import type { NodeFill } from "./change_colors";
import { type ChartKind, type Frame, nodePath } from "./geometry";
import { onBranch, type PlacedNode } from "./layout";

export interface CanvasView {
  kind: ChartKind;
  placed: PlacedNode[];
  colors: NodeFill;
  branch?: string[];
}

/** Draws `view` into `canvas`, sized to `frame` at the screen's pixel density. */
export function drawPartition(
  canvas: HTMLCanvasElement,
  view: CanvasView,
  frame: Frame,
  hovered: string | null = null,
): void {
  const ratio = window.devicePixelRatio || 1;
  const w = Math.round(frame.width * ratio);
  const h = Math.round(frame.height * ratio);
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
    canvas.style.width = `${frame.width}px`;
    canvas.style.height = `${frame.height}px`;
  }
  const ctx = canvas.getContext("2d");
  if (!ctx) return;
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, frame.width, frame.height);
  if (view.kind === "sunburst") ctx.translate(frame.width / 2, frame.height / 2);
  ctx.lineWidth = 0.6;
  ctx.strokeStyle = "#ffffff";
  let hoveredPath: Path2D | null = null;
  for (const node of view.placed) {
    if (node.x1 - node.x0 <= 0) continue;
    const path = new Path2D(nodePath(view.kind, node, frame));
    const dim = view.branch !== undefined && !onBranch(node.node.full_key, view.branch);
    ctx.globalAlpha = dim ? 0.28 : 1;
    ctx.fillStyle = view.colors.fill(node.node);
    ctx.fill(path);
    ctx.stroke(path);
    if (node.key === hovered) hoveredPath = path;
  }
  ctx.globalAlpha = 1;
  if (hoveredPath) {
    ctx.lineWidth = 2;
    ctx.strokeStyle = "#1d2433";
    ctx.stroke(hoveredPath);
  }
}
