"""The machine-wide host leases: one small SQLite file every crawl process shares.

``<politeness_dir>/hosts.db`` in WAL mode: each acquire or release is one short write
transaction on one row, so crawls in other processes see it at once. The common cases
are one statement each (its own transaction): taking a host that is free and due (no
other live holder, next contact reached), and giving one back when no crawl asked a
gap and this one asks none. The rest reads the row and applies ``storage/leases.py``
in a ``BEGIN IMMEDIATE`` transaction. Durability is not needed (``synchronous=OFF``):
a lease lost to a power cut only lapses early, and a next-contact time lost is at most
one delay. A lease whose holder's process is gone (``storage/leases.py``
``holder_alive``) lapses at once. Rows untouched for a day are dropped when the file
is opened.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import orjson

from trawl.errors import StorageError
from trawl.storage.base import SharedHost
from trawl.storage.leases import LeaseRow, acquire, holder_alive, release

__all__ = ["FILE_NAME", "SqliteHostLeases"]

FILE_NAME = "hosts.db"
BUSY_MS = 2000  # how long a transaction waits for another process's (a few µs each)
FORGET_AFTER = 86_400.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS host_leases (
    host TEXT PRIMARY KEY,
    holder TEXT,
    expires REAL NOT NULL DEFAULT 0,
    next_at REAL NOT NULL DEFAULT 0,
    asks TEXT NOT NULL DEFAULT '{}'
) WITHOUT ROWID;
"""


class SqliteHostLeases:
    def __init__(self, directory: Path, *, now: float | None = None) -> None:
        """Open (or make) ``directory/hosts.db``; ``now`` drops day-old rows."""
        self.path = directory / FILE_NAME
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self._c = sqlite3.connect(
                self.path, isolation_level=None, timeout=BUSY_MS / 1000, check_same_thread=False
            )
            self._c.execute(f"PRAGMA busy_timeout={BUSY_MS}")
            self._c.execute("PRAGMA journal_mode=WAL")
            self._c.execute("PRAGMA synchronous=OFF")
            self._c.executescript(_SCHEMA)
            if now is not None:
                with self._write():
                    self._c.execute(
                        "DELETE FROM host_leases WHERE expires < ? AND next_at < ?",
                        (now - FORGET_AFTER, now - FORGET_AFTER),
                    )
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(f"cannot open the host leases in {self.path}: {exc}") from exc

    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        self._c.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._c.execute("ROLLBACK")
            raise
        self._c.execute("COMMIT")

    def _load(self, host: str) -> LeaseRow | None:
        found = self._c.execute(
            "SELECT holder, expires, next_at, asks FROM host_leases WHERE host=?", (host,)
        ).fetchone()
        if found is None:
            return None
        holder, expires, next_at, asks = found
        return LeaseRow(holder, expires, next_at, {h: (a[0], a[1]) for h, a in _asks(asks)})

    def _save(self, host: str, row: LeaseRow) -> None:
        self._c.execute(
            "INSERT OR REPLACE INTO host_leases (host, holder, expires, next_at, asks) "
            "VALUES (?, ?, ?, ?, ?)",
            (host, row.holder, row.expires, row.next_at, orjson.dumps(row.asks).decode()),
        )

    def acquire(
        self, host: str, *, holder: str, now: float, ttl: float, gap: float = 0.0
    ) -> float | None:
        try:
            # ``acquire``'s rules when the row says the host is free and due: taken.
            if self._c.execute(
                "UPDATE host_leases SET holder=?, expires=? WHERE host=? AND next_at<=? "
                "AND (holder IS NULL OR holder=? OR expires<=?)",
                (holder, now + ttl, host, now, holder, now),
            ).rowcount:
                return None
            with self._write():
                row = self._load(host) or LeaseRow()
                before = (row.holder, row.expires, row.next_at)
                later = acquire(row, holder=holder, now=now, ttl=ttl, alive=holder_alive, gap=gap)
                if (row.holder, row.expires, row.next_at) != before:  # taken, or taken over
                    self._save(host, row)
                return later
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                return now + 1.0  # another process holds the file that long: ask later
            raise StorageError(f"{self.path}: {exc}") from exc

    def release(self, host: str, *, holder: str, now: float, ready_at: float) -> None:
        try:
            # ``release``'s rules when no gap is asked, by this crawl or (live) any other.
            if (
                ready_at <= now
                and self._c.execute(
                    "UPDATE host_leases SET next_at=max(next_at, ?), "
                    "holder=CASE WHEN holder=? THEN NULL ELSE holder END, "
                    "expires=CASE WHEN holder=? THEN 0 ELSE expires END "
                    "WHERE host=? AND asks='{}'",
                    (ready_at, holder, holder, host),
                ).rowcount
            ):
                return
            with self._write():
                row = self._load(host) or LeaseRow()
                release(row, holder=holder, now=now, ready_at=ready_at)
                self._save(host, row)
        except sqlite3.Error as exc:
            # Not given back, the lease lapses at its expiry (or when this process ends).
            raise StorageError(f"{self.path}: {exc}") from exc

    def get(self, host: str, now: float) -> SharedHost | None:
        row = self._load(host)
        return None if row is None else row.view(host, now)

    def beat(self, holder: str) -> None:
        return None  # a holder's process is checked itself

    def close(self) -> None:
        self._c.close()


def _asks(text: str) -> list[tuple[str, list[float]]]:
    data = orjson.loads(text)
    return list(data.items()) if isinstance(data, dict) else []
