"""Host leases in one process's memory: crawls of one process (tests) share one."""

from __future__ import annotations

from trawl.storage.base import SharedHost
from trawl.storage.leases import LeaseRow, acquire, release

__all__ = ["MemoryHostLeases"]


class MemoryHostLeases:
    def __init__(self) -> None:
        self._rows: dict[str, LeaseRow] = {}

    def acquire(
        self, host: str, *, holder: str, now: float, ttl: float, gap: float = 0.0
    ) -> float | None:
        # The row is changed in place; a new one is always taken, so it is kept.
        row = self._rows.setdefault(host, LeaseRow())
        return acquire(row, holder=holder, now=now, ttl=ttl, gap=gap)

    def release(self, host: str, *, holder: str, now: float, ready_at: float) -> None:
        row = self._rows.setdefault(host, LeaseRow())
        release(row, holder=holder, now=now, ready_at=ready_at)

    def get(self, host: str, now: float) -> SharedHost | None:
        row = self._rows.get(host)
        return None if row is None else row.view(host, now)

    def beat(self, holder: str) -> None:
        return None  # one process: its holders live

    def close(self) -> None:
        return None
