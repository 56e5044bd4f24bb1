"""A crawl of the JavaScript site with ``--render auto``, in real Chromium, checked
against the test web's oracle.

One crawl (module scope, one browser, a dozen pages): shells rendered and static pages
not, text and links from the rendered DOM, the JSON API fetched by the page's script,
robots.txt keeping the private API unfetched, loopback and private addresses refused
and recorded, an endless feed and a never-quiet page bounded, a busy page parsed from
its HTML, a third party loaded at its own pace, the DOM stored as a WARC conversion
record, and no browser left behind.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]
import pytest
from warcio.archiveiterator import ArchiveIterator

from tests.integration.crawlkit import DELAY, text_records, web_config
from tests.testweb import ExpectedCrawl, TestWeb
from tests.testweb._sites_js import PRIVATE_WORDS
from trawl.config import Timeouts
from trawl.crawl import Crawl
from trawl.records import CrawlSummary
from trawl.stats import url_states

WARCIO = Path(sys.executable).with_name("warcio")
JS = "js.test"
CDN = "jscdn.test"


@dataclass
class Result:
    web: TestWeb
    summary: CrawlSummary
    expected: ExpectedCrawl
    states: dict[str, tuple[str, str | None]]
    texts: dict[str, dict[str, Any]]
    data: Path
    browser_pids: list[int]

    def url(self, path: str, host: str = JS) -> str:
        return self.web.url(host, path)

    def text(self, path: str) -> dict[str, Any]:
        return self.texts[self.url(path)]


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Result:
    data = tmp_path_factory.mktemp("render")

    async def go() -> Result:
        web = TestWeb()
        await web.start()
        seeds = [web.url(JS)]
        config = web_config(
            web,
            data,
            seeds,
            render="auto",
            render_deadline=2.0,
            render_hosts=(CDN,),
            # Only the address the test web listens on: 127.0.0.2 and [::1] stay loopback.
            allow_networks=(ipaddress.ip_network("127.0.0.1/32"),),
            timeouts=Timeouts(connect=1.0, first_byte=2.0, total=3.0),
        )
        crawl = Crawl(config)
        try:
            summary = await crawl.run()
            render = crawl.fetcher.render
            assert render is not None
            pids = list(render.pool.pids)
        finally:
            crawl.close()
        expected = web.expected(seeds, render="auto", render_hosts=(CDN,), max_depth=5)
        await web.stop()
        texts = {r["url"]: r for r in text_records(data)}
        # Pages only: each host's /sitemap.xml (a 404 here) is a sitemap item of its own.
        states = {u: v for u, v in url_states(data).items() if "#sitemap" not in u}
        return Result(web, summary, expected, states, texts, data, pids)

    return asyncio.run(go())


def test_the_crawl_reaches_what_the_scripts_link_and_nothing_else(crawled: Result) -> None:
    assert crawled.summary.stopped == "done"
    assert set(crawled.states) == set(crawled.expected.requested)
    assert crawled.url("/hidden") in crawled.states  # linked only by a script
    for url in crawled.expected.requested:
        assert crawled.states[url] == ("parsed", "stored"), url


def test_shells_are_rendered_and_static_pages_are_not(crawled: Result) -> None:
    for url, record in crawled.texts.items():
        note = record["provenance"]["render"]
        if url in crawled.expected.rendered:
            assert note.startswith("rendered: auto: empty mount point #root"), (url, note)
        else:
            assert note == "not rendered: auto: no scripts", (url, note)
    assert crawled.summary.counters["render:rendered"] == len(crawled.expected.rendered)


def test_text_comes_from_the_rendered_dom(crawled: Result) -> None:
    for url, phrases in crawled.expected.rendered_text.items():
        record = crawled.texts[url]
        for phrase in phrases:
            assert phrase in record["title"] + "\n" + record["text"], (url, phrase)
    # Three articles, three texts: no shell's "Loading…" made them duplicates.
    hashes = {crawled.text(f"/app/articles/{n}")["content_hash"] for n in (1, 2, 3)}
    assert len(hashes) == 3


def test_robots_txt_keeps_the_private_api_unfetched(crawled: Result) -> None:
    log = crawled.web.log
    assert crawled.web.robots_violations() == []
    assert log.count(JS, "/api/private/text") == 0
    record = crawled.text("/robots-api")
    assert PRIVATE_WORDS not in record["text"]
    assert "/api/private/text (robots.txt)" in record["provenance"]["render"]
    # What the scripts may ask for was asked for, through the crawler.
    requested = {crawled.web.url(r.host, r.target) for r in log.records}
    assert crawled.expected.subresources <= requested
    assert requested & crawled.expected.never_requested == set()


def test_addresses_and_requests_a_crawler_never_makes_are_refused_and_recorded(
    crawled: Result,
) -> None:
    log = crawled.web.log
    for path in ("/secret", "/api/submit", "/api/beacon", "/ws", "/popup"):
        assert log.count(JS, path) == 0, path
    assert {r.host for r in log.records} <= {JS, CDN}  # 127.0.0.1 and elsewhere.test: never
    note = crawled.text("/reach")["provenance"]["render"]
    port = crawled.web.port
    assert f"http://127.0.0.2:{port}/secret (blocked address: loopback)" in note
    assert f"http://[::1]:{port}/secret (blocked address: loopback)" in note
    assert "http://10.0.0.1/secret (blocked address: private)" in note
    assert f"http://127.0.0.1:{port}/secret (third-party host)" in note
    counters = crawled.summary.counters
    assert counters["render:refused:blocked address"] == 3
    assert counters["render:refused:method POST"] >= 1
    assert counters["render:refused:navigation away"] >= 1
    # The navigation away was refused: the page's own text stayed.
    assert "Nothing left the browser" in crawled.text("/reach")["text"]


def test_endless_pages_are_bounded_and_the_crawl_goes_on(crawled: Result) -> None:
    feed = crawled.text("/feed")["provenance"]["render"]
    feed_pages = [r.target for r in crawled.web.log.records if r.path == "/api/feed"]
    # The first page and one per scroll, up to render_scrolls (3), or fewer if the
    # deadline came first (a loaded machine): never the endless rest.
    assert 1 <= len(feed_pages) <= 1 + 3
    assert "; scroll limit in " in feed or "; deadline in " in feed
    if "; scroll limit in " in feed:
        assert len(feed_pages) == 1 + 3
    forever = crawled.text("/forever")["provenance"]["render"]
    assert "; deadline in " in forever or "no DOM: page unresponsive (deadline)" in forever
    if "no DOM" not in forever:  # (on a machine so loaded the DOM came too late)
        assert "This page never stops working" in crawled.text("/forever")["text"]
    busy = crawled.text("/busy")
    assert "no DOM: page unresponsive" in busy["provenance"]["render"]
    assert "busy page's own words" in busy["text"]  # parsed from its HTML


def test_one_request_at_a_time_per_host_subresources_included(crawled: Result) -> None:
    log = crawled.web.log
    for host in (JS, CDN):
        assert log.count(host) > 0, host
        assert log.max_concurrency(host) == 1, host
        assert log.min_gap(host) >= DELAY * 0.9, host
    assert log.count(CDN, "/robots.txt") == 1  # read before its script was


def test_the_rendered_dom_is_a_warc_conversion_record_of_its_response(crawled: Result) -> None:
    responses: dict[str, str] = {}
    conversions: list[tuple[str, str, str]] = []
    for path in sorted((crawled.data / "warc").glob("*.warc.gz")):
        check = subprocess.run([WARCIO, "check", str(path)], capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        with path.open("rb") as f:
            for record in ArchiveIterator(f):
                h = record.rec_headers
                if record.rec_type == "response":
                    responses[h.get_header("WARC-Record-ID")] = h.get_header("WARC-Target-URI")
                elif record.rec_type == "conversion":
                    assert h.get_header("Content-Type") == "text/html; charset=utf-8"
                    assert h.get_header("WARC-Rendered-By").startswith("Chromium/")
                    conversions.append(
                        (
                            h.get_header("WARC-Target-URI"),
                            h.get_header("WARC-Refers-To"),
                            record.content_stream().read().decode(),
                        )
                    )
    with_dom = crawled.expected.rendered - {crawled.url("/busy")}
    assert {uri for uri, _ref, _dom in conversions} == with_dom
    for uri, ref, dom in conversions:
        assert responses[ref] == uri
        assert 'id="root"' in dom
    article = next(dom for uri, _r, dom in conversions if uri == crawled.url("/app/articles/2"))
    assert "Client-rendered article 2" in article
    # The third party's script was loaded (render_hosts): its widget is in the DOM.
    assert "Widget from the CDN" in article


def test_no_browser_is_left_behind(crawled: Result) -> None:
    assert crawled.browser_pids
    for pid in crawled.browser_pids:
        left = [
            p.info["pid"]
            for p in psutil.process_iter(["pid", "status"])
            if p.info["status"] != psutil.STATUS_ZOMBIE and _group(p.info["pid"]) == pid
        ]
        assert left == []


def _group(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None
