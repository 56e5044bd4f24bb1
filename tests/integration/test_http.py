"""HttpClient against real servers on 127.0.0.1: an aiohttp.web site for well-formed
behaviour and a scripted raw TCP server for hostile behaviour.

Host names (``books.test`` ...) reach the servers through ``overrides``; the guard is
opened for 127.0.0.0/8 only. The DNS backend here answers NXDOMAIN to everything, so
no test can send a query to a real name server. Timeouts are small (0.3 - 1 s) against
server delays of 10 s or more, so a loaded machine cannot turn a pass into a fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gzip
import random
import socket
import ssl
import struct
import subprocess
import time
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from ipaddress import ip_network
from typing import Any

import brotlicffi as brotli
import psutil  # type: ignore[import-untyped]
import pytest
import zstandard
from aiohttp import web

from trawl.clock import SystemClock
from trawl.config import Timeouts
from trawl.errors import ConfigError
from trawl.fetch._http_decode import CODINGS, make_decoder
from trawl.fetch.address import AddressGuard
from trawl.fetch.dns import DnsAnswer, DnsCache, DnsError
from trawl.fetch.http import (
    FetchError,
    FetchResponse,
    HttpClient,
    decode_content,
    sniff_html,
)
from trawl.fetch.sendcheck import LeaseEndingError, sending_under

MIB = 1024 * 1024
PAGE = (b"<!doctype html><html><head><title>Books</title></head><body>" + b"<p>x</p>" * 6250)[
    : 50 * 1024
]
LOOPBACK = [ip_network("127.0.0.0/8")]
HOSTS = {"books.test": "127.0.0.1", "hostile.test": "127.0.0.1", "evil.test": "10.0.0.1"}
TIMEOUTS = Timeouts(connect=2.0, first_byte=5.0, total=10.0)


class NoDns:
    """A backend that never touches the network."""

    async def lookup(self, host: str) -> DnsAnswer:
        raise DnsError("nxdomain", host, "not in this test's overrides")

    async def close(self) -> None:
        return None


# -- the well-formed server (aiohttp.web) --------------------------------------------------------


@dataclass
class Site:
    port: int
    peers: list[tuple[str, int]] = field(default_factory=list)
    requests: list[list[tuple[str, str]]] = field(default_factory=list)  # raw headers
    streamed: dict[str, int] = field(default_factory=dict)  # bytes written per route
    aborted: dict[str, bool] = field(default_factory=dict)  # the client closed early

    def url(self, path: str, host: str = "books.test") -> str:
        return f"http://{host}:{self.port}{path}"


@functools.cache
def gzip_bomb(size: int = 1024 * MIB) -> bytes:
    """A valid gzip stream of ``size`` zero bytes: about 1 KB per MiB."""
    zeros = bytes(MIB)
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)  # identical for every MiB
    tail = c.flush()[:-8]
    crc = 0
    for _ in range(size // MIB):
        crc = zlib.crc32(zeros, crc)
    trailer = struct.pack("<II", crc, size & 0xFFFFFFFF)
    return head + block * (size // MIB - 1) + tail + trailer


def _brotli(data: bytes) -> bytes:
    encoded: bytes = brotli.compress(data)
    return encoded


def _zstd_frames(data: bytes) -> bytes:
    """Two frames, streamed (no content size in their headers), as a server writes them."""
    half = len(data) // 2
    out = b""
    for part in (data[:half], data[half:]):
        c = zstandard.ZstdCompressor(level=3, write_checksum=True).compressobj()
        out += c.compress(part) + c.flush()
    return out


def _zstd_wide_window(data: bytes) -> bytes:
    """A frame that asks for a 32 MiB window (RFC 9659 allows 8 MB to a client)."""
    params = zstandard.ZstdCompressionParameters.from_level(3, window_log=25)
    c = zstandard.ZstdCompressor(compression_params=params).compressobj()
    return c.compress(data) + c.flush()


def _noise(seed: int, size: int = 4096) -> bytes:
    return random.Random(seed).randbytes(size)


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

#: route kind -> (Content-Encoding label, how the body is really encoded)
CODED: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "gzip": ("gzip", gzip.compress),
    "x-gzip": ("x-gzip", gzip.compress),
    "zlib": ("deflate", zlib.compress),
    "raw-deflate": ("deflate", lambda b: zlib.compress(b)[2:-4]),
    "gzip-as-zlib": ("gzip", zlib.compress),
    "br": ("br", _brotli),
    "zstd": ("zstd", zstandard.compress),
    "zstd-frames": ("zstd", _zstd_frames),
    "zstd-skippable": ("zstd", lambda b: b"\x5a\x2a\x4d\x18\x03\x00\x00\x00abc" + _zstd_frames(b)),
    "upper-case": ("ZSTD", zstandard.compress),
    "mislabelled": ("gzip", lambda b: b),
    "mislabelled-br": ("br", lambda b: b),
    "mislabelled-zstd": ("zstd", lambda b: b),
    "corrupt": ("gzip", lambda b: gzip.compress(b)[:80] + b"\xff\x00garbage" * 100),
    "cut": ("gzip", lambda b: gzip.compress(b)[:-50]),
    "br-cut": ("br", lambda b: _brotli(b)[:-5]),
    "zstd-cut": ("zstd", lambda b: _zstd_frames(b)[:-5]),  # in the second frame
    # Refused: no decodable content, so no body at all.
    "unknown": ("bzip2", lambda b: _noise(1)),
    "compress": ("compress", lambda b: b"\x1f\x9d\x90" + _noise(2)),
    "stacked": ("gzip, br", lambda b: _brotli(gzip.compress(b))),
    "garbage-label": ("%%garbage%%", lambda b: _noise(3)),
    "br-noise": ("br", lambda b: _noise(4)),
    "gzip-noise": ("gzip", lambda b: _noise(5)),
    "deflate-noise": ("deflate", lambda b: _noise(6)),
    "zstd-noise": ("zstd", lambda b: _noise(7)),
    "zstd-magic-noise": ("zstd", lambda b: ZSTD_MAGIC + _noise(8)),
    "zstd-window": ("zstd", _zstd_wide_window),
    "br-empty-cut": ("br", lambda b: _brotli(b)[:3]),
}
DECODED = ["gzip", "x-gzip", "zlib", "raw-deflate", "gzip-as-zlib", "br", "zstd", "zstd-frames"]
DECODED += ["zstd-skippable", "upper-case"]
MISLABELLED = ["mislabelled", "mislabelled-br", "mislabelled-zstd"]
BROKEN = ["corrupt", "cut", "br-cut", "zstd-cut"]
#: refused kinds -> the start of the reason
REFUSED = {
    "unknown": "content-encoding bzip2 not supported",
    "compress": "content-encoding compress not supported",
    "stacked": "content-encoding gzip, br not supported (stacked codings)",
    "garbage-label": "content-encoding %%garbage%% not supported",
    "br-noise": "content-encoding br: corrupt stream",
    "gzip-noise": "content-encoding gzip: not gzip data",
    "deflate-noise": "content-encoding deflate: corrupt stream",
    "zstd-noise": "content-encoding zstd: not zstd data",
    "zstd-magic-noise": "content-encoding zstd: corrupt stream",
    "zstd-window": "content-encoding zstd: corrupt stream",
    "br-empty-cut": "content-encoding br: stream ends before any content",
}


def br_bomb(size: int = 1024 * MIB) -> bytes:
    """A brotli stream of ``size`` zero bytes: a few hundred bytes in all."""
    return _bomb(brotli.Compressor(quality=5), size)


def zstd_bomb(size: int = 1024 * MIB) -> bytes:
    """A zstd stream (no content size declared) of ``size`` zero bytes: about 32 KB per GiB."""
    return _bomb(zstandard.ZstdCompressor(level=1).compressobj(), size)


@functools.cache
def _bomb_of(kind: str, size: int) -> bytes:
    return br_bomb(size) if kind == "br" else zstd_bomb(size)


def _bomb(compressor: Any, size: int) -> bytes:
    feed = getattr(compressor, "process", None) or compressor.compress
    end = getattr(compressor, "finish", None) or compressor.flush
    zeros = bytes(MIB)
    parts: list[bytes] = [feed(zeros) for _ in range(size // MIB)]
    tail: bytes = end()
    return b"".join(parts) + tail


def build_site(site: Site) -> web.Application:
    async def record(request: web.Request) -> None:
        site.peers.append(request.transport.get_extra_info("peername"))  # type: ignore[union-attr]
        site.requests.append([(k.decode(), v.decode()) for k, v in request.raw_headers])

    def html(body: bytes, **headers: str) -> web.Response:
        return web.Response(body=body, headers={"Content-Type": "text/html", **headers})

    async def page(request: web.Request) -> web.Response:
        await record(request)
        return web.Response(
            body=PAGE,
            headers={"Content-Type": "text/html; charset=UTF-8", "X-Multi": "a"},
        )

    async def coded(request: web.Request) -> web.Response:
        await record(request)
        label, encode = CODED[request.match_info["kind"]]
        return html(encode(PAGE), **{"Content-Encoding": label})

    async def stream(request: web.Request, name: str, chunks: Iterator[bytes], **h: str) -> Any:
        resp = web.StreamResponse(headers=h)
        await resp.prepare(request)
        site.streamed[name] = 0
        site.aborted[name] = False
        try:
            for chunk in chunks:
                await resp.write(chunk)
                site.streamed[name] += len(chunk)
            await resp.write_eof()
        except (ConnectionError, RuntimeError):
            site.aborted[name] = True
        return resp

    async def bomb(request: web.Request) -> web.Response:
        await record(request)
        kind = request.match_info.get("kind", "gzip")
        body = gzip_bomb() if kind == "gzip" else _bomb_of(kind, 1024 * MIB)
        return html(body, **{"Content-Encoding": kind})

    async def pdf(request: web.Request) -> Any:
        await record(request)
        chunk = b"%PDF" + bytes(64 * 1024 - 4)
        return await stream(
            request,
            "pdf",
            iter([chunk] * (12 * 16)),
            **{"Content-Type": "application/pdf", "Content-Length": str(12 * MIB)},
        )

    async def chunked(request: web.Request) -> Any:
        await record(request)
        parts = [PAGE[i : i + 7000] for i in range(0, len(PAGE), 7000)]
        return await stream(request, "chunked", iter(parts), **{"Content-Type": "text/html"})

    async def big(request: web.Request) -> web.Response:
        await record(request)
        return html(b"<p>" + b"y" * (3 * MIB))

    async def conditional(request: web.Request) -> web.Response:
        await record(request)
        if request.headers.get("If-None-Match") == '"v1"':
            return web.Response(status=304, headers={"ETag": '"v1"'})
        return html(PAGE, ETag='"v1"', **{"Last-Modified": "Tue, 01 Jul 2025 10:00:00 GMT"})

    async def redirect(request: web.Request) -> web.Response:
        await record(request)
        return web.Response(status=302, headers={"Location": "/page", "Content-Type": "text/html"})

    app = web.Application()
    app.router.add_get("/page", page)
    app.router.add_get("/coded/{kind}", coded)
    app.router.add_get("/bomb", bomb)
    app.router.add_get("/bomb/{kind}", bomb)
    app.router.add_get("/pdf", pdf)
    app.router.add_get("/chunked", chunked)
    app.router.add_get("/big", big)
    app.router.add_get("/conditional", conditional)
    app.router.add_get("/redirect", redirect)
    return app


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    state = Site(port=0)
    runner = web.AppRunner(build_site(state), access_log=None)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    state.port = runner.addresses[0][1]
    yield state
    await runner.cleanup()


# -- the hostile server (raw TCP, scripted per path) -------------------------------------------

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[bool]]
# A script returns True to keep the connection for the next request.


def _rst(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def _send(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(data)
    await writer.drain()


async def hold(reader: asyncio.StreamReader, seconds: float) -> None:
    """Wait, but notice when the client closes (as a sleeping server would not)."""
    with contextlib.suppress(TimeoutError, ConnectionError):
        async with asyncio.timeout(seconds):
            while await reader.read(65536):
                pass


def _head(*lines: str) -> bytes:
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def close_before_headers(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    return False


async def reset_before_headers(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    _rst(w)
    return False


async def reset_mid_body(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    await _send(w, _head("HTTP/1.1 200 OK", "Content-Type: text/html", "Content-Length: 10000"))
    await _send(w, b"<p>" * 1000)
    await asyncio.sleep(0.05)
    _rst(w)
    return False


async def short_body(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    await _send(w, _head("HTTP/1.1 200 OK", "Content-Type: text/html", "Content-Length: 10000"))
    await _send(w, b"<p>" * 1000)
    return False


async def chunked_cut(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    await _send(
        w, _head("HTTP/1.1 200 OK", "Content-Type: text/html", "Transfer-Encoding: chunked")
    )
    await _send(w, b"10\r\n<p>hello world\r\n\r\n")
    return False


async def bad_chunk(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    await _send(
        w, _head("HTTP/1.1 200 OK", "Content-Type: text/html", "Transfer-Encoding: chunked")
    )
    await _send(w, b"zz\r\nnot a chunk\r\n0\r\n\r\n")
    await hold(r, 10)
    return False


async def bad_status(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    await _send(w, b"HTPT/1.1 two hundred\r\nContent-Length: 0\r\n\r\n")
    await hold(r, 10)
    return False


async def not_http(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    await _send(w, b"SSH-2.0-OpenSSH_9.6\r\n")
    await hold(r, 10)
    return False


async def garbage_headers(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    await _send(w, b"HTTP/1.1 200 OK\r\nthis is not a header\r\n\x00\x01: \x02\r\n\r\nbody")
    await hold(r, 10)
    return False


async def huge_header(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    await _send(w, _head("HTTP/1.1 200 OK", "X-Big: " + "a" * 100_000, "Content-Length: 0"))
    await hold(r, 10)
    return False


async def many_headers(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    fields = [f"X-Field-{i}: {'v' * 40}" for i in range(2000)]  # about 100 KB
    await _send(w, _head("HTTP/1.1 200 OK", *fields, "Content-Length: 0"))
    await hold(r, 10)
    return False


async def http10(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    await _send(w, _head("HTTP/1.0 200 OK", "Content-Type: text/html"))
    await _send(w, b"<html>" + b"close-delimited " * 1000 + b"</html>")
    return False


async def not_modified(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    await _send(w, _head("HTTP/1.1 304 Not Modified", 'ETag: "v1"'))
    return True


async def slow_headers(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    await hold(r, 30)
    return False


async def trickle(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    await _send(w, _head("HTTP/1.1 200 OK", "Content-Type: text/html", "Content-Length: 100000"))
    for _ in range(100_000):
        await _send(w, b"x")
        await asyncio.sleep(0.2)
    return False


async def stall(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    await _send(w, _head("HTTP/1.1 200 OK", "Content-Type: text/html", "Content-Length: 10000"))
    await _send(w, b"y" * 5000)
    await hold(r, 30)
    return False


async def no_type_html(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    body = b"\xef\xbb\xbf\n  <!DOCTYPE html><title>t</title>"
    await _send(w, _head("HTTP/1.1 200 OK", f"Content-Length: {len(body)}") + body)
    return True


async def no_type_bin(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    await _send(w, _head("HTTP/1.1 200 OK", "Content-Length: 4") + b"\x00\x01PK")
    return True


async def switching_protocols(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    await _send(w, _head("HTTP/1.1 101 Switching Protocols", "Upgrade: evil"))
    await _send(w, b"\x00\x01raw bytes")
    await hold(r, 30)
    return False


async def small_image(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
    await _send(w, _head("HTTP/1.1 200 OK", "Content-Type: image/png", "Content-Length: 8"))
    await _send(w, b"\x89PNG\r\n\x1a\n")
    return True


SCRIPTS: dict[str, Script] = {
    "/101": switching_protocols,
    "/small-image": small_image,
    "/no-type-html": no_type_html,
    "/no-type-bin": no_type_bin,
    "/close-before-headers": close_before_headers,
    "/reset-before-headers": reset_before_headers,
    "/reset-mid-body": reset_mid_body,
    "/short-body": short_body,
    "/chunked-cut": chunked_cut,
    "/bad-chunk": bad_chunk,
    "/bad-status": bad_status,
    "/not-http": not_http,
    "/garbage-headers": garbage_headers,
    "/huge-header": huge_header,
    "/many-headers": many_headers,
    "/http10": http10,
    "/304": not_modified,
    "/slow-headers": slow_headers,
    "/trickle": trickle,
    "/stall": stall,
}


class Hostile:
    """Accepts connections, reads one request head at a time, plays the path's script."""

    def __init__(self) -> None:
        self.accepted = 0
        self.open = 0
        self.port = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        self._server: asyncio.Server | None = None
        self._idle = asyncio.Event()

    def url(self, path: str) -> str:
        return f"http://hostile.test:{self.port}{path}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.accepted += 1
        self.open += 1
        self._idle.clear()
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                path = head.split(b" ", 2)[1].decode()
                if not await SCRIPTS[path](reader, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            self.open -= 1
            if not self.open:
                self._idle.set()
            self._tasks.discard(task)

    async def wait_all_closed(self) -> None:
        """Until every connection is closed on the server side (at most 5 s)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5.0):
                await self._idle.wait()

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()


@pytest.fixture
async def hostile() -> AsyncIterator[Hostile]:
    server = Hostile()
    await server.start()
    yield server
    await server.stop()


ClientFactory = Callable[..., HttpClient]


@pytest.fixture
async def make_client(site: Site, hostile: Hostile) -> AsyncIterator[ClientFactory]:
    """Builds clients (closed at teardown, before the servers stop)."""
    clients: list[tuple[HttpClient, DnsCache]] = []

    def factory(
        *,
        allow: list[Any] | None = None,
        timeouts: Timeouts = TIMEOUTS,
        max_body_bytes: int = 4 * MIB,
        **kwargs: Any,
    ) -> HttpClient:
        guard = AddressGuard(LOOPBACK if allow is None else allow)
        clock = SystemClock()
        dns = DnsCache(guard=guard, clock=clock, overrides=HOSTS, backend=NoDns())
        client = HttpClient(
            dns=dns,
            user_agent="trawl-test/1.0 (+https://trawl.invalid/bot)",
            timeouts=timeouts,
            max_body_bytes=max_body_bytes,
            clock=clock,
            **kwargs,
        )
        clients.append((client, dns))
        return client

    yield factory
    for client, dns in clients:
        await client.close()
        await dns.close()


@pytest.fixture
def client(make_client: ClientFactory) -> HttpClient:
    return make_client()


def client_sockets_to(port: int) -> list[Any]:
    """Sockets this process holds that are connected to ``port`` (the client's side)."""
    return [
        c for c in psutil.Process().net_connections(kind="tcp") if c.raddr and c.raddr.port == port
    ]


async def fetch_error(call: Awaitable[FetchResponse]) -> FetchError:
    """The FetchError a call raises; any other outcome fails the test."""
    try:
        response = await call
    except FetchError as exc:
        return exc
    raise AssertionError(f"expected a FetchError, got {response.status}")


# -- well-formed responses ---------------------------------------------------------------------


async def test_page_and_what_was_sent(client: HttpClient, site: Site) -> None:
    r = await client.get(site.url("/page"))
    assert (r.status, r.reason, r.http_version) == (200, "OK", "1.1")
    assert r.body == PAGE and r.raw_body == PAGE
    assert (r.mime_type, r.charset, r.truncated, r.body_skipped) == (
        "text/html",
        "utf-8",
        None,
        False,
    )
    assert r.ip == "127.0.0.1"
    assert r.url == site.url("/page")
    assert [k for k, _ in r.headers][:2] == ["Content-Type", "X-Multi"]  # wire order
    assert r.header("content-type") == "text/html; charset=UTF-8"
    assert r.header_all("X-MULTI") == ["a"]
    assert r.header("missing") is None
    # request_headers are exactly what the server received, in order.
    assert list(r.request_headers) == site.requests[-1]
    names = [k.lower() for k, _ in r.request_headers]
    assert names == ["host", "user-agent", "accept", "accept-encoding"]
    sent = dict(r.request_headers)
    assert sent["Host"] == f"books.test:{site.port}"
    assert sent["User-Agent"] == "trawl-test/1.0 (+https://trawl.invalid/bot)"
    assert sent["Accept-Encoding"] == "gzip, deflate, br, zstd"
    assert r.started_at <= r.first_byte_at <= r.started_at + r.elapsed


async def test_sequential_requests_reuse_one_connection(client: HttpClient, site: Site) -> None:
    for _ in range(3):
        assert (await client.get(site.url("/page"))).status == 200
    assert len(site.peers) == 3
    assert len(set(site.peers)) == 1  # one TCP connection, one client port


async def test_a_request_whose_lease_ends_too_soon_is_not_sent(
    client: HttpClient, site: Site
) -> None:
    assert (await client.get(site.url("/page"))).status == 200  # a pooled connection

    def lease_ended() -> None:
        raise LeaseEndingError("the lease ends too soon")

    with sending_under(lease_ended), pytest.raises(LeaseEndingError):
        await client.get(site.url("/page"))
    assert len(site.requests) == 1  # checked just before the request was written
    assert (await client.get(site.url("/page"))).status == 200  # the client goes on


async def test_redirect_is_returned_not_followed(client: HttpClient, site: Site) -> None:
    r = await client.get(site.url("/redirect"))
    assert r.status == 302
    assert r.header("Location") == "/page"
    assert len(site.requests) == 1


@pytest.mark.parametrize("kind", DECODED)
async def test_content_codings_are_decoded(client: HttpClient, site: Site, kind: str) -> None:
    r = await client.get(site.url(f"/coded/{kind}"))
    assert r.body == PAGE
    assert r.raw_body != PAGE and len(r.raw_body) < len(PAGE)  # the coding is kept raw
    assert (r.truncated, r.undecodable) == (None, None)


@pytest.mark.parametrize("kind", MISLABELLED)
async def test_mislabelled_text_is_taken_as_identity(
    client: HttpClient, site: Site, kind: str
) -> None:
    r = await client.get(site.url(f"/coded/{kind}"))
    assert r.body == PAGE == r.raw_body
    assert (r.truncated, r.undecodable) == (None, None)
    assert r.coding_note is not None and "identity" in r.coding_note


@pytest.mark.parametrize("kind", sorted(REFUSED))
async def test_undecodable_bodies_are_refused_with_a_reason(
    client: HttpClient, site: Site, kind: str
) -> None:
    # Before: the raw bytes came back as the body, and were parsed as HTML.
    _label, encode = CODED[kind]
    r = await client.get(site.url(f"/coded/{kind}"))
    assert r.status == 200
    assert r.body == b""
    assert r.raw_body == encode(PAGE)  # kept as received, for the WARC record
    assert r.truncated == "decode"
    assert r.undecodable is not None and r.undecodable.startswith(REFUSED[kind]), r.undecodable
    assert r.coding_note == r.undecodable


async def test_a_coding_not_offered_is_refused(make_client: ClientFactory, site: Site) -> None:
    client = make_client(accept_encoding="gzip")
    r = await client.get(site.url("/coded/zstd"))
    assert dict(r.request_headers)["Accept-Encoding"] == "gzip"
    assert (r.body, r.undecodable) == (b"", "content-encoding zstd not offered")
    assert (await client.get(site.url("/coded/x-gzip"))).body == PAGE


def test_offering_a_coding_the_client_cannot_decode_is_refused(make_client: ClientFactory) -> None:
    with pytest.raises(ConfigError, match="compress"):
        make_client(accept_encoding="gzip, compress")
    make_client(accept_encoding="gzip;q=1.0, br;q=0, identity, *;q=0")


def test_a_hostile_coding_label_is_cleaned_in_the_reason() -> None:
    reason = make_decoder("\x01\x02 \xff" + "x" * 500, MIB, offered=CODINGS)
    assert reason == "content-encoding ?? ?" + "x" * 36 + " not supported"


@pytest.mark.parametrize("kind", BROKEN)
async def test_broken_streams_keep_what_decoded(client: HttpClient, site: Site, kind: str) -> None:
    r = await client.get(site.url(f"/coded/{kind}"))
    assert r.truncated == "decode"
    assert r.body.startswith(PAGE[:40])  # what decoded before the damage
    assert r.undecodable is None
    assert r.coding_note is not None


async def test_gzip_bomb_stops_at_the_cap(make_client: ClientFactory, site: Site) -> None:
    client = make_client(max_body_bytes=1 * MIB)
    bomb = gzip_bomb()  # built before measuring: 1 GiB of zeros in about 1 MB
    assert len(bomb) < 2 * MIB
    tracemalloc.start()
    try:
        r = await client.get(site.url("/bomb"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r.truncated == "length"
    assert len(r.body) == 1 * MIB and r.body.count(0) == MIB
    assert len(r.raw_body) < 256 * 1024  # one read's worth of gzip made the MiB
    assert peak < 12 * MIB  # about the cap, not the 1 GiB the bomb inflates to


@pytest.mark.parametrize("kind", ["br", "zstd"])
async def test_br_and_zstd_bombs_stop_at_the_cap(
    make_client: ClientFactory, site: Site, kind: str
) -> None:
    client = make_client(max_body_bytes=1 * MIB)
    bomb = _bomb_of(kind, 1024 * MIB)  # built before measuring
    assert len(bomb) < 64 * 1024
    tracemalloc.start()
    try:
        r = await client.get(site.url(f"/bomb/{kind}"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r.truncated == "length"
    assert len(r.body) == 1 * MIB and r.body.count(0) == MIB
    assert r.raw_body == bomb[: len(r.raw_body)]
    assert peak < 12 * MIB  # about the cap, not the 1 GiB the bomb inflates to


async def test_raw_body_is_capped_too(make_client: ClientFactory, site: Site) -> None:
    client = make_client(max_body_bytes=1 * MIB)
    r = await client.get(site.url("/big"))
    assert r.truncated == "length"
    assert len(r.raw_body) == len(r.body) == 1 * MIB
    # A per-call cap overrides the client's.
    r = await client.get(site.url("/big"), max_body_bytes=1000)
    assert len(r.body) == 1000 and r.truncated == "length"
    r = await client.get(site.url("/page"), max_body_bytes=len(PAGE))
    assert r.body == PAGE and r.truncated is None  # exactly the cap is not truncated


async def test_a_content_length_over_the_cap_is_refused_unread(
    make_client: ClientFactory, site: Site
) -> None:
    client = make_client(max_body_bytes=1 * MIB)
    r = await client.get(site.url("/big"), refuse_oversized=True)
    assert r.too_large == 3 * MIB + 3
    assert (r.status, r.body, r.raw_body, r.truncated) == (200, b"", b"", "length")
    # Without refuse_oversized (robots.txt), read up to the cap as before; a body
    # within the cap is read whole either way.
    r = await client.get(site.url("/big"))
    assert r.too_large is None and len(r.body) == 1 * MIB
    r = await client.get(site.url("/page"), refuse_oversized=True, max_body_bytes=len(PAGE))
    assert r.body == PAGE and r.too_large is None
    r = await client.get(site.url("/chunked"), refuse_oversized=True, max_body_bytes=1000)
    assert r.too_large is None and len(r.body) == 1000  # no Content-Length: cut at the cap


async def test_type_filter_does_not_download_a_pdf(client: HttpClient, site: Site) -> None:
    seen: list[str | None] = []

    def html_only(mime: str | None) -> bool:
        seen.append(mime)
        return mime == "text/html"

    r = await client.get(site.url("/pdf"), accept=html_only)
    assert seen == ["application/pdf"]
    assert r.body_skipped
    assert (r.status, r.mime_type, r.body, r.raw_body) == (200, "application/pdf", b"", b"")
    for _ in range(200):
        if site.aborted.get("pdf"):
            break
        await asyncio.sleep(0.025)
    assert site.aborted["pdf"]  # the server saw the early close
    assert site.streamed["pdf"] < 12 * MIB
    # The dropped connection was not pooled: the next request works on a new one.
    r = await client.get(site.url("/page"), accept=html_only)
    assert r.body == PAGE and not r.body_skipped
    assert len(set(site.peers)) == 2


async def test_skipped_body_that_came_whole_keeps_the_connection(
    client: HttpClient, hostile: Hostile
) -> None:
    for _ in range(2):
        r = await client.get(hostile.url("/small-image"), accept=lambda m: m == "text/html")
        assert r.body_skipped and r.body == b""
    assert (await client.get(hostile.url("/no-type-html"))).mime_type == "text/html"
    assert hostile.accepted == 1


async def test_missing_content_type_is_sniffed(client: HttpClient, hostile: Hostile) -> None:
    def html_only(mime: str | None) -> bool:
        return mime == "text/html"

    r = await client.get(hostile.url("/no-type-html"), accept=html_only)
    assert r.mime_type == "text/html" and not r.body_skipped
    r = await client.get(hostile.url("/no-type-bin"), accept=html_only)
    assert r.mime_type is None and r.body == b"\x00\x01PK"  # downloaded; caller skips it


async def test_conditional_request_and_304(client: HttpClient, site: Site) -> None:
    first = await client.get(site.url("/conditional"))
    assert first.status == 200
    last_modified = first.header("Last-Modified")
    r = await client.get(site.url("/conditional"), etag='"v1"', last_modified=last_modified)
    assert (r.status, r.body, r.raw_body, r.truncated) == (304, b"", b"", None)
    assert r.header("ETag") == '"v1"'
    received = dict(site.requests[-1])
    assert received["If-None-Match"] == '"v1"'
    assert received["If-Modified-Since"] == "Tue, 01 Jul 2025 10:00:00 GMT"
    assert list(r.request_headers) == site.requests[-1]
    assert len(set(site.peers)) == 1  # the 304 kept the connection


async def test_extra_headers_are_sent(client: HttpClient, site: Site) -> None:
    r = await client.get(site.url("/page"), headers={"Accept": "text/plain", "X-Crawl": "1"})
    assert dict(r.request_headers)["Accept"] == "text/plain"
    assert dict(site.requests[-1])["X-Crawl"] == "1"
    assert not any(k.lower() in ("accept-language", "cookie") for k, _ in r.request_headers)


async def test_chunked_body(client: HttpClient, site: Site) -> None:
    r = await client.get(site.url("/chunked"))
    assert r.body == PAGE and r.truncated is None
    assert r.header("Transfer-Encoding") == "chunked"


async def test_http10_close_delimited_body(client: HttpClient, hostile: Hostile) -> None:
    r = await client.get(hostile.url("/http10"))
    assert r.http_version == "1.0"
    assert r.body == b"<html>" + b"close-delimited " * 1000 + b"</html>"


async def test_304_without_body_keeps_the_connection(client: HttpClient, hostile: Hostile) -> None:
    for _ in range(2):
        r = await client.get(hostile.url("/304"), etag='"v1"')
        assert (r.status, r.body) == (304, b"")
    assert hostile.accepted == 1


# -- the guard ------------------------------------------------------------------------------------


async def test_blocked_before_any_connection(make_client: ClientFactory, hostile: Hostile) -> None:
    closed = make_client(allow=[])  # the default guard: loopback is refused
    urls = [
        f"http://127.0.0.1:{hostile.port}/304",
        f"http://[::1]:{hostile.port}/304",
        f"http://localhost:{hostile.port}/304",
        f"http://2130706433:{hostile.port}/304",
        hostile.url("/304"),  # a name overridden to 127.0.0.1
    ]
    for url in urls:
        error = await fetch_error(closed.get(url))
        assert error.kind == "blocked" and not error.retryable
    opened = make_client()
    error = await fetch_error(opened.get(f"http://evil.test:{hostile.port}/"))  # -> 10.0.0.1
    assert error.kind == "blocked"
    assert "10.0.0.1" in str(error) and "private" in str(error)
    assert hostile.accepted == 0


async def test_dns_failure(client: HttpClient) -> None:
    error = await fetch_error(client.get("http://unknown.test/"))
    assert error.kind == "dns" and not error.retryable


@pytest.mark.parametrize("url", ["ftp://books.test/", "/relative", "http://", "mailto:a@b.test"])
async def test_invalid_url(client: HttpClient, url: str) -> None:
    error = await fetch_error(client.get(url))
    assert error.kind == "invalid-url" and not error.retryable


# -- timeouts -------------------------------------------------------------------------------------


async def test_connect_timeout(make_client: ClientFactory) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    filler = socket.create_connection(listener.getsockname())  # fills the accept queue
    try:
        client = make_client(timeouts=Timeouts(connect=0.3, first_byte=5, total=10))
        start = time.monotonic()
        port = listener.getsockname()[1]
        error = await fetch_error(client.get(f"http://books.test:{port}/"))
        assert error.kind == "timeout-connect" and error.retryable
        assert time.monotonic() - start < 4
    finally:
        filler.close()
        listener.close()


async def test_connection_refused(client: HttpClient) -> None:
    # Bound but not listening: connecting is refused, and no other process (a parallel
    # test's server) can take the port meanwhile.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        error = await fetch_error(client.get(f"http://books.test:{port}/"))
    assert error.kind == "connect" and error.retryable


async def test_first_byte_timeout(make_client: ClientFactory, hostile: Hostile) -> None:
    client = make_client(timeouts=Timeouts(connect=2, first_byte=0.3, total=10))
    start = time.monotonic()
    error = await fetch_error(client.get(hostile.url("/slow-headers")))
    assert error.kind == "timeout-first-byte" and error.retryable
    assert time.monotonic() - start < 4


@pytest.mark.parametrize("path", ["/trickle", "/stall"])
async def test_total_timeout_ends_a_slow_body(
    make_client: ClientFactory, hostile: Hostile, path: str
) -> None:
    client = make_client(timeouts=Timeouts(connect=2, first_byte=0.8, total=1.0))
    start = time.monotonic()
    error = await fetch_error(client.get(hostile.url(path)))
    assert error.kind == "timeout-total" and error.retryable
    assert 0.9 < time.monotonic() - start < 5


async def test_cancelled_fetch_stays_cancelled(client: HttpClient, hostile: Hostile) -> None:
    task = asyncio.create_task(client.get(hostile.url("/slow-headers")))
    for _ in range(200):
        if hostile.accepted:
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await hostile.wait_all_closed()
    assert hostile.open == 0


# -- hostile servers ------------------------------------------------------------------------------

HOSTILE_KINDS = {
    "/close-before-headers": "reset",
    "/reset-before-headers": "reset",
    "/reset-mid-body": "reset",
    "/short-body": "reset",
    "/chunked-cut": "reset",
    "/bad-chunk": "protocol",
    "/bad-status": "protocol",
    "/not-http": "protocol",
    "/garbage-headers": "protocol",
    "/huge-header": "too-many-headers",
    "/many-headers": "too-many-headers",
}


async def test_unasked_protocol_switch_is_refused(client: HttpClient, hostile: Hostile) -> None:
    error = await fetch_error(client.get(hostile.url("/101")))
    assert error.kind == "protocol" and "101" in error.message
    await hostile.wait_all_closed()
    assert hostile.open == 0  # the switched connection was not pooled


@pytest.mark.parametrize(("path", "kind"), sorted(HOSTILE_KINDS.items()))
async def test_hostile_server_gives_a_fetch_error(
    client: HttpClient, hostile: Hostile, path: str, kind: str
) -> None:
    error = await fetch_error(client.get(hostile.url(path)))  # nothing else may escape
    assert error.kind == kind, error
    assert error.retryable is (kind == "reset")
    assert error.url == hostile.url(path)


async def test_no_connection_leaks_after_hostile_requests(
    make_client: ClientFactory, hostile: Hostile, site: Site
) -> None:
    client = make_client(timeouts=Timeouts(connect=2, first_byte=0.5, total=1.0))
    paths = [*HOSTILE_KINDS, "/101", "/trickle", "/stall", "/slow-headers"]
    urls = [hostile.url(paths[i % len(paths)]) for i in range(50)]
    results = await asyncio.gather(*(client.get(u) for u in urls), return_exceptions=True)
    assert all(isinstance(r, FetchError) for r in results), [
        type(r) for r in results if not isinstance(r, FetchError)
    ]
    await hostile.wait_all_closed()
    assert hostile.open == 0  # the server saw every connection closed
    assert client_sockets_to(hostile.port) == []  # and the client holds none (none pooled)
    # The client still works and reuses connections afterwards.
    for _ in range(2):
        assert (await client.get(site.url("/page"))).body == PAGE
    assert len(set(site.peers)) == 1


async def test_get_after_close(make_client: ClientFactory, site: Site) -> None:
    client = make_client()
    await client.get(site.url("/page"))
    await client.close()
    await client.close()  # idempotent
    error = await fetch_error(client.get(site.url("/page")))
    assert error.kind == "internal"


# -- TLS ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A self-signed certificate for books.test (made with the openssl command)."""
    directory = tmp_path_factory.mktemp("tls")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj", "/CN=books.test",
            "-addext", "subjectAltName=DNS:books.test", "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return str(cert), str(key)


@pytest.fixture
async def tls_port(certificate: tuple[str, str]) -> AsyncIterator[int]:
    async def hello(request: web.Request) -> web.Response:
        return web.Response(body=b"<p>secret</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", hello)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*certificate)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context).start()
    yield runner.addresses[0][1]
    await runner.cleanup()


async def test_untrusted_certificate_is_a_tls_error(client: HttpClient, tls_port: int) -> None:
    error = await fetch_error(client.get(f"https://books.test:{tls_port}/"))
    assert error.kind == "tls" and not error.retryable


async def test_tls_checks_the_certificate_against_the_url_host(
    make_client: ClientFactory, tls_port: int, certificate: tuple[str, str]
) -> None:
    client = make_client(ssl_context=ssl.create_default_context(cafile=certificate[0]))
    r = await client.get(f"https://books.test:{tls_port}/")
    assert (r.status, r.body, r.ip) == (200, b"<p>secret</p>", "127.0.0.1")
    # The same server under another name fails the host name check.
    error = await fetch_error(client.get(f"https://hostile.test:{tls_port}/"))
    assert error.kind == "tls"


# -- sniffing ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "html"),
    [
        (b"<!DOCTYPE html><html>", True),
        (b"\xef\xbb\xbf  \n\t<HTML lang=en>", True),
        (b"<head>", True),
        (b"<body>", True),
        (b"<script>x</script>", True),
        (b"<title>t</title>", True),
        (b"<p>hello", True),
        (b"<!-- comment -->", True),
        (b"<div class=a>", True),
        (b"<br/>", True),
        (b"<a href=x>", True),
        (b"<abbr>", False),
        (b"<?xml version='1.0'?><rss>", False),
        (b"%PDF-1.7", False),
        (b'{"json": true}', False),
        (b"", False),
        (b"plain text <html>", False),
    ],
)
def test_sniff_html(prefix: bytes, html: bool) -> None:
    assert sniff_html(prefix) is html


# -- decoding a stored body -------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(CODED))
def test_decode_content_matches_the_live_client(kind: str) -> None:
    label, encode = CODED[kind]
    body, truncated = decode_content(encode(PAGE), label, 4 * MIB)
    if kind in REFUSED:
        assert (body, truncated) == (b"", "decode")
    elif kind in BROKEN:
        assert truncated == "decode" and body.startswith(PAGE[:40])
    else:
        assert (body, truncated) == (PAGE, None)


def test_decode_content_caps_a_bomb_and_identity() -> None:
    bombs = [(gzip_bomb(), "gzip")] + [(_bomb_of(k, 1024 * MIB), k) for k in ("br", "zstd")]
    for bomb, label in bombs:
        body, truncated = decode_content(bomb, label, MIB)
        assert (len(body), truncated) == (MIB, "length"), label
    assert decode_content(b"abcdef", None, 4) == (b"abcd", "length")
    assert decode_content(b"abcdef", "identity", 10) == (b"abcdef", None)
    assert decode_content(b"", "gzip", 10) == (b"", None)
