"""The in-memory half of the frontier: hosts ordered by when each may next be contacted.

Pure data structure, time passed in. Two heaps: hosts whose time has not come yet
(by ready time), and hosts that may be contacted now (by their order, then ready
time), so that when many hosts are ready the better ones go first. A frontier gives
each host the order ``key of its best queued URL + the host's priority`` (lower
first), and schedules the host again when that falls (a better URL queued). A host
handed out is busy until released: it never has two requests in flight.
"""

from __future__ import annotations

import heapq
from itertools import count
from typing import Final, Protocol

from trawl.models import HostInfo

# When to ask again for a host that is busy (its own fetch, or another's hold).
HOLD_RETRY: Final = 0.1

_Item = tuple[float, int, str, int]  # ready_at, token, host, priority (its order)
_NO_ITEM: Final[_Item] = (0.0, -1, "", 0)


class HostSchedule:
    """Hosts with queued work and the time each may next be contacted."""

    __slots__ = ("_busy", "_entry", "_ready", "_seq", "_waiting")

    def __init__(self) -> None:
        # A host's live entry is its item in ``_waiting`` (ready_at, token, host, priority),
        # held in ``_entry`` as well: one tuple a host, not two (hosts named by links are
        # many). Items left in a heap by a host scheduled again are stale: another token.
        self._waiting: list[_Item] = []
        self._ready: list[tuple[int, float, int, str]] = []
        self._entry: dict[str, _Item] = {}
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
        item = (ready_at, next(self._seq), host, priority)
        self._entry[host] = item
        heapq.heappush(self._waiting, item)
        if len(self._waiting) + len(self._ready) > 4 * len(self._entry) + 1024:
            self._compact()

    def _compact(self) -> None:
        """Drop the stale entries a host rescheduled many times leaves behind (an entry
        of a worse order that live ones keep from the top could stay forever)."""
        self._ready = []
        self._waiting = list(self._entry.values())
        heapq.heapify(self._waiting)

    def unschedule(self, host: str) -> None:
        """Forget ``host`` (its queue ran dry); stale heap entries are skipped later."""
        self._entry.pop(host, None)

    def _promote(self, now: float) -> None:
        waiting, entry = self._waiting, self._entry
        while waiting and waiting[0][0] <= now:
            ready_at, token, host, priority = heapq.heappop(waiting)
            current = entry.get(host)
            if current is not None and current[1] == token:
                heapq.heappush(self._ready, (priority, ready_at, token, host))

    def pop(self, now: float) -> str | None:
        """The best host whose time has come, now marked busy; None if none is ready."""
        self._promote(now)
        ready, entry = self._ready, self._entry
        while ready:
            _prio, _at, token, host = heapq.heappop(ready)
            current = entry.get(host)
            if current is not None and current[1] == token:
                del entry[host]
                self._busy.add(host)
                return host
        return None

    def hold(self, host: str, next_at: float, now: float) -> float | None:
        """Mark ``host`` busy though no URL of it was handed out (``pop`` skips it until
        ``release``) if it is free and its time (``next_at``) has come: None; else when
        to ask again (``Frontier.hold_host``)."""
        if host in self._busy:
            return now + HOLD_RETRY
        if next_at > now:
            return next_at
        self._entry.pop(host, None)
        self._busy.add(host)
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
        while ready and entry.get(ready[0][3], _NO_ITEM)[1] != ready[0][2]:
            heapq.heappop(ready)
        if ready:
            return now
        waiting = self._waiting
        while waiting:
            ready_at, token, host, _p = waiting[0]
            current = entry.get(host)
            if current is not None and current[1] == token:
                return ready_at
            heapq.heappop(waiting)
        return None

    def ready_count(self, now: float) -> int:
        """Hosts that could be handed out at ``now`` (for progress displays; O(n))."""
        return sum(1 for item in self._entry.values() if item[0] <= now)


class _HostState(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def next_at(self) -> float: ...
    @property
    def queued(self) -> int: ...
    @property
    def admitted(self) -> int: ...
    @property
    def budget(self) -> int | None: ...
    @property
    def priority(self) -> int: ...
    @property
    def demoted_reason(self) -> str | None: ...


class ScheduleReads:
    """The Frontier protocol's reads that a ``HostSchedule`` answers (the memory and
    SQLite frontiers keep one each)."""

    _schedule: HostSchedule

    def _host_info(self, h: _HostState) -> HostInfo:
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

    def next_wake(self, now: float) -> float | None:
        return self._schedule.next_wake(now)

    def hosts_ready(self, now: float) -> int:
        return self._schedule.ready_count(now)

    def hosts_waiting(self, now: float) -> int:
        return len(self._schedule) - self._schedule.ready_count(now)

    def hosts_busy(self) -> int:
        return self._schedule.busy
