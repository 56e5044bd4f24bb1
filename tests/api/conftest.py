from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from tests.api.fakes import FakeSearcher, fake_index
from trawl.api.app import SERVER_LIMITS, create_app
from trawl.api.search import SearchRoutes


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return fake_index(tmp_path)


@pytest.fixture
def searcher() -> FakeSearcher:
    return FakeSearcher()


@pytest.fixture
def routes(data_dir: Path, searcher: FakeSearcher) -> SearchRoutes:
    return SearchRoutes(data_dir, searcher_factory=lambda _dir: searcher)


@pytest.fixture
def app(data_dir: Path, routes: SearchRoutes) -> web.Application:
    return create_app(data_dir, route_sets=[routes])


@asynccontextmanager
async def serving(app: web.Application) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    """A test client on a loopback server with the limits ``trawl serve`` uses."""
    server = TestServer(app, host="127.0.0.1")
    await server.start_server(**SERVER_LIMITS)
    async with TestClient(server) as c:
        yield c


@pytest.fixture
async def client(app: web.Application) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    async with serving(app) as c:
        yield c
