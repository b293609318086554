#!/usr/bin/env bash
# Attach benchmark: the overhead of `memlens attach` while attached, side by side
# with `memlens record`'s on the same program. The shared workload
# ../shared/bench/alloc-bench.c (mixed sizes, malloc/calloc/realloc/free) runs
# behind a gate (gated.c) that times only the workload: alone, under
# `memlens record`, and in a process that started first and waited until
# `memlens attach` had attached to it. Each mode runs RUNS times, interleaved
# (native, record, attach, native, …) so the machine's noise hits them alike;
# the medians and the two ratios attached/native and record/native are printed.
#
# Usage: bench/attach/run.sh [OPS] [RUNS] [THREADS]   (defaults: 2000000 5 1)
# Needs: a C compiler, ptrace permission (root, or ptrace_scope 0), a release
# build of memlens (the script runs `cargo build --release` first).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ops=${1:-2000000}
runs=${2:-5}
threads=${3:-1}
shared="$root/../shared/bench"
[ -f "$shared/alloc-bench.c" ] || { echo "bench: $shared/alloc-bench.c not found (the shared workload lives beside the repository)" >&2; exit 1; }
(cd "$root" && cargo build --release --quiet -p memlens -p memlens-preload)
memlens="${CARGO_TARGET_DIR:-$root/target}/release/memlens"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -g -fno-omit-frame-pointer -pthread -I "$shared" "$here/gated.c" -o "$out/gated"

native() { "$out/gated" "$threads" "$ops" 2>/dev/null; }
recorded() { "$memlens" record -q -f -o "$out/r.mlens" -- "$out/gated" "$threads" "$ops" 2>/dev/null; }
attached() {
    rm -f "$out/gate" "$out/a.mlens" "$out/attach.err"
    GATE="$out/gate" "$out/gated" "$threads" "$ops" >"$out/attached.out" 2>/dev/null &
    local pid=$!
    sleep 0.2 # past the loader's start-up: the program waits at its gate
    "$memlens" attach "$pid" -f -o "$out/a.mlens" 2>"$out/attach.err" &
    local attach=$!
    until grep -q "attached to process" "$out/attach.err" 2>/dev/null; do
        kill -0 "$attach" 2>/dev/null || { cat "$out/attach.err" >&2; exit 1; }
        sleep 0.01
    done
    touch "$out/gate"
    wait "$pid"
    wait "$attach" || { cat "$out/attach.err" >&2; exit 1; }
    cat "$out/attached.out"
}

echo "== alloc-bench, $threads thread(s), $ops calls, $runs runs of each mode, interleaved; time of the workload only"
: >"$out/native"; : >"$out/record"; : >"$out/attach"
for _ in $(seq "$runs"); do
    native >>"$out/native"
    recorded >>"$out/record"
    attached >>"$out/attach"
done
python3 - "$out" "$memlens" <<'PY'
import statistics, subprocess, sys
out, memlens = sys.argv[1], sys.argv[2]
med = {m: statistics.median(float(l) for l in open(f"{out}/{m}") if l.strip()) for m in ("native", "record", "attach")}
n, r, a = med["native"], med["record"], med["attach"]
print(f"  median: native {n:.3f} s, record {r:.3f} s, attached {a:.3f} s")
print(f"  record/native {r/n:.2f}x, attached/native {a/n:.2f}x; attached/record {a/r:.2f} (target ~1.00)")
for mode, trace in (("record", "r.mlens"), ("attach", "a.mlens")):
    line = subprocess.run([memlens, "summary", f"{out}/{trace}"], capture_output=True, text=True).stdout.splitlines()[2]
    print(f"  last {mode} trace:{line}")
PY
