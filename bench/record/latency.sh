#!/usr/bin/env bash
# Cost of `memlens record --latency`: the recorder on the shared workload
# ../shared/bench/alloc-bench.c with and without allocator latencies,
# against the unprofiled program and heaptrack, in one hyperfine run; then
# the trace size per event with and without latencies.
#
# Usage: bench/record/latency.sh [OPS] [RUNS] [THREADS]   (defaults: 3000000 7 1)
# Set BASELINE_PRELOAD=/path/to/libmemlens_preload.so to add an older
# recorder library ("baseline") to the same run, e.g. to check that the
# default mode did not get slower.
# Needs: hyperfine, heaptrack (Debian packages). Prints ratios.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ops=${1:-3000000}
runs=${2:-7}
threads=${3:-1}
src="$root/../shared/bench/alloc-bench.c"
[ -f "$src" ] || { echo "bench: $src not found (the shared workload lives beside the repository)" >&2; exit 1; }
for tool in hyperfine heaptrack; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is not installed (apt-get install hyperfine heaptrack)" >&2; exit 1; }
done
(cd "$root" && cargo build --release --quiet -p memlens -p memlens-preload)
target=${CARGO_TARGET_DIR:-$root/target}
memlens="$target/release/memlens"
preload="$target/release/libmemlens_preload.so"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -g -fno-omit-frame-pointer -pthread "$src" -o "$out/bench"

names=(native memlens memlens-latency heaptrack)
cmds=(
    "$out/bench $threads $ops"
    "env LD_PRELOAD=$preload MEMLENS_DIR=$out/rec $out/bench $threads $ops"
    "env LD_PRELOAD=$preload MEMLENS_LATENCY=1 MEMLENS_DIR=$out/rec $out/bench $threads $ops"
    "heaptrack -o $out/rec/ht $out/bench $threads $ops"
)
if [ -n "${BASELINE_PRELOAD:-}" ]; then
    [ -f "$BASELINE_PRELOAD" ] || { echo "bench: BASELINE_PRELOAD=$BASELINE_PRELOAD does not exist" >&2; exit 1; }
    names+=(baseline)
    cmds+=("env LD_PRELOAD=$BASELINE_PRELOAD MEMLENS_DIR=$out/rec $out/bench $threads $ops")
fi
args=()
for i in "${!names[@]}"; do args+=(-n "${names[$i]}" "${cmds[$i]}"); done

echo "== alloc-bench, $threads thread(s), $ops calls, $runs runs each (hyperfine; median wall, mean CPU)"
hyperfine -N -w 1 -r "$runs" --export-json "$out/t.json" --style basic \
    --prepare "sh -c 'rm -rf $out/rec && mkdir -p $out/rec'" "${args[@]}" >/dev/null
python3 - "$out/t.json" <<'PY'
import json, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
def cpu(r):  # hyperfine exports the mean user and system time per run
    return r["user"] + r["system"]
native = results["native"]
for name, r in results.items():
    print(f"  {name:16s} wall {r['median']:.3f} s ({r['median'] / native['median']:.2f}x native), "
          f"cpu {cpu(r):.3f} s ({cpu(r) / cpu(native):.2f}x native)")
m, l, h = results["memlens"], results["memlens-latency"], results["heaptrack"]
print(f"  --latency costs {l['median'] / m['median']:.2f}x the default recorder's wall time "
      f"({cpu(l) / cpu(m):.2f}x its CPU time); memlens --latency / heaptrack wall {l['median'] / h['median']:.2f}")
if "baseline" in results:
    b = results["baseline"]
    print(f"  default mode against the baseline library: wall {m['median'] / b['median']:.3f}, cpu {cpu(m) / cpu(b):.3f}")
PY

echo "== trace size ($threads thread(s))"
for mode in plain latency; do
    rm -rf "$out/rec"; mkdir -p "$out/rec"
    if [ "$mode" = latency ]; then
        env LD_PRELOAD="$preload" MEMLENS_LATENCY=1 MEMLENS_DIR="$out/rec" "$out/bench" "$threads" "$ops" >/dev/null 2>&1
    else
        env LD_PRELOAD="$preload" MEMLENS_DIR="$out/rec" "$out/bench" "$threads" "$ops" >/dev/null 2>&1
    fi
    trace=$(ls "$out"/rec/memlens.*.mlens)
    events=$("$memlens" summary --json "$trace" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['allocations']+d['frees']+d['reallocations'])")
    bytes=$(stat -c %s "$trace")
    python3 -c "import sys; m,e,b=sys.argv[1],int(sys.argv[2]),int(sys.argv[3]); print(f'  {m:8s} {b} bytes for {e} events = {b/e:.2f} B/event')" "$mode" "$events" "$bytes"
done
