"""Pages and fetch records in Redis, written at the store's commit.

Writes wait in this process until ``commit`` sends them (reads see them meanwhile);
each is safe to send twice: a page is added only if its content hash is new
(``HSETNX``), a fetch record replaces the one of its URL, indexed flags are set.
Pages keep their storage order in a sorted set; the unindexed ones in another. A
parse's outcome on a fetch record already committed is a patch (script ``OUTCOME``),
so recording it needs no read of the record.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import orjson

from trawl.storage.base import FetchRecord, PageRecord
from trawl.storage.reasons import one_line
from trawl.storage.redis.conn import Conn, Pipe
from trawl.storage.redis.keys import Keys, arg, text
from trawl.storage.redis.pages_read import PageReads, encode_fetch, encode_page

# KEYS pages, order, seq, unindexed, dups; ARGV hash, record, indexed, duplicates.
ADD_PAGE = r"""
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
local n = redis.call('INCR', KEYS[3])
redis.call('ZADD', KEYS[2], n, ARGV[1])
if ARGV[3] == '0' then redis.call('ZADD', KEYS[4], n, ARGV[1]) end
if ARGV[4] ~= '0' then redis.call('HINCRBY', KEYS[5], ARGV[1], ARGV[4]) end
return 1
"""

# KEYS order, unindexed; ARGV indexed ('1' or '0'), hashes.
MARK = r"""
for i = 2, #ARGV do
  local n = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if n then
    if ARGV[1] == '1' then redis.call('ZREM', KEYS[2], ARGV[i])
    else redis.call('ZADD', KEYS[2], n, ARGV[i]) end
  end
end
return 0
"""

# KEYS pages, claims, the session's claims; ARGV hash, url. Answers false (the text is
# url's), {'stored'} (a page has it: the caller reads whose) or {'claimed', url}.
CLAIM = r"""
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return {'stored'} end
local c = redis.call('HGET', KEYS[2], ARGV[1])
if c and c ~= ARGV[2] then return {'claimed', c} end
if not c then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  redis.call('SADD', KEYS[3], ARGV[1])
end
return false
"""

# KEYS claims, the session's claims; ARGV '1': only the claims whose page is not stored
# (a rollback), '0': all (the session committed: its pages are in the pages hash).
# KEYS[3] pages.
RELEASE = r"""
for _, h in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  if ARGV[1] == '0' or redis.call('HEXISTS', KEYS[3], h) == 0 then
    redis.call('HDEL', KEYS[1], h)
  end
end
redis.call('DEL', KEYS[2])
return 0
"""


# A parse's outcome on a committed fetch record: KEYS fetches; ARGV fp, content hash
# (JSON), outcome (JSON). Nothing when there is no record.
OUTCOME = r"""
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then return 0 end
local f = cjson.decode(current)
f[6], f[7] = cjson.decode(ARGV[2]), cjson.decode(ARGV[3])
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(f))
return 1
"""


def release_page_claims(conn: Conn, keys: Keys, session: str) -> None:
    """Give back the content hashes ``session`` claimed for pages it never stored."""
    conn.script(RELEASE, [keys.page_claims, keys.page_claims_of(session), keys.pages], ["1"])


class RedisPageStore(PageReads):
    """The PageStore protocol: a write buffer over the committed pages and fetches."""

    def __init__(
        self,
        conn: Conn,
        keys: Keys,
        session: str = "",
        known_fetches: dict[tuple[str, int], Any] | None = None,
    ) -> None:
        super().__init__(conn, keys, known_fetches)
        self._session_claims = keys.page_claims_of(session)
        self._claimed = False
        self.drop()

    def drop(self) -> None:
        """Forget every write not yet committed (a crash does the same)."""
        self._new: dict[str, PageRecord] = {}
        self._dups: dict[str, int] = {}
        self._indexed: dict[str, bool] = {}  # committed pages marked since the commit
        self._fetches: dict[tuple[str, int], FetchRecord] = {}
        # (host, fp) -> (content hash, outcome) for committed fetch records
        self._outcomes: dict[tuple[str, int], tuple[str | None, str | None]] = {}

    def find(self, content_hash: str) -> PageRecord | None:
        page = self._new.get(content_hash)
        if page is not None:
            return page
        page = self.find_committed(content_hash)
        if page is None:
            return None
        indexed = self._indexed.get(content_hash, page.indexed)
        return replace(
            page, duplicates=page.duplicates + self._dups.get(content_hash, 0), indexed=indexed
        )

    def claim(self, content_hash: str, url: str) -> str | None:
        # In one step on the pages' shard, so of two workers storing the same text at
        # once only one does; the claim ends when the session commits or is rolled back.
        k = self._keys
        answer = self._conn.script(
            CLAIM, [k.pages, k.page_claims, self._session_claims], [content_hash, url]
        )
        self._claimed = True
        if not answer:
            mine = self._new.get(content_hash)
            return None if mine is None or mine.url == url else mine.url
        if text(answer[0]) == "claimed":
            return text(answer[1])
        found = self.find(content_hash)
        return None if found is None or found.url == url else found.url

    def claimant(self, content_hash: str) -> str | None:
        page = self.find(content_hash)
        if page is not None:
            return page.url
        return text(self._conn.call("HGET", self._keys.page_claims, content_hash))

    @property
    def has_writes(self) -> bool:
        """Writes or claims waiting for the commit."""
        return bool(
            self._claimed
            or self._new
            or self._dups
            or self._indexed
            or self._fetches
            or self._outcomes
        )

    def acknowledge(self, pipe: Pipe) -> None:
        """The session committed: its claims are stored pages now (queued last)."""
        if self._claimed:
            k = self._keys
            pipe.script(RELEASE, [k.page_claims, self._session_claims, k.pages], ["0"])
            self._claimed = False

    def add(self, page: PageRecord) -> None:
        if page.content_hash in self._new:
            raise ValueError(f"page {page.content_hash} is stored already")
        self._new[page.content_hash] = page

    def count_duplicate(self, content_hash: str) -> None:
        page = self._new.get(content_hash)
        if page is not None:
            self._new[content_hash] = replace(page, duplicates=page.duplicates + 1)
        elif self.find_committed(content_hash) is not None:
            self._dups[content_hash] = self._dups.get(content_hash, 0) + 1

    def count(self) -> int:
        return self.committed_count() + len(self._new)

    def unindexed(self, limit: int) -> list[PageRecord]:
        return [p for p in self.pages() if not p.indexed][:limit]

    def mark_indexed(self, content_hashes: list[str], *, indexed: bool = True) -> None:
        for h in content_hashes:
            page = self._new.get(h)
            if page is not None:
                self._new[h] = replace(page, indexed=indexed)
            else:
                self._indexed[h] = indexed

    def pages(self) -> Iterator[PageRecord]:
        for page in self.committed_pages():
            indexed = self._indexed.get(page.content_hash, page.indexed)
            dups = page.duplicates + self._dups.get(page.content_hash, 0)
            yield replace(page, duplicates=dups, indexed=indexed)
        yield from list(self._new.values())

    def record_fetch(self, f: FetchRecord) -> None:
        self._fetches[(f.host, f.fp)] = replace(f, outcome=one_line(f.outcome))

    def set_fetch_outcome(
        self, host: str, fp: int, *, content_hash: str | None, outcome: str
    ) -> None:
        f = self._fetches.get((host, fp))
        if f is None:  # committed already: patched at the commit, unread
            self._outcomes[(host, fp)] = (content_hash, one_line(outcome))
            return
        self._fetches[(host, fp)] = replace(f, content_hash=content_hash, outcome=one_line(outcome))

    def fetch_of(self, host: str, fp: int) -> FetchRecord | None:
        f = self._fetches.get((host, fp))
        if f is not None:
            return f
        f = self.fetch_committed(host, fp)
        patch = self._outcomes.get((host, fp))
        if f is None or patch is None:
            return f
        return replace(f, content_hash=patch[0], outcome=patch[1])

    def flush(self, pipe: Pipe) -> None:
        """Queue every buffered write in ``pipe`` (the commit sends it)."""
        k = self._keys
        for page in self._new.values():
            keys = [k.pages, k.page_order, k.page_seq, k.unindexed, k.duplicates]
            args = [
                page.content_hash,
                encode_page(page),
                "1" if page.indexed else "0",
                str(page.duplicates),
            ]
            pipe.script(ADD_PAGE, keys, args)
        for h, n in self._dups.items():
            pipe.call("HINCRBY", k.duplicates, h, n)
        for flag in (True, False):
            marked = [h for h, v in self._indexed.items() if v is flag]
            if marked:
                pipe.script(MARK, [k.page_order, k.unindexed], ["1" if flag else "0", *marked])
        for (host, fp), f in self._fetches.items():
            pipe.call("HSET", k.host(host).fetches, arg(fp), encode_fetch(f))
        for (host, fp), (content_hash, outcome) in self._outcomes.items():
            patch = [arg(fp), orjson.dumps(content_hash).decode(), orjson.dumps(outcome).decode()]
            pipe.script(OUTCOME, [k.host(host).fetches], patch)
        self.drop()
