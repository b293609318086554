// End-to-end test, in real headless Chromium, of the allocation map of a run larger
// than the memory it may use: served with MEMLENS_ALLOC_MEMORY at a quarter of what
// the whole run needs, the tab draws the last stretch of the run that fits instead of
// leaving the map out, and says so in one sentence above the map; the server's model
// holds fewer blocks than the run, and its times count from the run's time 0; served
// with `--time 20%..40%` as well, the tab draws that window instead; and a window brushed
// in the heap lens's timeline (`w=` in the URL) is read on request. Above the map, the
// whole-run strip shows the whole run with the window the map holds framed, and a window
// dragged across it is read on request (the server keeps the whole run for every
// window). Screenshots go to e2e/artifacts/alloc-window.png and alloc-whole-run.png.
// MEMLENS_BIN names the memlens binary.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ARTIFACTS, MEMLENS, compileProgram, launchBrowser, openPage, prepare, serveMemlens } from "./support.mjs";

/** What the allocation map's budget counts per block (memlens-ingest's alloc_plan.rs). */
const BYTES_PER_BLOCK = 200;

let work;
let server;
let url;
let asked;
let browser;
let blocks;

/** The whole-run strip's picture and frame on the page, CSS pixels. */
function stripBoxes(page) {
  return page.evaluate(() => {
    const box = (id) => {
      const r = document.querySelector(`[data-testid="${id}"]`).getBoundingClientRect();
      return { left: r.left, right: r.right, top: r.top, width: r.width, height: r.height };
    };
    return { image: box("alloc-whole-run-image"), frame: box("alloc-whole-run-frame") };
  });
}

/** Checks that the frame spans the window `meta.run` holds, within `tol` pixels. */
function assertFrame({ image, frame }, meta, tol = 3) {
  const whole = meta.whole_run.run;
  const at = (t) => image.left + ((t - whole.start_ns) / (whole.end_ns - whole.start_ns)) * image.width;
  assert.ok(Math.abs(frame.left - at(meta.run.start_ns)) <= tol, `the frame starts at ${frame.left}, not at ${at(meta.run.start_ns)}`);
  assert.ok(Math.abs(frame.right - at(meta.run.end_ns)) <= tol, `the frame ends at ${frame.right}, not at ${at(meta.run.end_ns)}`);
}

/** Waits until the lens shows every view, and its strip its picture. */
async function settled(page) {
  await page.waitForFunction(() => document.querySelector('[data-testid="alloc-lens"]')?.dataset.busy === "0", null, { timeout: 30_000 });
}

before(async () => {
  prepare();
  work = mkdtempSync(join(tmpdir(), "memlens-alloc-window-e2e-"));
  const program = join(work, "alloc_threads");
  compileProgram("alloc_threads.c", program);
  const trace = join(work, "alloc_threads.mlens");
  execFileSync(MEMLENS, ["record", "-q", "-o", trace, "--", program], { stdio: "pipe" });
  const summary = JSON.parse(execFileSync(MEMLENS, ["summary", "--json", trace]));
  blocks = summary.allocations + summary.reallocations;
  const budget = String(Math.floor((blocks * BYTES_PER_BLOCK) / 4));
  const env = { MEMLENS_ALLOC_MEMORY: budget };
  ({ server, url } = await serveMemlens(["view", trace, "--no-open", "--port", "0"], env));
  asked = await serveMemlens(["view", trace, "--no-open", "--port", "0", "--time", "20%..40%"], env);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  server?.kill("SIGINT");
  asked?.server.kill("SIGINT");
  if (work) rmSync(work, { recursive: true, force: true });
});

test("a run larger than the map's memory draws its last stretch and says which", async () => {
  const page = await openPage(browser, url, { width: 1500, height: 1100 });
  await page.click('[data-testid="lens-alloc"]');
  await page.waitForSelector('[data-testid="alloc-lens"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="alloc-lens"]')?.dataset.busy === "0", null, { timeout: 30_000 });
  const notes = await page.textContent(".alloc-notes");
  assert.match(notes, new RegExp(`the allocation map of all ${blocks} blocks would need`));
  assert.match(notes, /MEMLENS_ALLOC_MEMORY/);
  const share = Number(notes.match(/its last ([\d.]+) %/)?.[1]);
  assert.ok(share > 5 && share < 40, `the window's share of the run: ${notes}`);

  const meta = await page.evaluate(async (base) => (await fetch(`${base}api/alloc/meta`)).json(), url);
  assert.ok(meta.blocks > 0 && meta.blocks < blocks / 2, `${meta.blocks} of ${blocks} blocks held`);
  assert.ok(meta.run.start_ns > 0, `the window starts after the run: ${JSON.stringify(meta.run)}`);
  // Its times read as in the whole run: counted from the run's time 0, not the window's start.
  assert.equal(meta.time_origin_ns, 0);

  const drawn = await page.$eval('[data-testid="alloc-main"]', (c) => {
    const data = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < data.length; i += 4) if (data[i] < 245 || data[i + 1] < 245 || data[i + 2] < 245) n++;
    return n / (c.width * c.height);
  });
  assert.ok(drawn > 0.02, `the map of the window is nearly empty: ${drawn}`);
  await page.screenshot({ path: join(ARTIFACTS, "alloc-window.png"), fullPage: true });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("the whole-run strip shows the whole run and frames the last stretch the map holds", async () => {
  const page = await openPage(browser, `${url}#lens=alloc`, { width: 1500, height: 1100 });
  await page.waitForSelector('[data-testid="alloc-lens"]');
  await settled(page);
  const meta = await page.evaluate(async (base) => (await fetch(`${base}api/alloc/meta`)).json(), url);
  const whole = meta.whole_run;
  assert.ok(whole, "a window's meta carries the whole run");
  assert.ok(whole.run.start_ns < meta.run.start_ns && whole.run.end_ns >= meta.run.end_ns, `${JSON.stringify(whole.run)} holds ${JSON.stringify(meta.run)}`);
  assert.ok(whole.rows > 0 && whole.row_bytes > 0 && whole.extents.length > 0, JSON.stringify({ ...whole, extents: whole.extents.length }));
  assert.equal(await page.isVisible('[data-testid="alloc-whole-run"]'), true);

  // The picture, as the server draws it, and as the strip shows it: mostly blocks.
  const natural = await page.evaluate(async (base) => {
    // The page's policy loads images from blobs only.
    const png = await (await fetch(`${base}api/alloc/whole_run?w=300&h=60`)).blob();
    const img = new Image();
    img.src = URL.createObjectURL(png);
    await img.decode();
    return [img.naturalWidth, img.naturalHeight];
  }, url);
  assert.deepEqual(natural, [300, 60]);
  const picture = await page.$eval('[data-testid="alloc-whole-run-image"]', (c) => {
    const data = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let opaque = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i] > 0) opaque++;
    const r = c.getBoundingClientRect();
    return { loaded: c.dataset.loaded, width: c.width, height: c.height, css: [r.width, r.height], opaque: opaque / (c.width * c.height) };
  });
  assert.equal(picture.loaded, "1");
  assert.ok(picture.css[1] >= 90 && picture.css[1] <= 120, `the strip is ${picture.css[1]} px high`);
  assert.deepEqual([picture.width, picture.height], picture.css.map(Math.round), "drawn at its size (device pixel ratio 1)");
  assert.ok(picture.opaque > 0.2, `the picture is mostly transparent: ${picture.opaque}`);

  // The frame: the last stretch, up to the strip's right edge.
  const boxes = await stripBoxes(page);
  assertFrame(boxes, meta);
  assert.ok(boxes.image.right - boxes.frame.right <= 3, `the frame ends ${boxes.image.right - boxes.frame.right} px before the strip`);
  const main = await page.locator('[data-testid="alloc-main"]').boundingBox();
  assert.ok(Math.abs(main.x - boxes.image.left) <= 1 && Math.abs(main.width - boxes.image.width) <= 1, "the strip spans the main view");
  assert.ok(boxes.image.top + boxes.image.height < main.y, "the strip lies above the main view");

  // The time and address row under the mouse.
  await page.mouse.move(boxes.image.left + boxes.image.width / 2, boxes.image.top + boxes.image.height / 2);
  const readout = await page.textContent('[data-testid="alloc-whole-run-readout"]');
  assert.match(readout, /^[\d.]+ (s|ms|µs|ns)( · 0x[0-9a-f]+ – 0x[0-9a-f]+.*)?$/);
  assert.match(await page.textContent('[data-testid="alloc-whole-run"]'), /Drag across the strip/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("`view --time` chooses the window of a run larger than the map's memory", async () => {
  const page = await openPage(browser, asked.url, { width: 1500, height: 1100 });
  await page.click('[data-testid="lens-alloc"]');
  await page.waitForSelector('[data-testid="alloc-lens"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="alloc-lens"]')?.dataset.busy === "0", null, { timeout: 30_000 });
  const notes = await page.textContent(".alloc-notes");
  assert.match(notes, /it shows the window asked for/);
  const meta = await page.evaluate(async (base) => (await fetch(`${base}api/alloc/meta`)).json(), asked.url);
  // 20 % to 40 % of the run: the window starts halfway to its end.
  const ratio = meta.run.start_ns / meta.run.end_ns;
  assert.ok(Math.abs(ratio - 0.5) < 0.02, `the window ${JSON.stringify(meta.run)} is not 20 %..40 % of the run`);
  assert.ok(meta.blocks > 0 && meta.blocks < blocks / 2, `${meta.blocks} of ${blocks} blocks held`);
  // This server may have read its window before the other one kept the whole run in the
  // trace's index: the strip is shown exactly when its meta carries the whole run.
  const strip = await page.$eval('[data-testid="alloc-whole-run"]', (el) => !el.hidden);
  if (meta.whole_run) {
    const whole = meta.whole_run.run;
    assert.ok(whole.start_ns <= meta.run.start_ns && whole.end_ns >= meta.run.end_ns, `${JSON.stringify(whole)} holds ${JSON.stringify(meta.run)}`);
    assert.equal(strip, true);
    assertFrame(await stripBoxes(page), meta);
  } else assert.equal(strip, false);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("the window brushed in the heap timeline is read into the map on request", async () => {
  const meta0 = await (await fetch(`${url}api/alloc/meta`)).json();
  // The last stretch ends with the run: 10 % to 30 % of it lies before the stretch.
  const end = meta0.run.end_ns;
  const [from, to] = [Math.round(end * 0.1), Math.round(end * 0.3)];
  assert.ok(to < meta0.run.start_ns, `the stretch ${JSON.stringify(meta0.run)} holds 10–30 %`);
  const page = await openPage(browser, `${url}#lens=alloc&w=${from}-${to}`, { width: 1500, height: 1100 });
  await page.waitForSelector('[data-testid="alloc-read-window"]', { timeout: 30_000 });
  await page.screenshot({ path: join(ARTIFACTS, "alloc-window-choice.png"), clip: { x: 0, y: 0, width: 1500, height: 300 } });
  await page.click('[data-testid="alloc-read-window"]');
  await page.waitForFunction(
    () => /the window asked for/.test(document.querySelector(".alloc-notes")?.textContent ?? "") && document.querySelector('[data-testid="alloc-lens"]')?.dataset.busy === "0",
    null,
    { timeout: 60_000 },
  );
  const meta = await page.evaluate(async (base) => (await fetch(`${base}api/alloc/meta`)).json(), url);
  assert.deepEqual([meta.run.start_ns, meta.window], [from, true]);
  assert.ok(Math.abs(meta.run.end_ns - to) <= end / 1000, `${JSON.stringify(meta.run)} ends at ${to}`);
  assert.deepEqual(page.errors, []);
  await page.close();
  // Bad windows are refused with a sentence, and nothing is read.
  const bad = await fetch(`${url}api/alloc/window?from_ns=9&to_ns=3`);
  assert.deepEqual([bad.status, (await bad.json()).error], [400, "the window 9..3 ns is empty: its end must be after its start"]);
});

test("a window dragged across the whole-run strip is read into the map on request", async () => {
  const page = await openPage(browser, `${url}#lens=alloc`, { width: 1500, height: 1100 });
  await page.waitForSelector('[data-testid="alloc-lens"]');
  await settled(page);
  const meta0 = await page.evaluate(async (base) => (await fetch(`${base}api/alloc/meta`)).json(), url);
  // The window the previous test read: the strip is shown for it too, framing it.
  assert.ok(meta0.whole_run, "every window carries the whole run");
  assertFrame(await stripBoxes(page), meta0);
  const whole = meta0.whole_run.run;
  const len = whole.end_ns - whole.start_ns;
  // A window as long as the one read before, after it.
  const [f0, f1] = [0.4, 0.6];
  assert.ok(whole.start_ns + f0 * len > meta0.run.end_ns, `${JSON.stringify(meta0.run)} lies before ${f0} of the run`);

  const { image } = await stripBoxes(page);
  const y = image.top + image.height / 2;
  // A click picks nothing.
  await page.mouse.click(image.left + f0 * image.width, y);
  assert.equal(await page.isVisible('[data-testid="alloc-whole-run-read"]'), false);
  assert.equal(await page.isVisible('[data-testid="alloc-whole-run-selection"]'), false);
  await page.mouse.move(image.left + f0 * image.width, y);
  await page.mouse.down();
  await page.mouse.move(image.left + f1 * image.width, y, { steps: 8 });
  await page.mouse.up();
  const selection = await page.locator('[data-testid="alloc-whole-run-selection"]').boundingBox();
  assert.ok(Math.abs(selection.x - (image.left + f0 * image.width)) <= 2 && Math.abs(selection.x + selection.width - (image.left + f1 * image.width)) <= 2, JSON.stringify(selection));
  const button = page.locator('[data-testid="alloc-whole-run-read"]');
  assert.match(await button.textContent(), /^Read [\d.]+ (s|ms|µs) – [\d.]+ (s|ms|µs) into the map$/);
  await page.screenshot({ path: join(ARTIFACTS, "alloc-whole-run.png"), clip: { x: 0, y: 0, width: 1500, height: 720 } });

  // Read: the lens is built again for the window dragged.
  await page.$eval('[data-testid="alloc-lens"]', (el) => (el.dataset.stale = "1"));
  await button.click();
  await page.waitForFunction(
    () => {
      const lens = document.querySelector('[data-testid="alloc-lens"]');
      return lens && !lens.dataset.stale && lens.dataset.busy === "0" && /the window asked for/.test(lens.querySelector(".alloc-notes")?.textContent ?? "");
    },
    null,
    { timeout: 60_000 },
  );
  const meta = await page.evaluate(async (base) => (await fetch(`${base}api/alloc/meta`)).json(), url);
  assert.equal(meta.window, true);
  const near = (t, f) => Math.abs(t - (whole.start_ns + f * len)) <= len / 100;
  assert.ok(near(meta.run.start_ns, f0) && near(meta.run.end_ns, f1), `${JSON.stringify(meta.run)} is not ${f0}..${f1} of ${JSON.stringify(whole)}`);
  // The server keeps the whole run for every window: the strip stays, framing the new one.
  assert.deepEqual(meta.whole_run?.run, whole);
  assert.equal(await page.isVisible('[data-testid="alloc-whole-run"]'), true);
  assertFrame(await stripBoxes(page), meta);
  assert.deepEqual(page.errors, []);
  await page.close();
});
