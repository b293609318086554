#!/usr/bin/env bash
# Times `memlens view` from its start until its heap lens has answered the first tree
# (GET api/heap/tree, the request the viewer's page makes first), and until the
# allocation map, read in the background, answers (api/alloc/meta: 200, or 404 when it
# is left out); then stops it. Writes "SECONDS PEAK_RSS_KIB" at the first tree and
# "SECONDS PEAK_RSS_KIB STATUS" once the allocation map has answered (the viewer's
# VmHWM) to OUT and OUT.alloc; then times the heap lens's time steps and the
# allocation map's tiles (`view_steps.py`, into OUT.steps), and writes "SECONDS
# PEAK_RSS_KIB" once they are done to OUT.after.
#
# Usage: bench/index/first_tree.sh MEMLENS TRACE OUT
set -euo pipefail
memlens=$1 trace=$2 out=$3
log=$(mktemp)
start=$(date +%s.%N)
"$memlens" view --no-open "$trace" >"$log" 2>&1 &
pid=$!
url=""
while [ -z "$url" ]; do
    sleep 0.05
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "bench: memlens view stopped" >&2; exit 1; }
    url=$(grep -o 'http://[^ ]*' "$log" | head -n 1 || true)
done
curl -sf -o /dev/null "${url}api/heap/tree"
end=$(date +%s.%N)
hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
while :; do
    status=$(curl -s -o /dev/null -w '%{http_code}' "${url}api/alloc/meta")
    [ "$status" = 503 ] || break
    sleep 0.2
done
alloc_end=$(date +%s.%N)
alloc_hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
python3 "$(dirname "$0")/view_steps.py" "$url" "$out.steps" >&2
steps_end=$(date +%s.%N)
steps_hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
kill -INT "$pid"
wait "$pid" 2>/dev/null || true
grep -v -e '^memlens: viewing' -e 'press Ctrl-C' "$log" >&2 || true
echo "$(echo "$end - $start" | bc) $hwm" >"$out"
echo "$(echo "$alloc_end - $start" | bc) $alloc_hwm $status" >"$out.alloc"
echo "$(echo "$steps_end - $start" | bc) $steps_hwm" >"$out.after"
rm -f "$log"
