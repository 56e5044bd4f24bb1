"""``GET /api/v1/search`` and the app around it, with a fake searcher."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from yarl import URL

from tests.api.conftest import serving
from tests.api.fakes import FakeSearcher, fake_index
from trawl.api.app import SECURITY_HEADERS, build_openapi, create_app
from trawl.api.search import SearchRoutes

Client = TestClient[web.Request, web.Application]


async def test_search_returns_results(client: Client) -> None:
    resp = await client.get("/api/v1/search", params={"query": "python crawler"})
    assert resp.status == 200
    assert resp.content_type == "application/json"
    body = await resp.json()
    assert body["total"] == 35
    assert body["page"] == 1
    assert body["size"] == 10
    assert len(body["results"]) == 10
    assert body["took_ms"] >= 0
    assert "corrected" not in body
    hit = body["results"][0]
    assert set(hit) == {"title", "snippet", "link", "host", "crawl", "fetched_at"}
    assert "<mark>python</mark>" in hit["snippet"]
    assert "<script>" not in hit["snippet"]
    assert hit["host"] == "site0.test"


async def test_paging_and_size(client: Client) -> None:
    resp = await client.get("/api/v1/search", params={"query": "python", "page": "4", "size": 10})
    body = await resp.json()
    assert (body["page"], body["size"], len(body["results"])) == (4, 10, 5)
    resp = await client.get("/api/v1/search", params={"query": "python", "size": "100"})
    assert len((await resp.json())["results"]) == 35


async def test_typo_is_corrected(client: Client) -> None:
    body = await (await client.get("/api/v1/search", params={"query": "pythn"})).json()
    assert body["corrected"] == "python"
    assert body["total"] == 35


@pytest.mark.parametrize(
    ("params", "fields"),
    [
        ({}, {"query"}),
        ({"query": ""}, {"query"}),
        ({"query": "   "}, {"query"}),
        ({"query": "a", "page": "0"}, {"page"}),
        ({"query": "a", "page": ""}, {"page"}),
        ({"query": "a", "size": " 2"}, {"size"}),
        ({"query": "a", "page": "-1"}, {"page"}),
        ({"query": "a", "page": "1.5"}, {"page"}),
        ({"query": "a", "page": "abc"}, {"page"}),
        ({"query": "a", "page": "1001"}, {"page"}),
        ({"query": "a", "page": "9" * 40}, {"page"}),
        ({"query": "a", "page": "11", "size": "100"}, {"page"}),
        ({"query": "a", "size": "0"}, {"size"}),
        ({"query": "a", "size": "101"}, {"size"}),
        ({"query": "a", "size": "ten"}, {"size"}),
        ({"page": "x", "size": "y"}, {"query", "page", "size"}),
        ({"query": "x" * 10_000}, {"query"}),
        ({"query": "nul\x00byte"}, {"query"}),
        ({"query": "bell\x07"}, {"query"}),
        ({"query": "esc\x1b[31m"}, {"query"}),
        ({"query": "c1\x85c1"}, {"query"}),
        ({"query": "del\x7f"}, {"query"}),
    ],
)
async def test_bad_parameters_are_400_with_a_message_per_field(
    client: Client, params: dict[str, str], fields: set[str]
) -> None:
    resp = await client.get("/api/v1/search", params=params)
    assert resp.status == 400
    body = await resp.json()
    assert set(body["fields"]) == fields
    assert all(body["fields"].values())
    assert body["error"]


@pytest.mark.parametrize("query", ['"unbalanced', "AND", "python AND", "OR", '"', "NOT"])
async def test_query_errors_are_400(client: Client, query: str) -> None:
    resp = await client.get("/api/v1/search", params={"query": query})
    assert resp.status == 400
    body = await resp.json()
    assert body["error"].startswith("bad query:")
    assert "query" in body["fields"]


async def test_tabs_and_newlines_are_spaces(client: Client, searcher: FakeSearcher) -> None:
    resp = await client.get("/api/v1/search", params={"query": "python\t\ncrawler\r\n"})
    assert resp.status == 200
    assert (await resp.json())["query"] == "python crawler"


async def test_raw_bad_percent_encoding_is_not_a_500(client: Client) -> None:
    for raw in ("query=%ff%fe", "query=%ED%A0%80", "query=%", "query=%zz", "page=%00&query=a"):
        resp = await client.get("/api/v1/search?" + raw)
        assert resp.status in (200, 400), raw


async def test_a_real_replacement_character_is_searched(client: Client) -> None:
    # U+FFFD sent as UTF-8 (%EF%BF%BD) is text like any other.
    resp = await client.get(URL("/api/v1/search?query=python%20%EF%BF%BD", encoded=True))
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["query"] == "python \ufffd"
    resp = await client.get(URL("/api/v1/search?query=%EF%BF%BD+python&page=1", encoded=True))
    assert resp.status == 200, await resp.text()


@pytest.mark.parametrize(
    "raw", ["python%20%FF", "%ED%A0%80", "caf%C3", "%EF%BF%BD%FF", "a%C0%AF", "%F4%90%80%80"]
)
async def test_bytes_that_are_not_utf8_are_refused(client: Client, raw: str) -> None:
    resp = await client.get(URL(f"/api/v1/search?query={raw}", encoded=True))
    assert resp.status == 400
    assert (await resp.json())["fields"] == {"query": "is not valid UTF-8 text"}


async def test_missing_index_is_503(tmp_path: Path) -> None:
    routes = SearchRoutes(tmp_path, searcher_factory=lambda _d: FakeSearcher())
    async with serving(create_app(tmp_path, route_sets=[routes])) as c:
        resp = await c.get("/api/v1/search", params={"query": "python"})
        assert resp.status == 503
        assert resp.headers["Retry-After"]
        assert "no search index" in (await resp.json())["error"]


async def test_index_that_appears_later_is_opened(tmp_path: Path) -> None:
    now = [0.0]
    routes = SearchRoutes(
        tmp_path, searcher_factory=lambda _d: FakeSearcher(), clock=lambda: now[0]
    )
    async with serving(create_app(tmp_path, route_sets=[routes])) as c:
        assert (await c.get("/api/v1/search", params={"query": "python"})).status == 503
        fake_index(tmp_path)
        now[0] += 2.0
        assert (await c.get("/api/v1/search", params={"query": "python"})).status == 200


async def test_searcher_closed_on_cleanup(app: web.Application, searcher: FakeSearcher) -> None:
    async with serving(app) as c:
        assert (await c.get("/api/v1/search", params={"query": "python"})).status == 200
    assert searcher.closed


class Boom:
    def __init__(self) -> None:
        self.openapi_paths: Mapping[str, Any] = {"/api/v1/boom": {"get": {"responses": {}}}}
        self.openapi_schemas: Mapping[str, Any] = {"Boom": {"type": "object"}}
        self.openapi_security_schemes = {"token": {"type": "http", "scheme": "bearer"}}

    def register(self, app: web.Application) -> None:
        async def boom(request: web.Request) -> web.Response:
            raise RuntimeError("secret detail")

        app.router.add_get("/api/v1/boom", boom)
        app.router.add_get("/boom", boom)

    async def startup(self, app: web.Application) -> None:
        pass

    async def cleanup(self, app: web.Application) -> None:
        pass


async def test_unexpected_errors_are_json_500_without_detail(
    data_dir: Path, routes: SearchRoutes, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(data_dir, route_sets=[routes, Boom()])
    async with serving(app) as c:
        resp = await c.get("/api/v1/boom")
        assert resp.status == 500
        text = await resp.text()
        assert "secret" not in text and "Traceback" not in text
        assert (await resp.json())["error"]
        page = await c.get("/boom")
        assert page.status == 500
        assert "secret" not in await page.text()
    assert "secret detail" in caplog.text


async def test_404_and_405_are_json_under_api(client: Client) -> None:
    resp = await client.get("/api/v1/nothing")
    assert (resp.status, resp.content_type) == (404, "application/json")
    resp = await client.post("/api/v1/search")
    assert (resp.status, resp.content_type) == (405, "application/json")
    assert resp.headers["Allow"] == "GET"
    resp = await client.get("/nothing")
    assert resp.status == 404
    assert resp.content_type != "application/json"


async def test_security_headers_everywhere(client: Client) -> None:
    for path in ("/", "/?query=python", "/api/v1/search?query=x", "/static/search.css", "/x"):
        resp = await client.get(path)
        for name, value in SECURITY_HEADERS.items():
            assert resp.headers[name] == value, (path, name)
        assert resp.headers["Content-Security-Policy"].startswith("default-src 'self'")


async def test_openapi_document_merges_route_sets(data_dir: Path, routes: SearchRoutes) -> None:
    app = create_app(data_dir, route_sets=[routes, Boom()])
    async with serving(app) as c:
        resp = await c.get("/api/v1/openapi.json")
        assert resp.status == 200
        doc = await resp.json()
    assert doc["openapi"] == "3.1.0"
    assert doc["info"]["title"] and doc["info"]["version"]
    assert doc["servers"]
    assert {"/api/v1/search", "/api/v1/boom", "/api/v1/openapi.json"} <= set(doc["paths"])
    assert {"SearchResults", "SearchHit", "Error", "Boom"} <= set(doc["components"]["schemas"])
    assert doc["components"]["securitySchemes"]["token"]["scheme"] == "bearer"


def test_openapi_conflicting_fragments_are_refused(routes: SearchRoutes) -> None:
    other = Boom()
    other.openapi_schemas = {"SearchHit": {"type": "string"}}
    with pytest.raises(ValueError, match="SearchHit"):
        build_openapi([routes, other], title="t", version="1")


async def test_default_app_mounts_search(tmp_path: Path) -> None:
    async with serving(create_app(tmp_path)) as c:
        resp = await c.get("/api/v1/search", params={"query": "x"})
        assert resp.status == 503
        doc = await (await c.get("/api/v1/openapi.json")).json()
        assert "/api/v1/search" in doc["paths"]


def test_defaults_come_from_the_index() -> None:
    from trawl.api import query
    from trawl.index import QueryError
    from trawl.index import search as index_search

    assert SearchRoutes(Path("/nonexistent")).query_errors == (QueryError,)
    assert query.MAX_RESULTS == index_search.MAX_RESULTS
    assert query.MAX_SIZE == index_search.MAX_SIZE
