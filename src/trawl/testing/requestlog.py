"""The request log of a test server: what arrived, when, and when its answer ended.

Politeness tests read it: ``max_concurrency`` (requests to one host being served at
the same moment) and ``min_gap`` (quiet time between the end of one response and the
start of the next request to the same host). Times are ``time.monotonic()`` seconds.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field


@dataclass(slots=True)
class RequestRecord:
    """One request as the server saw it.

    ``started`` is when the server could first see the request: for the first request
    on a connection, the moment the connection was accepted; for a later one on a
    kept-alive connection, the moment its head was read. ``finished`` is when the
    last byte of the response was handed to the socket, or when the connection broke
    (on purpose or by the client); ``None`` while it is still being served.
    """

    started: float
    host: str
    method: str
    target: str
    headers: tuple[tuple[str, str], ...]
    finished: float | None = None
    status: int | None = None

    @property
    def path(self) -> str:
        """The target without its query."""
        return self.target.split("?", 1)[0]

    def header(self, name: str) -> str | None:
        """The first value of a request header (name case-insensitive)."""
        wanted = name.lower()
        return next((v for k, v in self.headers if k.lower() == wanted), None)


@dataclass(slots=True)
class RequestLog:
    """Every request a server received, in arrival order."""

    records: list[RequestRecord] = field(default_factory=list)

    def __iter__(self) -> Iterator[RequestRecord]:
        return iter(list(self.records))

    def __len__(self) -> int:
        return len(self.records)

    def begin(
        self,
        *,
        started: float,
        host: str,
        method: str,
        target: str,
        headers: Iterable[tuple[str, str]],
    ) -> RequestRecord:
        record = RequestRecord(started, host, method, target, tuple(headers))
        self.records.append(record)
        return record

    @staticmethod
    def end(record: RequestRecord, status: int | None = None) -> None:
        if record.finished is None:
            record.finished = time.monotonic()
        if status is not None and record.status is None:
            record.status = status

    def reset(self) -> None:
        """Forget everything logged so far."""
        self.records.clear()

    def requests_for(self, host: str) -> list[RequestRecord]:
        """The requests to ``host`` (a host name without port), in arrival order."""
        host = host.lower()
        return [r for r in self.records if r.host == host]

    def count(self, host: str, path: str | None = None) -> int:
        """Requests to ``host``; with ``path``, only those whose target (path and query,
        or path alone if ``path`` has no query) equals it."""
        records = self.requests_for(host)
        if path is None:
            return len(records)
        if "?" in path:
            return sum(1 for r in records if r.target == path)
        return sum(1 for r in records if r.path == path)

    def max_concurrency(self, host: str) -> int:
        """The most requests to ``host`` that were being served at one moment.

        A request still in flight counts as lasting until now.
        """
        events: list[tuple[float, int]] = []
        now = time.monotonic()
        for record in self.requests_for(host):
            events.append((record.started, 1))
            events.append((record.finished if record.finished is not None else now, -1))
        # At equal times an end sorts before a start: touching is not overlapping.
        events.sort()
        current = peak = 0
        for _, delta in events:
            current += delta
            peak = max(peak, current)
        return peak

    def min_gap(self, host: str, *, include_robots: bool = True) -> float:
        """The smallest time from the end of a response to the start of the next
        request to ``host``, in seconds; negative if two requests overlapped,
        ``math.inf`` if fewer than two requests were made.

        With ``include_robots=False``, requests for /robots.txt are left out.
        """
        records = sorted(
            (r for r in self.requests_for(host) if include_robots or r.path != "/robots.txt"),
            key=lambda r: r.started,
        )
        gap = math.inf
        latest_end = -math.inf
        now = time.monotonic()
        aborted = False
        for index, record in enumerate(records):
            # After a response the client cut off (a body over its cap), the server only
            # notices at a later write, so its end is later than the client's: the gap
            # after it is not measured (overlap still is, by ``max_concurrency``).
            if index and not aborted:
                gap = min(gap, record.started - latest_end)
            latest_end = max(latest_end, record.finished if record.finished is not None else now)
            aborted = record.finished is not None and record.status is None
        return gap

    def gaps(self, host: str) -> list[float]:
        """Every gap between consecutive requests to ``host`` (see ``min_gap``)."""
        records = sorted(self.requests_for(host), key=lambda r: r.started)
        out: list[float] = []
        latest_end = -math.inf
        now = time.monotonic()
        for index, record in enumerate(records):
            if index:
                out.append(record.started - latest_end)
            latest_end = max(latest_end, record.finished if record.finished is not None else now)
        return out
