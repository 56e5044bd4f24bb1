"""Politeness across crawls: the fetch path asks the shared host leases before a fetch.

The frontier keeps one crawl polite (one request in flight per host, its delay). Other
crawls of the same hosts on this machine (or of the same Redis deployment) keep their
own frontiers, so the fetch path also consults ``HostLeases`` (``storage/base.py``):
``GatedFrontier`` is the frontier as the fetch role sees it. Its ``take`` hands out a
URL only once the host's shared lease is this crawl's; a host leased by another crawl,
or whose next allowed contact is later, goes back into this crawl's schedule for the
time the leases name (no spinning). Every end of a fetch (``finish``, ``retry``,
``requeue``, each with the host's next time) gives the lease back with that time, so
the next crawl waits at least as long as this one asked, and the largest delay any
crawl asks holds for all. A host held for a rendered page's request (``hold_host``,
``release_host``) takes and gives back its shared lease the same way.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Sequence

from trawl.clock import Clock
from trawl.errors import StorageError
from trawl.frontier.admission import CounterSink
from trawl.models import AddResult, HostInfo, Lease, NewUrl, UrlRecord, UrlStatus
from trawl.storage.base import Frontier, HostLeases
from trawl.storage.leases import new_holder

__all__ = ["GatedFrontier", "HostGate"]

log = logging.getLogger("trawl.politeness")

TRIES = 32  # leased hosts skipped in one take before it gives up until the next call
TROUBLE_WAIT = 5.0  # a host waits this long when the leases cannot be read


class HostGate:
    """This crawl's side of the shared host leases: which hosts it holds."""

    def __init__(
        self,
        leases: HostLeases,
        *,
        ttl: float,
        counters: CounterSink,
        holder: str | None = None,
        owned: bool = False,
        gap_of: Callable[[str], float] | None = None,
    ) -> None:
        """``owned``: the gate opened ``leases`` and closes them with itself;
        ``gap_of(host)``: how long the host waits once this crawl takes over a dead
        holder's lease (``wire.host_gate``: a fetch's timeout, as the holder's last
        request may still run at the server, then this crawl's delay)."""
        self.leases = leases
        self._gap_of = gap_of
        self._owned = owned
        self._closed = False
        self.holder = holder or new_holder(secrets.token_hex(4))
        self._ttl = ttl
        self._count = counters
        self._held: set[str] = set()
        self._warned = -1e18

    @property
    def held(self) -> int:
        return len(self._held)

    def enter(self, host: str, now: float) -> float | None:
        """None: the host is this crawl's for one fetch; else when to try it again."""
        try:
            gap = 0.0 if self._gap_of is None else self._gap_of(host)
            later = self.leases.acquire(host, holder=self.holder, now=now, ttl=self._ttl, gap=gap)
        except StorageError as exc:
            self._trouble(exc, now)
            return now + TROUBLE_WAIT
        if later is None:
            self._held.add(host)
        else:
            self._count.add("politeness:shared wait")
        return later

    def leave(self, host: str, now: float, ready_at: float) -> None:
        """The fetch ended: nobody contacts ``host`` before ``ready_at``."""
        if host not in self._held:
            return
        self._held.discard(host)
        try:
            self.leases.release(host, holder=self.holder, now=now, ready_at=ready_at)
        except StorageError as exc:  # the lease lapses at its expiry instead
            self._trouble(exc, now)

    def beat(self, now: float) -> None:
        """This crawl lives (its leases are not a dead holder's)."""
        try:
            self.leases.beat(self.holder)
        except StorageError as exc:
            self._trouble(exc, now)

    def close(self, now: float, *, delay: float) -> None:
        """Give back what is still held (fetches dropped on a full disk or an abort),
        and close the leases if the gate opened them; again, it does nothing."""
        if self._closed:
            return
        for host in list(self._held):
            self.leave(host, now, now + delay)
        self._closed = True
        if self._owned:
            self.leases.close()

    def _trouble(self, exc: StorageError, now: float) -> None:
        if now - self._warned >= 60.0:
            self._warned = now
            log.warning("host leases unusable; hosts wait: %s", exc)


class GatedFrontier:
    """The frontier as the fetch path sees it: each fetch holds the host's shared lease."""

    def __init__(self, inner: Frontier, gate: HostGate, clock: Clock) -> None:
        self.inner = inner
        self.gate = gate
        self._clock = clock

    def take(self, now: float) -> Lease | None:
        for _ in range(TRIES):
            lease = self.inner.take(now)
            if lease is None:
                return None
            later = self.gate.enter(lease.host, now)
            if later is None:
                return lease
            self.inner.requeue(lease, host_ready_at=later)
        return None

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
        self.inner.finish(
            lease,
            status,
            host_ready_at=host_ready_at,
            reason=reason,
            etag=etag,
            last_modified=last_modified,
        )
        self.gate.leave(lease.host, self._clock.now(), host_ready_at)

    def retry(self, lease: Lease, *, due: float, host_ready_at: float, reason: str) -> None:
        self.inner.retry(lease, due=due, host_ready_at=host_ready_at, reason=reason)
        self.gate.leave(lease.host, self._clock.now(), host_ready_at)

    def requeue(self, lease: Lease, *, host_ready_at: float, defer: bool = False) -> None:
        self.inner.requeue(lease, host_ready_at=host_ready_at, defer=defer)
        self.gate.leave(lease.host, self._clock.now(), host_ready_at)

    def turn_unused(self, host: str) -> None:
        """The lease on ``host`` was ended through the store's own frontier with nothing
        sent (a URL skipped or deferred as a spelling of another): the shared lease
        goes back at once, the host's next contact not moved."""
        now = self._clock.now()
        self.gate.leave(host, now, now)

    def hold_host(self, host: str, now: float, *, until: float) -> float | None:
        """A host's turn for another page's request (rendering) is its shared lease too."""
        later = self.inner.hold_host(host, now, until=until)
        if later is not None:
            return later
        shared = self.gate.enter(host, now)
        if shared is not None:  # another crawl's turn: give this crawl's hold back
            self.inner.release_host(host, host_ready_at=shared)
        return shared

    def release_host(self, host: str, *, host_ready_at: float) -> None:
        self.inner.release_host(host, host_ready_at=host_ready_at)
        self.gate.leave(host, self._clock.now(), host_ready_at)

    # -- the rest is the frontier's own ---------------------------------------------

    def add(self, urls: Sequence[NewUrl], *, now: float) -> AddResult:
        return self.inner.add(urls, now=now)

    def next_wake(self, now: float) -> float | None:
        return self.inner.next_wake(now)

    def next_wake_due(self) -> float | None:
        return self.inner.next_wake_due()

    def set_status(
        self, host: str, fp: int, status: UrlStatus, *, reason: str | None = None
    ) -> None:
        self.inner.set_status(host, fp, status, reason=reason)

    def revisit(self, host: str, fp: int, *, due: float, interval: float, shift: int = 0) -> None:
        self.inner.revisit(host, fp, due=due, interval=interval, shift=shift)

    def wake_due(self, now: float) -> int:
        return self.inner.wake_due(now)

    def reclaim_expired(self, now: float) -> int:
        # The crawl's loop sweeps about once a second: the beat rides along.
        self.gate.beat(now)
        return self.inner.reclaim_expired(now)

    def demote_host(self, host: str, *, priority: int, budget: int | None, reason: str) -> None:
        self.inner.demote_host(host, priority=priority, budget=budget, reason=reason)

    def set_max_per_host(self, limit: int | None) -> None:
        self.inner.set_max_per_host(limit)

    def configure_host(self, host: str, *, budget: int | None, priority: int | None) -> None:
        self.inner.configure_host(host, budget=budget, priority=priority)

    def get(self, host: str, fp: int) -> UrlRecord | None:
        return self.inner.get(host, fp)

    def lookup(self, url: str, host: str, fp: int) -> UrlRecord | None:
        return self.inner.lookup(url, host, fp)

    def counts(self) -> dict[UrlStatus, int]:
        return self.inner.counts()

    def host_info(self, host: str) -> HostInfo | None:
        return self.inner.host_info(host)

    def hosts_ready(self, now: float) -> int:
        return self.inner.hosts_ready(now)

    def hosts_waiting(self, now: float) -> int:
        return self.inner.hosts_waiting(now)
