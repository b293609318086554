#!/usr/bin/env bash
# Recorder benchmark: memlens against heaptrack on the shared workload
# ../shared/bench/alloc-bench.c (5 M allocation calls, mixed sizes), measured
# side by side in one run with hyperfine, plus trace size and the speed of
# `memlens summary` against `heaptrack_print` on the same recordings.
#
# Usage: bench/record/run.sh [OPS] [RUNS]      (defaults: 5000000 5)
# Needs: hyperfine, heaptrack (Debian packages), a release build of memlens
# (the script runs `cargo build --release` first). Prints ratios.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ops=${1:-5000000}
runs=${2:-5}
src="$root/../shared/bench/alloc-bench.c"
[ -f "$src" ] || { echo "bench: $src not found (the shared workload lives beside the repository)" >&2; exit 1; }
for tool in hyperfine heaptrack heaptrack_print; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is not installed (apt-get install hyperfine heaptrack)" >&2; exit 1; }
done
(cd "$root" && cargo build --release --quiet -p memlens -p memlens-preload)
target=${CARGO_TARGET_DIR:-$root/target}
memlens="$target/release/memlens"
preload="$target/release/libmemlens_preload.so"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The workload as the research measured it: -O2 with frame pointers.
cc -O2 -g -fno-omit-frame-pointer -pthread "$src" -o "$out/bench"

median() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(' '.join(str(r['median']) for r in d['results']))" "$1"; }

for threads in 1 2; do
    echo "== alloc-bench, $threads thread(s), $ops calls, $runs runs each, one command after the other (hyperfine)"
    hyperfine -N -w 1 -r "$runs" --export-json "$out/t$threads.json" --style basic \
        --prepare "sh -c 'rm -rf $out/rec && mkdir -p $out/rec'" \
        -n native "$out/bench $threads $ops" \
        -n memlens "env LD_PRELOAD=$preload MEMLENS_DIR=$out/rec $out/bench $threads $ops" \
        -n heaptrack "heaptrack -o $out/rec/ht $out/bench $threads $ops" >/dev/null
    read -r native mem ht < <(median "$out/t$threads.json")
    python3 - "$native" "$mem" "$ht" "$threads" <<'PY'
import sys
native, mem, ht, threads = map(float, sys.argv[1:])
print(f"  median wall: native {native:.3f} s, memlens {mem:.3f} s, heaptrack {ht:.3f} s")
print(f"  slowdown: memlens {mem/native:.2f}x (target <= {3 if threads == 1 else 3.5}x), heaptrack {ht/native:.2f}x")
print(f"  memlens/heaptrack wall ratio: {mem/ht:.2f}")
PY
done

echo "== trace size (1 thread)"
rm -rf "$out/rec"; mkdir -p "$out/rec"
env LD_PRELOAD="$preload" MEMLENS_DIR="$out/rec" "$out/bench" 1 "$ops" 2>/dev/null
heaptrack -o "$out/rec/ht" "$out/bench" 1 "$ops" >/dev/null 2>&1
trace=$(ls "$out"/rec/memlens.*.mlens)
events=$("$memlens" summary --json "$trace" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['allocations']+d['frees']+d['reallocations'])")
bytes=$(stat -c %s "$trace")
htbytes=$(stat -c %s "$out"/rec/ht*.zst)
python3 -c "import sys; e,b,h=map(int,sys.argv[1:]); print(f'  memlens: {b} bytes for {e} events = {b/e:.2f} B/event (addresses, ns times, tids, stacks); heaptrack: {h} bytes = {h/e:.2f} B/event (no addresses or times)')" "$events" "$bytes" "$htbytes"

echo "== analysis: memlens summary vs heaptrack_print on the same run"
hyperfine -N -w 1 -r "$runs" --export-json "$out/s.json" --style basic \
    -n "memlens summary" "$memlens summary $trace" \
    -n heaptrack_print "heaptrack_print $(ls "$out"/rec/ht*.zst)" >/dev/null
read -r ms hp < <(median "$out/s.json")
python3 -c "import sys; e=int(sys.argv[1]); m,h=map(float,sys.argv[2:]); print(f'  memlens summary {m:.3f} s = {e/m/1e6:.1f} M events/s (target >= 30); heaptrack_print {h:.3f} s = {e/h/1e6:.1f} M events/s; ratio {h/m:.2f}x')" "$events" "$ms" "$hp"
/usr/bin/time -f "  memlens summary peak RSS: %M KiB" "$memlens" summary "$trace" >/dev/null
