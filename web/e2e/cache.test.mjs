// End-to-end tests of the cache lens in headless Chromium: `memlens cache view` on the
// built-in kernels — pick matmul standard and blocked, play, pause, step; compare the
// glyphs drawn per ring with the engine's occupancy at that reference; watch a known
// miss flash red on its way into L1; turn time-lapse on and see pathlines; change L1's
// size and see the statistics change; then measure frame times with more than 10 000
// glyphs (printed, not asserted: the interval between animation frames, which is what
// the user sees, and the script's share of it). `memlens view` of a reference trace shows the lens
// on the trace's own references, and a real program recorded with `memlens cache
// record` (Valgrind) is coloured by the regions it named. At 1280, 1600 and 2560 px the
// page is no wider than the window; the rings carry their levels' names, every visual
// channel has a legend, the miss-rate timeline has axes, the header names the kernel;
// after Re-simulate the current-reference line speaks of the new position, the
// temperature's window and weights travel to the server, and a hierarchy the kernel
// fits in gets a hint with a smaller one. Screenshots go to e2e/artifacts/cache-*.png.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { ARTIFACTS, HERE, MEMLENS, launchBrowser, openPage, prepare, serveMemlens } from "./support.mjs";

let work;
let browser;
const servers = [];

/** Starts a memlens command that serves the viewer and returns its URL. */
async function serve(args) {
  const { server, url } = await serveMemlens(args);
  servers.push(server);
  return url;
}

before(async () => {
  prepare();
  work = mkdtempSync(join(tmpdir(), "memlens-cache-e2e-"));
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  for (const s of servers) s.kill("SIGINT");
  if (work) rmSync(work, { recursive: true, force: true });
});

async function open(url) {
  const page = await openPage(browser, url, { width: 1440, height: 1000 });
  await idle(page);
  return page;
}

/** Waits until the lens has loaded what it asked for. */
async function idle(page) {
  await page.waitForSelector('[data-testid="cache-lens"][data-busy="0"]', { timeout: 30_000 });
}

const snapshot = (page) => page.evaluate(() => window.__memlensCache.snapshot());

/** Waits until the current step's motion is over and one more frame was drawn. */
async function rest(page) {
  await page.waitForFunction(() => !window.__memlensCache.snapshot().animating);
  await page.waitForTimeout(120);
}

/** The engine's lines per level before reference `at`, for the page's session. */
function occupancy(page, at) {
  return page.evaluate(async (at) => {
    const p = window.__memlensCache.snapshot().params;
    const q = new URLSearchParams({ source: p.source, levels: p.levels, inclusion: p.inclusion, at: String(at) });
    if (p.n !== null) q.set("n", String(p.n));
    const doc = await (await fetch(`api/cache/occupancy?${q}`)).json();
    return doc.levels.map((l) => l.lines);
  }, at);
}

async function pick(page, source) {
  await page.selectOption('[data-testid="cache-source"]', source);
  await page.waitForSelector(`[data-testid="cache-lens"][data-source="${source}"][data-busy="0"]`);
}

async function jump(page, at) {
  await page.$eval('[data-testid="cache-scrub"]', (el, at) => {
    el.value = String(at);
    el.dispatchEvent(new Event("input"));
  }, at);
  await page.waitForSelector(`[data-testid="cache-lens"][data-position="${at}"][data-busy="0"]`);
  await page.waitForSelector(`[data-testid="cache-stats"][data-at="${at}"]`);
}

async function shot(page, name) {
  await page.screenshot({ path: join(ARTIFACTS, `cache-${name}.png`), fullPage: true });
}

async function glyphsMatchEngine(page, what) {
  await rest(page);
  const s = await snapshot(page);
  const engine = await occupancy(page, s.position);
  assert.deepEqual(s.perRing.slice(0, s.levels.length), engine, `${what}: glyphs per ring at reference ${s.position}`);
  assert.deepEqual(s.occupancy, engine, `${what}: the page's model at reference ${s.position}`);
  return s;
}

test("matmul standard and blocked: play, pause, step, and glyphs per ring match the engine", async () => {
  const page = await open(await serve(["cache", "view", "--no-open"]));
  assert.equal((await snapshot(page)).params.source, "matmul-standard");
  assert.deepEqual(await page.$$eval('[data-testid="lens-tabs"] button', (b) => b.map((x) => x.dataset.lens)), ["cache"]);
  for (const source of ["matmul-blocked", "matmul-standard"]) {
    await pick(page, source);
    await page.selectOption('[data-testid="cache-speed"]', "60");
    await page.click('[data-testid="cache-play"]');
    await page.waitForFunction(() => window.__memlensCache.snapshot().position > 40);
    await page.click('[data-testid="cache-play"]');
    const paused = await snapshot(page);
    assert.equal(paused.playing, false);
    await page.waitForTimeout(300);
    assert.equal((await snapshot(page)).position, paused.position, `${source}: paused means still`);
    await glyphsMatchEngine(page, `${source} after play`);
    await page.click('[data-testid="cache-step"]');
    await page.waitForFunction((p) => window.__memlensCache.snapshot().position === p + 1, paused.position);
    const label = await page.textContent('[data-testid="cache-label"]');
    assert.match(label, /C\[i\]\[j\]/, "the source line of the current reference is shown");
    await glyphsMatchEngine(page, `${source} after a step`);
    await jump(page, 3000);
    await glyphsMatchEngine(page, `${source} after a jump`);
    await shot(page, source);
  }
  // Blocking cuts L1 misses: the statistics at the same reference say so.
  const misses = {};
  for (const source of ["matmul-standard", "matmul-blocked"]) {
    await pick(page, source);
    await jump(page, 5000);
    misses[source] = Number(await page.$eval('[data-testid="cache-stats"]', (el) => el.dataset.l1Misses));
  }
  assert.ok(misses["matmul-blocked"] < misses["matmul-standard"], JSON.stringify(misses));
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("a known miss flashes its glyph red and moves it into L1", async () => {
  const page = await open(await serve(["cache", "view", "--no-open", "--kernel", "matmul", "--variant", "standard"]));
  // Reference 0 finds every level cold: it misses, and its line comes in from memory.
  await page.click('[data-testid="cache-step"]');
  const seen = await page.waitForFunction(() => {
    const hook = window.__memlensCache;
    const line = hook.lastMissLine();
    if (line === null) return null;
    const g = hook.glyph(0, line);
    if (!g || g.t <= 0.02 || g.t >= 0.5) return null;
    return { line, ...g, pixel: hook.pixel(g.x, g.y) };
  });
  const miss = await seen.jsonValue();
  assert.equal(miss.flashing, true);
  const [r, g, b] = miss.pixel;
  assert.ok(r > 150 && r > g + 60 && r > b + 60, `the glyph is red while it flies in: rgb(${r},${g},${b})`);
  assert.equal((await page.textContent('[data-testid="cache-current"]')).includes("from memory"), true);
  await shot(page, "flash");
  await rest(page);
  const landed = await page.evaluate((line) => window.__memlensCache.glyph(0, line), miss.line);
  assert.ok(landed, "the missed line is in L1 afterwards");
  assert.equal(landed.flashing, true, "until the next step it is the step's flashing glyph");
  const [r2, g2, b2] = await page.evaluate(({ x, y }) => window.__memlensCache.pixel(x, y), landed);
  assert.ok(!(r2 > 200 && g2 < 60 && b2 < 60), `the flash fades: rgb(${r2},${g2},${b2})`);
  const s = await glyphsMatchEngine(page, "after the miss");
  assert.equal(s.perRing[0], 1);
  await page.close();
});

test("time-lapse draws pathlines, and a bigger L1 changes the statistics", async () => {
  const page = await open(await serve(["cache", "view", "--no-open"]));
  await page.selectOption('[data-testid="cache-factor"]', "8");
  assert.equal((await snapshot(page)).tail, 16, "time-lapse turns a tail on");
  await page.selectOption('[data-testid="cache-speed"]', "10");
  await page.click('[data-testid="cache-play"]');
  await page.waitForFunction(() => window.__memlensCache.snapshot().trails > 20, null, { timeout: 10_000 });
  const s = await snapshot(page);
  assert.ok(s.position >= 16 && s.position % 8 === 0, `8 references per step: at ${s.position}`);
  await shot(page, "timelapse");
  await page.click('[data-testid="cache-play"]');
  await glyphsMatchEngine(page, "after time-lapse");
  await page.$eval('[data-testid="cache-tail"]', (el) => {
    el.value = "0";
    el.dispatchEvent(new Event("input"));
  });
  await page.waitForFunction(() => window.__memlensCache.snapshot().trails === 0);

  await jump(page, 4000);
  const before = Number(await page.$eval('[data-testid="cache-stats"]', (el) => el.dataset.l1Misses));
  await page.fill('[data-testid="cache-editor"] tr[data-level="0"] input[data-field="size"]', "4K");
  await page.click('[data-testid="cache-apply"]');
  await page.waitForSelector('[data-testid="cache-lens"][data-levels^="L1:4096:2:64"][data-busy="0"]');
  await jump(page, 4000);
  const afterwards = Number(await page.$eval('[data-testid="cache-stats"]', (el) => el.dataset.l1Misses));
  assert.ok(afterwards < before, `a 4 KiB L1 misses less than a 1 KiB one at reference 4000: ${afterwards} vs ${before}`);
  await glyphsMatchEngine(page, "with a 4 KiB L1");
  await shot(page, "l1-4k");
  // A hierarchy the lens cannot draw is refused with a sentence.
  await page.fill('[data-testid="cache-editor"] tr[data-level="0"] input[data-field="ways"]', "3");
  await page.click('[data-testid="cache-apply"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="cache-editor-error"]').textContent.includes("L1"));
  // The refused request is the only error the browser logged.
  assert.deepEqual(page.errors.filter((e) => !e.includes("status of 400")), []);
  await page.close();
});

test("no page wider than the window; rings named; a legend for every channel; axes on the timeline; the header names the kernel", async () => {
  const url = await serve(["cache", "view", "--no-open"]);
  for (const width of [1280, 1600, 2560]) {
    const page = await openPage(browser, url, { width, height: 1000 });
    await idle(page);
    await page.waitForFunction(() => window.__memlensCache.snapshot().ringLabels.length > 0);
    const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.ok(scroll <= inner, `at ${width} px the page is ${scroll} px wide`);
    await shot(page, `width-${width}`);
    await page.close();
  }
  const page = await open(url);
  await page.waitForFunction(() => window.__memlensCache.snapshot().ringLabels.length > 0);
  const s = await snapshot(page);
  // Every ring carries its level's name, memory last, and the names are drawn there.
  assert.deepEqual(s.ringLabels.map((l) => l.name), [...s.levels, "memory"]);
  for (const label of s.ringLabels) {
    // The darkest pixel of the label's box is the text's ink.
    const darkest = await page.evaluate(({ x, y }) => {
      let least = 765;
      for (let dx = -10; dx <= 10; dx++) {
        for (let dy = 2; dy <= 13; dy++) {
          const [r, g, b] = window.__memlensCache.pixel(x + dx, y + dy);
          least = Math.min(least, r + g + b);
        }
      }
      return least;
    }, label);
    assert.ok(darkest < 3 * 150, `the name ${label.name} is not drawn at (${label.x}, ${label.y}): darkest ${darkest}`);
  }
  // The legend of the channels: regions, ghosts, glow, pulses, red flash.
  const channels = await page.$$eval('[data-testid="cache-channels"] li', (ls) => ls.map((l) => l.dataset.channel));
  for (const c of ["glyph", "ghost", "glow", "pulse", "flash"]) assert.ok(channels.includes(c), `no legend for ${c}: ${channels}`);
  assert.ok((await page.$$('[data-testid="cache-legend"] .cl-region')).length > 0, "region legend");
  // Geometry in words, and the kernel named in the page's header.
  const title = await page.textContent(".cl-title");
  assert.match(title, /L1 \d+ sets? × \d+ ways?/);
  assert.doesNotMatch(title, /\d×\d/);
  const kernel = title.split(" · ")[0];
  await page.waitForFunction((k) => document.querySelector("header.top .program")?.textContent === k, kernel);
  await pick(page, "matmul-blocked");
  const blocked = (await page.textContent(".cl-title")).split(" · ")[0];
  await page.waitForFunction((k) => document.querySelector("header.top .program")?.textContent === k, blocked);
  // The timeline has a miss-rate axis on its left and a reference axis under it.
  const axes = await page.$eval('[data-testid="cache-timeline"]', (c) => {
    const g = c.getContext("2d");
    const dpr = window.devicePixelRatio || 1;
    const inked = (x, y, w, h) => {
      const d = g.getImageData(Math.round(x * dpr), Math.round(y * dpr), Math.round(w * dpr), Math.round(h * dpr)).data;
      for (let i = 3; i < d.length; i += 4) if (d[i] > 0) return true;
      return false;
    };
    return { left: inked(0, 20, 40, c.clientHeight - 50), bottom: inked(60, c.clientHeight - 28, c.clientWidth - 200, 14) };
  });
  assert.deepEqual(axes, { left: true, bottom: true }, "timeline axes");
  await shot(page, "channels");
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("after Re-simulate the current-reference line speaks of the new position; temperature settings; a trace that fits in L1 gets a hint", async () => {
  const page = await open(await serve(["cache", "view", "--no-open"]));
  await jump(page, 1200);
  for (let i = 0; i < 3; i++) await page.click('[data-testid="cache-step"]');
  await page.waitForFunction(() => window.__memlensCache.snapshot().position === 1203);
  await rest(page);
  assert.equal((await snapshot(page)).currentAt, 1203, "the line follows a step");
  await page.fill('[data-testid="cache-editor"] tr[data-level="0"] input[data-field="size"]', "2K");
  await page.fill('[data-testid="cache-editor"] tr[data-level="0"] input[data-field="miss"]', "4");
  await page.fill('[data-testid="cache-twindow"]', "64");
  await page.click('[data-testid="cache-apply"]');
  await page.waitForSelector('[data-testid="cache-lens"][data-levels^="L1:2048:2:64"][data-busy="0"]');
  let s = await snapshot(page);
  assert.equal(s.position, 0);
  assert.equal(s.currentAt, s.position, "after Re-simulate the current-reference line matches the new position");
  assert.match(await page.textContent('[data-testid="cache-current"]'), /Before the first reference/);
  assert.equal(s.params.twindow, "64");
  assert.match(s.params.tweights, /^1:4,1:1$/);
  assert.equal(await page.inputValue('[data-testid="cache-twindow"]'), "64", "the server's temperature window");
  assert.equal(await page.inputValue('[data-testid="cache-editor"] tr[data-level="0"] input[data-field="miss"]'), "4");
  await page.click('[data-testid="cache-step"]');
  await page.waitForFunction(() => window.__memlensCache.snapshot().position === 1);
  await rest(page);
  s = await snapshot(page);
  assert.equal(s.currentAt, 1);
  assert.match(await page.textContent('[data-testid="cache-current"]'), /#0 /);
  // A jump after the Re-simulate: the line says where the playhead is.
  await jump(page, 500);
  assert.equal((await snapshot(page)).currentAt, 500);
  // An L1 larger than the kernel's footprint: nothing is evicted, the lens says so and
  // offers a smaller hierarchy.
  assert.equal(await page.textContent('[data-testid="cache-fit-hint"]'), "");
  await page.fill('[data-testid="cache-editor"] tr[data-level="0"] input[data-field="size"]', "64K");
  await page.fill('[data-testid="cache-editor"] tr[data-level="1"] input[data-field="size"]', "256K");
  await page.click('[data-testid="cache-apply"]');
  await page.waitForSelector('[data-testid="cache-lens"][data-levels^="L1:65536"][data-busy="0"]');
  assert.match(await page.textContent('[data-testid="cache-fit-hint"]'), /fit in L1/);
  await shot(page, "fits-in-l1");
  await page.click('[data-testid="cache-fit-apply"]');
  await page.waitForFunction(() => !document.querySelector('[data-testid="cache-lens"]').dataset.levels.startsWith("L1:65536"));
  await idle(page);
  assert.equal(await page.textContent('[data-testid="cache-fit-hint"]'), "", "the smaller hierarchy evicts");
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("frame times with more than 10 000 glyphs", async () => {
  const page = await open(await serve(["cache", "view", "--no-open", "--kernel", "array-init", "--n", "200000",
    "--level", "L1:32K:8:64", "--level", "L2:256K:8:64", "--level", "L3:1M:16:64"]));
  await jump(page, 190_000);
  await page.selectOption('[data-testid="cache-factor"]', "16");
  await page.selectOption('[data-testid="cache-speed"]', "60");
  await page.evaluate(() => window.__memlensCache.resetFrames());
  await page.click('[data-testid="cache-play"]');
  await page.waitForTimeout(4000);
  await page.click('[data-testid="cache-play"]');
  const frames = await page.evaluate(() => window.__memlensCache.frames());
  const glyphs = Number(await page.$eval('[data-testid="cache-lens"]', (el) => el.dataset.glyphs));
  const s = await snapshot(page);
  const load = loadavg()[0].toFixed(2);
  console.log(
    `cache lens frames with ${glyphs} glyphs (${s.perRing.join(" + ")}): ${frames.count} frames, ` +
      `frame interval p50 ${frames.intervalP50.toFixed(1)} ms p95 ${frames.intervalP95.toFixed(1)} ms (${frames.fps.toFixed(0)} fps), ` +
      `frame callback p50 ${frames.workP50.toFixed(2)} ms p95 ${frames.workP95.toFixed(2)} ms, ` +
      `draw p50 ${frames.drawP50.toFixed(2)} ms p95 ${frames.drawP95.toFixed(2)} ms, ` +
      `${frames.structureDraws} redraws of the static rings; load average ${load}`,
  );
  assert.ok(glyphs >= 10_000, `${glyphs} glyphs`);
  assert.ok(frames.count > 20, "the page reports its frame times");
  assert.ok(s.position > 190_000, "it played");
  await shot(page, "10k-glyphs");
  await glyphsMatchEngine(page, "big hierarchy");
  await page.close();
});

test("memlens view shows a reference trace's own references in the cache lens", async () => {
  const trace = join(work, "blocked.mlens");
  execFileSync(MEMLENS, ["cache", "kernel", "matmul", "--variant", "blocked", "--n", "16", "--block", "4", "-o", trace], { stdio: "pipe" });
  const page = await open(await serve(["view", trace, "--no-open"]));
  const s = await snapshot(page);
  assert.equal(s.params.source, "trace");
  assert.equal(s.levels.join(","), "L1,L2");
  const picker = await page.$$eval('[data-testid="cache-source"] option', (o) => o.map((x) => x.value));
  assert.equal(picker[0], "trace");
  assert.ok(picker.includes("matmul-standard"));
  await page.click('[data-testid="cache-step"]');
  await page.waitForFunction(() => window.__memlensCache.snapshot().position === 1);
  assert.match(await page.textContent('[data-testid="cache-label"]'), /load C\[i\]\[j\]/);
  await glyphsMatchEngine(page, "trace");
  assert.deepEqual(page.errors, []);
  await page.close();
});

/** Whether `valgrind` is on the PATH (`memlens cache record` needs it). */
function haveValgrind() {
  return (process.env.PATH ?? "").split(delimiter).some((d) => d && existsSync(join(d, "valgrind")));
}

test("a program recorded with memlens cache record is coloured by the regions it named", { skip: !haveValgrind() && "valgrind is not installed" }, async () => {
  const n = 12;
  const repo = join(HERE, "../..");
  const program = join(work, "matmul_regions");
  execFileSync("cc", ["-O2", "-g", `-I${join(repo, "include")}`, "-o", program, join(repo, "crates/memlens/tests/programs/matmul_regions.c")]);
  const trace = join(work, "regions.mlens");
  execFileSync(MEMLENS, ["cache", "record", "-q", "--roi", "-o", trace, "--", program, String(n)], {
    stdio: "pipe",
    env: { ...process.env, MEMLENS_TOOL_CACHE: join(work, "tool-cache") },
  });
  const page = await open(await serve(["view", trace, "--no-open"]));
  const s = await snapshot(page);
  assert.equal(s.params.source, "trace");
  // The legend names the three matrices, each in its own colour.
  const legend = await page.$$eval('[data-testid="cache-legend"] .cl-region', (rows) =>
    rows.map((r) => ({ name: r.textContent.trim(), colour: getComputedStyle(r.querySelector(".cl-swatch")).backgroundColor })),
  );
  const named = Object.fromEntries(legend.map((r) => [r.name, r.colour]));
  for (const m of ["A", "B", "C"]) assert.ok(named[m], `region ${m} in the legend: ${JSON.stringify(legend)}`);
  assert.equal(new Set([named.A, named.B, named.C]).size, 3, "three distinct colours");
  // Stepping through the multiply: every reference is in A, B, C or on the stack.
  for (let i = 1; i <= 6; i++) {
    await page.click('[data-testid="cache-step"]');
    await page.waitForFunction((i) => window.__memlensCache.snapshot().position === i, i);
    const current = await page.textContent('[data-testid="cache-current"]');
    assert.match(current, / in (A|B|C|stack)\b/, current);
  }
  // At the end the per-region statistics count n^3 loads of A and of B and 2n^2 of C.
  await jump(page, s.references);
  const rows = await page.$$eval('[data-testid="cache-stats"] table:nth-of-type(2) tbody tr', (trs) =>
    trs.map((tr) => [tr.querySelector("th").textContent.trim(), Number(tr.querySelector("td").textContent.replace(/,/g, ""))]),
  );
  const refs = Object.fromEntries(rows);
  assert.equal(refs.A, n ** 3, JSON.stringify(rows));
  assert.equal(refs.B, n ** 3, JSON.stringify(rows));
  assert.equal(refs.C, 2 * n * n, JSON.stringify(rows));
  await shot(page, "recorded-regions");
  assert.deepEqual(page.errors, []);
  await page.close();
});
