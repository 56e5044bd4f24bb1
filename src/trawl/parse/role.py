"""The parse role in the crawl process: stored pages in, their outcomes applied.

Pages come from the fetch role in memory (``submit``: the body is still at hand) or
from the durable parse queue (the body read back from its committed WARC record):
after a crash, and always when the fetch role runs in another process (``poll``).
Each is parsed in a worker process (``parse/page.py``, pure), then applied by the
``ParseStage``, which acknowledges it in the store's next commit.
A worker that dies is replaced and its page tried once more.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from trawl.archive.warc import read_response
from trawl.fetch.http import decode_content
from trawl.fetch.stage import ParseTask
from trawl.frontier.admission import CounterSink
from trawl.jobs import ParseJob
from trawl.models import Location
from trawl.parse.page import PageInput, ParsedPage, ParseOptions, parse_page
from trawl.parse.stage import ParseStage
from trawl.storage.base import ParseQueue

__all__ = ["ParseRole"]


def _init_worker() -> None:
    """Warm a parse worker: import the parser and its language tables once.

    Ctrl-C is the crawl process's business: a terminal sends SIGINT to the whole
    process group, and a worker that took it would die with a KeyboardInterrupt
    traceback mid-page; the crawl process stops the pool itself. SIGTERM keeps its
    default: the pool's own clean-up after a crashed worker terminates the others.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parse_page(
        PageInput("http://warm.invalid/", (), b"<p>warming up this worker</p>"), ParseOptions()
    )


class ParseRole:
    def __init__(
        self,
        *,
        stage: ParseStage,
        options: ParseOptions,
        workers: int,
        read_warc: Callable[[Location], bytes],
        max_body_bytes: int,
        counters: CounterSink,
        on_done: Callable[[], None],
        on_error: Callable[[Exception], bool],
        writable: Callable[[], bool],
        latency: Callable[[float], None] | None = None,
    ) -> None:
        """``on_error`` says whether an error was dealt with (a full disk) or is a bug;
        ``writable`` False means write nothing more (the disk is full)."""
        self._stage = stage
        self._options = options
        self._workers = workers
        self._read_warc = read_warc
        self._max_body = max_body_bytes
        self._count = counters
        self._on_done = on_done
        self._on_error = on_error
        self._writable = writable
        self._latency = latency
        self._pool: Executor | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.recovering: list[tuple[int, ParseJob]] = []
        self._last_seq = 0  # the newest queue entry taken up

    @property
    def backlog(self) -> int:
        return len(self.tasks) + len(self.recovering)

    def start(self, pending: list[tuple[int, ParseJob]]) -> None:
        """Start the workers; ``pending`` are the queue's entries left by an earlier run."""
        self.recovering = list(pending)
        self._last_seq = max((seq for seq, _ in pending), default=0)
        self._pool = self._make_pool()

    def poll(self, queue: ParseQueue, cap: int) -> None:
        """Take up entries another process's fetch role committed since the last poll."""
        room = cap - self.backlog
        if room > 0:
            fresh = queue.pending(after=self._last_seq, limit=room)
            if fresh:
                self._last_seq = fresh[-1][0]
                self.recovering.extend(fresh)

    def feed(self, cap: int) -> None:
        """Take recovered pages up while fewer than ``cap`` parses are under way."""
        while self.recovering and len(self.tasks) < cap:
            self._recover(*self.recovering.pop(0))

    def submit(self, task: ParseTask) -> None:
        self._track(self._parse(task))

    async def finish(self, grace: float) -> None:
        """Let parses under way end within ``grace`` seconds (0: none); cancel the rest
        (their queue entries stay, so they are parsed again at the next start)."""
        if self.tasks and grace:
            await asyncio.wait(list(self.tasks), timeout=grace)
        await self.drop()

    async def drop(self) -> None:
        """Cancel every parse under way."""
        tasks = list(self.tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def shutdown(self, *, wait: bool) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=wait, cancel_futures=True)

    # -- the work ----------------------------------------------------------------------

    def _make_pool(self) -> Executor | None:
        if self._workers == 0:
            return None
        return ProcessPoolExecutor(
            max_workers=self._workers,
            mp_context=multiprocessing.get_context("forkserver"),
            initializer=_init_worker,
        )

    def _recover(self, seq: int, job: ParseJob) -> None:
        """A page stored before a crash but not parsed: parse it from its WARC record."""
        try:
            stored = read_response(self._read_warc(job.warc))
            coding = next((v for k, v in stored.headers if k.lower() == "content-encoding"), None)
            body, _ = decode_content(stored.body, coding, self._max_body)
        except Exception as exc:
            self._count.add("recover:unreadable")
            page = ParsedPage(url=job.final_url, error=f"unreadable WARC record: {exc}")
            self._track(self._apply(seq, job, page))
            return
        self._count.add("recover:parsed")
        self.submit(ParseTask(seq=seq, job=job, body=body))

    def _track(self, work: Coroutine[Any, Any, None]) -> None:
        t = asyncio.create_task(work)
        self.tasks.add(t)
        t.add_done_callback(self.tasks.discard)

    async def _parse(self, task: ParseTask, *, attempt: int = 1) -> None:
        job = task.job
        page_input = PageInput(
            url=job.final_url, headers=job.headers, body=task.body, content_type=job.content_type
        )
        started = time.monotonic()
        try:
            if self._pool is None:
                page = parse_page(page_input, self._options)
            else:
                loop = asyncio.get_running_loop()
                page = await loop.run_in_executor(self._pool, parse_page, page_input, self._options)
        except BrokenProcessPool:
            # A worker died (a page crashed the parser?): new pool; one more try per page.
            old, self._pool = self._pool, self._make_pool()
            if old is not None:
                old.shutdown(wait=False, cancel_futures=True)
            if attempt < 2:
                await self._parse(task, attempt=attempt + 1)
                return
            page = ParsedPage(url=job.final_url, error="parse worker crashed")
        if self._latency is not None:
            self._latency(time.monotonic() - started)
        await self._apply(task.seq, job, page)

    async def _apply(self, seq: int, job: ParseJob, page: ParsedPage) -> None:
        try:
            if self._writable():
                await self._stage.apply_async(seq, job, page)
        except Exception as exc:
            if not self._on_error(exc):
                raise
        finally:
            self._on_done()
