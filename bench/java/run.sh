#!/usr/bin/env bash
# Java agent benchmark: the cost of recording a Java program with
# `memlens record --java`, full mode (every allocation) and sampled mode
# (--java-sample BYTES), against the same program run without the agent
# (the baseline). Workload: the easyTravel-like leak of the Java tests
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
    -n sampled "$memlens record --java -q --force --java-sample $sample -o $out/sampled.mlens -- $prog" >/dev/null

rss() { # median peak RSS in KiB of RUNS runs of "$@" (the JVM is the largest child)
    for _ in $(seq "$runs"); do
        /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ {print $2}'
    done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
rss_plain=$(rss $prog)
rss_full=$(rss java -agentpath:"$target/release/libmemlens_jvmti.so"=quiet=1,output="$out/rss-full.mlens" -Xmx1g -cp "$out/classes" com.example.travel.JourneyService "$rounds" "$requests")
rss_sampled=$(rss java -agentpath:"$target/release/libmemlens_jvmti.so"=quiet=1,interval=$sample,output="$out/rss-sampled.mlens" -Xmx1g -cp "$out/classes" com.example.travel.JourneyService "$rounds" "$requests")
events_full=$("$memlens" dump "$out/full.mlens" | grep -c ' alloc tid=' || true)
events_sampled=$("$memlens" dump "$out/sampled.mlens" | grep -c ' alloc tid=' || true)

python3 - "$out/wall.json" "$rss_plain" "$rss_full" "$rss_sampled" "$events_full" "$events_sampled" \
    "$(stat -c %s "$out/full.mlens")" "$(stat -c %s "$out/sampled.mlens")" "$sample" <<'PY'
import json, sys
wall = {r["command"]: r["median"] for r in json.load(open(sys.argv[1]))["results"]}
rss = dict(zip(["unprofiled", "full", "sampled"], map(int, sys.argv[2:5])))
allocs = dict(zip(["full", "sampled"], map(int, sys.argv[5:7])))
size = dict(zip(["full", "sampled"], map(int, sys.argv[7:9])))
base_t, base_m = wall["unprofiled"], rss["unprofiled"]
print(f"{'mode':<28}{'wall s':>9}{'slowdown':>10}{'peak RSS MiB':>14}{'RSS ratio':>11}{'allocations':>13}{'trace':>10}")
print(f"{'unprofiled (baseline)':<28}{base_t:>9.2f}{1:>9.2f}x{base_m/1024:>14.1f}{1:>10.2f}x{'-':>13}{'-':>10}")
for mode, label in [("full", "full (every allocation)"), ("sampled", f"sampled ({sys.argv[9]} B)")]:
    print(f"{label:<28}{wall[mode]:>9.2f}{wall[mode]/base_t:>9.2f}x{rss[mode]/1024:>14.1f}"
          f"{rss[mode]/base_m:>10.2f}x{allocs[mode]:>13}{size[mode]/2**20:>8.1f}MB")
PY
