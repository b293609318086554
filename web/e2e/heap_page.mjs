// What the heap lens's end-to-end tests share: opening a page once the lens has drawn,
// waiting for data and transitions, screenshots, the lens's state as its element
// publishes it, and a point inside a chart node to hover or click.

import assert from "node:assert/strict";
import { join } from "node:path";
import { ARTIFACTS, openPage } from "./support.mjs";

/** The chart transition length (partition_chart.ts) plus a margin. */
export const SETTLE_MS = 900;

/** A fresh page of `browser` on `address` once the heap lens has drawn its first tree. */
export async function openHeap(browser, address, width = 1440) {
  const page = await openPage(browser, address, { width, height: 1000 });
  await page.waitForSelector('[data-testid="local-view"] g.node');
  await settle(page);
  return page;
}

/** Waits until no data is loading and the transitions are over. */
export async function settle(page) {
  await page.waitForFunction(() => document.querySelector('[data-testid="heap-lens"]')?.dataset.busy !== "1");
  await page.waitForTimeout(SETTLE_MS);
}

export async function shot(page, name) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

export function lensState(page) {
  return page.$eval('[data-testid="heap-lens"]', (el) => ({
    time: Number(el.dataset.time),
    drill: JSON.parse(el.dataset.drill),
    shown: JSON.parse(el.dataset.shown || "null"),
    chart: el.dataset.chart,
  }));
}

/** A point inside the node's shape, in page coordinates (an arc's box centre may be
 * outside the arc). */
export async function nodePoint(page, view, key) {
  await page.$eval(`[data-testid="${view}-view"]`, (v) => v.scrollIntoView({ block: "center" }));
  const point = await page.$eval(`[data-testid="${view}-view"] g.node[data-key="${key}"] path`, (p) => {
    const box = p.getBBox();
    const inside = [];
    for (let i = 1; i < 24; i++) {
      for (let j = 1; j < 24; j++) {
        const pt = new DOMPoint(box.x + (box.width * i) / 24, box.y + (box.height * j) / 24);
        if (p.isPointInFill(pt)) inside.push(pt);
      }
    }
    if (inside.length === 0) return null;
    const cx = inside.reduce((s, q) => s + q.x, 0) / inside.length;
    const cy = inside.reduce((s, q) => s + q.y, 0) / inside.length;
    inside.sort((a, b) => Math.hypot(a.x - cx, a.y - cy) - Math.hypot(b.x - cx, b.y - cy));
    const screen = inside[0].matrixTransform(p.getScreenCTM());
    return { x: screen.x, y: screen.y };
  });
  assert.ok(point, `node ${key} of the ${view} view has no area to click`);
  return point;
}
