"""The CrawlStore contract: all stores of a crawl become durable together, at commit.

A crash loses every write since the last commit and nothing before it; so work
acknowledged in a commit is never redone, and work not acknowledged is redone once.
"""

from __future__ import annotations

import pytest

from tests.contract.conftest import Backend
from tests.contract.test_frontier import T0, url
from tests.contract.test_pages import fetch, page
from tests.contract.test_parse_queue import job
from tests.contract.test_small_stores import GOOD
from trawl.dedup.minhash import MinHasher
from trawl.dedup.urlrules import UrlRule
from trawl.errors import DataDirInUseError
from trawl.models import Position, UrlStatus
from trawl.storage.base import CrawlStore

SIGNATURE = MinHasher().signature("one two three four five six seven eight nine ten " * 20)


def write_everything(store: CrawlStore) -> None:
    """One write through every store of the bundle."""
    store.frontier.add([url("a.example", "/new")], now=T0)
    store.pages.add(page(1))
    store.pages.record_fetch(fetch(1))
    store.parse_queue.put(job(1))
    store.counters.add("status:200")
    store.meta.set("config", "{}")
    store.robots.save(GOOD)
    store.origin_files.save("k", "o", status=200, body=b"x", fetched_at=1.0, expires_at=2.0)
    assert SIGNATURE is not None
    store.near_index(MinHasher()).add(SIGNATURE, "d1", "d1")
    store.url_rules.save(UrlRule("a.example", "slash"))


def visible(store: CrawlStore) -> dict[str, object]:
    """What each store shows of ``write_everything``."""
    new = url("a.example", "/new")
    return {
        "frontier": store.frontier.get(new.host, new.fp) is not None,
        "page": store.pages.find(page(1).content_hash) is not None,
        "fetch": store.pages.fetch_of("a.example", 1) is not None,
        "parse queue": len(store.parse_queue) == 1,
        "counter": store.counters.get("status:200") == 1,
        "meta": store.meta.get("config") == "{}",
        "robots": store.robots.load("a.example") is not None,
        "origin file": store.origin_files.load("k", "o") is not None,
        "near": store.near_index(MinHasher()).count() == 1,
        "url rules": store.url_rules.rules("a.example") != [],
    }


def test_writes_are_read_back_before_the_commit(backend: Backend) -> None:
    write_everything(backend.store())
    assert all(visible(backend.store()).values())


def test_a_crash_before_commit_loses_every_write_and_nothing_committed(backend: Backend) -> None:
    store = backend.store()
    store.frontier.add([url("a.example", "/old")], now=T0)
    store.counters.add("status:404")
    backend.commit()
    write_everything(store)
    store = backend.restart(crash=True)
    shown = visible(store)
    # A shared frontier's admissions were seen by the other workers: they stay.
    assert shown.pop("frontier") is backend.shared_frontier
    assert not any(shown.values()), shown
    old = url("a.example", "/old")
    assert store.frontier.get(old.host, old.fp) is not None
    assert store.counters.all() == {"status:404": 1}
    assert store.frontier.counts()[UrlStatus.QUEUED] == (2 if backend.shared_frontier else 1)


@pytest.mark.parametrize("crash", [True, False], ids=["crash", "stop"])
def test_after_commit_every_write_is_durable(backend: Backend, crash: bool) -> None:
    write_everything(backend.store())
    backend.commit()
    shown = visible(backend.restart(crash=crash))
    assert all(shown.values()), shown


def test_a_clean_stop_commits(backend: Backend) -> None:
    write_everything(backend.store())
    shown = visible(backend.restart(crash=False))
    assert all(shown.values()), shown


def test_an_entry_acked_but_not_committed_comes_back(backend: Backend) -> None:
    q = backend.store().parse_queue
    seq = q.put(job(1))
    backend.commit()
    q.ack(seq)
    assert len(q) == 0
    q = backend.restart(crash=True).parse_queue
    assert q.pending() == [(seq, job(1))]


def test_an_entry_acked_and_committed_never_comes_back(backend: Backend) -> None:
    q = backend.store().parse_queue
    seq = q.put(job(1))
    backend.commit()
    q.ack(seq)
    backend.commit()
    q = backend.restart(crash=True).parse_queue
    assert q.pending() == [] and len(q) == 0


def test_work_is_redone_once_after_a_crash(backend: Backend) -> None:
    """Fetch, commit, parse, crash: the parse is redone and its output stored once."""
    store = backend.store()
    store.frontier.add([url("a.example", "/p")], now=T0)
    lease = store.frontier.take(T0)
    assert lease is not None
    store.frontier.finish(lease, UrlStatus.FETCHED, host_ready_at=T0)
    store.parse_queue.put(job(lease.fp, url=lease.url, final_url=lease.url))
    backend.commit()

    def parse(store: CrawlStore) -> None:
        [(seq, queued)] = store.parse_queue.pending()
        assert queued.url == lease.url
        if store.pages.find(page(1).content_hash) is None:
            store.pages.add(page(1))
        store.frontier.set_status(lease.host, lease.fp, UrlStatus.PARSED)
        store.counters.add("parsed")
        store.parse_queue.ack(seq)

    parse(store)
    store = backend.restart(crash=True)
    assert store.pages.count() == 0
    record = store.frontier.get(lease.host, lease.fp)
    assert record is not None and record.status is UrlStatus.FETCHED
    parse(store)  # redone
    backend.commit()
    store = backend.restart(crash=True)
    assert store.parse_queue.pending() == []
    assert store.pages.count() == 1
    assert store.counters.get("parsed") == 1
    record = store.frontier.get(lease.host, lease.fp)
    assert record is not None and record.status is UrlStatus.PARSED


def test_committed_logs_round_trip(backend: Backend) -> None:
    assert backend.store().committed_logs() == {}
    ends = {"warc": Position(2, 4096), "text": Position(1, 77), "events": Position(1, 5)}
    backend.commit(ends)
    assert backend.store().committed_logs() == ends
    backend.commit({"warc": Position(3, 0)})  # logs not named keep their end
    backend.commit()
    expected = {**ends, "warc": Position(3, 0)}
    assert backend.store().committed_logs() == expected
    assert backend.restart(crash=True).committed_logs() == expected
    assert backend.restart(crash=False).committed_logs() == expected


def test_committed_logs_are_in_meta_under_their_old_keys(backend: Backend) -> None:
    """Readers of a data directory (export, the event feed) find ``log.<name>`` in meta."""
    backend.commit({"text": Position(4, 12)})
    assert backend.restart(crash=True).meta.get("log.text") == "4:12"


def test_a_second_store_on_the_same_data_is_refused(backend: Backend) -> None:
    backend.store()
    with pytest.raises(DataDirInUseError):
        backend.open_another()
    backend.restart(crash=True)  # the data is free again once the first is gone


def test_workers_share_one_crawl(backend: Backend) -> None:
    """Redis: many workers on one crawl, one request in flight per host across them, and
    a worker's uncommitted lease end undone when it comes back after a crash."""
    store = backend.store()
    peer = backend.open_peer()
    if peer is None:
        pytest.skip("one writer at a time (test_a_second_store_on_the_same_data_is_refused)")
    try:
        store.frontier.add([url("a.example", "/1"), url("a.example", "/2")], now=T0)
        first = url("a.example", "/1")
        assert peer.frontier.get(first.host, first.fp) is not None  # seen by every worker
        lease = store.frontier.take(T0)
        assert lease is not None
        assert peer.frontier.take(T0) is None  # the host is leased, fleet-wide
        store.frontier.finish(lease, UrlStatus.FETCHED, host_ready_at=T0 + 5)
        assert peer.frontier.take(T0 + 4) is None  # never early
        backend.restart(crash=True)  # the finish was never committed: undone
        record = peer.frontier.get(lease.host, lease.fp)
        assert record is not None and record.status is UrlStatus.QUEUED
        assert peer.frontier.counts()[UrlStatus.QUEUED] == 2
        again = peer.frontier.take(T0 + 5)
        assert again is not None and again.host == "a.example"
        peer.frontier.finish(again, UrlStatus.FETCHED, host_ready_at=T0 + 6)
        peer.commit()
        backend.restart(crash=True)  # committed by the peer: stays
        done = backend.store().frontier.get(again.host, again.fp)
        assert done is not None and done.status is UrlStatus.FETCHED
    finally:
        peer.close(commit=False)
