"""Serve an app on 127.0.0.1 in a thread, for sync clients (Playwright, schemathesis)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator

from aiohttp import web


def serve_in_thread(make_app: Callable[[], web.Application]) -> Iterator[str]:
    """Serve the app made by ``make_app`` on 127.0.0.1 in a thread; yields its URL."""
    from trawl.api.server import serve

    ready = threading.Event()
    url: list[str] = []
    holder: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Event]] = {}

    async def main() -> None:
        stop = asyncio.Event()
        holder["stop"] = (asyncio.get_running_loop(), stop)

        def on_ready(address: str) -> None:
            url.append(address)
            ready.set()

        await serve(make_app(), "127.0.0.1", 0, on_ready=on_ready, stop=stop)

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    if not ready.wait(30):
        raise RuntimeError("the search server did not start")
    try:
        yield url[0]
    finally:
        loop, stop = holder["stop"]
        loop.call_soon_threadsafe(stop.set)
        thread.join(30)
