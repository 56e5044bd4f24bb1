"""Revisits: conditional requests, 304s, adaptive intervals, changed pages as events."""

from __future__ import annotations

import asyncio
import ipaddress
import itertools
from pathlib import Path

from aiohttp import web

from tests.integration.crawlkit import text_records
from trawl.archive.events import read_events
from trawl.config import CrawlConfig
from trawl.crawl import Crawl
from trawl.models import Position
from trawl.stats import read_meta
from trawl.storage.open import open_blobs

STATIC = "<html><head><title>Static</title></head><body><p>{}</p></body></html>"
ARTICLE = " ".join(["This page says the same thing every time it is asked."] * 20)
HOME = " ".join(
    f"The front page lists section {i} of the fresh site, with its own short summary."
    for i in range(20)
)
CHANGING = " ".join(
    f"Bulletin line {i}: weather, markets and the harbour timetable for today." for i in range(20)
)


async def test_recrawl_uses_validators_and_adapts(tmp_path: Path) -> None:
    seen: list[tuple[str, str | None, float]] = []
    changes = 0

    async def handle(request: web.Request) -> web.StreamResponse:
        nonlocal changes
        loop_time = asyncio.get_running_loop().time()
        seen.append((request.path, request.headers.get("If-None-Match"), loop_time))
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if request.path == "/":
            body = '<a href="/static">s</a><a href="/changing">c</a>' + STATIC.format(HOME)
            return web.Response(text=body, content_type="text/html")
        if request.path == "/static":
            if request.headers.get("If-None-Match") == '"v1"':
                return web.Response(status=304, headers={"ETag": '"v1"'})
            return web.Response(
                text=STATIC.format(ARTICLE + " Static."),
                content_type="text/html",
                headers={"ETag": '"v1"'},
            )
        changes += 1
        text = f"{CHANGING} Version {changes} of the changing page, new words {changes * 7}."
        return web.Response(text=STATIC.format(text), content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        config = CrawlConfig(
            data_dir=tmp_path,
            seeds=(f"http://fresh.test:{port}/",),
            delay=0.05,
            allow_networks=(ipaddress.ip_network("127.0.0.0/8"),),
            resolve={"fresh.test": "127.0.0.1"},
            parse_workers=0,
            commit_interval=0.2,
            fsync=False,
            recrawl=0.4,
            recrawl_min=0.2,
            recrawl_max=3.0,
            max_duration=5.0,
        )
        crawl = Crawl(config)
        try:
            summary = await crawl.run()
        finally:
            crawl.close()
    finally:
        await runner.cleanup()
    assert summary.stopped == "max duration"
    static = [(inm, t) for path, inm, t in seen if path == "/static"]
    changing = [t for path, _inm, t in seen if path == "/changing"]
    assert static[0][0] is None
    assert all(inm == '"v1"' for inm, _t in static[1:])  # conditional after the first
    assert len(static) >= 3
    gaps = [b - a for (_, a), (_, b) in itertools.pairwise(static)]
    assert gaps[-1] > gaps[0] * 1.5  # unchanged: the interval grows
    assert len(changing) > len(static)  # changed every time: visited more often
    assert summary.counters["fetch:not modified"] >= 2

    records = text_records(tmp_path)
    urls = [r["final_url"] for r in records]
    assert urls.count(f"http://fresh.test:{port}/static") == 1
    assert urls.count(f"http://fresh.test:{port}/changing") >= 3
    committed = read_meta(tmp_path, "log.events")
    assert committed is not None
    events = list(read_events(open_blobs(tmp_path), committed=Position.load(committed)))
    kinds = {e["type"] for e in events if e["final_url"].endswith("/changing")}
    assert kinds == {"page.new", "page.changed"}
