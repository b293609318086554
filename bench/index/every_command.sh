#!/usr/bin/env bash
# Every analysis command on one large trace: records the shared workload
# ../shared/bench/alloc-bench.c (2 threads) to about EVENTS events, then times each
# command as a user runs it and measures its peak RSS (GNU time; the viewer's VmHWM
# through first_tree.sh): the first `growth` (which reads every event and writes the
# index and the summary), `growth` and `tree` reopened from the index, `summary`
# (from the index, then from the events with the index moved aside), `export --format
# pprof`, `render alloc` and `alloc metrics` (the allocation map within its memory
# budget), another window of the map (`render alloc --time 90%..90.5%`: from the
# latest checkpoint before it that the first `render alloc` kept in the index, then
# with the index moved aside, read from the run's start as every window was before
# checkpoints; the two pictures compared), `report`, and `view` until its first tree
# and until its allocation map, then the view's time steps and allocation-map tiles
# (`view_steps.py`).
# Prints a table and PASS/MISS for the Scale issue's targets at 10⁹ events: the index
# built in ≤ 5 min on 2 cores, every command's peak RSS ≤ 3 GiB, the index ≤ 50 % of
# the trace's size, a viewer time step ≤ 100 ms, any allocation-map tile ≤ 100 ms.
#
# Usage: bench/index/every_command.sh [EVENTS]   (default 1000000000: a trace of ≈ 3 GB)
# Env:   BENCH_OUT=DIR keeps the recording there and reuses it on the next run
#        (default: a fresh temporary directory, removed at the end).
# Needs: a release build (the script runs `cargo build --release`), cc, curl, python3.
# A benchmark, not a test: it reports, it does not assert (exit 0 on MISS).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
events=${1:-1000000000}
src="$root/../shared/bench/alloc-bench.c"
[ -f "$src" ] || { echo "bench: $src not found (the shared workload lives beside the repository)" >&2; exit 1; }
(cd "$root" && cargo build --release --quiet -p memlens -p memlens-preload)
target=${CARGO_TARGET_DIR:-$root/target}
memlens="$target/release/memlens"
if [ -n "${BENCH_OUT:-}" ]; then
    out=$BENCH_OUT
    mkdir -p "$out"
else
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
fi
# alloc-bench's CALLS are shared by its threads, and each makes about 2.125 events (an
# allocation, its free, and for an eighth of them a realloc).
calls=$((events * 8 / 17))

. "$here/../measure.sh"

trace="$out/bench-$events.mlens"
if [ ! -f "$trace" ]; then
    # Built only to record: a kept recording keeps the binary it names, so its frames
    # stay symbolized (a rebuilt binary's build id differs, and its frames go unnamed).
    cc -O2 -g -fno-omit-frame-pointer -pthread "$src" -o "$out/bench"
    echo "== recording alloc-bench, 2 threads, $calls calls"
    "$memlens" record -q -f -o "$trace" -- "$out/bench" 2 "$calls"
fi
recorded=$("$memlens" summary --json "$trace" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["allocations"]+d["frees"]+d["reallocations"])')
trace_bytes=$(stat -c %s "$trace")
echo "trace: $recorded events, $((trace_bytes / 1000000)) MB"

index="$trace.mlidx"
rm -f "$index"
run() {
    local name=$1; shift
    echo "== memlens $*"
    measure "$name" "$memlens" "$@"
}
run growth1 growth "$trace"
index_bytes=$(stat -c %s "$index")
run growth2 growth "$trace"
run tree tree --points 50 "$trace"
# The first growth read every event, so it kept the summary in the index too; a
# summary from the events is timed with the index moved aside.
run summary2 summary "$trace"
mv "$index" "$index.kept"
run summary summary "$trace"
mv "$index.kept" "$index"
run pprof export --format pprof -o "$out/t.pb.gz" "$trace"
run render render alloc "$trace" -o "$out/map.png"
# Another window: from a checkpoint, then from the run's start.
window=(--time 90%..90.5%)
run window render alloc "$trace" "${window[@]}" -o "$out/window.png"
map_index_bytes=$(stat -c %s "$index")
mv "$index" "$index.kept"
run window0 render alloc "$trace" "${window[@]}" -o "$out/window0.png"
mv "$index.kept" "$index"
if cmp -s "$out/window.png" "$out/window0.png"; then same=same; else same=DIFFERENT; fi
echo "the window's two pictures: $same" > "$out/window.same"
run metrics alloc metrics "$trace"
run report report "$trace" -o "$out/report.html"
echo "== memlens view until the first tree and until the allocation map"
"$here/first_tree.sh" "$memlens" "$trace" "$out/view.time"

python3 - "$out" "$recorded" "$trace_bytes" "$index_bytes" "$map_index_bytes" <<'PY'
import sys
out, events, trace_bytes, index_bytes, map_index_bytes = sys.argv[1], *map(int, sys.argv[2:6])

def measured(file):
    s, kb = open(f"{out}/{file}").read().split()[:2]
    return float(s), int(kb)

rows = [
    ("growth, first (reads the events, writes the index)", "growth1.time"),
    ("growth, reopened from the index", "growth2.time"),
    ("tree --points 50 (index)", "tree.time"),
    ("summary after growth (the index: growth kept it)", "summary2.time"),
    ("summary with no index (reads the events)", "summary.time"),
    ("export --format pprof", "pprof.time"),
    ("render alloc (within its memory budget)", "render.time"),
    ("render alloc --time 90%..90.5% (from a checkpoint)", "window.time"),
    ("render alloc --time 90%..90.5% (no index: from the run's start)", "window0.time"),
    ("alloc metrics (within its memory budget)", "metrics.time"),
    ("report", "report.time"),
    ("view, first tree (index)", "view.time"),
    ("view, allocation map drawn", "view.time.alloc"),
    ("view, after its time steps and tiles (view_steps.py)", "view.time.after"),
]
print(f"\n{events / 1e6:.0f} M events, {trace_bytes / 1e9:.2f} GB trace")
print(f"{'command':<66} {'seconds':>9} {'peak MiB':>9}")
peak = 0
for label, file in rows:
    s, kb = measured(file)
    peak = max(peak, kb)
    print(f"{label:<66} {s:>9.2f} {kb / 1024:>9.1f}")
print(open(f"{out}/window.same").read().strip())
resumed, from_start = measured("window.time")[0], measured("window0.time")[0]
print(f"another window: {resumed:.2f} s from a checkpoint, {from_start:.2f} s from the run's start ({from_start / resumed:.1f}x)")
print(f"index: {index_bytes / 1e6:.1f} MB after growth, {map_index_bytes / 1e6:.1f} MB with the map's window and checkpoints")
built = measured("growth1.time")[0]
index_bytes = max(index_bytes, map_index_bytes)
share = index_bytes / trace_bytes
targets = [
    ("index built ≤ 5 min on 2 cores", built <= 300, f"{built:.1f} s"),
    ("every command's peak RSS ≤ 3 GiB", peak <= 3 * 1024 * 1024, f"largest {peak / 1024:.0f} MiB"),
    ("index ≤ 50 % of the trace", share <= 0.5, f"{index_bytes / 1e6:.1f} MB = {100 * share:.2f} %"),
]
steps = open(f"{out}/view.time.steps").read().splitlines()
step, tile = steps[0].split()
print("\n".join(steps[1:]))
targets.append(("a viewer time step ≤ 100 ms", float(step) <= 0.1, f"slowest {float(step) * 1000:.0f} ms"))
if tile != "none":
    targets.append(("any allocation-map tile ≤ 100 ms", float(tile) <= 0.1, f"slowest {float(tile) * 1000:.0f} ms"))
for label, ok, value in targets:
    print(f"{'PASS' if ok else 'MISS'}  {label}: {value}")
PY
