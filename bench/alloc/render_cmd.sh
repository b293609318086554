#!/usr/bin/env bash
# `memlens render alloc` as the user runs it (the whole command: reading the trace,
# building the allocation map, drawing 1920×1080 with formula (1) and cushions,
# writing the PNG) on a 3 M-allocation recording of the shared workload
# ../shared/bench/alloc-bench.c (1 thread, OPS calls; 3 M calls give 3.37 M blocks),
# side by side in one hyperfine run with `heaptrack_print` reading heaptrack's
# recording of the same workload (the baseline that reads every allocation too), once
# the trace is indexed (`memlens growth` first, as a user who opened it before).
# Prints wall and CPU seconds, peak RSS (GNU time), the ratio memlens/heaptrack_print,
# and PASS/MISS for the Scale issue's target: ≤ 1 s end to end.
#
# Usage: bench/alloc/render_cmd.sh [OPS] [RUNS]   (defaults: 3000000 10)
# Needs: hyperfine, heaptrack (Debian packages), python3. A benchmark, not a test: it
# reports, it does not assert (exit 0 on MISS).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ops=${1:-3000000}
runs=${2:-10}
src="$root/../shared/bench/alloc-bench.c"
[ -f "$src" ] || { echo "bench: $src not found (the shared workload lives beside the repository)" >&2; exit 1; }
for tool in hyperfine heaptrack heaptrack_print python3; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is not installed (apt-get install hyperfine heaptrack)" >&2; exit 1; }
done
(cd "$root" && cargo build --release --quiet -p memlens -p memlens-preload)
target=${CARGO_TARGET_DIR:-$root/target}
memlens="$target/release/memlens"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -g -fno-omit-frame-pointer -pthread "$src" -o "$out/bench"

echo "== recording alloc-bench 1 thread × $ops calls under memlens and under heaptrack"
"$memlens" record -q -o "$out/t.mlens" -- "$out/bench" 1 "$ops" >/dev/null
heaptrack -o "$out/ht" "$out/bench" 1 "$ops" >/dev/null 2>&1
ht=$(ls "$out"/ht.*zst | head -n 1)
"$memlens" growth "$out/t.mlens" >/dev/null 2>&1
blocks=$("$memlens" summary --json "$out/t.mlens" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["allocations"]+d["reallocations"])')
echo "trace: $blocks blocks, $(($(stat -c %s "$out/t.mlens") / 1000000)) MB; indexed"

render="$memlens render alloc $out/t.mlens -o $out/map.png"
echo "== $runs runs each, one command after the other (hyperfine)"
hyperfine -N -w 1 -r "$runs" --export-json "$out/h.json" --style basic \
    -n "memlens render alloc" "$render" \
    -n heaptrack_print "heaptrack_print $ht" >/dev/null
/usr/bin/time -f "%M" -o "$out/m.rss" $render 2>/dev/null
/usr/bin/time -f "%M" -o "$out/h.rss" heaptrack_print "$ht" >/dev/null 2>&1
python3 - "$out/h.json" "$(cat "$out/m.rss")" "$(cat "$out/h.rss")" "$blocks" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
m_kb, h_kb, blocks = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
m, h = results
for r, kb in ((m, m_kb), (h, h_kb)):
    cpu = r["user"] + r["system"]
    print(f"  {r['command']:<22} median {r['median']:.3f} s (min {r['min']:.3f}), CPU {cpu:.3f} s, peak RSS {kb / 1024:.0f} MiB")
print(f"  memlens / heaptrack_print: wall {m['median'] / h['median']:.2f}×, peak RSS {m_kb / h_kb:.2f}×; "
      f"memlens {m_kb * 1024 / blocks:.0f} bytes per block")
ok = m["median"] <= 1.0
print(f"{'PASS' if ok else 'MISS'}  render alloc of {blocks} blocks ≤ 1 s end to end once indexed: {m['median']:.3f} s")
PY
