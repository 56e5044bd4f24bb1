"""Progress: a live line for a person at a terminal, JSON log lines otherwise.

``ProgressReporter`` draws the live line and prints the summary as text (``trawl
crawl`` at a terminal, ``make demo``); ``LogReporter`` sends the same snapshots and the
summary through the ``trawl`` loggers, which ``logs.setup_logging`` makes JSON lines
when stderr is not a terminal (``trawl crawl`` and ``trawl worker`` under a service
manager or in a pipe, like ``trawl serve``).
"""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import asdict
from typing import Any, Protocol, TextIO

from trawl.records import CrawlSummary, Snapshot, by_prefix

log = logging.getLogger("trawl.crawl")


class Reporter(Protocol):
    """What ``cli/_run.py`` tells while a crawl runs and when it ends."""

    @property
    def interval(self) -> float: ...

    def update(self, snapshot: Snapshot) -> None: ...

    def note(self, message: str) -> None: ...

    def fail(self, message: str) -> None: ...

    def finish(self, summary: CrawlSummary) -> None: ...


def _listing(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v:,}" for k, v in counts.items())


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def render(s: Snapshot) -> str:
    return (
        f"known {s.known:,}  fetched {s.fetched:,}  docs {s.documents:,}  "
        f"failed {s.failed:,}  skipped {s.skipped:,}  waiting {s.queued + s.waiting:,}  "
        f"in flight {s.in_flight:,}  {s.pages_per_second:,.1f} pages/s  "
        f"{human_bytes(s.bytes)}  errors {s.errors:,}  "
        f"hosts ready {s.hosts_ready:,}/{s.hosts_ready + s.hosts_waiting:,}"
    )


class ProgressReporter:
    """Writes a snapshot every ``interval`` seconds: redrawn in place on a terminal."""

    def __init__(self, out: TextIO | None = None, *, interval: float | None = None) -> None:
        self._out = out or sys.stderr
        self._tty = self._out.isatty()
        self._interval = interval if interval is not None else (0.5 if self._tty else 10.0)
        self._last = 0.0

    @property
    def interval(self) -> float:
        return self._interval

    def update(self, snapshot: Snapshot) -> None:
        now = time.monotonic()
        if now - self._last < self._interval:
            return
        self._last = now
        line = render(snapshot)
        if self._tty:
            width = 200
            self._out.write("\r\x1b[2K" + line[:width])
        else:
            self._out.write(f"[{snapshot.elapsed:8.1f}s] {line}\n")
        self._out.flush()

    def note(self, message: str) -> None:
        """A line about the run (a signal heard), below the live line."""
        if self._tty and self._last:
            self._out.write("\n")
        self._out.write(message + "\n")
        self._out.flush()

    def fail(self, message: str) -> None:
        """A run that ended in error: its one line, below the live line if one is drawn."""
        self.note(message)

    def finish(self, summary: CrawlSummary) -> None:
        if self._tty:
            self._out.write("\n")
        s = summary.snapshot
        lines = [
            f"crawl {summary.stopped} after {s.elapsed:.1f}s",
            f"  URLs known       {s.known:,}",
            f"  pages fetched    {s.fetched:,} ({s.documents:,} documents kept, "
            f"{s.duplicates:,} duplicates)",
            f"  failed           {s.failed:,}",
            f"  skipped          {s.skipped:,}",
            f"  redirected       {s.redirected:,}",
            f"  still queued     {s.queued + s.waiting + s.in_flight:,}",
            f"  bytes received   {human_bytes(s.bytes)}",
        ]
        failed = summary.failed_by_reason
        if failed:
            lines.append(f"  failed by reason {_listing(failed)}")
        urls, hosts = summary.robots_waiting
        if urls:
            lines.append(
                f"  robots.txt wait  {urls:,} URLs on {hosts:,} hosts whose robots.txt is "
                "unreachable (left queued: run the same command again to resume)"
            )
        dropped = by_prefix(summary.counters, "dropped:")
        if dropped:
            lines.append(f"  links dropped    {_listing(dropped)}")
        errors = by_prefix(summary.counters, "error:")
        if errors:
            lines.append(f"  errors           {_listing(errors)}")
        for err in summary.seed_errors:
            lines.append(f"  bad seed         {err}")
        lines.append(f"  data             {summary.data_dir}")
        if summary.warc_files:
            lines.append(f"  WARC files       {len(summary.warc_files)} in {summary.data_dir}/warc")
        if summary.text_files:
            lines.append(f"  text files       {len(summary.text_files)} in {summary.data_dir}/text")
        self._out.write("\n".join(lines) + "\n")
        self._out.flush()


def summary_fields(summary: CrawlSummary) -> dict[str, Any]:
    """The summary as the fields of one log record."""
    return {
        "stopped": summary.stopped,
        **asdict(summary.snapshot),
        "failed_by_reason": summary.failed_by_reason,
        "links_dropped": by_prefix(summary.counters, "dropped:"),
        "errors_by_kind": by_prefix(summary.counters, "error:"),
        "seed_errors": list(summary.seed_errors),
        "data_dir": summary.data_dir,
        "warc_files": len(summary.warc_files),
        "text_files": len(summary.text_files),
    }


class LogReporter:
    """Snapshots and the summary as log records (JSON lines off a terminal)."""

    def __init__(self, *, interval: float | None = None, logger: logging.Logger = log) -> None:
        self._interval = interval if interval is not None else 10.0
        self._log = logger
        self._last = 0.0

    @property
    def interval(self) -> float:
        return self._interval

    def update(self, snapshot: Snapshot) -> None:
        now = time.monotonic()
        if now - self._last < self._interval:
            return
        self._last = now
        self._log.info("progress", extra=asdict(snapshot))

    def note(self, message: str) -> None:
        self._log.info(message)

    def fail(self, message: str) -> None:
        self._log.error(message)

    def finish(self, summary: CrawlSummary) -> None:
        fields = summary_fields(summary)
        if summary.error is not None:
            fields["error"] = summary.error
        self._log.info("crawl %s", summary.stopped, extra=fields)
