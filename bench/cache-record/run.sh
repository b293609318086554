#!/usr/bin/env bash
# bench/cache-record/run.sh — memlens cache record against Valgrind's Lackey
# (`--tool=lackey --trace-mem=yes`, the baseline: the only zero-build way to
# get every memory reference of a program) on the same matrix multiply, side by
# side with hyperfine. Prints references per second, the speed-up over Lackey
# and bytes per reference on disk for both.
#
#   bench/cache-record/run.sh [N_SIDE_BY_SIDE] [N_LARGE]
#
# N_SIDE_BY_SIDE (default 128) sizes the run both recorders make (Lackey runs
# at about 1 M references/s, so keep it small); N_LARGE (default 384, about
# 114 M data references) is recorded by memlens alone, for its sustained rate.
# Needs valgrind, cc, make, hyperfine and a release build of memlens
# (MEMLENS=path/to/memlens, default target/release/memlens or
# $CARGO_TARGET_DIR/release/memlens).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
memlens=${MEMLENS:-${CARGO_TARGET_DIR:-$root/target}/release/memlens}
small=${1:-128}
large=${2:-384}
for tool in valgrind cc make hyperfine; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is missing" >&2; exit 1; }
done
[ -x "$memlens" ] || { echo "run.sh: $memlens is missing: cargo build --release -p memlens" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -g -o "$work/matmul" "$root/crates/memlens/tests/programs/matmul_plain.c"
# Build the tool once, outside the timings.
"$memlens" cache record -q --force -o "$work/warm.mlens" -- "$work/matmul" 4 >/dev/null || true

refs_of() { # the reference count memlens printed
    sed -n 's/.*wrote \([0-9]*\) references.*/\1/p' "$1"
}

echo "== side by side: matmul_plain $small"
"$memlens" cache record --force -o "$work/d.mlens" -- "$work/matmul" "$small" >/dev/null 2>"$work/d.log" || true
"$memlens" cache record --instructions --force -o "$work/i.mlens" -- "$work/matmul" "$small" >/dev/null 2>"$work/i.log" || true
valgrind -q --tool=lackey --trace-mem=yes --log-file="$work/lackey.txt" "$work/matmul" "$small" >/dev/null || true
d_refs=$(refs_of "$work/d.log")
i_refs=$(refs_of "$work/i.log")
lackey_refs=$(grep -c '^[ I][ LSM] ' "$work/lackey.txt" || true)
d_bytes=$(stat -c %s "$work/d.mlens")
i_bytes=$(stat -c %s "$work/i.mlens")
lackey_bytes=$(stat -c %s "$work/lackey.txt")

hyperfine --warmup 1 --runs "${RUNS:-5}" -i --export-json "$work/small.json" \
    -n lackey "valgrind -q --tool=lackey --trace-mem=yes --log-file=$work/lackey.txt $work/matmul $small" \
    -n memlens "$memlens cache record -q --force -o $work/d.mlens -- $work/matmul $small" \
    -n memlens-instructions "$memlens cache record -q --instructions --force -o $work/i.mlens -- $work/matmul $small" \
    >/dev/null

echo "== memlens alone: matmul_plain $large"
"$memlens" cache record --force -o "$work/big.mlens" -- "$work/matmul" "$large" >/dev/null 2>"$work/big.log" || true
big_refs=$(refs_of "$work/big.log")
big_bytes=$(stat -c %s "$work/big.mlens")
hyperfine --runs "${RUNS_LARGE:-3}" -i --export-json "$work/large.json" \
    -n memlens-large "$memlens cache record -q --force -o $work/big.mlens -- $work/matmul $large" \
    >/dev/null

python3 - "$work" "$d_refs" "$i_refs" "$lackey_refs" "$d_bytes" "$i_bytes" "$lackey_bytes" \
    "$big_refs" "$big_bytes" <<'PY'
import json, sys
work = sys.argv[1]
d_refs, i_refs, l_refs, d_bytes, i_bytes, l_bytes, big_refs, big_bytes = map(int, sys.argv[2:])
mean = {r["command"]: r["mean"] for f in ("small", "large")
        for r in json.load(open(f"{work}/{f}.json"))["results"]}
lk = l_refs / mean["lackey"]
rows = [
    ("Lackey (I+D, text)", l_refs, mean["lackey"], l_bytes),
    ("memlens (data)", d_refs, mean["memlens"], d_bytes),
    ("memlens --instructions (I+D)", i_refs, mean["memlens-instructions"], i_bytes),
    ("memlens (data), large run", big_refs, mean["memlens-large"], big_bytes),
]
print(f"{'recorder':32} {'references':>12} {'seconds':>8} {'M refs/s':>9} {'vs Lackey':>10} {'B/ref':>8}")
for name, refs, secs, size in rows:
    rate = refs / secs
    print(f"{name:32} {refs:12d} {secs:8.2f} {rate/1e6:9.1f} {rate/lk:9.1f}x {size/refs:8.3f}")
print(f"same program, wall time: Lackey / memlens = {mean['lackey']/mean['memlens']:.1f}x, "
      f"Lackey / memlens --instructions = {mean['lackey']/mean['memlens-instructions']:.1f}x")
print(f"bytes per reference: Lackey {l_bytes/l_refs:.1f}, memlens {d_bytes/d_refs:.3f} "
      f"({(l_bytes/l_refs)/(d_bytes/d_refs):.0f}x smaller)")
PY
