#!/usr/bin/env bash
# Java agent benchmark: the cost of recording a Java program with
# `memlens record --java`, full mode (every allocation, with the default heap
# walks for the containing data structure: at most one per second plus one at
# the end), full mode without heap walks (--java-heap-walks none) and sampled
# mode (--java-sample BYTES), against the same program run without the agent
# (the baseline); and each heap walk's time, from the trace. Workload: the easyTravel-like leak of the Java tests
# (crates/memlens/tests/programs/java/com/example/travel/JourneyService.java).
# Wall time is the median of RUNS runs (hyperfine); peak RSS is the median
# of RUNS runs of /usr/bin/time -v. Prints ratios against the baseline.
#
# Usage: bench/java/run.sh [ROUNDS] [REQUESTS] [RUNS] [SAMPLE_BYTES]
#        (defaults: 20 20000 5 65536)
# Needs: a JDK (java, javac), hyperfine, GNU time (/usr/bin/time); builds
# memlens and the agent with `cargo build --release` first.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${1:-20}
requests=${2:-20000}
runs=${3:-5}
sample=${4:-65536}
for tool in java javac hyperfine /usr/bin/time python3; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is not installed (apt-get install default-jdk-headless hyperfine time)" >&2; exit 1; }
done
(cd "$root" && cargo build --release --quiet -p memlens -p memlens-jvmti)
target=${CARGO_TARGET_DIR:-$root/target}
memlens="$target/release/memlens"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
javac -d "$out/classes" "$root/crates/memlens/tests/programs/java/com/example/travel/JourneyService.java"
prog="java -Xmx1g -cp $out/classes com.example.travel.JourneyService $rounds $requests"

echo "== JourneyService $rounds rounds x $requests requests, $runs runs each (hyperfine)"
hyperfine -N -w 1 -r "$runs" --export-json "$out/wall.json" --style basic \
    -n unprofiled "$prog" \
    -n full "$memlens record --java -q --force -o $out/full.mlens -- $prog" \
    -n nowalks "$memlens record --java -q --force --java-heap-walks none -o $out/nowalks.mlens -- $prog" \
    -n sampled "$memlens record --java -q --force --java-sample $sample -o $out/sampled.mlens -- $prog" >/dev/null

rss() { # median peak RSS in KiB of RUNS runs of "$@" (the JVM is the largest child)
    for _ in $(seq "$runs"); do
        /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ {print $2}'
    done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
rss_plain=$(rss $prog)
rss_full=$(rss java -agentpath:"$target/release/libmemlens_jvmti.so"=quiet=1,output="$out/rss-full.mlens" -Xmx1g -cp "$out/classes" com.example.travel.JourneyService "$rounds" "$requests")
rss_nowalks=$(rss java -agentpath:"$target/release/libmemlens_jvmti.so"=quiet=1,heap_walks=none,output="$out/rss-nowalks.mlens" -Xmx1g -cp "$out/classes" com.example.travel.JourneyService "$rounds" "$requests")
rss_sampled=$(rss java -agentpath:"$target/release/libmemlens_jvmti.so"=quiet=1,interval=$sample,output="$out/rss-sampled.mlens" -Xmx1g -cp "$out/classes" com.example.travel.JourneyService "$rounds" "$requests")
events_full=$("$memlens" dump "$out/full.mlens" | grep -c ' alloc tid=' || true)
events_sampled=$("$memlens" dump "$out/sampled.mlens" | grep -c ' alloc tid=' || true)
events_nowalks=$("$memlens" dump "$out/nowalks.mlens" | grep -c ' alloc tid=' || true)
# Each heap walk of the last full run: its duration, and the references it followed.
"$memlens" dump "$out/full.mlens" | awk '/ heap-walk /{for(i=1;i<=NF;i++){split($i,kv,"="); if(kv[1]=="duration_ns")d=kv[2]; if(kv[1]=="pause_ns")p=kv[2]; if(kv[1]=="references")r=kv[2]} print $1, d, p, r}' > "$out/walks.txt"
gcs=$("$memlens" dump "$out/full.mlens" | grep -c 'name="GC [0-9]* end"' || true)

python3 - "$out/wall.json" "$rss_plain" "$rss_full" "$rss_sampled" "$events_full" "$events_sampled" \
    "$(stat -c %s "$out/full.mlens")" "$(stat -c %s "$out/sampled.mlens")" "$sample" \
    "$rss_nowalks" "$events_nowalks" "$(stat -c %s "$out/nowalks.mlens")" "$out/walks.txt" "$gcs" <<'PY'
import json, sys
wall = {r["command"]: r["median"] for r in json.load(open(sys.argv[1]))["results"]}
rss = dict(zip(["unprofiled", "full", "sampled", "nowalks"], map(int, sys.argv[2:5] + [sys.argv[10]])))
allocs = dict(zip(["full", "sampled", "nowalks"], map(int, sys.argv[5:7] + [sys.argv[11]])))
size = dict(zip(["full", "sampled", "nowalks"], map(int, sys.argv[7:9] + [sys.argv[12]])))
base_t, base_m = wall["unprofiled"], rss["unprofiled"]
print(f"{'mode':<28}{'wall s':>9}{'slowdown':>10}{'peak RSS MiB':>14}{'RSS ratio':>11}{'allocations':>13}{'trace':>10}")
print(f"{'unprofiled (baseline)':<28}{base_t:>9.2f}{1:>9.2f}x{base_m/1024:>14.1f}{1:>10.2f}x{'-':>13}{'-':>10}")
for mode, label in [("nowalks", "full, no heap walks"), ("full", "full + heap walks (1/s)"),
                    ("sampled", f"sampled ({sys.argv[9]} B)")]:
    print(f"{label:<28}{wall[mode]:>9.2f}{wall[mode]/base_t:>9.2f}x{rss[mode]/1024:>14.1f}"
          f"{rss[mode]/base_m:>10.2f}x{allocs[mode]:>13}{size[mode]/2**20:>8.1f}MB")
print(f"heap walks vs. the agent without them: {wall['full']/wall['nowalks']:.2f}x wall, "
      f"{rss['full']/rss['nowalks']:.2f}x peak RSS")
walks = [tuple(map(int, l.split())) for l in open(sys.argv[13]) if l.strip()]
if walks:
    ms = [d / 1e6 for _, d, _, _ in walks]
    pause = sum(p for _, _, p, _ in walks) / 1e6
    print(f"heap walks in the last full run: {len(walks)} at {sys.argv[14]} collections, "
          f"{sum(ms):.0f} ms in total ({pause:.0f} ms with the JVM stopped), "
          f"per walk median {sorted(ms)[len(ms)//2]:.1f} ms, max {max(ms):.1f} ms")
    for t, d, p, r in walks:
        print(f"  walk at {t/1e9:7.2f} s: {d/1e6:8.1f} ms ({p/1e6:7.1f} ms paused), "
              f"{r:>9} references, {d/max(r,1):6.1f} ns per reference")
PY
