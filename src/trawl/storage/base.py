"""The storage seams: one Protocol per store, implemented by SQLite now and Redis later.

Every implementation runs the same contract suite (tests/contract). Writes become
durable at the backend's ``commit``; until then a crash may lose them, which is safe
because work is acknowledged only after its output is committed (at-least-once).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from trawl.models import AddResult, Lease, NewUrl, UrlRecord, UrlStatus


class Frontier(Protocol):
    """Every URL that may still be fetched: one queue per host, hosts ordered by time.

    Exactly one URL of a host is out at a time. The host goes back into the schedule
    only when that URL's fetch ends (``finish``/``retry``/``requeue``), at the time
    the caller says (now + the host's delay).
    """

    def add(self, urls: Sequence[NewUrl], *, now: float) -> AddResult:
        """Admit URLs not seen before (exact check); drop those over their host's budget."""
        ...

    def take(self, now: float) -> Lease | None:
        """A URL of a host whose time has come, or None when no host is ready."""
        ...

    def next_wake(self, now: float) -> float | None:
        """When ``take`` may next succeed: ``now`` if work is ready, None if none is queued."""
        ...

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
        """The fetch of ``lease`` ended with ``status``; its host may go again at the time."""
        ...

    def retry(self, lease: Lease, *, due: float, host_ready_at: float, reason: str) -> None:
        """Count a failed attempt; the URL waits until ``due`` and is then queued again."""
        ...

    def requeue(self, lease: Lease, *, host_ready_at: float) -> None:
        """Give the URL back without counting an attempt (robots fetched first, shutdown)."""
        ...

    def set_status(
        self, host: str, fp: int, status: UrlStatus, *, reason: str | None = None
    ) -> None:
        """Record a later stage's outcome (parsed, skipped as duplicate, ...)."""
        ...

    def wake_due(self, now: float) -> int:
        """Queue again the waiting URLs whose back-off is over; returns how many."""
        ...

    def reclaim_expired(self, now: float) -> int:
        """Leases not finished in time go back to the queue; returns how many."""
        ...

    def demote_host(self, host: str, *, priority: int, budget: int | None, reason: str) -> None:
        """Lower a host's priority and cut its budget (it serves duplicates, traps, ...)."""
        ...

    def get(self, host: str, fp: int) -> UrlRecord | None: ...

    def lookup(self, url: str, host: str, fp: int) -> UrlRecord | None:
        """The record of exactly ``url`` (its fingerprint ``fp`` may have been probed past)."""
        ...

    def counts(self) -> dict[UrlStatus, int]:
        """How many URLs are in each status."""
        ...

    def hosts_ready(self, now: float) -> int: ...

    def hosts_waiting(self, now: float) -> int: ...
