"""A data directory written before priorities were scores (schema 1) still opens."""

from __future__ import annotations

import sqlite3
import zlib
from pathlib import Path

import pytest

from trawl.errors import StorageError
from trawl.models import NewUrl, UrlStatus
from trawl.storage.sqlite.db import SCHEMA_VERSION
from trawl.storage.sqlite.store import SqliteCrawlStore

# The tables of schema 1 that matter here, as trawl wrote them.
_V1 = """
CREATE TABLE hosts (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,
    next_at REAL NOT NULL DEFAULT 0, queued INTEGER NOT NULL DEFAULT 0,
    admitted INTEGER NOT NULL DEFAULT 0, budget INTEGER,
    priority INTEGER NOT NULL DEFAULT 0, demoted_reason TEXT);
CREATE TABLE urls (host_id INTEGER NOT NULL, fp INTEGER NOT NULL, url TEXT NOT NULL,
    depth INTEGER NOT NULL, priority INTEGER NOT NULL, status INTEGER NOT NULL, due REAL,
    attempts INTEGER NOT NULL DEFAULT 0, reason TEXT, via TEXT,
    hops INTEGER NOT NULL DEFAULT 0, etag TEXT, last_modified TEXT, revisit REAL,
    PRIMARY KEY (host_id, fp)) WITHOUT ROWID;
CREATE INDEX urls_queue ON urls(host_id, priority) WHERE status = 0;
CREATE TABLE status_counts (status INTEGER PRIMARY KEY, n INTEGER NOT NULL);
INSERT INTO hosts(id, name, queued, admitted) VALUES (1, 'a.example', 2, 3);
INSERT INTO status_counts VALUES (0, 2), (3, 1);
PRAGMA user_version=1;
"""


def fp(u: str) -> int:
    return zlib.crc32(u.encode())


def test_a_schema_1_database_is_migrated_and_keeps_its_order(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    old = sqlite3.connect(path)
    old.executescript(_V1)
    rows = [("/", 0, 3), ("/deep", 2, 0), ("/mid", 1, 0)]  # path, depth, status
    old.executemany(
        "INSERT INTO urls(host_id, fp, url, depth, priority, status) VALUES (1, ?, ?, ?, ?, ?)",
        [(fp(f"https://a.example{p}"), f"https://a.example{p}", d, d, s) for p, d, s in rows],
    )
    old.commit()
    old.close()

    store = SqliteCrawlStore(path)
    f = store.frontier
    record = f.get("a.example", fp("https://a.example/mid"))
    assert record is not None
    assert (record.priority, record.cash, record.history) == (1, 1.0, 0.0)  # unranked
    assert store.db.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    # Its queue still hands out by the old keys; new URLs and in-links work on it.
    new = "https://a.example/new"
    f.add([NewUrl(new, fp(new), "a.example", 2, 5, cash=0.5)], now=0.0)
    deep = "https://a.example/deep"
    f.add([NewUrl(deep, fp(deep), "a.example", 2, 9, gain=1.0)], now=0.0)
    order = []
    while (lease := f.take(0.0)) is not None:
        order.append(lease.url)
        f.finish(lease, UrlStatus.FETCHED, host_ready_at=0.0)
    assert order == [deep, "https://a.example/mid", new]
    store.close()
    # And opens again as schema 2 without a migration.
    again = SqliteCrawlStore(path)
    assert again.frontier.counts()[UrlStatus.FETCHED] == 3
    again.close()


def test_a_database_of_a_newer_trawl_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    newer = sqlite3.connect(path)
    newer.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    newer.close()
    with pytest.raises(StorageError, match="newer trawl"):
        SqliteCrawlStore(path)
