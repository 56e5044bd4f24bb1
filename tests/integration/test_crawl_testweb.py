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

from tests.integration.crawlkit import DELAY, web_config
from tests.testweb import ExpectedCrawl, TestWeb
from trawl.crawl import Crawl
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
    s = crawled.summary
    assert s.stopped == "done"
    assert s.snapshot.queued == s.snapshot.in_flight == s.snapshot.waiting == 0
    assert s.snapshot.parse_backlog == 0


def test_every_expected_url_is_reached_and_nothing_else(crawled: Result) -> None:
    known = set(crawled.states)
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
        assert crawled.states[url][0] in ("skipped", "failed"), url


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
    # 5xx robots.txt: nothing else fetched from that host, ever.
    assert r.state("robots-500.test", "/") == ("failed", "robots.txt unreachable")
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
    assert r.state("bodies.test", "/big")[0] == "parsed"
    assert r.state("bodies.test", "/malformed")[0] == "parsed"


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
    parsed = {u for u, (status, _r) in crawled.states.items() if status == "parsed"}
    parsed -= {u for u, (_s, r) in crawled.states.items() if r == "not modified"}
    assert {e["final_url"] for e in events} == parsed
    assert all(e["type"] == "page.new" for e in events)
    after = list(
        read_events(open_blobs(crawled.data), committed=Position.load(committed), after=10)
    )
    assert [e["id"] for e in after] == ids[10:]


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
