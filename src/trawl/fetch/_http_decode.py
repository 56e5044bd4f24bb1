"""Content decoding, Content-Type reading and HTML sniffing for the HTTP client.

A :class:`ContentDecoder` is fed the raw body chunk by chunk and never produces more
than the limit it is given, so a gzip bomb (a few KB inflating to GBs) costs about the
cap in memory and stops there. Policies for what servers really send:

- ``gzip`` / ``x-gzip``: gzip; concatenated members are all decoded. A body that starts
  with a zlib header instead is decoded as zlib. A body that starts with neither is
  mislabelled: it is taken as identity (``identity`` set, ``note`` says so), because a
  crawler should still see the page.
- ``deflate``: zlib-wrapped (RFC 9110) when the body has a zlib header, raw deflate
  otherwise (many servers send that).
- ``br``: brotli, when the optional ``brotli`` package (1.2+, which can bound its
  output) is importable; otherwise it is an unknown coding.
- ``deflate`` or ``br`` that fails in the first chunk on a body that starts like text
  (no control characters in its first 64 bytes) is mislabelled too: identity, noted.
- A stream that turns corrupt, or ends early, after a valid start keeps what decoded
  so far, and ``broken`` is set (the response says ``truncated="decode"``).
- Unknown codings and stacked codings (``gzip, br``) are not decoded: see
  :func:`make_decoder`.
"""

from __future__ import annotations

import importlib
import re
import zlib
from typing import Any, Final

__all__ = [
    "ContentDecoder",
    "brotli_available",
    "decode_content",
    "make_decoder",
    "parse_content_type",
    "sniff_html",
]

_GZIP_MAGIC: Final = b"\x1f\x8b"
_UTF8_BOM: Final = b"\xef\xbb\xbf"

try:  # optional: decoded when present and able to bound its output (brotli >= 1.2)
    _brotli: Any = importlib.import_module("brotli")
    if not hasattr(_brotli.Decompressor(), "can_accept_more_data"):
        _brotli = None
except ImportError:  # pragma: no cover - depends on the environment
    _brotli = None

_DECODE_ERRORS: tuple[type[Exception], ...] = (
    (zlib.error, _brotli.error) if _brotli is not None else (zlib.error,)
)


def brotli_available() -> bool:
    """True if ``br`` bodies can be decoded here."""
    return _brotli is not None


def _is_zlib_header(head: bytes) -> bool:
    cmf, flg = head[0], head[1]
    return cmf & 0x0F == 8 and cmf >> 4 <= 7 and ((cmf << 8) | flg) % 31 == 0


_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def _textual(head: bytes) -> bool:
    """Starts like text, not like compressed data (which has control bytes everywhere)."""
    if head.startswith(_UTF8_BOM):
        head = head[3:]
    return _CONTROL.search(head, 0, 64) is None


class ContentDecoder:
    """Turns raw body chunks into decoded bytes, at most ``limit`` bytes in all.

    ``feed(chunk)`` returns decoded bytes; ``finish()`` returns what is left once the
    raw body has ended. ``overflow`` becomes True when the decoded body would exceed
    the limit (the caller stops reading), ``broken`` when the coding could not be
    decoded, ``identity`` when the body turned out not to be encoded at all (the
    caller then uses the raw bytes as they are); ``note`` explains the last two.
    """

    __slots__ = (
        "_coding",
        "_engine",
        "_fed",
        "_head",
        "_remaining",
        "broken",
        "identity",
        "note",
        "overflow",
    )

    def __init__(self, coding: str, limit: int) -> None:
        self._coding = coding
        self._remaining = limit
        self._head = b""  # bytes held back until the format can be told
        self._engine: Any = None
        self._fed = 0  # chunks given to the engine
        self.overflow = False
        self.broken = False
        self.identity = False
        self.note: str | None = None

    @property
    def done(self) -> bool:
        """Nothing more will come out (limit reached, broken, or identity)."""
        return self.overflow or self.broken or self.identity

    def feed(self, data: bytes) -> bytes:
        if self.overflow or self.broken or self.identity:
            return b""
        if self._engine is None:
            if self._head:
                data = self._head + data
            if len(data) < 2:
                self._head = data
                return b""
            self._head = b""
            if not self._start(data):
                return b""
        return self._run(data)

    def finish(self) -> bytes:
        if self.done:
            return b""
        out = b""
        if self._engine is None:
            if not self._head:
                return b""  # an empty body is a valid empty encoding
            head, self._head = self._head, b""
            if len(head) < 2 or not self._start(head):
                self._mislabelled(head)
                return b""
            out = self._run(head)
        if not self.done and not self._ended():
            self.broken = True
            self.note = f"{self._coding} stream ends early"
        return out

    # -- internals ------------------------------------------------------------------

    def _start(self, head: bytes) -> bool:
        coding = self._coding
        if coding == "br":
            self._engine = _brotli.Decompressor()
        elif _is_zlib_header(head):
            self._engine = zlib.decompressobj(zlib.MAX_WBITS)
            if coding != "deflate":
                self.note = f"labelled {coding}, sent as zlib"
        elif coding == "deflate":
            self._engine = zlib.decompressobj(-zlib.MAX_WBITS)
        elif head.startswith(_GZIP_MAGIC):
            self._engine = zlib.decompressobj(16 + zlib.MAX_WBITS)
        else:
            self._mislabelled(head)
            return False
        return True

    def _mislabelled(self, head: bytes) -> None:
        self.identity = True
        self.note = f"labelled {self._coding} but not encoded: taken as identity"

    def _failed(self, data: bytes, exc: Exception) -> None:
        if self._fed == 1 and self._coding in ("deflate", "br") and _textual(data):
            self._mislabelled(data)
        else:
            self.broken = True
            self.note = f"{self._coding} stream is corrupt: {exc}"

    def _take(self, out: bytes) -> bytes:
        """Keep at most the remaining budget; flag overflow if there was more."""
        if len(out) > self._remaining:
            out = out[: self._remaining]
            self.overflow = True
        self._remaining -= len(out)
        return out

    def _run(self, data: bytes) -> bytes:
        self._fed += 1
        first = data
        parts: list[bytes] = []
        engine = self._engine
        try:
            if self._coding == "br":
                while True:
                    out = engine.process(data, output_buffer_limit=self._remaining + 1)
                    if out:
                        parts.append(self._take(out))
                        if self.overflow:
                            break
                    data = b""
                    if engine.can_accept_more_data():
                        break
            else:
                while True:
                    # One byte more than the budget: getting it means "there is more".
                    out = engine.decompress(data, self._remaining + 1)
                    if out:
                        parts.append(self._take(out))
                        if self.overflow:
                            break
                    data = engine.unconsumed_tail
                    if engine.eof:
                        rest = engine.unused_data
                        if rest[:2] != _GZIP_MAGIC or self._coding == "deflate":
                            break  # trailing bytes after the stream are ignored
                        engine = self._engine = zlib.decompressobj(16 + zlib.MAX_WBITS)
                        data = rest
                    elif not data:
                        break
        except _DECODE_ERRORS as exc:
            self._failed(first, exc)
            if self.identity:
                return b""
        if len(parts) == 1:
            return parts[0]
        return b"".join(parts)

    def _ended(self) -> bool:
        if self._coding == "br":
            return bool(self._engine.is_finished())
        return bool(self._engine.eof)


def make_decoder(content_encoding: str | None, limit: int) -> ContentDecoder | str | None:
    """A decoder for a Content-Encoding header value, at most ``limit`` bytes out.

    None means identity (no header, or only ``identity``); a string is a note saying
    why the coding is not decoded (unknown, or stacked codings): the body is then the
    raw bytes and the response says ``truncated="decode"``.
    """
    if not content_encoding:
        return None
    codings = [c for c in (p.strip().lower() for p in content_encoding.split(",")) if c]
    codings = [c for c in codings if c != "identity"]
    if not codings:
        return None
    if len(codings) > 1:
        return f"stacked content codings not decoded: {content_encoding!r}"
    coding = codings[0]
    if coding in ("gzip", "x-gzip", "deflate") or (coding == "br" and _brotli is not None):
        return ContentDecoder(coding, limit)
    return f"content coding not decoded: {coding!r}"


def decode_content(
    raw: bytes, content_encoding: str | None, limit: int
) -> tuple[bytes, str | None]:
    """Decode a whole body at once, as the client decodes a live one: (body, truncated).

    For bodies read back from storage (e.g. a WARC record after a crash). ``truncated``
    is None, ``"length"`` (the decoded body would pass ``limit``) or ``"decode"`` (an
    unknown or broken coding; the body is then the raw bytes or what decoded).
    """
    decoder = make_decoder(content_encoding, limit)
    if isinstance(decoder, str):
        return raw[:limit], "decode"
    if decoder is not None:
        body = decoder.feed(raw)
        if not decoder.done:
            body += decoder.finish()
        if decoder.overflow:
            return body, "length"
        if decoder.broken:
            return body, "decode"
        if not decoder.identity:
            return body, None
    return raw[:limit], "length" if len(raw) > limit else None


def parse_content_type(value: str | None) -> tuple[str | None, str | None]:
    """(media type lower-cased without parameters, charset parameter or None).

    A value without a ``type/subtype`` gives (None, None), as if it were missing.
    """
    if not value:
        return None, None
    media, _, params = value.partition(";")
    media = media.strip().lower()
    if "/" not in media or media.startswith("/") or media.endswith("/") or " " in media:
        return None, None
    charset: str | None = None
    if params:
        for param in params.split(";"):
            name, sep, val = param.partition("=")
            if sep and name.strip().lower() == "charset":
                val = val.strip().strip('"').strip("'").strip()
                charset = val.lower() or None
                break
    return media, charset


# WHATWG MIME Sniffing, "identifying a resource with an unknown MIME type", the HTML
# patterns (each followed by a tag-terminating byte), plus a few tags that open real
# pages in the wild. Matched case-insensitively after leading whitespace and a BOM.
_HTML_TAGS: Final = (
    b"<!doctype html",
    b"<html",
    b"<head",
    b"<script",
    b"<iframe",
    b"<h1",
    b"<div",
    b"<font",
    b"<table",
    b"<a",
    b"<style",
    b"<title",
    b"<b",
    b"<body",
    b"<br",
    b"<p",
    b"<meta",
    b"<link",
)
_TAG_END: Final = frozenset(b" >\t\n\r\f/")
_LEADING_WS: Final = b"\t\n\x0c\r "


def sniff_html(prefix: bytes) -> bool:
    """True if a body without a Content-Type looks like HTML (WHATWG-style sniffing).

    Skips a UTF-8 BOM and leading whitespace, then looks for ``<!doctype html``,
    ``<html``, ``<head``, ``<body``, ``<script``, ``<title``, ``<p``, ``<div``, ``<!--``
    and the other WHATWG HTML patterns, case-insensitively.
    """
    head = prefix[:1024]
    if head.startswith(_UTF8_BOM):
        head = head[3:]
    head = head.lstrip(_LEADING_WS)[:32].lower()
    if head.startswith(b"<!--"):
        return True
    for tag in _HTML_TAGS:
        if head.startswith(tag):
            rest = head[len(tag) : len(tag) + 1]
            if not rest or rest[0] in _TAG_END:
                return True
    return False
