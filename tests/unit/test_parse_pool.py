"""The parse workers' pool (parse/pool.py): jobs over a socket pair per worker."""

from __future__ import annotations

import asyncio
import os
import signal
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from trawl.parse.page import PageInput, ParseOptions, parse_page
from trawl.parse.pool import DEPTH, ParsePool
from trawl.parse.worker import init_worker


def _double(x: int) -> int:
    return 2 * x


def _echo_big(data: bytes) -> bytes:
    return data[::-1] * 3


def _pid() -> int:
    return os.getpid()


def _fail(message: str) -> int:
    raise ValueError(message)


class _UnpicklableError(Exception):
    def __reduce__(self) -> str | tuple[object, ...]:
        raise TypeError("not picklable")


def _fail_badly() -> int:
    raise _UnpicklableError("odd")


def _die() -> int:
    os.kill(os.getpid(), signal.SIGKILL)
    return 0


async def test_jobs_results_and_errors_come_back() -> None:
    pool = ParsePool(2)
    try:
        assert await asyncio.gather(*(pool.run(_double, i) for i in range(50))) == [
            2 * i for i in range(50)
        ]
        big = os.urandom(300_000)  # larger than a socket's buffer, both ways
        assert await pool.run(_echo_big, big) == big[::-1] * 3
        with pytest.raises(ValueError, match="boom"):
            await pool.run(_fail, "boom")
        with pytest.raises(RuntimeError, match="odd"):
            await pool.run(_fail_badly)
        pids = set(await asyncio.gather(*(pool.run(_pid) for _ in range(20))))
        assert pids == set(pool.pids) and len(pids) == 2  # both workers take jobs
        assert os.getpid() not in pids
    finally:
        pool.shutdown(wait=True)


async def test_a_page_parses_as_in_process() -> None:
    pool = ParsePool(1, initializer=init_worker)
    page = PageInput("http://a.example/", (), b"<title>T</title><p>Some words here.</p>")
    try:
        assert await pool.run(parse_page, page, ParseOptions()) == parse_page(page, ParseOptions())
    finally:
        pool.shutdown(wait=True)


async def test_a_dead_worker_fails_its_jobs_and_is_replaced() -> None:
    pool = ParsePool(2)
    try:
        await pool.run(_double, 1)
        with pytest.raises(BrokenProcessPool):
            await pool.run(_die)
        # The other jobs go on, and the dead worker has a successor.
        assert await asyncio.gather(*(pool.run(_double, i) for i in range(10))) == [
            2 * i for i in range(10)
        ]
        await asyncio.gather(*(pool.run(_pid) for _ in range(10)))
        assert len(pool.pids) == 2
    finally:
        pool.shutdown(wait=True)


async def test_shutdown_fails_jobs_in_flight_and_ends_the_workers() -> None:
    pool = ParsePool(1)
    await pool.run(_double, 1)
    (worker,) = pool.pids
    pending = asyncio.ensure_future(pool.run(_echo_big, b"x" * 1_000_000))
    await asyncio.sleep(0)
    pool.shutdown(wait=True, cancel_futures=True)
    with pytest.raises(BrokenProcessPool):
        await pending
    with pytest.raises(ProcessLookupError):
        os.kill(worker, 0)  # joined: gone
    with pytest.raises(BrokenProcessPool, match="shut down"):
        await pool.run(_double, 2)


async def test_a_cancelled_job_leaves_the_worker_in_step() -> None:
    pool = ParsePool(1)
    try:
        task = asyncio.ensure_future(pool.run(_echo_big, b"y" * 200_000))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await pool.run(_double, 21) == 42  # its answer is not taken for this one
    finally:
        pool.shutdown(wait=True)


async def test_workers_import_this_process_path_not_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A folder named like the package in the directory the crawl runs from is not what
    # a worker imports: it takes this process's path, in this order.
    decoy = tmp_path / "trawl"
    (decoy / "parse").mkdir(parents=True)
    (decoy / "__init__.py").write_text("raise SystemExit(3)\n")
    (decoy / "parse" / "__init__.py").write_text("")
    (decoy / "parse" / "worker.py").write_text("raise SystemExit(4)\n")
    monkeypatch.chdir(tmp_path)
    pool = ParsePool(1, initializer=init_worker)
    try:
        assert await pool.run(_double, 21) == 42  # this test module, found on our path
        (pid,) = pool.pids
        cmdline = await asyncio.to_thread(Path(f"/proc/{pid}/cmdline").read_bytes)
        command = cmdline.split(b"\0")
        # Short and plain: py-spy's raw stacks split frames at ";" (a -c line had them).
        assert command[1:4] == [b"-P", b"-m", b"trawl.parse.worker"]
        assert not any(b";" in part for part in command)
    finally:
        pool.shutdown(wait=True)


def test_at_least_one_worker() -> None:
    with pytest.raises(ValueError, match="at least one"):
        ParsePool(0)


async def test_jobs_wait_their_turn_and_survive_a_death() -> None:
    """More jobs than the workers hold: the rest wait in the pool (cancelled ones are
    skipped), and a worker's death leaves the waiting ones to its successor."""
    pool = ParsePool(1)
    try:
        jobs = [asyncio.ensure_future(pool.run(_double, i)) for i in range(30)]
        killer = asyncio.ensure_future(pool.run(_die))
        more = [asyncio.ensure_future(pool.run(_double, i)) for i in range(30, 40)]
        await asyncio.sleep(0)
        jobs[20].cancel()
        with pytest.raises(BrokenProcessPool):
            await killer
        done = await asyncio.gather(*jobs, *more, return_exceptions=True)
        assert isinstance(done[20], asyncio.CancelledError)
        for i, value in enumerate(done):
            assert value == 2 * i or i == 20 or isinstance(value, BrokenProcessPool)
        # The jobs after the fatal one may have waited in the dying worker's socket;
        # those still in the pool's queue went to its successor.
        after = 30 + DEPTH - 1
        assert done[after:] == [2 * i for i in range(after, 40)]
    finally:
        pool.shutdown(wait=True)
