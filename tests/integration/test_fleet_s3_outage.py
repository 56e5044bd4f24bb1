"""The fleet's S3 server hangs mid-crawl: its workers stop, and the crawl loses nothing.

A worker's upload that fails (after the client's retries, some 30 s) means nothing
past its last commit can be kept. Each worker's commit fails then, and the crawl loop
must end with it. It did not: the task group's cancellation of the loop was swallowed
by ``asyncio.wait_for`` (Python 3.11) in the turn the pages held at the commit gate
failed too, and the worker went on fetching pages and failing each, committing nothing,
until killed (``frontier/idle.py``, ``local_wait``). Now each worker exits 1 and says
why; once S3 answers, workers started again finish the crawl, and it is the same crawl
as an undisturbed one: each text once, every committed WARC segment valid, one request
in flight per host and no gap under the delay.

Real redis-server, a SeaweedFS of this test's own (SIGSTOP: it neither answers nor
refuses), the ``trawl`` commands as processes.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from tests.integration.test_fleet import (
    TRAWL,
    Fleet,
    Reference,
    _check,
    _crawl_args,
    _first_request,
    _reference,
    _tell_logs,
    _web,
    _workers_said,
)
from tests.redis_servers import RedisServer
from trawl.storage.place import CrawlPlace
from trawl.testing.s3server import SeaweedS3
from trawl.testing.sampleweb import SampleWebServer

DELAY = 0.45
HANG = 45.0  # past the S3 client's retries (30 s) and a commit's upload under way


@pytest.fixture
def reference(tmp_path: Path) -> Reference:
    return asyncio.run(_reference(tmp_path))


def test_workers_stop_when_s3_hangs_and_the_crawl_ends_whole_once_it_answers(
    tmp_path: Path,
    redis_server: RedisServer,
    reference: Reference,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    s3 = SeaweedS3.start(tmp_path / "s3")
    for name, value in s3.env().items():  # for the processes started, and the check
        monkeypatch.setenv(name, value)
    for name in ("AWS_ENDPOINT_URL_S3", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    bucket = f"s3://{s3.create_bucket('outage')}/crawl"

    async def go() -> None:
        web, hosts = _web()
        async with SampleWebServer(web, log=True) as srv:
            assert srv.log is not None
            with (tmp_path / "submitter.log").open("w") as log:
                submit = await asyncio.create_subprocess_exec(
                    TRAWL, "crawl", "--redis", redis_server.url, "--blobs", bucket,
                    "--no-worker", "--crawl-id", "s3-outage", "--data", str(tmp_path / "sub"),
                    *_crawl_args(tmp_path, srv, web, hosts, DELAY), stderr=log,
                )  # fmt: skip
            fleet = Fleet(redis_server.url, tmp_path, ["--crawl-id", "s3-outage"])
            try:
                for _ in range(2):
                    await fleet.start()
                async with asyncio.timeout(120):
                    await _first_request(srv)
                await asyncio.sleep(3.0)  # some pages committed, more under way
                os.killpg(s3.process.pid, signal.SIGSTOP)
                hung = time.monotonic()
                try:
                    # Each worker stops: its commit's upload failed, and with it the run.
                    await asyncio.wait_for(fleet.wait_all(), HANG)
                    stopped = time.monotonic() - hung
                finally:
                    os.killpg(s3.process.pid, signal.SIGCONT)
                assert [p.returncode for p in fleet.live] == [1, 1]
                said = _workers_said(tmp_path)
                assert "an upload failed" in said and "goes back to the crawl" in said, said
                # S3 answers again (a hang ended: the uploads under way go on): new
                # workers finish the crawl.
                for _ in range(2):
                    await fleet.start()
                assert await asyncio.wait_for(submit.wait(), 240) == 0
                await asyncio.wait_for(fleet.wait_all(), 60)
            except BaseException:
                fleet.kill_all()
                if submit.returncode is None:
                    submit.kill()
                _tell_logs(tmp_path)
                raise
            print(f"workers stopped {stopped:.1f} s into the hang")
            place = CrawlPlace(redis=redis_server.url, crawl="s3-outage")
            await _check(tmp_path, place, srv, reference.states, DELAY)

    try:
        asyncio.run(go())
    finally:
        s3.stop()
