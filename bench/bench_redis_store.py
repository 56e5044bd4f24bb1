"""The Redis crawl store alone: round trips, commands and CPU per page, standalone and cluster.

    .venv/bin/python bench/bench_redis_store.py [--urls 5000] [--hosts 500] [--commit 50]

Starts its own servers on loopback (a redis-server; a 3-primary cluster with
replicas). Admits ``--urls`` URLs over ``--hosts`` hosts in batches of 40 (a page's
links), then works every URL as the crawl does: take, record the fetch, finish,
queue the parse, store the page, set it parsed, ack the parse, count, with a commit
every ``--commit`` pages. CPU-seconds are read from /proc/<pid>/stat for this
process and for the redis-server processes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

import xxhash

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.redis_servers import RedisCluster, RedisServer

from trawl.jobs import ParseJob
from trawl.models import Location, NewUrl, UrlStatus
from trawl.storage.base import FetchRecord, PageRecord
from trawl.storage.redis.store import RedisCrawlStore

_TICK = os.sysconf("SC_CLK_TCK")
T0 = 1_000.0


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` (fields 14 and 15 of /proc/<pid>/stat)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _urls(n: int, hosts: int) -> list[NewUrl]:
    out = []
    for i in range(n):
        host = f"host{i % hosts:05d}.example"
        url = f"https://{host}/page/{i}.html"
        fp = xxhash.xxh3_64_intdigest(url.encode()) - (1 << 63)
        out.append(NewUrl(url=url, fp=fp, host=host, depth=1, priority=1))
    return out


def run(url: str, server_pids: list[int], n_urls: int, n_hosts: int, every: int) -> None:
    store = RedisCrawlStore(url, uuid.uuid4().hex[:12], worker="bench")
    conn = store.conn
    urls = _urls(n_urls, n_hosts)
    started = time.perf_counter()
    for i in range(0, len(urls), 40):
        store.frontier.add(urls[i : i + 40], now=T0)
    store.commit()
    admit_s = time.perf_counter() - started
    admit_rt, admit_cmd = conn.round_trips, conn.commands
    print(f"  admit: {n_urls / admit_s:,.0f} URLs/s, {admit_rt / n_urls:.2f} round trips "
          f"and {admit_cmd / n_urls:.2f} commands per URL")  # fmt: skip

    client0 = cpu_seconds(os.getpid())
    servers0 = sum(cpu_seconds(p) for p in server_pids)
    rt0, cmd0 = conn.round_trips, conn.commands
    started = time.perf_counter()
    pages = 0
    while (lease := store.frontier.take(T0)) is not None:
        warc = Location("trawl-00001.warc.gz", pages * 100, 100)
        store.pages.record_fetch(
            FetchRecord(lease.host, lease.fp, lease.url, lease.url, 200, T0, warc)
        )
        store.frontier.finish(lease, UrlStatus.FETCHED, host_ready_at=T0)
        job = ParseJob(
            host=lease.host,
            fp=lease.fp,
            url=lease.url,
            final_url=lease.url,
            depth=lease.depth,
            fetched_at=T0,
            status=200,
            headers=(("Content-Type", "text/html"),),
            content_type="text/html",
            warc=warc,
        )
        seq = store.parse_queue.put(job)
        content_hash = f"{lease.fp & 0xFFFFFFFFFFFF:012x}"
        store.pages.add(
            PageRecord(content_hash, lease.url, lease.host, lease.fp, T0, "t", "en", warc, warc)
        )
        store.frontier.set_status(lease.host, lease.fp, UrlStatus.PARSED)
        store.parse_queue.ack(seq)
        store.counters.add("status:200")
        pages += 1
        if pages % every == 0:
            store.commit()
    store.commit()
    elapsed = time.perf_counter() - started
    client = cpu_seconds(os.getpid()) - client0
    servers = sum(cpu_seconds(p) for p in server_pids) - servers0
    rts, cmds = conn.round_trips - rt0, conn.commands - cmd0
    print(f"  pages: {pages} in {elapsed:.1f} s ({pages / elapsed:,.0f}/s), "
          f"{rts / pages:.1f} round trips and {cmds / pages:.1f} commands per page")  # fmt: skip
    print(f"  CPU-seconds per 1,000 pages: client {client / pages * 1000:.2f}, "
          f"redis-server {servers / pages * 1000:.2f}")  # fmt: skip
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=5_000)
    parser.add_argument("--hosts", type=int, default=500)
    parser.add_argument("--commit", type=int, default=50, help="pages per commit")
    parser.add_argument(
        "--appendfsync", default="everysec", choices=["everysec", "always", "off"],
        help="the standalone server's AOF fsync policy (off: no AOF)",
    )  # fmt: skip
    parser.add_argument("--no-cluster", action="store_true", help="standalone only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp) / "standalone", appendfsync=args.appendfsync)
        try:
            print(
                f"standalone, appendfsync {args.appendfsync} ({args.urls} URLs, "
                f"{args.hosts} hosts, commit every {args.commit})"
            )
            run(server.url, [server.pid], args.urls, args.hosts, args.commit)
        finally:
            server.stop()
        if args.no_cluster:
            return
        cluster = RedisCluster(Path(tmp) / "cluster")
        try:
            print("cluster (3 primaries, 3 replicas)")
            pids = [n.pid for n in cluster.nodes]
            run(cluster.url, pids, args.urls, args.hosts, args.commit)
        finally:
            cluster.stop()


if __name__ == "__main__":
    main()
