"""Pages, fetches, the parse queue and cached robots.txt, on the crawl's SQLite database."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trawl.jobs import ParseJob
from trawl.models import Location
from trawl.storage.base import FetchRecord, PageRecord, RobotsRow, claim_by_find, claimant_by_find
from trawl.storage.reasons import one_line
from trawl.storage.sqlite.db import Database

PAGE_COLUMNS = (
    "content_hash, url, host, fp, fetched_at, title, language, warc_file, warc_offset, "
    "warc_length, text_file, text_offset, text_length, duplicates, indexed"
)


def page_from_row(row: tuple[Any, ...]) -> PageRecord:
    return PageRecord(
        content_hash=row[0],
        url=row[1],
        host=row[2],
        fp=row[3],
        fetched_at=row[4],
        title=row[5],
        language=row[6],
        warc=Location(row[7], row[8], row[9]),
        text=Location(row[10], row[11], row[12]),
        duplicates=row[13],
        indexed=bool(row[14]),
    )


class SqlitePageStore:
    """The PageStore protocol: one row per distinct text, one per stored fetch."""

    def __init__(self, db: Database) -> None:
        self._c = db.conn
        # The last text looked for and not found: a page's parse asks twice (its exact
        # duplicate check, then its claim) with links offered in between, and only
        # ``add`` makes a text found.
        self._absent: str | None = None

    def find(self, content_hash: str) -> PageRecord | None:
        if content_hash == self._absent:
            return None
        row = self._c.execute(
            f"SELECT {PAGE_COLUMNS} FROM pages WHERE content_hash=?", (content_hash,)
        ).fetchone()
        if row is None:
            self._absent = content_hash
            return None
        return page_from_row(row)

    def claim(self, content_hash: str, url: str) -> str | None:
        return claim_by_find(self, content_hash, url)

    def claimant(self, content_hash: str) -> str | None:
        return claimant_by_find(self, content_hash)

    def add(self, page: PageRecord) -> None:
        if page.content_hash == self._absent:
            self._absent = None
        w, t = page.warc, page.text
        self._c.execute(
            f"INSERT INTO pages({PAGE_COLUMNS}) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                page.content_hash,
                page.url,
                page.host,
                page.fp,
                page.fetched_at,
                page.title,
                page.language,
                w.file,
                w.offset,
                w.length,
                t.file,
                t.offset,
                t.length,
                page.duplicates,
                int(page.indexed),
            ),
        )

    def count_duplicate(self, content_hash: str) -> None:
        self._c.execute(
            "UPDATE pages SET duplicates = duplicates + 1 WHERE content_hash=?", (content_hash,)
        )

    def count(self) -> int:
        return int(self._c.execute("SELECT count(*) FROM pages").fetchone()[0])

    def unindexed(self, limit: int) -> list[PageRecord]:
        rows = self._c.execute(
            f"SELECT {PAGE_COLUMNS} FROM pages WHERE indexed=0 ORDER BY rowid LIMIT ?",
            (limit,),
        ).fetchall()
        return [page_from_row(r) for r in rows]

    def mark_indexed(self, content_hashes: list[str], *, indexed: bool = True) -> None:
        self._c.executemany(
            "UPDATE pages SET indexed=? WHERE content_hash=?",
            [(int(indexed), h) for h in content_hashes],
        )

    def pages(self) -> Iterator[PageRecord]:
        cur = self._c.execute(f"SELECT {PAGE_COLUMNS} FROM pages ORDER BY rowid")
        for row in cur:
            yield page_from_row(row)

    def record_fetch(self, f: FetchRecord) -> None:
        self._c.execute(
            "INSERT INTO fetches(host, fp, url, final_url, status, fetched_at, warc_file, "
            "warc_offset, warc_length, content_hash, outcome) VALUES(?,?,?,?,?,?,?,?,?,?,?) "
            "ON CONFLICT(host, fp) DO UPDATE SET url=excluded.url, final_url=excluded.final_url, "
            "status=excluded.status, fetched_at=excluded.fetched_at, warc_file=excluded.warc_file, "
            "warc_offset=excluded.warc_offset, warc_length=excluded.warc_length, "
            "content_hash=excluded.content_hash, outcome=excluded.outcome",
            (
                f.host,
                f.fp,
                f.url,
                f.final_url,
                f.status,
                f.fetched_at,
                f.warc.file,
                f.warc.offset,
                f.warc.length,
                f.content_hash,
                one_line(f.outcome),
            ),
        )

    def set_fetch_outcome(
        self, host: str, fp: int, *, content_hash: str | None, outcome: str
    ) -> None:
        self._c.execute(
            "UPDATE fetches SET content_hash=?, outcome=? WHERE host=? AND fp=?",
            (content_hash, one_line(outcome), host, fp),
        )

    def fetch_of(self, host: str, fp: int) -> FetchRecord | None:
        row = self._c.execute(
            "SELECT host, fp, url, final_url, status, fetched_at, warc_file, warc_offset, "
            "warc_length, content_hash, outcome FROM fetches WHERE host=? AND fp=?",
            (host, fp),
        ).fetchone()
        if row is None:
            return None
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


_LAST_SEQ = "parse_queue.last_seq"


class SqliteParseQueue:
    """The durable queue between fetch and parse: a row per stored, unparsed page.

    Seqs are never used again, even once the queue has drained (an INTEGER PRIMARY KEY
    would number from the largest row left): the largest one given is kept in meta,
    written in the commit that keeps the rows.
    """

    def __init__(self, db: Database) -> None:
        self._db = db
        self._c = db.conn
        top = self._c.execute("SELECT max(seq) FROM parse_queue").fetchone()[0]
        self._last = max(int(db.get_meta(_LAST_SEQ) or 0), int(top or 0))
        self._saved = self._last
        db.before_commit(self._flush)

    def _flush(self) -> None:
        if self._last != self._saved:
            self._db.set_meta(_LAST_SEQ, str(self._last))
            self._saved = self._last

    def put(self, job: ParseJob) -> int:
        self._last += 1
        self._c.execute(
            "INSERT INTO parse_queue(seq, host, fp, job) VALUES(?,?,?,?)",
            (self._last, job.host, job.fp, job.dump().decode()),
        )
        return self._last

    def pending(self, *, after: int = 0, limit: int = 1000) -> list[tuple[int, ParseJob]]:
        rows = self._c.execute(
            "SELECT seq, job FROM parse_queue WHERE seq > ? ORDER BY seq LIMIT ?", (after, limit)
        ).fetchall()
        return [(seq, ParseJob.load(job)) for seq, job in rows]

    def taken_over(self, *, limit: int = 1000) -> list[tuple[int, ParseJob]]:
        return []  # one process owns this queue: nothing to take over

    def ack(self, seq: int) -> None:
        self._c.execute("DELETE FROM parse_queue WHERE seq=?", (seq,))

    def __len__(self) -> int:
        return int(self._c.execute("SELECT count(*) FROM parse_queue").fetchone()[0])


class SqliteRobotsStore:
    """Cached robots.txt answers per host, with the last good copy for long outages."""

    def __init__(self, db: Database) -> None:
        self._c = db.conn

    def load(self, host: str) -> RobotsRow | None:
        row = self._c.execute(
            "SELECT host, status, body, fetched_at, expires_at, failures, unreachable_since, "
            "good_status, good_body, good_fetched_at FROM robots WHERE host=?",
            (host,),
        ).fetchone()
        return None if row is None else RobotsRow(*row)

    def save(self, r: RobotsRow) -> None:
        self._c.execute(
            "INSERT OR REPLACE INTO robots(host, status, body, fetched_at, expires_at, failures, "
            "unreachable_since, good_status, good_body, good_fetched_at) "
            "VALUES(?,?,?,?,?,?,?,?,?,?)",
            (
                r.host,
                r.status,
                r.body,
                r.fetched_at,
                r.expires_at,
                r.failures,
                r.unreachable_since,
                r.good_status,
                r.good_body,
                r.good_fetched_at,
            ),
        )


class SqliteOriginFileStore:
    """The OriginFileStore protocol: one row per (kind, origin)."""

    def __init__(self, db: Database) -> None:
        self._c = db.conn

    def load(self, kind: str, origin: str) -> tuple[int | None, bytes | None, float] | None:
        row = self._c.execute(
            "SELECT status, body, expires_at FROM origin_files WHERE kind=? AND origin=?",
            (kind, origin),
        ).fetchone()
        return None if row is None else (row[0], row[1], float(row[2]))

    def save(
        self,
        kind: str,
        origin: str,
        *,
        status: int | None,
        body: bytes | None,
        fetched_at: float,
        expires_at: float,
    ) -> None:
        self._c.execute(
            "INSERT OR REPLACE INTO origin_files(kind, origin, status, body, fetched_at, "
            "expires_at) VALUES(?,?,?,?,?,?)",
            (kind, origin, status, body, fetched_at, expires_at),
        )
