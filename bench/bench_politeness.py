"""Politeness across crawls: what the shared host lease costs, and what it buys.

    python -m bench.bench_politeness [--hosts 10] [--pages 40] [--delay 0.2] [--pairs 20000]

1. Cost: CPU microseconds (process time) per fetch of the lease's two calls (acquire,
   then release), on each backend: memory, the SQLite file (``storage/sqlite/
   hostleases.py``) alone, the SQLite file while another process works the same file
   on other hosts, and Redis when a ``redis-server`` binary is on PATH.
2. Effect: two ``trawl crawl`` processes crawl the same sample web at the same time
   (every home page as a seed, the Crawl-delay host left out), first each alone
   (``--politeness-dir none``: what two crawls in one ``trawl serve`` did before
   issue 13), then sharing the leases. The web server's request log counts, per host,
   requests that overlapped another and gaps shorter than the delay (10 ms of slack
   for the server's own late end marks), and the crawlers' CPU per 1,000 requests.
3. No regression alone: one crawl of a bigger sample web with no delay (every fetch
   takes and gives back a lease), with and without the leases, alternated twice:
   CPU seconds per 1,000 pages of the whole process tree.

Figures are printed, never asserted; run it on an idle machine for absolute numbers
(the ratios between rows of one run are what to compare).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import multiprocessing
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from trawl.storage.base import HostLeases
from trawl.storage.memory.hostleases import MemoryHostLeases
from trawl.storage.sqlite.hostleases import SqliteHostLeases
from trawl.testing.requestlog import RequestLog
from trawl.testing.sampleweb import SampleWeb, SampleWebServer

HOLDER = "bench:1:a"


def _pairs(leases: HostLeases, pairs: int, *, prefix: str = "h") -> float:
    """CPU µs per acquire + release on 1,000 hosts, time moving 1 ms a call."""
    now = 1_700_000_000.0
    started = time.process_time()
    for i in range(pairs):
        host = f"{prefix}{i % 1000}.example"
        now += 0.001
        leases.acquire(host, holder=HOLDER, now=now, ttl=60.0)
        leases.release(host, holder=HOLDER, now=now, ready_at=now)
    return (time.process_time() - started) / pairs * 1e6


def _hammer(directory: str, stop_after: float) -> None:
    leases = SqliteHostLeases(Path(directory))
    end = time.monotonic() + stop_after
    while time.monotonic() < end:
        _pairs(leases, 500, prefix="other")


def cost(pairs: int) -> None:
    print(f"cost per fetch (acquire + release), {pairs:,} fetches on 1,000 hosts:")
    print(f"  memory                      {_pairs(MemoryHostLeases(), pairs):8.1f} CPU-µs")
    with tempfile.TemporaryDirectory() as tmp:
        leases = SqliteHostLeases(Path(tmp))
        print(f"  sqlite file, alone          {_pairs(leases, pairs):8.1f} CPU-µs")
        wall = time.monotonic()
        other = multiprocessing.get_context("spawn").Process(target=_hammer, args=(tmp, 60.0))
        other.start()
        time.sleep(0.5)
        try:
            us = _pairs(leases, pairs)
            took = time.monotonic() - wall - 0.5
            print(
                f"  sqlite file, another process on it "
                f"{us:8.1f} CPU-µs ({took / pairs * 1e6:.0f} µs wall a fetch)"
            )
        finally:
            other.terminate()
            other.join()
        leases.close()
    server = shutil.which("redis-server")
    if server is None:
        print("  redis                       (no redis-server on PATH)")
        return
    from trawl.storage.redis.hostleases import RedisHostLeases

    with tempfile.TemporaryDirectory() as tmp:
        port = 26_379
        proc = subprocess.Popen(
            [server, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", tmp],
            stdout=subprocess.DEVNULL,
        )
        try:
            time.sleep(0.5)
            redis = RedisHostLeases(f"redis://127.0.0.1:{port}/0")
            n = min(pairs, 5000)
            wall = time.monotonic()
            us = _pairs(redis, n)
            took = (time.monotonic() - wall) / n * 1e6
            print(f"  redis (loopback)            {us:8.1f} CPU-µs ({took:.0f} µs wall a fetch)")
            redis.close()
        finally:
            proc.terminate()
            proc.wait()


def violations(log: RequestLog, hosts: list[str], delay: float) -> tuple[int, int, int]:
    """(requests, overlaps, short gaps) over ``hosts`` in the server's log."""
    total = overlaps = short = 0
    for host in hosts:
        records = sorted(log.requests_for(host), key=lambda r: r.started)
        total += len(records)
        for before, after in itertools.pairwise(records):
            end = before.finished if before.finished is not None else time.monotonic()
            if after.started < end:
                overlaps += 1
            elif after.started - end < delay - 0.01:
                short += 1
    return total, overlaps, short


async def two_crawls(web: SampleWeb, delay: float, shared: bool, tmp: Path) -> None:
    hosts = [h for h in web.hosts if web.plan(h).crawl_delay is None]
    async with SampleWebServer(web, log=True) as srv:
        resolve = tmp / "resolve.txt"
        resolve.write_text("".join(f"{h}={ip}\n" for h, ip in srv.resolve_map().items()))
        common = ["--allow-network", "127.0.0.0/8", "--resolve-file", str(resolve)]
        common += ["--delay", str(delay), "--scope", "allowlist", "--quiet"]
        common += [arg for h in hosts for arg in ("--allow-host", h)]
        common += ["--politeness-dir", str(tmp / "hosts") if shared else "none"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        procs = [
            await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "trawl",
                "crawl",
                *(srv.url(h) for h in hosts),
                "--data",
                str(tmp / f"crawl-{i}-{shared}"),
                *common,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for i in range(2)
        ]
        await asyncio.gather(*(p.wait() for p in procs))
        took = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        assert srv.log is not None
        total, overlaps, short = violations(srv.log, hosts, delay)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    label = "shared leases" if shared else "each alone   "
    print(
        f"  {label}  {total:6,} requests in {took:5.1f} s: {overlaps:5,} overlapping, "
        f"{short:5,} gaps under {delay} s; crawlers {cpu / total * 1000:.2f} CPU-s / 1,000 "
        "requests"
    )


async def one_crawl(web: SampleWeb, shared: bool, tmp: Path) -> float:
    """CPU seconds per 1,000 requests of one crawl, delay 0."""
    hosts = [h for h in web.hosts if web.plan(h).crawl_delay is None]
    async with SampleWebServer(web) as srv:
        resolve = tmp / "resolve.txt"
        resolve.write_text("".join(f"{h}={ip}\n" for h, ip in srv.resolve_map().items()))
        data = tmp / f"alone-{shared}-{time.monotonic()}"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "trawl",
            "crawl",
            *(srv.url(h) for h in hosts),
            "--data",
            str(data),
            "--allow-network",
            "127.0.0.0/8",
            "--resolve-file",
            str(resolve),
            "--delay",
            "0",
            "--scope",
            "allowlist",
            *(arg for h in hosts for arg in ("--allow-host", h)),
            "--politeness-dir",
            str(tmp / "hosts") if shared else "none",
            "--quiet",
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        await proc.wait()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    from trawl.stats import read_stats

    stats = read_stats(data)
    requests = sum(int(v) for v in stats["http statuses"].values())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu / max(1, requests) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_politeness")
    parser.add_argument("--hosts", type=int, default=10)
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--alone-hosts", type=int, default=20)
    parser.add_argument("--alone-pages", type=int, default=100)
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} (1-minute average), {os.cpu_count()} cores")
    cost(args.pairs)
    web = SampleWeb(args.hosts, args.pages, seed=1)
    print(f"two crawls of {args.hosts} hosts x {args.pages} pages at once, delay {args.delay} s:")
    with tempfile.TemporaryDirectory() as tmp:
        for shared in (False, True):
            asyncio.run(two_crawls(web, args.delay, shared, Path(tmp)))
    big = SampleWeb(args.alone_hosts, args.alone_pages, seed=2)
    print(f"one crawl alone, {args.alone_hosts} hosts x {args.alone_pages} pages, delay 0:")
    with tempfile.TemporaryDirectory() as tmp:
        runs: dict[bool, list[float]] = {False: [], True: []}
        for shared in (False, True, True, False):
            runs[shared].append(asyncio.run(one_crawl(big, shared, Path(tmp))))
    for shared, label in ((False, "no leases    "), (True, "shared leases")):
        figures = ", ".join(f"{x:.2f}" for x in runs[shared])
        print(f"  {label}  {figures} CPU-s / 1,000 requests")
    ratio = sum(runs[True]) / sum(runs[False])
    print(f"  ratio shared / none: {ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
