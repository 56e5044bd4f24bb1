"""What a running crawl tells the service: latency histograms, per-host tallies, and
the ``progress.json`` document written next to its database about once a second.

The crawler only adds to in-memory counts on its hot path (a bisect and two dict
increments per fetch); the document is built and written atomically off the hot path,
so the API and ``/metrics`` read a crawl's numbers without touching its database.
"""

from __future__ import annotations

import heapq
import os
import time
from bisect import bisect_left
from collections import Counter, deque
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from trawl.models import UrlStatus

if TYPE_CHECKING:
    from trawl.storage.base import CrawlReader

# Seconds; fetches span a fast loopback answer to a slow overseas server.
FETCH_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
PARSE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)
PROGRESS_FILE = "progress.json"
TOP_HOSTS = 10
HISTORY = 300  # samples of pages/s kept for the dashboard chart (5 min at 1 s)

_ERROR_STATES = (UrlStatus.FAILED, UrlStatus.WAITING)
_PAGE_STATES = (UrlStatus.FETCHED, UrlStatus.PARSED, UrlStatus.REDIRECTED)


class Histogram:
    """Fixed buckets (upper bounds); counts per bucket, the last one is +Inf."""

    def __init__(self, buckets: tuple[float, ...]) -> None:
        self.buckets = buckets
        self.counts = [0] * (len(buckets) + 1)
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(self.buckets, seconds)] += 1
        self.sum += seconds

    def as_dict(self) -> dict[str, Any]:
        return {"buckets": list(self.buckets), "counts": list(self.counts), "sum": self.sum}


class Telemetry:
    """The crawler-side tallies behind progress.json (none of them durable)."""

    def __init__(self) -> None:
        self.fetch_latency = Histogram(FETCH_BUCKETS)
        self.parse_latency = Histogram(PARSE_BUCKETS)
        self.host_pages: Counter[str] = Counter()
        self.host_errors: Counter[str] = Counter()
        self.history: deque[tuple[float, float]] = deque(maxlen=HISTORY)

    def seed_hosts(self, reader: CrawlReader) -> None:
        """Start per-host tallies from the store, so a resumed crawl keeps its top hosts."""
        self.host_pages.update(reader.fetches_by_host())
        self.host_errors.update(reader.failed_by_host())

    def fetch_done(self, host: str, status: UrlStatus | None, seconds: float) -> None:
        self.fetch_latency.observe(seconds)
        if status in _PAGE_STATES:
            self.host_pages[host] += 1
        elif status in _ERROR_STATES:
            self.host_errors[host] += 1

    def progress(
        self,
        *,
        snapshot: Mapping[str, Any],
        counters: Mapping[str, int],
        state: str,
        crawl_id: str,
    ) -> dict[str, Any]:
        """The progress document of one crawl (``snapshot``: ``Crawl.snapshot()`` as a dict)."""
        rate = float(snapshot.get("pages_per_second", 0.0))
        self.history.append((round(time.time(), 3), round(rate, 3)))
        return {
            "crawl": crawl_id,
            "state": state,
            "pid": os.getpid(),
            "updated": time.time(),
            "snapshot": dict(snapshot),
            "counters": dict(counters),
            "fetch_latency": self.fetch_latency.as_dict(),
            "parse_latency": self.parse_latency.as_dict(),
            "top_hosts_by_pages": _top(self.host_pages),
            "top_hosts_by_errors": _top(self.host_errors),
            "history": list(self.history),
        }


def _top(counts: Counter[str]) -> list[list[Any]]:
    best = heapq.nlargest(TOP_HOSTS, counts.items(), key=lambda kv: (kv[1], kv[0]))
    return [[host, n] for host, n in best if n > 0]


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """Write-then-rename: a reader sees the old document or the new one, never half."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(orjson.dumps(data))
    os.replace(tmp, path)


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None
