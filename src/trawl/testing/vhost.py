"""One aiohttp low-level server on 127.0.0.1 that serves many virtual hosts.

Shared by the test web and the sample web. It binds to loopback only, on an ephemeral
port unless told otherwise, hands each request with its host name (Host header,
port removed, lower case) to one handler, and logs every request in a ``RequestLog``
from the moment its connection was accepted until its response was finished or the
connection broke. Handlers are cancelled when the client goes away, and on stop after
a short grace period, so endless responses never hold the server open.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Self

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from trawl.testing.requestlog import RequestLog

LOOPBACK = "127.0.0.1"

HostHandler = Callable[[web.BaseRequest, str], Awaitable[web.StreamResponse]]


def nginx_config(roots: Mapping[str, Path], port: int, *, title: str) -> str:
    """Server blocks serving each host's static files from its root on 127.0.0.1:``port``
    only (``<path>/index.html`` for ``<path>/``), to include in an nginx ``http {}``
    block with mime.types; any other host name gets 421."""
    blocks = [
        f"# {title}; include inside http {{ }} (with mime.types).",
        f"server {{\n    listen {LOOPBACK}:{port} default_server;\n    return 421;\n}}",
    ]
    for host, base in roots.items():
        blocks.append(
            f"server {{\n    listen {LOOPBACK}:{port};\n    server_name {host};\n"
            f"    root {base};\n    index index.html;\n"
            "    location / {\n        try_files $uri $uri/index.html =404;\n    }\n}"
        )
    return "\n".join(blocks) + "\n"


class BrokenResponse(web.StreamResponse):
    """Returned by a handler that already wrote (or refused) the answer on the raw
    transport and closed it; the log records no status for it."""


def host_of(request: web.BaseRequest) -> str:
    """The request's host name: the Host header without its port, in lower case."""
    raw = (request.headers.get("Host") or "").strip().lower()
    if raw.startswith("["):
        return raw.split("]", 1)[0] + "]"
    return raw.rsplit(":", 1)[0] if ":" in raw else raw


class VirtualHostServer:
    """Serves ``handler`` on 127.0.0.1; ``await start()`` returns the port."""

    def __init__(
        self,
        handler: HostHandler,
        *,
        log: RequestLog | None = None,
        port: int = 0,
        shutdown_timeout: float = 0.2,
    ) -> None:
        self._handler = handler
        self.log = log
        self._requested_port = port
        self._shutdown_timeout = shutdown_timeout
        self._accepted: dict[RequestHandler, float] = {}
        self._web_server: web.Server | None = None
        self._server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> int:
        loop = asyncio.get_running_loop()
        web_server = web.Server(
            self._handle,
            handler_cancellation=True,
            access_log=None,
            max_line_size=1 << 20,
            max_field_size=1 << 16,
            max_headers=1024,
        )
        accepted = self._accepted

        def protocol() -> RequestHandler:
            handler = web_server()
            accepted[handler] = time.monotonic()
            return handler

        self._web_server = web_server
        self._server = await loop.create_server(protocol, LOOPBACK, self._requested_port)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        if self._web_server is not None:
            self._web_server.pre_shutdown()
            await self._web_server.shutdown(self._shutdown_timeout)
        if self._server is not None:
            await self._server.wait_closed()
        self._server = self._web_server = None
        self._accepted.clear()

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        started = self._accepted.pop(request.protocol, None) or time.monotonic()
        host = host_of(request)
        record = None
        if self.log is not None:
            record = self.log.begin(
                started=started,
                host=host,
                method=request.method,
                target=request.raw_path,
                headers=request.headers.items(),
            )
        response: web.StreamResponse | None = None
        ended: float | None = None
        try:
            response = await self._handler(request, host)
            if not response.prepared:
                # Send it here, not after return, so ``finished`` is the real end.
                ended = await _send(request, response)
        except ConnectionError:
            # The response was broken on purpose or the client left: nothing to send.
            pass
        finally:
            if record is not None:
                ok = response is not None and not isinstance(response, BrokenResponse)
                if ended is not None:
                    record.finished = ended
                RequestLog.end(record, response.status if ok and response else None)
        return response if response is not None else web.StreamResponse()


async def _send(request: web.BaseRequest, response: web.StreamResponse) -> float:
    """Send ``response`` whole; the moment its last byte was handed to the socket.

    A write the socket takes at once never yields to the loop, and then the last byte
    left after the CPU time the write took: a loaded machine may stop this process
    right after it (the fleet drill saw 50 ms), the client meanwhile reading the
    response and coming back ``delay`` later, which the log would show as an early
    request. A write that waited for the client (a full buffer) ends when it returns.
    """
    loop = asyncio.get_running_loop()
    yielded: list[bool] = []
    handle = loop.call_soon(yielded.append, True)  # runs only if the send yields
    wall, cpu = time.monotonic(), time.thread_time()
    try:
        await response.prepare(request)
        await response.write_eof()
    finally:
        handle.cancel()
    now = time.monotonic()
    return now if yielded else min(now, wall + (time.thread_time() - cpu))


class ServedWeb:
    """A test web served by a ``VirtualHostServer`` (``self._server``, set by the
    subclass): ``async with`` starts and stops it; ``port`` is where it listens."""

    _server: VirtualHostServer

    async def __aenter__(self) -> Self:
        await self._server.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._server.stop()

    @property
    def port(self) -> int:
        return self._server.port
