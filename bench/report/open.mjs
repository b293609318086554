// Opens a memlens report from file:// in Debian's headless Chromium and prints how many
// milliseconds pass until the heap lens has drawn its sunburst and, when the report has
// an allocation map, that tab has drawn its first tile; fails on a page error.
// Usage: node bench/report/open.mjs REPORT.html   (run from the repository; needs
// web/node_modules with playwright-core)
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const require = createRequire(resolve(import.meta.dirname, "../../web/package.json"));
const { chromium } = require("playwright-core");

const report = process.argv[2];
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
const errors = [];
page.on("pageerror", (e) => errors.push(e.message));
const started = Date.now();
await page.goto(pathToFileURL(resolve(report)).href);
await page.waitForSelector('[data-testid="global-view"] g.node[data-depth="1"]', { timeout: 60_000 });
const tabs = await page.$$eval('[data-testid="lens-tabs"] button', (bs) => bs.map((b) => b.dataset.lens));
if (tabs.includes("alloc")) {
  await page.click('[data-testid="lens-tabs"] button[data-lens="alloc"]');
  // Until the main view's canvas holds ink: the first tiles are drawn.
  await page.waitForFunction(() => {
    const c = document.querySelector('[data-testid="alloc-main"]');
    if (!c) return false;
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    for (let i = 0; i < d.length; i += 4 * 97) {
      if (d[i + 3] > 0 && (d[i] < 250 || d[i + 1] < 250 || d[i + 2] < 250)) return true;
    }
    return false;
  }, undefined, { timeout: 60_000, polling: 50 });
}
const elapsed = Date.now() - started;
await browser.close();
if (errors.length) {
  console.error(`page errors: ${errors.join("; ")}`);
  process.exit(1);
}
console.log(elapsed);
