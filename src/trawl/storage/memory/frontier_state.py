"""The state of the memory frontier and the reads over it.

``FrontierState`` (hosts, URL records, status counts) is the durable part: plain data
the crawl store copies at each commit, the rows of the SQLite tables. ``FrontierIndex``
derives from it what the SQLite frontier gets from its indexes and its in-memory
schedule (per-host queues, leases, back-offs, the host schedule), rebuilt on open.
The writes are in ``trawl.storage.memory.frontier``.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from trawl.models import HostInfo, UrlRecord, UrlStatus
from trawl.storage.schedule import HostSchedule, ScheduleReads

_INT64 = 1 << 64


def wrap_fp(fp: int) -> int:
    """``fp`` as a signed 64-bit integer, as SQLite stores it."""
    return (fp + (1 << 63)) % _INT64 - (1 << 63)


@dataclass(slots=True)
class HostRow:
    name: str
    next_at: float = 0.0
    queued: int = 0
    admitted: int = 0
    budget: int | None = None
    priority: int = 0
    demoted_reason: str | None = None

    def copy(self) -> HostRow:
        return HostRow(
            self.name,
            self.next_at,
            self.queued,
            self.admitted,
            self.budget,
            self.priority,
            self.demoted_reason,
        )


@dataclass(slots=True)
class UrlRow:
    fp: int
    url: str
    depth: int
    priority: int
    status: UrlStatus = UrlStatus.QUEUED
    due: float | None = None
    attempts: int = 0
    reason: str | None = None
    via: str | None = None
    hops: int = 0
    etag: str | None = None
    last_modified: str | None = None
    revisit: float | None = None
    cash: float = 1.0
    history: float = 0.0

    def copy(self) -> UrlRow:
        # By hand: many times faster than copy.copy, and a commit copies every row.
        return UrlRow(
            self.fp,
            self.url,
            self.depth,
            self.priority,
            self.status,
            self.due,
            self.attempts,
            self.reason,
            self.via,
            self.hops,
            self.etag,
            self.last_modified,
            self.revisit,
            self.cash,
            self.history,
        )


@dataclass(slots=True)
class FrontierState:
    """What a frontier keeps across a restart (the rows of the SQLite tables)."""

    hosts: dict[str, HostRow] = field(default_factory=dict)
    urls: dict[str, dict[int, UrlRow]] = field(default_factory=dict)  # host -> fp -> record
    counts: dict[UrlStatus, int] = field(default_factory=lambda: dict.fromkeys(UrlStatus, 0))

    def copy(self) -> FrontierState:
        """A copy sharing nothing mutable with this state."""
        return FrontierState(
            {name: h.copy() for name, h in self.hosts.items()},
            {name: {fp: u.copy() for fp, u in urls.items()} for name, urls in self.urls.items()},
            dict(self.counts),
        )


class FrontierIndex(ScheduleReads):
    """A ``FrontierState`` and the indexes over it; the Frontier protocol's reads."""

    def __init__(
        self,
        state: FrontierState,
        *,
        max_per_host: int | None = None,
        lease_seconds: float = 600.0,
    ) -> None:
        self._s = state
        self._max_per_host = max_per_host
        self._lease = lease_seconds
        self._schedule = HostSchedule()
        self._queues: dict[str, list[tuple[int, int]]] = {}  # host -> heap of (priority, fp)
        self._leased: dict[tuple[str, int], float] = {}  # in flight -> lease expiry
        self._waiting: dict[tuple[str, int], float] = {}  # waiting -> due
        self._load()

    def _load(self) -> None:
        # Leases held by a process that died come back now (restart = every lease expired).
        for name, urls in self._s.urls.items():
            for rec in urls.values():
                if rec.status is UrlStatus.IN_FLIGHT:
                    self._s.hosts[name].queued += 1
                    self._move(UrlStatus.IN_FLIGHT, UrlStatus.QUEUED)
                    self._index(name, rec, UrlStatus.QUEUED, None)
                else:
                    self._index(name, rec, rec.status, rec.due)
        for host in self._s.hosts.values():
            if host.queued > 0:
                self._schedule.schedule(host.name, host.next_at, self._order(host))

    def _head(self, host: str) -> int | None:
        """The key of ``host``'s best queued URL (stale heap entries dropped on the way)."""
        heap = self._queues.get(host)
        if not heap:
            return None
        urls = self._s.urls.get(host, {})
        while heap:
            priority, fp = heap[0]
            rec = urls.get(fp)
            if rec is not None and rec.status is UrlStatus.QUEUED and rec.priority == priority:
                return priority
            heapq.heappop(heap)
        return None

    def _order(self, host: HostRow) -> int:
        """``host``'s place among hosts ready at the same time, lower first."""
        return (self._head(host.name) or 0) + host.priority

    def _index(self, host: str, rec: UrlRow, status: UrlStatus, due: float | None) -> None:
        """Set a record's status and due time, keeping the derived indexes in step."""
        key = (host, rec.fp)
        self._leased.pop(key, None)
        self._waiting.pop(key, None)
        rec.status, rec.due = status, due
        if status is UrlStatus.QUEUED:
            heapq.heappush(self._queues.setdefault(host, []), (rec.priority, rec.fp))
        elif due is not None and status is UrlStatus.IN_FLIGHT:
            self._leased[key] = due
        elif due is not None and status is UrlStatus.WAITING:
            self._waiting[key] = due

    def _move(self, old: UrlStatus | None, new: UrlStatus, n: int = 1) -> None:
        counts = self._s.counts
        if old is not None:
            counts[old] -= n
        counts[new] += n

    def _host(self, name: str) -> HostRow:
        host = self._s.hosts.get(name)
        if host is None:
            host = self._s.hosts[name] = HostRow(name)
        return host

    def lookup(self, url: str, host: str, fp: int) -> UrlRecord | None:
        """The record of ``url`` whose fingerprint is ``fp``, following collision probes."""
        for step in range(64):
            record = self.get(host, wrap_fp(fp + step))
            if record is None or record.url == url:
                return record
        return None

    def next_wake_due(self) -> float | None:
        """The earliest back-off end among waiting URLs."""
        return min(self._waiting.values(), default=None)

    def host_info(self, host: str) -> HostInfo | None:
        h = self._s.hosts.get(host)
        if h is None:
            return None
        return self._host_info(h)

    # -- reading ---------------------------------------------------------------------

    def get(self, host: str, fp: int) -> UrlRecord | None:
        rec = self._s.urls.get(host, {}).get(fp)
        if rec is None:
            return None
        return UrlRecord(
            fp=rec.fp,
            url=rec.url,
            host=host,
            depth=rec.depth,
            priority=rec.priority,
            status=rec.status,
            due=rec.due,
            attempts=rec.attempts,
            reason=rec.reason,
            via=rec.via,
            hops=rec.hops,
            etag=rec.etag,
            last_modified=rec.last_modified,
            revisit=rec.revisit,
            cash=rec.cash,
            history=rec.history,
        )

    def counts(self) -> dict[UrlStatus, int]:
        return dict(self._s.counts)
