"""Reading a sitemap file's bytes: gzip inflated in bounded steps, XML through expat
with no document type allowed, or text lines; what ``parse/sitemap.py`` puts together.

Every entry goes to an ``EntrySink`` (the file's collector), which may stop the read
by raising ``SitemapError``; so does anything here that refuses the file or its rest.
"""

from __future__ import annotations

import pyexpat
import zlib
from collections.abc import Iterator
from typing import Protocol

import xxhash

MAX_BYTES = 50 * 1024 * 1024  # decoded bytes per file, sitemaps.org (52,428,800)
TOO_BIG = f"over {MAX_BYTES // (1024 * 1024)} MiB decoded"
NAMESPACES = frozenset(
    {
        "http://www.sitemaps.org/schemas/sitemap/0.9",
        "http://www.google.com/schemas/sitemap/0.9",
        "http://www.google.com/schemas/sitemap/0.84",
        "",
    }
)
CHUNK = 64 * 1024
MAX_TEXT = 8 * 1024  # characters kept of one loc or lastmod (URLs are capped at 2 KiB)
_MAX_NESTING = 32
GZIP_MAGIC = b"\x1f\x8b"


class EntrySink(Protocol):
    kind: str

    def refuse(self, reason: str) -> None: ...

    def add(self, loc: str, lastmod: str | None, *, sitemap: bool) -> None: ...


class SitemapError(Exception):
    """Ends a parse early: ``problem`` names the kind (a counter), ``str()`` says it all."""

    def __init__(self, problem: str, message: str | None = None) -> None:
        super().__init__(message or problem)
        self.problem = problem


class XmlReader:
    """expat handlers: the root, its ``url``/``sitemap`` items, their loc and lastmod."""

    def __init__(self, out: EntrySink) -> None:
        self.out = out
        self.depth = 0
        self.item_name = "\0"  # the root's items ("ns url" or "ns sitemap"), once known
        self.fields: dict[str, str] = {}  # the root's "ns loc" and "ns lastmod"
        self.in_item = False
        self.field: str | None = None  # "loc" or "lastmod" while inside one
        self.text: list[str] = []
        self.size = 0
        self.loc: str | None = None
        self.lastmod: str | None = None
        p = pyexpat.ParserCreate(namespace_separator=" ")
        p.SetParamEntityParsing(pyexpat.XML_PARAM_ENTITY_PARSING_NEVER)
        p.buffer_text = True
        p.StartDoctypeDeclHandler = self._doctype
        p.EntityDeclHandler = self._entity
        p.ExternalEntityRefHandler = self._external
        p.StartElementHandler = self._start
        p.EndElementHandler = self._end
        p.CharacterDataHandler = self._data
        self.parser = p

    def feed(self, chunk: bytes, final: bool = False) -> None:
        try:
            self.parser.Parse(chunk, final)
        except pyexpat.ExpatError as exc:
            where = f"line {exc.lineno}" if exc.lineno else "the start"
            message = f"malformed XML at {where}: {pyexpat.ErrorString(exc.code)}"
            raise SitemapError("malformed XML", message) from None

    def _doctype(self, name: str, *_rest: object) -> None:
        if name.lower() == "html":
            raise SitemapError("not a sitemap", "not a sitemap: an HTML document")
        raise SitemapError("DTD not allowed")

    def _entity(self, *_args: object) -> None:
        raise SitemapError("entity declarations not allowed")

    def _external(self, *_args: object) -> int:
        raise SitemapError("external entities not allowed")

    def _start(self, name: str, _attrs: object) -> None:
        self.depth += 1
        depth = self.depth
        if depth == 2:
            if name == self.item_name:
                self.in_item, self.loc, self.lastmod = True, None, None
        elif depth == 3:
            if self.in_item and name in self.fields:
                self.field, self.text, self.size = self.fields[name], [], 0
        elif depth == 1:
            self._root(name)
        elif depth > _MAX_NESTING:
            raise SitemapError("nested too deep", f"elements nested more than {_MAX_NESTING} deep")

    def _root(self, name: str) -> None:
        ns, _, local = name.rpartition(" ")
        if local not in ("urlset", "sitemapindex"):
            raise SitemapError("not a sitemap", f"not a sitemap: root element {local[:40]!r}")
        if ns not in NAMESPACES:
            raise SitemapError("wrong namespace", f"wrong namespace {ns[:80]!r}")
        prefix = f"{ns} " if ns else ""
        item = "url" if local == "urlset" else "sitemap"
        # expat names an element "namespace local", or just "local" outside any.
        self.item_name = prefix + item
        self.fields = {prefix + "loc": "loc", prefix + "lastmod": "lastmod"}
        self.out.kind = "urlset" if local == "urlset" else "index"

    def _data(self, data: str) -> None:
        if self.field is not None and self.size < MAX_TEXT:
            self.text.append(data)
            self.size += len(data)

    def _end(self, _name: str) -> None:
        depth = self.depth
        self.depth -= 1
        if depth == 3 and self.field is not None:
            value = "".join(self.text)[:MAX_TEXT]
            if self.field == "loc":
                self.loc = value
            else:
                self.lastmod = value
            self.field = None
        elif depth == 2 and self.in_item:
            self.in_item = False
            if self.loc is None or not self.loc.strip():
                self.out.refuse("no loc")
            else:
                self.out.add(self.loc, self.lastmod, sitemap=self.item_name.endswith("sitemap"))


class Decoded:
    """The decoded bytes of a body in chunks: gunzip'd when it is gzip, capped."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.error: str | None = None
        self.problem: str | None = None
        self.size = 0
        self._hash = xxhash.xxh3_64()

    @property
    def digest(self) -> str:
        return self._hash.hexdigest()

    def chunks(self) -> Iterator[bytes]:
        source = self._inflate() if self.body[:2] == GZIP_MAGIC else self._plain()
        for chunk in source:
            room = MAX_BYTES - self.size
            if len(chunk) > room:
                chunk = chunk[:room]
                self._fail(TOO_BIG, f"{TOO_BIG}: the rest not read")
            self.size += len(chunk)
            self._hash.update(chunk)
            if chunk:
                yield chunk
            if self.error is not None:
                return

    def _plain(self) -> Iterator[bytes]:
        body = self.body
        for start in range(0, len(body), CHUNK):
            yield body[start : start + CHUNK]

    def _inflate(self) -> Iterator[bytes]:
        data = memoryview(self.body)
        inflater = zlib.decompressobj(wbits=31)
        pos = 0
        try:
            while True:
                if inflater.unconsumed_tail:
                    out = inflater.decompress(inflater.unconsumed_tail, CHUNK)
                elif pos < len(data):
                    out = inflater.decompress(data[pos : pos + CHUNK], CHUNK)
                    pos += CHUNK
                else:
                    break
                if out:
                    yield out
                if inflater.eof:
                    rest = inflater.unused_data + bytes(data[pos:])
                    if rest[:2] != GZIP_MAGIC:  # members after the first: one stream
                        break
                    data, pos = memoryview(rest), 0
                    inflater = zlib.decompressobj(wbits=31)
            if not inflater.eof and self.error is None:
                self._fail("gzip data cut short", "gzip data cut short: the rest not read")
        except zlib.error as exc:
            self._fail("bad gzip data", f"bad gzip data: {exc}")

    def _fail(self, problem: str, message: str) -> None:
        self.problem, self.error = problem, message


def read_text(out: EntrySink, first: bytes, rest: Iterator[bytes]) -> None:
    """One URL a line (UTF-8); a line too long to be a URL is refused."""
    out.kind = "text"
    pending = first.lstrip(b"\xef\xbb\xbf")
    skipping = False  # inside an over-long line: drop it up to its end
    chunks = iter(rest)
    while True:
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if skipping:
                skipping = False
                continue
            _text_line(out, line)
        if len(pending) > MAX_TEXT:
            if not skipping:
                out.refuse("line too long")
            skipping, pending = True, b""
        chunk = next(chunks, None)
        if chunk is None:
            break
        pending += chunk
    if not skipping:
        _text_line(out, pending)


def _text_line(out: EntrySink, line: bytes) -> None:
    text = line.decode("utf-8", "replace").strip()
    if text:
        out.add(text, None, sitemap=False)
