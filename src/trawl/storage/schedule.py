"""The in-memory half of the frontier: hosts ordered by when each may next be contacted.

Pure data structure, time passed in. Two heaps: hosts whose time has not come yet
(by ready time), and hosts that may be contacted now (by host priority, then ready
time), so that when many hosts are ready the better ones go first. A host handed out
is busy until released: it never has two requests in flight.
"""

from __future__ import annotations

import heapq
from itertools import count


class HostSchedule:
    """Hosts with queued work and the time each may next be contacted."""

    __slots__ = ("_busy", "_entry", "_ready", "_seq", "_waiting")

    def __init__(self) -> None:
        self._waiting: list[tuple[float, int, str]] = []
        self._ready: list[tuple[int, float, int, str]] = []
        self._entry: dict[str, tuple[int, float, int]] = {}  # host -> (token, ready_at, prio)
        self._busy: set[str] = set()
        self._seq = count()

    def __len__(self) -> int:
        """Hosts scheduled (not counting busy ones)."""
        return len(self._entry)

    def __contains__(self, host: object) -> bool:
        return host in self._entry

    @property
    def busy(self) -> int:
        return len(self._busy)

    def is_busy(self, host: str) -> bool:
        return host in self._busy

    def schedule(self, host: str, ready_at: float, priority: int = 0) -> None:
        """Make ``host`` eligible from ``ready_at``; replaces an earlier entry.

        A busy host is not scheduled: it comes back through ``release``.
        """
        if host in self._busy:
            return
        token = next(self._seq)
        self._entry[host] = (token, ready_at, priority)
        heapq.heappush(self._waiting, (ready_at, token, host))

    def unschedule(self, host: str) -> None:
        """Forget ``host`` (its queue ran dry); stale heap entries are skipped later."""
        self._entry.pop(host, None)

    def _promote(self, now: float) -> None:
        waiting, entry = self._waiting, self._entry
        while waiting and waiting[0][0] <= now:
            ready_at, token, host = heapq.heappop(waiting)
            current = entry.get(host)
            if current is not None and current[0] == token:
                heapq.heappush(self._ready, (current[2], ready_at, token, host))

    def pop(self, now: float) -> str | None:
        """The best host whose time has come, now marked busy; None if none is ready."""
        self._promote(now)
        ready, entry = self._ready, self._entry
        while ready:
            _prio, _at, token, host = heapq.heappop(ready)
            current = entry.get(host)
            if current is not None and current[0] == token:
                del entry[host]
                self._busy.add(host)
                return host
        return None

    def release(self, host: str, ready_at: float, *, has_work: bool, priority: int = 0) -> None:
        """The fetch on ``host`` ended: it may be contacted again from ``ready_at``."""
        self._busy.discard(host)
        if has_work:
            self.schedule(host, ready_at, priority)
        else:
            self._entry.pop(host, None)

    def next_wake(self, now: float) -> float | None:
        """When the next host becomes ready: ``now`` if one is ready, None if none is queued."""
        self._promote(now)
        ready, entry = self._ready, self._entry
        while ready and entry.get(ready[0][3], (-1,))[0] != ready[0][2]:
            heapq.heappop(ready)
        if ready:
            return now
        waiting = self._waiting
        while waiting:
            ready_at, token, host = waiting[0]
            current = entry.get(host)
            if current is not None and current[0] == token:
                return ready_at
            heapq.heappop(waiting)
        return None

    def ready_count(self, now: float) -> int:
        """Hosts that could be handed out at ``now`` (for progress displays; O(n))."""
        return sum(1 for _t, at, _p in self._entry.values() if at <= now)
