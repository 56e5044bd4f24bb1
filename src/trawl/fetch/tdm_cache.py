"""``/.well-known/tdmrep.json`` per origin: fetched once, cached like robots.txt.

Only a crawl that honours AI / TDM opt-outs (purpose "training") asks for it. A 2xx
body is parsed by ``trawl.parse.tdm``; anything else (4xx, 5xx, network error,
garbage) means the file states no reservation. Unlike robots.txt an unreachable file
does not stop the crawl: TDMRep reserves the use of the text, not the fetching, and
the pages' own headers and meta tags are still read. An error answer is cached for a
shorter time so the file is tried again.
"""

from __future__ import annotations

from dataclasses import dataclass

from trawl.lru import Lru
from trawl.parse.tdm import NO_RULES, TdmRules, parse_tdmrep_json
from trawl.storage.base import OriginFileStore

TTL = 86_400.0
ERROR_TTL = 3_600.0


@dataclass(frozen=True, slots=True)
class _Entry:
    rules: TdmRules
    expires_at: float


class TdmCache:
    """TDMRep rules per origin, in memory and in the crawl database."""

    def __init__(self, store: OriginFileStore, *, capacity: int = 50_000) -> None:
        self._store = store
        self._mem: Lru[str, _Entry] = Lru(capacity)

    def get(self, origin: str, now: float) -> TdmRules | None:
        """The rules, or None when the file must be fetched (never, or expired)."""
        entry = self._mem.get(origin)
        if entry is None:
            row = self._store.load("tdmrep", origin)
            if row is None:
                return None
            status, body, expires_at = row
            entry = _Entry(_rules(status, body), expires_at)
            self._mem.put(origin, entry)
        return None if now >= entry.expires_at else entry.rules

    def record(
        self, origin: str, *, status: int | None, body: bytes | None, now: float
    ) -> TdmRules:
        ok = status is not None and (200 <= status < 300 or 400 <= status < 500)
        expires = now + (TTL if ok else ERROR_TTL)
        kept = body if status is not None and 200 <= status < 300 else None
        self._store.save(
            "tdmrep", origin, status=status, body=kept, fetched_at=now, expires_at=expires
        )
        entry = _Entry(_rules(status, body), expires)
        self._mem.put(origin, entry)
        return entry.rules


def _rules(status: int | None, body: bytes | None) -> TdmRules:
    if status is not None and 200 <= status < 300 and body:
        return parse_tdmrep_json(body)
    return NO_RULES
