"""``CrawlReader`` on a crawl's SQLite file, opened read-only beside the running crawl.

SQLite's WAL lets readers in beside the one writer, so ``trawl stats``, the service,
export and the index never take the crawl's lock and never see an uncommitted write.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from trawl import urls
from trawl.dedup.urlrules import UrlRule
from trawl.errors import StorageError
from trawl.models import Location, Position, UrlStatus
from trawl.storage.base import FetchRecord, HostView, PageRecord, RobotsRow, StoreStats
from trawl.storage.sqlite.pages import PAGE_COLUMNS, page_from_row
from trawl.storage.sqlite.urlrules import RULE_COLUMNS, rule_from_row

STATE_FILE = "state.db"
_FETCH_COLUMNS = (
    "host, fp, url, final_url, status, fetched_at, warc_file, warc_offset, warc_length, "
    "content_hash, outcome"
)


def _fetch(row: tuple[Any, ...]) -> FetchRecord:
    return FetchRecord(
        host=row[0],
        fp=row[1],
        url=row[2],
        final_url=row[3],
        status=row[4],
        fetched_at=row[5],
        warc=Location(row[6], row[7], row[8]),
        content_hash=row[9],
        outcome=row[10],
    )


class SqliteCrawlReader:
    """Read-only queries over ``<data>/state.db``; each call sees the latest commit."""

    def __init__(self, data_dir: Path) -> None:
        path = data_dir / STATE_FILE
        if not path.exists():
            raise StorageError(f"{data_dir} holds no crawl (no {STATE_FILE})")
        self.path = path
        try:
            self._c = sqlite3.connect(
                f"file:{path}?mode=ro", uri=True, timeout=5.0, check_same_thread=False
            )
            self._c.execute("PRAGMA query_only=1")
        except sqlite3.Error as exc:
            raise StorageError(f"{path}: {exc}") from exc

    def _all(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._c.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StorageError(f"{self.path}: {exc}") from exc

    def _one(self, sql: str, params: tuple[object, ...] = ()) -> tuple[Any, ...] | None:
        rows = self._all(sql + " LIMIT 1", params)
        return rows[0] if rows else None

    def stats(self) -> StoreStats:
        statuses = dict.fromkeys(UrlStatus, 0)
        for s, n in self._all("SELECT status, n FROM status_counts"):
            statuses[UrlStatus(s)] = n
        hosts = self._all("SELECT count(*), sum(queued > 0) FROM hosts")[0]
        return StoreStats(
            urls=statuses,
            counters=dict(self._all("SELECT name, n FROM counters ORDER BY name")),
            documents=self._all("SELECT count(*) FROM pages")[0][0],
            parse_backlog=self._all("SELECT count(*) FROM parse_queue")[0][0],
            hosts=hosts[0] or 0,
            hosts_with_queued=hosts[1] or 0,
        )

    def url_states(
        self, status: UrlStatus | None = None
    ) -> Iterator[tuple[str, UrlStatus, str | None]]:
        sql = "SELECT url, status, reason FROM urls"
        rows = self._all(
            sql + (" WHERE status=?" if status is not None else ""),
            (int(status),) if status is not None else (),
        )
        for url, s, reason in rows:
            yield url, UrlStatus(s), reason

    def fetch_of_url(self, url: str) -> FetchRecord | None:
        host = urls.host_key(url)
        fp = urls.fingerprint(url)
        # The URL's own fetch (a fingerprint collision moves a URL to a later
        # fingerprint), else the fetch it redirected to, which names it as its origin.
        row = self._one(
            f"SELECT {_FETCH_COLUMNS} FROM fetches WHERE host=? AND fp>=? AND final_url=? "
            "ORDER BY fp",
            (host, fp, url),
        )
        if row is None:
            row = self._one(
                f"SELECT {_FETCH_COLUMNS} FROM fetches WHERE url=? ORDER BY fetched_at DESC",
                (url,),
            )
        return None if row is None else _fetch(row)

    def page(self, content_hash: str) -> PageRecord | None:
        row = self._one(f"SELECT {PAGE_COLUMNS} FROM pages WHERE content_hash=?", (content_hash,))
        return None if row is None else page_from_row(row)

    def pages_of(self, content_hashes: Sequence[str]) -> dict[str, PageRecord]:
        hashes = list(dict.fromkeys(content_hashes))
        out: dict[str, PageRecord] = {}
        for start in range(0, len(hashes), 500):  # under SQLite's bound on parameters
            chunk = hashes[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT {PAGE_COLUMNS} FROM pages WHERE content_hash IN ({marks})"
            for row in self._all(sql, tuple(chunk)):
                page = page_from_row(row)
                out[page.content_hash] = page
        return out

    def pages(self) -> Iterator[PageRecord]:
        for row in self._all(f"SELECT {PAGE_COLUMNS} FROM pages ORDER BY rowid"):
            yield page_from_row(row)

    def host(self, host: str) -> HostView | None:
        row = self._one(
            "SELECT id, next_at, queued, admitted, budget, priority, demoted_reason "
            "FROM hosts WHERE name=?",
            (host,),
        )
        if row is None:
            return None
        host_id = row[0]
        fetched = self._all("SELECT count(*) FROM fetches WHERE host=?", (host,))[0][0]
        by_status = {
            UrlStatus(s): n
            for s, n in self._all(
                "SELECT status, count(*) FROM urls WHERE host_id=? GROUP BY status ORDER BY status",
                (host_id,),
            )
        }
        errors = self._all(
            "SELECT reason, count(*) FROM urls WHERE host_id=? AND status IN (?, ?) "
            "GROUP BY reason ORDER BY count(*) DESC LIMIT 20",
            (host_id, int(UrlStatus.FAILED), int(UrlStatus.WAITING)),
        )
        robots = self._all(
            "SELECT host, status, body, fetched_at, expires_at, failures, unreachable_since, "
            "good_status, good_body, good_fetched_at FROM robots WHERE host IN (?, ?) "
            "ORDER BY host",
            (f"http://{host}", f"https://{host}"),
        )
        return HostView(
            host=host,
            next_at=row[1],
            queued=row[2],
            admitted=row[3],
            budget=row[4],
            priority=row[5],
            demoted_reason=row[6],
            pages_fetched=fetched,
            urls=by_status,
            errors=[(r or "", n) for r, n in errors],
            robots=[RobotsRow(*r) for r in robots],
        )

    def fetches_by_host(self) -> dict[str, int]:
        return dict(self._all("SELECT host, count(*) FROM fetches GROUP BY host"))

    def failed_by_host(self) -> dict[str, int]:
        return dict(
            self._all(
                "SELECT h.name, count(*) FROM urls u JOIN hosts h ON h.id = u.host_id "
                "WHERE u.status = ? GROUP BY h.name",
                (int(UrlStatus.FAILED),),
            )
        )

    def committed_logs(self) -> dict[str, Position]:
        rows = self._all("SELECT key, value FROM meta WHERE key LIKE 'log.%'")
        return {key[4:]: Position.load(str(value)) for key, value in rows}

    def meta(self, key: str) -> str | None:
        try:
            row = self._c.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        except sqlite3.Error as exc:
            if "no such table" in str(exc):
                return None  # a crawl that never got as far as its schema (a full disk)
            raise StorageError(f"{self.path}: {exc}") from exc
        return None if row is None else str(row[0])

    def url_rules(self, host: str | None = None) -> list[UrlRule]:
        where = "" if host is None else " WHERE host=?"
        sql = f"SELECT {RULE_COLUMNS} FROM url_rules{where} ORDER BY host, key"
        try:
            rows = self._c.execute(sql, () if host is None else (host,)).fetchall()
        except sqlite3.Error as exc:
            if "no such table" in str(exc):
                return []  # written by a trawl from before equivalences, not resumed since
            raise StorageError(f"{self.path}: {exc}") from exc
        return [rule_from_row(r) for r in rows]

    def close(self) -> None:
        self._c.close()

    def __enter__(self) -> SqliteCrawlReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
