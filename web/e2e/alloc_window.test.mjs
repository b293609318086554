// End-to-end test, in real headless Chromium, of the allocation map of a run larger
// than the memory it may use: served with MEMLENS_ALLOC_MEMORY at a quarter of what
// the whole run needs, the tab draws the last stretch of the run that fits instead of
// leaving the map out, and says so in one sentence above the map; the server's model
// holds fewer blocks than the run, and its times count from the run's time 0; served
// with `--time 20%..40%` as well, the tab draws that window instead; and a window brushed
// in the heap lens's timeline (`w=` in the URL) is read on request. A screenshot goes to
// e2e/artifacts/alloc-window.png. MEMLENS_BIN names the memlens binary.

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
