"""Waiting between turns of the crawl loop, for a worker of a fleet: no polling.

The crawl loop waits for its own events (a fetch or a parse ended, a stop) or until
the earliest time its frontier knows a host or a URL is due. A process alone with its
store needs nothing more (``Crawl`` without a waiter). A fleet's workers also change
the frontier under each other; ``FleetWait`` lets them hear of it through the store's
``WakeSignal`` instead of looking at the schedule again and again:

- a worker with nothing at all to do (nothing in flight, nothing to parse) blocks on
  the signal, in a thread, until an announcement, its own event, or the timeout;
- a worker that is full (at its concurrency, paused, at its page limit) announces, so
  an idle one comes for the work it cannot take;
- any other worker waits for its own events: its fetches end soon, and it looks at the
  schedule then.

Every wait ends by ``max_wait`` at the latest, so a lost announcement costs a short
delay, never work; and no host is fetched early whatever wakes a worker: the host's
own state in the store decides.
"""

from __future__ import annotations

import asyncio
import contextlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from trawl.storage.base import WakeSignal

__all__ = ["FleetWait", "IdleWait", "local_wait"]


class IdleWait(Protocol):
    """What the crawl loop waits with (a fake in tests: time is the test's)."""

    @property
    def max_wait(self) -> float:
        """The longest a worker with room for work waits (a lost wake-up costs this)."""
        ...

    async def wait(self, local: asyncio.Event, seconds: float, *, idle: bool, full: bool) -> None:
        """Return when ``local`` is set, ``seconds`` passed, or (``idle``) another worker
        announced work; ``full``: this worker has work it cannot take."""
        ...

    def close(self) -> None: ...


async def local_wait(local: asyncio.Event, seconds: float) -> None:
    """Wait for ``local`` at most ``seconds``; a cancellation always propagates.

    Not ``asyncio.wait_for``: on Python 3.11 it runs the wait as a task of its own, and
    a cancellation that comes in the turn of the loop that task ends in is swallowed
    (``wait_for`` returns its result). The crawl loop waits here, and the task group
    cancels it when the group commit fails; at that moment the pages held at the
    commit gate fail too and each sets ``local``. Swallowed, the crawl went on without
    commits: a fleet worker whose S3 upload failed fetched and failed pages forever."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(max(seconds, 0.001)):
            await local.wait()


class FleetWait:
    """``IdleWait`` over a store's ``WakeSignal`` (see the module docstring)."""

    def __init__(self, signal: WakeSignal, *, max_wait: float = 2.0) -> None:
        self._signal = signal
        self._max_wait = max_wait
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trawl-wake")
        self._blocked: asyncio.Future[bool] | None = None  # a block under way
        self.woken = 0  # waits an announcement ended (for tests and benches)

    @property
    def max_wait(self) -> float:
        return self._max_wait

    async def wait(self, local: asyncio.Event, seconds: float, *, idle: bool, full: bool) -> None:
        if full:
            self._signal.announce()
        if not idle:
            await local_wait(local, seconds)
            return
        self._signal.flush()  # what it kept back to send, before going quiet
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        heard = asyncio.ensure_future(local.wait())
        try:
            while not local.is_set() and (left := deadline - loop.time()) > 0:
                blocked, fresh = self._blocked, False
                if blocked is None or blocked.done():  # else an earlier one is ending
                    blocked = loop.run_in_executor(self._thread, self._signal.block, left)
                    self._blocked, fresh = blocked, True
                either: list[asyncio.Future[Any]] = [heard, blocked]
                done, _ = await asyncio.wait(
                    either, timeout=left + 0.5, return_when=asyncio.FIRST_COMPLETED
                )
                if blocked not in done:
                    self._signal.unblock()  # its own event came first: end the block now
                    return
                if blocked.result():
                    self.woken += 1
                    return
                if fresh:
                    return  # the wait ran out (or Redis failed and it waited without)
        finally:
            heard.cancel()

    def close(self) -> None:
        self._signal.close()
        self._thread.shutdown(wait=False, cancel_futures=True)
