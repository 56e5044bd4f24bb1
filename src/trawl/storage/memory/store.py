"""``CrawlStore`` in memory, with the crash rule of the SQLite store.

A ``MemoryDisk`` plays the data directory: it holds the state as of the last commit
and nothing else. A store opened on it works on a private copy; ``commit`` copies
that back (``MemoryState.copy``: every container copied, each mutable row too; simple,
and the backend is for tests and throwaway crawls). A crash is dropping the store
without committing: the next store opened on the disk (``MemoryCrawlStore(disk)``, or
``store.reopen(crashed=True)``) holds exactly what was last committed, with in-flight
URLs queued again, as a SQLite store reopened after kill -9."""

from __future__ import annotations

from collections.abc import Mapping

from trawl.dedup.minhash import MinHasher
from trawl.errors import DataDirInUseError
from trawl.models import Position
from trawl.storage.memory.frontier import MemoryFrontier
from trawl.storage.memory.near import StoredNearIndex
from trawl.storage.memory.pages import (
    MemoryCounters,
    MemoryMeta,
    MemoryOriginFileStore,
    MemoryPageStore,
    MemoryParseQueue,
    MemoryRobotsStore,
)
from trawl.storage.memory.reader import MemoryCrawlReader
from trawl.storage.memory.state import LOG_META_PREFIX, MemoryDisk
from trawl.storage.memory.urlrules import MemoryUrlRuleStore


class MemoryCrawlStore:
    """The CrawlStore protocol in memory (a fresh ``MemoryDisk`` unless one is given)."""

    def __init__(
        self,
        disk: MemoryDisk | None = None,
        *,
        max_per_host: int | None = None,
        lease_seconds: float = 600.0,
    ) -> None:
        self.disk = disk if disk is not None else MemoryDisk()
        if self.disk.in_use:
            raise DataDirInUseError("the memory store is open in another crawl store")
        self.disk.in_use = True
        self._open = True
        self._max_per_host = max_per_host
        self._lease_seconds = lease_seconds
        s = self._state = self.disk.committed.copy()
        self._frontier = MemoryFrontier(
            s.frontier, max_per_host=max_per_host, lease_seconds=lease_seconds
        )
        self._pages = MemoryPageStore(s.pages, s.fetches)
        self._parse_queue = MemoryParseQueue(s.parse_queue)
        self._counters = MemoryCounters(s.counters)
        self._robots = MemoryRobotsStore(s.robots)
        self._origin_files = MemoryOriginFileStore(s.origin_files)
        self._meta = MemoryMeta(s.meta)
        self._url_rules = MemoryUrlRuleStore(s.url_rules, s.rule_counts, s.rewrites)
        self._near: StoredNearIndex | None = None

    @property
    def frontier(self) -> MemoryFrontier:
        return self._frontier

    @property
    def pages(self) -> MemoryPageStore:
        return self._pages

    @property
    def parse_queue(self) -> MemoryParseQueue:
        return self._parse_queue

    @property
    def counters(self) -> MemoryCounters:
        return self._counters

    session_ttl: float | None = None  # one writer: its leases are never others'

    @property
    def robots(self) -> MemoryRobotsStore:
        return self._robots

    @property
    def origin_files(self) -> MemoryOriginFileStore:
        return self._origin_files

    @property
    def meta(self) -> MemoryMeta:
        return self._meta

    @property
    def url_rules(self) -> MemoryUrlRuleStore:
        return self._url_rules

    def near_index(self, hasher: MinHasher) -> StoredNearIndex:
        """The store's one near-duplicate index; asking with another layout is an error."""
        if self._near is None:
            self._near = StoredNearIndex(self._state.near, self._meta, hasher)
        elif self._near.hasher.layout != hasher.layout:
            raise ValueError(
                f"near index open with {self._near.hasher.layout}, asked for {hasher.layout}"
            )
        return self._near

    def committed_logs(self) -> dict[str, Position]:
        return {
            key[len(LOG_META_PREFIX) :]: Position.load(value)
            for key, value in self.disk.committed.meta.items()
            if key.startswith(LOG_META_PREFIX)
        }

    def commit(self, logs: Mapping[str, Position] | None = None) -> None:
        """Make the current state the committed one; logs not named keep their end."""
        if not self._open:
            raise ValueError("commit on a closed store")
        for name, position in (logs or {}).items():
            self._meta.set(LOG_META_PREFIX + name, position.dump())
        self.disk.committed = self._state.copy()
        self.disk.commits += 1

    def reader(self) -> MemoryCrawlReader:
        return MemoryCrawlReader(self.disk)

    def close(self, *, commit: bool = True) -> None:
        """Close (committing unless told not to: ``commit=False`` is a crash)."""
        if not self._open:
            return
        if commit:
            self.commit()
        self._open = False
        self.disk.in_use = False

    def reopen(self, *, crashed: bool) -> MemoryCrawlStore:
        """Close this store (without committing if ``crashed``) and open its disk again."""
        self.close(commit=not crashed)
        return MemoryCrawlStore(
            self.disk, max_per_host=self._max_per_host, lease_seconds=self._lease_seconds
        )
