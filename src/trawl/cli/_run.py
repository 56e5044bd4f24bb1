"""Running a built crawl from the command line: progress, signals, the summary.

At a terminal a live line and a text summary; otherwise (a pipe, a service manager's
journal) JSON log lines on stderr, one per progress interval, signal and summary, like
``trawl serve`` (``logs.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from typing import TYPE_CHECKING, Any, TextIO

from trawl.errors import DiskFullError

if TYPE_CHECKING:
    from trawl.crawl import Crawl
    from trawl.progress import Reporter

# Exit status of a crawl stopped by a full disk or by the free-space reserve (the
# sysexits.h EX_TEMPFAIL: try again later, here once space is freed; the crawl
# resumes where it stopped).
EXIT_DISK_FULL = 75


def reporter_for(stream: TextIO, *, interval: float | None) -> Reporter:
    """A live line at a terminal; else JSON lines through the ``trawl`` loggers."""
    from trawl.logs import setup_logging
    from trawl.progress import LogReporter, ProgressReporter

    if stream.isatty():
        return ProgressReporter(stream, interval=interval)
    setup_logging(stream, json=True)
    return LogReporter(interval=interval)


def fail(message: str, code: int) -> int:
    """Say why the crawl cannot run (as its progress would be said) and return ``code``."""
    reporter_for(sys.stderr, interval=None).fail(message)
    return code


def run_and_report(
    crawl: Crawl,
    *,
    quiet: bool,
    interval: float | None,
    late: LateInterrupts | None = None,
) -> int:
    """Run a built crawl to its end with progress, signals and the summary; the exit code.
    ``late``: the signals counted outside a run (a worker running crawl after crawl
    passes the same one each time, so a Ctrl-C between two runs stops the next)."""
    reporter = reporter_for(sys.stderr, interval=interval)
    late = late if late is not None else LateInterrupts()
    try:
        summary = asyncio.run(_run(crawl, reporter, late, quiet=quiet))
    finally:
        # From the loop ending to the process exiting, Ctrl-C must not tear the
        # close in half; it only marks the run as interrupted.
        late.install()
        crawl.close()
    if crawl.disk_full is not None:
        # One line, no summary: the numbers of a run cut short are not worth more.
        reporter.fail(disk_full_message(crawl.disk_full))
        return EXIT_DISK_FULL
    reporter.finish(summary)
    interrupted = summary.stopped in ("interrupted", "aborted") or late.count > 0
    return 130 if interrupted else 0


def disk_full_message(exc: DiskFullError) -> str:
    return f"trawl crawl: {exc}; free space and run the same command again to resume"


class LateInterrupts:
    """Counts SIGINT/SIGTERM: while the crawl is closing (``install``), and during a
    run too (``_run`` installs it beside its loop's handler). The count during a run
    is kept at once, in the signal's own Python handler, even while the loop is blocked
    (a worker waiting in a call to a Redis that does not answer): a second signal may
    then end that wait (``told_twice``, the Redis stores' ``give_up``)."""

    def __init__(self) -> None:
        self.count = 0

    def _on(self, signum: int, frame: object) -> None:
        self.count += 1

    def install(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._on)

    def told_twice(self) -> bool:
        """Told to stop twice (the second: "Ctrl-C again to abort")."""
        return self.count >= 2


async def _run(crawl: Any, reporter: Reporter, late: LateInterrupts, *, quiet: bool) -> Any:
    loop = asyncio.get_running_loop()
    interrupts = 0

    def on_signal() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts == 1:
            reporter.note("stopping: finishing in-flight work (Ctrl-C again to abort)")
            crawl.request_stop()
        else:
            crawl.abort()

    asked_before = late.count
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    # The loop still hears them (its wakeup fd is written by the C-level handler
    # whatever the Python-level one is); ``late`` counts them at once.
    late.install()
    if asked_before:  # asked to stop before this run could hear it
        on_signal()

    async def report() -> None:
        while True:
            await asyncio.sleep(reporter.interval)
            reporter.update(crawl.snapshot())

    reporting = None if quiet else asyncio.create_task(report())
    try:
        return await crawl.run()
    finally:
        if reporting is not None:
            reporting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reporting
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        late.install()  # no gap in which a signal kills the process mid-close
