# Sourced by the whole-command benchmarks (bench/*/run.sh): `measure NAME CMD…` runs
# CMD with stdout to $out/NAME.out and stderr to $out/NAME.err, and writes
# "SECONDS PEAK_RSS_KIB" to $out/NAME.time (GNU time when installed, else Python's
# getrusage of the one child). The caller sets $out; a failing CMD ends the script.
# `interleaved` (below) times commands side by side with hyperfine, in rounds, and
# `median` and `cpu` read its results.

if [ -x /usr/bin/time ]; then
    measure() {
        local name=$1; shift
        /usr/bin/time -f "%e %M" -o "$out/$name.time" "$@" >"$out/$name.out" 2>"$out/$name.err" \
            || { cat "$out/$name.err" >&2; echo "bench: $* failed" >&2; exit 1; }
    }
else
    measure() {
        local name=$1; shift
        python3 - "$out/$name" "$@" <<'PY' || { cat "$out/$name.err" >&2; echo "bench: $* failed" >&2; exit 1; }
import resource, subprocess, sys, time
base, argv = sys.argv[1], sys.argv[2:]
start = time.monotonic()
with open(base + ".out", "wb") as out, open(base + ".err", "wb") as err:
    code = subprocess.call(argv, stdout=out, stderr=err)
elapsed = time.monotonic() - start
# Only one child has run: RUSAGE_CHILDREN's maximum is its peak (KiB on Linux).
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
open(base + ".time", "w").write(f"{elapsed:.2f} {peak}\n")
sys.exit(code)
PY
    }
fi

# `interleaved JSON ROUNDS ARGS…` runs `hyperfine ARGS…` (its -n names, commands,
# --prepare…) ROUNDS times, each round one run of every command, one after the other,
# after a warm-up round, and writes to JSON what hyperfine's --export-json would have
# for them: per command the median wall time over the rounds ("median") and the median
# CPU time, user + system ("cpu"). A shared machine's load comes and goes over seconds:
# hyperfine's own runs take all of a command's runs before the next command's, which
# mixes that drift into the ratios between commands; rounds spread every command over
# the same stretch of time.
interleaved() {
    local json=$1 rounds=$2; shift 2
    hyperfine -N -r 1 --style none "$@" >/dev/null 2>&1 \
        || { echo "bench: hyperfine failed: $*" >&2; exit 1; }
    local r
    for r in $(seq "$rounds"); do
        hyperfine -N -r 1 --style none --export-json "$json.$r" "$@" >/dev/null 2>&1 \
            || { echo "bench: hyperfine failed: $*" >&2; exit 1; }
    done
    python3 - "$json" "$rounds" <<'PY'
import json, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])
rounds = [json.load(open(f"{out}.{r}"))["results"] for r in range(1, n + 1)]
merged = []
for i, first in enumerate(rounds[0]):
    runs = [results[i] for results in rounds]
    merged.append({
        "command": first["command"],
        "median": statistics.median(r["times"][0] for r in runs),
        "cpu": statistics.median(r["user"] + r["system"] for r in runs),
        "times": [r["times"][0] for r in runs],
    })
json.dump({"results": merged}, open(out, "w"))
PY
}

# `median JSON` and `cpu JSON`: each command's median wall time, and median CPU time
# (user + system of the command and its children), from `interleaved`'s JSON, in the
# commands' order on one line.
median() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(' '.join(str(r['median']) for r in d['results']))" "$1"; }
cpu() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(' '.join(str(r['cpu']) for r in d['results']))" "$1"; }
