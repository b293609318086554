// End-to-end test of what the page says about a whole recording, in real headless
// Chromium: a sampled recording (`memlens record --sample`) is named above every lens
// as holding estimates, and the heap lens still names the leak.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MEMLENS, compileProgram, launchBrowser, prepare, serveMemlens } from "./support.mjs";
import { openHeap, shot } from "./heap_page.mjs";

let work;
let browser;
let served;

before(async () => {
  prepare();
  work = mkdtempSync(join(tmpdir(), "memlens-e2e-notes-"));
  const program = join(work, "leaky");
  compileProgram("leaky.c", program);
  const trace = join(work, "sampled.mlens");
  execFileSync(MEMLENS, ["record", "-q", "--sample", "16K", "-o", trace, "--", program], { stdio: "pipe" });
  served = await serveMemlens(["view", trace, "--by", "site", "--no-open", "--port", "0"]);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  served?.server.kill("SIGINT");
  if (work) rmSync(work, { recursive: true, force: true });
});

test("a sampled recording says its figures are estimates above every lens", async () => {
  const page = await openHeap(browser, served.url);
  const notes = await page.textContent('[data-testid="run-notes"]');
  assert.match(notes, /sampled/i);
  assert.match(notes, /estimates/i);
  const first = await page.$$eval('[data-testid="global-view"] g.node[data-depth="1"]', (ns) => ns.map((n) => n.dataset.label));
  assert.ok(first.includes("remember_request"), `the leak is named: ${first}`);
  await shot(page, "notes-01-sampled");
  assert.deepEqual(page.errors, []);
  await page.close();
});
