"""The fleet's guarantee, drilled: stateless `trawl worker` processes over one Redis
(standalone, and a 3-primary cluster with replicas) and one S3 bucket (SeaweedFS).

Workers are killed with SIGKILL at random moments and others started in their place;
a Redis primary is killed mid-crawl and its replica takes over. Afterwards the crawl
must hold what an undisturbed one-machine crawl of the same web holds (every URL in
the same final state: none lost), every kept text once and no two kept texts near
copies of each other (the near index is shared by the fleet), every committed WARC record
valid (`warcio check`), and the web server's log must show at most one request in
flight per host and no gap shorter than the delay, across all workers.

A drill must not outrun its crawl: politeness makes the crawl last at least (requests
to a host - 1) x delay from its first request, whatever the machine's speed, so each
drill's ``Schedule`` (its delay, and the time its kills and pauses take at most) is
checked to fit inside that before it runs; a loaded machine only makes the crawl longer.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import itertools
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.integration.crawlkit import assert_same_states, portless
from tests.redis_servers import RedisCluster, RedisServer
from trawl.dedup.minhash import MinHasher
from trawl.dedup.near import MemoryNearIndex
from trawl.export import export
from trawl.jobs import OutcomeKind
from trawl.models import Position
from trawl.service.fleet_events import FleetEventTail, parse_cursor
from trawl.stats import url_states
from trawl.storage.blobs import TEXT_LOG, WARC_LOG, BlobStore, LogSpec
from trawl.storage.place import CrawlPlace
from trawl.testing.requestlog import RequestRecord
from trawl.testing.sampleweb import SampleWeb, SampleWebServer

TRAWL = str(Path(sys.executable).with_name("trawl"))
WARCIO = str(Path(sys.executable).with_name("warcio"))
States = dict[str, tuple[str, str | None]]  # URL -> (status, reason)


@dataclass(frozen=True)
class Schedule:
    """What one drill does to its fleet, and the politeness delay its crawl runs with."""

    delay: float
    kills: int = 0
    pauses: int = 0
    pause_for: float = 0.0  # each pause, in seconds (past the session's life)
    # Seconds between two steps, drawn uniformly: long enough for a worker started after
    # a kill to start and take work before it may die.
    every: tuple[float, float] = (1.0, 1.6)

    def longest(self) -> float:
        """The most time the steps take from the crawl's first request (idle machine)."""
        return self.kills * self.every[1] + self.pauses * (self.every[1] + self.pause_for)

    def fits(self, requests: dict[str, int]) -> None:
        """The drill ends before the crawl can: every host of the crawl gets at least
        its requests of the undisturbed crawl, one at a time, ``delay`` apart."""
        shortest = (min(requests.values()) - 1) * self.delay
        assert self.longest() <= shortest, (self, self.longest(), shortest)


def _web() -> tuple[SampleWeb, list[str]]:
    web = SampleWeb(hosts=7, pages_per_host=40, seed=5)
    # Host index 1 asks for Crawl-delay 2: left out to keep the drill short.
    return web, [h for i, h in enumerate(web.hosts) if i != 1][:6]


# Every stage on, near-duplicate detection included: the fleet shares one near index
# (founders claimed in one Redis step), so two near copies are never both kept.
# Small segments: each worker's logs rotate many times, so kills land while a
# rotated segment goes up whole in the writer's thread.
CONFIG = "[crawl]\nnear_duplicates = true\nwarc_max_bytes = 262144\ntext_max_bytes = 65536\n"


def _crawl_args(
    tmp: Path, srv: SampleWebServer, web: SampleWeb, hosts: list[str], delay: float
) -> list[str]:
    config = tmp / "crawl.toml"
    config.write_text(CONFIG)
    cmd = ["--quiet", "--delay", str(delay), "--parse-workers", "0", "--config", str(config)]
    # A killed worker's hosts wait a fetch's timeout after the takeover (its last request
    # may still run at the server): short here, to keep the drill short.
    cmd += ["--timeout", "8"]
    cmd += ["--allow-network", "127.0.0.0/8", "--scope", "allowlist"]
    for host in hosts:
        cmd += ["--allow-host", host, "--resolve", f"{host}=127.0.0.1"]
    return cmd + [web.url(h, "/", port=srv.port) for h in hosts]


@dataclass(frozen=True)
class Reference:
    """The web crawled by one undisturbed crawl: its URL states, and requests per host."""

    states: States
    requests: dict[str, int]


async def _reference(tmp: Path) -> Reference:
    """The same web crawled by one undisturbed embedded crawl (no delay: only the
    outcome and the number of requests are used)."""
    web, hosts = _web()
    data = tmp / "reference"
    async with SampleWebServer(web, log=True) as srv:
        proc = await asyncio.create_subprocess_exec(
            TRAWL, "crawl", "--data", str(data), *_crawl_args(tmp, srv, web, hosts, 0.0)
        )
        assert await proc.wait() == 0
        assert srv.log is not None
        requests = {host: srv.log.count(host) for host in hosts}
    return Reference(url_states(data), requests)


def _portless(states: States) -> dict[str, str]:
    """URL (without the server's port, which differs between runs) -> status."""
    return {portless(url): status for url, (status, _r) in states.items()}


def _same_crawl(fleet: States, reference: States) -> None:
    """The same URL states, but for URLs only near copies link to (see
    ``crawlkit.links_of_near_copies``)."""
    mine, theirs = _portless(fleet), _portless(reference)
    differ = {u for u in mine.keys() | theirs.keys() if mine.get(u) != theirs.get(u)}
    assert_same_states(mine, theirs, _web()[0])
    print(f"{len(differ)} URLs differ from the reference, each linked from a near copy")


def _events_once(place: CrawlPlace, stored_urls: set[str], writers: int) -> None:
    """Every worker's committed events (as ``/v1/events`` of ``trawl serve --redis``
    reads them), paged by the fleet cursor: each once, one for every stored page."""
    everything = FleetEventTail(place, {}).read(limit=10**6)
    assert len({e["writer"] for e in everything}) >= writers
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
        # The workers' temporary directory: without --data each works in a folder of
        # its own there, which it removes as it ends, and the next worker started
        # removes a killed one's.
        self.tmp = scratch / "tmp"
        self.tmp.mkdir()
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
            *self.extra,
            stdout=subprocess.DEVNULL,
            stderr=log,  # what a worker said, for the drill's reader
            start_new_session=True,
            env={**os.environ, "TMPDIR": str(self.tmp)},
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

    def kill_all(self) -> None:
        for proc in self.live:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)

    async def wait_all(self) -> None:
        await asyncio.gather(*(p.wait() for p in self.live))


def _tell_logs(tmp: Path) -> None:
    """What the submitter and each worker said last (a failed drill's report shows it)."""
    for log in sorted(tmp.glob("*.log"), key=lambda p: (len(p.name), p.name)):
        lines = log.read_text(errors="replace").splitlines()
        print(f"--- {log.name} ({len(lines)} lines)")
        for line in lines[-8:]:
            print(line[:400])


def _end_failed(tmp: Path, fleet: Fleet, submit: asyncio.subprocess.Process) -> None:
    """Nothing of a failed drill outlives it (a later test shares the servers); what
    each process said last is shown."""
    fleet.kill_all()
    if submit.returncode is None:
        submit.kill()
    _tell_logs(tmp)


async def _first_request(srv: SampleWebServer) -> None:
    """Until a worker made the crawl's first request (it may take long on a loaded machine)."""
    assert srv.log is not None
    while not len(srv.log):  # noqa: ASYNC110 - polling other processes' effect
        await asyncio.sleep(0.05)


async def _drill(
    tmp: Path,
    redis_url: Callable[[], str],
    bucket: str,
    schedule: Schedule,
    reference: Reference,
    *,
    worker_args: list[str],
    mid_crawl: Callable[[], object] | None = None,
    crawl_id: str = "main",
) -> tuple[SampleWebServer, str, Fleet]:
    schedule.fits(reference.requests)
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
            *_crawl_args(tmp, srv, web, hosts, schedule.delay),
            stderr=log,
        )
        log.close()  # the child holds its own
        fleet = Fleet(redis_url(), tmp, [*worker_args, "--crawl-id", crawl_id])
        try:
            for _ in range(3):
                await fleet.start()
            async with asyncio.timeout(120):
                await _first_request(srv)
            started = time.monotonic()
            midway = mid_crawl
            while (fleet.kills < schedule.kills or fleet.pauses < schedule.pauses) and (
                submit.returncode is None
            ):
                await asyncio.sleep(rng.uniform(*schedule.every))
                if fleet.kills >= schedule.kills:
                    await fleet.pause_one(rng, schedule.pause_for)
                    continue
                await fleet.kill_one(rng)
                await fleet.start()
                if midway is not None and fleet.kills >= schedule.kills // 2:
                    midway()  # once, even if a turn found no worker to kill
                    midway = None
                    fleet.redis_url = redis_url()  # through a node that lives
            drilled = time.monotonic() - started
            assert await asyncio.wait_for(submit.wait(), 240) == 0
            crawled = time.monotonic() - started
            await asyncio.wait_for(fleet.wait_all(), 60)
            # Nothing left in the workers' temporary directory: the killed workers'
            # folders (their segments' spools) were removed by the workers started after.
            assert sorted(p.name for p in fleet.tmp.iterdir()) == []
        except BaseException:
            _end_failed(tmp, fleet, submit)
            raise
        print(
            f"{fleet.kills} workers killed, {fleet.pauses} paused, {fleet.started} started; "
            f"drill {drilled:.1f} s (at most {schedule.longest():.1f} s idle), "
            f"crawl {crawled:.1f} s from its first request"
        )
        assert fleet.kills >= schedule.kills and fleet.pauses >= schedule.pauses
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
    delay: float,
    *,
    least_writers: int = 3,
) -> None:
    """The fleet's crawl is the reference's, whole, each text once, written by at least
    ``least_writers`` workers (the work moved between them)."""
    with_reasons = url_states(place)
    states = _portless(with_reasons)
    _same_crawl(with_reasons, reference)
    assert not {"queued", "in flight"} & set(states.values())
    assert _near_copies(with_reasons) > 0 and _near_copies(reference) > 0

    blobs = place.blob_store()
    reader = place.reader()
    try:
        pages = list(reader.pages())
    finally:
        reader.close()
    named = {p.content_hash: p.text.file for p in pages}  # the record each page names
    records: list[dict[str, Any]] = []
    superseded: list[dict[str, Any]] = []
    for spec, end in _committed_ends(place, TEXT_LOG):
        for segment, data in _committed_bytes(blobs, spec, end):
            for line in gzip.decompress(data).splitlines():
                record = orjson.loads(line)
                named_here = named.get(record["content_hash"]) == segment
                (records if named_here else superseded).append(record)
    hashes = [r["content_hash"] for r in records]
    assert len(hashes) == len(set(hashes)), "a text was stored twice"
    assert set(named) == set(hashes)  # every page names a committed record
    # A committed record no page names: a worker stopped between its commit's logs'
    # ends and its pages, whose page another worker then stored (a copy of a stored text).
    assert {r["content_hash"] for r in superseded} <= set(hashes)
    exported = export(place, tmp / "export", format="jsonl")
    assert (exported.documents, exported.superseded) == (len(records), len(superseded))
    with gzip.open(tmp / "export" / "part-00000.jsonl.gz") as f:
        assert sorted(orjson.loads(x)["content_hash"] for x in f) == sorted(hashes)
    _no_two_near([r["text"] for r in records])
    assert sum(s == "parsed" for s in states.values()) >= len(pages) > 50

    _events_once(place, {p.url for p in pages}, least_writers)

    warc_files = 0
    writers = {spec.writer for spec, _ in _committed_ends(place, WARC_LOG)}
    assert len(writers) >= least_writers, writers  # the work moved between workers as they died
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
        f"{len(states)} URLs as the reference; {len(pages)} texts, each once "
        f"({len(superseded)} superseded copies); "
        f"{warc_files} WARC segments of {len(writers)} workers valid; "
        f"{len(srv.log)} requests to {len(hosts)} hosts, "
        f"min gap {min(srv.log.min_gap(h) for h in hosts):.3f} s"
    )
    for host in hosts:
        assert srv.log.max_concurrency(host) == 1, host
        assert srv.log.min_gap(host) >= delay - 0.02, _closest(srv.log.requests_for(host))


def _closest(records: list[RequestRecord]) -> str:
    """The two requests to one host closest together, for a failed gap's report."""
    ordered = sorted(records, key=lambda r: r.started)
    pairs = [
        (b.started - (a.finished or b.started), a, b)
        for a, b in itertools.pairwise(ordered)
        if a.finished is None or a.status is not None  # min_gap skips a cut response's
    ]
    gap, a, b = min(pairs, key=lambda p: p[0])
    t0 = a.started
    return (
        f"{b.host}: gap {gap:.3f} s between {a.method} {a.target} "
        f"(started 0, finished {(a.finished or t0) - t0:.3f}, status {a.status}) and "
        f"{b.method} {b.target} (started {b.started - t0:.3f}, status {b.status})"
    )


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    """One undisturbed crawl for the module's drills: they all crawl the same web."""
    return asyncio.run(_reference(tmp_path_factory.mktemp("fleet-reference")))


def test_workers_killed_again_and_again_lose_nothing(
    tmp_path: Path, redis_server: RedisServer, s3_url: str, reference: Reference
) -> None:
    url = redis_server.url
    schedule = Schedule(delay=0.45, kills=10)

    async def go() -> None:
        # A killed worker's hosts wait out its session (3 s) before the others take them.
        srv, _, _fleet = await _drill(
            tmp_path, lambda: url, s3_url, schedule, reference, worker_args=["--session-ttl", "3"]
        )
        place = CrawlPlace(redis=url, crawl="main")
        await _check(tmp_path, place, srv, reference.states, schedule.delay)

    asyncio.run(go())


def test_a_redis_primary_killed_mid_crawl(
    tmp_path: Path, redis_cluster: RedisCluster, s3_url: str, reference: Reference
) -> None:
    # Every node in the URL, as an operator would write it: a worker started while one
    # of them is down (or after it died) starts from another.
    nodes = ",".join(f"127.0.0.1:{n.port}" for n in redis_cluster.nodes)
    every_node = f"redis+cluster://{nodes}/0"

    # The failover and the rejoin (some seconds, while commits wait for them) run between
    # two kills: the schedule leaves them 10 s of the crawl's shortest time.
    schedule = Schedule(delay=0.4, kills=4)

    async def go() -> None:
        srv, url, _fleet = await _drill(
            tmp_path,
            lambda: every_node,
            s3_url,
            schedule,
            reference,
            # Commits wait for a replica of every primary (a failover then loses nothing
            # acknowledged; they wait too until the old primary is back as a replica),
            # and a session outlives the failover (about 2 s here).
            worker_args=["--session-ttl", "8", "--wait-replicas", "1"],
            mid_crawl=lambda: redis_cluster.rejoin(redis_cluster.kill_primary(0)),
        )
        place = CrawlPlace(redis=url, crawl="main")
        await _check(tmp_path, place, srv, reference.states, schedule.delay)

    asyncio.run(go())


def _workers_said(tmp: Path) -> str:
    return "".join(log.read_text() for log in sorted(tmp.glob("w*.log")))


def test_a_worker_paused_past_its_session_goes_on_under_a_new_one(
    tmp_path: Path, redis_server: RedisServer, s3_url: str, reference: Reference
) -> None:
    # SIGSTOP longer than the session's life: the others roll the session back and
    # take its work; woken, the worker finds its commit refused, drops what it had not
    # committed and goes on under a new session (no restart by a supervisor).
    url = redis_server.url
    schedule = Schedule(delay=0.5, pauses=3, pause_for=5.0, every=(0.5, 1.0))

    async def go() -> None:
        srv, _, fleet = await _drill(
            tmp_path,
            lambda: url,
            s3_url,
            schedule,
            reference,
            worker_args=["--session-ttl", "2"],
            crawl_id="paused",  # the server is the session's: another test crawled "main"
        )
        assert [p.returncode for p in fleet.live] == [0] * len(fleet.live)
        said = _workers_said(tmp_path)
        assert "going on as" in said, said
        place = CrawlPlace(redis=url, crawl="paused")
        await _check(tmp_path, place, srv, reference.states, schedule.delay)

    asyncio.run(go())
