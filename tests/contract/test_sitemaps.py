"""Sitemaps on every backend: the state they keep (their frontier items, each host's
count of sitemap files in the origin-file store) follows the crash rule, so a file
half applied when the process died is applied again and admits each URL once."""

from __future__ import annotations

from tests.contract.conftest import Backend
from trawl import urls
from trawl.frontier.admission import Admission
from trawl.frontier.sitemaps import SITEMAP_PRIORITY, SitemapLedger, SitemapRef
from trawl.frontier.traps import ScopeFilter, TrapLimits
from trawl.jobs import ParseJob
from trawl.models import Location, NewUrl, UrlStatus
from trawl.parse.sitemap import ParsedSitemap, SitemapEntry
from trawl.parse.sitemap_stage import SitemapStage
from trawl.storage.base import CrawlStore
from trawl.testing import FakeClock

S = "https://a.example"
INDEX = f"{S}/maps/index.xml#sitemap={S}"


def _stage(store: CrawlStore) -> SitemapStage:
    admission = Admission(
        frontier=store.frontier,
        scope=ScopeFilter("host", hosts=["a.example"]),
        limits=TrapLimits(),
        counters=store.counters,
        sitemaps=SitemapLedger(store.origin_files, cap=50),
    )
    return SitemapStage(
        frontier=store.frontier,
        admission=admission,
        pages=store.pages,
        parse_queue=store.parse_queue,
        counters=store.counters,
        clock=FakeClock(),
        chunk=3,
    )


def _fetched(store: CrawlStore, item: str) -> tuple[int, ParseJob]:
    """A sitemap item leased, fetched and queued for the parse role, committed."""
    ref = SitemapRef.parse(item)
    assert ref is not None
    fp = urls.fingerprint(item)
    store.frontier.add([NewUrl(item, fp, "a.example", 0, SITEMAP_PRIORITY)], now=0.0)
    while (lease := store.frontier.take(0.0)) is not None and lease.url != item:
        store.frontier.finish(lease, UrlStatus.SKIPPED, host_ready_at=0.0)  # not this test's
    assert lease is not None
    store.frontier.finish(lease, UrlStatus.FETCHED, host_ready_at=0.0)
    job = ParseJob(
        host="a.example",
        fp=fp,
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
    seq = store.parse_queue.put(job)
    store.commit()
    return seq, job


def test_a_half_applied_sitemap_is_applied_again_after_a_crash(backend: Backend) -> None:
    store = backend.store()
    seq, job = _fetched(store, INDEX)
    parsed = ParsedSitemap(
        url=job.final_url,
        kind="index",
        sitemaps=tuple(SitemapEntry(f"{S}/maps/{n}.xml") for n in range(4)),
    )
    _stage(store).apply(seq, job, parsed)  # the children queued and the ledger written ...
    store = backend.restart(crash=True)  # ... but never committed
    pending = store.parse_queue.pending()
    assert [s for s, _ in pending] == [seq]
    reason = _stage(store).apply(seq, pending[0][1], parsed)
    store.commit()
    # On Redis the first pass's admissions outlived the crash: they are known now.
    assert reason.startswith("sitemap index: 4 sitemaps, ")
    record = store.frontier.get("a.example", job.fp)
    assert record is not None and record.status is UrlStatus.PARSED
    ledger = SitemapLedger(store.origin_files, cap=50).admitted("a.example")
    # Redis keeps a crashed worker's admissions but not its uncommitted count of them:
    # the cap may then count fewer files than were queued (at most one file's worth).
    assert ledger == (0 if backend.shared_frontier else 4)

    seq, job = _fetched(store, f"{S}/maps/0.xml#sitemap={S}")
    entries = tuple(SitemapEntry(f"{S}/page/{n}") for n in range(8))
    parsed = ParsedSitemap(url=job.final_url, kind="urlset", urls=entries)
    steps = _stage(store)._steps(seq, job, parsed)
    next(steps)  # the first chunk, then a group commit
    store.commit()
    next(steps)  # the second chunk: lost with the crash (but on Redis)
    store = backend.restart(crash=True)
    (pending_seq, pending_job), *_ = store.parse_queue.pending()
    assert pending_seq == seq
    reason = _stage(store).apply(seq, pending_job, parsed)
    store.commit()
    new = int(reason.split(", ")[1].split()[0])
    known = int(reason.split(", ")[2].split()[0])
    assert (new + known, known >= 3) == (8, True)
    store = backend.restart(crash=False)
    pages = [store.frontier.lookup(e.url, "a.example", urls.fingerprint(e.url)) for e in entries]
    assert all(p is not None and p.status is UrlStatus.QUEUED for p in pages)
    assert len(store.parse_queue.pending()) == 0
