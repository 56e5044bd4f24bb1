"""The fetch role: leases from the frontier in, fetches under way, stored pages out.

It keeps up to ``max_in_flight`` fetches running (one per host at a time is the
frontier's guarantee). A stored page is handed on (``hand_off``) while its body is at
hand when the parse role runs in the same process; with no hand-off, the durable
parse queue is the only way to the parser, which may run in another process.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from trawl.clock import Clock
from trawl.fetch.stage import FetchStage, ParseTask
from trawl.frontier.admission import CounterSink
from trawl.models import Lease, UrlStatus
from trawl.storage.base import Frontier

__all__ = ["FetchRole"]


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
    ) -> None:
        """``on_error`` says whether an error was dealt with (a full disk) or is a bug;
        ``writable`` False means hand nothing more on (the disk is full);
        ``on_fetched(host, status, seconds)`` hears of every fetch that ended."""
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
        self.tasks: dict[asyncio.Task[None], Lease] = {}

    @property
    def in_flight(self) -> int:
        return len(self.tasks)

    def start(self, lease: Lease) -> None:
        task = asyncio.create_task(self._fetch(lease))
        self.tasks[task] = lease

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

    async def _fetch(self, lease: Lease) -> None:
        started = time.monotonic()
        task = None
        try:
            task = await self.stage.process(lease)
        except asyncio.CancelledError:
            raise
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
            self._frontier.finish(
                lease,
                UrlStatus.FAILED,
                reason=f"internal error: {type(exc).__name__}: {exc}",
                host_ready_at=self._clock.now() + self._delay,
            )
        except Exception as again:
            if not self._on_error(again):
                raise
