// End-to-end test of `memlens view NEW --base OLD` in real headless Chromium: two runs of
// the leaky service doing different amounts of work; the heap lens colours each group
// by its change from the base run (red grew, blue shrank) with a legend, the tooltip
// gives the base's value and the change, the base values are those `memlens diff`
// reports at the end, and "Groups" brings the group colours back (kept in the URL).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MEMLENS, compileProgram, launchBrowser, prepare, serveMemlens } from "./support.mjs";
import { nodePoint, openHeap, settle, shot } from "./heap_page.mjs";

let work;
let browser;
let served;
let diff;

before(async () => {
  prepare();
  work = mkdtempSync(join(tmpdir(), "memlens-e2e-base-"));
  const program = join(work, "leaky");
  compileProgram("leaky.c", program);
  const base = join(work, "leaky-20.mlens");
  const next = join(work, "leaky-60.mlens");
  execFileSync(MEMLENS, ["record", "-q", "-o", base, "--", program, "20"], { stdio: "pipe" });
  execFileSync(MEMLENS, ["record", "-q", "-o", next, "--", program, "60"], { stdio: "pipe" });
  diff = JSON.parse(execFileSync(MEMLENS, ["diff", base, next, "--by", "site", "--json"]).toString());
  served = await serveMemlens(["view", next, "--base", base, "--by", "site", "--no-open", "--port", "0"]);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  served?.server.kill("SIGINT");
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The fill of the global view's node `key` as [r, g, b]. */
async function fillOf(page, key) {
  const fill = await page.$eval(`[data-testid="global-view"] g.node[data-key="${key}"] path`, (p) => getComputedStyle(p).fill);
  return fill.match(/\d+/g).slice(0, 3).map(Number);
}

test("view --base colours groups by their change from the base run", async () => {
  const page = await openHeap(browser, served.url);
  // The end of the run is shown: the base values are the base's never-freed bytes.
  const meta = await page.evaluate(async () => (await fetch("api/heap/meta")).json());
  assert.equal(meta.base.name, "leaky-20.mlens");
  const end = meta.snapshots[meta.snapshots.length - 1].time_ns;
  const answer = await page.evaluate(async (t) => (await fetch(`api/heap/tree?by=site&times=${t}`)).json(), end);
  const base = new Map(answer.base[0].nodes.map((n) => [n.full_key.join("\u001f"), n]));
  assert.equal(answer.base[0].base_time_ns, meta.base.run.end_ns, "the end is compared with the base's end");
  const nodes = answer.doc.trees[0].root.children;
  const leak = nodes.find((n) => n.key === "remember_request");
  const group = diff.groups.find((g) => g.key === "remember_request");
  assert.ok(group, JSON.stringify(diff.groups[0]));
  assert.equal(base.get("remember_request").bytes, group.base_end_bytes, "the base's value is memlens diff's");
  assert.equal(leak.bytes - base.get("remember_request").bytes, group.delta_bytes, "Δ at the end is memlens diff's");
  assert.ok(group.delta_bytes > 0);

  // The change colours are on by default, with their legend and in the URL.
  assert.equal(await page.getAttribute('[data-testid="color-change"]', "aria-pressed"), "true");
  assert.equal(await page.isVisible('[data-testid="change-legend"]'), true);
  assert.match(await page.textContent('[data-testid="change-legend"]'), /vs leaky-20\.mlens/);
  assert.match(page.url(), /color=change/);
  const [r, g, b] = await fillOf(page, "remember_request");
  assert.ok(r > b + 40 && r > g + 40, `the grown leak is red: ${[r, g, b]}`);
  await shot(page, "base-01-change");

  // The tooltip gives the base's value and the change.
  const { x, y } = await nodePoint(page, "global", "remember_request");
  await page.mouse.move(x, y);
  await page.waitForSelector('[data-testid="tooltip-base"]');
  const text = await page.textContent('[data-testid="tooltip-base"]');
  assert.match(text, /In leaky-20\.mlens at/);
  assert.match(text, /Change\+/);

  // "Groups" brings back a hue per group.
  await page.click('[data-testid="color-groups"]');
  await settle(page);
  assert.equal(await page.isVisible('[data-testid="change-legend"]'), false);
  assert.match(page.url(), /color=groups/);
  const hue = await fillOf(page, "remember_request");
  assert.notDeepEqual(hue, [r, g, b]);
  assert.deepEqual(page.errors, []);
  await page.close();
});
