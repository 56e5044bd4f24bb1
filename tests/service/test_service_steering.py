"""Steering a running crawl of a real ``trawl serve``: seeds, limits, delay, delete."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp

from tests.service.test_service_api import AUTH, Server, crawl_body, wait_state
from tests.testweb import TestWeb
from trawl.storage.sqlite.hostleases import SqliteHostLeases


async def wait_fetched(s: aiohttp.ClientSession, url: str, limit: float = 60) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + limit
    while True:
        async with s.get(url) as r:
            doc = await r.json()
        if doc["progress"]["fetched"] >= 1:
            return
        assert loop.time() < end and doc["state"] == "running", doc
        await asyncio.sleep(0.1)


async def test_seeds_limits_and_delay_reach_the_running_crawl_then_delete(
    tmp_path: Path,
) -> None:
    async with TestWeb() as web:
        server = Server(tmp_path)
        await server.start()
        try:
            async with aiohttp.ClientSession() as s:
                base = server.url
                # Slow at first: 1 s between requests, at most 5 pages.
                body = crawl_body(web, delay=1.0, limits={"max_pages": 5})
                async with s.post(f"{base}/v1/crawls", json=body, headers=AUTH) as r:
                    crawl_id = (await r.json())["id"]
                url = f"{base}/v1/crawls/{crawl_id}"
                await wait_fetched(s, url)  # its process runs: what follows steers it
                async with s.delete(url, json={"confirm": crawl_id}, headers=AUTH) as r:
                    assert r.status == 409  # running: stop it first

                # Checked field by field, like a crawl request; the token is needed.
                async with s.patch(url, json={"limits": {"max_pages": 12}}) as r:
                    assert r.status == 401
                bad = {"limits": {"max_depth": 0, "max_in_flight": 3}, "delay": "x", "seeds": []}
                async with s.patch(url, json=bad, headers=AUTH) as r:
                    assert r.status == 400
                    fields = (await r.json())["fields"]
                assert set(fields) == {
                    "limits.max_depth",
                    "limits.max_in_flight",
                    "delay",
                    "seeds",
                }
                async with s.post(f"{url}/seeds", json={"seeds": ["ftp://x/"]}, headers=AUTH) as r:
                    assert r.status == 400 and "seeds[0]" in (await r.json())["fields"]
                async with s.patch(f"{base}/v1/crawls/nope", json={}, headers=AUTH) as r:
                    assert r.status == 404

                # More pages, no more waiting, and a second host, with a budget of 2 URLs.
                news_host = "news.test"
                change = {
                    "limits": {"max_pages": 12},
                    "delay": 0.02,
                    "hosts": {news_host: {"budget": 2, "priority": -1}},
                }
                async with s.patch(url, json=change, headers=AUTH) as r:
                    assert r.status == 202, await r.text()
                    answer = await r.json()
                assert answer["revision"] == 1 and answer["limits"]["max_pages"] == 12
                news = web.url("news.test")
                async with s.post(f"{url}/seeds", json={"seeds": [news]}, headers=AUTH) as r:
                    assert r.status == 202
                    assert (await r.json())["revision"] == 2

                doc = await wait_state(s, url, {"finished", "failed"})
                assert doc["state"] == "finished", (doc.get("error"), doc.get("stopped"))
                assert doc["stopped"] == "max pages", doc
                # Five pages at 1 s would have ended it: the new limit was in force.
                assert doc["progress"]["fetched"] == 12
                spec = doc["spec"]
                assert spec["revision"] == 2 and spec["limits"]["max_pages"] == 12
                assert spec["delay"] == 0.02 and news in spec["seeds"]
                assert [(h["revision"], sorted(h)) for h in spec["history"]] == [
                    (1, ["at", "revision", "set"]),
                    (2, ["at", "revision", "seeds"]),
                ]
                async with s.get(f"{base}/v1/events", params={"limit": 1000}) as r:
                    events = (await r.json())["events"]
                steering = [e for e in events if e["type"].startswith("crawl.")]
                assert [(e["type"], e["revision"]) for e in steering] == [
                    ("crawl.changed", 1),
                    ("crawl.seeds", 2),
                ]
                assert steering[0]["set"] == change and steering[1]["added"] == 1
                assert spec["hosts"] == {news_host: {"budget": 2, "priority": -1}}
                # The override reached the frontier: the host admits 2 URLs at most.
                host_url = f"{base}/v1/hosts/{news_host}:{web.port}"
                async with s.get(host_url, params={"crawl": crawl_id}) as r:
                    assert r.status == 200, await r.text()
                    assert (await r.json())["budget"] == 2
                asked = {
                    r.target
                    for r in web.log
                    if r.host.startswith(news_host)
                    and r.target not in ("/robots.txt", "/sitemap.xml")
                }
                assert len(asked) <= 2, asked
                # The server's crawls shared their host leases in DATA/hosts.
                leases = SqliteHostLeases(tmp_path / "hosts")
                try:
                    host = web.url("books.test").split("//")[1].rstrip("/")
                    assert leases.get(host, 0.0) is not None
                finally:
                    leases.close()

                # Ended: no more steering; deleted only when confirmed.
                async with s.patch(url, json=change, headers=AUTH) as r:
                    assert r.status == 409
                async with s.delete(url, headers=AUTH) as r:
                    assert r.status == 400 and "confirm" in (await r.json())["fields"]
                async with s.delete(url, json={"confirm": "other"}, headers=AUTH) as r:
                    assert r.status == 400
                async with s.delete(url, params={"confirm": crawl_id}, headers=AUTH) as r:
                    assert r.status == 200, await r.text()
                async with s.get(url) as r:
                    assert r.status == 404
                assert not (tmp_path / "crawls" / crawl_id).exists()
        finally:
            await server.stop()
