"""Sitemap files as frontier work: their frontier URLs, their bounds, and how the URLs
they list are ranked.

A sitemap file to read is an entry in its host's queue like any page, so the host's
politeness (one request in flight, its delay), leases, retries, the crash rules and
every storage backend apply to it unchanged: there is no second scheduler. Its
frontier URL is the file's URL with the fragment ``#sitemap``, or
``#sitemap=ORIGIN`` when the robots.txt of ORIGIN listed it (directly or through an
index): the grant that lets it list URLs anywhere on ORIGIN (see
``parse.sitemap.location_reason``). Normal-form URLs never carry a fragment, so an
item is never taken for a page at the same address (a footer link to
``/sitemap.xml`` stays a page URL of its own), and the seen set reads each file once
per grant. A grant that adds nothing (the file's own origin, the file at its root)
is dropped, so ``Sitemap: /sitemap.xml`` in robots.txt and the ``/sitemap.xml`` tried
for every host are one item. The sitemaps an index lists get its grant, or, from an
index at its origin's root (``/sitemap.xml`` usually), that origin's: sites keep their
files in ``/sitemaps/`` and list pages everywhere, and the root index speaks for all.

Bounds: an item's ``depth`` is its nesting (0 for robots.txt's and ``/sitemap.xml``,
1 for the sitemaps an index lists, ...), at most ``MAX_NESTING``; each host has at
most ``max_sitemaps_per_host`` files admitted, counted in the store (``SitemapLedger``,
the origin-file kind ``sitemaps``) in the same commit as the admissions, so a resumed
crawl keeps counting. Items come before their host's pages (``SITEMAP_PRIORITY``).

Ranking (``lastmod_priority``): a listed URL's priority (lower is fetched first within
its host) is ``ENTRY_DEPTH`` plus a freshness rank from its ``lastmod``: 0 within a
day, 1 a week, 2 a month, 3 a year, 4 older; no ``lastmod`` (or one in the future) is
2. Links get their depth as priority, so a page changed today ranks with the home
page's links and a page untouched for years after the links four hops deep.
"""

from __future__ import annotations

from dataclasses import dataclass

from trawl.storage.base import OriginFileStore

__all__ = [
    "ENTRY_DEPTH",
    "MAX_NESTING",
    "SITEMAP_PRIORITY",
    "SitemapLedger",
    "SitemapRef",
    "lastmod_priority",
]

SITEMAP_PRIORITY = -1  # sitemap files are read before their host's pages
ENTRY_DEPTH = 1  # a URL a sitemap lists counts as one hop from its site's home page
MAX_NESTING = 2  # robots.txt's (0) -> an index's (1) -> a nested index's (2)
LEDGER_KIND = "sitemaps"
_MARK = "sitemap"
_DAY = 86400.0
_AGES = (_DAY, 7 * _DAY, 31 * _DAY, 366 * _DAY)
UNKNOWN_RANK = 2


def _origin(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0].split('?', 1)[0]}"


def _at_root(url: str) -> bool:
    """Whether a file lies in its origin's root directory (so speaks for all of it)."""
    return url.split("?", 1)[0].rfind("/") == len(_origin(url))


@dataclass(frozen=True, slots=True)
class SitemapRef:
    """A sitemap file to read: its URL (normal form) and the origin granting it."""

    url: str
    grant: str | None = None

    @classmethod
    def of(cls, url: str, grant: str | None = None) -> SitemapRef:
        """The ref, its grant dropped when it adds nothing to the file's own location."""
        if grant is not None and grant == _origin(url) and _at_root(url):
            grant = None
        return cls(url, grant)

    def child(self, url: str) -> SitemapRef:
        """The ref of a sitemap this index lists: the index's grant passes on, and an
        index at its origin's root (which speaks for the whole origin) grants it."""
        grant = self.grant
        if grant is None and _at_root(self.url):
            grant = _origin(self.url)
        return SitemapRef.of(url, grant)

    @property
    def item(self) -> str:
        """The frontier URL of this file."""
        return f"{self.url}#{_MARK}" + ("" if self.grant is None else f"={self.grant}")

    @classmethod
    def parse(cls, item: str) -> SitemapRef | None:
        """The ref a frontier URL stands for; None for a page's URL."""
        url, sep, fragment = item.partition("#")
        if not sep or not fragment.startswith(_MARK):
            return None
        rest = fragment[len(_MARK) :]
        if not rest:
            return cls(url)
        if rest[0] == "=" and len(rest) > 1:
            return cls(url, rest[1:])
        return None


def is_item(url: str) -> bool:
    """Whether a frontier URL is a sitemap file (pages never carry a fragment)."""
    return "#" in url


def lastmod_priority(lastmod: float | None, now: float) -> int:
    """The frontier priority of a URL a sitemap lists (lower first): fresher first."""
    if lastmod is None or lastmod > now + _DAY:
        return ENTRY_DEPTH + UNKNOWN_RANK
    age = now - lastmod
    for rank, limit in enumerate(_AGES):
        if age <= limit:
            return ENTRY_DEPTH + rank
    return ENTRY_DEPTH + len(_AGES)


class SitemapLedger:
    """Sitemap files admitted per host, kept with the crawl (written in its commits)."""

    def __init__(self, store: OriginFileStore, *, cap: int) -> None:
        self._store = store
        self.cap = cap

    def admitted(self, host: str) -> int:
        found = self._store.load(LEDGER_KIND, host)
        if found is None or found[1] is None:
            return 0
        try:
            return int(found[1])
        except ValueError:
            return 0

    def room(self, host: str) -> int:
        return max(0, self.cap - self.admitted(host))

    def spend(self, host: str, n: int) -> None:
        if n:
            total = str(self.admitted(host) + n).encode()
            self._store.save(
                LEDGER_KIND, host, status=None, body=total, fetched_at=0.0, expires_at=0.0
            )
