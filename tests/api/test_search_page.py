"""The search page at ``/``, rendered on the server: escaping, paging, messages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from yarl import URL

from tests.api.conftest import serving
from tests.api.fakes import FakeHit, FakeResults, FakeSearcher
from trawl.api.search import SearchRoutes
from trawl.web.search_page import render_results, safe_snippet

Client = TestClient[web.Request, web.Application]


async def test_home_page(client: Client) -> None:
    resp = await client.get("/")
    assert resp.status == 200
    assert resp.content_type == "text/html"
    text = await resp.text()
    assert '<form class="search" action="/" method="get"' in text
    assert 'name="query"' in text
    assert "autofocus" in text
    assert re.search(r'<(script|link)[^>]+(src|href)="https?:', text) is None


async def test_results_page(client: Client) -> None:
    text = await (await client.get("/", params={"query": "python crawler"})).text()
    assert "About 35 results (" in text and " ms)" in text
    assert text.count('<li class="hit">') == 10
    assert "<mark>python</mark>" in text
    assert '<a href="http://site0.test/page/0">Python crawler notes 0</a>' in text
    assert "<script>alert(1)</script>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<title>python crawler - trawl search</title>" in text
    assert 'value="python crawler"' in text


async def test_a_real_replacement_character_is_searched(client: Client) -> None:
    resp = await client.get(URL("/?query=python+%EF%BF%BD", encoded=True))
    assert resp.status == 200
    assert 'value="python \ufffd"' in await resp.text()
    resp = await client.get(URL("/?query=python+%FF", encoded=True))
    assert resp.status == 400
    assert "not valid UTF-8" in await resp.text()


async def test_paging_links(client: Client) -> None:
    text = await (await client.get("/", params={"query": "python", "page": "2"})).text()
    assert 'aria-current="page">2<' in text
    assert 'rel="prev" href="/?query=python"' in text
    assert 'rel="next" href="/?query=python&amp;page=3"' in text
    assert "Page 2 of about 35 results" in text
    assert '<ol class="hits" start="11">' in text
    last = await (await client.get("/", params={"query": "python", "page": "4"})).text()
    assert 'rel="next"' not in last
    assert last.count('<li class="hit">') == 5


async def test_typo_shows_the_correction(client: Client) -> None:
    text = await (await client.get("/", params={"query": "pythn"})).text()
    assert 'Showing results for <a href="/?query=python"><b>python</b></a>' in text
    assert 'Search instead for <a href="/?query=pythn">pythn</a>' in text


async def test_no_results(client: Client) -> None:
    text = await (await client.get("/", params={"query": "zzzzzz qqqqq"})).text()
    assert "No pages match <b>zzzzzz qqqqq</b>" in text


@pytest.mark.parametrize(
    "query",
    ['"unbalanced', "AND", "x" * 10_000, "nul\x00", "<script>alert(1)</script> AND"],
)
async def test_bad_query_is_a_clear_400_page(client: Client, query: str) -> None:
    resp = await client.get("/", params={"query": query})
    assert resp.status == 400
    text = await resp.text()
    assert 'role="alert"' in text
    assert "cannot" in text
    assert "<script>alert" not in text


async def test_bad_page_number(client: Client) -> None:
    resp = await client.get("/", params={"query": "python", "page": "zero"})
    assert resp.status == 400
    assert "page must be a whole number" in await resp.text()


async def test_user_text_is_escaped_everywhere(client: Client) -> None:
    evil = '"><img src=x onerror=alert(1)> python'
    text = await (await client.get("/", params={"query": evil})).text()
    assert "<img" not in text
    assert 'value="&quot;&gt;&lt;img src=x onerror=alert(1)&gt; python"' in text


async def test_no_index_page(tmp_path: Path) -> None:
    routes = SearchRoutes(tmp_path, searcher_factory=lambda _d: FakeSearcher())
    async with serving(_app(tmp_path, routes)) as c:
        resp = await c.get("/", params={"query": "python"})
        assert resp.status == 503
        assert "No index yet" in await resp.text()


def _app(data: Path, routes: SearchRoutes) -> web.Application:
    from trawl.api.app import create_app

    return create_app(data, route_sets=[routes])


async def test_static_assets_are_local(client: Client) -> None:
    css = await client.get("/static/search.css")
    assert css.status == 200
    assert css.content_type == "text/css"
    assert "url(http" not in await css.text()
    assert (await client.get("/static/search.js")).status == 200


@pytest.mark.parametrize(
    ("raw", "safe"),
    [
        ("a <mark>b</mark> c", "a <mark>b</mark> c"),
        ("<mark><mark>x</mark></mark>", "<mark>x</mark>"),
        ("<mark>open", "<mark>open</mark>"),
        ("</mark>x", "x"),
        ("<b>bold</b> &amp; &#39;q&#39;", "&lt;b&gt;bold&lt;/b&gt; &amp; &#39;q&#39;"),
        ('<img src=x onerror="alert(1)">', "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"),
        ("AT&T & co", "AT&amp;T &amp; co"),
        ("<MARK>up</MARK>", "&lt;MARK&gt;up&lt;/MARK&gt;"),
    ],
)
def test_safe_snippet(raw: str, safe: str) -> None:
    assert safe_snippet(raw) == safe


def test_links_other_than_http_are_not_clickable() -> None:
    hit = FakeHit("t", "s", "javascript:alert(1)", "h", 1.0, None)
    html = render_results(FakeResults("q", [hit], 1, 0.5, None, 1, 10), "q")
    assert 'href="javascript' not in html
    assert "javascript:alert(1)" in html


def test_pager_window_stays_within_limits() -> None:
    hit = FakeHit("t", "s", "http://a.test/", "a.test", 1.0, None)
    html = render_results(FakeResults("q", [hit], 1_000_000, 1.0, None, 100, 10), "q")
    assert 'aria-current="page">100<' in html
    assert 'rel="next"' not in html
    assert "page=91" in html
