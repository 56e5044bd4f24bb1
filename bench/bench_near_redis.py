"""The fleet's near-duplicate index in Redis: memory and CPU per document.

    .venv/bin/python bench/bench_near_redis.py [--docs 100000] [--related 0.2]

Starts its own redis-server on loopback (standalone: a cluster keeps the whole index
on the primary of its one hash tag, at the same cost and some bytes a key more) and
claims ``--docs`` founders through ``RedisNearIndex``, as the parse stage of a fleet
does for every page kept: most signatures random (no band shared), ``--related`` of
them made from an earlier one with half its values changed (similarity about 0.5 on
either side of the threshold: some are found as near copies, the rest are founders
that share bands with others, so a band's list of founders grows). Then 5,000
lookups, half of them near copies. Prints the server's memory per founder (the near
keys' ``MEMORY USAGE``, and ``used_memory``), and the CPU of a claim and of a
lookup in the client and in the server. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.redis_servers import RedisServer

from trawl.dedup.minhash import MinHasher
from trawl.storage.redis.conn import Conn
from trawl.storage.redis.store import RedisCrawlStore

_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` (fields 14 and 15 of /proc/<pid>/stat)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def signatures(m: MinHasher, docs: int, related: float, seed: int) -> list[bytes]:
    rng = np.random.default_rng(seed)
    out: list[bytes] = []
    for _ in range(docs):
        if out and rng.random() < related:
            v = np.frombuffer(out[int(rng.integers(len(out)))], dtype="<u4").copy()
            changed = rng.choice(m.perms, m.perms // 2, replace=False)
            v[changed] = rng.integers(0, 2**32, len(changed), dtype=np.uint32)
        else:
            v = rng.integers(0, 2**32, m.perms, dtype=np.uint32)
        out.append(v.astype("<u4").tobytes())
    return out


def _near_keys(conn: Conn, pattern: str) -> list[bytes]:
    cursor: Any = 0
    found: list[bytes] = []
    while True:
        cursor, keys = conn.call("SCAN", cursor, "MATCH", pattern, "COUNT", 10_000)
        found += keys
        if int(cursor) == 0:
            return found


def run(url: str, pids: list[int], docs: int, related: float, seed: int) -> None:
    m = MinHasher()
    sigs = signatures(m, docs, related, seed)
    crawl = uuid.uuid4().hex[:12]
    store = RedisCrawlStore(url, crawl, worker="bench")
    conn = store.conn
    index = store.near_index(m)
    used0 = _used_memory(store)
    client0, servers0 = cpu_seconds(os.getpid()), sum(cpu_seconds(p) for p in pids)
    started = time.perf_counter()
    found = 0
    for n, s in enumerate(sigs):
        doc = f"{n:064x}"  # a page's key: as long as the crawl's
        found += index.claim(s, doc, doc) is not None
        if n % 500 == 499:
            store.commit()
    store.commit()
    wall = time.perf_counter() - started
    client = cpu_seconds(os.getpid()) - client0
    servers = sum(cpu_seconds(p) for p in pids) - servers0
    used = _used_memory(store) - used0
    founders = index.count()
    usage: dict[str, int] = {}
    for key in _near_keys(conn, f"*{crawl}/n*"):
        name = key.decode()
        group = name.rsplit(":near:", 1)[-1].split(":", 1)[0]
        usage[group] = usage.get(group, 0) + int(conn.call("MEMORY", "USAGE", name, "SAMPLES", 0))
    parts = ", ".join(f"{g} {b / founders:,.0f}" for g, b in sorted(usage.items()))
    print(
        f"  {docs:,} claims ({found:,} near copies found, {founders:,} founders) in {wall:.1f} s: "
        f"client {client / docs * 1e6:,.0f} CPU-us and server {servers / docs * 1e6:,.0f} "
        f"CPU-us a claim"
    )
    print(
        f"  memory a founder: near keys {sum(usage.values()) / founders:,.0f} bytes "
        f"({parts}); used_memory {used / founders:,.0f} bytes; "
        f"{sum(usage.values()) / 2**20:,.1f} MiB in all"
    )
    rng = np.random.default_rng(seed + 1)
    queries = []
    for n in range(5_000):
        q = np.frombuffer(sigs[int(rng.integers(docs))], dtype="<u4").copy()
        if n % 2:  # a near copy: a third of the values changed
            q[rng.choice(m.perms, m.perms // 3, replace=False)] = 7
        else:
            q = rng.integers(0, 2**32, m.perms, dtype=np.uint32)
        queries.append(q.astype("<u4").tobytes())
    client0, servers0 = cpu_seconds(os.getpid()), sum(cpu_seconds(p) for p in pids)
    hits = sum(index.find(q) is not None for q in queries)
    client = cpu_seconds(os.getpid()) - client0
    servers = sum(cpu_seconds(p) for p in pids) - servers0
    print(
        f"  {len(queries):,} lookups ({hits:,} hits): client {client / len(queries) * 1e6:,.0f} "
        f"CPU-us and server {servers / len(queries) * 1e6:,.0f} CPU-us a lookup"
    )
    store.close()


def _used_memory(store: RedisCrawlStore) -> int:
    return int(store.conn.call("INFO", "memory")["used_memory"])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--docs", type=int, default=100_000)
    p.add_argument("--related", type=float, default=0.2, help="share made from an earlier one")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp) / "standalone", appendfsync="off")
        try:
            print(f"standalone redis-server, {args.docs:,} documents, {args.related:.0%} related")
            run(server.url, [server.pid], args.docs, args.related, args.seed)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
