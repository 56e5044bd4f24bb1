"""The fetch side of sitemaps: which files a host offers, and fetching one in its turn.

When a host's robots.txt is read (``discover``), its ``Sitemap:`` lines (granted the
robots.txt's origin) and its ``/sitemap.xml`` are offered to admission as sitemap
items (``frontier/sitemaps.py``); lines past the host's sitemap cap are not looked at.
A leased item is fetched by the fetch stage like a page of its host (address guard,
robots.txt for the file's own URL, politeness, timeouts, the WARC record) with what
differs here: the request (``request``: an XML Accept header, a 50 MiB body cap, any
media type but HTML), a redirect (a new item for the target, the grant kept), and an
answer that is no sitemap (4xx: skipped, ``no sitemap: http 404``). A file that came
goes to the parse role as a ``ParseJob`` of kind ``sitemap``. At most ``SLOTS``
files are downloaded at once over all hosts: each may be 50 MiB (twice, raw and
decoded), and a crawl starts with every host's sitemaps.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol

from trawl import urls
from trawl.clock import Clock
from trawl.errors import UrlError
from trawl.fetch.http import FetchResponse
from trawl.frontier.admission import Admission, CounterSink
from trawl.frontier.sitemaps import SitemapRef
from trawl.models import Lease, UrlStatus
from trawl.parse.sitemap import MAX_BYTES
from trawl.storage.base import Frontier

__all__ = ["ACCEPT", "SitemapFetch", "accept_sitemap"]

SLOTS = 16
ACCEPT = "application/xml,text/xml;q=0.9,text/plain;q=0.8,application/gzip;q=0.8,*/*;q=0.1"
_HTML = frozenset({"text/html", "application/xhtml+xml"})


def accept_sitemap(mime_type: str | None) -> bool:
    """Any media type but HTML: sitemaps come as XML, text, gzip or octet streams, and
    an HTML answer is a soft 404 (not downloaded)."""
    return mime_type not in _HTML


class Getter(Protocol):
    async def get(
        self,
        url: str,
        *,
        accept: object = None,
        headers: object = None,
        etag: str | None = None,
        last_modified: str | None = None,
        max_body_bytes: int | None = None,
    ) -> FetchResponse: ...


class SitemapFetch:
    def __init__(
        self,
        *,
        admission: Admission,
        frontier: Frontier,
        counters: CounterSink,
        clock: Clock,
        max_redirects: int,
        max_files: int,
    ) -> None:
        """``max_files``: the host's sitemap cap (robots.txt lines past it not read)."""
        self._admission = admission
        self._frontier = frontier
        self._count = counters
        self._clock = clock
        self._max_redirects = max_redirects
        self._max_files = max_files
        self._slots = asyncio.Semaphore(SLOTS)

    def discover(self, origin: str, listed: Sequence[str]) -> None:
        """Offer the sitemaps of a host whose robots.txt was just read."""
        refs = [(SitemapRef.of(origin + "/sitemap.xml"), 0)]
        for raw in listed[: self._max_files]:
            try:
                url = urls.normalize(raw.strip())
            except UrlError as exc:
                self._count.add(f"sitemap:files refused:{exc.reason}")
                continue
            refs.append((SitemapRef.of(url, origin), 0))
        unique = list(dict.fromkeys(refs))
        self._admission.offer_sitemaps(unique, now=self._clock.now())

    async def request(self, client: Getter, lease: Lease, ref: SitemapRef) -> FetchResponse:
        """GET the file (raises ``FetchError`` as the client does)."""
        async with self._slots:
            return await client.get(
                ref.url,
                accept=accept_sitemap,
                headers={"Accept": ACCEPT},
                etag=lease.etag,
                last_modified=lease.last_modified,
                max_body_bytes=MAX_BYTES,
            )

    def redirect(self, lease: Lease, ref: SitemapRef, resp: FetchResponse, ready: float) -> None:
        """A new item for the target (same grant, same nesting), or a reason why not."""
        try:
            target = urls.join(ref.url, resp.header("location") or "")
        except UrlError as exc:
            self._end(lease, UrlStatus.FAILED, f"bad redirect: {exc.reason}", ready)
            return
        hops = lease.hops + 1
        if hops > self._max_redirects:
            self._end(lease, UrlStatus.FAILED, "too many redirects", ready)
            return
        moved = SitemapRef.of(target, ref.grant)
        if moved.url == ref.url:
            self._end(lease, UrlStatus.FAILED, "redirect loop", ready)
            return
        result = self._admission.offer_sitemaps(
            [(moved, lease.depth)], now=self._clock.now(), via=lease.via or lease.url, hops=hops
        )
        why = next(iter(result.dropped), None) or (None if result.added else "already known")
        reason = f"-> {target}" + (f" ({why})" if why else "")
        self._end(lease, UrlStatus.REDIRECTED, reason, ready)

    def missing(self, lease: Lease, status: int, ready: float) -> None:
        """A 4xx: the host has no sitemap there (skipped, not failed)."""
        self._count.add("sitemap:missing")
        self._end(lease, UrlStatus.SKIPPED, f"no sitemap: http {status}", ready)

    def _end(self, lease: Lease, status: UrlStatus, reason: str, ready: float) -> None:
        self._frontier.finish(lease, status, reason=reason, host_ready_at=ready)
