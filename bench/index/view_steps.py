#!/usr/bin/env python3
"""What a user waits for in `memlens view` once it has opened a trace: a time step of the
heap lens and the allocation map's tiles, timed over HTTP as the viewer's page asks.

- time steps: `api/heap/tree?by=site&times=T` at 20 instants evenly spread over the run
  (each a new instant, as when the user drags the time cursor);
- tiles: the allocation map's 256 × 256 grid tiles (`api/alloc/tile?zx=Z&zy=Z&x=X&y=Y`)
  of levels 0 to 3 (at most 16 of each level), coloured by thread (the default), each
  asked for once (the viewer caches a tile it has drawn: these are first draws);
- a new colouring: the first tile of levels 0 and 2 coloured by waste right after the
  tiles above (the viewer may still be preparing colourings ahead in the background),
  then, 5 s later (a user looking at the map first), coloured by site, size and age;
  each followed by a second tile of that colouring (beside it, or of the next level);
- the whole-run strip of a map that holds a window of the run (`api/alloc/whole_run`),
  drawn, then again (cached).

Usage: view_steps.py URL OUT — URL the viewer's (ending in `/`); writes a summary line
per measure to OUT and prints them. The allocation map must have answered already
(`api/alloc/meta` 200); when it is left out (404) only the time steps are measured.
"""
import json
import statistics
import sys
import time
import urllib.error
import urllib.request

url, out = sys.argv[1], sys.argv[2]


def get(path):
    """Seconds to fetch `path` whole, and its body (None when not 200)."""
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(url + path, timeout=600) as r:
            body = r.read()
    except urllib.error.HTTPError:
        return time.perf_counter() - start, None
    return time.perf_counter() - start, body


def summary(label, seconds):
    ms = [s * 1000 for s in seconds]
    return f"{label}: {len(ms)} requests, median {statistics.median(ms):.1f} ms, max {max(ms):.1f} ms"


lines = []
_, meta = get("api/heap/meta")
run = json.loads(meta)["run"]
start, end = run["start_ns"], run["end_ns"]
steps = []
for k in range(20):
    t = start + (end - start) * k // 19
    s, body = get(f"api/heap/tree?by=site&times={t}")
    if body is None:
        sys.exit(f"bench: the tree at {t} ns was refused")
    steps.append(s)
lines.append(summary("time step", steps))

_, alloc = get("api/alloc/meta")
if alloc is not None:
    tiles = []
    for z in range(4):
        n = 1 << z
        for x in range(min(n, 4)):
            for y in range(min(n, 4)):
                s, body = get(f"api/alloc/tile?zx={z}&zy={z}&x={x}&y={y}")
                if body is None:
                    sys.exit(f"bench: the tile {z}/{x}/{y} was refused")
                tiles.append(s)
    lines.append(summary("tile, thread colouring", tiles))

    def colourings(colors):
        first, second = [], []
        for color in colors:
            for z in (0, 2):
                s, _ = get(f"api/alloc/tile?zx={z}&zy={z}&x=0&y=0&color={color}")
                first.append(s)
                # The next tile: beside it (level 0 has one tile per axis: the
                # next level's first).
                zx, x = (z, 1) if z > 0 else (1, 0)
                s, body = get(f"api/alloc/tile?zx={zx}&zy={zx}&x={x}&y=0&color={color}")
                if body is None:
                    sys.exit(f"bench: the tile {zx}/{x}/0 coloured by {color} was refused")
                second.append(s)
        return first, second

    right_away, right_away_next = colourings(["waste"])
    lines.append(summary("tile, first of a new colouring right away", right_away))
    time.sleep(5)
    first, second = colourings(["site", "size", "age"])
    lines.append(summary("tile, first of a new colouring 5 s later", first))
    lines.append(summary("tile, next of that colouring", right_away_next + second))
    worst_tile = max(tiles + right_away + right_away_next + first + second)
    if json.loads(alloc).get("whole_run"):
        # The whole-run strip of a window: its picture as the page asks for it, drawn
        # then cached.
        strip = [get("api/alloc/whole_run?w=1024&h=128")[0] for _ in range(2)]
        lines.append(f"whole-run strip: {strip[0] * 1000:.1f} ms, again {strip[1] * 1000:.1f} ms")
else:
    worst_tile = None
with open(out, "w") as f:
    f.write(f"{max(steps)} {worst_tile if worst_tile is not None else 'none'}\n")
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
