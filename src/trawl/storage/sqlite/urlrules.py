"""``UrlRuleStore`` on SQLite: tables ``url_rules`` and ``url_rewrites`` in the crawl's
transaction (so durable at the crawl's commit, like everything else)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from trawl.dedup.urlrules import Rewrite, UrlRule
from trawl.storage.sqlite.db import Database

RULE_COLUMNS = "host, key, state, body, rewrites"


def rule_from_row(row: Sequence[Any]) -> UrlRule:
    return UrlRule.load(row[0], row[1], row[2], row[3], row[4])


class SqliteUrlRuleStore:
    def __init__(self, db: Database) -> None:
        self._c: sqlite3.Connection = db.conn

    def rules(self, host: str) -> list[UrlRule]:
        rows = self._c.execute(
            f"SELECT {RULE_COLUMNS} FROM url_rules WHERE host=? ORDER BY key", (host,)
        )
        return [rule_from_row(r) for r in rows]

    def save(self, rule: UrlRule) -> None:
        # A state never goes back: the update applies only at the same state or above.
        self._c.execute(
            "INSERT INTO url_rules(host, key, state, body) VALUES(?, ?, ?, ?) "
            "ON CONFLICT(host, key) DO UPDATE SET state=excluded.state, body=excluded.body "
            "WHERE excluded.state >= url_rules.state",
            (rule.host, rule.key, int(rule.state), rule.body()),
        )

    def count(self, host: str, key: str, n: int) -> None:
        if n:
            self._c.execute(
                "UPDATE url_rules SET rewrites = rewrites + ? WHERE host=? AND key=?",
                (n, host, key),
            )

    def log(self, rewrites: Sequence[Rewrite]) -> None:
        self._c.executemany(
            "INSERT OR REPLACE INTO url_rewrites(host, key, url, target, depth, skipped) "
            "VALUES(?, ?, ?, ?, ?, ?)",
            [(r.host, r.key, r.url, r.target, r.depth, int(r.skipped)) for r in rewrites],
        )

    def logged(self, host: str, key: str) -> list[Rewrite]:
        rows = self._c.execute(
            "SELECT url, target, depth, skipped FROM url_rewrites WHERE host=? AND key=?",
            (host, key),
        )
        return [Rewrite(host, key, u, t, d, bool(s)) for u, t, d, s in rows]

    def forget(self, host: str, key: str) -> None:
        self._c.execute("DELETE FROM url_rewrites WHERE host=? AND key=?", (host, key))
