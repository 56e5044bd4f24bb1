"""Named counters (dropped links by reason, errors by kind, statuses), committed with the rest."""

from __future__ import annotations

from collections import Counter

from trawl.storage.sqlite.db import Database


class SqliteCounters:
    """In-memory increments, written in the commit hook, so they match the committed state."""

    def __init__(self, db: Database) -> None:
        self._c = db.conn
        self._totals: Counter[str] = Counter(
            {name: n for name, n in self._c.execute("SELECT name, n FROM counters")}
        )
        self._dirty: set[str] = set()
        db.before_commit(self._flush)

    def add(self, name: str, n: int = 1) -> None:
        if n:
            self._totals[name] += n
            self._dirty.add(name)

    def get(self, name: str) -> int:
        return self._totals.get(name, 0)

    def with_prefix(self, prefix: str) -> dict[str, int]:
        """Counters under ``prefix`` (e.g. "dropped:"), keyed by the rest of the name."""
        return {
            k[len(prefix) :]: v for k, v in sorted(self._totals.items()) if k.startswith(prefix)
        }

    def all(self) -> dict[str, int]:
        return dict(self._totals)

    def _flush(self) -> None:
        if self._dirty:
            self._c.executemany(
                "INSERT INTO counters(name, n) VALUES(?, ?) "
                "ON CONFLICT(name) DO UPDATE SET n=excluded.n",
                [(name, self._totals[name]) for name in self._dirty],
            )
            self._dirty.clear()
