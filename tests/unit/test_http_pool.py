"""The HTTP client's pool keeps at most ``max_idle`` connections idle, least recently
used closed first (real aiohttp servers on loopback)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from trawl.fetch._http_pool import IdleBoundedConnector


@pytest.fixture
async def servers() -> AsyncIterator[list[tuple[str, list[int]]]]:
    """Four servers; each answers with nothing and records the client port of each request."""
    out: list[tuple[str, list[int]]] = []
    running: list[TestServer] = []
    for _ in range(4):
        ports: list[int] = []

        async def handle(request: web.Request, ports: list[int] = ports) -> web.Response:
            peer = request.transport.get_extra_info("peername") if request.transport else None
            ports.append(peer[1] if peer else -1)
            return web.Response(text="ok")

        app = web.Application()
        app.router.add_get("/", handle)
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        out.append((str(server.make_url("/")), ports))
        running.append(server)
    yield out
    for server in running:
        await server.close()


async def _get(session: aiohttp.ClientSession, url: str) -> None:
    async with session.get(url) as r:
        assert await r.text() == "ok"


def _open(connector: IdleBoundedConnector) -> int:
    return sum(
        1 for conns in connector._conns.values() for proto, _t in conns if proto.is_connected()
    )


async def test_idle_connections_are_bounded_least_recently_used_first(
    servers: list[tuple[str, list[int]]],
) -> None:
    connector = IdleBoundedConnector(max_idle=2)
    async with aiohttp.ClientSession(connector=connector) as session:
        for url, _ports in servers:
            await _get(session, url)
        assert connector.idle == 2 and _open(connector) == 2
        # The two used last kept theirs: the same client port again.
        url3, ports3 = servers[3]
        await _get(session, url3)
        assert ports3[1] == ports3[0]
        # The first was closed: a new connection.
        url0, ports0 = servers[0]
        await _get(session, url0)
        assert ports0[1] != ports0[0]
        assert connector.idle == 2 and _open(connector) == 2


async def test_no_idle_connection_is_kept_at_zero(servers: list[tuple[str, list[int]]]) -> None:
    connector = IdleBoundedConnector(max_idle=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        url, ports = servers[0]
        await _get(session, url)
        await _get(session, url)
        assert ports[0] != ports[1] and connector.idle == 0 and _open(connector) == 0


async def test_a_bound_above_the_hosts_keeps_every_connection(
    servers: list[tuple[str, list[int]]],
) -> None:
    connector = IdleBoundedConnector(max_idle=10)
    async with aiohttp.ClientSession(connector=connector) as session:
        for _ in range(2):
            for url, _ports in servers:
                await _get(session, url)
        assert all(ports[0] == ports[1] for _url, ports in servers)
        assert connector.idle == 4 and _open(connector) == 4


def test_a_negative_bound_is_refused() -> None:
    with pytest.raises(ValueError, match="max_idle"):
        IdleBoundedConnector(max_idle=-1)
