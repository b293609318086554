#!/usr/bin/env bash
# Gates of the web viewer: install (npm ci, only when needed), typecheck, unit tests
# (Vitest), then the end-to-end tests in headless Chromium against the release memlens
# binary. Screenshots land in web/e2e/artifacts/.
#
# Needs: Node >= 20.19 with npm, a C compiler, Debian's chromium (/usr/bin/chromium or
# $CHROMIUM), and a release build (`cargo build --release --workspace`: memlens and the
# recorder library next to it). $MEMLENS_BIN overrides where memlens is looked for
# (default: $CARGO_TARGET_DIR/release/memlens, else ../target/release/memlens).
set -euo pipefail
cd "$(dirname "$0")"

step() { printf '\n== web: %s\n' "$*"; }

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    step "npm ci"
    npm ci --no-audit --no-fund
fi

step "typecheck"
npx tsc --noEmit

step "unit tests"
npx vitest run

target_dir=${CARGO_TARGET_DIR:-../target}
case "$target_dir" in /*) ;; *) target_dir="$(cd .. && pwd)/${target_dir#../}" ;; esac
export MEMLENS_BIN=${MEMLENS_BIN:-$target_dir/release/memlens}
if [ ! -x "$MEMLENS_BIN" ]; then
    echo "web/test.sh: $MEMLENS_BIN is missing: run \`cargo build --release --workspace\` first" >&2
    exit 1
fi
if [ ! -f "$(dirname "$MEMLENS_BIN")/libmemlens_preload.so" ]; then
    echo "web/test.sh: the recorder library is missing next to $MEMLENS_BIN: run \`cargo build --release --workspace\`" >&2
    exit 1
fi
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
    echo "web/test.sh: $CHROMIUM is missing: \`apt-get install chromium\` (or set CHROMIUM)" >&2
    exit 1
fi

step "end-to-end tests in headless Chromium ($MEMLENS_BIN)"
node --test --test-concurrency=1 e2e/*.test.mjs
