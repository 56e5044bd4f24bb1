"""The frontier in memory, with the same rules as ``SqliteFrontier``.

Same admission (exact seen check, fingerprint collisions probed within the host,
budgets), one URL per host out at a time through ``HostSchedule``, leases that
expire, back-offs and revisits. The state and the reads are in ``frontier_state``.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import replace

from trawl.models import AddResult, Lease, NewUrl, UrlStatus
from trawl.ranking import deferred_key, raised_key, undeferred
from trawl.storage.memory.frontier_state import (
    FrontierIndex,
    UrlRow,
    wrap_fp,
)
from trawl.storage.reasons import one_line

# States a URL is in while the crawl still owes it a fetch.
_ACTIVE = frozenset({UrlStatus.QUEUED, UrlStatus.IN_FLIGHT, UrlStatus.WAITING})
# Statuses whose lease end passes the URL's cash on to what it leads to.
_PASSES_CASH = frozenset({UrlStatus.FETCHED, UrlStatus.REDIRECTED})


class MemoryFrontier(FrontierIndex):
    """The Frontier protocol over a ``FrontierState`` it owns from now on."""

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
        before: dict[str, int | None] = {}  # hosts whose queue changed -> order before
        for fp, u in batch.items():
            stored = self._s.urls.get(u.host, {}).get(fp)
            if stored is not None:
                if stored.url == u.url:
                    seen += 1
                    if u.gain > 0 and stored.status in _ACTIVE:
                        self._raise(u.host, stored, u.gain, before)
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
            if host.name not in before:
                before[host.name] = self._order(host) if host.queued > 1 else None
            rec = UrlRow(fp, u.url, u.depth, u.priority, via=u.via, hops=u.hops, cash=u.cash)
            self._s.urls.setdefault(u.host, {})[fp] = rec
            self._index(u.host, rec, UrlStatus.QUEUED, None)
            self._move(None, UrlStatus.QUEUED)
            added.append(u if fp == u.fp else replace(u, fp=fp))
        for name, order in before.items():
            host = self._s.hosts[name]
            if self._order(host) != order and not self._schedule.is_busy(name):
                self._schedule.schedule(name, host.next_at, self._order(host))
        if clashes:
            more = self.add(clashes, now=now)
            added.extend(more.added)
            seen += more.seen
            for reason, n in more.dropped.items():
                dropped[reason] = dropped.get(reason, 0) + n
        return AddResult(tuple(added), seen=seen, dropped=dropped)

    def _raise(self, host: str, rec: UrlRow, gain: float, before: dict[str, int | None]) -> None:
        """An in-link found for a URL still to be fetched: more cash, a better key."""
        if rec.status is UrlStatus.QUEUED and host not in before:
            before[host] = self._order(self._s.hosts[host])
        rec.priority = raised_key(rec.priority, rec.cash + rec.history, gain)
        rec.cash += gain
        if rec.status is UrlStatus.QUEUED:
            heapq.heappush(self._queues.setdefault(host, []), (rec.priority, rec.fp))

    def _probe(self, host: str, fp: int, url: str) -> int | None:
        """The slot for ``url`` after a collision at ``fp``; None if ``url`` is stored there."""
        urls = self._s.urls[host]
        for step in range(1, 64):
            candidate = wrap_fp(fp + step)
            rec = urls.get(candidate)
            if rec is None:
                return candidate
            if rec.url == url:
                return None
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
                cash=rec.cash,
            )

    def _best_queued(self, host: str) -> UrlRow | None:
        """The queued URL of ``host`` first by priority (then fingerprint, as SQLite's index)."""
        heap = self._queues.get(host, [])
        urls = self._s.urls.get(host, {})
        while heap:
            priority, fp = heapq.heappop(heap)
            rec = urls.get(fp)
            if rec is not None and rec.status is UrlStatus.QUEUED and rec.priority == priority:
                return rec
        return None

    def _release(self, name: str, ready_at: float) -> None:
        host = self._s.hosts[name]
        host.next_at = ready_at
        if self._schedule.is_busy(name):
            self._schedule.release(
                name, ready_at, has_work=host.queued > 0, priority=self._order(host)
            )

    def _leased_record(self, lease: Lease) -> UrlRow | None:
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
            rec.reason, rec.etag, rec.last_modified = one_line(reason), etag, last_modified
            rec.attempts += 1
            if status in _PASSES_CASH:
                rec.cash, rec.history = max(0.0, rec.cash - lease.cash), rec.history + lease.cash
            self._move(UrlStatus.IN_FLIGHT, status)
        self._release(lease.host, host_ready_at)

    def retry(self, lease: Lease, *, due: float, host_ready_at: float, reason: str) -> None:
        rec = self._leased_record(lease)
        if rec is not None:
            self._index(lease.host, rec, UrlStatus.WAITING, due)
            rec.reason = one_line(reason)
            rec.attempts += 1
            self._move(UrlStatus.IN_FLIGHT, UrlStatus.WAITING)
        self._release(lease.host, host_ready_at)

    def requeue(self, lease: Lease, *, host_ready_at: float, defer: bool = False) -> None:
        rec = self._leased_record(lease)
        if rec is not None:
            if defer:
                rec.priority = deferred_key(rec.priority)
            self._index(lease.host, rec, UrlStatus.QUEUED, None)
            self._move(UrlStatus.IN_FLIGHT, UrlStatus.QUEUED)
            self._s.hosts[lease.host].queued += 1
        self._release(lease.host, host_ready_at)

    def hold_host(self, host: str, now: float, *, until: float) -> float | None:
        # In-process holds end with the process (the schedule is rebuilt on open).
        return self._schedule.hold(host, self._host(host).next_at, now)

    def release_host(self, host: str, *, host_ready_at: float) -> None:
        if host in self._s.hosts:
            self._release(host, host_ready_at)

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
        rec.reason = one_line(reason)
        self._move(old, status)

    def revisit(self, host: str, fp: int, *, due: float, interval: float, shift: int = 0) -> None:
        """A finished page comes back at ``due`` to be fetched again (conditionally)."""
        rec = self._s.urls.get(host, {}).get(fp)
        if rec is None:
            return
        if rec.status is UrlStatus.WAITING and rec.reason == "revisit":
            if rec.due is not None and due < rec.due:
                self._index(host, rec, UrlStatus.WAITING, due)
            return
        if rec.status in _ACTIVE:
            return
        old = rec.status
        rec.priority = undeferred(rec.priority) + shift
        self._index(host, rec, UrlStatus.WAITING, due)
        rec.revisit, rec.attempts, rec.reason = interval, 0, "revisit"
        self._move(old, UrlStatus.WAITING)

    # -- time-driven returns -------------------------------------------------------

    def _requeue_due(
        self, index: dict[tuple[str, int], float], old: UrlStatus, now: float
    ) -> list[str]:
        """Queue again the URLs of ``index`` due by ``now``; their hosts, once per URL."""
        keys = [key for key, due in index.items() if due <= now]
        before: dict[str, int | None] = {}
        for name, fp in keys:
            host = self._s.hosts[name]
            if name not in before:
                before[name] = self._order(host) if name in self._schedule else None
            self._index(name, self._s.urls[name][fp], UrlStatus.QUEUED, None)
            host.queued += 1
        for name, order in before.items():
            host = self._s.hosts[name]
            if self._order(host) != order and not self._schedule.is_busy(name):
                self._schedule.schedule(name, host.next_at, self._order(host))
        self._move(old, UrlStatus.QUEUED, len(keys))
        return [name for name, _fp in keys]

    def wake_due(self, now: float) -> int:
        return len(self._requeue_due(self._waiting, UrlStatus.WAITING, now))

    def reclaim_expired(self, now: float) -> int:
        hosts = self._requeue_due(self._leased, UrlStatus.IN_FLIGHT, now)
        for name in hosts:
            if self._schedule.is_busy(name):
                host = self._s.hosts[name]
                self._schedule.release(
                    name, host.next_at, has_work=True, priority=self._order(host)
                )
        return len(hosts)

    # -- hosts ---------------------------------------------------------------------

    def set_max_per_host(self, limit: int | None) -> None:
        """Hosts without a budget of their own admit this many URLs from now on."""
        self._max_per_host = limit

    def configure_host(self, host: str, *, budget: int | None, priority: int | None) -> None:
        h = self._host(host)
        if h.demoted_reason is not None:
            return
        if budget is not None:
            h.budget = budget
        if priority is not None and priority != h.priority:
            h.priority = priority
            if h.name in self._schedule:
                self._schedule.schedule(h.name, h.next_at, self._order(h))

    def demote_host(self, host: str, *, priority: int, budget: int | None, reason: str) -> None:
        h = self._host(host)
        h.priority = max(h.priority, priority)
        if budget is not None:
            h.budget = budget if h.budget is None else min(h.budget, budget)
        h.demoted_reason = one_line(reason)
        if h.name in self._schedule:
            self._schedule.schedule(h.name, h.next_at, self._order(h))
