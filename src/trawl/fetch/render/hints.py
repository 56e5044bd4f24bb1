"""Hosts learned to need rendering, kept per host in the crawl's store.

Under ``--render auto`` a page is rendered when its HTML looks like a shell. When such
a render gave the page much more text than its HTML had, its host is learned to need
rendering: its later pages with scripts are rendered too, even when they do not look
like shells (server-rendered furniture around a client-rendered article). Those
renders test the hint: one that adds nothing is a miss, and after ``MISSES`` misses in
a row the host is marked as not needing it (its shells are still rendered, one by
one, as shells), until the hint expires.

The hint lives in the store's per-origin small files (``OriginFileStore``, kind
``render``, keyed by the host; status = misses so far, body = the verdict), so it
follows the crawl's commits on every backend and a resumed crawl or another worker
of a fleet knows it; it expires after a week.
"""

from __future__ import annotations

from typing import Final

from trawl.fetch.render.decide import MIN_TEXT
from trawl.lru import Lru
from trawl.storage.base import OriginFileStore

__all__ = ["MISSES", "RenderHints", "gained"]

KIND: Final = "render"
MISSES: Final = 2
_NEEDS: Final = b"needs rendering"
_NOT: Final = b"does not need rendering"
_TTL: Final = 7 * 86400.0
# (needs rendering, known either way, misses in a row, expires at)
_Hint = tuple[bool, bool, int, float]
_UNKNOWN: Final[_Hint] = (False, False, 0, float("inf"))


def gained(raw_chars: int, rendered_chars: int) -> bool:
    """The render built the page's text: much more text than the HTML carried."""
    return rendered_chars >= max(MIN_TEXT // 2, 2 * raw_chars + 100)


class RenderHints:
    """Per host: does it need rendering? Read through a bounded in-memory cache."""

    def __init__(self, store: OriginFileStore, *, ttl: float = _TTL, capacity: int = 50_000):
        self._store = store
        self._ttl = ttl
        self._mem: Lru[str, _Hint] = Lru(capacity)

    def _get(self, host: str, now: float) -> _Hint:
        hint = self._mem.get(host)
        if hint is None:
            row = self._store.load(KIND, host)
            hint = _UNKNOWN if row is None else (row[1] == _NEEDS, True, row[0] or 0, row[2])
            self._mem.put(host, hint)
        return _UNKNOWN if hint[3] <= now else hint

    def needs(self, host: str, now: float) -> bool:
        """The host was learned to need rendering."""
        return self._get(host, now)[0]

    def learn(self, host: str, *, gain: bool, shell: bool, now: float) -> None:
        """A page of ``host`` was rendered (as a ``shell``, or because of the hint):
        did the render build its text?"""
        needs, known, misses, _expires = self._get(host, now)
        if shell:
            if gain and not known:
                self._save(host, True, 0, now)
            return
        if gain:
            if misses:
                self._save(host, True, 0, now)
        elif needs:
            misses += 1
            self._save(host, misses < MISSES, misses, now)

    def _save(self, host: str, needs: bool, misses: int, now: float) -> None:
        expires = now + self._ttl
        body = _NEEDS if needs else _NOT
        self._store.save(KIND, host, status=misses, body=body, fetched_at=now, expires_at=expires)
        self._mem.put(host, (needs, True, misses, expires))
