"""Frontier alone at scale: inserts/s, takes/s, bytes on disk per URL, peak RSS.

    .venv/bin/python bench/bench_frontier.py [--urls 10000000] [--hosts 100000]

URLs arrive in batches the size of a page's links (spread over many hosts, as a
broad crawl discovers them), committed in groups as the crawler does. Then the first
``--chunk`` URLs are offered again, as links to pages already known: once as depth
order offers them (seen, nothing to do) and once as OPIC does (each with a gain that
raises the queued URL's cash and key), alternating, to price the raise.
"""

from __future__ import annotations

import argparse
import random
import resource
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import xxhash

from trawl.models import NewUrl, UrlStatus
from trawl.storage.sqlite.db import Database
from trawl.storage.sqlite.frontier import SqliteFrontier
from trawl.storage.sqlite.frontier_state import FRONTIER_HOSTS


def _fp(url: str) -> int:
    return xxhash.xxh3_64_intdigest(url.encode()) - (1 << 63)


_WORDS = ["news", "article", "product", "category", "2026", "page", "item", "tag", "blog"]


def _batches(
    n_urls: int, n_hosts: int, batch: int, seed: int, *, local: float
) -> list[list[NewUrl]]:
    """Batches of new links as pages yield them: a share ``local`` on the page's own host."""
    rng = random.Random(seed)
    out: list[list[NewUrl]] = []
    current: list[NewUrl] = []
    page_host = rng.randrange(n_hosts)
    for i in range(n_urls):
        h = page_host if rng.random() < local else rng.randrange(n_hosts)
        host = f"host{h:06d}.example"
        path = f"/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}-{seed}-{i}/{rng.randrange(10**6)}.html"
        url = f"https://{host}{path}"
        depth = 1 + (i % 5)
        current.append(NewUrl(url=url, fp=_fp(url), host=host, depth=depth, priority=depth))
        if len(current) == batch:
            out.append(current)
            current = []
            page_host = rng.randrange(n_hosts)
    if current:
        out.append(current)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=10_000_000)
    parser.add_argument("--hosts", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=40, help="new links per page")
    parser.add_argument(
        "--local",
        type=float,
        default=0.8,
        help="share of a page's links on its own host (0 = every link on a random host)",
    )
    parser.add_argument("--commit-every", type=int, default=500, help="pages per commit")
    parser.add_argument("--chunk", type=int, default=200_000, help="URLs generated at a time")
    parser.add_argument("--takes", type=int, default=500_000)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument(
        "--frontier-hosts",
        type=int,
        default=FRONTIER_HOSTS,
        help="hosts the frontier holds in its schedule (memory.frontier_hosts)",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        db = Database(Path(tmp) / "state.db")
        frontier = SqliteFrontier(db, active_hosts=args.frontier_hosts)
        insert_wall = insert_cpu = 0.0
        done = 0
        seed = 0
        while done < args.urls:
            n = min(args.chunk, args.urls - done)
            batches = _batches(n, args.hosts, args.batch, seed, local=args.local)
            seed += 1
            t0, c0 = time.perf_counter(), time.process_time()
            for i, b in enumerate(batches):
                frontier.add(b, now=0.0)
                if i % args.commit_every == args.commit_every - 1:
                    db.commit()
            db.commit()
            insert_wall += time.perf_counter() - t0
            insert_cpu += time.process_time() - c0
            done += n
            if done % 1_000_000 < n:
                print(f"  {done:>11,} URLs queued, {done / insert_wall:,.0f}/s so far", flush=True)
        del batches
        queued = frontier.counts()[UrlStatus.QUEUED]

        again = _batches(min(args.chunk, args.urls), args.hosts, args.batch, 0, local=args.local)
        offers = {
            "seen (depth order)": again,
            "seen + raise (OPIC)": [[replace(u, gain=1e-4) for u in b] for b in again],
        }
        seen_cpu = dict.fromkeys(offers, 0.0)
        for _round in range(3):
            for label, batches in offers.items():
                c0 = time.process_time()
                for i, b in enumerate(batches):
                    frontier.add(b, now=0.0)
                    if i % args.commit_every == args.commit_every - 1:
                        db.commit()
                db.commit()
                seen_cpu[label] += time.process_time() - c0
        offered = 3 * sum(len(b) for b in again)

        t0, c0 = time.perf_counter(), time.process_time()
        now = 1.0
        taken = 0
        while taken < args.takes:
            lease = frontier.take(now)
            if lease is None:
                now += 1.0
                continue
            frontier.finish(lease, UrlStatus.FETCHED, host_ready_at=now + 1.0)
            taken += 1
            if taken % 2_000 == 0:
                db.commit()
        db.commit()
        take_wall = time.perf_counter() - t0
        take_cpu = time.process_time() - c0

        db_bytes = sum(p.stat().st_size for p in Path(tmp).glob("state.db*"))
        rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        db.close()

    print(
        f"URLs queued:        {queued:,} over {args.hosts:,} hosts, "
        f"{args.frontier_hosts:,} of them held in the schedule"
    )
    print(
        f"inserts:            {args.urls / insert_wall:,.0f} URLs/s wall, "
        f"{args.urls / insert_cpu:,.0f} URLs/CPU-s "
        f"(batches of {args.batch}, {args.local:.0%} on the page's host)"
    )
    for label, cpu in seen_cpu.items():
        print(
            f"{label + ':':<22}{offered / cpu:,.0f} URLs/CPU-s ({1e6 * cpu / offered:.2f} us each)"
        )
    print(
        f"takes (take+finish): {args.takes / take_wall:,.0f}/s wall, "
        f"{args.takes / take_cpu:,.0f}/CPU-s"
    )
    print(f"bytes on disk/URL:  {db_bytes / args.urls:,.1f}")
    print(f"peak RSS:           {rss_mib:,.0f} MiB")


if __name__ == "__main__":
    main()
