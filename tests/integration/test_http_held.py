"""The bodies being read by the HTTP client, counted in the crawl's page budget
(``PageBytes``) from the first chunk until the body is whole, and given back however
the read ends: whole, capped, or cut. A loopback aiohttp server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from ipaddress import ip_network

import pytest
from aiohttp import web

from trawl.clock import SystemClock
from trawl.config import Timeouts
from trawl.fetch.address import AddressGuard
from trawl.fetch.dns import DnsCache
from trawl.fetch.http import FetchError, HttpClient
from trawl.memory import PageBytes

CHUNK = 32 * 1024


class Server:
    def __init__(self) -> None:
        self.port = 0
        self.first_sent = asyncio.Event()
        self.go_on = asyncio.Event()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


def _app(server: Server) -> web.Application:
    async def slow(request: web.Request) -> web.StreamResponse:
        """A chunk, then the rest once the test says so (or a cut: ``/cut``)."""
        resp = web.StreamResponse(headers={"Content-Type": "text/html"})
        await resp.prepare(request)
        await resp.write(b"<p>" + b"x" * (CHUNK - 3))
        server.first_sent.set()
        await server.go_on.wait()
        if request.path == "/cut":
            assert request.transport is not None
            request.transport.abort()
            return resp
        for _ in range(3):
            await resp.write(b"y" * CHUNK)
        await resp.write_eof()
        return resp

    app = web.Application()
    app.router.add_get("/slow", slow)
    app.router.add_get("/cut", slow)
    return app


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    state = Server()
    runner = web.AppRunner(_app(state), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    state.port = runner.addresses[0][1]
    yield state
    await runner.cleanup()


@pytest.fixture
async def held() -> AsyncIterator[tuple[HttpClient, PageBytes]]:
    meter = PageBytes(1 << 20)
    clock = SystemClock()
    dns = DnsCache(guard=AddressGuard([ip_network("127.0.0.0/8")]), clock=clock)
    client = HttpClient(
        dns=dns,
        user_agent="trawl-test/1.0",
        timeouts=Timeouts(connect=5, first_byte=10, total=20),
        max_body_bytes=1 << 20,
        clock=clock,
        page_bytes=meter,
    )
    yield client, meter
    await client.close()
    await dns.close()


async def _until(condition: Callable[[], bool], what: str) -> None:
    for _ in range(10_000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError(f"never: {what}")


async def test_a_body_is_counted_while_it_is_read(
    server: Server, held: tuple[HttpClient, PageBytes]
) -> None:
    client, meter = held
    fetch = asyncio.create_task(client.get(server.url("/slow")))
    await server.first_sent.wait()
    await _until(lambda: meter.held >= CHUNK, "the first chunk counted")
    assert meter.held == CHUNK
    server.go_on.set()
    response = await fetch
    assert len(response.body) == 4 * CHUNK
    assert meter.held == 0  # whole: the fetch stage and the parse role hold it now


async def test_a_body_counts_half_the_budget_at_most(
    server: Server, held: tuple[HttpClient, PageBytes]
) -> None:
    client, meter = held
    meter.limit = 2 * CHUNK + 2  # half: one chunk and a byte
    fetch = asyncio.create_task(client.get(server.url("/slow")))
    await server.first_sent.wait()
    await _until(lambda: meter.held > 0, "the first chunk counted")
    assert meter.held == CHUNK
    server.go_on.set()
    for _ in range(100):  # the rest comes and is read: never over half the budget
        await asyncio.sleep(0)
        assert meter.held <= CHUNK + 1
    response = await fetch
    assert len(response.body) == 4 * CHUNK and meter.held == 0


async def test_a_capped_body_is_given_back(
    server: Server, held: tuple[HttpClient, PageBytes]
) -> None:
    client, meter = held
    server.go_on.set()
    response = await client.get(server.url("/slow"), max_body_bytes=CHUNK + 10)
    assert response.truncated == "length" and len(response.body) == CHUNK + 10
    assert meter.held == 0


async def test_a_body_cut_short_is_given_back(
    server: Server, held: tuple[HttpClient, PageBytes]
) -> None:
    client, meter = held
    fetch = asyncio.create_task(client.get(server.url("/cut")))
    await server.first_sent.wait()
    await _until(lambda: meter.held > 0, "the first chunk counted")
    server.go_on.set()
    with pytest.raises(FetchError):
        await fetch
    assert meter.held == 0
