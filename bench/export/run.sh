#!/usr/bin/env bash
# `memlens export --format parquet` at scale: times the whole export of a trace of
# the request-serving workload crates/memlens/tests/heap_programs/server.c (2 threads,
# ≈ 8 events per request, ≈ 150 M blocks in a 300 M-event trace) and measures its peak
# RSS and the size of what it wrote, beside `heaptrack_print` on heaptrack's trace of
# the same workload (the baseline: the one other tool that reads every allocation of
# such a run). Prints a table with ratios to the baseline and PASS/MISS for the target:
# peak RSS ≤ 1.5 GiB.
#
# Usage: bench/export/run.sh [TRACE [HEAPTRACK_TRACE]]
#   TRACE            an existing server trace (default: record one of EVENTS events)
#   HEAPTRACK_TRACE  heaptrack's trace of the same workload (default: ht-EVENTS.*zst
#                    beside TRACE, recorded with heaptrack when TRACE was recorded here)
# Env:   EVENTS=N (default 300000000) for a trace recorded here;
#        BENCH_OUT=DIR keeps the recordings and the export there (default: a fresh
#        temporary directory, whose export is removed at the end).
# Needs: a release build (the script runs `cargo build --release`), cc, python3;
# heaptrack and heaptrack_print for the baseline (its columns stay empty without).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
events=${EVENTS:-300000000}
threads=2
(cd "$root" && cargo build --release --quiet -p memlens -p memlens-preload)
target=${CARGO_TARGET_DIR:-$root/target}
memlens="$target/release/memlens"
keep=${BENCH_OUT:+yes}
out=${BENCH_OUT:-$(mktemp -d)}
mkdir -p "$out"

. "$here/../measure.sh"

trace=${1:-}
ht=${2:-}
if [ -z "$trace" ]; then
    trace="$out/server-$events.mlens"
    src="$root/crates/memlens/tests/heap_programs/server.c"
    cc -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -pthread "$src" -o "$out/server"
    # The server makes 8 events per request once its caches are warm (see its header).
    requests=$((events / (8 * threads)))
    if [ ! -f "$trace" ]; then
        echo "== recording server $threads threads × $requests requests"
        "$memlens" record -q -f -o "$trace" -- "$out/server" "$threads" "$requests"
    fi
    if [ -z "$ht" ] && command -v heaptrack >/dev/null && ! ls "$out"/ht-"$events".*zst >/dev/null 2>&1; then
        echo "== recording the same workload under heaptrack (the baseline)"
        heaptrack -o "$out/ht-$events" "$out/server" "$threads" "$requests" >/dev/null 2>&1 || true
    fi
fi
[ -f "$trace" ] || { echo "bench: no trace $trace" >&2; exit 1; }
if [ -z "$ht" ]; then
    # ht-EVENTS.*zst beside the trace, EVENTS taken from a server-EVENTS.mlens name.
    n=$(basename "$trace" .mlens); n=${n##*-}
    ht=$(ls "$(dirname "$trace")"/ht-"$n".*zst "$(dirname "$trace")"/ht-"$n".zst 2>/dev/null | head -n 1 || true)
fi
trace_bytes=$(stat -c %s "$trace")
echo "trace: $trace ($((trace_bytes / 1000000)) MB)"

export_dir="$out/export.parquet"
echo "== memlens export --format parquet"
measure export "$memlens" export "$trace" --format parquet -o "$export_dir"
sentence=$(sed -n 's/^memlens: wrote [^:]*: //p' "$out/export.err")
blocks=$(echo "$sentence" | sed -n 's/.* \([0-9,]*\) blocks.*/\1/p' | tr -d ,)
export_bytes=$(du -sb "$export_dir" | cut -f1)
tables=""
for dir in "$export_dir"/*/; do
    tables="$tables $(basename "$dir")=$(du -sb "$dir" | cut -f1)"
done
[ -n "$keep" ] || rm -rf "$export_dir"

baseline=""
if [ -n "$ht" ] && [ -f "$ht" ] && command -v heaptrack_print >/dev/null; then
    echo "== heaptrack_print $ht (the baseline)"
    measure heaptrack_print heaptrack_print "$ht"
    baseline=$(cat "$out/heaptrack_print.time")
else
    echo "(no heaptrack trace or no heaptrack_print: no baseline)"
fi

echo
echo "wrote: $sentence"
python3 - "$out" "$trace_bytes" "${blocks:-0}" "$export_bytes" "$tables" $baseline <<'PY'
import sys
out, trace_bytes, blocks, export_bytes, tables = sys.argv[1:6]
trace_bytes, blocks, export_bytes = int(trace_bytes), int(blocks), int(export_bytes)
baseline = (float(sys.argv[6]), int(sys.argv[7])) if len(sys.argv) > 7 else None

def measured(name):
    s, kb = open(f"{out}/{name}.time").read().split()[:2]
    return float(s), int(kb)

rows = [("memlens export --format parquet", "export")]
if baseline:
    rows.append(("heaptrack_print", "heaptrack_print"))
print(f"{'command':<34} {'seconds':>9} {'peak MiB':>9} {'M rows/s':>9} {'time/ht':>8} {'mem/ht':>7}")
for label, name in rows:
    s, kb = measured(name)
    rate = f"{blocks / s / 1e6:.2f}" if name == "export" and s > 0 else "-"
    if baseline:
        ratios = f"{s / baseline[0]:>7.2f}× {kb / baseline[1]:>6.2f}×"
    else:
        ratios = f"{'-':>8} {'-':>7}"
    print(f"{label:<34} {s:>9.2f} {kb / 1024:>9.1f} {rate:>9} {ratios}")
print(f"output: {export_bytes / 1e6:.1f} MB = {export_bytes / trace_bytes:.2f}× the trace "
      f"({trace_bytes / 1e6:.1f} MB); {export_bytes / max(blocks, 1):.2f} bytes per block")
print("by table (MB):", ", ".join(
    f"{name} {int(size) / 1e6:.1f}" for name, size in (t.split("=") for t in tables.split())))
s, kb = measured("export")
ok = kb <= 1536 * 1024
print(f"{'PASS' if ok else 'MISS'}  export peak RSS ≤ 1.5 GiB: {kb / 1024:.1f} MiB")
PY
