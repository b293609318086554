# Sourced by the whole-command benchmarks (bench/*/run.sh): `measure NAME CMD…` runs
# CMD with stdout to $out/NAME.out and stderr to $out/NAME.err, and writes
# "SECONDS PEAK_RSS_KIB" to $out/NAME.time (GNU time when installed, else Python's
# getrusage of the one child). The caller sets $out; a failing CMD ends the script.

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
