"""A worker that goes on under a new session after losing one runs crawl after crawl:
a Ctrl-C that lands between two runs (while the lost one closes) must still stop it."""

from __future__ import annotations

import asyncio
import io
import signal

from trawl.cli._run import LateInterrupts, _run
from trawl.progress import ProgressReporter


class _Crawl:
    """The part of ``Crawl`` a run touches: it runs until asked to stop."""

    def __init__(self) -> None:
        self.stops = 0
        self._stop = asyncio.Event()

    def request_stop(self) -> None:
        self.stops += 1
        self._stop.set()

    def abort(self) -> None:
        self._stop.set()

    async def run(self) -> str:
        await self._stop.wait()
        return "stopped"


def test_a_signal_counted_between_two_runs_stops_the_next_run_at_once() -> None:
    late = LateInterrupts()
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        late.install()  # as the last run leaves it while it closes
        signal.raise_signal(signal.SIGTERM)  # Ctrl-C / SIGTERM before the next run hears
        assert late.count == 1
        reporter = ProgressReporter(io.StringIO(), interval=60.0)

        async def go() -> tuple[object, int]:
            crawl = _Crawl()
            result = await asyncio.wait_for(_run(crawl, reporter, late, quiet=True), 5)
            return result, crawl.stops

        assert asyncio.run(go()) == ("stopped", 1)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def test_a_run_without_late_signals_runs_on() -> None:
    late = LateInterrupts()
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    reporter = ProgressReporter(io.StringIO(), interval=60.0)
    try:

        async def go() -> bool:
            crawl = _Crawl()
            task = asyncio.create_task(_run(crawl, reporter, late, quiet=True))
            await asyncio.sleep(0)
            running = not task.done() and crawl.stops == 0
            crawl.request_stop()
            await task
            return running

        assert asyncio.run(go())
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
