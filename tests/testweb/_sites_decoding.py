"""The test-web host whose bodies must be decoded before they are text, or never be.

Content codings a crawler offers (br, zstd) served properly; codings it cannot
decode, stacked, or labels over bytes that are not in that coding; bombs in br and
zstd; charsets that lie about the bytes; and binary bytes sent as text/html. Each
resource that is no document says so in ``refused``, with the reason the oracle
expects the crawler to record.
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import html
import random
import struct
import zlib
from collections.abc import Callable
from typing import Any

import brotlicffi as brotli
import zstandard
from aiohttp import web

from tests.testweb._model import HTML, Context, Page, Resource, Site, article_html, document

_MIB = 1024 * 1024
_BOMB_PREFIX = b"<!DOCTYPE html><html><body><p>"


@functools.lru_cache(maxsize=4)
def br_bomb(inflated_bytes: int) -> bytes:
    """A brotli stream of an HTML prefix and ``inflated_bytes`` zeros (whole MiB): a
    few hundred bytes."""
    c = brotli.Compressor(quality=5)
    return _bomb(c.process, c.finish, inflated_bytes)


@functools.lru_cache(maxsize=4)
def zstd_bomb(inflated_bytes: int) -> bytes:
    """A zstd frame (no content size) of an HTML prefix and ``inflated_bytes`` zeros:
    about 32 KB per GiB."""
    c = zstandard.ZstdCompressor(level=1).compressobj()
    return _bomb(c.compress, c.flush, inflated_bytes)


def _bomb(feed: Callable[[bytes], Any], end: Callable[[], Any], inflated_bytes: int) -> bytes:
    zeros = bytes(_MIB)
    parts: list[bytes] = [feed(_BOMB_PREFIX)]
    parts += [feed(zeros) for _ in range(max(1, -(-inflated_bytes // _MIB)))]
    tail: bytes = end()
    return b"".join(parts) + tail


def _noise(name: str, size: int = 8192) -> bytes:
    return random.Random(name).randbytes(size)


def _png(size: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    ihdr = struct.pack(">IIBBBBB", 64, 64, 8, 2, 0, 0, 0)
    pixels = zlib.compress(_noise("png", size))
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def _zip(member: bytes) -> bytes:
    """A zip archive's first entry (local header, name, deflated data)."""
    data = zlib.compress(member)[2:-4]
    name = b"page.bin"
    fields = (b"PK\x03\x04", 20, 0, 8, 0, 0, zlib.crc32(member), len(data), len(member))
    return struct.pack("<4sHHHHHIIIHH", *fields, len(name), 0) + name + data


def decoding(ctx: Context) -> Site:
    site = Site("encodings.test", ctx)
    r = site.routes

    def prose(path: str, title: str, links: tuple[tuple[str, str], ...] = ()) -> Resource:
        """A document of its own prose at ``path`` (not served: the caller encodes it)."""
        rng = random.Random(f"{site.host}{path}")
        article = article_html(ctx.text, rng, paragraphs=3)
        page = Page(site.url(path))
        nav = page.nav(links) if links else ""
        body = document(title, f"<h1>{html.escape(title)}</h1>\n{article}\n{nav}")
        return Resource(200, HTML, body, links=tuple(page.links))

    def coded(path: str, coding: str, body: bytes, *, refused: str | None = None) -> None:
        r[path] = Resource(
            200, HTML, body, headers=(("Content-Encoding", coding),), refused=refused
        )

    # Codings the crawler offers: decoded, stored, their links followed.
    for coding, encode in (("br", brotli.compress), ("zstd", zstandard.compress)):
        target = f"/via/{coding}"
        page = prose(f"/coding/{coding}", f"Sent as {coding}", ((target, "onwards"),))
        r[f"/coding/{coding}"] = Resource(
            200,
            HTML,
            encode(page.body),
            headers=(("Content-Encoding", coding),),
            links=page.links,
        )
        site.text_page(target, f"Reached through a {coding} page")
    # Codings it did not offer or cannot decode: refused at the fetch, never parsed.
    coded(
        "/coding/unknown-binary",
        "bzip2",
        b"BZh91AY&SY" + _noise("bzip2"),
        refused="content-encoding bzip2 not supported",
    )
    coded(
        "/coding/compress",
        "compress",
        b"\x1f\x9d\x90" + _noise("compress"),
        refused="content-encoding compress not supported",
    )
    text = prose("/coding/stacked", "Twice compressed").body
    coded(
        "/coding/stacked",
        "gzip, br",
        brotli.compress(gzip.compress(text)),
        refused="content-encoding gzip, br not supported",
    )
    coded(
        "/coding/br-noise",
        "br",
        _noise("br-noise0", 4096),  # brotli fails on it at once
        refused="content-encoding br: corrupt stream",
    )
    coded(
        "/coding/gzip-noise",
        "gzip",
        _noise("gzip-noise"),  # not gzip, and not text: never taken as identity
        refused="content-encoding gzip: not gzip data",
    )
    # Labelled br, random bytes that brotli reads as stored data: they decode, to noise.
    coded("/coding/br-stored-noise", "br", _noise("br-noise3", 4096), refused="binary content")
    # Bombs: capped where the gzip bomb is, and what the cap kept is zeros, not text.
    for coding, make in (("br", br_bomb), ("zstd", zstd_bomb)):
        r[f"/coding/{coding}-bomb"] = Resource(
            200,
            HTML,
            serve=_bomb_server(ctx, coding, make),
            oversized=True,
            refused="binary content",
        )
    _charsets(site, prose)
    _binary(site)
    site.text_page("/", "Encodings", [(p, p) for p in r if not p.startswith("/via/")])
    return site


def _bomb_server(
    ctx: Context, coding: str, make: Callable[[int], bytes]
) -> Callable[[web.BaseRequest], Any]:
    async def serve(request: web.BaseRequest) -> web.StreamResponse:
        data = await asyncio.to_thread(make, ctx.options.bomb_bytes)
        headers = {"Content-Type": HTML, "Content-Encoding": coding}
        response = web.StreamResponse(headers=headers)
        response.content_length = len(data)
        await response.prepare(request)
        for start in range(0, len(data), 64 * 1024):
            await response.write(data[start : start + 64 * 1024])
        await response.write_eof()
        return response

    return serve


def _charsets(site: Site, prose: Callable[..., Resource]) -> None:
    """Declarations that lie about the bytes, and bytes in no declared encoding."""
    r = site.routes
    for path, ctype in (
        ("/charset/utf16-header-ascii-body", "text/html; charset=utf-16"),
        ("/charset/utf32-header-ascii-body", "text/html; charset=utf-32"),
    ):
        page = prose(path, "An English page under a wrong charset")
        page.body.decode("ascii")  # the lie: ASCII bytes, nothing like UTF-16
        r[path] = Resource(200, ctype, page.body, links=page.links)
    rng = random.Random("utf16")
    article = article_html(site.ctx.text, rng, paragraphs=3)
    utf16 = (
        "<!DOCTYPE html>\n<html lang=en><head><title>UTF-16, no mark</title></head>"
        f"<body><h1>UTF-16 without a byte-order mark</h1>\n{article}</body></html>\n"
    )
    r["/charset/utf16-undeclared"] = Resource(200, "text/html", utf16.encode("utf-16-le"))
    damaged = prose("/charset/few-bad-bytes", "A few bad bytes").body
    cut = len(damaged) // 2
    damaged = damaged[:cut] + b"\xff\xfe\xc3(" + damaged[cut:]
    r["/charset/few-bad-bytes"] = Resource(200, HTML, damaged)


def _binary(site: Site) -> None:
    """Bytes that are no text, sent as text/html."""
    r = site.routes
    bodies = {
        "/binary/random": _noise("random", 64 * 1024),
        "/binary/nuls": bytes(32 * 1024),
        "/binary/png": _png(16 * 1024),
        "/binary/zip": _zip(_noise("zip-member", 16 * 1024)),
        "/binary/random-utf8-label": _noise("utf8-label", 16 * 1024),
    }
    for path, body in bodies.items():
        ctype = "text/html; charset=utf-8" if path.endswith("utf8-label") else "text/html"
        r[path] = Resource(200, ctype, body, refused="binary content")
