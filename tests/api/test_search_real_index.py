"""``GET /api/v1/search`` and the page over a real index (``trawl.index``), no fake."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from yarl import URL

from tests.api.conftest import serving
from tests.unit.test_index_corpus import NOWHERE, add_docs
from trawl.api.app import create_app
from trawl.index.writer import IndexDoc

Client = TestClient[web.Request, web.Application]

FILLER = "Notes from the field, written down over a long season of walks. " * 4
PAGES = [
    ("Garden history", "The history of the walled garden and its espaliered pear trees."),
    ("Tomatoes", "Plant tomatoes in spring and water the garden every evening."),
    ("Bridges of Lisbon", "The bridge over the Tagus river is long and very windy."),
    ("Lighthouses", "A lighthouse keeper climbs the spiral stairs at dusk."),
]


def _doc(n: int, title: str, text: str) -> IndexDoc:
    return IndexDoc(
        key=f"hash{n}",
        url=f"http://site{n}.test/page/{n}",
        host=f"site{n}.test",
        title=title,
        text=FILLER + text,
        language="en",
        fetched_at=1_796_119_200.0 + n,  # 2026-12-01T10:00:0nZ
        cluster=f"hash{n}",
        where=NOWHERE,
    )


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    add_docs(tmp_path / "index", [_doc(n, title, text) for n, (title, text) in enumerate(PAGES)])
    async with serving(create_app(tmp_path)) as c:
        yield c


async def test_search_finds_the_page(client: Client) -> None:
    resp = await client.get("/api/v1/search", params={"query": "espaliered pear"})
    assert resp.status == 200
    body = await resp.json()
    assert body["total"] == 1
    (hit,) = body["results"]
    assert hit["link"] == "http://site0.test/page/0"
    assert hit["title"] == "Garden history"
    assert hit["host"] == "site0.test"
    assert hit["fetched_at"] == "2026-12-01T10:00:00Z"
    assert "<mark>" in hit["snippet"]


async def test_a_typo_is_corrected_by_the_index(client: Client) -> None:
    body = await (await client.get("/api/v1/search", params={"query": "lighthuose"})).json()
    assert body["corrected"] == "lighthouse"
    assert [h["link"] for h in body["results"]] == ["http://site3.test/page/3"]


@pytest.mark.parametrize("query", ['"unbalanced', "garden AND", "NOT"])
async def test_the_index_query_errors_are_400(client: Client, query: str) -> None:
    resp = await client.get("/api/v1/search", params={"query": query})
    assert resp.status == 400
    body = await resp.json()
    assert body["error"].startswith("bad query:")
    assert body["fields"]["query"]


async def test_the_page_over_the_index(client: Client) -> None:
    resp = await client.get("/", params={"query": "garden"})
    assert resp.status == 200
    text = await resp.text()
    assert "About 2 results (" in text
    assert '<a href="http://site0.test/page/0">Garden history</a>' in text


async def test_a_real_replacement_character_reaches_the_index(client: Client) -> None:
    # U+FFFD sent as UTF-8 is text: the index searches it (and finds the garden).
    resp = await client.get(URL("/api/v1/search?query=garden+%EF%BF%BD", encoded=True))
    assert resp.status == 200, await resp.text()
    body = await resp.json()
    assert body["query"] == "garden \ufffd"
    assert {h["link"] for h in body["results"]} >= {"http://site0.test/page/0"}
