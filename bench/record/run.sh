#!/usr/bin/env bash
# Recorder benchmark: `memlens record` (the whole command, default DWARF
# unwinding and --unwind fp) against heaptrack and the program alone on the
# shared workload ../shared/bench/alloc-bench.c (5 M allocation calls, mixed
# sizes), built with and without frame pointers, 1 and 2 threads, measured side
# by side in one run with hyperfine, in RUNS rounds of one run of each command
# (`interleaved`, bench/measure.sh: wall-clock medians, and CPU time medians: user +
# system of the command and its children, which is what the recorder's writer
# thread competes for on a small machine); the cost of
# the line `record` prints after the run; Debian's perl; then trace size and the speed of `memlens summary`
# against `heaptrack_print` on the same recordings.
#
# Usage: bench/record/run.sh [OPS] [RUNS]      (defaults: 5000000 7)
# Needs: hyperfine, heaptrack (Debian packages), a release build of memlens
# (the script runs `cargo build --release` first). Prints ratios.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ops=${1:-5000000}
runs=${2:-7}
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
# The workload as the research measured it (-O2 with frame pointers), and the
# same program built as distributions build their packages: without them.
cc -O2 -g -fno-omit-frame-pointer -pthread "$src" -o "$out/bench"
cc -O2 -g -fomit-frame-pointer -pthread "$src" -o "$out/bench-nofp"

# The timings: `interleaved` rounds, read back by `median` and `cpu` (bench/measure.sh).
. "$root/bench/measure.sh"

# Every memlens line is the whole command a user runs: `memlens record`, with its
# default (DWARF) unwinding and with `--unwind fp`.
for build in bench bench-nofp; do
    for threads in 1 2; do
        echo "== alloc-bench ($build), $threads thread(s), $ops calls, $runs rounds of one run of each command (hyperfine)"
        interleaved "$out/t.json" "$runs" \
            --prepare "sh -c 'rm -rf $out/rec && mkdir -p $out/rec'" \
            -n native "$out/$build $threads $ops" \
            -n "memlens (default: dwarf)" "$memlens record -q -f -o $out/rec/m.mlens -- $out/$build $threads $ops" \
            -n "memlens --unwind fp" "$memlens record -q -f --unwind fp -o $out/rec/m.mlens -- $out/$build $threads $ops" \
            -n heaptrack "heaptrack -o $out/rec/ht $out/$build $threads $ops"
        read -r native mem fp ht < <(median "$out/t.json")
        read -r cnative cmem cfp cht < <(cpu "$out/t.json")
        python3 - "$native" "$mem" "$fp" "$ht" "$cnative" "$cmem" "$cfp" "$cht" "$threads" <<'PY'
import sys
native, mem, fp, ht, cnative, cmem, cfp, cht, threads = map(float, sys.argv[1:])
print(f"  median wall: native {native:.3f} s, memlens {mem:.3f} s, memlens --unwind fp {fp:.3f} s, heaptrack {ht:.3f} s")
print(f"  slowdown: memlens {mem/native:.2f}x (target <= {3 if threads == 1 else 3.5}x), --unwind fp {fp/native:.2f}x, heaptrack {ht/native:.2f}x")
print(f"  cpu (user+sys): native {cnative:.3f} s, memlens {cmem:.3f} s, memlens --unwind fp {cfp:.3f} s, heaptrack {cht:.3f} s")
cpu_target = " (target <= 3x)" if threads == 1 else ""
print(f"  cpu vs native: memlens {cmem/cnative:.2f}x{cpu_target}, --unwind fp {cfp/cnative:.2f}x, heaptrack {cht/cnative:.2f}x")
print(f"  memlens/heaptrack: wall {mem/ht:.2f}, cpu {cmem/cht:.2f}")
PY
    done
done

echo "== the line after the run: memlens record against record -q (1 thread, target <= 1.10x)"
interleaved "$out/q.json" "$runs" \
    -n "record -q" "$memlens record -q -f -o $out/q.mlens -- $out/bench 1 $ops" \
    -n "record" "$memlens record -f -o $out/q.mlens -- $out/bench 1 $ops"
read -r quiet loud < <(median "$out/q.json")
python3 -c "import sys; q,l=map(float,sys.argv[1:]); print(f'  record -q {q:.3f} s, record {l:.3f} s: {l/q:.2f}x')" "$quiet" "$loud"

if command -v perl >/dev/null; then
    script='my %h; for my $i (1..300000) { $h{"k$i"} = "v" x ($i % 50) } print scalar(keys %h), "\n"'
    echo "== Debian's perl (no frame pointers), a hash of 300000 keys"
    mkdir -p "$out/rec"
    interleaved "$out/p.json" "$runs" \
        -n native "perl -e '$script'" \
        -n memlens "$memlens record -q -f -o $out/p.mlens -- perl -e '$script'" \
        -n heaptrack "heaptrack -o $out/rec/htp perl -e '$script'"
    read -r native mem ht < <(median "$out/p.json")
    python3 -c "import sys; n,m,h=map(float,sys.argv[1:]); print(f'  native {n:.3f} s, memlens {m:.3f} s ({m/n:.2f}x), heaptrack {h:.3f} s ({h/n:.2f}x); memlens/heaptrack {m/h:.2f}')" "$native" "$mem" "$ht"
fi

echo "== trace size (1 thread)"
rm -rf "$out/rec"; mkdir -p "$out/rec"
env LD_PRELOAD="$preload" MEMLENS_DIR="$out/rec" "$out/bench" 1 "$ops" 2>/dev/null
heaptrack -o "$out/rec/ht" "$out/bench" 1 "$ops" >/dev/null 2>&1
trace=$(ls "$out"/rec/memlens.*.mlens)
events=$("$memlens" summary --json "$trace" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['allocations']+d['frees']+d['reallocations'])")
bytes=$(stat -c %s "$trace")
htbytes=$(stat -c %s "$out"/rec/ht*.zst)
python3 -c "import sys; e,b,h=map(int,sys.argv[1:]); print(f'  memlens: {b} bytes for {e} events = {b/e:.2f} B/event (addresses, ns times, tids, stacks); heaptrack: {h} bytes = {h/e:.2f} B/event (no addresses or times)')" "$events" "$bytes" "$htbytes"

# A summary of 5 M events or more is kept in the trace's index, and read from there
# the next time: each run here reads the events, as heaptrack_print does.
echo "== analysis: memlens summary vs heaptrack_print on the same run (the events read, the index removed before each run)"
interleaved "$out/s.json" "$runs" \
    --prepare "rm -f $trace.mlidx" \
    -n "memlens summary" "$memlens summary $trace" \
    -n heaptrack_print "heaptrack_print $(ls "$out"/rec/ht*.zst)"
read -r ms hp < <(median "$out/s.json")
python3 -c "import sys; e=int(sys.argv[1]); m,h=map(float,sys.argv[2:]); print(f'  memlens summary {m:.3f} s = {e/m/1e6:.1f} M events/s (target >= 30); heaptrack_print {h:.3f} s = {e/h/1e6:.1f} M events/s; ratio {h/m:.2f}x')" "$events" "$ms" "$hp"
rm -f "$trace.mlidx"
/usr/bin/time -f "  memlens summary peak RSS: %M KiB" "$memlens" summary "$trace" >/dev/null
/usr/bin/time -f "  memlens summary again, from the index the last one kept: %e s, %M KiB" \
    "$memlens" summary "$trace" >/dev/null
