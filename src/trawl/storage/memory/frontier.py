"""The frontier in memory, with the same rules as ``SqliteFrontier``.

The durable part is ``FrontierState`` (hosts, URL records, status counts): plain data
the crawl store copies at each commit. Everything else (the host schedule, per-host
queues, the lease and back-off indexes) is derived from it when the frontier opens,
as the SQLite frontier rebuilds its schedule from its tables.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from trawl.frontier.schedule import HostSchedule
from trawl.models import AddResult, HostInfo, Lease, NewUrl, UrlRecord, UrlStatus

_INT64 = 1 << 64
# States a URL is in while the crawl still owes it a fetch.
_ACTIVE = frozenset({UrlStatus.QUEUED, UrlStatus.IN_FLIGHT, UrlStatus.WAITING})


def _wrap(fp: int) -> int:
    """``fp`` as a signed 64-bit integer, as SQLite stores it."""
    return (fp + (1 << 63)) % _INT64 - (1 << 63)


@dataclass(slots=True)
class _Host:
    name: str
    next_at: float = 0.0
    queued: int = 0
    admitted: int = 0
    budget: int | None = None
    priority: int = 0
    demoted_reason: str | None = None


@dataclass(slots=True)
class _Url:
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


@dataclass(slots=True)
class FrontierState:
    """What a frontier keeps across a restart (the rows of the SQLite tables)."""

    hosts: dict[str, _Host] = field(default_factory=dict)
    urls: dict[str, dict[int, _Url]] = field(default_factory=dict)  # host -> fp -> record
    counts: dict[UrlStatus, int] = field(default_factory=lambda: dict.fromkeys(UrlStatus, 0))


class MemoryFrontier:
    """The Frontier protocol over a ``FrontierState`` it owns from now on."""

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
                self._schedule.schedule(host.name, host.next_at, host.priority)

    def _index(self, host: str, rec: _Url, status: UrlStatus, due: float | None) -> None:
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

    def _host(self, name: str) -> _Host:
        host = self._s.hosts.get(name)
        if host is None:
            host = self._s.hosts[name] = _Host(name)
        return host

    # -- adding ----------------------------------------------------------------

    def add(self, urls: Sequence[NewUrl], *, now: float) -> AddResult:
        batch: dict[int, NewUrl] = {}
        clashes: list[NewUrl] = []  # same fingerprint as another URL of this batch
        for u in urls:
            first = batch.setdefault(u.fp, u)
            if first is not u and first.url != u.url:
                clashes.append(u)
        added: list[NewUrl] = []
        seen = 0
        dropped: dict[str, int] = {}
        for fp, u in batch.items():
            stored = self._s.urls.get(u.host, {}).get(fp)
            if stored is not None:
                if stored.url == u.url:
                    seen += 1
                    continue
                # A 64-bit collision between two different URLs: probe for a free slot so
                # that neither URL is ever wrongly taken as seen.
                slot = self._probe(u.host, fp, u.url)
                if slot is None:
                    seen += 1
                    continue
                fp = slot
            host = self._host(u.host)
            budget = host.budget if host.budget is not None else self._max_per_host
            if budget is not None and host.admitted >= budget:
                dropped["host budget"] = dropped.get("host budget", 0) + 1
                continue
            host.admitted += 1
            host.queued += 1
            rec = _Url(fp, u.url, u.depth, u.priority, via=u.via, hops=u.hops)
            self._s.urls.setdefault(u.host, {})[fp] = rec
            self._index(u.host, rec, UrlStatus.QUEUED, None)
            self._move(None, UrlStatus.QUEUED)
            added.append(u if fp == u.fp else replace(u, fp=fp))
            if host.queued == 1 and not self._schedule.is_busy(host.name):
                self._schedule.schedule(host.name, host.next_at, host.priority)
        if clashes:
            more = self.add(clashes, now=now)
            added.extend(more.added)
            seen += more.seen
            for reason, n in more.dropped.items():
                dropped[reason] = dropped.get(reason, 0) + n
        return AddResult(tuple(added), seen=seen, dropped=dropped)

    def _probe(self, host: str, fp: int, url: str) -> int | None:
        """The slot for ``url`` after a collision at ``fp``; None if ``url`` is stored there."""
        urls = self._s.urls[host]
        for step in range(1, 64):
            candidate = _wrap(fp + step)
            rec = urls.get(candidate)
            if rec is None:
                return candidate
            if rec.url == url:
                return None
        return None

    def lookup(self, url: str, host: str, fp: int) -> UrlRecord | None:
        """The record of ``url`` whose fingerprint is ``fp``, following collision probes."""
        for step in range(64):
            record = self.get(host, _wrap(fp + step))
            if record is None or record.url == url:
                return record
        return None

    # -- taking and finishing ----------------------------------------------------

    def take(self, now: float) -> Lease | None:
        while True:
            name = self._schedule.pop(now)
            if name is None:
                return None
            host = self._s.hosts[name]
            rec = self._best_queued(name)
            if rec is None:  # counters said otherwise; trust the records
                host.queued = 0
                self._schedule.release(name, host.next_at, has_work=False)
                continue
            expires = now + self._lease
            self._index(name, rec, UrlStatus.IN_FLIGHT, expires)
            host.queued -= 1
            self._move(UrlStatus.QUEUED, UrlStatus.IN_FLIGHT)
            return Lease(
                fp=rec.fp,
                url=rec.url,
                host=name,
                depth=rec.depth,
                priority=rec.priority,
                attempts=rec.attempts,
                expires=expires,
                via=rec.via,
                hops=rec.hops,
                etag=rec.etag,
                last_modified=rec.last_modified,
                revisit=rec.revisit,
            )

    def _best_queued(self, host: str) -> _Url | None:
        """The queued URL of ``host`` first by priority (then fingerprint, as SQLite's index)."""
        heap = self._queues.get(host, [])
        urls = self._s.urls.get(host, {})
        while heap:
            _priority, fp = heapq.heappop(heap)
            rec = urls.get(fp)
            if rec is not None and rec.status is UrlStatus.QUEUED:
                return rec
        return None

    def _release(self, name: str, ready_at: float) -> None:
        host = self._s.hosts[name]
        host.next_at = ready_at
        if self._schedule.is_busy(name):
            self._schedule.release(name, ready_at, has_work=host.queued > 0, priority=host.priority)

    def _leased_record(self, lease: Lease) -> _Url | None:
        """The record of ``lease`` if that lease still holds it (not expired and re-taken)."""
        if self._leased.get((lease.host, lease.fp)) != lease.expires:
            return None
        return self._s.urls[lease.host][lease.fp]

    def finish(
        self,
        lease: Lease,
        status: UrlStatus,
        *,
        host_ready_at: float,
        reason: str | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> None:
        rec = self._leased_record(lease)
        if rec is not None:
            self._index(lease.host, rec, status, None)
            rec.reason, rec.etag, rec.last_modified = reason, etag, last_modified
            rec.attempts += 1
            self._move(UrlStatus.IN_FLIGHT, status)
        self._release(lease.host, host_ready_at)

    def retry(self, lease: Lease, *, due: float, host_ready_at: float, reason: str) -> None:
        rec = self._leased_record(lease)
        if rec is not None:
            self._index(lease.host, rec, UrlStatus.WAITING, due)
            rec.reason = reason
            rec.attempts += 1
            self._move(UrlStatus.IN_FLIGHT, UrlStatus.WAITING)
        self._release(lease.host, host_ready_at)

    def requeue(self, lease: Lease, *, host_ready_at: float) -> None:
        rec = self._leased_record(lease)
        if rec is not None:
            self._index(lease.host, rec, UrlStatus.QUEUED, None)
            self._move(UrlStatus.IN_FLIGHT, UrlStatus.QUEUED)
            self._s.hosts[lease.host].queued += 1
        self._release(lease.host, host_ready_at)

    def set_status(
        self, host: str, fp: int, status: UrlStatus, *, reason: str | None = None
    ) -> None:
        rec = self._s.urls.get(host, {}).get(fp)
        if rec is None or rec.status == status:
            return
        old = rec.status
        if old in _ACTIVE:
            raise ValueError(f"set_status is for finished URLs, not {old.label}")
        self._index(host, rec, status, rec.due)
        rec.reason = reason
        self._move(old, status)

    def revisit(self, host: str, fp: int, *, due: float, interval: float) -> None:
        """A finished page comes back at ``due`` to be fetched again (conditionally)."""
        rec = self._s.urls.get(host, {}).get(fp)
        if rec is None or rec.status in _ACTIVE:
            return
        old = rec.status
        self._index(host, rec, UrlStatus.WAITING, due)
        rec.revisit, rec.attempts, rec.reason = interval, 0, "revisit"
        self._move(old, UrlStatus.WAITING)

    # -- time-driven returns -------------------------------------------------------

    def _requeue_due(
        self, index: dict[tuple[str, int], float], old: UrlStatus, now: float
    ) -> list[str]:
        """Queue again the URLs of ``index`` due by ``now``; their hosts, once per URL."""
        keys = [key for key, due in index.items() if due <= now]
        for name, fp in keys:
            self._index(name, self._s.urls[name][fp], UrlStatus.QUEUED, None)
            host = self._s.hosts[name]
            host.queued += 1
            if name not in self._schedule and not self._schedule.is_busy(name):
                self._schedule.schedule(name, host.next_at, host.priority)
        self._move(old, UrlStatus.QUEUED, len(keys))
        return [name for name, _fp in keys]

    def wake_due(self, now: float) -> int:
        return len(self._requeue_due(self._waiting, UrlStatus.WAITING, now))

    def reclaim_expired(self, now: float) -> int:
        hosts = self._requeue_due(self._leased, UrlStatus.IN_FLIGHT, now)
        for name in hosts:
            if self._schedule.is_busy(name):
                host = self._s.hosts[name]
                self._schedule.release(name, host.next_at, has_work=True, priority=host.priority)
        return len(hosts)

    def next_wake_due(self) -> float | None:
        """The earliest back-off end among waiting URLs."""
        return min(self._waiting.values(), default=None)

    # -- hosts ---------------------------------------------------------------------

    def demote_host(self, host: str, *, priority: int, budget: int | None, reason: str) -> None:
        h = self._host(host)
        h.priority = max(h.priority, priority)
        if budget is not None:
            h.budget = budget if h.budget is None else min(h.budget, budget)
        h.demoted_reason = reason
        if h.name in self._schedule:
            self._schedule.schedule(h.name, h.next_at, h.priority)

    def host_info(self, host: str) -> HostInfo | None:
        h = self._s.hosts.get(host)
        if h is None:
            return None
        return HostInfo(
            host=h.name,
            next_at=h.next_at,
            queued=h.queued,
            admitted=h.admitted,
            budget=h.budget,
            priority=h.priority,
            demoted_reason=h.demoted_reason,
            in_flight=self._schedule.is_busy(h.name),
        )

    # -- reading ---------------------------------------------------------------------

    def next_wake(self, now: float) -> float | None:
        return self._schedule.next_wake(now)

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
        )

    def counts(self) -> dict[UrlStatus, int]:
        return dict(self._s.counts)

    def hosts_ready(self, now: float) -> int:
        return self._schedule.ready_count(now)

    def hosts_waiting(self, now: float) -> int:
        return len(self._schedule) - self._schedule.ready_count(now)

    def hosts_busy(self) -> int:
        return self._schedule.busy
