#!/usr/bin/env bash
# `memlens report` at scale: records the shared workload (../shared/bench/alloc-bench.c,
# 2 threads) to about EVENTS events, writes its report, and opens the report from
# file:// in headless Chromium until the heap lens has drawn its sunburst and the
# allocation map its first tiles. Prints the report's size and open time against the
# issue's budgets (25 MB, 5 s), and the time and peak memory of `memlens report`
# against `heaptrack_print` reading the same workload recorded by heaptrack.
#
# Usage: bench/report/run.sh [EVENTS]      (default 100000000; a trace of ~300 MB)
# Needs: a release build (the script runs `cargo build --release`), Debian's chromium,
# web/node_modules (playwright-core; `cd web && npm ci`), heaptrack (optional).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
events=${1:-100000000}
src="$root/../shared/bench/alloc-bench.c"
[ -f "$src" ] || { echo "bench: $src not found (the shared workload lives beside the repository)" >&2; exit 1; }
(cd "$root" && cargo build --release --quiet -p memlens -p memlens-preload)
target=${CARGO_TARGET_DIR:-$root/target}
memlens="$target/release/memlens"
out=${BENCH_OUT:-$(mktemp -d)}
mkdir -p "$out"
cc -O2 -g -fno-omit-frame-pointer -pthread "$src" -o "$out/bench"
# About one event per call: each of the 2 threads makes events/2 calls.
calls=$((events / 2))
trace="$out/bench.mlens"
if [ ! -f "$trace" ]; then
    echo "== recording alloc-bench 2 threads × $calls calls"
    "$memlens" record -q -f -o "$trace" -- "$out/bench" 2 "$calls"
fi
recorded=$("$memlens" summary --json "$trace" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["allocations"]+d["frees"]+d["reallocations"])')
echo "trace: $recorded events, $(du -m "$trace" | cut -f1) MB"

echo "== memlens report"
/usr/bin/time -f "%e %M" -o "$out/report.time" "$memlens" report "$trace" -o "$out/report.html" 2>"$out/report.log" || { cat "$out/report.log"; exit 1; }
read -r report_s report_kb < "$out/report.time"
size=$(stat -c %s "$out/report.html")
node "$here/open.mjs" "$out/report.html" > "$out/open.txt"
open_ms=$(cat "$out/open.txt")

baseline=""
if command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null; then
    if ! ls "$out"/ht*.zst >/dev/null 2>&1; then
        echo "== recording the same workload under heaptrack (the baseline)"
        heaptrack -o "$out/ht" "$out/bench" 2 "$calls" >/dev/null 2>&1 || true
    fi
    ht=$(ls "$out"/ht*.zst | head -n 1)
    /usr/bin/time -f "%e %M" -o "$out/ht.time" heaptrack_print "$ht" >/dev/null 2>&1
    read -r ht_s ht_kb < "$out/ht.time"
    baseline="$ht_s $ht_kb"
fi

python3 - "$recorded" "$report_s" "$report_kb" "$size" "$open_ms" $baseline <<'PY'
import sys
events, report_s, report_kb, size, open_ms = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
print(f"memlens report: {report_s:.1f} s, peak RSS {report_kb/1024/1024:.2f} GiB, {events/report_s/1e6:.1f} M events/s")
print(f"report size: {size/1e6:.1f} MB (budget 25 MB: {size/25e6:.2f}×)")
print(f"open from file:// in headless Chromium until both lenses drew: {open_ms/1000:.2f} s (budget 5 s: {open_ms/5000:.2f}×)")
if len(sys.argv) > 7:
    ht_s, ht_kb = float(sys.argv[6]), int(sys.argv[7])
    print(f"heaptrack_print on the same workload: {ht_s:.1f} s, peak RSS {ht_kb/1024:.0f} MiB; "
          f"memlens report / heaptrack_print: time {report_s/ht_s:.2f}×, memory {report_kb/ht_kb:.1f}×")
PY
