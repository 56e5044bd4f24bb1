"""The hostile test web answers as its docstring says, and its log and oracle are right."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import zlib
from collections.abc import AsyncIterator

import aiohttp
import pytest
from multidict import CIMultiDictProxy

from tests.testweb import TestWeb

pytestmark = pytest.mark.filterwarnings("error")


@pytest.fixture
async def web() -> AsyncIterator[TestWeb]:
    async with TestWeb(
        header_delay=0.3,
        trickle_interval=0.02,
        big_body_bytes=300_000,
        bomb_bytes=4 * 1024 * 1024,
        robots_503_count=2,
        retry_after=3,
    ) as running:
        yield running


@pytest.fixture
async def client() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(auto_decompress=False) as session:
        yield session


async def fetch(
    client: aiohttp.ClientSession, web: TestWeb, host: str, path: str
) -> tuple[int, CIMultiDictProxy[str], bytes]:
    url = f"http://127.0.0.1:{web.port}{path}"
    async with client.get(url, headers={"Host": host}, allow_redirects=False) as response:
        return response.status, response.headers, await response.read()


async def test_addresses_and_resolve_map(web: TestWeb) -> None:
    assert "books.test" in web.hosts and "traps.test" in web.hosts
    assert web.url("books.test", "/fiction/1") == f"http://books.test:{web.port}/fiction/1"
    assert set(web.resolve_map().values()) == {"127.0.0.1"}
    assert set(web.resolve_map()) == set(web.hosts)
    with pytest.raises(KeyError):
        web.url("example.com")


async def test_host_dispatch(web: TestWeb, client: aiohttp.ClientSession) -> None:
    status, _, body = await fetch(client, web, "books.test", "/")
    assert status == 200 and b"<title>Books" in body
    status, _, _ = await fetch(client, web, "news.test", "/fiction/1")
    assert status == 404
    status, _, _ = await fetch(client, web, "unknown.test", "/")
    assert status == 421


@pytest.mark.parametrize(
    ("path", "status", "location"),
    [
        ("/301", 301, "/landing/301"),
        ("/302", 302, "/landing/302"),
        ("/307", 307, "/landing/307"),
        ("/308", 308, "/landing/308"),
        ("/chain3/1", 302, "/chain3/2"),
        ("/loop/a", 302, "/loop/b"),
        ("/loop/b", 302, "/loop/a"),
        ("/self", 302, "/self"),
        ("/relative/start", 302, "../landing/relative"),
        ("/to-private", 302, "http://10.0.0.1/"),
        ("/to-ftp", 302, "ftp://ftp.test/file.txt"),
        ("/to-disallowed", 302, "/forbidden/page"),
    ],
)
async def test_redirects(
    web: TestWeb, client: aiohttp.ClientSession, path: str, status: int, location: str
) -> None:
    got, headers, _ = await fetch(client, web, "redirects.test", path)
    assert (got, headers["Location"]) == (status, location)


async def test_redirect_chain_of_six_ends_on_landing(
    web: TestWeb, client: aiohttp.ClientSession
) -> None:
    path, hops = "/chain6/1", 0
    while True:
        status, headers, _ = await fetch(client, web, "redirects.test", path)
        if status != 302:
            break
        path, hops = headers["Location"], hops + 1
    assert (hops, path, status) == (6, "/landing/chain6", 200)
    _, headers, _ = await fetch(client, web, "redirects.test", "/cross-host")
    assert headers["Location"] == web.url("books.test", "/fiction/1")


async def test_error_statuses_and_counters(web: TestWeb, client: aiohttp.ClientSession) -> None:
    for code in (404, 410, 500):
        assert (await fetch(client, web, "errors.test", f"/{code}"))[0] == code
    flaky = [(await fetch(client, web, "errors.test", "/flaky"))[0] for _ in range(3)]
    assert flaky == [500, 500, 200]
    status, headers, _ = await fetch(client, web, "errors.test", "/unavailable")
    assert (status, headers["Retry-After"]) == (503, "3")
    assert (await fetch(client, web, "errors.test", "/unavailable"))[0] == 200
    status, headers, _ = await fetch(client, web, "errors.test", "/ratelimited")
    assert (status, headers["Retry-After"]) == (429, "2")
    assert (await fetch(client, web, "errors.test", "/ratelimited"))[0] == 200


async def raw_exchange(web: TestWeb, host: str, path: str, *, limit: int = 1 << 20) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", web.port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        await writer.drain()
        data = b""
        try:
            while len(data) < limit and (chunk := await reader.read(65536)):
                data += chunk
        except ConnectionResetError:
            data += b"<RST>"
        return data
    finally:
        writer.close()
        with contextlib.suppress(ConnectionResetError):
            await writer.wait_closed()


async def test_broken_responses(web: TestWeb) -> None:
    assert await raw_exchange(web, "errors.test", "/close-before-headers") == b""
    reset = await raw_exchange(web, "errors.test", "/reset-mid-body")
    assert reset.startswith(b"HTTP/1.1 200 OK") and b"Content-Length: 100000" in reset
    assert reset.endswith(b"<RST>")
    short = await raw_exchange(web, "errors.test", "/short-body")
    assert short.split(b"\r\n\r\n", 1)[1] == b"<html><body>" + b"x" * 988
    assert (await raw_exchange(web, "errors.test", "/bad-status-line")).startswith(b"HTTP/1.1 TWO")
    garbage = await raw_exchange(web, "errors.test", "/garbage-headers")
    assert b"this line has no colon\r\n" in garbage
    huge = await raw_exchange(web, "errors.test", "/huge-headers")
    assert len(huge.split(b"\r\n\r\n", 1)[0]) > 100_000
    # Broken answers are logged too, with no status.
    assert web.log.count("errors.test", "/reset-mid-body") == 1
    assert all(r.status is None and r.finished for r in web.log.requests_for("errors.test"))


async def test_slow_headers_and_stalls_can_be_cancelled(
    web: TestWeb, client: aiohttp.ClientSession
) -> None:
    url = f"http://127.0.0.1:{web.port}"
    with pytest.raises(asyncio.TimeoutError):
        async with asyncio.timeout(0.1):
            await client.get(f"{url}/slow-headers", headers={"Host": "slow.test"})
    async with client.get(f"{url}/slow-headers", headers={"Host": "slow.test"}) as response:
        assert response.status == 200  # after header_delay=0.3 s
    async with client.get(f"{url}/trickle", headers={"Host": "slow.test"}) as response:
        first = await response.content.read(31)
        assert first == b"<!DOCTYPE html><html><body><p>"
        assert await response.content.readexactly(3) == b"zzz"
    async with client.get(f"{url}/stall", headers={"Host": "slow.test"}) as response:
        assert response.headers["Content-Length"] == "100000"
        assert len(await response.content.readexactly(1024)) == 1024
        with pytest.raises(asyncio.TimeoutError):
            async with asyncio.timeout(0.1):
                await response.content.read(1)
    await asyncio.sleep(0.05)  # the server notices the clients left
    assert all(r.finished is not None for r in web.log.requests_for("slow.test"))


async def test_bodies(web: TestWeb, client: aiohttp.ClientSession) -> None:
    types = {"/pdf": "application/pdf", "/png": "image/png", "/text": "text/plain; charset=utf-8"}
    for path, ctype in types.items():
        _, headers, _ = await fetch(client, web, "bodies.test", path)
        assert headers["Content-Type"] == ctype
    _, _, png = await fetch(client, web, "bodies.test", "/png")
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    raw = await raw_exchange(web, "bodies.test", "/no-content-type")
    head, body = raw.split(b"\r\n\r\n", 1)
    assert b"content-type" not in head.lower() and body.startswith(b"<!DOCTYPE html>")
    _, headers, big = await fetch(client, web, "bodies.test", "/big")
    assert len(big) == int(headers["Content-Length"]) == 300_000
    _, headers, plain = await fetch(client, web, "bodies.test", "/wrong-encoding")
    assert headers["Content-Encoding"] == "gzip" and plain.startswith(b"<!DOCTYPE html>")
    _, headers, latin = await fetch(client, web, "bodies.test", "/charset/latin1-header-utf8-body")
    assert "ISO-8859-1" in headers["Content-Type"] and "Café".encode() in latin
    _, _, cyrillic = await fetch(client, web, "bodies.test", "/charset/cp1251-meta")
    assert "французских".encode("cp1251") in cyrillic and b"windows-1251" in cyrillic
    _, _, sjis = await fetch(client, web, "bodies.test", "/charset/shift-jis")
    assert "日本語".encode("shift_jis") in sjis
    _, headers, _ = await fetch(client, web, "bodies.test", "/xhtml")
    assert headers["Content-Type"] == "application/xhtml+xml"
    _, _, malformed = await fetch(client, web, "bodies.test", "/malformed")
    assert b"\x00" in malformed


async def test_gzip_bomb_is_small_and_inflates_hugely(
    web: TestWeb, client: aiohttp.ClientSession
) -> None:
    _, headers, bomb = await fetch(client, web, "bodies.test", "/gzip-bomb")
    assert headers["Content-Encoding"] == "gzip"
    assert bomb[:3] == b"\x1f\x8b\x08" and len(bomb) < 8 * 1024
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    assert inflater.decompress(bomb, 64).startswith(b"<!DOCTYPE html><html><body><p>")
    assert len(gzip.decompress(bomb)) == 30 + 4 * 1024 * 1024  # CRC and size check out


async def test_robots_variants(web: TestWeb, client: aiohttp.ClientSession) -> None:
    _, _, rules = await fetch(client, web, "robots-disallow.test", "/robots.txt")
    assert b"Disallow: /private/\nAllow: /private/open-letter" in rules
    _, _, delay = await fetch(client, web, "robots-delay.test", "/robots.txt")
    assert b"Crawl-delay: 2" in delay
    _, _, agents = await fetch(client, web, "robots-agents.test", "/robots.txt")
    assert b"User-agent: trawl" in agents and b"User-agent: GPTBot\nUser-agent: CCBot" in agents
    assert (await fetch(client, web, "robots-404.test", "/robots.txt"))[0] == 404
    assert (await fetch(client, web, "robots-500.test", "/robots.txt"))[0] == 500
    answers = [(await fetch(client, web, "robots-503.test", "/robots.txt"))[0] for _ in range(3)]
    assert answers == [503, 503, 200]
    status, headers, _ = await fetch(client, web, "robots-redirect.test", "/robots.txt")
    assert (status, headers["Location"]) == (301, "/config/robots-real.txt")
    hops, path = 0, "/robots.txt"
    while (got := await fetch(client, web, "robots-redirect-chain.test", path))[0] == 302:
        path, hops = got[1]["Location"], hops + 1
    assert hops == 7 and b"Disallow: /" in got[2]
    _, _, huge = await fetch(client, web, "robots-huge.test", "/robots.txt")
    assert len(huge) > 500 * 1024 and huge.endswith(b"Disallow: /beyond-limit/\n")
    _, _, garbage = await fetch(client, web, "robots-garbage.test", "/robots.txt")
    assert garbage.startswith(b"\xef\xbb\xbf") and b"\x00" in garbage


async def test_content_signals(web: TestWeb, client: aiohttp.ClientSession) -> None:
    _, _, one = await fetch(client, web, "content.test", "/articles/1")
    assert (await fetch(client, web, "content.test", "/dup/a"))[2] == one
    assert (await fetch(client, web, "mirror.test", "/articles/1"))[2] == one
    _, _, item = await fetch(client, web, "content.test", "/item?id=5&sid=abc123")
    assert b'<link rel="canonical" href="/item?id=5">' in item
    _, headers, _ = await fetch(client, web, "content.test", "/header-gptbot-noindex")
    assert headers["X-Robots-Tag"] == "GPTBot: noindex"
    _, headers, _ = await fetch(client, web, "ai.test", "/tdm-header")
    assert headers["tdm-reservation"] == "1" and headers["tdm-policy"].endswith("/tdm-policy.json")
    _, _, noai = await fetch(client, web, "ai.test", "/meta-noai")
    assert b'<meta name="robots" content="noai, noimageai">' in noai
    _, _, tdmrep = await fetch(client, web, "tdmrep.test", "/.well-known/tdmrep.json")
    entries = json.loads(tdmrep)
    assert entries[0]["location"] == "/reserved/*" and entries[0]["tdm-reservation"] == 1
    groups = web.duplicate_groups()
    assert (
        frozenset(
            [
                web.url("content.test", "/articles/1"),
                web.url("content.test", "/dup/a"),
                web.url("content.test", "/dup/b"),
                web.url("mirror.test", "/articles/1"),
            ]
        )
        in groups
    )
    assert len(groups) == 2  # and the item page under its three URLs
    (near,) = web.near_duplicate_groups()
    assert web.url("content.test", "/near/2") in near and len(near) == 4


async def test_traps(web: TestWeb, client: aiohttp.ClientSession) -> None:
    _, _, december = await fetch(client, web, "traps.test", "/calendar/2026/12")
    assert b'href="/calendar/2027/1"' in december and b'href="/calendar/2026/11"' in december
    links = [link.url for link in web.resource(web.url("traps.test", "/facets?color=red")).links]
    assert web.url("traps.test", "/facets?color=red&page=2") in links and len(links) == 18
    first = (await fetch(client, web, "traps.test", "/session/1"))[2]
    second = (await fetch(client, web, "traps.test", "/session/1"))[2]
    assert first != second and b'rel="canonical"' in first
    _, _, repeat = await fetch(client, web, "traps.test", "/repeat/a/b/a/b/")
    assert b'href="/repeat/a/b/a/b/a/b/"' in repeat
    assert len(web.resource(web.url("traps.test", "/many-links")).links) == 5000
    assert not web.resource(web.url("traps.test", "/deep/100")).links
    assert (await fetch(client, web, "traps.test", "/deep/101"))[0] == 404
    assert (await fetch(client, web, "traps.test", "/long/" + "x" * 70_000))[0] == 414


async def test_log_counts_concurrency_and_gaps(web: TestWeb, client: aiohttp.ClientSession) -> None:
    await asyncio.gather(*(fetch(client, web, "books.test", f"/fiction/{n}") for n in (1, 2, 3)))
    assert web.log.max_concurrency("books.test") >= 2  # three at once
    web.log.reset()
    assert web.log.count("books.test") == 0
    await fetch(client, web, "books.test", "/")
    await asyncio.sleep(0.2)
    await fetch(client, web, "books.test", "/about")
    await fetch(client, web, "books.test", "/about")
    assert web.log.max_concurrency("books.test") == 1
    assert web.log.count("books.test") == 3 and web.log.count("books.test", "/about") == 2
    gaps = web.log.gaps("books.test")
    assert gaps[0] >= 0.2 and web.log.min_gap("books.test") == min(gaps) >= 0
    record = web.log.requests_for("books.test")[0]
    assert record.method == "GET" and record.header("host") == "books.test"
    assert record.finished is not None and record.finished >= record.started
    assert record.status == 200


async def test_concurrency_counts_requests_still_in_flight(
    web: TestWeb, client: aiohttp.ClientSession
) -> None:
    url = f"http://127.0.0.1:{web.port}/slow-headers"
    slow = asyncio.ensure_future(client.get(url, headers={"Host": "slow.test"}))
    await asyncio.sleep(0.1)
    await fetch(client, web, "slow.test", "/")
    assert web.log.max_concurrency("slow.test") == 2
    assert web.log.min_gap("slow.test") < 0
    (await slow).release()


async def test_expected_crawl_of_the_baseline(web: TestWeb) -> None:
    expected = web.expected([web.url("books.test")])
    assert len(expected.pages) == 1 + 1 + 4 + 24 + 8
    assert expected.requested == expected.pages
    assert expected.out_of_scope == {web.url("news.test", "/")}
    assert expected.robots == {web.url("books.test", "/robots.txt")}
    assert max(expected.depths.values()) == 3
    both = web.expected([web.url("books.test"), web.url("news.test")])
    assert len(both.pages) == 38 + 1 + 1 + 3 + 15 and not both.out_of_scope


async def test_expected_crawl_keeps_the_rules(web: TestWeb) -> None:
    robots = web.expected([web.url("robots-disallow.test")])
    never = {
        web.url("robots-disallow.test", p)
        for p in ("/private/secret", "/files/report.pdf", "/search?q=books", "/~joe/notes")
    }
    assert robots.never_requested == never
    assert web.url("robots-disallow.test", "/private/open-letter") in robots.pages
    agents = web.expected([web.url("robots-agents.test")])
    assert web.url("robots-agents.test", "/members/public/1") in agents.pages
    assert web.url("robots-agents.test", "/not-for-trawl/1") in agents.never_requested
    training = web.expected([web.url("robots-agents.test")], user_agents=("trawl", "GPTBot"))
    assert not training.requested
    assert not web.expected([web.url("robots-500.test")]).requested
    chain = web.expected([web.url("redirects.test", "/chain6/1")])
    assert web.url("redirects.test", "/chain6/6") in chain.requested
    assert web.url("redirects.test", "/landing/chain6") in chain.never_requested
    redirects = web.expected([web.url("redirects.test")], scope=["redirects.test"])
    assert {"http://10.0.0.1/", "ftp://ftp.test/file.txt"} <= redirects.never_requested
    assert web.url("redirects.test", "/forbidden/page") in redirects.never_requested
    content = web.expected([web.url("content.test")], user_agents=("trawl", "GPTBot"))
    assert web.url("content.test", "/only-from/meta-nofollow") in content.never_requested
    assert web.url("content.test", "/meta-noindex") in content.requested - content.pages
    assert web.url("content.test", "/header-gptbot-noindex") not in content.pages
    assert content.canonical[web.url("content.test", "/item?id=5&sid=abc123")] == web.url(
        "content.test", "/item?id=5"
    )
    assert web.url("content.test", "/relative/top") in content.pages
    assert web.url("content.test", "/base/dir/page") in content.pages
    ai = web.expected(
        [web.url("ai.test"), web.url("tdmrep.test")], scope=["ai.test", "tdmrep.test"]
    )
    assert {u.rsplit(":", 1)[1].split("/", 1)[1] for u in ai.opted_out} == {
        "meta-noai",
        "header-noai",
        "tdm-header",
        "tdm-meta",
        "reserved/1",
        "reserved/2",
    }
    deep = web.expected([web.url("traps.test", "/deep/1")], max_depth=9)
    assert len(deep.requested) == 10
    assert deep.never_requested == {web.url("traps.test", "/deep/11")}
    calendar = web.expected([web.url("traps.test", "/calendar/2026/12")], max_depth=3)
    assert len(calendar.requested) == 7
