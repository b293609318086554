#!/usr/bin/env bash
# Cache-lens throughput, measured side by side with pycachesim on the same trace
# and configuration, printed as ratios "memlens / pycachesim".
#
#   (a) statistics only, 2-level LRU (L1 32 KiB 8-way, L2 256 KiB 8-way, 64-B lines)
#   (b) the same with the full per-reference event stream consumed
#   (c) Lackey text import, MB/s
#
# The trace is the first REFS (default 10,000,000) references of the standard
# 256×256 double matrix multiply (crates/memlens-cache/examples/cache_bench.rs).
# Usage: bench/cache/run.sh [REFS]. Needs python3 with pycachesim for the ratios
# (`pip install pycachesim`); uses hyperfine for whole-process timings if present,
# else /usr/bin/time. A benchmark, not a test: it reports, it does not assert.
set -euo pipefail
cd "$(dirname "$0")/../.."
refs=${1:-10000000}
out=bench/out/cache
mkdir -p "$out"
target=${CARGO_TARGET_DIR:-target}

# CACHE_BENCH names an already built cache_bench binary (skips the build).
bench=${CACHE_BENCH:-}
if [ -z "$bench" ]; then
    cargo build --quiet --release -p memlens-cache --example cache_bench
    bench="$target/release/examples/cache_bench"
fi
trace="$out/matmul256.trace"
"$bench" write-trace "$trace" "$refs"

echo "== memlens (in-process timings, best of several runs)"
"$bench" run "$trace" | tee "$out/memlens.txt"

have_pycachesim=0
if python3 -c "import cachesim" 2>/dev/null; then
    have_pycachesim=1
    echo "== pycachesim (bulk loadstore API, same trace and configuration)"
    python3 bench/cache/pycachesim_bench.py "$trace" | tee "$out/pycachesim.txt"
else
    echo "== pycachesim is not installed (pip install pycachesim): no ratios"
fi

value() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

echo "== results (per CPU-second of the measuring thread; wall-clock figures in the logs above)"
rate() { awk -v x="$1" 'BEGIN { printf "%.1f", x / 1e6 }'; }
stats=$(value "$out/memlens.txt" stats_refs_per_cpu_s)
events=$(value "$out/memlens.txt" events_refs_per_cpu_s)
buffered=$(value "$out/memlens.txt" buffered_events_refs_per_cpu_s)
lackey=$(value "$out/memlens.txt" lackey_mb_per_cpu_s)
echo "(a) statistics only, 2-level LRU:       $(rate "$stats") M refs/s   (target >= 150)"
echo "(b) full event stream, visitor:         $(rate "$events") M refs/s   (target >= 40)"
echo "    full event stream, per-ref buffer:  $(rate "$buffered") M refs/s"
echo "(c) Lackey import:                      $lackey MB/s   (target >= 50)"
if [ "$have_pycachesim" = 1 ]; then
    py=$(value "$out/pycachesim.txt" pycachesim_refs_per_cpu_s)
    pyl=$(value "$out/pycachesim.txt" python_lackey_mb_per_cpu_s)
    echo "pycachesim bulk loadstore:              $(rate "$py") M refs/s"
    echo "memlens / pycachesim, statistics only:   $(ratio "$stats" "$py")"
    echo "memlens / pycachesim, full event stream: $(ratio "$events" "$py")"
    echo "memlens / Python line parser, Lackey:    $(ratio "$lackey" "$pyl")"
    for key in l1_hits l1_misses l2_hits l2_misses; do
        a=$(value "$out/memlens.txt" "$key"); b=$(value "$out/pycachesim.txt" "$key")
        [ "$a" = "$b" ] && same=same || same=DIFFERENT
        echo "  $key: memlens $a, pycachesim $b ($same)"
    done
fi

echo "== whole process (trace loading included)"
if command -v hyperfine >/dev/null; then
    cmds=("$bench stats $trace")
    [ "$have_pycachesim" = 1 ] && cmds+=("python3 bench/cache/pycachesim_bench.py $trace --once")
    hyperfine --warmup 1 --runs 3 "${cmds[@]}"
else
    for i in 1 2 3; do
        /usr/bin/time -f "memlens stats: %e s wall, %M KiB max RSS" "$bench" stats "$trace" 2>&1 | tail -1
    done
    if [ "$have_pycachesim" = 1 ]; then
        /usr/bin/time -f "pycachesim: %e s wall, %M KiB max RSS" \
            python3 bench/cache/pycachesim_bench.py "$trace" --once 2>&1 >/dev/null | tail -1
    fi
fi
