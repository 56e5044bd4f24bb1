"""A whole crawl of the hostile test web, checked against the web's own oracle.

One crawl of every host (module scope, ~25 s) and many checks on what it did: the
URLs fetched and never fetched, politeness from the server's request log, robots,
redirects, errors and retries, timeouts, caps, duplicates, and the files it wrote.
"""

from __future__ import annotations

import asyncio
import gzip
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from warcio.archiveiterator import ArchiveIterator

from tests.integration.crawlkit import DELAY, web_config
from tests.testweb import ExpectedCrawl, TestWeb
from trawl.crawl import Crawl
from trawl.fetch.robots_wait import ROBOTS_STOP
from trawl.records import CrawlSummary
from trawl.stats import url_states
from trawl.storage.place import CrawlPlace

TRAPS = "traps.test"


@dataclass
class Result:
    web: TestWeb
    summary: CrawlSummary
    expected: ExpectedCrawl
    states: dict[str, tuple[str, str | None]]
    data: Path
    place: CrawlPlace | None = None  # a fleet's crawl (test_fleet_testweb)

    def url(self, host: str, path: str) -> str:
        return self.web.url(host, path)

    def state(self, host: str, path: str) -> tuple[str, str | None]:
        return self.states[self.url(host, path)]

    def requested(self, host: str, path: str) -> int:
        return self.web.log.count(host, path)


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Result:
    data = tmp_path_factory.mktemp("crawl")

    async def go() -> Result:
        web = TestWeb(
            header_delay=3.0,
            retry_after=1,
            ratelimit_retry_after=1,
            robots_503_count=2,
            big_body_bytes=3 * 1024 * 1024,
            bomb_bytes=200 * 1024 * 1024,
        )
        await web.start()
        seeds = [web.url(h) for h in web.hosts]
        crawl = Crawl(web_config(web, data, seeds))
        try:
            summary = await crawl.run()
        finally:
            crawl.close()
        expected = web.expected(seeds, follow_nofollow_links=False, max_depth=5)
        await web.stop()
        return Result(web, summary, expected, url_states(data), data)

    return asyncio.run(go())


def _not_traps(urls: frozenset[str] | set[str]) -> set[str]:
    return {u for u in urls if f"//{TRAPS}:" not in u}


def test_crawl_ends_with_nothing_left(crawled: Result) -> None:
    # Nothing but robots-500.test's home page, which waits for its robots.txt: the
    # crawl ends after its patience, the URL left queued for a resume.
    s = crawled.summary
    assert s.stopped == ROBOTS_STOP
    assert s.robots_waiting == (1, 1)
    assert s.snapshot.queued == 1
    assert s.snapshot.in_flight == s.snapshot.waiting == 0
    assert s.snapshot.parse_backlog == 0


def _pages(states: dict[str, tuple[str, str | None]]) -> set[str]:
    """URLs of pages (a sitemap file's frontier item carries a fragment)."""
    return {u for u in states if "#sitemap" not in u}


def test_every_expected_url_is_reached_and_nothing_else(crawled: Result) -> None:
    known = _pages(crawled.states)
    expected = _not_traps(crawled.expected.requested)
    # The oracle follows links of duplicate pages; a crawl must not (their links are
    # the first copy's). Pages linked only from duplicates: the mirror's other article
    # links, and the sitemap linked only from the near-duplicates, whose main text is
    # exactly article 2's once the ads, navigation and comments are stripped.
    only_via_duplicates = {crawled.url("mirror.test", f"/articles/{n}") for n in range(2, 6)}
    only_via_duplicates.add(crawled.url("content.test", "/sitemap"))
    assert expected - known <= only_via_duplicates
    # Whatever else it knows was never requested (robots, blocked, ...) or is unmodeled.
    extra = _not_traps(known) - expected - crawled.expected.unmodeled
    assert extra <= set(crawled.expected.never_requested)
    for url in extra:
        left = "queued" if "//robots-500.test:" in url else "never"  # waits for robots.txt
        assert crawled.states[url][0] in ("skipped", "failed", left), url


def test_every_sitemap_file_ends_as_the_oracle_says(crawled: Result) -> None:
    expected = {k: v for k, v in crawled.expected.sitemaps.items() if f"//{TRAPS}:" not in k}
    known = {u: v for u, v in crawled.states.items() if "#sitemap" in u and f"//{TRAPS}:" not in u}
    assert set(known) == set(expected)
    for item, (status, reason) in expected.items():
        got_status, got_reason = known[item]
        assert (got_status, (got_reason or "")[: len(reason)]) == (status, reason), item


def test_every_sitemap_only_page_is_fetched(crawled: Result) -> None:
    hidden = crawled.expected.sitemap_only
    assert len(hidden) >= 13  # sitemaps.test's HIDDEN and the CDN's own page
    for url in hidden:
        assert crawled.states[url] == ("parsed", "stored"), url
        assert crawled.web.log.count(*_host_path(url)) == 1, url
    # Fresher first: one file's URLs, queued together, fetched in lastmod order.
    order = [
        rec.target
        for rec in crawled.web.log.requests_for("sitemaps.test")
        if rec.target.startswith("/hidden/gz/")
    ]
    assert order == ["/hidden/gz/fresh", "/hidden/gz/unknown", "/hidden/gz/old"]


def _host_path(url: str) -> tuple[str, str]:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.hostname or "", parts.path


def test_every_hostile_sitemap_is_recorded_with_its_reason(crawled: Result) -> None:
    def item(path: str, host: str = "sitemaps.test") -> tuple[str, str | None]:
        origin = crawled.url("sitemaps.test", "/")[:-1]
        return crawled.states[crawled.url(host, path) + f"#sitemap={origin}"]

    assert item("/maps/hostile/dtd.xml") == ("failed", "sitemap not read: DTD not allowed")
    assert item("/maps/hostile/namespace.xml") == (
        "failed",
        "sitemap not read: wrong namespace 'http://www.sitemaps.org/schemas/sitemap/9.9'",
    )
    assert "; malformed XML at line" in (item("/maps/hostile/malformed.xml")[1] or "")
    assert (item("/maps/hostile/bomb.xml.gz")[1] or "").endswith(
        "over 50 MiB decoded: the rest not read"
    )
    many = item("/maps/hostile/many.txt")[1] or ""
    assert many.startswith("sitemap text: 50,000 URLs, 0 new, 0 known; refused 50,000 foreign")
    assert many.endswith("more than 50,000 URLs: the rest not read")
    index = item("/maps/index.xml")[1] or ""
    assert index.startswith("sitemap index: 13 sitemaps, 11 queued, 0 known")
    assert "1 foreign sitemap" in index and "1 self reference" in index
    assert item("/maps/loop.xml") == ("parsed", "sitemap index: 1 sitemaps, 0 queued, 1 known")
    assert item("/private/sitemap.xml") == ("skipped", "robots")
    assert crawled.requested("sitemaps.test", "/private/sitemap.xml") == 0
    cdn = crawled.states[crawled.url("cdn.sitemaps.test", "/sitemap.xml") + "#sitemap"]
    assert cdn == ("parsed", "sitemap urlset: 1 URLs, 0 new, 0 known; refused 1 foreign host")
    counters = crawled.summary.counters
    for problem in ("DTD not allowed", "wrong namespace", "malformed XML", "more than 50,000 URLs"):
        assert counters[f"sitemap:problem:{problem}"] == 1, problem
    # Every sitemap response is in the WARC, under the file's own URL.
    warc = _warc_bodies(crawled.data)
    assert crawled.url("sitemaps.test", "/maps/pages.xml.gz") in warc
    assert crawled.url("sitemaps.test", "/maps/hostile/dtd.xml") in warc


def test_never_requested_urls_were_never_requested(crawled: Result) -> None:
    web = crawled.web
    requested = {web.url(r.host, r.target) for r in web.log.records}
    assert requested & set(crawled.expected.never_requested) == set()
    assert web.robots_violations() == []


def test_one_request_at_a_time_per_host_with_the_delay_between(crawled: Result) -> None:
    log = crawled.web.log
    for host in crawled.web.hosts:
        if log.count(host) == 0:
            continue
        assert log.max_concurrency(host) == 1, host
        # aiohttp retries a GET once when a server closes before answering: that retry
        # is the client library's, immediate, and only on the broken-on-purpose paths.
        if host == "errors.test":
            continue
        assert log.min_gap(host) >= DELAY * 0.9, host


def test_crawl_delay_is_honoured(crawled: Result) -> None:
    assert crawled.web.log.min_gap("robots-delay.test", include_robots=False) >= 2.0 * 0.95


def test_robots_variants(crawled: Result) -> None:
    r = crawled
    assert r.state("robots-disallow.test", "/private/secret") == ("skipped", "robots")
    assert r.state("robots-disallow.test", "/private/open-letter")[0] == "parsed"
    assert r.state("robots-agents.test", "/not-for-trawl/1") == ("skipped", "robots")
    assert r.state("robots-agents.test", "/members/public/1")[0] == "parsed"
    assert r.state("robots-404.test", "/private/1")[0] == "parsed"
    # 5xx robots.txt: nothing else fetched from that host, ever; its URL waits queued.
    assert r.state("robots-500.test", "/")[0] == "queued"
    assert {rec.target for rec in r.web.log.requests_for("robots-500.test")} == {"/robots.txt"}
    # 503 then 200: waited, then crawled by the rules that came.
    assert r.state("robots-503.test", "/page/1")[0] == "parsed"
    assert r.state("robots-503.test", "/private/1") == ("skipped", "robots")
    assert r.state("robots-redirect.test", "/private/1") == ("skipped", "robots")
    assert r.state("robots-huge.test", "/private/1") == ("skipped", "robots")
    assert r.state("robots-garbage.test", "/private/1") == ("skipped", "robots")


def test_redirects(crawled: Result) -> None:
    r = crawled
    assert r.state("redirects.test", "/chain3/1")[0] == "redirected"
    assert r.state("redirects.test", "/landing/chain3")[0] == "parsed"
    assert r.state("redirects.test", "/chain6/1") == ("failed", "too many redirects")
    assert r.url("redirects.test", "/landing/chain6") not in r.states
    # A loop ends with a reason on the URL that was wanted, each hop fetched once.
    assert r.state("redirects.test", "/loop/a") == ("failed", "redirect loop")
    assert r.state("redirects.test", "/loop/b") == ("failed", "redirect loop")
    assert r.requested("redirects.test", "/loop/a") == 1
    assert r.requested("redirects.test", "/loop/b") == 1
    assert r.state("redirects.test", "/self") == ("failed", "redirect loop")
    assert r.requested("redirects.test", "/self") == 1
    assert r.state("redirects.test", "/chain6/6") == ("failed", "too many redirects")
    assert "blocked address" in (r.state("redirects.test", "/to-private")[1] or "") or (
        r.state("redirects.test", "/to-private")[1] or ""
    ).endswith("(out of scope)")
    assert r.state("redirects.test", "/to-ftp")[0] == "failed"
    assert r.state("redirects.test", "/cross-host")[1] == (
        "-> " + r.url("books.test", "/fiction/1")
    ) or "books.test" in (r.state("redirects.test", "/cross-host")[1] or "")
    assert r.state("redirects.test", "/to-disallowed")[0] == "redirected"
    assert r.state("redirects.test", "/forbidden/page") == ("skipped", "robots")


def test_errors_retries_and_timeouts(crawled: Result) -> None:
    r = crawled
    assert r.state("errors.test", "/404") == ("failed", "http 404")
    assert r.state("errors.test", "/410") == ("failed", "http 410")
    assert r.state("errors.test", "/500") == ("failed", "http 500")
    assert r.requested("errors.test", "/500") == 3  # max_attempts
    assert r.state("errors.test", "/flaky")[0] == "parsed"
    assert r.requested("errors.test", "/flaky") == 3
    assert r.state("errors.test", "/unavailable")[0] == "parsed"
    assert r.state("errors.test", "/ratelimited")[0] == "parsed"
    status, reason = r.state("errors.test", "/reset-mid-body")
    assert status == "failed"
    assert reason is not None
    assert reason.startswith("reset")
    assert r.state("errors.test", "/bad-status-line")[1].startswith("protocol")  # type: ignore[union-attr]
    # Server text quoted in a reason (a bad status line spans lines) is one line.
    for _status, why in r.states.values():
        assert why is None or why.isprintable(), why
    assert "protocol: protocol" not in (r.state("errors.test", "/garbage-headers")[1] or "")
    assert r.state("slow.test", "/slow-headers")[1].startswith("timeout-first-byte")  # type: ignore[union-attr]
    assert r.state("slow.test", "/trickle")[1].startswith("timeout-total")  # type: ignore[union-attr]


def test_retry_after_is_honoured(crawled: Result) -> None:
    records = [
        rec for rec in crawled.web.log.requests_for("errors.test") if rec.target == "/ratelimited"
    ]
    assert len(records) == 2
    assert records[0].finished is not None
    assert records[1].started - records[0].finished >= 1.0 * 0.95


def test_bodies(crawled: Result) -> None:
    r = crawled
    assert r.state("bodies.test", "/pdf") == ("skipped", "content type application/pdf")
    assert r.state("bodies.test", "/png") == ("skipped", "content type image/png")
    assert r.state("bodies.test", "/text") == ("skipped", "content type text/plain")
    assert r.state("bodies.test", "/no-content-type")[0] == "parsed"
    assert r.state("bodies.test", "/xhtml") == ("parsed", "stored")
    # Capped; what the cap kept is the HTML prefix and zeros: no document.
    assert r.state("bodies.test", "/gzip-bomb") == ("parsed", "binary content")
    assert r.state("bodies.test", "/malformed")[0] == "parsed"


def test_oversized_bodies(crawled: Result) -> None:
    """Content-Length over the cap: refused before the body is read, the WARC record
    holding the headers only; a body cut at the cap (as received, or inflated): kept,
    marked ``WARC-Truncated: length`` and ``truncated`` in its text record."""
    r = crawled
    cap = 2 * 1024 * 1024  # crawlkit's max_body_bytes
    big = r.url("bodies.test", "/big")
    assert r.state("bodies.test", "/big") == (
        "skipped",
        f"too large: Content-Length {3 * 1024 * 1024} over the body cap",
    )
    assert r.summary.counters["skipped:too large"] == 1
    cut = {r.url("bodies.test", "/big-chunked"), r.url("bodies.test", "/gzip-long")}
    assert r.expected.truncated == cut
    for url in cut:
        assert r.states[url] == ("parsed", "stored"), url
    records = {str(rec["final_url"]): rec for rec in _records(r.data)}
    for url in cut:
        assert records[url]["truncated"] == "length"
        assert len(str(records[url]["text"])) > cap // 2
    assert {u for u, rec in records.items() if rec.get("truncated")} == cut
    warc = {}
    for f in sorted((r.data / "warc").glob("*.warc.gz")):
        with f.open("rb") as stream:
            for rec in ArchiveIterator(stream):
                if rec.rec_type == "response":
                    uri = rec.rec_headers.get_header("WARC-Target-URI")
                    warc[uri] = (
                        rec.rec_headers.get_header("WARC-Truncated"),
                        rec.content_stream().read(),
                    )
    assert warc[big] == ("length", b"")  # the headers, no body
    assert warc[r.url("bodies.test", "/big-chunked")][0] == "length"
    assert len(warc[r.url("bodies.test", "/big-chunked")][1]) == cap
    assert warc[r.url("bodies.test", "/gzip-long")][0] == "length"  # the inflated size
    assert warc[r.url("bodies.test", "/xhtml")][0] is None


def test_duplicates_canonical_and_robots_directives(crawled: Result) -> None:
    r = crawled
    group = [
        r.state("content.test", "/articles/1"),
        r.state("content.test", "/dup/a"),
        r.state("content.test", "/dup/b"),
        r.state("mirror.test", "/articles/1"),
    ]
    stored = [s for s in group if s == ("parsed", "stored")]
    dups = [s for s in group if (s[1] or "").startswith("duplicate of ")]
    assert len(stored) == 1
    assert len(dups) == 3
    assert r.state("content.test", "/item?id=5&sid=abc123")[1] == "canonical " + r.url(
        "content.test", "/item?id=5"
    )
    assert r.state("content.test", "/item?id=5")[1] == "stored"
    assert r.state("content.test", "/meta-noindex") == ("parsed", "noindex")
    assert r.state("content.test", "/header-noindex") == ("parsed", "noindex")
    assert r.url("content.test", "/only-from/meta-nofollow") not in r.states
    assert r.url("content.test", "/only-from/meta-noindex") in r.states
    assert r.url("content.test", "/nofollowed-target") not in r.states


def test_near_duplicates_keep_one_document_per_family(crawled: Result) -> None:
    r = crawled
    (family,) = r.web.near_duplicate_groups()
    states = {u: r.states[u] for u in family}
    kept = [u for u, s in states.items() if s == ("parsed", "stored")]
    assert len(kept) == 1
    for url, (status, outcome) in states.items():
        if url not in kept:
            assert (status, outcome) == ("parsed", f"near duplicate of {kept[0]}"), url
    # Other articles on the same template are kept as documents of their own.
    for n in (3, 4, 5):  # article 1 has exact copies elsewhere
        assert r.state("content.test", f"/articles/{n}")[1] == "stored"
    records = []
    for f in sorted((r.data / "text").glob("*.jsonl.gz")):
        records += [orjson.loads(line) for line in gzip.decompress(f.read_bytes()).splitlines()]
    urls = [rec["url"] for rec in records]
    assert sum(u in family for u in urls) == 1
    assert all(rec["provenance"]["near_cluster"] == rec["cluster"] for rec in records)


def test_traps_are_bounded_and_counted(crawled: Result) -> None:
    dropped = {k[8:]: v for k, v in crawled.summary.counters.items() if k.startswith("dropped:")}
    assert dropped["host budget"] > 0
    traps = [u for u in crawled.states if f"//{TRAPS}:" in u]
    assert len(traps) <= 150
    assert not any("/a/b/a/b/a/b/" in u for u in traps)


def test_warc_files_are_valid(crawled: Result) -> None:
    warcio = Path(sys.executable).with_name("warcio")
    files = sorted((crawled.data / "warc").glob("*.warc.gz"))
    assert files
    for f in files:
        out = subprocess.run([warcio, "check", str(f)], capture_output=True, text=True)
        assert out.returncode == 0, out.stdout + out.stderr
        index = subprocess.run([warcio, "index", str(f)], capture_output=True, text=True)
        assert index.returncode == 0


def test_text_records_once_each(crawled: Result) -> None:
    records = []
    for f in sorted((crawled.data / "text").glob("*.jsonl.gz")):
        records += [orjson.loads(line) for line in gzip.decompress(f.read_bytes()).splitlines()]
    hashes = [r["content_hash"] for r in records]
    assert len(hashes) == len(set(hashes))
    assert len(records) == crawled.summary.counters["parse:stored"]
    stored = {u for u, (st, reason) in crawled.states.items() if reason == "stored"}
    assert {r["final_url"] for r in records} == stored
    for rec in records:
        assert set(rec) >= {"url", "final_url", "fetch_time", "status", "title", "text"}
        assert rec["warc"]["length"] > 0


def test_page_events_once_per_parsed_page(crawled: Result) -> None:
    from trawl.archive.events import read_events
    from trawl.models import Position
    from trawl.stats import read_meta
    from trawl.storage.open import open_blobs

    committed = read_meta(crawled.data, "log.events")
    assert committed is not None
    events = list(read_events(open_blobs(crawled.data), committed=Position.load(committed)))
    ids = [e["id"] for e in events]
    assert ids == list(range(1, len(ids) + 1))
    parsed = {u for u in _pages(crawled.states) if crawled.states[u][0] == "parsed"}
    parsed -= {u for u, (_s, r) in crawled.states.items() if r == "not modified"}
    assert {e["final_url"] for e in events} == parsed
    assert all(e["type"] == "page.new" for e in events)
    after = list(
        read_events(open_blobs(crawled.data), committed=Position.load(committed), after=10)
    )
    assert [e["id"] for e in after] == ids[10:]


# -- the link graph (issue 12) ------------------------------------------------------------

# Outcomes whose pages' links the crawl takes (the others' links are another page's).
_LINKS_TAKEN = ("stored", "noindex", "no text", "opted out:", "low quality:")


def _model_links(crawled: Result, source: str) -> tuple[dict[str, str | None], set[str]] | None:
    """What the web's model says ``source`` links to: followed target -> its first
    anchor text (None: not known to the model), and the targets not followed; None
    for a page the model does not describe link by link."""
    from tests.testweb._model import normal_url
    from trawl import urls
    from trawl.errors import UrlError
    from trawl.parse.page import _LINK_RELS

    resource = crawled.web.resource(source)
    if resource.serve is not None or not resource.modeled or len(resource.links) > 5000:
        return None
    page_nofollow = resource.directive_applies("nofollow", ("trawl",))
    followed: dict[str, str | None] = {}
    unfollowed: set[str] = set()
    for link in resource.links:
        if link.tag == "link" and not _LINK_RELS.intersection(link.rel.lower().split()):
            continue
        try:
            target = urls.normalize(normal_url(link.url))
        except UrlError:
            continue
        if page_nofollow or link.nofollow:
            unfollowed.add(target)
        elif target not in followed:
            followed[target] = link.text
    return followed, unfollowed - set(followed)


def test_the_link_graph_holds_the_links_of_every_page_followed(
    crawled: Result, tmp_path: Path
) -> None:
    import pyarrow.dataset as ds  # type: ignore[import-untyped]

    from trawl.export_links import export_links

    summary = export_links(crawled.place or crawled.data, tmp_path / "links")
    rows = ds.dataset(tmp_path / "links", format="parquet").to_table().to_pylist()
    assert summary.links == len(rows) > 0
    by_source: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        by_source.setdefault(str(row["source_url"]), []).append(row)
    taken = {
        url
        for url, (status, reason) in crawled.states.items()
        if status == "parsed" and (reason or "").startswith(_LINKS_TAKEN)
    }
    described = {u: m for u in taken if (m := _model_links(crawled, u)) is not None}
    # A copy found only when its text is claimed (a fleet's two workers keeping the
    # same text, or near copies, at once: parse/stage.py ``claim`` and ``keep``) had its
    # links taken before: they are in the graph. Its reason is the one a copy found
    # before its links were taken gets, so either may be in the graph.
    late = {
        url
        for url, (status, reason) in crawled.states.items()
        if status == "parsed" and (reason or "").startswith(("near duplicate of", "duplicate of"))
    }
    extra = set(by_source) - taken - late
    assert set(by_source) <= taken | late, {u: crawled.states.get(u) for u in extra}
    assert {u for u, m in described.items() if any(m)} <= set(by_source)
    checked = 0
    for source, links in by_source.items():
        assert len({row["fetched_at"] for row in links}) == 1  # each page once
        assert [row["position"] for row in links] == list(range(len(links)))
        if source not in described:
            continue
        followed, unfollowed = described[source]
        got = {str(row["target_url"]): row for row in links}
        assert {u for u, r in got.items() if not r["nofollow"]} == set(followed), source
        assert {u for u, r in got.items() if r["nofollow"]} == unfollowed, source
        for target, text in followed.items():
            if text is not None:
                assert got[target]["anchor"] == " ".join(text.split())[:100], (source, target)
        checked += 1
    assert checked >= 100, checked


# -- bodies that must be decoded before they are text, or never be (issue 16) ----------------

ENC = "encodings.test"


def _records(data: Path) -> list[dict[str, object]]:
    out = []
    for f in sorted((data / "text").glob("*.jsonl.gz")):
        out += [orjson.loads(line) for line in gzip.decompress(f.read_bytes()).splitlines()]
    return out


def _warc_bodies(data: Path) -> dict[str, list[bytes]]:
    from warcio.archiveiterator import ArchiveIterator

    out: dict[str, list[bytes]] = {}
    for f in sorted((data / "warc").glob("*.warc.gz")):
        with f.open("rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type == "response":
                    uri = record.rec_headers.get_header("WARC-Target-URI")
                    out.setdefault(uri, []).append(record.raw_stream.read())
    return out


def test_the_oracle_names_every_body_that_is_no_document(crawled: Result) -> None:
    refused = crawled.expected.refused
    assert crawled.url(ENC, "/coding/unknown-binary") in refused
    assert crawled.url("bodies.test", "/gzip-bomb") in refused
    assert sum(f"//{ENC}:" in u for u in refused) == 13
    assert not set(refused) & crawled.expected.pages


def test_refused_and_binary_bodies_end_with_their_reason_and_no_text(crawled: Result) -> None:
    r = crawled
    for url, reason in r.expected.refused.items():
        status, got = r.states[url]
        assert (got or "").startswith(reason), (url, got)
        assert status == ("failed" if reason.startswith("content-encoding") else "parsed"), url
    refused = set(r.expected.refused)
    assert not refused & {str(rec["final_url"]) for rec in _records(r.data)}
    from trawl.storage.open import open_reader

    reader = r.place.reader() if r.place is not None else open_reader(r.data)
    try:
        indexed = {p.url for p in reader.pages()}
    finally:
        reader.close()
    assert not refused & indexed  # no page row, so nothing to index
    codings = [u for u, why in r.expected.refused.items() if why.startswith("content-encoding")]
    counters = r.summary.counters
    assert counters["error:content-encoding"] == len(codings) == 5
    binary = len(r.expected.refused) - len(codings)
    assert counters["parse:binary"] == binary


def test_refused_codings_are_kept_in_the_warc_as_received(crawled: Result) -> None:
    warc = _warc_bodies(crawled.data)
    for url, reason in crawled.expected.refused.items():
        if reason.startswith("content-encoding"):
            assert warc[url] == [crawled.web.resource(url).body], url


@pytest.mark.parametrize("coding", ["br", "zstd"])
def test_br_and_zstd_pages_are_decoded_stored_and_followed(crawled: Result, coding: str) -> None:
    r = crawled
    assert r.state(ENC, f"/coding/{coding}") == ("parsed", "stored")
    assert r.state(ENC, f"/via/{coding}") == ("parsed", "stored")
    (record,) = [
        rec for rec in _records(r.data) if rec["final_url"] == r.url(ENC, f"/coding/{coding}")
    ]
    assert record["title"] == f"Sent as {coding}"
    assert record["language"] == "en"
    request = r.web.log.requests_for(ENC)[0]
    assert request.header("accept-encoding") == "gzip, deflate, br, zstd"


def test_bombs_in_br_and_zstd_stop_at_the_cap(crawled: Result) -> None:
    for coding in ("br", "zstd"):
        assert crawled.state(ENC, f"/coding/{coding}-bomb") == ("parsed", "binary content")


@pytest.mark.parametrize(
    "path",
    [
        "/charset/utf16-header-ascii-body",
        "/charset/utf32-header-ascii-body",
        "/charset/utf16-undeclared",
        "/charset/few-bad-bytes",
    ],
)
def test_lying_charsets_give_the_real_english_text(crawled: Result, path: str) -> None:
    r = crawled
    assert r.state(ENC, path) == ("parsed", "stored")
    (record,) = [rec for rec in _records(r.data) if rec["final_url"] == r.url(ENC, path)]
    assert record["language"] == "en"
    text = str(record["text"])
    assert text.isascii() or path.endswith("few-bad-bytes")
    assert len(text.split()) > 50
