"""The fleet's S3 server goes away mid-crawl; the crawl loses nothing.

- A short outage (the server killed, back on its ports 15 s later) is ridden out: the
  S3 client retries for up to 30 s, backing off from 0.5 s. With its default retries
  (5, from 0.1 s) an upload gave up 1.4 s in, and each worker whose commit was
  uploading stopped.
- A longer one (the server hung: it neither answers nor refuses) fails an upload:
  nothing past the worker's last commit can be kept, so its commit fails, and the run
  must end with it. It did not: the task group's cancellation of the crawl loop was
  swallowed by ``asyncio.wait_for`` (Python 3.11) in the turn the pages held at the
  commit gate failed too, and the worker went on fetching pages and failing each,
  committing nothing, until killed (``frontier/idle.py``, ``local_wait``). Now each
  worker exits 1 and says why, and workers started once S3 answers finish the crawl.

Either way the crawl is the undisturbed one's: each text once, every committed WARC
segment valid, one request in flight per host and no gap under the delay.

Real redis-server, a SeaweedFS of each test's own, the ``trawl`` commands as processes.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from tests.conftest import point_aws_at
from tests.integration.test_fleet import (
    TRAWL,
    Fleet,
    Reference,
    _check,
    _crawl_args,
    _end_failed,
    _first_request,
    _reference,
    _web,
    _workers_said,
)
from tests.redis_servers import RedisServer
from trawl.storage.place import CrawlPlace
from trawl.testing.s3server import SeaweedS3
from trawl.testing.sampleweb import SampleWebServer

DELAY = 0.45
# The longest the server stays hung: past the S3 client's 30 s, and the worker's stop,
# which may wait as long again for an upload already under way (a rotated segment's:
# the log is abandoned only once it has ended). Measured: 30 or 60 s.
HANG = 100.0
DOWN = 15.0  # a short outage: within the S3 client's 30 s of retries


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    """One undisturbed crawl for both drills: they crawl the same web."""
    return asyncio.run(_reference(tmp_path_factory.mktemp("s3-reference")))


@pytest.fixture
def s3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SeaweedS3:
    """A SeaweedFS of the test's own (the session's is shared), the AWS variables set."""
    server = SeaweedS3.start(tmp_path / "s3")
    point_aws_at(server, monkeypatch)  # for the processes started, and the check
    return server


Outage = Callable[[Fleet, SeaweedS3], Awaitable[None]]


def _drill(
    tmp: Path,
    redis: RedisServer,
    s3: SeaweedS3,
    reference: Reference,
    outage: Outage,
    *,
    writers: int,
) -> Fleet:
    """Two workers crawl; ``outage`` runs 3 s after the first request (and brings S3
    back before it returns); then the crawl must end, and as the reference did."""
    crawl = f"s3-{tmp.name}"
    bucket = f"s3://{s3.create_bucket('outage')}/crawl"

    async def go() -> Fleet:
        web, hosts = _web()
        async with SampleWebServer(web, log=True) as srv:
            with (tmp / "submitter.log").open("w") as log:
                submit = await asyncio.create_subprocess_exec(
                    TRAWL, "crawl", "--redis", redis.url, "--blobs", bucket, "--no-worker",
                    "--crawl-id", crawl, "--data", str(tmp / "sub"),
                    *_crawl_args(tmp, srv, web, hosts, DELAY), stderr=log,
                )  # fmt: skip
            fleet = Fleet(redis.url, tmp, ["--crawl-id", crawl])
            try:
                for _ in range(2):
                    await fleet.start()
                async with asyncio.timeout(120):
                    await _first_request(srv)
                await asyncio.sleep(3.0)  # some pages committed, more under way
                await outage(fleet, s3)
                assert await asyncio.wait_for(submit.wait(), 240) == 0
                await asyncio.wait_for(fleet.wait_all(), 60)
            except BaseException:
                _end_failed(tmp, fleet, submit)
                raise
            place = CrawlPlace(redis=redis.url, crawl=crawl)
            await _check(tmp, place, srv, reference.states, DELAY, least_writers=writers)
            return fleet

    try:
        return asyncio.run(go())
    finally:
        s3.stop()


def test_workers_ride_out_a_short_s3_outage(
    tmp_path: Path, redis_server: RedisServer, s3: SeaweedS3, reference: Reference
) -> None:
    async def outage(fleet: Fleet, s3: SeaweedS3) -> None:
        s3.stop()  # kill -9: connections refused
        await asyncio.sleep(DOWN)
        await asyncio.to_thread(s3.restart)
        assert [p.returncode for p in fleet.live] == [None, None], _workers_said(tmp_path)

    fleet = _drill(tmp_path, redis_server, s3, reference, outage, writers=2)
    assert [p.returncode for p in fleet.live] == [0, 0]  # the crawl's end, not an error
    assert "an upload failed" not in _workers_said(tmp_path)


def test_workers_stop_when_s3_hangs_and_new_ones_finish_the_crawl(
    tmp_path: Path, redis_server: RedisServer, s3: SeaweedS3, reference: Reference
) -> None:
    async def outage(fleet: Fleet, s3: SeaweedS3) -> None:
        os.killpg(s3.process.pid, signal.SIGSTOP)
        hung = time.monotonic()
        try:
            # Each worker stops: its commit's upload failed, and with it the run.
            await asyncio.wait_for(fleet.wait_all(), HANG)
            print(f"workers stopped {time.monotonic() - hung:.1f} s into the hang")
        finally:
            os.killpg(s3.process.pid, signal.SIGCONT)
        assert [p.returncode for p in fleet.live] == [1, 1]
        said = _workers_said(tmp_path)
        assert "an upload failed" in said and "goes back to the crawl" in said, said
        # S3 answers again (the hang ended: uploads under way go on): two more workers.
        for _ in range(2):
            await fleet.start()

    _drill(tmp_path, redis_server, s3, reference, outage, writers=3)
