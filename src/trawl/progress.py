"""Progress for people: a live line on a terminal, plain log lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from trawl.records import CrawlSummary, Snapshot


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

    def fail(self, message: str) -> None:
        """A run that ended in error: its one line, below the live line if one is drawn."""
        if self._tty and self._last:
            self._out.write("\n")
        self._out.write(message + "\n")
        self._out.flush()

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
        dropped = {k[8:]: v for k, v in summary.counters.items() if k.startswith("dropped:")}
        if dropped:
            lines.append(
                "  links dropped    "
                + ", ".join(f"{k} {v:,}" for k, v in sorted(dropped.items(), key=lambda x: -x[1]))
            )
        errors = {k[6:]: v for k, v in summary.counters.items() if k.startswith("error:")}
        if errors:
            lines.append(
                "  errors           "
                + ", ".join(f"{k} {v:,}" for k, v in sorted(errors.items(), key=lambda x: -x[1]))
            )
        for err in summary.seed_errors:
            lines.append(f"  bad seed         {err}")
        lines.append(f"  data             {summary.data_dir}")
        if summary.warc_files:
            lines.append(f"  WARC files       {len(summary.warc_files)} in {summary.data_dir}/warc")
        if summary.text_files:
            lines.append(f"  text files       {len(summary.text_files)} in {summary.data_dir}/text")
        self._out.write("\n".join(lines) + "\n")
        self._out.flush()
