"""``CrawlStore`` on SQLite: every store of a crawl over one ``Database``, one commit.

The stores share the database's open transaction, so ``commit`` makes the frontier,
pages, parse queue, counters, meta and the blob logs' committed ends durable together;
a crash (kill -9) before it rolls all of them back. The logs' ends are kept in the
``meta`` table as ``log.<name>`` = ``Position.dump()``, the keys data directories
written before this seam already hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from trawl.dedup.minhash import MinHasher
from trawl.models import Position
from trawl.storage.sqlite.counters import SqliteCounters
from trawl.storage.sqlite.db import CACHE_BYTES, Database
from trawl.storage.sqlite.frontier import SqliteFrontier
from trawl.storage.sqlite.frontier_state import FRONTIER_HOSTS
from trawl.storage.sqlite.near import SqliteNearIndex
from trawl.storage.sqlite.pages import (
    SqliteOriginFileStore,
    SqlitePageStore,
    SqliteParseQueue,
    SqliteRobotsStore,
)
from trawl.storage.sqlite.reader import SqliteCrawlReader
from trawl.storage.sqlite.urlrules import SqliteUrlRuleStore

LOG_META_PREFIX = "log."


class SqliteMeta:
    """The ``MetaStore`` protocol over the database's ``meta`` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get(self, key: str) -> str | None:
        return self._db.get_meta(key)

    def set(self, key: str, value: str) -> None:
        self._db.set_meta(key, value)


class SqliteCrawlStore:
    """Opens (exclusively) the crawl database at ``path`` and the stores over it."""

    def __init__(
        self,
        path: Path,
        *,
        max_per_host: int | None = None,
        lease_seconds: float = 600.0,
        cache_bytes: int = CACHE_BYTES,
        synchronous: str = "NORMAL",
        frontier_hosts: int = FRONTIER_HOSTS,
    ) -> None:
        self.db = Database(path, cache_bytes=cache_bytes, synchronous=synchronous)
        try:
            self._frontier = SqliteFrontier(
                self.db,
                max_per_host=max_per_host,
                lease_seconds=lease_seconds,
                active_hosts=frontier_hosts,
            )
            self._pages = SqlitePageStore(self.db)
            self._parse_queue = SqliteParseQueue(self.db)
            self._counters = SqliteCounters(self.db)
            self._robots = SqliteRobotsStore(self.db)
            self._origin_files = SqliteOriginFileStore(self.db)
            self._meta = SqliteMeta(self.db)
            self._url_rules = SqliteUrlRuleStore(self.db)
            self._logs = self._load_logs()
        except BaseException:
            self.db.close(commit=False)
            raise
        self._near: SqliteNearIndex | None = None

    def _load_logs(self) -> dict[str, Position]:
        rows = self.db.conn.execute(
            "SELECT key, value FROM meta WHERE substr(key, 1, ?) = ?",
            (len(LOG_META_PREFIX), LOG_META_PREFIX),
        )
        return {str(key)[len(LOG_META_PREFIX) :]: Position.load(str(value)) for key, value in rows}

    @property
    def frontier(self) -> SqliteFrontier:
        return self._frontier

    @property
    def pages(self) -> SqlitePageStore:
        return self._pages

    @property
    def parse_queue(self) -> SqliteParseQueue:
        return self._parse_queue

    @property
    def counters(self) -> SqliteCounters:
        return self._counters

    session_ttl: float | None = None  # one writer: its leases are never others'

    @property
    def robots(self) -> SqliteRobotsStore:
        return self._robots

    @property
    def origin_files(self) -> SqliteOriginFileStore:
        return self._origin_files

    @property
    def meta(self) -> SqliteMeta:
        return self._meta

    @property
    def url_rules(self) -> SqliteUrlRuleStore:
        return self._url_rules

    def near_index(self, hasher: MinHasher) -> SqliteNearIndex:
        """The store's one near-duplicate index; asking with another layout is an error."""
        if self._near is None:
            self._near = SqliteNearIndex(self.db, hasher)
        elif self._near.hasher.layout != hasher.layout:
            raise ValueError(
                f"near index open with {self._near.hasher.layout}, asked for {hasher.layout}"
            )
        return self._near

    def committed_logs(self) -> dict[str, Position]:
        return dict(self._logs)

    def commit(self, logs: Mapping[str, Position] | None = None) -> None:
        """Commit every write so far; logs not named keep their last committed end."""
        logs = dict(logs or {})
        for name, position in logs.items():
            self.db.set_meta(LOG_META_PREFIX + name, position.dump())
        self.db.commit()
        self._logs.update(logs)

    def reader(self) -> SqliteCrawlReader:
        return SqliteCrawlReader(self.db.path.parent)

    def close(self, *, commit: bool = True) -> None:
        self.db.close(commit=commit)
