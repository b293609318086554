// End-to-end tests of `memlens report` holding every lens, in real headless Chromium:
// the report of a recorded multithreaded allocation program (alloc_threads.c), opened
// from file:// with no server, draws the heap lens's sunburst and the allocation
// map's tiles, context view and bars, and says that brushing needs `memlens view`;
// the report of a `memlens cache kernel` trace draws the cache lens's rings and plays
// its embedded references. No page errors anywhere. Screenshots go to
// e2e/artifacts/report-*.png.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ARTIFACTS, MEMLENS, compileProgram, launchBrowser, openPage, prepare } from "./support.mjs";

let work;
let browser;
let allocReport;
let cacheReport;

before(async () => {
  prepare();
  work = mkdtempSync(join(tmpdir(), "memlens-report-e2e-"));
  const program = join(work, "alloc_threads");
  compileProgram("alloc_threads.c", program);
  const trace = join(work, "alloc_threads.mlens");
  execFileSync(MEMLENS, ["record", "-o", trace, "--", program], { stdio: "pipe" });
  allocReport = join(work, "alloc.html");
  execFileSync(MEMLENS, ["report", trace, "-o", allocReport], { stdio: "pipe" });
  const kernel = join(work, "blocked.mlens");
  execFileSync(MEMLENS, ["cache", "kernel", "matmul", "--variant", "blocked", "--n", "16", "--block", "4", "-o", kernel], { stdio: "pipe" });
  cacheReport = join(work, "cache.html");
  execFileSync(MEMLENS, ["report", kernel, "-o", cacheReport], { stdio: "pipe" });
  console.log(
    `# report sizes: allocation program ${(statSync(allocReport).size / 1024).toFixed(0)} KiB, ` +
      `cache kernel ${(statSync(cacheReport).size / 1024).toFixed(0)} KiB`,
  );
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function shot(page, name) {
  await page.screenshot({ path: join(ARTIFACTS, `report-${name}.png`), fullPage: true });
}

/** Pixels of canvas `selector` that are not white (nor transparent). */
function inked(page, selector) {
  return page.$eval(selector, (c) => {
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && (d[i] < 250 || d[i + 1] < 250 || d[i + 2] < 250)) n++;
    return n;
  });
}

function tabs(page) {
  return page.$$eval('[data-testid="lens-tabs"] button', (bs) => bs.map((b) => b.dataset.lens));
}

test("the report of an allocation program draws the heap sunburst and the allocation map from file://", async () => {
  const page = await openPage(browser, pathToFileURL(allocReport).href, { width: 1440, height: 1000 });
  assert.ok(await page.$('[data-testid="report-badge"]'));
  assert.deepEqual(await tabs(page), ["heap", "alloc"], "both lenses are in the report");
  const facts = await page.textContent('[data-testid="run-facts"]');
  assert.match(facts, /Peak/, "the heap lens's figures are in the header");

  // Heap evolution: the sunburst of the snapshot time shown.
  await page.waitForSelector('[data-testid="global-view"] g.node[data-depth="1"]');
  const nodes = await page.$$eval('[data-testid="global-view"] g.node', (n) => n.length);
  assert.ok(nodes > 3, `the sunburst has nodes: ${nodes}`);
  assert.equal(await page.$eval('[data-testid="local-view"]', (e) => e.dataset.kind), "sunburst");
  await page.waitForFunction(() => document.querySelector('[data-testid="heap-lens"]')?.dataset.busy !== "1");
  assert.equal(await page.$eval('[data-testid="notice"]', (n) => n.dataset.kind === "error" && !n.hidden), false);
  await shot(page, "heap");

  // Allocation map: tiles, context view, occupancy bar and the grid of bins.
  await page.click('[data-testid="lens-alloc"]');
  await page.waitForSelector('[data-testid="alloc-lens"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="alloc-lens"]')?.dataset.busy === "0", null, { timeout: 30_000 });
  await page.waitForTimeout(300);
  for (const view of ["alloc-main", "alloc-context", "alloc-bar"]) {
    const ink = await inked(page, `[data-testid="${view}"]`);
    assert.ok(ink > 200, `${view} is drawn: ${ink} pixels`);
  }
  const cells = await page.$$eval('[data-testid="alloc-grid"] canvas.alloc-cell-map', (cs) => cs.length);
  assert.ok(cells > 0, "the grid of bins has cells");
  const hint = await page.textContent('[data-testid="alloc-details-hint"]');
  assert.match(hint, /memlens view/, "the details panel says where brushing is");
  assert.equal(await page.$eval('[data-testid="alloc-pool"]', (i) => i.value), "16:512,32:512,64:256,128:128", "the embedded replay is offered");
  await shot(page, "alloc");

  // Zooming in past the embedded levels cuts the finer tiles from coarser ones.
  const box = await page.$eval('[data-testid="alloc-main"]', (c) => {
    const b = c.getBoundingClientRect();
    return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
  });
  await page.mouse.move(box.x, box.y);
  for (let i = 0; i < 4; i++) await page.mouse.wheel(0, -400);
  await page.waitForTimeout(500);
  await page.waitForFunction(() => document.querySelector('[data-testid="alloc-main"]')?.closest(".alloc-main-wrap")?.dataset.pending === "0");
  assert.ok((await inked(page, '[data-testid="alloc-main"]')) > 200, "the zoomed view is drawn");
  await shot(page, "alloc-zoomed");
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("the report of a cache kernel trace draws the rings and plays its references from file://", async () => {
  const page = await openPage(browser, pathToFileURL(cacheReport).href, { width: 1440, height: 1000 });
  assert.deepEqual(await tabs(page), ["cache"], "a reference trace has the cache lens only");
  await page.waitForSelector('[data-testid="cache-lens"][data-busy="0"]', { timeout: 30_000 });
  const snapshot = () => page.evaluate(() => window.__memlensCache.snapshot());
  const start = await snapshot();
  assert.equal(start.params.source, "trace");
  assert.equal(start.levels.join(","), "L1,L2");
  await page.waitForTimeout(300);
  const rings = await inked(page, '[data-testid="cache-canvas"]');
  assert.ok(rings > 1000, `the rings are drawn: ${rings} pixels`);
  assert.equal(await page.$eval('[data-testid="cache-source"]', (s) => s.disabled), true, "no other kernels in a report");
  assert.match(await page.textContent('[data-testid="cache-report-note"]'), /memlens view/);

  // Play the embedded references: glyphs move into the rings.
  await page.selectOption('[data-testid="cache-speed"]', "60");
  await page.click('[data-testid="cache-play"]');
  await page.waitForFunction(() => window.__memlensCache.snapshot().position > 40);
  await page.click('[data-testid="cache-play"]');
  await page.waitForFunction(() => !window.__memlensCache.snapshot().animating);
  const played = await snapshot();
  assert.ok(played.perRing.slice(0, 2).reduce((a, b) => a + b, 0) > 0, `glyphs in the rings: ${played.perRing}`);
  assert.equal(await page.textContent('[data-testid="cache-error"]'), "");
  await shot(page, "cache");
  assert.deepEqual(page.errors, []);
  await page.close();
});
