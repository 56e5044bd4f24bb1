"""FetchError and the mapping of every aiohttp / OS failure onto it.

The HTTP client lets no other exception out (asyncio.CancelledError excepted: a
cancelled fetch stays cancelled). Each failure has a ``kind`` and a ``retryable`` flag:

=====================  =========  ==========================================================
kind                   retryable  when
=====================  =========  ==========================================================
``dns``                depends    the name did not resolve; retryable for timeouts and
                                  SERVFAIL, not for NXDOMAIN or an empty answer
``blocked``            no         the guard refused the host or an address it resolves to
``invalid-url``        no         not an absolute http(s) URL the client can send
``connect``            yes        connection refused, unreachable, ...
``tls``                no         TLS handshake or certificate failure
``timeout-connect``    yes        the TCP connection was not made within ``connect``
``timeout-first-byte`` yes        no response headers within ``first_byte`` (from start)
``timeout-total``      yes        the exchange, body included, exceeded ``total``
``reset``              yes        the server closed or reset the connection before the
                                  headers or before the body was complete (a
                                  Content-Length or chunked body cut short); the partial
                                  body is dropped
``protocol``           no         not HTTP: a bad status line, malformed headers, bad
                                  chunked framing, an unsolicited 101 protocol switch
``too-many-headers``   no         the header block is too large (too many fields, or a
                                  field or line over the limit)
``internal``           no         anything unexpected (a bug); the cause is chained
=====================  =========  ==========================================================
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Final

import aiohttp
from aiohttp import http_exceptions

from trawl.errors import BlockedAddressError, TrawlError
from trawl.fetch.dns import DnsError, ResolveRefusedError

__all__ = ["RETRYABLE_KINDS", "FetchError", "map_error"]

#: Kinds retried by default (``dns`` is decided per failure, see the table above).
RETRYABLE_KINDS: Final = frozenset(
    {"connect", "timeout-connect", "timeout-first-byte", "timeout-total", "reset"}
)


class FetchError(TrawlError):
    """A fetch that produced no response. ``kind`` says why, ``retryable`` whether to retry."""

    def __init__(
        self, kind: str, message: str, *, url: str = "", retryable: bool | None = None
    ) -> None:
        super().__init__(f"{kind}: {message}" + (f" ({url[:200]})" if url else ""))
        self.kind = kind
        self.message = message
        self.url = url
        self.retryable = kind in RETRYABLE_KINDS if retryable is None else retryable


def from_lookup(exc: DnsError | BlockedAddressError, url: str) -> FetchError:
    if isinstance(exc, BlockedAddressError):
        return FetchError("blocked", str(exc), url=url)
    return FetchError("dns", str(exc), url=url, retryable=exc.retryable)


def _processing(exc: BaseException | None) -> http_exceptions.HttpProcessingError | None:
    """The most specific HTTP parsing error in the cause chain (aiohttp wraps them)."""
    found: http_exceptions.HttpProcessingError | None = None
    while exc is not None:
        if isinstance(exc, http_exceptions.HttpProcessingError):
            found = exc
        exc = exc.__cause__
    return found


def _header_kind(exc: http_exceptions.HttpProcessingError) -> str:
    if isinstance(exc, http_exceptions.LineTooLong) or "Too many headers" in str(exc.message):
        return "too-many-headers"
    return "protocol"


def map_error(exc: BaseException, url: str) -> FetchError:
    """The FetchError for an exception raised while fetching ``url``."""
    if isinstance(exc, FetchError):
        return exc
    if isinstance(exc, DnsError | BlockedAddressError):
        return from_lookup(exc, url)
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        refused = exc.os_error
        if isinstance(refused, ResolveRefusedError):
            return from_lookup(refused.error, url)
        return FetchError("dns", str(exc), url=url, retryable=True)
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return FetchError("timeout-connect", str(exc) or "connect timed out", url=url)
    if isinstance(exc, aiohttp.ServerTimeoutError):
        return FetchError("timeout-first-byte", str(exc) or "read timed out", url=url)
    if isinstance(exc, aiohttp.ClientSSLError | ssl.SSLError):
        return FetchError("tls", str(exc), url=url)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return FetchError("connect", str(exc), url=url)
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return FetchError("reset", f"server disconnected: {exc.message}", url=url)
    if isinstance(exc, aiohttp.ClientResponseError):
        cause = _processing(exc)
        if cause is not None:
            return FetchError(_header_kind(cause), _describe(cause), url=url)
        return FetchError("protocol", str(exc), url=url)
    if isinstance(exc, aiohttp.ClientPayloadError):
        cause = _processing(exc)
        message = _describe(cause) if cause is not None else str(exc)
        if cause is None or "Not enough data" in message or "not completed" in str(exc):
            return FetchError("reset", f"body incomplete: {message}", url=url)
        return FetchError("protocol", f"bad body framing: {message}", url=url)
    if isinstance(exc, aiohttp.InvalidURL | aiohttp.NonHttpUrlClientError | ValueError):
        return FetchError("invalid-url", str(exc), url=url)
    if isinstance(exc, aiohttp.ClientConnectionError | ConnectionError | OSError):
        return FetchError("reset", f"{type(exc).__name__}: {exc}", url=url)
    if isinstance(exc, asyncio.TimeoutError):  # a timeout not ours (should not happen)
        return FetchError("timeout-total", "timed out", url=url)
    if isinstance(exc, aiohttp.ClientError):
        return FetchError("protocol", f"{type(exc).__name__}: {exc}", url=url)
    return FetchError("internal", f"{type(exc).__name__}: {exc}", url=url)


def _describe(exc: http_exceptions.HttpProcessingError) -> str:
    message = str(exc.message) if exc.message else type(exc).__name__
    return message[:300]
