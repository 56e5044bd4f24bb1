"""Run an aiohttp app on a TCP address until SIGINT or SIGTERM (``trawl serve``, demo)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
from collections.abc import Callable

from aiohttp import web

from trawl.api.app import SERVER_LIMITS


def address_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


async def serve(
    app: web.Application,
    host: str = "127.0.0.1",
    port: int = 8080,
    *,
    on_ready: Callable[[str], None] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve ``app`` until ``stop`` is set or the process gets SIGINT/SIGTERM.

    ``port=0`` takes a free port; ``on_ready`` gets the real address once it listens.
    On a signal, the listening socket closes first, then requests in progress finish
    (up to a few seconds), then the app's cleanup runs.
    """
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
            installed.append(sig)
    runner = web.AppRunner(
        app, access_log=None, handle_signals=False, shutdown_timeout=5.0, **SERVER_LIMITS
    )
    await runner.setup()
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(1024)
        sock.setblocking(False)
        site = web.SockSite(runner, sock)
        await site.start()
        real_port = sock.getsockname()[1]
        if on_ready is not None:
            on_ready(address_url(host, real_port))
        await stop.wait()
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
        await runner.cleanup()
