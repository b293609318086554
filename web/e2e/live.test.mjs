// End-to-end test of the live view in real headless Chromium: `memlens record --view`
// records a program that grows for about 5 s and serves the viewer while it runs. The
// page, never reloaded, sees the recorded run's end and the heap's peak grow at least
// three times while the program runs (the header's facts, the live badge, the heap
// lens's timeline following the end), then says the program has ended, its header's
// facts those of the final read. Screenshots go
// to e2e/artifacts/live-*.png.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileProgram, launchBrowser, openPage, prepare, serveMemlens } from "./support.mjs";
import { ARTIFACTS } from "./support.mjs";

let work;
let browser;
let served;

before(async () => {
  prepare();
  work = mkdtempSync(join(tmpdir(), "memlens-e2e-live-"));
  const program = join(work, "growing");
  compileProgram("growing.c", program);
  browser = await launchBrowser();
  served = await serveMemlens(["record", "--view", "--no-open", "--port", "0", "-o", join(work, "growing.mlens"), "--", program, "5"]);
});

after(async () => {
  await browser?.close();
  served?.server.kill("SIGINT");
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The header's facts by label, and the live badge's state. */
function header(page) {
  return page.evaluate(() => {
    const facts = Object.fromEntries(
      [...document.querySelectorAll('[data-testid="run-facts"] .fact')].map((f) => [f.querySelector("span").textContent, f.querySelector("b").textContent]),
    );
    const badge = document.querySelector('[data-testid="live-status"]');
    const lens = document.querySelector('[data-testid="heap-lens"]');
    return {
      facts,
      running: badge?.dataset.running,
      recorded: Number(badge?.dataset.recordedNs ?? 0),
      text: badge?.textContent ?? "",
      time: Number(lens?.dataset.time ?? 0),
    };
  });
}

test("record --view follows the growing heap without a reload, then says the program ended", async () => {
  const page = await openPage(browser, served.url, { width: 1440, height: 1000 });
  await page.waitForSelector('[data-testid="live-status"]');
  // A reload would drop this mark.
  await page.evaluate(() => (window.memlensLiveMark = 1));
  const seen = [];
  const deadline = Date.now() + 30_000;
  let state = await header(page);
  while (state.running !== "0" && Date.now() < deadline) {
    if (state.running === "1") seen.push(state);
    await page.waitForTimeout(250);
    state = await header(page);
  }
  assert.equal(state.running, "0", `the program did not end in time: ${state.text}`);
  assert.match(state.text, /program ended/);
  const increases = (values) => values.filter((v, i) => i > 0 && v > values[i - 1]).length;
  const recorded = seen.map((s) => s.recorded);
  const peaks = seen.map((s) => s.facts.Peak);
  const parse = (text) => {
    const [n, unit] = (text ?? "0 B").split(" ");
    return Number(n) * ({ B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 }[unit] ?? 1);
  };
  assert.ok(increases(recorded) >= 3, `the recorded run grew only ${increases(recorded)} times: ${recorded}`);
  assert.ok(increases(peaks.map(parse)) >= 3, `the heap grew only ${increases(peaks.map(parse))} times while running: ${peaks}`);
  assert.ok(increases(seen.map((s) => s.time)) >= 3, "the heap lens follows the end of the run");
  await page.screenshot({ path: join(ARTIFACTS, "live-01-ended.png"), fullPage: true });
  // The allocation map has its tab from the start, and shows the whole run at the end.
  await page.click('[data-testid="lens-alloc"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="alloc-lens"]')?.dataset.busy === "0", null, { timeout: 30_000 });
  const view = await page.$eval('[data-testid="alloc-lens"]', (el) => JSON.parse(el.dataset.view));
  assert.ok(view[1] >= state.recorded * 0.9, `the map ends near the run's end: ${view} vs ${state.recorded}`);
  // The final view is the whole run: its end is the recorded end.
  const meta = await page.evaluate(async () => (await fetch("api/heap/meta")).json());
  assert.equal(meta.run.end_ns, state.recorded);
  // The header's facts are the final read's, not the read before it.
  const final = await header(page);
  assert.equal(final.facts.Allocations, meta.stats.allocations.toLocaleString("en-US"), "the header's allocations");
  assert.equal(await page.evaluate(() => window.memlensLiveMark), 1, "the page was never reloaded");
  assert.deepEqual(page.errors, []);
  await page.close();
});
