#!/usr/bin/env python3
"""Oracle for memlens-cache: runs reference traces through pycachesim and prints its
per-level hit and miss counts, so the Rust test `pycachesim_oracle.rs` can compare.

Input (stdin, JSON):
  {"cases": [{"levels": [{"name": "L1", "sets": 64, "ways": 8, "line": 64,
                          "policy": "LRU" | "FIFO",
                          "write_back": true, "write_allocate": true}, ...],
              "trace": [["L" | "S", address, length], ...]}, ...]}
Output (stdout): one line per case and level: `CASE LEVEL HIT MISS`.
Exit status 3 (and a message on stderr) when `import cachesim` fails.

How the two simulators are configured to be comparable (the mapping):
- Hierarchy: pycachesim levels are chained with `load_from` and `store_to` pointing at
  the next level, and main memory attached to the last one. That is a non-inclusive
  (NINE) hierarchy without victim caches, which is memlens's `Inclusion::NonInclusive`.
- Geometry: pycachesim takes sets, ways and line size; memlens takes
  size = sets x ways x line. Both map a line to set `line % sets` (any set count).
- Replacement: pycachesim's "LRU" and "FIFO" keep a per-set queue: a fill goes to the
  front and the back is evicted (empty ways are at the back, so they fill first); an
  LRU load hit moves the line to the front. memlens's Lru/Fifo are the same. pycachesim
  "RR" uses C rand() with an unknown seed and cannot be compared; "MRU" has no memlens
  counterpart.
- Write policies: only the pairs pycachesim supports and whose semantics match:
  (write-back, write-allocate) and (write-through, no-write-allocate). pycachesim's
  write-back + no-write-allocate injects a dirty line without fetching it, which is not
  memlens's no-write-allocate, so it is not used.
- Stores: pycachesim's store path never updates replacement state, even on a hit in
  the first level. memlens does the same for writes arriving from an upper level
  (write-backs, write-through), but a CPU store that hits the first level makes the
  line most recently used there. The traces therefore only store to an address right
  after loading it (read-modify-write, where the line already is the most recent) when
  the first level is LRU; with a FIFO first level, hits change nothing in either
  simulator and stores are fully random.
- Counting: pycachesim counts HIT and MISS per cache line in `Cache__load` only:
  loads, line fetches for the level above, and write-allocate misses (a store miss,
  or a dirty line written back into a level that does not hold it, loads the line
  first). So, per level:
    HIT  == memlens read_hits
    MISS == memlens read_misses + (write_misses + writeback_misses if the level is
            write-allocate, else 0).
  Straddling accesses count once per line in both.
- API: only the bulk `loadstore(list, length=...)` API is used; the single-address
  `load(addr)` API truncates 64-bit addresses (RRZE-HPC/pycachesim#15). One `length`
  applies to a whole call, so runs of equal lengths are sent as separate calls, which
  keeps the order of loads and stores.
"""

import json
import sys

try:
    from cachesim import Cache, CacheSimulator, MainMemory
except ImportError as error:  # pragma: no cover - depends on the machine
    print(f"pycachesim is not installed ({error}); install it with `pip install pycachesim`",
          file=sys.stderr)
    sys.exit(3)


def build(levels):
    """Chains the levels (first level first) as a NINE hierarchy over main memory."""
    memory = MainMemory()
    below = None
    caches = []
    for spec in reversed(levels):
        cache = Cache(spec["name"], spec["sets"], spec["ways"], spec["line"],
                      replacement_policy=spec["policy"],
                      write_back=spec["write_back"],
                      write_allocate=spec["write_allocate"],
                      load_from=below, store_to=below)
        if below is None:
            memory.load_to(cache)
            memory.store_from(cache)
        caches.append(cache)
        below = cache
    caches.reverse()
    return CacheSimulator(caches[0], memory), caches


def run(case):
    simulator, caches = build(case["levels"])
    trace = case["trace"]
    start = 0
    while start < len(trace):
        length = trace[start][2]
        end = start
        batch = []
        while end < len(trace) and trace[end][2] == length:
            kind, addr, _ = trace[end]
            batch.append(((addr,), None) if kind == "L" else (None, (addr,)))
            end += 1
        simulator.loadstore(batch, length=length)
        start = end
    return [(c.backend.HIT_count, c.backend.MISS_count) for c in caches]


def main():
    cases = json.load(sys.stdin)["cases"]
    out = []
    for index, case in enumerate(cases):
        for level, (hit, miss) in enumerate(run(case)):
            out.append(f"{index} {level} {hit} {miss}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
