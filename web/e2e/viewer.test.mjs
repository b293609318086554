// End-to-end tests of the viewer in real headless Chromium (Debian's `chromium`, driven
// by playwright-core): record a leaky C program with the release `memlens`, serve it
// with `memlens view`, click through the heap lens, then open `memlens report`'s file
// from file://, and measure frame times of a 500-node transition. Screenshots go to
// e2e/artifacts/. Set MEMLENS_BIN to the memlens binary (default ../target/release).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { MEMLENS, compileProgram, launchBrowser, prepare, serveMemlens } from "./support.mjs";
import { syntheticNodeCount, syntheticReport, withData } from "./synthetic.mjs";
import { lensState, nodePoint, openHeap, settle, shot } from "./heap_page.mjs";

/** A fan-out too wide for SVG: 1 + 20 + 400 + 6000 nodes. */
const FANOUT_CANVAS = [20, 20, 15];

let work;
let trace;
let server;
let url;
let browser;
let reportPath;

before(async () => {
  prepare();
  work = mkdtempSync(join(tmpdir(), "memlens-e2e-"));
  const program = join(work, "leaky");
  compileProgram("leaky.c", program);
  trace = join(work, "leaky.mlens");
  execFileSync(MEMLENS, ["record", "-o", trace, "--", program], { stdio: "pipe" });
  ({ server, url } = await serveMemlens(["view", trace, "--no-open", "--port", "0"]));
  reportPath = join(work, "report.html");
  execFileSync(MEMLENS, ["report", trace, "-o", reportPath], { stdio: "pipe" });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  server?.kill("SIGINT");
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A fresh page on `address`, once the heap lens has drawn its first tree. */
/** A fresh page on `address`, once the heap lens has drawn its first tree. */
function open(address) {
  return openHeap(browser, address);
}

/** Labels of the chart's nodes at `depth` below its root. */
function labels(page, view, depth) {
  return page.$$eval(`[data-testid="${view}-view"] g.node[data-depth="${depth}"]`, (nodes) =>
    nodes.map((n) => n.dataset.label),
  );
}

function localRoot(page) {
  return page.$eval('[data-testid="local-view"] g.node.root', (n) => n.dataset.label);
}

function pathOf(page, view, key) {
  return page.$eval(`[data-testid="${view}-view"] g.node[data-key="${key}"] path`, (p) => p.getAttribute("d"));
}

async function clickNode(page, view, key) {
  const { x, y } = await nodePoint(page, view, key);
  await page.mouse.click(x, y);
  await settle(page);
}

async function hoverNode(page, view, key) {
  const { x, y } = await nodePoint(page, view, key);
  await page.mouse.move(x, y);
}

async function seek(page, index) {
  await page.$eval(
    '[data-testid="time-slider"]',
    (el, i) => {
      el.value = String(i);
      el.dispatchEvent(new Event("input", { bubbles: true }));
    },
    index,
  );
  await settle(page);
}

function snapshotTimes(page) {
  return page.$$eval('[data-testid="snapshot-point"]', (ps) => ps.map((p) => Number(p.dataset.time)));
}

test("the sunburst draws the expected top-level keys", async () => {
  const page = await open(url);
  const top = await labels(page, "global", 1);
  for (const site of ["remember_request", "refill_cache", "late_index"]) {
    assert.ok(top.includes(site), `${site} missing from the global view's first level: ${top}`);
  }
  assert.deepEqual((await labels(page, "local", 1)).sort(), [...top].sort());
  assert.equal(await page.$eval('[data-testid="local-view"]', (e) => e.dataset.kind), "sunburst");
  assert.equal(await localRoot(page), "Overall");
  const tabs = await page.$$eval('[data-testid="lens-tabs"] button', (bs) => bs.map((b) => b.textContent));
  // An allocation trace without references: no cache tab.
  assert.deepEqual(tabs, ["Heap evolution", "Allocation map"], "only lenses with an implementation and data are shown");
  await shot(page, "01-overview");
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("drill-down changes the local view and highlights the global one", async () => {
  const page = await open(url);
  await clickNode(page, "local", "remember_request");
  assert.equal(await localRoot(page), "remember_request");
  assert.deepEqual((await lensState(page)).shown, ["remember_request"]);
  const crumbs = await page.$$eval('[data-testid="breadcrumbs"] .crumb', (cs) => cs.map((c) => c.textContent));
  assert.deepEqual(crumbs, ["Whole heap", "remember_request"]);
  const classes = (key) =>
    page.$eval(`[data-testid="global-view"] g.node[data-key="${key}"]`, (n) => [...n.classList]);
  assert.ok((await classes("remember_request")).includes("drill"));
  assert.ok(!(await classes("remember_request")).includes("dimmed"));
  assert.ok((await classes("refill_cache")).includes("dimmed"), "other branches are semi-transparent");
  // Hovering a node in one view highlights it in the other.
  const child = await page.$eval('[data-testid="local-view"] g.node[data-depth="1"]', (n) => n.dataset.key);
  await hoverNode(page, "local", child);
  assert.ok((await page.$eval(`[data-testid="global-view"] g.node[data-key="${child}"]`, (n) => [...n.classList])).includes("hovered"));
  assert.equal(await page.$eval('[data-testid="tooltip"]', (t) => t.classList.contains("visible")), true);
  await shot(page, "02-drill-down");
  // The centre steps back up.
  await page.mouse.move(5, 5);
  await clickNode(page, "local", "remember_request");
  assert.equal(await localRoot(page), "Overall");
  await page.close();
});

test("time travel: slider, next and previous change the tree; drill-down is kept", async () => {
  const page = await open(url);
  const times = await snapshotTimes(page);
  assert.ok(times.length >= 10, `expected the start, points and peak as snapshot times: ${times}`);
  assert.equal((await lensState(page)).time, times[times.length - 1], "starts at the last time");
  await clickNode(page, "local", "remember_request");
  const atEnd = await pathOf(page, "global", "remember_request");
  // A click on the curve travels to any time: the server adds it to its series.
  await page.$eval('[data-testid="timeline"]', (t) => t.scrollIntoView({ block: "center" }));
  const box = await page.$eval('[data-testid="timeline"] .tl-hit', (r) => {
    const b = r.getBoundingClientRect();
    return { x: b.x, y: b.y, width: b.width, height: b.height };
  });
  // Near the top of the plot, above the curve and its points (a point click pins).
  await page.mouse.click(box.x + box.width * 0.55, box.y + 3);
  await settle(page);
  const picked = (await lensState(page)).time;
  assert.ok(!times.includes(picked), `a new time: ${picked}`);
  assert.ok(await page.$(`[data-testid="snapshot-point"][data-time="${picked}"][data-kind="picked"]`));
  assert.equal(await localRoot(page), "remember_request");
  assert.notEqual(await pathOf(page, "global", "remember_request"), atEnd);
  // From here on the picked time is one of the times.
  const all = await snapshotTimes(page);
  assert.equal(all.length, times.length + 1);
  await seek(page, all.length - 1);
  assert.equal(await pathOf(page, "global", "remember_request"), atEnd);
  // Step back to the middle snapshot, where the leak is about half as big.
  const middle = Math.floor(all.length / 2);
  let steps = 0;
  while ((await lensState(page)).time > all[middle]) {
    await page.click('[data-testid="prev-time"]');
    await settle(page);
    steps++;
    assert.equal((await lensState(page)).time, all[all.length - 1 - steps]);
  }
  await page.mouse.move(5, 5);
  assert.notEqual(await pathOf(page, "global", "remember_request"), atEnd, "the tree changed");
  assert.equal(await localRoot(page), "remember_request", "the drill-down survives steps");
  for (let i = 0; i < steps; i++) {
    await page.click('[data-testid="next-time"]');
    await settle(page);
  }
  assert.equal(await pathOf(page, "global", "remember_request"), atEnd, "back where we were");
  await page.keyboard.press("ArrowLeft");
  await settle(page);
  assert.equal((await lensState(page)).time, all[all.length - 2], "the arrow keys travel too");
  await seek(page, middle);
  assert.equal((await lensState(page)).time, all[middle]);
  await shot(page, "03-time-travel");
  // At the start nothing is live: the drill-down falls back to the whole heap, visibly.
  await seek(page, 0);
  assert.equal(await localRoot(page), "Overall");
  assert.deepEqual((await lensState(page)).drill, ["remember_request"], "the wish is kept");
  const notice = await page.$eval('[data-testid="notice"]', (n) => ({ hidden: n.hidden, text: n.textContent }));
  assert.equal(notice.hidden, false);
  assert.match(notice.text, /remember_request.*closest ancestor/);
  await shot(page, "04-fallback-notice");
  await seek(page, all.length - 1);
  assert.equal(await localRoot(page), "remember_request", "the node comes back with its memory");
  assert.equal(await page.$eval('[data-testid="notice"]', (n) => n.hidden), true);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("clicking timeline points adds and removes small multiples", async () => {
  const page = await open(url);
  const multiples = () => page.$$eval('[data-testid="multiple"]', (ms) => ms.map((m) => Number(m.dataset.time)));
  const times = await snapshotTimes(page);
  const current = (await lensState(page)).time;
  assert.deepEqual(await multiples(), [current], "the current time is always shown");
  const a = times[Math.floor(times.length / 3)];
  const b = times[Math.floor((2 * times.length) / 3)];
  await page.click(`[data-testid="snapshot-point"][data-time="${a}"]`);
  await settle(page);
  assert.deepEqual(await multiples(), [a, current]);
  await page.click(`[data-testid="snapshot-point"][data-time="${b}"]`);
  await settle(page);
  assert.deepEqual(await multiples(), [a, b, current]);
  await shot(page, "05-small-multiples");
  // Scaled: an earlier, smaller heap draws a smaller tree than the current one.
  const inked = await page.$$eval('[data-testid="multiple"] canvas', (cs) =>
    cs.map((c) => {
      const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
      return n;
    }),
  );
  assert.ok(inked[0] < inked[2], `scaled trees grow with the heap: ${inked}`);
  await page.click('[data-testid="scaled-unscaled"]');
  await settle(page);
  await page.click(`[data-testid="snapshot-point"][data-time="${a}"]`);
  await settle(page);
  assert.deepEqual(await multiples(), [b, current]);
  await page.click(`[data-testid="multiple"][data-time="${b}"] .multiple-remove`);
  await settle(page);
  assert.deepEqual(await multiples(), [current]);
  await page.close();
});

test("switching sunburst and icicle keeps the drill-down and the time", async () => {
  const page = await open(url);
  await clickNode(page, "local", "remember_request");
  await page.click('[data-testid="prev-time"]');
  await settle(page);
  const before = await lensState(page);
  await page.click('[data-testid="chart-icicle"]');
  await settle(page);
  const after = await lensState(page);
  assert.equal(after.chart, "icicle");
  assert.equal(await page.$eval('[data-testid="local-view"]', (e) => e.dataset.kind), "icicle");
  assert.equal(after.time, before.time);
  assert.deepEqual(after.drill, before.drill);
  assert.equal(await localRoot(page), "remember_request");
  assert.match(await pathOf(page, "global", "refill_cache"), /^M[\d.]+,[\d.]+h/, "icicle nodes are rectangles");
  await shot(page, "06-icicle");
  await page.click('[data-testid="chart-sunburst"]');
  await settle(page);
  assert.equal(await localRoot(page), "remember_request");
  assert.equal((await lensState(page)).time, before.time);
  await page.close();
});

test("options regroup, resize and reorder the trees; suspects drill down", async () => {
  const page = await open(url);
  await page.click('[data-testid="metric-objects"]');
  await settle(page);
  const rootText = await page.$eval('[data-testid="local-view"] g.node.root text', (t) => t.textContent);
  assert.match(rootText, /objects/);
  // thread first, then site.
  await page.click('[data-testid="classifier-up-thread"]');
  await settle(page);
  const threads = await labels(page, "global", 1);
  assert.ok(threads.some((l) => l.startsWith("worker")), `threads on the first level: ${threads}`);
  await page.click('[data-testid="classifier-remove-site"]');
  await settle(page);
  assert.equal(await page.$$eval('[data-testid="global-view"] g.node[data-depth="2"]', (n) => n.length), 0);
  await page.selectOption('[data-testid="classifier-add"]', "size-class");
  await settle(page);
  assert.ok((await page.$$eval('[data-testid="global-view"] g.node[data-depth="2"]', (n) => n.length)) > 0);
  await page.click('[data-testid="sort-end"]');
  await settle(page);
  await page.waitForSelector('[data-testid="suspect"]');
  const suspect = await page.$eval('[data-testid="suspect"]', (s) => JSON.parse(s.dataset.path));
  await page.click('[data-testid="suspect"]');
  await settle(page);
  assert.deepEqual((await lensState(page)).drill, suspect);
  await shot(page, "07-options");
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("the report renders the same from file://, with no server", async () => {
  const live = await open(url);
  const liveTop = await labels(live, "global", 1);
  await live.close();
  const page = await open(pathToFileURL(reportPath).href);
  assert.ok(await page.$('[data-testid="report-badge"]'));
  assert.deepEqual(await labels(page, "global", 1), liveTop);
  await clickNode(page, "local", "remember_request");
  assert.equal(await localRoot(page), "remember_request");
  const times = await snapshotTimes(page);
  await page.click('[data-testid="prev-time"]');
  await settle(page);
  assert.equal((await lensState(page)).time, times[times.length - 2]);
  await page.click(`[data-testid="snapshot-point"][data-time="${times[2]}"]`);
  await settle(page);
  assert.equal(await page.$$eval('[data-testid="multiple"]', (m) => m.length), 2);
  await page.click('[data-testid="metric-objects"]');
  await settle(page);
  await page.click('[data-testid="chart-icicle"]');
  await settle(page);
  assert.equal(await localRoot(page), "remember_request");
  assert.equal(await page.$('[data-testid="classifier-add"]'), null, "no regrouping in a report");
  await shot(page, "08-report");
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("a 500-node tree transitions at 60 fps", async () => {
  const base = JSON.parse(
    readFileSync(reportPath, "utf8")
      .match(/<script id="memlens-data" type="application\/json">([\s\S]*?)<\/script>/)[1],
  );
  const synthetic = join(work, "synthetic.html");
  writeFileSync(synthetic, withData(readFileSync(reportPath, "utf8"), syntheticReport(base)));
  const page = await open(pathToFileURL(synthetic).href);
  const nodes = await page.$$eval('[data-testid="global-view"] g.node', (n) => n.length);
  assert.equal(nodes, syntheticNodeCount());
  const frames = [];
  const renders = [];
  for (let step = 0; step < 5; step++) {
    const { render, intervals } = await page.evaluate(async (tween) => {
      const out = [];
      let last = 0;
      let running = true;
      const tick = (t) => {
        if (last) out.push(t - last);
        last = t;
        if (running) requestAnimationFrame(tick);
      };
      await new Promise((r) => requestAnimationFrame(r));
      const t0 = performance.now();
      document.querySelector('[data-testid="prev-time"]').click();
      const render = performance.now() - t0;
      requestAnimationFrame(tick);
      await new Promise((r) => setTimeout(r, tween));
      running = false;
      return { render, intervals: out };
    }, 650);
    renders.push(render);
    frames.push(...intervals);
  }
  frames.sort((a, b) => a - b);
  const pct = (p) => frames[Math.min(frames.length - 1, Math.floor((p / 100) * frames.length))];
  const mean = frames.reduce((s, f) => s + f, 0) / frames.length;
  const smooth = frames.filter((f) => f <= 1000 / 60 + 1.5).length / frames.length;
  console.log(
    `# ${nodes}-node transition (global view ${nodes} SVG nodes + local view): ${frames.length} frames in 5 steps; ` +
      `frame interval mean ${mean.toFixed(1)} ms (${(1000 / mean).toFixed(0)} fps), median ${pct(50).toFixed(1)} ms, ` +
      `p90 ${pct(90).toFixed(1)} ms, p99 ${pct(99).toFixed(1)} ms; ${(100 * smooth).toFixed(0)} % of frames within 60 fps; ` +
      `step render before the tween ${renders.map((r) => r.toFixed(1)).join(", ")} ms`,
  );
  await shot(page, "09-synthetic-500");
  assert.ok(pct(50) <= 1000 / 60 + 2, `median frame ${pct(50).toFixed(1)} ms is slower than 60 fps`);
  await page.close();
});

test("trees too large for SVG are drawn on a canvas that still hovers and drills", async () => {
  const html = readFileSync(reportPath, "utf8");
  const base = JSON.parse(html.match(/<script id="memlens-data" type="application\/json">([\s\S]*?)<\/script>/)[1]);
  const large = join(work, "large.html");
  writeFileSync(large, withData(html, syntheticReport(base, 3, FANOUT_CANVAS)));
  const page = await open(pathToFileURL(large).href);
  const global = await page.$eval('[data-testid="global-view"]', (e) => ({
    canvas: e.classList.contains("on-canvas"),
    nodes: Number(e.dataset.nodes),
    svgNodes: e.querySelectorAll("g.node").length,
  }));
  assert.deepEqual(global, { canvas: true, nodes: syntheticNodeCount(FANOUT_CANVAS), svgNodes: 0 });
  const local = await page.$eval('[data-testid="local-view"]', (e) => e.classList.contains("on-canvas"));
  assert.equal(local, false, "the local view (root and two levels) stays SVG");
  // Hover a first-level segment on the canvas: the tooltip names it and the local view
  // highlights the same node.
  await page.$eval('[data-testid="global-view"]', (v) => v.scrollIntoView({ block: "center" }));
  const canvas = await page.$eval('[data-testid="global-view"] canvas', (c) => {
    const b = c.getBoundingClientRect();
    return { x: b.x + b.width / 2, y: b.y + b.height / 2, r: Math.min(b.width, b.height) / 2 };
  });
  // Straight up at the middle of the first ring: the first child (levels: 4 rings).
  const ring = (canvas.r - 4) / 4;
  await page.mouse.move(canvas.x + 3, canvas.y - ring * 1.5);
  assert.equal(await page.$eval('[data-testid="tooltip"] .tt-title', (t) => t.textContent), "n00");
  assert.ok(await page.$('[data-testid="local-view"] g.node.hovered[data-key="n00"]'));
  await page.mouse.click(canvas.x + 3, canvas.y - ring * 1.5);
  await settle(page);
  assert.equal(await localRoot(page), "n00");
  await shot(page, "10-canvas-global-view");
  assert.deepEqual(page.errors, []);
  await page.close();
});
