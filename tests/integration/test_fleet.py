"""The fleet's guarantee, drilled: stateless `trawl worker` processes over one Redis
(standalone, and a 3-primary cluster with replicas) and one S3 bucket (SeaweedFS).

Workers are killed with SIGKILL at random moments and others started in their place;
a Redis primary is killed mid-crawl and its replica takes over. Afterwards the crawl
must hold what an undisturbed one-machine crawl of the same web holds (every URL in
the same final state: none lost), every kept text once and no two kept texts near
copies of each other (the near index is shared by the fleet), every committed WARC record
valid (`warcio check`), and the web server's log must show at most one request in
flight per host and no gap shorter than the delay, across all workers.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import random
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urljoin

import orjson
import pytest

from tests.redis_servers import RedisCluster, RedisServer
from trawl.dedup.minhash import MinHasher
from trawl.dedup.near import MemoryNearIndex
from trawl.jobs import OutcomeKind
from trawl.models import Position
from trawl.service.fleet_events import FleetEventTail, parse_cursor
from trawl.stats import url_states
from trawl.storage.blobs import TEXT_LOG, WARC_LOG, BlobStore, LogSpec
from trawl.storage.place import CrawlPlace
from trawl.testing.sampleweb import SampleWeb, SampleWebServer

TRAWL = str(Path(sys.executable).with_name("trawl"))
WARCIO = str(Path(sys.executable).with_name("warcio"))
DELAY = 0.3
States = dict[str, tuple[str, str | None]]  # URL -> (status, reason)


def _web() -> tuple[SampleWeb, list[str]]:
    web = SampleWeb(hosts=7, pages_per_host=40, seed=5)
    # Host index 1 asks for Crawl-delay 2: left out to keep the drill short.
    return web, [h for i, h in enumerate(web.hosts) if i != 1][:6]


# Every stage on, near-duplicate detection included: the fleet shares one near index
# (founders claimed in one Redis step), so two near copies are never both kept.
CONFIG = "[crawl]\nnear_duplicates = true\n"


def _crawl_args(
    tmp: Path, srv: SampleWebServer, web: SampleWeb, hosts: list[str], delay: float
) -> list[str]:
    config = tmp / "crawl.toml"
    config.write_text(CONFIG)
    cmd = ["--quiet", "--delay", str(delay), "--parse-workers", "0", "--config", str(config)]
    cmd += ["--allow-network", "127.0.0.0/8", "--scope", "allowlist"]
    for host in hosts:
        cmd += ["--allow-host", host, "--resolve", f"{host}=127.0.0.1"]
    return cmd + [web.url(h, "/", port=srv.port) for h in hosts]


async def _reference(tmp: Path) -> States:
    """The same web crawled by one undisturbed embedded crawl (no delay: only the
    outcome is compared)."""
    web, hosts = _web()
    data = tmp / "reference"
    async with SampleWebServer(web) as srv:
        proc = await asyncio.create_subprocess_exec(
            TRAWL, "crawl", "--data", str(data), *_crawl_args(tmp, srv, web, hosts, 0.0)
        )
        assert await proc.wait() == 0
    return url_states(data)


def _portless(states: States) -> dict[str, str]:
    """URL (without the server's port, which differs between runs) -> status."""
    return {re.sub(r":\d+/", "/", url, count=1): status for url, (status, _r) in states.items()}


def _links_of_near_copies() -> set[str]:
    """Every link (portless) on a page of a near-duplicate pair of the drill's web: which
    copy founds its cluster, and so whose links are followed, is a race in any crawl
    with more than one page in flight, one machine or many."""
    web, _hosts = _web()
    pages = dict(web.pages())
    copies = {u: web.near_duplicate_of(u) for u in pages}
    pairs = {u for u, original in copies.items() if original is not None}
    pairs |= {original for original in copies.values() if original is not None}
    out: set[str] = set()
    for url in pairs & pages.keys():
        for href in re.findall(rb'href="([^"]+)"', pages[url]):
            out.add(re.sub(r":\d+/", "/", urljoin(url, href.decode()), count=1))
    return out


def _same_crawl(fleet: States, reference: States) -> None:
    """The same URL states, but for URLs only near copies link to (see above)."""
    mine, theirs = _portless(fleet), _portless(reference)
    differ = {u for u in mine.keys() | theirs.keys() if mine.get(u) != theirs.get(u)}
    unexplained = differ - _links_of_near_copies()
    assert not unexplained, {u: (mine.get(u), theirs.get(u)) for u in sorted(unexplained)}
    print(f"{len(differ)} URLs differ from the reference, each linked from a near copy")


def _events_once(place: CrawlPlace, stored_urls: set[str]) -> None:
    """Every worker's committed events (as ``/v1/events`` of ``trawl serve --redis``
    reads them), paged by the fleet cursor: each once, one for every stored page."""
    everything = FleetEventTail(place, {}).read(limit=10**6)
    assert len({e["writer"] for e in everything}) >= 3
    paged: list[dict[str, object]] = []
    cursor = "0"
    while found := FleetEventTail(place, parse_cursor(cursor)).read(limit=7):
        paged += found
        cursor = found[-1]["cursor"]
    assert [(e["writer"], e["id"]) for e in paged] == [(e["writer"], e["id"]) for e in everything]
    assert len({(e["writer"], e["id"]) for e in paged}) == len(paged)
    assert stored_urls <= {e.get("url") for e in everything}


def _near_copies(states: States) -> int:
    return sum((r or "").startswith(OutcomeKind.NEAR_DUPLICATE.value) for _s, r in states.values())


def _no_two_near(texts: list[str]) -> None:
    """No stored text is a near copy of another stored text."""
    index = MemoryNearIndex(MinHasher())
    for n, text in enumerate(texts):
        signature = index.hasher.signature(text)
        if signature is not None:
            match = index.claim(signature, str(n), str(n))
            assert match is None, f"stored twice, near copies: {text[:80]!r}"


class Fleet:
    """Worker processes of one crawl, each in a process group of its own."""

    def __init__(self, redis_url: str, scratch: Path, extra: list[str]) -> None:
        self.redis_url = redis_url
        self.scratch = scratch
        self.extra = extra
        self.live: list[asyncio.subprocess.Process] = []
        self.started = 0
        self.kills = 0
        self.pauses = 0

    async def start(self) -> None:
        self.started += 1
        log = (self.scratch / f"w{self.started}.log").open("w")
        proc = await asyncio.create_subprocess_exec(
            TRAWL,
            "worker",
            "--redis",
            self.redis_url,
            "--quiet",
            "--parse-workers",
            "0",
            "--data",
            str(self.scratch / f"w{self.started}"),
            *self.extra,
            stdout=subprocess.DEVNULL,
            stderr=log,  # what a worker said, for the drill's reader
            start_new_session=True,
        )
        log.close()
        self.live.append(proc)

    async def kill_one(self, rng: random.Random) -> None:
        running = [p for p in self.live if p.returncode is None]
        if running:
            victim = rng.choice(running)
            os.killpg(victim.pid, signal.SIGKILL)
            await victim.wait()  # reaped: it is not chosen again
            self.kills += 1

    async def pause_one(self, rng: random.Random, seconds: float) -> None:
        """SIGSTOP a worker for ``seconds`` (past its session's life), then SIGCONT."""
        running = [p for p in self.live if p.returncode is None]
        if running:
            victim = rng.choice(running)
            os.killpg(victim.pid, signal.SIGSTOP)
            await asyncio.sleep(seconds)
            os.killpg(victim.pid, signal.SIGCONT)
            self.pauses += 1

    async def wait_all(self) -> None:
        await asyncio.gather(*(p.wait() for p in self.live))


async def _drill(
    tmp: Path,
    redis_url: Callable[[], str],
    bucket: str,
    *,
    worker_kills: int,
    worker_args: list[str],
    mid_crawl: Callable[[], object] | None = None,
    pauses: tuple[int, float] = (0, 0.0),
    crawl_id: str = "main",
) -> tuple[SampleWebServer, str, Fleet]:
    web, hosts = _web()
    rng = random.Random(11)
    async with SampleWebServer(web, log=True) as srv:
        log = (tmp / "submitter.log").open("w")
        submit = await asyncio.create_subprocess_exec(
            TRAWL,
            "crawl",
            "--redis",
            redis_url(),
            "--blobs",
            bucket,
            "--no-worker",
            "--progress-interval",
            "0.5",
            "--crawl-id",
            crawl_id,
            "--data",
            str(tmp / "submitter"),
            *_crawl_args(tmp, srv, web, hosts, DELAY),
            stderr=log,
        )
        log.close()  # the child holds its own
        fleet = Fleet(redis_url(), tmp, [*worker_args, "--crawl-id", crawl_id])
        for _ in range(3):
            await fleet.start()
        await asyncio.sleep(2.0)
        while (fleet.kills < worker_kills or fleet.pauses < pauses[0]) and (
            submit.returncode is None
        ):
            # Long enough for a worker to start and take work before it may die.
            await asyncio.sleep(rng.uniform(1.0, 2.0))
            if fleet.kills >= worker_kills:
                await fleet.pause_one(rng, pauses[1])
                continue
            await fleet.kill_one(rng)
            await fleet.start()
            if mid_crawl is not None and fleet.kills == worker_kills // 2:
                mid_crawl()
                fleet.redis_url = redis_url()  # through a node that lives
        assert await asyncio.wait_for(submit.wait(), 240) == 0
        await asyncio.wait_for(fleet.wait_all(), 60)
        assert fleet.kills >= worker_kills and fleet.pauses >= pauses[0]
        print(f"{fleet.kills} workers killed, {fleet.pauses} paused, {fleet.started} started")
        return srv, redis_url(), fleet


def _committed_ends(place: CrawlPlace, log: LogSpec) -> list[tuple[LogSpec, Position]]:
    reader = place.reader()
    try:
        logs = reader.committed_logs()
    finally:
        reader.close()
    out = []
    for key, end in logs.items():
        name, _, writer = key.partition("@")
        if name == log.name:
            out.append((log.for_writer(writer) if writer else log, end))
    return out


def _committed_bytes(blobs: BlobStore, spec: LogSpec, end: Position) -> list[tuple[str, bytes]]:
    """Each segment of one writer's log, up to its committed end."""
    out = []
    for i in range(1, end.index + 1):
        segment = spec.segment(i)
        stop = end.offset if i == end.index else None
        out.append((segment, blobs.read_range(spec, segment, 0, stop)))
    return out


async def _check(
    tmp: Path,
    place: CrawlPlace,
    srv: SampleWebServer,
    reference: States,
) -> None:
    with_reasons = url_states(place)
    states = _portless(with_reasons)
    _same_crawl(with_reasons, reference)
    assert not {"queued", "in flight"} & set(states.values())
    assert _near_copies(with_reasons) > 0 and _near_copies(reference) > 0

    blobs = place.blob_store()
    records = []
    for spec, end in _committed_ends(place, TEXT_LOG):
        for _segment, data in _committed_bytes(blobs, spec, end):
            records += [orjson.loads(x) for x in gzip.decompress(data).splitlines()]
    hashes = [r["content_hash"] for r in records]
    assert len(hashes) == len(set(hashes)), "a text was stored twice"
    reader = place.reader()
    try:
        pages = list(reader.pages())
    finally:
        reader.close()
    assert {p.content_hash for p in pages} == set(hashes)
    kept = {p.content_hash for p in pages}
    _no_two_near([r["text"] for r in records if r["content_hash"] in kept])
    assert sum(s == "parsed" for s in states.values()) >= len(pages) > 50

    _events_once(place, {p.url for p in pages})

    warc_files = 0
    writers = {spec.writer for spec, _ in _committed_ends(place, WARC_LOG)}
    assert len(writers) >= 3, writers  # the work moved between workers as they died
    for spec, end in _committed_ends(place, WARC_LOG):
        for segment, data in _committed_bytes(blobs, spec, end):
            path = tmp / "warc-check" / segment
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(data)
            check = await asyncio.create_subprocess_exec(
                WARCIO, "check", str(path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
            )
            out, _ = await check.communicate()
            assert check.returncode == 0, out.decode()
            warc_files += 1

    assert srv.log is not None
    hosts = {r.host for r in srv.log}
    print(
        f"{len(states)} URLs as the reference; {len(pages)} texts, each once; "
        f"{warc_files} WARC segments of {len(writers)} workers valid; "
        f"{len(srv.log)} requests to {len(hosts)} hosts, "
        f"min gap {min(srv.log.min_gap(h) for h in hosts):.3f} s"
    )
    for host in hosts:
        assert srv.log.max_concurrency(host) == 1, host
        assert srv.log.min_gap(host) >= DELAY - 0.02, (host, srv.log.min_gap(host))


@pytest.fixture
def reference(tmp_path: Path) -> States:
    return asyncio.run(_reference(tmp_path))


def test_workers_killed_again_and_again_lose_nothing(
    tmp_path: Path, redis_server: RedisServer, s3_url: str, reference: States
) -> None:
    url = redis_server.url

    async def go() -> None:
        # A killed worker's hosts wait out its session (3 s) before the others take them.
        srv, _, _fleet = await _drill(
            tmp_path, lambda: url, s3_url, worker_kills=10, worker_args=["--session-ttl", "3"]
        )
        await _check(tmp_path, CrawlPlace(redis=url, crawl="main"), srv, reference)

    asyncio.run(go())


def test_a_redis_primary_killed_mid_crawl(
    tmp_path: Path, redis_cluster: RedisCluster, s3_url: str, reference: States
) -> None:
    # Every node in the URL, as an operator would write it: a worker started while one
    # of them is down (or after it died) starts from another.
    nodes = ",".join(f"127.0.0.1:{n.port}" for n in redis_cluster.nodes)
    every_node = f"redis+cluster://{nodes}/0"

    async def go() -> None:
        srv, url, _fleet = await _drill(
            tmp_path,
            lambda: every_node,
            s3_url,
            worker_kills=4,
            # Commits wait for a replica of every primary (a failover then loses nothing
            # acknowledged; they wait too until the old primary is back as a replica),
            # and a session outlives the failover (about 2 s here).
            worker_args=["--session-ttl", "8", "--wait-replicas", "1"],
            mid_crawl=lambda: redis_cluster.rejoin(redis_cluster.kill_primary(0)),
        )
        await _check(tmp_path, CrawlPlace(redis=url, crawl="main"), srv, reference)

    asyncio.run(go())


def _workers_said(tmp: Path) -> str:
    return "".join(log.read_text() for log in sorted(tmp.glob("w*.log")))


def test_a_worker_paused_past_its_session_goes_on_under_a_new_one(
    tmp_path: Path, redis_server: RedisServer, s3_url: str, reference: States
) -> None:
    # SIGSTOP longer than the session's life: the others roll the session back and
    # take its work; woken, the worker finds its commit refused, drops what it had not
    # committed and goes on under a new session (no restart by a supervisor).
    url = redis_server.url

    async def go() -> None:
        srv, _, fleet = await _drill(
            tmp_path,
            lambda: url,
            s3_url,
            worker_kills=0,
            worker_args=["--session-ttl", "2"],
            pauses=(3, 5.0),
            crawl_id="paused",  # the server is the session's: another test crawled "main"
        )
        assert [p.returncode for p in fleet.live] == [0] * len(fleet.live)
        said = _workers_said(tmp_path)
        assert "going on as" in said, said
        await _check(tmp_path, CrawlPlace(redis=url, crawl="paused"), srv, reference)

    asyncio.run(go())
