"""A crawl of the spelling web (trawl.testing.spellingweb, served by aiohttp): tracking
parameters are dropped, each host's spellings are learned and respelled, and every
distinct page is still fetched, the ones a parameter chooses included."""

from __future__ import annotations

import asyncio
import ipaddress
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from trawl.cli import main
from trawl.config import CrawlConfig, Timeouts
from trawl.crawl import Crawl
from trawl.dedup.urlrules import RuleState
from trawl.service.reader import host_view, page_copy
from trawl.storage.memory import MemoryBlobStore, MemoryCrawlStore
from trawl.storage.open import open_reader
from trawl.testing.fakeclient import FakeClient, FakePage
from trawl.testing.requestlog import RequestLog
from trawl.testing.spellingweb import SpellingWeb, SpellingWebServer


def _page(title: str, links: list[str]) -> FakePage:
    text = f"{title}: the river bends past the mill where the miller kept his records. " * 20
    anchors = "".join(f'<a href="{u}">{u}</a> ' for u in links)
    return FakePage.html(
        f"<html><head><title>{title}</title></head><body><article><p>{text}</p>"
        f"</article><nav>{anchors}</nav></body></html>"
    )


def test_links_and_redirects_lose_their_tracking_parameters(tmp_path: Path) -> None:
    """On memory stores with a fake client: tags dropped from links and redirect
    targets; a redirect that only adds tags is followed with them (or its page would
    be lost); --keep-tracking keeps them all."""
    site = "https://site.example"
    home = _page("Home", ["/a?utm_source=x&id=4", "/b", "/c?gclid=7"])
    pages = {
        f"{site}/": home,
        f"{site}/?mc_cid=9": home,
        f"{site}/a?id=4": _page("Alpha", []),
        f"{site}/a?utm_source=x&id=4": _page("Alpha", []),
        f"{site}/b": FakePage.redirect("/b?utm_campaign=z"),
        f"{site}/b?utm_campaign=z": _page("Beta", []),
        f"{site}/c": FakePage.redirect("/d?fbclid=1"),
        f"{site}/c?gclid=7": FakePage.redirect("/d?fbclid=1"),
        f"{site}/d": _page("Delta", []),
        f"{site}/d?fbclid=1": _page("Delta", []),
    }

    def run(data: Path, **changes: Any) -> list[str]:
        client = FakeClient(pages)
        config = CrawlConfig(
            data_dir=data,
            seeds=(f"{site}/?mc_cid=9",),
            delay=0.0,
            parse_workers=0,
            commit_interval=0.05,
            fsync=False,
            min_free_space=0,
            **changes,
        )

        async def go() -> None:
            crawl = Crawl(config, store=MemoryCrawlStore(), blobs=MemoryBlobStore(), client=client)
            try:
                await crawl.run()
            finally:
                crawl.close()

        asyncio.run(go())
        return [u for _t, u in client.requests if not u.endswith(("/robots.txt", "/sitemap.xml"))]

    assert sorted(run(tmp_path / "a")) == [
        f"{site}/",
        f"{site}/a?id=4",
        f"{site}/b",
        f"{site}/b?utm_campaign=z",
        f"{site}/c",
        f"{site}/d",
    ]
    assert sorted(run(tmp_path / "b", strip_tracking=False)) == [
        f"{site}/?mc_cid=9",
        f"{site}/a?utm_source=x&id=4",
        f"{site}/b",
        f"{site}/b?utm_campaign=z",
        f"{site}/c?gclid=7",
        f"{site}/d?fbclid=1",
    ]


def crawl(web: SpellingWeb, data: Path, hosts: list[str]) -> tuple[RequestLog, int]:
    """Crawl ``hosts`` of ``web`` into ``data`` with the defaults (and no delay)."""

    async def go() -> tuple[RequestLog, int]:
        async with SpellingWebServer(web, log=True) as srv:
            config = CrawlConfig(
                data_dir=data,
                seeds=tuple(srv.url(h) for h in hosts),
                delay=0.0,
                allow_networks=(ipaddress.ip_network("127.0.0.0/8"),),
                resolve=srv.resolve_map(),
                scope="allowlist",
                allowed_hosts=tuple(hosts),
                parse_workers=0,
                timeouts=Timeouts(connect=5.0, first_byte=20.0, total=30.0),
                commit_interval=0.2,
                fsync=False,
            )
            run = Crawl(config)
            try:
                await run.run()
            finally:
                run.close()
            assert srv.log is not None
            return srv.log, srv.port

    return asyncio.run(go())


def test_spellings_are_learned_and_no_page_is_missed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    web = SpellingWeb(hosts=4, pages_per_host=60, seed=2)
    # shop-00 asks for Crawl-delay: 2, which would make this test slow.
    hosts = [h for h in web.hosts if not web.sample.plan(h).crawl_delay]
    log, port = crawl(web, tmp_path, hosts)

    ok = Counter(
        web.page_of(f"http://{r.host}:{port}{r.target}")
        for r in log
        if r.status == 200 and r.path != "/robots.txt"
    )
    wanted = {p for p in web.distinct_pages() if p.split("/")[0] in hosts}
    assert wanted - set(ok) == set(), "distinct pages never fetched"
    assert None not in ok
    fetches = sum(ok.values())
    # Without hygiene every linked spelling is fetched: over 3 a page here.
    assert fetches / len(wanted) < 1.6, (fetches, len(wanted))

    reader = open_reader(tmp_path)
    try:
        counters = reader.stats().counters
        rules = {(r.host, r.key): r for r in reader.url_rules()}
    finally:
        reader.close()
    assert counters.get("equivalence:rewritten", 0) + counters.get("equivalence:skipped", 0) > 50
    active = {name for name, r in rules.items() if r.state is RuleState.ACTIVE}
    news, blog, wiki = (
        f"{h}:{port}" for h in ("news-00.sample", "blog-00.sample", "wiki-00.sample")
    )
    # Each host's own spellings (web.profile), and never a parameter that chooses a page.
    assert {(news, "index:index.html"), (news, "param:ref"), (news, "slash")} <= active
    assert {(blog, "segment:amp"), (blog, "segment:print")} <= active
    assert {(wiki, "segment:print"), (wiki, "param:sessionid")} <= active
    for key in ("param:page", "param:id"):
        assert (wiki, key) not in active
    assert all(rules[name].rewrites > 0 for name in ((blog, "segment:amp"), (wiki, "param:ref")))
    # The tracking parameters never reached the frontier.
    assert not any("utm_" in r.target or "gclid" in r.target for r in log)

    # The host view of the API and of trawl stats --host shows the rules.
    view = host_view(tmp_path, blog, CrawlConfig(data_dir=tmp_path))
    assert view is not None
    shown = {r["rule"]: r for r in view["equivalences"]}
    assert shown["segment:amp"]["state"] == "active"
    assert shown["segment:amp"]["rewrites"] == rules[(blog, "segment:amp")].rewrites
    assert main(["stats", "--data", str(tmp_path), "--host", blog]) == 0
    out = capsys.readouterr().out
    assert "url equivalences" in out and "segment:amp" in out
    assert main(["stats", "--data", str(tmp_path)]) == 0
    assert "rules applied" in capsys.readouterr().out
    # A page asked for with a campaign tag is the page the crawl stored without it.
    copy = page_copy(tmp_path, f"http://{news}/?utm_source=x&fbclid=1", body=False)
    assert copy is not None and copy["url"] == f"http://{news}/"
