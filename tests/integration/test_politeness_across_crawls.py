"""Two crawls of the same hosts at once, in two processes: polite as one crawl would be.

The test web's own request log is the judge: never two requests in flight to one host,
and never less than the delay from the end of a response to the next request, whichever
crawl sent them. Each crawl keeps its own frontier; they share the host leases in the
politeness directory (here the test's XDG_STATE_HOME, inherited by both processes).
"""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.redis_servers import RedisServer
from tests.testweb import TestWeb
from trawl.clock import SystemClock
from trawl.config import CrawlConfig, default_politeness_dir
from trawl.crawl import Crawl
from trawl.errors import StorageError
from trawl.stats import read_stats
from trawl.storage.leases import new_holder
from trawl.storage.memory import MemoryBlobStore
from trawl.storage.redis.hostleases import RedisHostLeases
from trawl.storage.redis.store import RedisCrawlStore
from trawl.storage.sqlite.hostleases import SqliteHostLeases
from trawl.testing.fakeclient import FakeClient, FakePage

TRAWL = str(Path(sys.executable).with_name("trawl"))
DELAY = 0.3
# The server notes a response's end when its coroutine resumes after the last write,
# which under load is a few ms after the client has the bytes (seen: 13 ms, within one
# crawl): the slack for that. Two crawls that do not share leases come far closer.
SLACK = 0.05
HOSTS = ("books.test", "news.test")


async def _crawl(web: TestWeb, data: Path, resolve: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        TRAWL,
        "crawl",
        "--agent",
        f"trawl-{data.name}",
        *(web.url(h) for h in HOSTS),
        "--data",
        str(data),
        "--allow-network",
        "127.0.0.0/8",
        "--resolve-file",
        str(resolve),
        "--delay",
        str(DELAY),
        "--max-pages",
        "8",
        "--parse-workers",
        "0",
        "--quiet",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _waiting(data: Path) -> bool:
    """The crawl in ``data`` found a host leased and waits (committed counters)."""
    if not (data / "state.db").exists():
        return False
    try:
        counters = read_stats(data)["counters"]
    except StorageError:
        return False
    return bool(counters.get("politeness:shared wait"))


async def test_two_crawl_processes_share_each_hosts_politeness(tmp_path: Path) -> None:
    async with TestWeb() as web:
        resolve = tmp_path / "resolve.txt"
        resolve.write_text("".join(f"{h}={ip}\n" for h, ip in web.resolve_map().items()))
        # A start line: the hosts are leased to this test until both crawls wait for
        # them, so the two run at the same time however long each takes to start.
        gate = SqliteHostLeases(default_politeness_dir())
        holder, keys = new_holder("start-line"), [web.url(h).split("//")[1][:-1] for h in HOSTS]
        for key in keys:
            assert gate.acquire(key, holder=holder, now=time.time(), ttl=600.0) is None
        procs = [await _crawl(web, tmp_path / name, resolve) for name in ("one", "two")]
        while not all(_waiting(tmp_path / name) for name in ("one", "two")):
            assert all(p.returncode is None for p in procs)
            await asyncio.sleep(0.05)
        for key in keys:
            gate.release(key, holder=holder, now=time.time(), ready_at=time.time())
        gate.close()
        results = await asyncio.wait_for(asyncio.gather(*(p.communicate() for p in procs)), 90)
        for proc, (_out, err) in zip(procs, results, strict=True):
            assert proc.returncode == 0, err.decode()
        for host in HOSTS:
            records = web.log.requests_for(host)
            agents = {(r.header("User-Agent") or "").split(";")[1] for r in records}
            assert len(agents) == 2, agents
            timeline = [
                (round(r.started, 3), round(r.finished or 0, 3), r.header("User-Agent"), r.target)
                for r in records
            ]
            # Both crawls fetched the host: robots.txt twice, every page fetched twice.
            assert web.log.count(host, "/robots.txt") == 2
            assert len(records) >= 8
            assert web.log.max_concurrency(host) == 1, timeline
            if web.log.min_gap(host) < DELAY - SLACK:
                pytest.fail("\n".join(str(t) for t in timeline))
            # The two crawls took turns on the host (they ran at the same time).
            turns = sum(a[2] != b[2] for a, b in itertools.pairwise(timeline))
            assert turns >= 2, timeline


def _site(host: str) -> dict[str, FakePage]:
    links = "".join(f'<a href="/p/{i}">{i}</a> ' for i in range(5))
    pages = {f"https://{host}/": FakePage.html(f"<p>{host}</p>{links}")}
    for i in range(5):
        pages[f"https://{host}/p/{i}"] = FakePage.html(f"<p>page {i} of {host}</p>{links}")
    return pages


def test_two_crawl_ids_in_one_redis_share_each_hosts_lease(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Each crawl id keeps its own frontier keys; the host lease key is shared."""
    hosts = (f"a{uuid.uuid4().hex[:8]}.example", f"b{uuid.uuid4().hex[:8]}.example")
    pages = {url: page for host in hosts for url, page in _site(host).items()}
    delay = 0.1
    clients = [FakeClient(pages, clock=SystemClock()) for _ in range(2)]

    async def both() -> None:
        crawls = []
        for i, client in enumerate(clients):
            config = CrawlConfig(
                data_dir=tmp_path / str(i),
                seeds=tuple(f"https://{h}/" for h in hosts),
                delay=delay,
                parse_workers=0,
                fsync=False,
                min_free_space=0,
                near_duplicates=False,  # the pages differ in a word only
                politeness_dir=None,  # not the machine's file: Redis's key
                sitemaps=False,  # the pages counted below, no /sitemap.xml
            )
            store = RedisCrawlStore(redis_server.url, uuid.uuid4().hex[:12], worker="w")
            leases = RedisHostLeases(redis_server.url)
            crawls.append(
                Crawl(config, store=store, blobs=MemoryBlobStore(), client=client, leases=leases)
            )
        try:
            summaries = await asyncio.gather(*(c.run() for c in crawls))
        finally:
            for c in crawls:
                c.close()
        assert [s.stopped for s in summaries] == ["done", "done"]

    asyncio.run(both())
    for host in hosts:
        times = sorted(t for c in clients for t, url in c.requests if f"//{host}/" in url)
        assert len(times) == 2 * 7  # robots.txt, the home page and 5 pages, twice
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert min(gaps) >= delay - 0.005, gaps
