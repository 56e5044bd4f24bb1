"""A worker cut off from Redis still stops when told twice (Ctrl-C, SIGTERM): ``trawl
worker``, and ``trawl crawl --redis`` working the crawl it submitted.

Each call to a Redis that does not answer waits out ``conn.OUTAGE`` (30 s) in the
event loop's thread, so the loop never got to hear a signal: a worker whose Redis was
gone could only be killed. Its signals are now counted as they arrive; a second one
ends the wait, and the worker exits 130 saying why. What it held is not committed, and
goes back to the crawl when its session lapses, as a killed worker's does.

Real redis-server (its own, killed here), real S3 server (SeaweedFS), the ``trawl``
commands as processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.redis_servers import RedisServer
from trawl.testing.sampleweb import SampleWeb, SampleWebServer

TRAWL = str(Path(sys.executable).with_name("trawl"))


def _seeds_and_scope(web: SampleWeb, srv: SampleWebServer) -> list[str]:
    args = ["--allow-network", "127.0.0.0/8", "--scope", "allowlist"]
    for host in web.hosts:
        args += ["--allow-host", host, "--resolve", f"{host}=127.0.0.1"]
    return args + [web.url(h, "/", port=srv.port) for h in web.hosts]


@pytest.mark.parametrize("who", ["trawl worker", "trawl crawl"])
async def test_a_worker_whose_redis_is_gone_stops_at_the_second_signal(
    tmp_path: Path, s3_url: str, who: str
) -> None:
    """``trawl worker``, or ``trawl crawl --redis`` working the crawl it submitted."""
    server = RedisServer(tmp_path / "redis")
    web = SampleWeb(hosts=3, pages_per_host=200, seed=5)
    procs: list[asyncio.subprocess.Process] = []
    try:
        async with SampleWebServer(web, log=True) as srv:
            place = ["--redis", server.url, "--crawl-id", "stop"]
            submit = [
                "crawl", *place, "--blobs", s3_url, "--quiet", "--parse-workers", "0",
                "--data", str(tmp_path / "submitter"), "--delay", "0.05",
                *_seeds_and_scope(web, srv),
            ]  # fmt: skip
            log = tmp_path / "worker.log"
            if who == "trawl worker":
                submitter = await asyncio.create_subprocess_exec(
                    TRAWL, *submit, "--no-worker",
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )  # fmt: skip
                procs.append(submitter)
                work = ["worker", *place, "--quiet", "--parse-workers", "0"]
                work += ["--data", str(tmp_path / "worker")]
            else:
                work = submit
            with log.open("w") as sink:
                worker = await asyncio.create_subprocess_exec(
                    TRAWL, *work,
                    stdout=subprocess.DEVNULL, stderr=sink, start_new_session=True,
                )  # fmt: skip
            procs.append(worker)
            # Working: some of its requests reached the web (0.05 s apart on each host).
            deadline = time.monotonic() + 60
            assert srv.log is not None
            while sum(srv.log.count(h) for h in web.hosts) < 10:
                assert time.monotonic() < deadline, log.read_text()[-2000:]
                await asyncio.sleep(0.1)
            await asyncio.sleep(2.0)
            assert worker.returncode is None, log.read_text()[-2000:]

            server.kill()
            await asyncio.sleep(0.5)
            worker.send_signal(signal.SIGINT)  # a graceful stop: it needs Redis
            await asyncio.sleep(1.0)
            asked = time.monotonic()
            worker.send_signal(signal.SIGINT)  # "Ctrl-C again to abort"
            code = await asyncio.wait_for(worker.wait(), 15)
            took = time.monotonic() - asked
    finally:
        for proc in procs:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGKILL)
                await proc.wait()
        server.stop()
    said = log.read_text()
    assert code == 130, said[-3000:]
    assert f"{who}" in said and "stopped as asked, Redis not answering" in said, said[-3000:]
    # Said by the command told to stop (the worker's line names its id), not another.
    assert re.search(rf"^{who}( \S+)?: stopped as asked, Redis not answering", said, re.M)
    # Without the fix it waited out 30 s a call (and went on); this is a few seconds.
    assert took < 10, took
