"""The HTTP client of the fetch stage: one GET, no redirects, hostile servers expected.

The fetcher calls :meth:`HttpClient.get` for every page and every robots.txt. It
follows redirects itself (each hop goes back through the frontier), so the client never
does: a 3xx comes back as it is, with its Location header.

What one call does:

1. Reads the URL (only absolute http/https) and asks the :class:`~trawl.fetch.dns.DnsCache`
   for the host before any connection is made, so a host that is, or resolves to, a
   blocked address fails with ``FetchError(kind="blocked")`` and nothing is contacted.
   The connector resolves through :class:`~trawl.fetch.dns.GuardedResolver` (the same
   cache), so it connects to exactly the checked addresses; IP-literal hosts skip the
   connector's resolver and are checked here.
2. Sends the request on a pooled keep-alive connection (one aiohttp session, no per-host
   limit: politeness is the frontier's job). Headers: Host, User-Agent, Accept,
   Accept-Encoding (``gzip, deflate, br, zstd``: every coding it decodes), If-None-Match
   / If-Modified-Since on a re-visit, and any extras; no cookies (a dummy jar), no
   Accept-Language.
3. From the headers alone, lets ``accept(mime_type)`` decide whether the body is wanted;
   if not, the connection is closed unread (never returned half-read to the pool) and
   the response says ``body_skipped=True`` (a body that came whole with the headers
   keeps its connection). Without a Content-Type the body is downloaded and
   :func:`sniff_html` decides whether it is ``text/html`` (else ``mime_type`` stays
   None). 3xx, 204 and 304 bodies are never filtered (they are
   small, and reading them keeps the connection reusable).
4. Reads the body in chunks, capped at ``max_body_bytes`` both as received and after
   decoding the content coding (see :mod:`trawl.fetch._http_decode`); a cap sets
   ``truncated="length"`` and closes the connection. With ``refuse_oversized`` (pages,
   not robots.txt) a Content-Length over the cap is refused before any of the body is
   read: ``too_large`` says what was declared, the body is empty, the connection
   closed. A body in a coding it did not
   offer, cannot decode, or that yields nothing decodable comes back with ``body``
   empty, ``undecodable`` saying why and ``raw_body`` as received: it is never
   handed on as if it were the page.

Timeouts: ``connect`` bounds the TCP connect (per address tried); ``first_byte`` runs
from the start of the call until the response headers are in (lookup, pool wait,
connect, request); ``total`` bounds the whole call including the body, so a body that
trickles a byte at a time still ends. Every failure is a :class:`FetchError` (see
:mod:`trawl.fetch._http_errors` for the kinds and which are retryable); a connection
reset or an early close in the middle of the body is ``reset`` and the partial body is
dropped. aiohttp retries a GET once, on a new connection, when the server closes the
connection before answering (the stale keep-alive case, RFC 9112 section 9.3.1).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol, cast

import aiohttp
from aiohttp import connector as _aiohttp_connector
from aiohttp.client_proto import ResponseHandler
from yarl import URL

from trawl.clock import Clock
from trawl.config import Timeouts
from trawl.errors import ConfigError
from trawl.fetch._http_decode import (
    ACCEPT_ENCODING,
    ContentDecoder,
    decode_content,
    make_decoder,
    offered_codings,
    parse_content_type,
    sniff_html,
)
from trawl.fetch._http_errors import RETRYABLE_KINDS, FetchError, map_error
from trawl.fetch._http_pool import IdleBoundedConnector
from trawl.fetch.dns import DnsCache, GuardedResolver
from trawl.fetch.sendcheck import LeaseEndingError, check_send
from trawl.memory import IDLE_CONNECTIONS, PageBytes

__all__ = [
    "DEFAULT_ACCEPT",
    "HTML_TYPES",
    "RETRYABLE_KINDS",
    "Client",
    "FetchError",
    "FetchResponse",
    "HttpClient",
    "decode_content",
    "sniff_html",
]

DEFAULT_ACCEPT: Final = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1"
HTML_TYPES: Final = frozenset({"text/html", "application/xhtml+xml"})
_NO_FILTER_STATUSES: Final = frozenset({204, 304})
_SNIFF_BYTES: Final = 1024
# Header limits: generous for real sites (long CSP and Set-Cookie values), bounded for
# hostile ones (at most about 200 x 16 KiB of header per response).
_MAX_LINE: Final = 16 * 1024
_MAX_FIELD: Final = 16 * 1024
_MAX_HEADERS: Final = 200


@dataclass(frozen=True, slots=True)
class FetchResponse:
    """One HTTP response as received (the request's URL: redirects are not followed)."""

    url: str
    status: int
    reason: str
    http_version: str  # "1.1" / "1.0"
    headers: tuple[tuple[str, str], ...]  # raw response headers, wire order, latin-1
    request_headers: tuple[tuple[str, str], ...]  # exactly what was sent, Host included
    raw_body: bytes  # as received: content coding kept, transfer coding removed, capped
    body: bytes  # content coding removed, capped at max_body_bytes
    ip: str | None  # the peer address actually connected to
    mime_type: str | None  # lower-cased media type from Content-Type (or sniffed HTML)
    charset: str | None  # Content-Type charset parameter, lower-cased
    truncated: str | None  # None, "length" (a cap stopped the body), "decode" (bad coding)
    body_skipped: bool  # the type filter refused the body: not downloaded
    started_at: float
    first_byte_at: float
    elapsed: float
    coding_note: str | None = None  # how a wrong or unknown content coding was handled
    # Why the body was refused (a coding not offered or not decodable): body is b"".
    undecodable: str | None = None
    # A Content-Length over the cap, with ``refuse_oversized``: the body was not read
    # (body b"", truncated "length", the connection closed unread).
    too_large: int | None = None

    def header(self, name: str) -> str | None:
        """The first value of a response header (case-insensitive), or None."""
        name = name.lower()
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None

    def header_all(self, name: str) -> list[str]:
        """Every value of a response header, in wire order."""
        name = name.lower()
        return [value for key, value in self.headers if key.lower() == name]


class Client(Protocol):
    """What the fetch stage (and a render's requests) need of an HTTP client: this
    module's ``HttpClient``, or ``trawl.testing.fakeclient.FakeClient`` in tests."""

    async def get(
        self,
        url: str,
        *,
        accept: Any = None,
        headers: Any = None,
        etag: str | None = None,
        last_modified: str | None = None,
        max_body_bytes: int | None = None,
        refuse_oversized: bool = False,
    ) -> FetchResponse: ...

    async def close(self) -> None: ...


class _Response(aiohttp.ClientResponse):
    """Notes the peer address before the body is read, and the connection's protocol
    (aiohttp may hand the connection back to the pool inside ``start``)."""

    peer: str | None = None
    handler: asyncio.BaseProtocol | None = None

    async def start(self, connection: _aiohttp_connector.Connection) -> aiohttp.ClientResponse:
        self.handler = connection.protocol
        transport = connection.transport
        if transport is not None:
            peername = transport.get_extra_info("peername")
            if peername:
                self.peer = str(peername[0])
        return await super().start(connection)

    def drop_connection(self) -> None:
        """Close the connection even if it is already back in the pool."""
        self.close()
        handler = self.handler
        if isinstance(handler, ResponseHandler):
            handler.close()


class _CheckedRequest(aiohttp.ClientRequest):
    """A request that asks ``check_send`` (the lease still has time?) right before it
    is written to the connection, with no await in between (``fetch/sendcheck.py``)."""

    async def send(self, conn: _aiohttp_connector.Connection) -> aiohttp.ClientResponse:
        check_send()
        return await super().send(conn)


class HttpClient:
    """GETs pages through a pooled, guarded aiohttp session (see the module docstring).

    TLS certificates are verified against the system's CAs (``ssl_context`` replaces
    that, e.g. for a private CA); SNI and the certificate check use the URL's host name.
    """

    def __init__(
        self,
        *,
        dns: DnsCache,
        user_agent: str,
        timeouts: Timeouts,
        max_body_bytes: int,
        clock: Clock,
        max_connections: int = 1024,
        max_idle: int = IDLE_CONNECTIONS,
        accept_encoding: str = ACCEPT_ENCODING,
        keepalive: float = 30.0,
        accept: str = DEFAULT_ACCEPT,
        ssl_context: ssl.SSLContext | None = None,
        page_bytes: PageBytes | None = None,
    ) -> None:
        """``page_bytes`` counts the bytes of the bodies being read (see ``PageBytes``)."""
        if max_body_bytes <= 0 or max_connections <= 0:
            raise ConfigError("max_body_bytes and max_connections must be positive")
        if max_idle < 0:
            raise ConfigError("max_idle must be 0 or more")
        self._dns = dns
        self._timeouts = timeouts
        self._max_body = max_body_bytes
        self._offered = offered_codings(accept_encoding)
        self._clock = clock
        self._max_connections = max_connections
        self._max_idle = max_idle
        self._keepalive = keepalive
        self._ssl: ssl.SSLContext | bool = ssl_context if ssl_context is not None else True
        self._base_headers = {
            "User-Agent": user_agent,
            "Accept": accept,
            "Accept-Encoding": accept_encoding,
        }
        self._session: aiohttp.ClientSession | None = None
        self._closed = False
        self._reading = page_bytes or PageBytes(0)

    def _open(self) -> aiohttp.ClientSession:
        # Built on first use: aiohttp needs the running loop.
        if self._closed:
            raise FetchError("internal", "the HTTP client is closed")
        connector = IdleBoundedConnector(
            max_idle=self._max_idle,
            resolver=GuardedResolver(self._dns),
            use_dns_cache=False,
            limit=self._max_connections,
            limit_per_host=0,
            keepalive_timeout=self._keepalive,
            ssl=self._ssl,
            enable_cleanup_closed=getattr(_aiohttp_connector, "NEEDS_CLEANUP_CLOSED", False),
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            headers=self._base_headers,
            cookie_jar=aiohttp.DummyCookieJar(),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=self._timeouts.connect),
            auto_decompress=False,
            response_class=_Response,
            request_class=_CheckedRequest,
            trust_env=False,
            max_line_size=_MAX_LINE,
            max_field_size=_MAX_FIELD,
            max_headers=_MAX_HEADERS,
        )
        return self._session

    async def get(
        self,
        url: str,
        *,
        accept: Callable[[str | None], bool] | None = None,
        headers: Mapping[str, str] | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
        max_body_bytes: int | None = None,
        refuse_oversized: bool = False,
    ) -> FetchResponse:
        """GET ``url`` once. Raises :class:`FetchError`, never anything else.

        ``refuse_oversized``: a body whose Content-Length is over the cap is not read
        at all (``too_large``); otherwise it is read up to the cap (robots.txt files
        are parsed up to their limit whatever they declare)."""
        session = self._session or self._open()
        clock = self._clock
        started_at = clock.now()
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        timeouts = self._timeouts
        total_at = t0 + timeouts.total
        headers_at = min(t0 + timeouts.first_byte, total_at)
        cap = self._max_body if max_body_bytes is None else max_body_bytes
        target = _parse_url(url)
        extra: dict[str, str] | None = None
        if headers or etag or last_modified:
            extra = dict(headers) if headers else {}
            if etag:
                extra["If-None-Match"] = etag
            if last_modified:
                extra["If-Modified-Since"] = last_modified
        resp: _Response | None = None
        in_body = False
        scope = asyncio.timeout_at(headers_at)
        try:
            async with scope:
                # The guard, before anything is contacted (IP literals never reach the
                # connector's resolver, names do and hit the same cache entry).
                await self._dns.resolve(target.raw_host or "", target.port or 80)
                resp = cast(
                    _Response, await session.get(target, headers=extra, allow_redirects=False)
                )
                first_byte_at = clock.now()
                in_body = True
                scope.reschedule(total_at)
                refuse = cap if refuse_oversized else None
                return await self._finish(url, resp, accept, cap, refuse, started_at, first_byte_at)
        except TimeoutError as exc:
            if resp is not None:
                resp.close()
            if not scope.expired():
                raise map_error(exc, url) from exc
            if in_body or headers_at >= total_at:
                message = f"not complete in {timeouts.total:g} s"
                raise FetchError("timeout-total", message, url=url) from None
            message = f"no response headers in {timeouts.first_byte:g} s"
            raise FetchError("timeout-first-byte", message, url=url) from None
        except (
            asyncio.CancelledError,
            LeaseEndingError,
        ):  # nothing was sent for a LeaseEndingError
            if resp is not None:
                resp.close()
            raise
        except Exception as exc:
            if resp is not None:
                resp.close()
            raise map_error(exc, url) from exc

    async def _finish(
        self,
        url: str,
        resp: _Response,
        accept: Callable[[str | None], bool] | None,
        cap: int,
        refuse_over: int | None,
        started_at: float,
        first_byte_at: float,
    ) -> FetchResponse:
        status = resp.status
        if status == 101:  # never asked for: the connection now speaks something else
            resp.drop_connection()
            raise FetchError("protocol", "unsolicited protocol switch (101)", url=url)
        resp_headers = resp.headers
        mime_type, charset = parse_content_type(resp_headers.get("Content-Type"))
        skipped = (
            accept is not None
            and mime_type is not None
            and status not in _NO_FILTER_STATUSES
            and not 300 <= status < 400
            and not accept(mime_type)
        )
        truncated: str | None = None
        note = refused = None
        declared = resp.content_length
        too_large = (
            declared
            if refuse_over is not None
            and declared is not None
            and declared > refuse_over
            and status not in _NO_FILTER_STATUSES
            and not 300 <= status < 400
            else None
        )
        if too_large is not None and not skipped:
            resp.close()  # refused unread: the connection cannot be reused
            raw = body = b""
            truncated = "length"
        elif skipped:
            if resp.content.is_eof():
                resp.release()  # all of it came with the headers: the connection is clean
            else:
                resp.close()  # the body is not wanted: drop the connection unread
            raw = body = b""
        else:
            coding = resp_headers.get("Content-Encoding")
            decoder = make_decoder(coding, cap, offered=self._offered)
            raw, body, truncated, note, refused = await _read_body(
                resp, cap, decoder, self._reading
            )
            if mime_type is None and sniff_html(body[:_SNIFF_BYTES]):
                mime_type = "text/html"
        version = resp.version
        now = self._clock.now()
        return FetchResponse(
            url=url,
            status=status,
            reason=resp.reason or "",
            http_version=f"{version.major}.{version.minor}" if version else "1.1",
            headers=tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in resp.raw_headers),
            request_headers=tuple(resp.request_info.headers.items()),
            raw_body=raw,
            body=body,
            ip=resp.peer,
            mime_type=mime_type,
            charset=charset,
            truncated=truncated,
            body_skipped=skipped,
            started_at=started_at,
            first_byte_at=first_byte_at,
            elapsed=now - started_at,
            coding_note=note,
            undecodable=refused,
            too_large=too_large,
        )

    async def close(self) -> None:
        """Close every pooled connection. The DNS cache is the caller's to close."""
        self._closed = True
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def __aenter__(self) -> HttpClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


def _parse_url(url: str) -> URL:
    try:
        # encoded=True: send the (already normalised) URL exactly as given.
        target = URL(url, encoded=True) if url.isascii() else URL(url)
    except (ValueError, TypeError) as exc:
        raise FetchError("invalid-url", f"cannot parse URL: {exc}", url=url) from None
    if target.scheme not in ("http", "https") or not target.raw_host:
        raise FetchError("invalid-url", "not an absolute http(s) URL", url=url)
    return target


async def _read_body(
    resp: aiohttp.ClientResponse,
    cap: int,
    decoder: ContentDecoder | str | None,
    reading: PageBytes,
) -> tuple[bytes, bytes, str | None, str | None, str | None]:
    """(raw body, decoded body, truncated, coding note, refusal); closes or releases
    ``resp``. The raw bytes read are held in ``reading`` until the body is whole."""
    content = resp.content
    raw_parts: list[bytes] = []
    body_parts: list[bytes] = []
    size = 0
    truncated: str | None = None
    decoding = isinstance(decoder, ContentDecoder)
    held = reading.share()
    try:
        while True:
            chunk = await content.readany()
            if not chunk:
                break
            size += len(chunk)
            held.set(size)
            if size > cap:
                chunk = chunk[: len(chunk) - (size - cap)]
                size = cap
                truncated = "length"
            if chunk:
                raw_parts.append(chunk)
                if decoding:
                    assert isinstance(decoder, ContentDecoder)
                    out = decoder.feed(chunk)
                    if out:
                        body_parts.append(out)
                    if decoder.overflow:
                        truncated = "length"
                    elif decoder.done:
                        decoding = False  # identity, broken or refused: read the raw body on
            if truncated is not None:
                break
    finally:
        held.set(0)
    if truncated is None:
        resp.release()
    else:
        resp.close()  # stopped mid-body: the connection cannot be reused
    raw = raw_parts[0] if len(raw_parts) == 1 else b"".join(raw_parts)
    if decoder is None:
        return raw, raw, truncated, None, None
    if isinstance(decoder, str):
        return raw, b"", "decode", decoder, decoder
    if truncated is None and decoding:
        out = decoder.finish()
        if out:
            body_parts.append(out)
    if decoder.refused:
        return raw, b"", "decode", decoder.note, decoder.note
    if decoder.identity:
        return raw, raw, truncated, decoder.note, None
    if decoder.broken:
        truncated = truncated or "decode"
    body = body_parts[0] if len(body_parts) == 1 else b"".join(body_parts)
    return raw, body, truncated, decoder.note, None
