// Fitting labels into chart nodes: text width measured once per string on a canvas,
// and the longest prefix (with an ellipsis) that fits a given width.

const LABEL_FONT = "11px Inter, 'Segoe UI', system-ui, -apple-system, sans-serif";

let context: CanvasRenderingContext2D | null = null;
const widths = new Map<string, number>();

function measure(text: string): number {
  let w = widths.get(text);
  if (w === undefined) {
    context ??= document.createElement("canvas").getContext("2d");
    if (context) context.font = LABEL_FONT;
    w = context ? context.measureText(text).width : text.length * 6.2;
    if (widths.size > 20_000) widths.clear();
    widths.set(text, w);
  }
  return w;
}

const fitted = new Map<string, string>();

/** `text`, or its longest prefix plus `…` that is at most `width` pixels wide, or "". */
export function fitText(text: string, width: number): string {
  if (width < 14) return "";
  if (measure(text) <= width) return text;
  const key = `${Math.floor(width)}|${text}`;
  let fit = fitted.get(key);
  if (fit === undefined) {
    fit = shorten(text, width);
    if (fitted.size > 20_000) fitted.clear();
    fitted.set(key, fit);
  }
  return fit;
}

function shorten(text: string, width: number): string {
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (measure(text.slice(0, mid) + "…") <= width) lo = mid;
    else hi = mid - 1;
  }
  return lo < 2 ? "" : text.slice(0, lo) + "…";
}
