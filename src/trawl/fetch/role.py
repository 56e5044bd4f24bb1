"""The fetch role: leases from the frontier in, fetches under way, stored pages out.

It keeps up to ``max_in_flight`` fetches running (one per host at a time is the
frontier's guarantee). A stored page is handed on (``hand_off``) while its body is at
hand when the parse role runs in the same process; with no hand-off, the durable
parse queue is the only way to the parser, which may run in another process.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from trawl.clock import Clock
from trawl.fetch.sendcheck import LeaseEndingError, SendWindow, sending_under
from trawl.fetch.stage import FetchStage, ParseTask
from trawl.frontier.admission import CounterSink
from trawl.memory import PageBytes
from trawl.models import Lease, UrlStatus
from trawl.roles import said_if_failed
from trawl.storage.base import CrawlStore, Frontier

log = logging.getLogger(__name__)

__all__ = ["RENDER_BACKLOG", "FetchRole"]

RENDER_BACKLOG = 4

_WAITS_CHECK = 0.5  # seconds between two looks at the robots.txt waits (a store's counts)


class FetchRole:
    def __init__(
        self,
        *,
        stage: FetchStage,
        frontier: Frontier,
        counters: CounterSink,
        clock: Clock,
        delay: float,
        hand_off: Callable[[ParseTask], None] | None,
        on_done: Callable[[], None],
        on_error: Callable[[Exception], bool],
        writable: Callable[[], bool],
        on_fetched: Callable[[str, UrlStatus | None, float], None] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        fleet: CrawlStore | None = None,
        page_bytes: PageBytes | None = None,
    ) -> None:
        """``on_error`` says whether an error was dealt with (a full disk) or is a bug;
        ``writable`` False means hand nothing more on (the disk is full);
        ``on_fetched(host, status, seconds)`` hears of every fetch that ended.
        A request goes out only in the first half of its lease (measured on
        ``monotonic``: ``fetch/sendcheck.py``), else the URL goes back as it was: a
        lease is twice the longest fetch and a minute more, so what is sent ends
        within the lease. ``fleet`` is the store shared with other processes working on
        the crawl. ``page_bytes``: the bytes of pages held (each fetch under way holds
        its ``reserve``; the bodies being read; the parse role's), which stop new
        fetches when full."""
        self.stage = stage
        self._frontier = frontier
        self._count = counters
        self._clock = clock
        self._delay = delay
        self._hand_off = hand_off
        self._on_done = on_done
        self._on_error = on_error
        self._writable = writable
        self._on_fetched = on_fetched
        self._monotonic = monotonic
        self._fleet = fleet
        self._session_ttl = None if fleet is None else fleet.session_ttl
        self._page_bytes = page_bytes or PageBytes(1 << 62)
        self.tasks: dict[asyncio.Task[None], Lease] = {}
        self._waits_checked = -_WAITS_CHECK

    @property
    def in_flight(self) -> int:
        return len(self.tasks)

    def robots_patience_over(self, now: float) -> bool:
        """Whether only URLs waiting for unreachable robots.txt files have been left
        for the crawl's patience (see ``fetch/robots_wait.py``); asked when nothing is
        in flight, looked into at most every ``_WAITS_CHECK`` seconds."""
        mono = time.monotonic()
        if mono - self._waits_checked < _WAITS_CHECK:
            return False
        self._waits_checked = mono
        waits = self.stage.robots_waits
        if waits.over(waits.stalled(self._frontier, ()), now):
            if self._fleet is not None:
                waits.publish(self._fleet.meta, now)
            return True
        fleet = self._fleet
        return fleet is not None and waits.shared_stop(
            fleet.meta, self._frontier, fleet.parse_queue, now
        )

    def has_room(self, limit: int) -> bool:
        """Room for another fetch: fewer than ``limit`` under way, the pages held
        under their byte budget, and not many pages waiting for the browser: each holds
        its host and its lease while it waits, so past ``RENDER_BACKLOG`` x the pages
        rendered at once the browser is what holds the crawl up, and more leases would
        only wait (their leases running out)."""
        if len(self.tasks) >= limit or self._page_bytes.full:
            return False
        render = self.stage.render
        return render is None or render.waiting < RENDER_BACKLOG * render.pool.pages

    def start(self, lease: Lease) -> None:
        """Fetch under ``lease``, just taken (its send window starts counting now)."""
        now = self._clock.now()
        life = lease.expires - now
        within = life / 2  # the request goes out within this long of the take, or never
        # A lease is only this writer's while its session lives: one stopped (SIGSTOP,
        # a long pause) between take and send past half its session's life may have
        # been rolled back and its host taken by another worker: it sends nothing.
        if self._session_ttl is not None:
            within = min(within, self._session_ttl / 2)
        window = SendWindow(
            expires=lease.expires, now=now, margin=life - within, monotonic=self._monotonic
        )
        held = self._page_bytes
        held.add(held.reserve)
        task = asyncio.create_task(self._fetch(lease, window))
        task.add_done_callback(self._ended)
        self.tasks[task] = lease

    def _ended(self, task: asyncio.Task[None]) -> None:
        # The reserve given back however the task ended, even cancelled before it ran;
        # an error no step handled (its URL's failure could not be recorded) is said.
        held = self._page_bytes
        held.add(-held.reserve)
        said_if_failed(task, "fetch", self._count.add, log)

    async def finish(self, grace: float) -> None:
        """Let fetches under way end within ``grace`` seconds (0: none); the rest are
        cancelled and their URLs given back uncounted."""
        if not self.tasks:
            return
        _done, pending = await asyncio.wait(list(self.tasks), timeout=grace or None)
        if grace == 0.0:
            pending = set(self.tasks)
        for task in pending:
            task.cancel()
        for task in pending:
            lease = self.tasks.pop(task, None)
            if lease is not None:
                self._frontier.requeue(lease, host_ready_at=self._clock.now())
        await asyncio.gather(*pending, return_exceptions=True)

    async def drop(self) -> None:
        """Cancel every fetch under way, recording nothing (the disk is full)."""
        tasks = list(self.tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.tasks.clear()

    async def _fetch(self, lease: Lease, window: SendWindow) -> None:
        started = time.monotonic()
        task = None
        try:
            with sending_under(window):
                task = await self.stage.process(lease)
        except asyncio.CancelledError:
            raise
        except LeaseEndingError:  # stopped too long before sending: nothing went out
            self._count.add("fetch:lease ending")
            self._frontier.requeue(lease, host_ready_at=self._clock.now())
        except Exception as exc:  # a bug must not stop the crawl: record and go on
            if not self._on_error(exc):
                self._internal_error(lease, exc)
        finally:
            current = asyncio.current_task()
            if current is not None:
                self.tasks.pop(current, None)
            self._on_done()
            if self._on_fetched is not None:
                record = self._frontier.get(lease.host, lease.fp)
                self._on_fetched(
                    lease.host, record.status if record else None, time.monotonic() - started
                )
        if task is not None and self._hand_off is not None and self._writable():
            self._hand_off(task)

    def _internal_error(self, lease: Lease, exc: Exception) -> None:
        try:
            self._count.add("error:internal")
            self._count.add("failed:internal error")
            self._frontier.finish(
                lease,
                UrlStatus.FAILED,
                reason=f"internal error: {type(exc).__name__}: {exc}",
                host_ready_at=self._clock.now() + self._delay,
            )
        except Exception as again:
            if not self._on_error(again):
                raise
