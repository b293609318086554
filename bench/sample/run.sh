#!/usr/bin/env bash
# Sampled recording benchmark (`memlens record --sample BYTES`): the slowdown of the
# whole command against the program alone, side by side in one run (rounds of one
# hyperfine run of each command, bench/measure.sh `interleaved`) with the
# full recording and heaptrack, on the shared workload ../shared/bench/alloc-bench.c
# (1 thread, OPS allocation calls) and on the request-serving program
# crates/memlens/tests/heap_programs/server.c (2 threads); then the accuracy of the
# estimates: each of the top sites' allocated bytes in a sampled run against the
# exact bytes of an unsampled run of the same program (target: within 10 %; the
# server's with four times the requests, see below), and the total.
#
# Usage: bench/sample/run.sh [OPS] [RUNS] [BYTES]   (defaults: 5000000 10 512K)
# Needs: hyperfine, heaptrack (Debian packages), python3, a release build (the
# script runs `cargo build --release` first). Prints ratios; target: sampled
# memlens <= 1.10x native at 512K.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ops=${1:-5000000}
runs=${2:-10}
sample=${3:-512K}
src="$root/../shared/bench/alloc-bench.c"
[ -f "$src" ] || { echo "bench: $src not found (the shared workload lives beside the repository)" >&2; exit 1; }
for tool in hyperfine heaptrack python3; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is not installed (apt-get install hyperfine heaptrack)" >&2; exit 1; }
done
(cd "$root" && cargo build --release --quiet -p memlens -p memlens-preload)
target=${CARGO_TARGET_DIR:-$root/target}
memlens="$target/release/memlens"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -g -fno-omit-frame-pointer -pthread "$src" -o "$out/bench"
cc -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -pthread \
    "$root/crates/memlens/tests/heap_programs/server.c" -o "$out/server"
requests=$((ops / 8))

# The timings: `interleaved` rounds, read back by `median` and `cpu` (bench/measure.sh).
. "$root/bench/measure.sh"

timing() {
    local name=$1; shift
    echo "== $name: $*, $runs rounds of one run of each command (hyperfine)"
    interleaved "$out/t.json" "$runs" \
        --prepare "sh -c 'rm -rf $out/rec && mkdir -p $out/rec'" \
        -n native "$*" \
        -n "memlens --sample $sample" "$memlens record -q -f --sample $sample -o $out/rec/s.mlens -- $*" \
        -n "memlens (every allocation)" "$memlens record -q -f -o $out/rec/m.mlens -- $*" \
        -n heaptrack "heaptrack -o $out/rec/ht $*"
    read -r native sampled full ht < <(median "$out/t.json")
    read -r cnative csampled cfull cht < <(cpu "$out/t.json")
    python3 - "$native" "$sampled" "$full" "$ht" "$cnative" "$csampled" "$cfull" "$cht" "$sample" <<'PY'
import sys
native, sampled, full, ht, cnative, csampled, cfull, cht = map(float, sys.argv[1:9])
print(f"  median wall: native {native:.3f} s | memlens --sample {sys.argv[9]} {sampled:.3f} s | memlens {full:.3f} s | heaptrack {ht:.3f} s")
print(f"  vs native:   memlens --sample {sampled/native:.2f}x (target <= 1.10x) | memlens {full/native:.2f}x | heaptrack {ht/native:.2f}x")
print(f"  cpu (user+sys) vs native: memlens --sample {csampled/cnative:.2f}x | memlens {cfull/cnative:.2f}x | heaptrack {cht/cnative:.2f}x")
print(f"  vs heaptrack: memlens --sample {sampled/ht:.2f} | memlens {full/ht:.2f}")
PY
}

accuracy() {
    local name=$1; shift
    "$memlens" record -q -f -o "$out/full.mlens" -- "$@" >/dev/null
    "$memlens" record -q -f --sample "$sample" -o "$out/sampled.mlens" -- "$@" >/dev/null
    "$memlens" summary --json --top 20 "$out/full.mlens" >"$out/full.json"
    "$memlens" summary --json --top 50 "$out/sampled.mlens" >"$out/sampled.json"
    echo "== accuracy, $name: top sites' allocated bytes, --sample $sample against every allocation"
    python3 - "$out/full.json" "$out/sampled.json" <<'PY'
import json, sys
full, sampled = (json.load(open(p)) for p in sys.argv[1:3])
estimates = {r["site"]: r["bytes"] for r in sampled["top_sites"]}
# A site's estimate has a relative error of about sqrt(R / its bytes) (one standard
# deviation; R the mean sampling interval), printed beside it: the 10 % target is
# for the top sites that hold at least 1 % of the bytes (the others are listed).
interval = sampled["sampling"]["mean_interval_bytes"]
worst = 0.0
for r in full["top_sites"][:5]:
    est = estimates.get(r["site"], 0)
    err = est / r["bytes"] - 1
    top = r["bytes"] >= full["allocated_bytes"] / 100
    if top:
        worst = max(worst, abs(err))
    note = "" if top else "  (under 1 % of the bytes: not a top site)"
    sigma = (interval / r["bytes"]) ** 0.5
    print(f"  {r['bytes']/2**20:10.1f} MiB exact {est/2**20:10.1f} MiB estimated ({err*100:+6.1f} %, 1 sd {sigma*100:4.1f} %)  {r['stack'][0]}{note}")
total = sampled["allocated_bytes"] / full["allocated_bytes"] - 1
calls = (sampled["allocations"] + sampled["reallocations"]) / (full["allocations"] + full["reallocations"]) - 1
print(f"  total bytes {total*100:+.2f} %, calls {calls*100:+.2f} %; worst top site {worst*100:.1f} % (target <= 10 %)")
print(f"  {sampled['sampling']['note']}")
PY
}

timing "alloc-bench, 1 thread, $ops calls" "$out/bench" 1 "$ops"
timing "request server, 2 threads × $requests requests" "$out/server" 2 "$requests"
accuracy "alloc-bench, 1 thread, $ops calls" "$out/bench" 1 "$ops"
# The server's accuracy run serves four times the requests of its timing run: its
# two `parse_header` sites hold 2 % of the bytes each, which 625 k requests sample
# about 180 times (1 sd about 7 %, so one run in six would miss 10 % by chance
# alone); 2.5 M requests sample them about 730 times (1 sd about 3.7 %).
accuracy "request server, 2 threads × $((requests * 4)) requests" "$out/server" 2 "$((requests * 4))"
