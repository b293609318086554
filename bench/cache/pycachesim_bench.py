#!/usr/bin/env python3
"""pycachesim baseline for bench/cache/run.sh.

Replays the trace written by `cache_bench write-trace` through pycachesim's bulk
API with the same 2-level LRU hierarchy as the Rust benchmark (L1 32 KiB 8-way,
L2 256 KiB 8-way, 64-byte lines, write-back + write-allocate, levels chained with
load_from/store_to, i.e. non-inclusive), and times a plain Python parser of the
same Lackey text as the import baseline.

Usage: pycachesim_bench.py TRACE [--once]
Prints `key value` lines, each rate both per wall-clock second and per second of
this thread's CPU time (steadier on a shared machine). With --once it simulates
once and skips the parser (for whole-process timing).

The references go to one ordered `loadstore` call of (loads, stores) groups: each
run of loads followed by a run of stores is one tuple, which for the matrix
multiply is one tuple per C element (2N+1 loads, 1 store) -- pycachesim's fastest
ordered bulk form (55-65 M refs/s on the project's 2-core machine). Only bulk APIs
are used: the single-address `load(addr)` truncates 64-bit addresses
(RRZE-HPC/pycachesim#15). The timing covers the simulate call only.
"""

import struct
import sys
import time

from cachesim import Cache, CacheSimulator, MainMemory


def hierarchy():
    memory = MainMemory()
    l2 = Cache("L2", 512, 8, 64, "LRU")
    memory.load_to(l2)
    memory.store_from(l2)
    l1 = Cache("L1", 64, 8, 64, "LRU", store_to=l2, load_from=l2)
    return CacheSimulator(l1, memory), l1, l2


def read_trace(path):
    """The 9-byte records: little-endian u64 address, then 0 (load) or 1 (store)."""
    with open(path, "rb") as f:
        data = f.read()
    records = list(struct.iter_unpack("<QB", data[: len(data) - len(data) % 9]))
    return [a for a, _ in records], [k for _, k in records]


def groups(addrs, kinds):
    """Ordered (loads, stores) tuples: a run of loads followed by a run of stores."""
    out = []
    loads, stores = [], []
    for addr, kind in zip(addrs, kinds):
        if kind == 0:
            if stores:
                out.append((loads, stores))
                loads, stores = [], []
            loads.append(addr)
        else:
            stores.append(addr)
    if loads or stores:
        out.append((loads, stores))
    return out


def lackey_text(addrs, kinds, limit):
    lines = ["==1== Lackey, an example Valgrind tool"]
    for i, (addr, kind) in enumerate(zip(addrs[:limit], kinds[:limit])):
        lines.append("I  %08x,4" % (0x109150 + (i % 64) * 4))
        lines.append(" %s %08x,8" % ("S" if kind else "L", addr))
    return ("\n".join(lines) + "\n").encode()


def parse_lackey(text):
    refs = []
    for line in text.split(b"\n"):
        parts = line.split()
        if len(parts) == 2 and parts[0] in (b"L", b"S", b"M"):
            addr, size = parts[1].split(b",")
            refs.append((parts[0], int(addr, 16), int(size)))
    return refs


def main():
    path = sys.argv[1]
    once = "--once" in sys.argv
    addrs, kinds = read_trace(path)
    work = groups(addrs, kinds)
    n = len(addrs)
    print(f"references {n}")
    best, best_cpu = 0.0, 0.0
    for _ in range(1 if once else 3):
        simulator, l1, l2 = hierarchy()
        start, start_cpu = time.perf_counter(), time.thread_time()
        simulator.loadstore(work, length=8)
        best = max(best, n / (time.perf_counter() - start))
        best_cpu = max(best_cpu, n / max(time.thread_time() - start_cpu, 1e-9))
    print(f"pycachesim_refs_per_s {best:.0f}")
    print(f"pycachesim_refs_per_cpu_s {best_cpu:.0f}")
    print(f"l1_hits {l1.backend.HIT_count}\nl1_misses {l1.backend.MISS_count}")
    print(f"l2_hits {l2.backend.HIT_count}\nl2_misses {l2.backend.MISS_count}")
    if once:
        return
    limit = min(n, 2_000_000)
    text = lackey_text(addrs, kinds, limit)
    start, start_cpu = time.perf_counter(), time.thread_time()
    parsed = parse_lackey(text)
    rate = len(text) / (time.perf_counter() - start) / 1e6
    rate_cpu = len(text) / max(time.thread_time() - start_cpu, 1e-9) / 1e6
    print(f"python_lackey_refs {len(parsed)}")
    print(f"python_lackey_mb_per_s {rate:.1f}")
    print(f"python_lackey_mb_per_cpu_s {rate_cpu:.1f}")


if __name__ == "__main__":
    main()
