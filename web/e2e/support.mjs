// What every end-to-end test of the viewer shares: where the release memlens and
// Debian's Chromium are, the screenshot folder, compiling a C test program, starting a
// memlens command that serves the viewer (and reading its URL), and opening a page that
// collects its errors. MEMLENS_BIN and CHROMIUM override the binaries' paths.

import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const HERE = dirname(fileURLToPath(import.meta.url));
export const ARTIFACTS = join(HERE, "artifacts");
export const MEMLENS = resolve(process.env.MEMLENS_BIN ?? join(HERE, "../../target/release/memlens"));
export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Checks that memlens is built and makes the screenshot folder. */
export function prepare() {
  assert.ok(existsSync(MEMLENS), `${MEMLENS} is missing: run \`cargo build --release\` first or set MEMLENS_BIN`);
  mkdirSync(ARTIFACTS, { recursive: true });
}

/** Compiles the C program `source` (in e2e/) to `output` with frame pointers and debug info. */
export function compileProgram(source, output) {
  execFileSync("cc", [
    "-O1", "-g", "-fno-omit-frame-pointer", "-fno-optimize-sibling-calls", "-pthread",
    "-o", output, join(HERE, source),
  ]);
}

/** Headless Chromium. */
export function launchBrowser() {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/**
 * Starts `memlens ARGS…` (a command that serves the viewer) with `env` added to the
 * environment and resolves to `{ server, url }` once it printed its URL; fails if it
 * exits or stays silent for 30 s.
 */
export function serveMemlens(args, env = {}) {
  const server = spawn(MEMLENS, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  return new Promise((done, fail) => {
    let out = "";
    const timer = setTimeout(() => fail(new Error(`memlens ${args.join(" ")} printed no URL: ${out}`)), 30_000);
    server.stdout.on("data", (chunk) => {
      out += chunk;
      const match = out.match(/http:\/\/127\.0\.0\.1:\d+\/[a-z2-7]+\//);
      if (match) {
        clearTimeout(timer);
        done({ server, url: match[0] });
      }
    });
    server.on("exit", (code) => fail(new Error(`memlens ${args.join(" ")} exited with ${code}: ${out}`)));
  });
}

/**
 * A new page of `viewport` on `url` that records its errors in `page.errors`, once the app is ready.
 * A 503 is not an error: a lens still being read answers it, and the page asks again.
 */
export async function openPage(browser, url, viewport) {
  const page = await browser.newPage({ viewport });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => m.type() === "error" && !m.text().includes("status of 503") && errors.push(m.text()));
  page.errors = errors;
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]');
  return page;
}
