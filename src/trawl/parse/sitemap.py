"""Sitemaps, pure: the bytes of one sitemap file in, its URLs out (parse worker side).

A sitemap is an XML ``urlset`` (pages, each with an optional ``lastmod``), an XML
``sitemapindex`` (more sitemap files), or a plain-text file of one URL a line
(sitemaps.org); any of them may be gzip'd (``.xml.gz``: the file itself, not a
Content-Encoding, which the HTTP client has removed already). Everything in it is
hostile, and each way it can hurt is stopped here with a reason:

- XML is read by expat (the standard library's ``pyexpat``) fed in 64 KiB chunks, so
  memory stays small whatever the file. A document type declaration is refused
  before anything in it is read (``DTD not allowed``): sitemaps have none, and entity
  definitions (billion laughs, quadratic blow-up) and external entities (local files,
  network) all need one; expat fetches nothing by itself, and parameter entities are
  off. Measured: a 50,000-URL sitemap (9.3 MB) takes 148 ms of CPU here, lxml's pull
  parser 183 ms and its target parser 161 ms, so lxml would buy nothing.
- The protocol's caps: 50,000 URLs (or sitemaps) and 50 MiB decoded per file. A file
  past either is read up to the cap, the rest ignored with a reason; gzip is inflated
  incrementally with the output bounded (a gzip bomb stops at 50 MiB).
- The root element must be ``urlset`` or ``sitemapindex`` in the sitemaps.org
  namespace (or the two older Google ones, or none): any other root or namespace
  (an HTML page, an RSS feed, a look-alike namespace) refuses the whole file, and only
  ``loc``/``lastmod`` in that namespace are read (``image:loc`` is not a page).
- Malformed XML keeps the entries read before the error, and says where it stopped.
- Every ``loc`` is put in normal form, and must be where the sitemap may speak for
  (``location_reason``): on the sitemap's own origin under its directory, or anywhere
  on the origin whose robots.txt listed it (``grant``); others are refused and counted
  (``foreign host``, ``outside sitemap path``). An index's sitemaps must be on its own
  origin or the granting one (``foreign sitemap``), and not itself (``self reference``).
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from trawl import urls
from trawl.errors import UrlError
from trawl.parse._sitemap_read import (
    CHUNK,
    MAX_BYTES,
    NAMESPACES,
    Decoded,
    SitemapError,
    XmlReader,
    read_text,
)

__all__ = [
    "MAX_BYTES",
    "MAX_URLS",
    "NAMESPACES",
    "ParsedSitemap",
    "SitemapEntry",
    "SitemapInput",
    "location_reason",
    "parse_lastmod",
    "parse_sitemap",
]

MAX_URLS = 50_000  # URLs (or sitemaps) per file, sitemaps.org
TOO_MANY = f"more than {MAX_URLS:,} URLs"


@dataclass(frozen=True, slots=True)
class SitemapInput:
    """One fetched sitemap file: where it came from, and its body."""

    url: str  # the URL that answered (normal form)
    body: bytes  # the content coding removed (a .gz file is still gzip'd)
    grant: str | None = None  # the origin whose robots.txt listed it (or its index)
    strip_tracking: bool = False


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    url: str  # normal form
    lastmod: float | None = None  # seconds since the epoch (UTC)


@dataclass(frozen=True, slots=True)
class ParsedSitemap:
    """What one sitemap file says. ``kind`` is ``urlset``, ``index``, ``text``, or
    ``none`` when the file was refused whole (``error`` says why)."""

    url: str
    kind: str
    urls: tuple[SitemapEntry, ...] = ()
    sitemaps: tuple[SitemapEntry, ...] = ()
    refused: tuple[tuple[str, int], ...] = ()  # (reason, entries) dropped here
    error: str | None = None  # why the file, or the rest of it, was not read
    problem: str | None = None  # the kind of that error, a short fixed phrase
    digest: str = ""  # of the decoded bytes: did the file change since last time?
    size: int = 0  # decoded bytes read


def location_reason(sitemap_url: str, grant: str | None, url: str) -> str | None:
    """Why a sitemap at ``sitemap_url`` may not list ``url`` (None: it may).

    sitemaps.org: a sitemap speaks for URLs under its own directory on its own
    scheme, host and port; a robots.txt that lists a sitemap lets it speak for that
    robots.txt's whole origin, wherever the sitemap lies.
    """
    if grant is not None and _origin(url) == grant:
        return None
    path_end = sitemap_url.find("?")
    head = sitemap_url if path_end < 0 else sitemap_url[:path_end]
    directory = head[: head.rfind("/") + 1]
    if url.startswith(directory):
        return None
    if _origin(url).partition("://")[2] == _origin(sitemap_url).partition("://")[2]:
        return "outside sitemap path"  # the same host: another directory or scheme
    return "foreign host"


def _origin(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0].split('?', 1)[0]}"


_LASTMOD = re.compile(
    r"(\d{4})(?:-(\d{2})(?:-(\d{2})"
    r"(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?\s*([Zz]|[+-]\d{2}:?\d{2})?)?)?)?"
)


def parse_lastmod(text: str) -> float | None:
    """A W3C Datetime (``2024``, ``2024-05``, ``2024-05-17``, ``2024-05-17T10:00Z``,
    ``...T10:00:00.5+02:00``) as seconds since the epoch; None if it is not one. A
    time without a zone is taken as UTC."""
    text = text.strip()
    if len(text) > 40:
        return None
    return _lastmod(text)


@functools.lru_cache(maxsize=4096)  # a sitemap's dates repeat: often one per day
def _lastmod(text: str) -> float | None:
    try:
        when = datetime.fromisoformat(text)  # the common full forms, in C
    except ValueError:
        pass
    else:
        if len(text) >= 10 and text[4] == "-" and text[7] == "-":
            if when.tzinfo is None:
                when = when.replace(tzinfo=UTC)
            return when.timestamp()
    match = _LASTMOD.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, zone = match.groups()
    try:
        when = datetime(
            int(year),
            int(month or 1),
            int(day or 1),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            tzinfo=UTC,
        )
    except ValueError:
        return None
    if zone and zone not in "Zz":
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        if offset >= timedelta(hours=24):
            return None
        when -= sign * offset
    return when.timestamp()


class _Collector:
    """Entries of one file, each checked against where the sitemap may speak for."""

    def __init__(self, src: SitemapInput) -> None:
        self.src = src
        self.urls: list[SitemapEntry] = []
        self.sitemaps: list[SitemapEntry] = []
        self.refused: dict[str, int] = {}
        self.kind = "none"
        self.listed = 0  # entries read, refused ones included: what the cap counts

    def refuse(self, reason: str) -> None:
        self.refused[reason] = self.refused.get(reason, 0) + 1

    def add(self, loc: str, lastmod: str | None, *, sitemap: bool) -> None:
        self.listed += 1
        if self.listed > MAX_URLS:
            raise SitemapError(TOO_MANY, f"{TOO_MANY}: the rest not read")
        src = self.src
        try:
            url = urls.normalize(loc.strip(), strip_tracking=src.strip_tracking)
        except UrlError as exc:
            self.refuse(exc.reason)
            return
        when = parse_lastmod(lastmod) if lastmod else None
        if sitemap:
            if url == src.url:
                self.refuse("self reference")
            elif _origin(url) not in (_origin(src.url), src.grant):
                self.refuse("foreign sitemap")
            else:
                self.sitemaps.append(SitemapEntry(url, when))
            return
        reason = location_reason(src.url, src.grant, url)
        if reason is not None:
            self.refuse(reason)
        else:
            self.urls.append(SitemapEntry(url, when))


def parse_sitemap(src: SitemapInput) -> ParsedSitemap:
    """Read one sitemap file (see the module docstring). Never raises for any body."""
    out = _Collector(src)
    decoded = Decoded(src.body)
    chunks = decoded.chunks()
    error: str | None = None
    problem: str | None = None
    first = b""
    for chunk in chunks:  # the first bytes that are not white space decide the format
        first += chunk
        if first.lstrip(b"\xef\xbb\xbf \t\r\n") or len(first) > CHUNK:
            break
    try:
        if first.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"<":
            xml = XmlReader(out)
            for chunk in itertools.chain((first,), chunks):
                xml.feed(chunk)
            if decoded.error is None:  # a stream cut short is not also "malformed"
                xml.feed(b"", True)
        elif first.strip():
            read_text(out, first, chunks)
        elif decoded.error is None:
            problem = error = "empty file"
    except SitemapError as stop:
        problem, error = stop.problem, str(stop)
    if error is None:
        problem, error = decoded.problem, decoded.error
    return ParsedSitemap(
        url=src.url,
        kind=out.kind,
        urls=tuple(out.urls),
        sitemaps=tuple(out.sitemaps),
        refused=tuple(sorted(out.refused.items())),
        error=error,
        problem=problem,
        digest=decoded.digest,
        size=decoded.size,
    )
