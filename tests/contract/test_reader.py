"""The CrawlReader contract: a read-only view of exactly what was committed."""

from __future__ import annotations

from tests.contract.conftest import Backend
from tests.contract.test_pages import page
from trawl import urls
from trawl.models import Location, NewUrl, Position, UrlStatus
from trawl.storage.base import FetchRecord, RobotsRow

T0 = 1_000.0


def _new(u: str, depth: int = 1) -> NewUrl:
    u = urls.normalize(u)
    return NewUrl(url=u, fp=urls.fingerprint(u), host=urls.host_key(u), depth=depth, priority=depth)


def _fill(backend: Backend) -> None:
    store = backend.store()
    f = store.frontier
    f.add(
        [_new("https://a.example/"), _new("https://a.example/x"), _new("https://b.example/")],
        now=T0,
    )
    lease = f.take(T0)
    assert lease is not None
    f.finish(lease, UrlStatus.FAILED, reason="http 500", host_ready_at=T0)
    store.pages.add(page(1))
    store.pages.record_fetch(
        FetchRecord(
            host=lease.host,
            fp=lease.fp,
            url=lease.url,
            final_url=lease.url,
            status=500,
            fetched_at=T0,
            warc=Location("trawl-00001.warc.gz", 0, 10),
            outcome="error boom",
        )
    )
    store.robots.save(
        RobotsRow(host="https://a.example", status=200, body=b"", fetched_at=T0, expires_at=T0 + 1)
    )
    store.counters.add("status:500", 2)
    store.meta.set("config", "{}")
    backend.commit({"text": Position(1, 99)})


def test_the_reader_sees_nothing_before_a_commit(backend: Backend) -> None:
    store = backend.store()
    backend.commit()
    reader = store.reader()
    store.frontier.add([_new("https://a.example/")], now=T0)
    store.counters.add("x")
    # A shared frontier's admissions are seen at once (every worker must see them).
    assert len(list(reader.url_states())) == (1 if backend.shared_frontier else 0)
    assert reader.stats().counters.get("x", 0) == 0
    backend.commit()
    assert [u for u, _s, _r in reader.url_states()] == ["https://a.example/"]
    assert reader.stats().counters["x"] == 1
    reader.close()


def test_stats_states_and_meta(backend: Backend) -> None:
    _fill(backend)
    reader = backend.store().reader()
    stats = reader.stats()
    assert stats.urls[UrlStatus.FAILED] == 1
    assert stats.urls[UrlStatus.QUEUED] == 2
    assert stats.documents == 1
    assert stats.hosts == 2
    assert stats.counters["status:500"] == 2
    failed = list(reader.url_states(UrlStatus.FAILED))
    assert len(failed) == 1
    assert failed[0][1:] == (UrlStatus.FAILED, "http 500")
    assert len(list(reader.url_states())) == 3
    assert reader.meta("config") == "{}"
    assert reader.meta("missing") is None
    assert reader.committed_logs() == {"text": Position(1, 99)}
    assert [p.content_hash for p in reader.pages()] == ["h001"]
    assert reader.page("h001") == page(1)
    reader.close()


def test_a_urls_fetch_and_its_host(backend: Backend) -> None:
    _fill(backend)
    reader = backend.store().reader()
    failed_url = next(iter(reader.url_states(UrlStatus.FAILED)))[0]
    fetch = reader.fetch_of_url(failed_url)
    assert fetch is not None
    assert (fetch.status, fetch.outcome) == (500, "error boom")
    assert reader.fetch_of_url("https://nowhere.example/") is None
    host = urls.host_key(failed_url)
    view = reader.host(host)
    assert view is not None
    assert view.pages_fetched == 1
    assert view.urls[UrlStatus.FAILED] == 1
    assert view.errors == [("http 500", 1)]
    assert reader.host("unknown.example") is None
    assert reader.fetches_by_host() == {host: 1}
    assert reader.failed_by_host() == {host: 1}
    a = reader.host("a.example")
    assert a is not None
    assert [r.host for r in a.robots] == ["https://a.example"]
    reader.close()


def test_pages_of_gives_the_committed_pages_of_many_hashes(backend: Backend) -> None:
    store = backend.store()
    for n in range(1, 4):
        store.pages.add(page(n))
    backend.commit()
    store.pages.add(page(4))  # not committed: no reader sees it
    reader = store.reader()
    try:
        many = [f"h{n:03d}" for n in (3, 1, 4, 9, 1)] + [f"x{n}" for n in range(600)]
        found = reader.pages_of(many)
        assert sorted(found) == ["h001", "h003"]
        assert found["h003"] == reader.page("h003")
        assert reader.pages_of([]) == {}
    finally:
        reader.close()
