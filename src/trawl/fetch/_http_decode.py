"""Content decoding, Content-Type reading and HTML sniffing for the HTTP client.

A :class:`ContentDecoder` is fed the raw body chunk by chunk and never produces more
than the limit it is given, so a bomb (a few KB inflating to GBs, in any coding)
costs about the cap in memory and stops there: zlib and brotli are asked for at
most the budget plus one byte (brotli through brotlicffi 1.2+, which can bound its
output; not the ``brotli`` module: with it installed, warcio 1.8, ``warcio check``
too, crashes on the WARC record of any br response), zstd writes into a sink that stops the decoder
once the budget is spent (and its window is held to 8 MiB, RFC 9659). The client
offers ``gzip, deflate, br, zstd`` and decodes what it offers. Policies for what
servers really send:

- ``gzip`` / ``x-gzip``: gzip; concatenated members are all decoded. A body that starts
  with a zlib header instead is decoded as zlib.
- ``deflate``: zlib-wrapped (RFC 9110) when the body has a zlib header, raw deflate
  otherwise (many servers send that).
- ``br``: brotli. ``zstd``: Zstandard (RFC 8878), every frame (skippable ones too).
- Mislabelled: a body that is not in its coding (no gzip or zstd magic, or deflate or
  br failing at once) but looks like text (no control bytes in its first KiB) is
  taken as identity (``identity`` set, ``note`` says so): a crawler should still see
  the page. Bytes that do not look like text never take that path.
- A stream that turns corrupt, or ends early, after a valid start keeps what decoded
  so far, and ``broken`` is set (the response says ``truncated="decode"``).
- Refused (``refused`` set, ``note`` is the reason, the body is empty): a coding not
  offered or unknown (``compress``, ``bzip2``, ...), stacked codings (``gzip, br``),
  and a stream that yields nothing (not that coding and not text, corrupt at once,
  a zstd window past 8 MiB, cut before any content). What was never decoded is
  never handed on as if it were the page.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable
from typing import IO, Any, Final, cast

import brotlicffi as brotli
import zstandard

from trawl.errors import ConfigError
from trawl.fetch._http_zstd import ZSTD_MAX_WINDOW, FrameEnds, Sink, SinkFullError, is_zstd_start

__all__ = [
    "ACCEPT_ENCODING",
    "CODINGS",
    "ContentDecoder",
    "decode_content",
    "make_decoder",
    "offered_codings",
    "parse_content_type",
    "sniff_html",
]

#: Every content coding the client decodes, and so what it offers by default.
CODINGS: Final = frozenset({"gzip", "deflate", "br", "zstd"})
ACCEPT_ENCODING: Final = "gzip, deflate, br, zstd"
_ALIASES: Final = {"x-gzip": "gzip"}

_GZIP_MAGIC: Final = b"\x1f\x8b"
_UTF8_BOM: Final = b"\xef\xbb\xbf"
_TEXT_SAMPLE: Final = 1024
_LABEL_CHARS: Final = 40

_DECODE_ERRORS: tuple[type[Exception], ...] = (zlib.error, brotli.error, zstandard.ZstdError)


def offered_codings(accept_encoding: str) -> frozenset[str]:
    """The codings an Accept-Encoding value offers (q=0 is a refusal; ``*`` is all).

    Raises ConfigError for a coding the client could not decode.
    """
    out: set[str] = set()
    for item in accept_encoding.split(","):
        name, _, params = item.partition(";")
        name = name.strip().lower()
        q = params.replace(" ", "").lower()
        if not name or name == "identity" or re.fullmatch(r"q=0(\.0*)?", q):
            continue
        if name == "*":
            out |= CODINGS
            continue
        name = _ALIASES.get(name, name)
        if name not in CODINGS:
            raise ConfigError(f"cannot decode content coding {name!r} (offered in Accept-Encoding)")
        out.add(name)
    return frozenset(out)


def _is_zlib_header(head: bytes) -> bool:
    cmf, flg = head[0], head[1]
    return cmf & 0x0F == 8 and cmf >> 4 <= 7 and ((cmf << 8) | flg) % 31 == 0


_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def _textual(head: bytes) -> bool:
    """Starts like text, not like compressed or binary data (which has control bytes
    everywhere: 1,024 random bytes without one happen about once in 10^48)."""
    if head.startswith(_UTF8_BOM):
        head = head[3:]
    return bool(head) and _CONTROL.search(head, 0, _TEXT_SAMPLE) is None


def _describe(exc: Exception) -> str:
    """An engine's error message as text (brotlicffi gives bytes)."""
    arg = exc.args[0] if exc.args else ""
    text = arg.decode("latin-1") if isinstance(arg, bytes) else str(exc)
    text = text.replace("Decompression error: _ERROR_", "")
    return _label(text, 100) or type(exc).__name__


def _label(value: str, size: int = _LABEL_CHARS) -> str:
    """A header value fit for a reason: printable ASCII, at most ``size`` characters."""
    return "".join(c if " " <= c <= "~" else "?" for c in value.strip()[:size])


class ContentDecoder:
    """Turns raw body chunks into decoded bytes, at most ``limit`` bytes in all.

    ``feed(chunk)`` returns decoded bytes; ``finish()`` returns what is left once the
    raw body has ended. ``overflow`` becomes True when the decoded body would exceed
    the limit (the caller stops reading), ``broken`` when the stream broke after a
    valid start, ``identity`` when the body turned out not to be encoded at all (the
    caller then uses the raw bytes as they are), ``refused`` when nothing usable can
    come of it (the caller keeps no body); ``note`` explains the last three.
    """

    __slots__ = (
        "_coding",
        "_engine",
        "_fed",
        "_frames",
        "_head",
        "_kind",
        "_produced",
        "_remaining",
        "_sink",
        "broken",
        "identity",
        "note",
        "overflow",
        "refused",
    )

    def __init__(self, coding: str, limit: int) -> None:
        self._coding = coding  # as labelled
        self._kind = _ALIASES.get(coding, coding)  # gzip, deflate, br or zstd
        self._remaining = limit
        self._head = b""  # bytes held back until the format can be told
        self._engine: Any = None
        self._sink = Sink()
        self._frames: FrameEnds | None = None
        self._fed = 0  # chunks given to the engine
        self._produced = 0  # decoded bytes handed out
        self.overflow = False
        self.broken = False
        self.identity = False
        self.refused = False
        self.note: str | None = None

    @property
    def done(self) -> bool:
        """Nothing more will come out (limit reached, broken, identity or refused)."""
        return self.overflow or self.broken or self.identity or self.refused

    def feed(self, data: bytes) -> bytes:
        if self.done:
            return b""
        if self._engine is None:
            if self._head:
                data = self._head + data
            if len(data) < 4:  # enough to tell every format apart
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
            if not self._start(head):
                return b""
            out = self._run(head)
        if not self.done and not self._ended():
            if self._produced:
                self.broken = True
                self.note = f"{self._coding} stream ends early"
            else:
                self._refuse("stream ends before any content")
        return out

    # -- internals ------------------------------------------------------------------

    def _start(self, head: bytes) -> bool:
        kind = self._kind
        if kind == "br":
            self._engine = brotli.Decompressor()
        elif kind == "zstd":
            if not is_zstd_start(head):
                return self._not_encoded(head)
            dctx = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW)
            # The sink only needs write(): it is the file the decoder writes to.
            self._engine = dctx.stream_writer(cast(IO[bytes], self._sink), closefd=False)
            self._frames = FrameEnds()
        elif len(head) >= 2 and _is_zlib_header(head):
            self._engine = zlib.decompressobj(zlib.MAX_WBITS)
            if kind != "deflate":
                self.note = f"labelled {self._coding}, sent as zlib"
        elif kind == "deflate":
            self._engine = zlib.decompressobj(-zlib.MAX_WBITS)
        elif head.startswith(_GZIP_MAGIC):
            self._engine = zlib.decompressobj(16 + zlib.MAX_WBITS)
        else:
            return self._not_encoded(head)
        return True

    def _not_encoded(self, head: bytes) -> bool:
        """Not in its coding: identity if it looks like text, else refused."""
        if _textual(head):
            self.identity = True
            self.note = f"labelled {self._coding} but not encoded: taken as identity"
        else:
            self._refuse(f"not {self._kind} data")
        return False

    def _refuse(self, why: str) -> None:
        self.refused = True
        self.note = f"content-encoding {_label(self._coding)}: {why}"[:300]

    def _failed(self, data: bytes, exc: Exception) -> None:
        if self._produced:
            self.broken = True
            self.note = f"{self._coding} stream is corrupt: {_describe(exc)}"
        elif self._fed == 1 and self._kind in ("deflate", "br") and _textual(data):
            self.identity = True  # no magic to tell: a failure at once on text
            self.note = f"labelled {self._coding} but not encoded: taken as identity"
        else:
            self._refuse(f"corrupt stream ({_describe(exc)})")

    def _take(self, out: bytes) -> bytes:
        """Keep at most the remaining budget; flag overflow if there was more."""
        if len(out) > self._remaining:
            out = out[: self._remaining]
            self.overflow = True
        self._remaining -= len(out)
        self._produced += len(out)
        return out

    def _run(self, data: bytes) -> bytes:
        self._fed += 1
        first = data
        parts: list[bytes] = []
        try:
            if self._kind == "br":
                self._run_br(data, parts)
            elif self._kind == "zstd":
                self._run_zstd(data, parts)
            else:
                self._run_zlib(data, parts)
        except _DECODE_ERRORS as exc:
            self._failed(first, exc)
            if self.identity or self.refused:
                return b""
        if len(parts) == 1:
            return parts[0]
        return b"".join(parts)

    def _run_br(self, data: bytes, parts: list[bytes]) -> None:
        engine = self._engine
        while True:
            # One byte more than the budget: getting it means "there is more".
            out = engine.process(data, output_buffer_limit=self._remaining + 1)
            if out:
                parts.append(self._take(out))
                if self.overflow:
                    return
            data = b""
            if engine.can_accept_more_data():
                return

    def _run_zstd(self, data: bytes, parts: list[bytes]) -> None:
        sink = self._sink
        sink.room = self._remaining + 1
        try:
            self._engine.write(data)
        except SinkFullError:
            pass
        finally:
            if sink.parts:
                parts.append(self._take(b"".join(sink.parts)))
                sink.parts.clear()
        if not self.overflow:
            assert self._frames is not None
            self._frames.feed(data)

    def _run_zlib(self, data: bytes, parts: list[bytes]) -> None:
        engine = self._engine
        while True:
            out = engine.decompress(data, self._remaining + 1)
            if out:
                parts.append(self._take(out))
                if self.overflow:
                    return
            data = engine.unconsumed_tail
            if engine.eof:
                rest = engine.unused_data
                if rest[:2] != _GZIP_MAGIC or self._kind == "deflate":
                    return  # trailing bytes after the stream are ignored
                engine = self._engine = zlib.decompressobj(16 + zlib.MAX_WBITS)
                data = rest
            elif not data:
                return

    def _ended(self) -> bool:
        if self._kind == "br":
            return bool(self._engine.is_finished())
        if self._frames is not None:
            return self._frames.complete
        return bool(self._engine.eof)


def make_decoder(
    content_encoding: str | None, limit: int, *, offered: Iterable[str] = CODINGS
) -> ContentDecoder | str | None:
    """A decoder for a Content-Encoding header value, at most ``limit`` bytes out.

    None means identity (no header, or only ``identity``); a string is the reason the
    body is refused (a coding not offered or unknown, or stacked codings).
    """
    if not content_encoding:
        return None
    codings = [c for c in (p.strip().lower() for p in content_encoding.split(",")) if c]
    codings = [c for c in codings if c != "identity"]
    if not codings:
        return None
    label = _label(content_encoding)
    if len(codings) > 1:
        return f"content-encoding {label} not supported (stacked codings)"
    coding = codings[0]
    kind = _ALIASES.get(coding, coding)
    if kind not in CODINGS:
        return f"content-encoding {label} not supported"
    if kind not in offered:
        return f"content-encoding {label} not offered"
    return ContentDecoder(coding, limit)


def decode_content(
    raw: bytes, content_encoding: str | None, limit: int
) -> tuple[bytes, str | None]:
    """Decode a whole body at once, as the client decodes a live one: (body, truncated).

    For bodies read back from storage (e.g. a WARC record after a crash). ``truncated``
    is None, ``"length"`` (the decoded body would pass ``limit``) or ``"decode"`` (a
    refused coding, the body then empty, or a broken one: what decoded).
    """
    decoder = make_decoder(content_encoding, limit)
    if isinstance(decoder, str):
        return b"", "decode"
    if decoder is not None:
        body = decoder.feed(raw)
        if not decoder.done:
            body += decoder.finish()
        if decoder.refused:
            return b"", "decode"
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
