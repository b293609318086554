// End-to-end tests of the heap lens as a daily tool, in real headless Chromium: at the
// peak of a real Python run the largest first-level group is named (not "Other"), and
// "Other" opens; the tooltip and the details panel show the call stack with file:line;
// search drills to a function; a copied URL restores the lens, grouping, time and
// drill-down; regrouping after a drill-down shows no stale "no live memory" notice; the
// memory-over-time-by-group chart and the timeline have 1-2-5 ticks with units;
// brushing a window on the timeline measures growth and order within it (and the URL
// keeps it); the page is never wider than the window. Screenshots go to e2e/artifacts/.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MEMLENS, compileProgram, launchBrowser, openPage, prepare, serveMemlens } from "./support.mjs";
import { lensState, nodePoint, openHeap, settle, shot } from "./heap_page.mjs";

/**
 * A Python run whose peak is owned by what is gone at the end: a large list of dicts
 * serialized to JSON, then dropped, then a few small objects kept.
 */
const PYTHON = [
  "import json",
  "big = [{'k': i, 'v': str(i) * 4} for i in range(150000)]",
  "text = json.dumps(big)",
  "print(len(text))",
  "del big, text",
  "kept = [str(i) for i in range(2000)]",
  "print(len(kept))",
].join("\n");

let work;
let browser;
let leaky;
let python;

before(async () => {
  prepare();
  work = mkdtempSync(join(tmpdir(), "memlens-e2e-daily-"));
  const program = join(work, "leaky");
  compileProgram("leaky.c", program);
  const leakyTrace = join(work, "leaky.mlens");
  execFileSync(MEMLENS, ["record", "-q", "-o", leakyTrace, "--", program], { stdio: "pipe" });
  const pythonTrace = join(work, "python.mlens");
  execFileSync(MEMLENS, ["record", "-q", "-o", pythonTrace, "--", "python3", "-P", "-c", PYTHON], { stdio: "pipe" });
  const peak = JSON.parse(execFileSync(MEMLENS, ["summary", pythonTrace, "--json"]).toString()).peak_time_ns;
  leaky = await serveMemlens(["view", leakyTrace, "--no-open", "--port", "0"]);
  python = await serveMemlens(["view", pythonTrace, "--no-open", "--port", "0"]);
  python.peak = peak;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  leaky?.server.kill("SIGINT");
  python?.server.kill("SIGINT");
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A fresh page on `address` once the heap lens has drawn its first tree. */
function open(address, width = 1440) {
  return openHeap(browser, address, width);
}

/** Groups by thread first and drills into the worker thread. */
async function drillIntoWorker(page) {
  await page.click('[data-testid="classifier-up-thread"]');
  await settle(page);
  const worker = await page.$eval('[data-testid="global-view"] g.node[data-depth="1"][data-label^="worker"]', (n) => n.dataset.key);
  const { x, y } = await nodePoint(page, "local", worker);
  await page.mouse.click(x, y);
  await settle(page);
}

test("at a Python run's peak the largest group is named, and Other opens", async () => {
  const page = await open(`${python.url}#lens=heap&by=site&t=${python.peak}`);
  assert.equal((await lensState(page)).time, python.peak, "the URL's time is shown");
  // The tree the page shows at the peak, as the server answers it.
  const tree = await page.evaluate(async (t) => {
    const response = await fetch(`api/heap/tree?by=site&times=${t}`);
    return (await response.json()).doc.trees[0].root;
  }, python.peak);
  const first = [...tree.children].sort((a, b) => b.bytes - a.bytes)[0];
  assert.notEqual(first.key, "Other", `the largest group at the peak: ${JSON.stringify(tree.children.map((c) => [c.key, c.bytes]))}`);
  const drawn = await page.$$eval('[data-testid="global-view"] g.node[data-depth="1"]', (ns) => ns.map((n) => n.dataset.label));
  assert.ok(drawn.includes(first.key), `${first.key} is drawn: ${drawn}`);
  const named = tree.children.filter((c) => !c.is_other).reduce((s, c) => s + c.bytes, 0);
  assert.ok(named >= 0.5 * tree.bytes, `named groups hold most of the peak: ${named} of ${tree.bytes}`);
  // Memory over time by group: a layer per first-level group, a legend, labelled axes.
  const layers = await page.$$eval('[data-testid="stacked-chart"] path.hl-layer', (ps) => ps.map((p) => p.dataset.key));
  assert.ok(layers.includes(first.key), `${first.key} has a layer: ${layers}`);
  assert.ok((await page.$$('[data-testid="stacked-legend"] li')).length === layers.length);
  const axisText = await page.$$eval('[data-testid="heap-lens"] .tl-axis text, [data-testid="heap-lens"] .tl-grid text', (ts) => ts.map((t) => t.textContent));
  assert.ok(axisText.includes("0 s") && axisText.includes("0 B"), `origins say their unit: ${axisText}`);
  assert.ok(!axisText.some((t) => /\d\.\d\d MiB/.test(t)), `1-2-5 ticks: ${axisText}`);
  await shot(page, "daily-01-python-peak");
  // Other, when there is one, opens into its members.
  const other = tree.children.find((c) => c.is_other);
  if (other && other.bytes > 0) {
    assert.ok((other.children ?? []).length > 0, "Other lists its members");
    const { x, y } = await nodePoint(page, "local", "Other");
    await page.mouse.click(x, y);
    await settle(page);
    assert.deepEqual((await lensState(page)).shown, ["Other"]);
    const members = await page.$$eval('[data-testid="local-view"] g.node[data-depth="1"]', (ns) => ns.length);
    assert.ok(members > 0, "Other's members are drawn");
    await shot(page, "daily-02-other-opened");
  }
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("the tooltip and the details panel show the call stack with file:line", async () => {
  const page = await open(`${leaky.url}#by=site`);
  const { x, y } = await nodePoint(page, "local", "remember_request");
  await page.mouse.move(x, y);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="tooltip-stack"] li.frame').length >= 3);
  const frames = await page.$$eval('[data-testid="tooltip-stack"] li.frame', (ls) => ls.map((l) => l.textContent));
  assert.match(frames[0], /^remember_request \(leaky\.c:\d+\)/, `${frames}`);
  assert.ok(frames.filter((f) => /\(leaky\.c:\d+\)/.test(f)).length >= 2, `${frames}`);
  assert.ok(!frames.some((f) => /^(malloc|calloc|realloc)\b/.test(f)), `the allocator is folded: ${frames}`);
  await shot(page, "daily-03-tooltip-stack");
  await page.mouse.click(x, y);
  await settle(page);
  await page.waitForSelector('[data-testid="details-stack"] li.frame');
  const details = await page.$$eval('[data-testid="details-stack"]:first-child li.frame', (ls) => ls.map((l) => l.textContent));
  assert.ok(details.length >= 3 && /leaky\.c:\d+/.test(details[0]), `${details}`);
  await shot(page, "daily-04-details");
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("search highlights matches and drills to the function", async () => {
  const page = await open(leaky.url);
  await page.fill('[data-testid="hl-search"]', "late_ind");
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="global-view"] g.node.match').length > 0);
  assert.match(await page.textContent('[data-testid="hl-search-count"]'), /^1 match/);
  await page.press('[data-testid="hl-search"]', "Enter");
  await settle(page);
  assert.deepEqual((await lensState(page)).shown, ["late_index"]);
  await shot(page, "daily-05-search");
  await page.close();
});

test("a copied URL restores the lens, grouping, time and drill-down", async () => {
  const page = await open(leaky.url);
  await drillIntoWorker(page);
  await page.click('[data-testid="prev-time"]');
  await settle(page);
  const state = await lensState(page);
  const copied = page.url();
  assert.match(copied, /#.*by=thread%2Csite/, copied);
  const again = await open(copied);
  const restored = await lensState(again);
  assert.equal(restored.time, state.time);
  assert.deepEqual(restored.drill, state.drill);
  assert.deepEqual(restored.shown, state.shown);
  const first = await again.$$eval('[data-testid="classifier-list"] li', (ls) => ls.map((l) => l.dataset.name));
  assert.deepEqual(first, ["thread", "site"]);
  // The lens too: the allocation map's tab, reopened.
  await again.click('[data-testid="lens-alloc"]');
  const allocUrl = again.url();
  assert.match(allocUrl, /lens=alloc/);
  const third = await openPage(browser, allocUrl, { width: 1440, height: 1000 });
  await third.waitForFunction(() => document.querySelector('[data-testid="lens-alloc"]')?.getAttribute("aria-selected") === "true");
  await third.close();
  await again.close();
  await page.close();
});

test("regrouping after a drill-down keeps no stale path", async () => {
  const page = await open(leaky.url);
  await drillIntoWorker(page);
  assert.equal((await lensState(page)).shown.length, 1);
  // site first again: the thread's name names no site.
  await page.click('[data-testid="classifier-up-site"]');
  await settle(page);
  const state = await lensState(page);
  assert.deepEqual(state.drill, []);
  const notice = await page.$eval('[data-testid="heap-lens"]', (el) => el.textContent);
  assert.ok(!notice.includes("has no live memory"), "no stale-path notice");
  await page.close();
});

test("closest-domain-site groups by the domain prefixes typed beside it", async () => {
  const page = await open(leaky.url);
  await page.click('[data-testid="classifier-remove-thread"]');
  await settle(page);
  await page.selectOption('[data-testid="classifier-add"]', "closest-domain-site");
  await page.fill('[data-testid="domain-input"]', "remember_, late_");
  await page.press('[data-testid="domain-input"]', "Enter");
  await page.$eval('[data-testid="domain-input"]', (i) => i.blur());
  await settle(page);
  assert.match(page.url(), /domain=remember_%2C(\+|%20)?late_/);
  const second = await page.$$eval('[data-testid="global-view"] g.node[data-depth="2"]', (ns) => ns.map((n) => n.dataset.label));
  assert.ok(second.some((l) => l.startsWith("remember_request")), `${second}`);
  assert.ok(second.some((l) => l === "<no domain frame>"), `refill_cache has no domain frame: ${second}`);
  await shot(page, "daily-07-domain");
  assert.deepEqual(page.errors, []);
  await page.close();
});

/** The suspects' site keys, best first. */
function suspectSites(page) {
  return page.$$eval('[data-testid="suspect"]', (ls) => ls.map((l) => JSON.parse(l.dataset.path)[0]));
}

test("brushing a window on the timeline ranks and orders by growth within it", async () => {
  const page = await open(`${leaky.url}#lens=heap&by=site`);
  await page.waitForSelector('[data-testid="suspect"]');
  assert.ok((await suspectSites(page)).includes("late_index"), "late_index grows over the whole run");
  // Drag over the first third of the run: late_index starts halfway, so it does not grow there.
  await page.$eval('[data-testid="timeline"]', (t) => t.scrollIntoView({ block: "center" }));
  const box = await (await page.$('[data-testid="timeline-hit"]')).boundingBox();
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + 2, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.2, y, { steps: 5 });
  await page.mouse.move(box.x + box.width / 3, y, { steps: 5 });
  await page.mouse.up();
  await page.waitForSelector('[data-testid="timeline-window"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="suspects-scope"]')?.textContent.startsWith("Within"));
  await page.waitForSelector('[data-testid="suspect"]');
  await settle(page);
  const window = new URLSearchParams(new URL(page.url()).hash.slice(1)).get("w");
  assert.match(window ?? "", /^\d+-\d+$/, page.url());
  const [from, to] = window.split("-").map(Number);
  const sites = await suspectSites(page);
  assert.ok(!sites.includes("late_index"), `late_index does not grow in the window: ${sites}`);
  assert.ok(sites.includes("remember_request"), `the leak grows in the window too: ${sites}`);
  // Every time the lens steps through lies in the window, and the shown time is one of them.
  const times = await page.$$eval('[data-testid="snapshot-point"]', (ps) => ps.map((p) => Number(p.dataset.time)));
  assert.ok(times.length >= 3 && times.every((t) => t >= from && t <= to), `${from}-${to}: ${times}`);
  const state = await lensState(page);
  assert.ok(times.includes(state.time), `${state.time} in ${times}`);
  // The order of the first level is the server's order by growth within the window.
  const expected = await page.evaluate(
    async ([f, t, at]) => {
      const r = await fetch(`api/heap/tree?by=site&times=${at}&from=${f}&to=${t}`);
      return (await r.json()).doc.trees[0].root.children.map((c) => c.key);
    },
    [from, to, state.time],
  );
  const shown = await page.$$eval('[data-testid="global-view"] g.node[data-depth="1"]', (ns) => ns.map((n) => n.dataset.label));
  assert.deepEqual(shown, expected.filter((k) => shown.includes(k)));
  await shot(page, "daily-08-window");
  // A copied URL restores the window; "Whole run" clears it.
  const again = await open(page.url());
  await again.waitForSelector('[data-testid="timeline-window"]');
  await again.waitForSelector('[data-testid="suspect"]');
  assert.ok(!(await suspectSites(again)).includes("late_index"));
  await again.click('[data-testid="hl-window-clear"]');
  await again.waitForFunction(() => document.querySelector('[data-testid="suspects-scope"]')?.textContent === "Over the whole run");
  await again.waitForSelector('[data-testid="suspect"]');
  assert.ok((await suspectSites(again)).includes("late_index"));
  assert.equal(await again.$('[data-testid="timeline-window"]'), null);
  assert.ok(!again.url().includes("w="), again.url());
  assert.deepEqual(page.errors, []);
  assert.deepEqual(again.errors, []);
  await again.close();
  await page.close();
});

test("the heap lens is never wider than the window", async () => {
  for (const width of [1280, 1600, 2560]) {
    const page = await open(leaky.url, width);
    const { scroll, inner } = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      inner: window.innerWidth,
    }));
    assert.ok(scroll <= inner, `${width} px: the page is ${scroll} px wide`);
    await shot(page, `daily-06-width-${width}`);
    await page.close();
  }
});
