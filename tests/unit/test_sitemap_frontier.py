"""Sitemap files as frontier work (trawl.frontier.sitemaps, Admission.offer_sitemaps)
and what a parsed file leads to (trawl.parse.sitemap_stage), on virtual time."""

from __future__ import annotations

from pathlib import Path

import pytest

from trawl import urls
from trawl.config import HostOverride
from trawl.frontier.admission import Admission
from trawl.frontier.revisit import Revisits
from trawl.frontier.shape import HostRules
from trawl.frontier.sitemaps import (
    ENTRY_DEPTH,
    SITEMAP_PRIORITY,
    SitemapLedger,
    SitemapRef,
    is_item,
    lastmod_priority,
)
from trawl.frontier.traps import ScopeFilter, TrapLimits
from trawl.jobs import ParseJob
from trawl.models import Location, NewUrl, UrlStatus
from trawl.parse.sitemap import ParsedSitemap, SitemapEntry
from trawl.parse.sitemap_stage import SitemapStage
from trawl.storage.base import CrawlStore, FetchRecord
from trawl.storage.memory import MemoryCrawlStore
from trawl.testing import FakeClock

DAY = 86400.0
S = "https://a.example"


def test_an_item_url_carries_the_file_and_its_grant() -> None:
    plain = SitemapRef.of(f"{S}/sitemap.xml")
    assert plain.item == f"{S}/sitemap.xml#sitemap"
    granted = SitemapRef.of("https://maps.example/a/s.xml", S)
    assert granted.item == f"https://maps.example/a/s.xml#sitemap={S}"
    for ref in (plain, granted):
        assert SitemapRef.parse(ref.item) == ref
        assert is_item(ref.item)
        assert urls.host_key(ref.item) == urls.host_key(ref.url)
    # A grant of the file's own origin at its root adds nothing: one item, not two.
    assert SitemapRef.of(f"{S}/sitemap.xml", S) == plain
    assert SitemapRef.of(f"{S}/maps/s.xml", S).grant == S
    # An index passes its grant on; one at its origin's root grants that origin.
    assert plain.child(f"{S}/maps/a.xml") == SitemapRef(f"{S}/maps/a.xml", S)
    assert plain.child(f"{S}/a.xml") == SitemapRef(f"{S}/a.xml")
    deep = SitemapRef.of(f"{S}/maps/index.xml")
    assert deep.child(f"{S}/maps/a.xml") == SitemapRef(f"{S}/maps/a.xml")
    assert granted.child("https://maps.example/a/b.xml").grant == S
    assert SitemapRef.parse(f"{S}/page") is None
    assert SitemapRef.parse(f"{S}/page#other") is None
    assert not is_item(f"{S}/page")


def test_fresher_lastmod_ranks_first() -> None:
    now = 1_000_000_000.0
    ranks = [
        lastmod_priority(now - age, now) for age in (60, 2 * DAY, 20 * DAY, 200 * DAY, 2000 * DAY)
    ]
    assert ranks == [ENTRY_DEPTH + r for r in range(5)]
    assert lastmod_priority(None, now) == ENTRY_DEPTH + 2
    assert lastmod_priority(now + 30 * DAY, now) == ENTRY_DEPTH + 2  # a future date is no news


def _admission(store: CrawlStore, *, cap: int = 3, **more: object) -> Admission:
    return Admission(
        frontier=store.frontier,
        scope=ScopeFilter("domain", hosts=["a.example"]),
        limits=TrapLimits(max_url_length=200),
        counters=store.counters,
        sitemaps=SitemapLedger(store.origin_files, cap=cap),
        **more,  # type: ignore[arg-type]
    )


def test_offered_sitemaps_keep_scope_nesting_blocks_and_the_host_cap() -> None:
    store = MemoryCrawlStore()
    admission = _admission(store, hosts=HostRules({"blocked.a.example": HostOverride(block=True)}))
    refs = [(SitemapRef.of(f"{S}/s{n}.xml"), 1) for n in range(5)]
    refs += [
        (SitemapRef.of("https://b.example/sitemap.xml"), 0),
        (SitemapRef.of("https://blocked.a.example/sitemap.xml"), 0),
        (SitemapRef.of(f"{S}/nested.xml"), 3),
        (SitemapRef.of(f"{S}/{'x' * 300}.xml"), 0),
    ]
    result = admission.offer_sitemaps(refs, now=0.0)
    assert [u.url for u in result.added] == [f"{S}/s{n}.xml#sitemap" for n in range(3)]
    assert all(u.priority == SITEMAP_PRIORITY and u.depth == 1 for u in result.added)
    assert result.dropped == {
        "over the host's sitemap cap": 2,
        "out of scope": 1,
        "host blocked": 1,
        "sitemap index too deep": 1,
        "url too long": 1,
    }
    store.commit()
    # The cap is kept in the store: a later offer (or a resumed crawl) finds it spent.
    again = _admission(store).offer_sitemaps([(SitemapRef.of(f"{S}/late.xml"), 0)], now=0.0)
    assert again.dropped == {"over the host's sitemap cap": 1}
    assert store.counters.get("sitemap:files queued") == 3


def test_a_sitemap_item_is_not_the_page_at_the_same_address() -> None:
    store = MemoryCrawlStore()
    admission = _admission(store)
    page = f"{S}/sitemap.xml"
    store.frontier.add([NewUrl(page, urls.fingerprint(page), "a.example", 1, 1)], now=0.0)
    result = admission.offer_sitemaps([(SitemapRef.of(page), 0)], now=0.0)
    assert len(result.added) == 1


# -- the parse role's side ------------------------------------------------------------


def _job(item: str) -> ParseJob:
    ref = SitemapRef.parse(item)
    assert ref is not None
    return ParseJob(
        host=urls.host_key(ref.url),
        fp=urls.fingerprint(item),
        url=item,
        final_url=ref.url,
        depth=0,
        fetched_at=0.0,
        status=200,
        headers=(),
        content_type="application/xml",
        warc=Location("w", 0, 1),
        kind="sitemap",
    )


def _stage(store: CrawlStore, clock: FakeClock, revisits: Revisits | None = None) -> SitemapStage:
    return SitemapStage(
        frontier=store.frontier,
        admission=_admission(store, cap=10),
        pages=store.pages,
        parse_queue=store.parse_queue,
        counters=store.counters,
        clock=clock,
        revisits=revisits,
        chunk=2,
    )


def _queued(store: CrawlStore, item: str, *, now: float = 0.0) -> tuple[int, ParseJob]:
    """The item in the frontier, fetched, its job in the parse queue."""
    job = _job(item)
    store.frontier.add([NewUrl(item, job.fp, job.host, 0, SITEMAP_PRIORITY)], now=now)
    lease = store.frontier.take(now)
    assert lease is not None and lease.url == item
    store.frontier.finish(lease, UrlStatus.FETCHED, host_ready_at=now)
    return store.parse_queue.put(job), job


def test_a_urlset_admits_its_urls_ranked_by_lastmod_and_records_the_outcome() -> None:
    store, clock = MemoryCrawlStore(), FakeClock(start=100 * DAY)
    stage = _stage(store, clock)
    seq, job = _queued(store, f"{S}/sitemap.xml#sitemap")
    parsed = ParsedSitemap(
        url=f"{S}/sitemap.xml",
        kind="urlset",
        urls=(
            SitemapEntry(f"{S}/old", clock.now() - 400 * DAY),
            SitemapEntry(f"{S}/today", clock.now() - 3600),
            SitemapEntry(f"{S}/unknown"),
            SitemapEntry("https://elsewhere.example/x"),
            SitemapEntry(f"{S}/today"),
        ),
        refused=(("foreign host", 2),),
    )
    reason = stage.apply(seq, job, parsed)
    assert reason == (
        "sitemap urlset: 7 URLs, 3 new, 1 known; refused 2 foreign host, 1 out of scope"
    )
    record = store.frontier.get(job.host, job.fp)
    assert record is not None and (record.status, record.reason) == (UrlStatus.PARSED, reason)
    assert len(store.parse_queue) == 0
    order = []
    while (lease := store.frontier.take(clock.now())) is not None:
        order.append((lease.url, lease.priority))
        store.frontier.finish(lease, UrlStatus.PARSED, host_ready_at=clock.now())
    assert order == [(f"{S}/today", 1), (f"{S}/unknown", 3), (f"{S}/old", 5)]
    counters = store.counters
    assert counters.get("sitemap:urls new") == 3
    assert counters.get("sitemap:urls refused:foreign host") == 2
    assert counters.get("sitemap:parsed") == 1


def test_an_index_queues_its_sitemaps_one_level_deeper_with_its_grant() -> None:
    store, clock = MemoryCrawlStore(), FakeClock()
    item = f"{S}/maps/index.xml#sitemap={S}"
    seq, job = _queued(store, item)
    parsed = ParsedSitemap(
        url=f"{S}/maps/index.xml",
        kind="index",
        sitemaps=(SitemapEntry(f"{S}/maps/a.xml"), SitemapEntry(f"{S}/maps/index.xml")),
    )
    reason = _stage(store, clock).apply(seq, job, parsed)
    # The index itself under its grant is known: a loop ends there.
    assert reason == "sitemap index: 2 sitemaps, 1 queued, 1 known"
    lease = store.frontier.take(clock.now())
    assert lease is not None
    assert (lease.url, lease.depth) == (f"{S}/maps/a.xml#sitemap={S}", 1)


def test_a_file_refused_whole_fails_with_its_reason() -> None:
    store, clock = MemoryCrawlStore(), FakeClock()
    seq, job = _queued(store, f"{S}/sitemap.xml#sitemap")
    parsed = ParsedSitemap(
        url=f"{S}/sitemap.xml", kind="none", error="DTD not allowed", problem="DTD not allowed"
    )
    reason = _stage(store, clock).apply(seq, job, parsed)
    assert reason == "sitemap not read: DTD not allowed"
    record = store.frontier.get(job.host, job.fp)
    assert record is not None and record.status is UrlStatus.FAILED
    assert store.counters.get("sitemap:problem:DTD not allowed") == 1


@pytest.mark.parametrize("waiting", [False, True])
def test_a_newer_lastmod_fetches_a_known_page_again_now(waiting: bool) -> None:
    store, clock = MemoryCrawlStore(), FakeClock(start=100 * DAY)
    revisits = Revisits(
        frontier=store.frontier,
        clock=clock,
        counters=store.counters,
        initial=7 * DAY,
        minimum=DAY,
        maximum=30 * DAY,
    )
    fetched_at = clock.now() - 10 * DAY
    pages = [f"{S}/changed", f"{S}/same"]
    for url in pages:
        fp = urls.fingerprint(url)
        store.frontier.add([NewUrl(url, fp, "a.example", 1, 1)], now=0.0)
        lease = store.frontier.take(clock.now())
        assert lease is not None
        store.frontier.finish(lease, UrlStatus.PARSED, host_ready_at=clock.now())
        warc = Location("w", 0, 1)
        store.pages.record_fetch(FetchRecord("a.example", fp, url, url, 200, fetched_at, warc))
        if waiting:  # its next visit is weeks away
            revisits.schedule("a.example", fp, None, changed=None)
    seq, job = _queued(store, f"{S}/sitemap.xml#sitemap", now=clock.now())
    parsed = ParsedSitemap(
        url=f"{S}/sitemap.xml",
        kind="urlset",
        urls=(
            SitemapEntry(f"{S}/changed", fetched_at + DAY),
            SitemapEntry(f"{S}/same", fetched_at - DAY),
        ),
    )
    _stage(store, clock, revisits).apply(seq, job, parsed)
    store.frontier.wake_due(clock.now())
    due = []
    while (lease := store.frontier.take(clock.now())) is not None:
        due.append(lease.url)
        store.frontier.finish(lease, UrlStatus.PARSED, host_ready_at=clock.now())
    assert due == [f"{S}/changed"]
    assert store.counters.get("revisit:lastmod") == 1


def test_a_sitemap_half_applied_before_a_crash_admits_each_url_once(tmp_path: Path) -> None:
    """kill -9 between two chunks of one file: the job is still queued, is applied
    again, and finds the first chunk's URLs (committed or not) seen."""
    from trawl.storage.open import open_store

    clock = FakeClock()
    store = open_store(tmp_path)
    seq, job = _queued(store, f"{S}/sitemap.xml#sitemap")
    store.commit()
    entries = tuple(SitemapEntry(f"{S}/p{n}") for n in range(7))
    parsed = ParsedSitemap(url=f"{S}/sitemap.xml", kind="urlset", urls=entries)
    steps = _stage(store, clock)._steps(seq, job, parsed)
    next(steps)  # the first chunk admitted
    store.commit()  # a group commit between chunks
    next(steps)  # the second chunk, not committed
    store.close(commit=False)  # kill -9
    store = open_store(tmp_path)
    pending = store.parse_queue.pending()
    assert [s for s, _ in pending] == [seq]
    reason = _stage(store, clock).apply(seq, pending[0][1], parsed)
    assert reason == "sitemap urlset: 7 URLs, 5 new, 2 known"
    store.commit()
    assert store.frontier.counts()[UrlStatus.QUEUED] == 7
    store.close()
