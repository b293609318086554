#!/usr/bin/env bash
# Cache-lens throughput as the user runs it, side by side with pycachesim on the
# same references and configuration, printed as M refs/s and the ratio
# "memlens / pycachesim".
#
# memlens: the whole command `memlens cache simulate TRACE --json` (process start,
# trace reading and decoding, simulation, windowed miss rates, temperature, JSON),
# timed with hyperfine, on the memlens trace of the N×N double matrix multiply
# (`memlens cache kernel matmul --n N`; N = 256 gives 33.7 M references).
# pycachesim: its bulk `loadstore` API on exactly the same references (written as
# 9-byte records by crates/memlens-cache/examples/cache_bench.rs), timed inside
# Python around the simulate call only (best of 3): the list building that Python
# needs first is not counted, which favours pycachesim.
# The kernel inside the command: `cache_bench simulation`, the same Simulation
# (statistics per level and region, windowed miss rates, temperature) over the same
# matmul stream generated in memory, so without reading or decoding (best of 5).
# The target (>= 150 M references/s) is on one core: the command is timed again
# with `taskset -c 0` (10 runs).
# All: 2-level LRU, L1 32 KiB 8-way, L2 256 KiB 8-way, 64-byte lines, write-back,
# write-allocate, non-inclusive. The hit and miss counts are compared.
#
# Usage: bench/cache/run.sh [N]. Needs hyperfine (else /usr/bin/time) and, for the
# ratio, python3 with pycachesim (`pip install pycachesim`). ENGINE=1 also runs the
# engine's in-process benchmark (statistics only, event stream, Lackey import).
# A benchmark, not a test: it reports, it does not assert.
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-256}
out=bench/out/cache
mkdir -p "$out"
target=${CARGO_TARGET_DIR:-target}

cargo build --quiet --release -p memlens
cargo build --quiet --release -p memlens-cache --example cache_bench
memlens="$target/release/memlens"
bench="$target/release/examples/cache_bench"

mlens="$out/matmul$n.mlens"
"$memlens" cache kernel matmul --n "$n" -o "$mlens" 2>"$out/kernel.txt"
refs=$(awk '{ print $3 }' "$out/kernel.txt")
trace="$out/matmul$n.trace"
if [ "$n" = 256 ]; then
    "$bench" write-trace "$trace" "$refs"
fi
levels=(--level L1:32K:8:64 --level L2:256K:8:64)
cmd="$memlens cache simulate $mlens --json ${levels[*]}"
"$memlens" cache simulate "$mlens" --json "${levels[@]}" >"$out/memlens.json"

echo "== memlens cache simulate ($refs references), whole command"
if command -v hyperfine >/dev/null; then
    hyperfine --warmup 1 --runs 5 --export-json "$out/hyperfine.json" "$cmd >/dev/null"
    secs=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results'][0]['mean'])" \
        "$out/hyperfine.json")
    cpu_secs=$(python3 -c "import json,sys; r = json.load(open(sys.argv[1]))['results'][0]; \
print(r['user'] + r['system'])" "$out/hyperfine.json")
else
    start=$(date +%s.%N)
    for _ in 1 2 3; do $cmd >/dev/null; done
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print (b - a) / 3 }')
    cpu_secs=$secs
fi
memlens_rate=$(awk -v r="$refs" -v s="$secs" 'BEGIN { printf "%.1f", r / s / 1e6 }')
# Per CPU-second too: on a shared machine the wall time also counts waiting for a core.
memlens_cpu_rate=$(awk -v r="$refs" -v s="$cpu_secs" 'BEGIN { printf "%.1f", r / s / 1e6 }')

# The target's condition: the same command with one core (the decoding then runs in
# place, not on a thread of its own).
one_rate=""
if command -v taskset >/dev/null && command -v hyperfine >/dev/null; then
    echo "== the same command on one core (taskset -c 0)"
    hyperfine --warmup 1 --runs 10 --export-json "$out/hyperfine-one-core.json" \
        "taskset -c 0 $cmd >/dev/null"
    one_secs=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results'][0]['mean'])" \
        "$out/hyperfine-one-core.json")
    one_rate=$(awk -v r="$refs" -v s="$one_secs" 'BEGIN { printf "%.1f", r / s / 1e6 }')
fi

kernel_rate=""
if [ "$n" = 256 ]; then
    echo "== the kernel: Simulation::access_all on the same references, in memory"
    "$bench" simulation | tee "$out/simulation.txt"
    kernel_rate=$(awk '$1 == "simulation_refs_per_s" { printf "%.1f", $2 / 1e6 }' "$out/simulation.txt")
    kernel_cpu_rate=$(awk '$1 == "simulation_refs_per_cpu_s" { printf "%.1f", $2 / 1e6 }' \
        "$out/simulation.txt")
fi

py_rate=""
if [ "$n" != 256 ]; then
    echo "== pycachesim needs the 256×256 trace (cache_bench writes only that one): no ratio"
elif python3 -c "import cachesim" 2>/dev/null; then
    echo "== pycachesim bulk loadstore (same references and configuration, in-process)"
    python3 bench/cache/pycachesim_bench.py "$trace" --once | tee "$out/pycachesim.txt"
    py_rate=$(awk '$1 == "pycachesim_refs_per_s" { printf "%.1f", $2 / 1e6 }' "$out/pycachesim.txt")
    py_cpu_rate=$(awk '$1 == "pycachesim_refs_per_cpu_s" { printf "%.1f", $2 / 1e6 }' \
        "$out/pycachesim.txt")
else
    echo "== pycachesim is not installed (pip install pycachesim): no ratio"
fi

if [ "${ENGINE:-0}" = 1 ] && [ "$n" = 256 ]; then
    echo "== engine alone (in-process, statistics only / event stream / Lackey import)"
    "$bench" run "$trace" | tee "$out/engine.txt"
fi

echo "== results (M refs/s: wall, and per CPU-second)"
echo "memlens cache simulate --json, whole command: $memlens_rate, $memlens_cpu_rate per CPU-s ($secs s)"
if [ -n "$one_rate" ]; then
    echo "the same command on one core:                 $one_rate ($one_secs s)   (target >= 150)"
fi
if [ -n "$kernel_rate" ]; then
    echo "memlens kernel (Simulation, no decoding):     $kernel_rate, $kernel_cpu_rate per CPU-s"
fi
if [ -n "$py_rate" ]; then
    echo "pycachesim bulk loadstore, simulate call:     $py_rate, $py_cpu_rate per CPU-s"
    awk -v a="$memlens_rate" -v b="$py_rate" -v c="$memlens_cpu_rate" -v d="$py_cpu_rate" \
        'BEGIN { printf "memlens / pycachesim, whole command:          %.2f (per CPU-s %.2f)\n", a / b, c / d }'
    if [ -n "$one_rate" ]; then
        awk -v a="$one_rate" -v b="$py_rate" \
            'BEGIN { printf "memlens one core / pycachesim:                %.2f\n", a / b }'
    fi
    if [ -n "$kernel_rate" ]; then
        awk -v a="$kernel_rate" -v b="$py_rate" -v c="$kernel_cpu_rate" -v d="$py_cpu_rate" \
            'BEGIN { printf "memlens kernel / pycachesim:                  %.2f (per CPU-s %.2f)\n", a / b, c / d }'
    fi
    python3 - "$out/memlens.json" "$out/pycachesim.txt" <<'EOF'
import json, sys
levels = json.load(open(sys.argv[1]))["levels"]
py = dict(line.split() for line in open(sys.argv[2]) if len(line.split()) == 2)
for i, level in enumerate(levels):
    for key in ("hits", "misses"):
        a, b = level[key], int(py[f"l{i + 1}_{key}"])
        print(f"  L{i + 1} {key}: memlens {a}, pycachesim {b} ({'same' if a == b else 'DIFFERENT'})")
EOF
fi
