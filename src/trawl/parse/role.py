"""The parse role in the crawl process: stored pages in, their outcomes applied.

Pages come from the fetch role in memory (``submit``: the body is still at hand) or
from the durable parse queue (the body read back from its committed WARC record):
after a crash, and always when the fetch role runs in another process (``poll``).
Each is parsed in a worker process (``parse/page.py``, pure; a sitemap file by
``parse/sitemap.py``), then applied by the ``ParseStage`` (``SitemapStage``), which
acknowledges it in the store's next commit.
A worker that dies is replaced and its page tried once more.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Coroutine
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from trawl.archive.warc import read_rendered, read_response
from trawl.fetch.http import decode_content
from trawl.fetch.stage import ParseTask
from trawl.frontier.admission import CounterSink
from trawl.jobs import ParseJob
from trawl.memory import PageBytes, Share
from trawl.models import Location
from trawl.parse.page import PageInput, ParsedPage, ParseOptions, parse_page
from trawl.parse.pool import ParsePool
from trawl.parse.sitemap import MAX_BYTES as SITEMAP_MAX_BYTES
from trawl.parse.sitemap import ParsedSitemap, parse_sitemap
from trawl.parse.sitemap_stage import SitemapStage
from trawl.parse.stage import ParseStage
from trawl.parse.worker import init_worker
from trawl.roles import said_if_failed
from trawl.storage.base import ParseQueue

log = logging.getLogger(__name__)

__all__ = ["ParseRole"]

# Fetching pauses (``has_room`` False) while the pages submitted and not yet applied
# hold ``page_bytes.limit`` bytes (``MemoryLimits.pages``, with the fetches under way),
# or ``max_held_pages`` pages: parsing that falls behind for a moment must not stop
# fetching, since a host's turn not taken is lost for good, but memory stays bounded
# when parsing cannot keep up at all. A page submitted holds its body and, until its
# result comes back, as much again (the result's main text and links are of the order
# of the body, and wait for the event loop like it); then its body and its result's
# own size. A page counts at most half the limit (``PageBytes.charge``): one huge page
# never stops fetching on its own while it is parsed and admitted.
_RESULT_GUESS = 1  # a result not yet back counts this many times its body


class ParseRole:
    def __init__(
        self,
        *,
        stage: ParseStage,
        sitemaps: SitemapStage,
        options: ParseOptions,
        workers: int,
        read_warc: Callable[[Location], bytes],
        max_body_bytes: int,
        counters: CounterSink,
        on_done: Callable[[], None],
        on_error: Callable[[Exception], bool],
        writable: Callable[[], bool],
        latency: Callable[[float], None] | None = None,
        max_held_pages: int = 1024,
        page_bytes: PageBytes | None = None,
    ) -> None:
        """``on_error`` says whether an error was dealt with (a full disk) or is a bug;
        ``writable`` False means write nothing more (the disk is full)."""
        self._stage = stage
        self._sitemaps = sitemaps
        self._options = options
        self._workers = workers
        self._read_warc = read_warc
        self._max_body = max_body_bytes
        self._count = counters
        self._on_done = on_done
        self._on_error = on_error
        self._writable = writable
        self._latency = latency
        self._pool: ParsePool | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        # Bodies and results of the pages submitted and not yet applied (and, shared
        # with the HTTP client, the bodies being read).
        self.held = page_bytes or PageBytes(16 << 20)
        self._max_held_pages = max_held_pages
        # Queued or recovered pages taken up at once: enough to keep the workers busy.
        self._take_up = max(64, 32 * max(1, workers))
        self.recovering: list[tuple[int, ParseJob]] = []
        self._last_seq = 0  # the newest queue entry taken up

    @property
    def backlog(self) -> int:
        return len(self.tasks) + len(self.recovering)

    def has_room(self) -> bool:
        """Whether the fetch role may start another fetch (see ``_RESULT_GUESS``)."""
        return len(self.tasks) < self._max_held_pages and not self.held.full

    def start(self, pending: list[tuple[int, ParseJob]]) -> None:
        """Start the workers; ``pending`` are the queue's entries left by an earlier run."""
        self.recovering = list(pending)
        self._last_seq = max((seq for seq, _ in pending), default=0)
        self._pool = self._make_pool()

    def poll(self, queue: ParseQueue) -> None:
        """Take up entries another process's fetch role committed since the last poll."""
        room = self._take_up - self.backlog
        if room > 0:
            fresh = queue.pending(after=self._last_seq, limit=room)
            if fresh:
                self._last_seq = fresh[-1][0]
                self.recovering.extend(fresh)

    def take_over(self, queue: ParseQueue) -> None:
        """Take up the entries this process took over from others (a dead worker's):
        a process that fetches as well takes up its own pages as it fetches them and
        does not ``poll``."""
        room = self._take_up - self.backlog
        if room > 0:
            self.recovering.extend(queue.taken_over(limit=room))

    def feed(self) -> None:
        """Take recovered pages up while the workers have room for them."""
        while self.recovering and len(self.tasks) < self._take_up:
            self._recover(*self.recovering.pop(0))

    def submit(self, task: ParseTask) -> None:
        held = self.held.share()
        held.set((1 + _RESULT_GUESS) * len(task.body))
        self._track(self._parse(task, held))

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

    def _make_pool(self) -> ParsePool | None:
        if self._workers == 0:
            return None
        # A worker starts from a light module (parse/worker.py): the parser, not the
        # parse role's imports (the HTTP client, the stages).
        near = self._options.near
        coefficients = None if near is None else near.coefficients()
        return ParsePool(self._workers, initializer=functools.partial(init_worker, coefficients))

    def _recover(self, seq: int, job: ParseJob) -> None:
        """A page stored before a crash but not parsed: parse it from its WARC record
        (the rendered DOM's, for a rendered page)."""
        try:
            if job.rendered is not None:
                body = read_rendered(self._read_warc(job.rendered))
            else:
                stored = read_response(self._read_warc(job.warc))
                coding = next(
                    (v for k, v in stored.headers if k.lower() == "content-encoding"), None
                )
                cap = SITEMAP_MAX_BYTES if job.kind == "sitemap" else self._max_body
                body, _ = decode_content(stored.body, coding, cap)
        except Exception as exc:
            self._count.add("recover:unreadable")
            why = f"unreadable WARC record: {exc}"
            self._track(self._apply(seq, job, _failed(job, why)))
            return
        self._count.add("recover:parsed")
        self.submit(ParseTask(seq=seq, job=job, body=body))

    def _track(self, work: Coroutine[Any, Any, None]) -> None:
        t = asyncio.create_task(work)
        self.tasks.add(t)
        t.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        # An error no one handled (not a full disk: a store that failed, a bug).
        said_if_failed(task, "parse", self._count.add, log)

    async def _parse(self, task: ParseTask, held: Share) -> None:
        try:
            await self._parse_page(task, held)
        finally:
            held.set(0)

    async def _parse_page(self, task: ParseTask, held: Share, *, attempt: int = 1) -> None:
        """Parse and apply ``task``, counted in the page budget by ``held``."""
        job = task.job
        started = time.monotonic()
        try:
            result = await self._run(job, task.body)
        except BrokenProcessPool:
            # A worker died (a page crashed the parser?): the pool starts another in
            # its place (parse/pool.py); one more try per page.
            if attempt < 2:
                await self._parse_page(task, held, attempt=attempt + 1)
                return
            result = _failed(job, "parse worker crashed")
        if self._latency is not None:
            self._latency(time.monotonic() - started)
        held.set(len(task.body) + result_bytes(result))  # the result is here
        await self._apply(task.seq, job, result)

    async def _run(self, job: ParseJob, body: bytes) -> ParsedPage | ParsedSitemap:
        """Parse in a worker process (or here, with no workers)."""
        if job.kind == "sitemap":
            sitemap = self._sitemaps.input(job, body)
            if self._pool is None:
                return parse_sitemap(sitemap)
            return await self._pool.run(parse_sitemap, sitemap)
        page_input = PageInput(
            url=job.final_url,
            headers=job.headers,
            body=body,
            content_type=job.content_type,
            rendered=job.rendered is not None,
        )
        if self._pool is None:
            return parse_page(page_input, self._options)
        return await self._pool.run(parse_page, page_input, self._options)

    async def _apply(self, seq: int, job: ParseJob, result: ParsedPage | ParsedSitemap) -> None:
        try:
            if self._writable():
                if isinstance(result, ParsedSitemap):
                    await self._sitemaps.apply_async(seq, job, result)
                else:
                    await self._stage.apply_async(seq, job, result)
        except Exception as exc:
            if not self._on_error(exc):
                raise
        finally:
            # Off the backlog before the loop hears of it (else it sees the page still
            # under way and waits for an event that does not come).
            current = asyncio.current_task()
            if current is not None:
                self.tasks.discard(current)
            self._on_done()


def result_bytes(result: ParsedPage | ParsedSitemap) -> int:
    """About what a parse result holds: its strings, and some 64 bytes an object."""
    if isinstance(result, ParsedSitemap):
        entries = (*result.urls, *result.sitemaps)
        return sum(len(e.url) for e in entries) + 128 * (len(entries) + 1)
    links = result.links
    return (
        len(result.text)
        + len(result.title)
        + sum(map(len, links))
        + sum(map(len, result.anchors))
        + 64 * (2 * len(links) + len(result.unfollowed) + 4)
    )


def _failed(job: ParseJob, error: str) -> ParsedPage | ParsedSitemap:
    """The result of a job that could not be parsed at all."""
    if job.kind == "sitemap":
        return ParsedSitemap(url=job.final_url, kind="none", error=error, problem="unreadable")
    return ParsedPage(url=job.final_url, error=error)
