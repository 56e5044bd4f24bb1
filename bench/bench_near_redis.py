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

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.redis_servers import RedisServer

from bench import _redismem
from bench.bench_redis_store import cpu_seconds
from trawl.dedup.minhash import MinHasher
from trawl.storage.redis.store import RedisCrawlStore


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


def run(url: str, pids: list[int], docs: int, related: float, seed: int) -> None:
    m = MinHasher()
    sigs = signatures(m, docs, related, seed)
    crawl = uuid.uuid4().hex[:12]
    store = RedisCrawlStore(url, crawl, worker="bench")
    index = store.near_index(m)
    used0 = _redismem.used_memory(url)
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
    used = _redismem.used_memory(url) - used0
    founders = index.count()
    usage: dict[str, int] = {}  # e, of, seq, b (the buckets), bx, ...
    for kind, (_keys, held) in _redismem.holders(url, crawl).items():
        if ":near:" in kind:
            group = kind.rsplit(":near:", 1)[1].split(":", 1)[0]
            usage[group] = usage.get(group, 0) + held
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
