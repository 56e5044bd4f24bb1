"""The app the browser tests search: the real app over a fake searcher."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from tests.api.fakes import FakeSearcher, fake_index
from trawl.api.app import create_app
from trawl.api.search import SearchRoutes


def make_site_app(data: Path) -> web.Application:
    fake_index(data)
    searcher = FakeSearcher()
    routes = SearchRoutes(data, searcher_factory=lambda _d: searcher)
    return create_app(data, route_sets=[routes])
