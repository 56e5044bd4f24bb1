"""Committed pages and fetch records in Redis, as any process reads them, and their
encodings (the worker's store, ``trawl.storage.redis.pages``, adds its buffer on top)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from trawl.models import Location
from trawl.storage.base import FetchRecord, PageRecord
from trawl.storage.redis.conn import Conn
from trawl.storage.redis.keys import Keys, arg, text

_CHUNK = 500


def _loc(x: list[Any]) -> Location:
    return Location(str(x[0]), int(x[1]), int(x[2]))


def encode_page(p: PageRecord) -> str:
    w, t = p.warc, p.text
    row = [p.url, p.host, str(p.fp), repr(p.fetched_at), p.title, p.language]
    return orjson.dumps([*row, [w.file, w.offset, w.length], [t.file, t.offset, t.length]]).decode()


def decode_page(content_hash: str, data: Any, duplicates: Any, unindexed: Any) -> PageRecord:
    r = orjson.loads(data)
    return PageRecord(
        content_hash=content_hash,
        url=r[0],
        host=r[1],
        fp=int(r[2]),
        fetched_at=float(r[3]),
        title=r[4],
        language=r[5],
        warc=_loc(r[6]),
        text=_loc(r[7]),
        duplicates=int(duplicates or 0),
        indexed=unindexed is None,
    )


def encode_fetch(f: FetchRecord) -> str:
    row = [
        f.url,
        f.final_url,
        f.status,
        repr(f.fetched_at),
        [f.warc.file, f.warc.offset, f.warc.length],
    ]
    return orjson.dumps([*row, f.content_hash, f.outcome]).decode()


def decode_fetch(host: str, fp: int, data: Any) -> FetchRecord:
    r = orjson.loads(data)
    return FetchRecord(host, fp, r[0], r[1], int(r[2]), float(r[3]), _loc(r[4]), r[5], r[6])


class PageReads:
    """Committed pages, as any process reads them (the store adds its buffer on top)."""

    def __init__(
        self, conn: Conn, keys: Keys, known_fetches: dict[tuple[str, int], Any] | None = None
    ) -> None:
        self._conn = conn
        self._keys = keys
        # Fetch records read along with a lease (the frontier's take): used once each.
        self._known = known_fetches if known_fetches is not None else {}

    def _load(self, hashes: list[str]) -> list[PageRecord | None]:
        if not hashes:
            return []
        k = self._keys
        pipe = self._conn.pipeline()
        pipe.call("HMGET", k.pages, *hashes)
        pipe.call("HMGET", k.duplicates, *hashes)
        pipe.call("ZMSCORE", k.unindexed, *hashes)
        rows, dups, unx = pipe.execute()
        return [
            None if data is None else decode_page(h, data, d, u)
            for h, data, d, u in zip(hashes, rows, dups, unx, strict=True)
        ]

    def find_committed(self, content_hash: str) -> PageRecord | None:
        return self._load([content_hash])[0]

    def find_many(self, hashes: list[str]) -> list[PageRecord | None]:
        """The committed pages of ``hashes`` (None where none), a chunk a round trip."""
        out: list[PageRecord | None] = []
        for start in range(0, len(hashes), _CHUNK):
            out += self._load(hashes[start : start + _CHUNK])
        return out

    def committed_pages(self) -> Iterator[PageRecord]:
        start = 0
        while True:
            hashes = [
                text(h) or ""
                for h in self._conn.call("ZRANGE", self._keys.page_order, start, start + _CHUNK - 1)
            ]
            yield from (p for p in self._load(hashes) if p is not None)
            if len(hashes) < _CHUNK:
                return
            start += _CHUNK

    def committed_count(self) -> int:
        return int(self._conn.call("ZCARD", self._keys.page_order))

    def fetch_committed(self, host: str, fp: int) -> FetchRecord | None:
        if (host, fp) in self._known:
            data = self._known.pop((host, fp))
        else:
            data = self._conn.call("HGET", self._keys.host(host).fetches, arg(fp))
        return None if data is None else decode_fetch(host, fp, data)
