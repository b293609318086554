#!/usr/bin/env bash
# The live view as a user runs it: `memlens record` of the request-serving program
# (crates/memlens/tests/heap_programs/server.c: 2 threads, temporaries, a bounded
# cache, a slow leak), serving a steady RATE requests a second per thread for SECONDS
# (8 events a request: 2 × 60,000 × 8 ≈ 1 M events/s by default, 58 M events in a
# minute), and, while it runs, `memlens view --no-open` of its trace,
# whose page asks `api/live` how far the viewer has read. This script asks the same
# every 0.2 s and reports, over the run: how many updates the viewer made while the
# program ran, how long each read took (the server's own figure, `read_ms`), how far
# behind the recording the view was (the recorded run minus what the view shows,
# sampled at each poll, including the wait for the read after the program has ended),
# how long that last read took, and the viewer's peak RSS. Every poll is kept in
# bench/out/live/NAME.polls.tsv.
#
#   bench/live/run.sh [SECONDS [RATE]]     (default 60 s, 60000 requests/s a thread)
#
# VIEW_AFTER=S opens the viewer S seconds into the recording (a program recorded for a
# while before anyone looks), and reports how long the view then took to come within
# 2 s of the recording. BASELINE=/path/to/memlens runs the same with another build first (e.g. one built
# from an earlier commit, which read the whole trace again at every update) and prints
# the ratios side by side. heaptrack, bytehound and DHAT have no live view; memray's
# live mode shows only the current snapshot. A benchmark, not a test: it reports.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-60}
rate=${2:-60000}
requests=$((seconds * rate))
out="$root/bench/out/live"
mkdir -p "$out"
memlens="$root/target/release/memlens"
[ -x "$memlens" ] || (cd "$root" && cargo build --release -q -p memlens)
cc -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -pthread \
    "$root/crates/memlens/tests/heap_programs/server.c" -o "$out/server"

# One run: record the server with RECORDER while VIEWER follows the trace.
run() {
    local name=$1 viewer=$2
    python3 - "$name" "$memlens" "$viewer" "$out" "$requests" "$rate" "${VIEW_AFTER:-0}" <<'PY'
import json, os, re, statistics, subprocess, sys, time, urllib.error, urllib.request
name, recorder, viewer, out, requests, rate, view_after = sys.argv[1:]
view_after = float(view_after)
trace = f"{out}/{name}.mlens"
for stale in (trace, trace + ".mlidx"):
    if os.path.exists(stale):
        os.remove(stale)
start = time.monotonic()
rec = subprocess.Popen([recorder, "record", "-q", "-f", "-o", trace, "--",
                        f"{out}/server", "2", requests, rate], stdout=subprocess.DEVNULL)
while not os.path.exists(trace) or os.path.getsize(trace) < 4096:
    time.sleep(0.05)
time.sleep(0.3 + view_after)
view_started = time.monotonic() - start
view = subprocess.Popen([viewer, "view", "--no-open", trace], stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL, text=True)
url = None
for line in view.stdout:
    m = re.search(r"(http://\S+)", line)
    if m:
        url = m.group(1).rstrip("/")
        break
samples, generations, reads = [], set(), []
while True:
    try:
        live = json.load(urllib.request.urlopen(f"{url}/api/live", timeout=30))
    except urllib.error.HTTPError as e:
        sys.exit(f"bench: the viewer does not follow the trace ({e}): the program ended "
                 "before it opened; give it more requests")
    except OSError:  # the viewer is busy: try again
        time.sleep(0.2)
        continue
    now = time.monotonic() - start
    if live["generation"] not in generations:
        generations.add(live["generation"])
        if live["running"]:
            reads.append(live["read_ms"])
    size = os.path.getsize(trace)
    samples.append((now, live["running"], live["recorded_ns"], size))
    if not live["running"]:
        final_ms = live["read_ms"]
        break
    time.sleep(0.2)
rec.wait()
with open(f"/proc/{view.pid}/status") as f:
    hwm = int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1)) // 1024
view.terminate()
view.wait()
records = json.loads(subprocess.run([recorder, "summary", "--json", trace], capture_output=True,
                                    text=True).stdout or "{}")
events = sum(records.get(k, 0) for k in ("allocations", "frees", "reallocations"))
# How far behind: at each poll while running, the run recorded so far (wall time since
# the recording started) minus what the view shows; reported as the median and the
# largest, and when the view first came within 2 s of the recording after it opened.
running = [s for s in samples if s[1]]
behind = [max(0.0, s[0] - s[2] / 1e9) for s in running]
caught = next((s[0] - view_started for s, b in zip(running, behind) if b < 2.0), None)
result = {
    "name": name, "updates": len(reads), "read_ms_median": statistics.median(reads) if reads else 0,
    "read_ms_max": max(reads) if reads else 0, "read_ms_last": reads[-1] if reads else 0,
    "behind_median_s": statistics.median(behind) if behind else 0,
    "behind_max_s": max(behind) if behind else 0, "final_read_ms": final_ms,
    "run_s": samples[-1][0], "peak_mib": hwm, "events": events,
    "view_after_s": view_after, "caught_up_s": caught if caught is not None else float("nan"),
    "trace_mb": os.path.getsize(trace) / 1e6,
}
json.dump(result, open(f"{out}/{name}.json", "w"))
with open(f"{out}/{name}.polls.tsv", "w") as polls:
    polls.write("wall_s\trunning\tshown_s\ttrace_bytes\n")
    for s in samples:
        polls.write(f"{s[0]:.2f}\t{int(s[1])}\t{s[2] / 1e9:.3f}\t{s[3]}\n")
print(f"{name}: {result['updates']} updates while running, read {result['read_ms_median']:.0f} ms "
      f"median / {result['read_ms_max']:.0f} max / {result['read_ms_last']:.0f} last; view behind "
      f"the recording {result['behind_median_s']:.1f} s median / {result['behind_max_s']:.1f} s "
      f"max; read after the end {final_ms} ms; viewer peak {hwm} MiB; {events / 1e6:.1f} M events, "
      f"{result['trace_mb']:.0f} MB trace, {result['run_s']:.1f} s; opened {view_after:.0f} s in, "
      f"within 2 s of the recording {result['caught_up_s']:.1f} s after")
os.remove(trace)
PY
}

echo "== the server, 2 threads × $rate requests/s for $seconds s (~$((requests * 16 / 1000000)) M events), followed live"
if [ -n "${BASELINE:-}" ]; then
    run baseline "$BASELINE"
fi
run memlens "$memlens"
if [ -n "${BASELINE:-}" ]; then
    python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
b, m = (json.load(open(f"{out}/{n}.json")) for n in ("baseline", "memlens"))
def ratio(key):
    return b[key] / m[key] if m[key] else float("inf")
print("== memlens against the baseline build, same workload")
print(f"{'':28} {'baseline':>10} {'memlens':>10} {'ratio':>8}")
for key, label in [("updates", "updates while running"), ("read_ms_median", "read, median ms"),
                   ("read_ms_max", "read, max ms"), ("read_ms_last", "read, last ms"),
                   ("behind_median_s", "behind, median s"), ("behind_max_s", "behind, max s"),
                   ("final_read_ms", "read after the end, ms"), ("peak_mib", "viewer peak MiB"),
                   ("caught_up_s", "opened, then within 2 s, s")]:
    r = m[key] / b[key] if key == "updates" and b[key] else ratio(key)
    print(f"{label:28} {b[key]:>10.1f} {m[key]:>10.1f} {r:>7.2f}×")
PY
fi
