"""The Frontier contract for priorities: keys within a host, order among ready hosts,
in-links raising a queued URL, cash passed on by a fetch. Every backend."""

from __future__ import annotations

import zlib

import orjson

from tests.contract.conftest import Backend
from trawl.models import NewUrl, UrlStatus
from trawl.ranking import importance_key, raised_key
from trawl.storage.base import Frontier

T0 = 1_000.0


def url(host: str, path: str, key: int, *, cash: float = 0.01, gain: float = 0.0) -> NewUrl:
    u = f"https://{host}{path}"
    return NewUrl(
        url=u, fp=zlib.crc32(u.encode()), host=host, depth=2, priority=key, cash=cash, gain=gain
    )


def taken(frontier: Frontier, now: float = T0) -> list[str]:
    """Take and finish everything ready at ``now``, hosts ready again at once."""
    out = []
    while (lease := frontier.take(now)) is not None:
        out.append(lease.url.removeprefix("https://"))
        frontier.finish(lease, UrlStatus.FETCHED, host_ready_at=now)
    return out


def test_a_host_hands_out_its_best_keys_first(backend: Backend) -> None:
    f = backend.frontier()
    f.add([url("a.example", "/low", 3_000_000), url("a.example", "/top", -5_000_000)], now=T0)
    f.add([url("a.example", "/mid", 0)], now=T0)
    assert taken(f) == ["a.example/top", "a.example/mid", "a.example/low"]


def test_ready_hosts_go_by_their_best_key_plus_host_priority(backend: Backend) -> None:
    f = backend.frontier()
    f.add([url("a.example", "/1", 500), url("a.example", "/2", 900)], now=T0)
    f.add([url("b.example", "/1", 100)], now=T0)
    f.add([url("c.example", "/1", 300)], now=T0)
    first = [f.take(T0) for _ in range(3)]
    assert [lease.host for lease in first if lease is not None] == [
        "b.example",
        "c.example",
        "a.example",
    ]
    for lease in first:
        assert lease is not None
        f.finish(lease, UrlStatus.FETCHED, host_ready_at=T0 + 1)
    # a.example's best is now 900: before d.example's 950, unless it is demoted.
    f.add([url("d.example", "/1", 950)], now=T0)
    f.demote_host("a.example", priority=100, budget=None, reason="duplicates")
    assert taken(f, T0 + 1) == ["d.example/1", "a.example/2"]


def test_an_in_link_moves_a_queued_url_up_its_host_queue(backend: Backend) -> None:
    f = backend.frontier()
    f.add([url("a.example", "/x", 2_000_000), url("a.example", "/y", 1_000_000)], now=T0)
    result = f.add([url("a.example", "/x", 7, gain=0.5)], now=T0)
    assert result.seen == 1 and not result.added
    record = f.get("a.example", zlib.crc32(b"https://a.example/x"))
    assert record is not None
    assert record.cash == 0.51
    expected = raised_key(2_000_000, 0.01, 0.5)
    assert abs(record.priority - expected) <= 1  # Lua's log1p may differ in the last unit
    assert expected < 1_000_000
    assert taken(f) == ["a.example/x", "a.example/y"]


def test_an_in_link_moves_a_host_up_among_ready_hosts(backend: Backend) -> None:
    f = backend.frontier()
    f.add([url("a.example", "/1", 5_000_000, cash=1e-6)], now=T0)
    f.add([url("b.example", "/1", 1_000_000)], now=T0)
    f.add([url("a.example", "/1", 0, gain=1.0)], now=T0)
    first = f.take(T0)
    assert first is not None and first.host == "a.example"


def test_only_urls_still_to_fetch_are_raised(backend: Backend) -> None:
    f = backend.frontier()
    f.add([url("a.example", "/done", 100), url("a.example", "/later", 200)], now=T0)
    assert taken(f) == ["a.example/done", "a.example/later"]
    fp_done = zlib.crc32(b"https://a.example/done")
    before = f.get("a.example", fp_done)
    f.add([url("a.example", "/done", 0, gain=3.0)], now=T0)
    assert f.get("a.example", fp_done) == before
    # A URL backing off takes the gain and comes back with its better key.
    f.add([url("b.example", "/flaky", 100), url("b.example", "/other", 50)], now=T0)
    lease = f.take(T0)
    assert lease is not None and lease.url.endswith("/other")
    f.finish(lease, UrlStatus.FETCHED, host_ready_at=T0)
    lease = f.take(T0)
    assert lease is not None and lease.url.endswith("/flaky")
    f.retry(lease, due=T0 + 5, host_ready_at=T0, reason="http 503")
    f.add([url("b.example", "/new", 40)], now=T0)
    f.add([url("b.example", "/flaky", 0, gain=1.0)], now=T0)
    assert f.wake_due(T0 + 5) == 1
    assert taken(f, T0 + 5) == ["b.example/flaky", "b.example/new"]


def test_a_fetch_passes_the_urls_cash_on(backend: Backend) -> None:
    f = backend.frontier()
    f.add([url("a.example", "/page", importance_key(2.0), cash=2.0)], now=T0)
    lease = f.take(T0)
    assert lease is not None and lease.cash == 2.0
    # An in-link found while the page is out stays with it for its next visit.
    f.add([url("a.example", "/page", 0, gain=0.25)], now=T0)
    f.finish(lease, UrlStatus.FETCHED, host_ready_at=T0)
    record = f.get(lease.host, lease.fp)
    assert record is not None
    assert (record.cash, record.history) == (0.25, 2.0)
    assert record.importance == 2.25
    # A failed fetch passes nothing on.
    f.add([url("a.example", "/gone", 0, cash=0.5)], now=T0)
    lease = f.take(T0)
    assert lease is not None
    f.finish(lease, UrlStatus.FAILED, host_ready_at=T0, reason="http 404")
    record = f.get(lease.host, lease.fp)
    assert record is not None and (record.cash, record.history) == (0.5, 0.0)


def test_a_revisit_moves_the_key_by_its_shift(backend: Backend) -> None:
    f = backend.frontier()
    f.add([url("a.example", "/news", 1_000), url("a.example", "/calm", 900)], now=T0)
    leases = [f.take(T0), None]
    assert leases[0] is not None
    f.finish(leases[0], UrlStatus.FETCHED, host_ready_at=T0)
    leases[1] = f.take(T0)
    assert leases[1] is not None
    f.finish(leases[1], UrlStatus.FETCHED, host_ready_at=T0)
    for lease in leases:
        assert lease is not None
        f.set_status(lease.host, lease.fp, UrlStatus.PARSED)
    calm, news = leases
    assert calm is not None and news is not None
    f.revisit(calm.host, calm.fp, due=T0 + 10, interval=7200.0, shift=500)
    f.revisit(news.host, news.fp, due=T0 + 10, interval=1800.0, shift=-500)
    assert f.wake_due(T0 + 10) == 2
    record = f.get(news.host, news.fp)
    assert record is not None and record.priority == 500
    assert taken(f, T0 + 10) == ["a.example/news", "a.example/calm"]


def test_raises_follow_the_crash_rule(backend: Backend) -> None:
    f = backend.frontier()
    f.add([url("a.example", "/x", 2_000_000), url("a.example", "/y", 1_000_000)], now=T0)
    backend.commit()
    f.add([url("a.example", "/x", 0, gain=0.5)], now=T0)
    f = backend.restart(crash=True).frontier
    record = f.get("a.example", zlib.crc32(b"https://a.example/x"))
    assert record is not None
    if backend.shared_frontier:  # admissions, and so in-links, are written when made
        assert record.cash == 0.51
        assert taken(f) == ["a.example/x", "a.example/y"]
    else:
        assert (record.cash, record.priority) == (0.01, 2_000_000)
        assert taken(f) == ["a.example/y", "a.example/x"]


def test_a_rolled_back_lease_end_keeps_the_cash_of_later_in_links(backend: Backend) -> None:
    """Redis: a dead worker's retry is undone, but an in-link another worker found
    meanwhile stays (its raise is no change of status)."""
    peer = backend.open_peer()
    if peer is None:
        return  # one writer: a crash rolls back every write since the commit
    try:
        f = backend.frontier()
        f.add([url("a.example", "/x", 2_000_000), url("a.example", "/y", 1_000_000)], now=T0)
        backend.commit()
        lease = f.take(T0)
        assert lease is not None and lease.url.endswith("/y")
        f.retry(lease, due=T0 + 60, host_ready_at=T0, reason="http 503")
        peer.frontier.add([url("a.example", "/y", 0, gain=2.0)], now=T0)
        peer.commit()
        f = backend.restart(crash=True).frontier
        record = f.get("a.example", lease.fp)
        assert record is not None
        assert record.status is UrlStatus.QUEUED  # the retry was never committed
        assert record.cash == 2.01
        assert abs(record.priority - raised_key(1_000_000, 0.01, 2.0)) <= 1
    finally:
        peer.close(commit=False)


def test_a_record_written_before_scores_reads_as_unranked(backend: Backend) -> None:
    """Redis: a URL record of 13 fields (before cash and history) is read, raised and
    taken like a URL of importance 1 (SQLite's migration is tests/unit/test_sqlite_migration)."""
    if not backend.name.startswith("redis"):
        return
    from trawl.storage.redis.frontier import RedisFrontier

    f = backend.frontier()
    assert isinstance(f, RedisFrontier)
    f.add([url("a.example", "/old", 1), url("a.example", "/new", 0, cash=0.5)], now=T0)
    fp = zlib.crc32(b"https://a.example/old")
    keys = f._keys.host("a.example")
    old = [
        "https://a.example/old",
        "1",
        "1",
        "0",
        None,
        "0",
        None,
        None,
        "0",
        None,
        None,
        None,
        "1",
    ]
    f._conn.call("HSET", keys.urls, str(fp), orjson.dumps(old).decode())
    record = f.get("a.example", fp)
    assert record is not None and (record.cash, record.history) == (1.0, 0.0)
    f.add([url("a.example", "/old", 0, gain=1.0)], now=T0)  # importance 1 -> 2
    record = f.get("a.example", fp)
    assert record is not None and record.cash == 2.0
    assert abs(record.priority - raised_key(1, 1.0, 1.0)) <= 1
    assert taken(f) == ["a.example/old", "a.example/new"]
