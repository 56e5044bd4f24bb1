"""Test-web hosts that misbehave: HTTP errors, broken and slow responses, odd bodies.

Broken answers are written straight to the transport, which is then closed (FIN) or
reset (RST, via SO_LINGER 0). Every wait is an ``asyncio.sleep`` or ``Event.wait``,
so a client leaving or the server stopping cancels it at once.
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import random
import socket
import struct
import zlib
from dataclasses import replace

from aiohttp import web

from tests.testweb._model import HTML, Context, Link, Resource, Site, document
from trawl.testing.vhost import BrokenResponse

_MIB = 1024 * 1024


def _raw(data: bytes, *, reset: bool = False) -> Resource:
    """A resource answered by writing ``data`` and closing (or resetting) the socket."""

    async def serve(request: web.BaseRequest) -> web.StreamResponse:
        transport = request.transport
        if transport is None:
            return BrokenResponse()
        if data:
            transport.write(data)
        if reset:
            # Let the client read what was sent before the reset discards it.
            await asyncio.sleep(0.05)
            sock = transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            transport.abort()
        else:
            transport.close()
        return BrokenResponse()

    return Resource(None, serve=serve)


def _counted(ok: Resource, failures: int, status: int, headers: dict[str, str]) -> Resource:
    """A ``status`` error for the first ``failures`` requests, then ``ok``."""
    seen = [0]
    page = document("Error", f"<p>Error {status}, try again.</p>")

    async def serve(request: web.BaseRequest) -> web.StreamResponse:
        seen[0] += 1
        if seen[0] <= failures:
            return web.Response(status=status, body=page, headers={"Content-Type": HTML, **headers})
        return ok.response()

    return replace(ok, serve=serve, note=f"{status} for the first {failures} requests")


def errors(ctx: Context) -> Site:
    site = Site("errors.test", ctx)
    o = ctx.options
    r = site.routes
    page = document("Error", "<p>Something went wrong.</p>")
    r["/404"] = Resource(404, HTML, page)
    r["/410"] = Resource(410, HTML, page)
    r["/500"] = Resource(500, HTML, page)
    recovered = site.text_page("/recovered", "Recovered", [("/", "Home")])
    r["/flaky"] = _counted(recovered, o.flaky_failures, 500, {})
    r["/unavailable"] = _counted(
        recovered, o.unavailable_failures, 503, {"Retry-After": str(o.retry_after)}
    )
    r["/ratelimited"] = _counted(
        recovered, o.ratelimit_failures, 429, {"Retry-After": str(o.ratelimit_retry_after)}
    )
    body = b"<html><body>" + b"x" * 4096
    r["/close-before-headers"] = _raw(b"")
    r["/reset-mid-body"] = _raw(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n" + body,
        reset=True,
    )
    r["/short-body"] = _raw(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n"
        + body[:1000]
    )
    r["/bad-status-line"] = _raw(b"HTTP/1.1 TWO-HUNDRED OK\r\nContent-Length: 5\r\n\r\nhello")
    r["/garbage-headers"] = _raw(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nthis line has no colon\r\n"
        b"\x00\x01\x02: binary name\r\n: empty name\r\nX-Ok: fine\r\n"
        b"Content-Length: 18\r\nConnection: close\r\n\r\n<p>garbage hdr</p>"
    )
    filler = b"".join(b"X-Filler-%04d: %s\r\n" % (n, b"f" * 80) for n in range(1100))
    r["/huge-headers"] = replace(
        _raw(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
            + filler
            + b"Content-Length: 13\r\nConnection: close\r\n\r\n<p>alive</p>\n"
        ),
        modeled=False,
        note="a 100 KB header block: a client may refuse it or read it",
    )
    site.text_page("/", "Errors", [(p, p) for p in r if p != "/recovered"])
    return site


def slow(ctx: Context) -> Site:
    site = Site("slow.test", ctx)
    o = ctx.options
    late = site.text_page("/late-page", "Finally", [("/", "Home")])

    async def slow_headers(request: web.BaseRequest) -> web.StreamResponse:
        await asyncio.sleep(o.header_delay)
        return late.response()

    async def trickle(request: web.BaseRequest) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": HTML})
        await response.prepare(request)
        await response.write(b"<!DOCTYPE html><html><body><p>")
        while True:
            await asyncio.sleep(o.trickle_interval)
            await response.write(b"z")

    async def stall(request: web.BaseRequest) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": HTML})
        response.content_length = 100_000
        await response.prepare(request)
        prefix = b"<!DOCTYPE html><html><body>"
        await response.write((prefix + b"s" * max(0, o.stall_after - len(prefix)))[: o.stall_after])
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    site.routes["/slow-headers"] = Resource(None, serve=slow_headers, note="headers late")
    site.routes["/trickle"] = Resource(None, serve=trickle, note="endless 1-byte body")
    site.routes["/stall"] = Resource(None, serve=stall, note="body stops")
    site.text_page(
        "/", "Slow", [("/slow-headers", "late"), ("/trickle", "trickle"), ("/stall", "stall")]
    )
    return site


@functools.lru_cache(maxsize=4)
def gzip_bomb(inflated_bytes: int) -> bytes:
    """A gzip member that inflates to an HTML prefix and ``inflated_bytes`` zeros
    (rounded up to whole MiB): 1 MiB of zeros compresses to about 1 KiB, and the block
    is computed once and repeated, so no big buffer is ever made."""
    prefix = b"<!DOCTYPE html><html><body><p>"
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = compressor.compress(prefix) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(bytes(_MIB)) + compressor.flush(zlib.Z_FULL_FLUSH)
    tail = compressor.flush()
    blocks = max(1, -(-inflated_bytes // _MIB))
    crc = _crc_after_zeros(zlib.crc32(prefix), blocks)
    size = (len(prefix) + blocks * _MIB) & 0xFFFFFFFF
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    return header + head + block * blocks + tail + struct.pack("<II", crc, size)


def _crc_after_zeros(crc: int, mebibytes: int) -> int:
    """crc32 continued over ``mebibytes`` MiB of zeros without hashing them: for zero
    data the update is affine in the running value, so learn it from 33 samples."""
    zeros = bytes(_MIB)
    base = zlib.crc32(zeros, 0)
    columns = [zlib.crc32(zeros, 1 << bit) ^ base for bit in range(32)]
    for _ in range(mebibytes):
        value = base
        for bit in range(32):
            if crc >> bit & 1:
                value ^= columns[bit]
        crc = value
    return crc


@functools.cache
def long_page(title: str, seed: int, size: int) -> bytes:
    """An HTML page of ``size`` bytes of prose: one 64 KiB block of random words (its
    own vocabulary per seed, so two such pages are no near duplicates), repeated."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(rng.choices(letters, k=rng.randint(3, 9))) for _ in range(400)]
    block: list[str] = []
    while sum(len(p) for p in block) < 64 * 1024:
        words = rng.choices(vocab, k=60)
        block.append("<p>" + " ".join(words).capitalize() + ".</p>\n")
    head = document(title, "").split(b"</body>")[0]
    body = "".join(block).encode()
    data = head + body * (size // len(body) + 1)
    return data[:size]


@functools.cache
def long_page_gzip(title: str, seed: int, size: int) -> bytes:
    return gzip.compress(long_page(title, seed, size), compresslevel=6)


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


def bodies(ctx: Context) -> Site:
    site = Site("bodies.test", ctx)
    o = ctx.options
    r = site.routes
    r["/pdf"] = Resource(
        200, "application/pdf", b"%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n"
    )
    r["/png"] = Resource(200, "image/png", _png())
    r["/text"] = Resource(200, "text/plain; charset=utf-8", b"Plain text, not HTML.\n" * 20)
    r["/octet"] = Resource(200, "application/octet-stream", bytes(range(256)) * 16)
    untyped = document("No Content-Type", "<p>An HTML page sent without a Content-Type.</p>")
    r["/no-content-type"] = replace(
        _raw(
            b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(untyped)
            + untyped
        ),
        status=200,
        content_type=None,
        body=untyped,
    )

    async def big(request: web.BaseRequest) -> web.StreamResponse:
        chunk = (b"<p>" + b"big body " * 7279 + b"</p>\n")[: 64 * 1024]
        response = web.StreamResponse(headers={"Content-Type": HTML})
        response.content_length = o.big_body_bytes
        await response.prepare(request)
        remaining = o.big_body_bytes
        while remaining > 0:
            await response.write(chunk[:remaining])
            remaining -= len(chunk)
        await response.write_eof()
        return response

    r["/big"] = Resource(200, HTML, serve=big, oversized=True)

    async def bomb(request: web.BaseRequest) -> web.StreamResponse:
        data = await asyncio.to_thread(gzip_bomb, o.bomb_bytes)
        response = web.StreamResponse(headers={"Content-Type": HTML, "Content-Encoding": "gzip"})
        response.content_length = len(data)
        await response.prepare(request)
        for start in range(0, len(data), 64 * 1024):
            await response.write(data[start : start + 64 * 1024])
        await response.write_eof()
        return response

    # What the cap keeps is the prefix and zeros: no text.
    r["/gzip-bomb"] = Resource(200, HTML, serve=bomb, oversized=True, refused="binary content")

    async def chunked(request: web.BaseRequest) -> web.StreamResponse:
        # No Content-Length: the crawler learns the size only by reading, and cuts it.
        data = long_page("Chunked and long", 1, o.big_body_bytes)
        response = web.StreamResponse(headers={"Content-Type": HTML})
        response.enable_chunked_encoding()
        await response.prepare(request)
        for start in range(0, len(data), 64 * 1024):
            await response.write(data[start : start + 64 * 1024])
        await response.write_eof()
        return response

    async def gzip_long(request: web.BaseRequest) -> web.StreamResponse:
        # Small on the wire (under the cap), over the cap once inflated: text all along.
        data = await asyncio.to_thread(long_page_gzip, "Gzip and long", 2, o.big_body_bytes)
        response = web.StreamResponse(headers={"Content-Type": HTML, "Content-Encoding": "gzip"})
        response.content_length = len(data)
        await response.prepare(request)
        await response.write(data)
        await response.write_eof()
        return response

    # Documents cut at the cap: kept, their text records and WARC records say so.
    r["/big-chunked"] = Resource(200, HTML, serve=chunked, truncated=True)
    r["/gzip-long"] = Resource(200, HTML, serve=gzip_long, truncated=True)
    plain = document("Not compressed", "<p>This body claims gzip but is plain.</p>")
    r["/wrong-encoding"] = Resource(
        200,
        HTML,
        plain,
        headers=(("Content-Encoding", "gzip"),),
        modeled=False,
        note="claims gzip, is plain: a client may fail or fall back",
    )
    r["/malformed"] = Resource(
        200,
        HTML,
        b"<html><head><title>Malformed</title><body><div><p>Unclosed <b>bold <i>italic"
        b"<table><tr><td>cell<div></span></table></p>\x00NUL\x00bytes<p>More text"
        b"<<<>>> <a href='/malformed-target'>a link</a><script>if (a < b) {</script"
        b"<!-- unterminated comment <p>tail",
    )
    r["/malformed"] = replace(r["/malformed"], links=(Link(site.url("/malformed-target")),))
    site.text_page("/malformed-target", "Reached through malformed HTML", [])
    _charsets(site)
    site.text_page("/", "Bodies", [(p, p) for p in r if p != "/malformed-target"])
    return site


def _charsets(site: Site) -> None:
    r = site.routes
    utf8 = "Café, naïve façade — “smart quotes” and a ünïcødé Grüße."
    r["/charset/latin1-header-utf8-body"] = Resource(
        200,
        "text/html; charset=ISO-8859-1",
        document("Wrong header charset", f"<p>{utf8}</p>"),
    )
    russian = "Съешь же ещё этих мягких французских булок, да выпей чаю."
    r["/charset/cp1251-meta"] = Resource(
        200,
        "text/html",
        (
            '<!DOCTYPE html><html lang="ru"><head>'
            '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'
            f"<title>Кириллица</title></head><body><p>{russian}</p></body></html>"
        ).encode("cp1251"),
    )
    japanese = "いろはにほへと ちりぬるを わかよたれそ つねならむ。日本語のページです。"
    r["/charset/shift-jis"] = Resource(
        200,
        "text/html; charset=Shift_JIS",
        (
            '<!DOCTYPE html><html lang="ja"><head><meta charset="Shift_JIS">'
            f"<title>日本語</title></head><body><p>{japanese}</p></body></html>"
        ).encode("shift_jis"),
    )
    r["/xhtml"] = Resource(
        200,
        "application/xhtml+xml",
        b'<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE html>\n'
        b'<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head><title>XHTML</title>'
        b"</head><body><p>An XHTML page.</p></body></html>\n",
    )
