"""One SQLite database per crawl: the connection, the schema, group commit, the lock.

All SQLite stores of a crawl share this connection, so one commit makes the frontier,
the page records and the file offsets durable together. Stores keep hot counters in
memory and write them in ``before_commit`` hooks, inside the same transaction.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import Path

from trawl.errors import DataDirInUseError, StorageError, as_disk_full
from trawl.locks import release, try_lock
from trawl.memory import MemoryLimits

SCHEMA_VERSION = 3

_SCHEMA = """
CREATE TABLE IF NOT EXISTS hosts (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    next_at REAL NOT NULL DEFAULT 0,
    queued INTEGER NOT NULL DEFAULT 0,
    admitted INTEGER NOT NULL DEFAULT 0,
    budget INTEGER,
    priority INTEGER NOT NULL DEFAULT 0,
    demoted_reason TEXT,
    -- Set while the host has queued work but waits on disk, out of the schedule that
    -- memory holds (``memory.frontier_hosts``): its order then, lower first.
    parked_order INTEGER
);
CREATE INDEX IF NOT EXISTS hosts_parked ON hosts(parked_order) WHERE parked_order IS NOT NULL;
-- Keyed by host first: the links of a page mostly point to its own host, so a batch
-- of inserts touches few B-tree pages however large the table grows.
CREATE TABLE IF NOT EXISTS urls (
    host_id INTEGER NOT NULL,
    fp INTEGER NOT NULL,
    url TEXT NOT NULL,
    depth INTEGER NOT NULL,
    priority INTEGER NOT NULL,
    status INTEGER NOT NULL,
    due REAL,
    attempts INTEGER NOT NULL DEFAULT 0,
    reason TEXT,
    via TEXT,
    hops INTEGER NOT NULL DEFAULT 0,
    etag TEXT,
    last_modified TEXT,
    revisit REAL,
    -- OPIC importance: cash received and not passed on yet, cash passed on so far.
    cash REAL NOT NULL DEFAULT 1.0,
    history REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (host_id, fp)
) WITHOUT ROWID;
-- Per-host queues: only queued URLs are in this index, ordered by priority (the URL's
-- key, lower first: its depth, or its score as ``trawl.ranking`` encodes it).
CREATE INDEX IF NOT EXISTS urls_queue ON urls(host_id, priority) WHERE status = 0;
-- Leases (in flight, due = expiry) and back-offs (waiting, due = next attempt).
CREATE INDEX IF NOT EXISTS urls_in_flight ON urls(due) WHERE status = 1;
CREATE INDEX IF NOT EXISTS urls_waiting ON urls(due) WHERE status = 6;
CREATE TABLE IF NOT EXISTS status_counts (
    status INTEGER PRIMARY KEY,
    n INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS counters (
    name TEXT PRIMARY KEY,
    n INTEGER NOT NULL
);
-- Fetched pages waiting for the parse stage: the durable queue between the stages.
CREATE TABLE IF NOT EXISTS parse_queue (
    seq INTEGER PRIMARY KEY,
    host TEXT NOT NULL,
    fp INTEGER NOT NULL,
    job TEXT NOT NULL
);
-- One row per distinct text kept: the exact-duplicate key and where the text lies.
CREATE TABLE IF NOT EXISTS pages (
    content_hash TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    host TEXT NOT NULL,
    fp INTEGER NOT NULL,
    fetched_at REAL NOT NULL,
    title TEXT NOT NULL,
    language TEXT,
    warc_file TEXT NOT NULL,
    warc_offset INTEGER NOT NULL,
    warc_length INTEGER NOT NULL,
    text_file TEXT NOT NULL,
    text_offset INTEGER NOT NULL,
    text_length INTEGER NOT NULL,
    duplicates INTEGER NOT NULL DEFAULT 0,
    indexed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS pages_unindexed ON pages(indexed) WHERE indexed = 0;
-- Every fetch that was stored: the latest WARC record of each URL.
CREATE TABLE IF NOT EXISTS fetches (
    host TEXT NOT NULL,
    fp INTEGER NOT NULL,
    url TEXT NOT NULL,
    final_url TEXT NOT NULL,
    status INTEGER NOT NULL,
    fetched_at REAL NOT NULL,
    warc_file TEXT NOT NULL,
    warc_offset INTEGER NOT NULL,
    warc_length INTEGER NOT NULL,
    content_hash TEXT,
    outcome TEXT,
    PRIMARY KEY (host, fp)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS robots (
    host TEXT PRIMARY KEY,
    status INTEGER,
    body BLOB,
    fetched_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    failures INTEGER NOT NULL DEFAULT 0,
    unreachable_since REAL,
    good_status INTEGER,
    good_body BLOB,
    good_fetched_at REAL
);
CREATE TABLE IF NOT EXISTS origin_files (
    kind TEXT NOT NULL,
    origin TEXT NOT NULL,
    status INTEGER,
    body BLOB,
    fetched_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (kind, origin)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
-- Learned URL equivalences per host (dedup/urlrules.py): state 0 candidate, 1 active,
-- 2 refuted; body the evidence (JSON); rewrites the URLs the rule rewrote.
CREATE TABLE IF NOT EXISTS url_rules (
    host TEXT NOT NULL,
    key TEXT NOT NULL,
    state INTEGER NOT NULL,
    body TEXT NOT NULL,
    rewrites INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (host, key)
) WITHOUT ROWID;
-- The URLs each rule rewrote, given back if the rule is refuted.
CREATE TABLE IF NOT EXISTS url_rewrites (
    host TEXT NOT NULL,
    key TEXT NOT NULL,
    url TEXT NOT NULL,
    target TEXT NOT NULL,
    depth INTEGER NOT NULL,
    skipped INTEGER NOT NULL,
    PRIMARY KEY (host, key, url)
) WITHOUT ROWID;
"""

# What brings a database of each older version to the next one. Version 1 (before
# priorities were scores) had no OPIC columns: its URLs count as unranked (cash 1,
# the importance of a seed), which is what their depth keys say in a score's terms.
# Version 2 (before the schedule was bounded) held every host in memory: its hosts
# with queued work are ordered again on open, as every open does.
_MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        "ALTER TABLE urls ADD COLUMN cash REAL NOT NULL DEFAULT 1.0",
        "ALTER TABLE urls ADD COLUMN history REAL NOT NULL DEFAULT 0",
    ),
    2: ("ALTER TABLE hosts ADD COLUMN parked_order INTEGER",),
}


# SQLite's page cache of a crawl's database connection, bytes (``PRAGMA cache_size``;
# a crawl sets ``memory.db_cache``): filled as the database grows past it, then held;
# other pages come from the OS's file cache (a read system call each). Smaller than the
# database of 10,000 pages (22 MB), so full from there on: the process stays flat.
CACHE_BYTES = MemoryLimits().db_cache


class Database:
    """The crawl's SQLite file, opened exclusively by one process."""

    def __init__(
        self, path: Path, *, cache_bytes: int = CACHE_BYTES, synchronous: str = "NORMAL"
    ) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock_fd = _lock(path.with_suffix(path.suffix + ".lock"))
        try:
            # Autocommit off by hand: we run one explicit transaction between commits.
            self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            c = self.conn
            c.execute("PRAGMA journal_mode=WAL")
            c.execute(f"PRAGMA synchronous={synchronous}")
            c.execute(f"PRAGMA cache_size=-{max(1, cache_bytes // 1024)}")
            c.execute("PRAGMA temp_store=MEMORY")
            c.execute("PRAGMA foreign_keys=OFF")
            version = c.execute("PRAGMA user_version").fetchone()[0]
            if not 0 <= version <= SCHEMA_VERSION:
                raise StorageError(
                    f"{path}: schema version {version}, expected {SCHEMA_VERSION} or older "
                    "(written by a newer trawl)"
                )
            c.execute("BEGIN")
            _migrate(c, version)
            c.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            c.execute("COMMIT")
            c.execute("BEGIN")
        except sqlite3.DatabaseError as exc:
            release(self._lock_fd)
            full = as_disk_full(exc, path)
            if full is not None:
                raise full from exc
            raise StorageError(f"{path}: {exc}") from exc
        self._hooks: list[Callable[[], None]] = []
        self._after: list[Callable[[], None]] = []
        self._closed = False
        self._failed: Exception | None = None  # what the commit that failed raised
        self.commits = 0

    def before_commit(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` inside the transaction just before each commit."""
        self._hooks.append(hook)

    def after_commit(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` once a commit is durable (e.g. to acknowledge work)."""
        self._after.append(hook)

    def commit(self) -> None:
        """Make everything written so far durable, as one transaction.

        A full disk (in a hook's file or in the database) raises ``DiskFullError``;
        the transaction is then to be given up (``close(commit=False)``), and the
        files cut back to the last commit on the next open. Every later commit raises
        the same error: the failed one's hooks wrote what they held, which SQLite may
        have rolled back, so a later commit would keep only part of it.
        """
        if self._failed is not None:
            raise self._failed
        try:
            for hook in self._hooks:
                hook()
            self.conn.execute("COMMIT")
        except (OSError, sqlite3.Error) as exc:
            self._hold()
            full = as_disk_full(exc, self.path)
            self._failed = exc if full is None else full
            if full is None:
                raise
            raise full from exc
        self.commits += 1
        self.conn.execute("BEGIN")
        for hook in self._after:
            hook()

    def _hold(self) -> None:
        """After a failed commit, what is written next stays in a transaction that is
        never committed. SQLite may have rolled the failed one back (on SQLITE_FULL or
        an I/O error it may), and with no transaction open each later statement would
        commit on its own: links a parse applied next would become URL rows with no
        count and no queued work on their host, never fetched after a resume (the
        likely cause of a URL the disk-full drill once found queued after its crawl
        ended)."""
        if not self.conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("BEGIN")

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES(?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (key, value),
        )

    def close(self, *, commit: bool = True) -> None:
        """Close (committing first unless told not to); closed even if the commit fails."""
        if self._closed:
            return
        try:
            if commit:
                self.commit()
        finally:
            self._closed = True
            # After a failed COMMIT SQLite may have rolled back already.
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
            self.conn.close()
            release(self._lock_fd)


def _migrate(c: sqlite3.Connection, version: int) -> None:
    """Create the schema, or bring a database of an older ``version`` (0: new) up to
    date, in the open transaction: a crash in the middle leaves it as it was."""
    for v in range(version, SCHEMA_VERSION) if version else ():
        for sql in _MIGRATIONS[v]:
            c.execute(sql)
    for statement in _SCHEMA.split(";\n"):
        if statement.strip():
            c.execute(statement)  # tables and indexes (IF NOT EXISTS: added since, or all)


def _lock(path: Path) -> int:
    fd = try_lock(path, mode=0o644)
    if fd is None:
        raise DataDirInUseError(f"{path.parent} is in use by another trawl process")
    return fd


def lock_held(path: Path) -> bool:
    """Whether a process holds the database at ``path`` open for writing right now."""
    try:
        fd = try_lock(path.with_suffix(path.suffix + ".lock"), create=False)
    except FileNotFoundError:
        return False
    if fd is None:
        return True
    release(fd)
    return False
