"""The Frontier contract for deferral (``frontier/deferral.py``): a URL given back with
``requeue(defer=True)`` goes after its host's other URLs, in one step that a restart
keeps and a crash rolls back like any lease end; in-links still raise it within the
band; a revisit takes it out of the band. Every backend, real redis-server included."""

from __future__ import annotations

import zlib

from tests.contract.conftest import Backend
from trawl.models import NewUrl, UrlStatus
from trawl.ranking import DEFERRED, deferred_key, is_deferred, raised_key
from trawl.storage.base import Frontier

T0 = 1_000.0


def url(path: str, key: int, *, host: str = "a.example", gain: float = 0.0) -> NewUrl:
    u = f"https://{host}{path}"
    return NewUrl(
        url=u, fp=zlib.crc32(u.encode()), host=host, depth=2, priority=key, cash=0.01, gain=gain
    )


def fp(path: str, host: str = "a.example") -> int:
    return zlib.crc32(f"https://{host}{path}".encode())


def taken(frontier: Frontier, now: float = T0) -> list[str]:
    """Take and finish everything ready at ``now``, hosts ready again at once."""
    out = []
    while (lease := frontier.take(now)) is not None:
        out.append(lease.url.removeprefix("https://"))
        frontier.finish(lease, UrlStatus.FETCHED, host_ready_at=now)
    return out


def test_a_url_given_back_deferred_goes_after_the_hosts_other_urls(backend: Backend) -> None:
    f = backend.frontier()
    f.add([url("/a?ref=x", -9_000_000), url("/b", 5_000_000)], now=T0)
    f.add([url("/c", 7_000_000), url("/d", 1_000, host="b.example")], now=T0)
    lease = f.take(T0)
    assert lease is not None and lease.url.endswith("/a?ref=x")
    f.requeue(lease, host_ready_at=T0, defer=True)
    record = f.get("a.example", lease.fp)
    assert record is not None and record.status is UrlStatus.QUEUED
    assert record.priority == deferred_key(-9_000_000) and is_deferred(record.priority)
    # Its host goes after a host with other work, and its other URLs go first.
    assert taken(f) == ["b.example/d", "a.example/b", "a.example/c", "a.example/a?ref=x"]


def test_a_deferred_url_is_deferred_once_and_kept_by_a_restart(backend: Backend) -> None:
    f = backend.frontier()
    f.add([url("/a?ref=x", 2_000), url("/b", 3_000)], now=T0)
    backend.commit()
    lease = f.take(T0)
    assert lease is not None
    f.requeue(lease, host_ready_at=T0, defer=True)
    again = f.take(T0)
    assert again is not None and again.url.endswith("/b")
    f.requeue(again, host_ready_at=T0)  # a plain requeue keeps its key
    third = f.take(T0)
    assert third is not None and third.url.endswith("/b")
    f.finish(third, UrlStatus.FETCHED, host_ready_at=T0)
    last = f.take(T0)
    assert last is not None and last.url.endswith("/a?ref=x")
    f.requeue(last, host_ready_at=T0, defer=True)  # in the band already: it stays
    backend.commit()
    f = backend.restart(crash=False).frontier
    record = f.get("a.example", fp("/a?ref=x"))
    assert record is not None and record.priority == 2_000 + DEFERRED
    assert record.status is UrlStatus.QUEUED


def test_a_crash_undoes_a_deferral_like_any_lease_end(backend: Backend) -> None:
    f = backend.frontier()
    f.add([url("/a?ref=x", 2_000), url("/b", 3_000)], now=T0)
    backend.commit()
    lease = f.take(T0)
    assert lease is not None
    f.requeue(lease, host_ready_at=T0, defer=True)
    f = backend.restart(crash=True).frontier
    record = f.get("a.example", lease.fp)
    assert record is not None and record.status in (UrlStatus.QUEUED, UrlStatus.IN_FLIGHT)
    f.reclaim_expired(T0 + 3_600)
    # Nothing lost either way: every URL is still to be fetched, once.
    assert sorted(taken(f, T0 + 3_600)) == ["a.example/a?ref=x", "a.example/b"]


def test_an_in_link_raises_a_deferred_url_within_the_band(backend: Backend) -> None:
    f = backend.frontier()
    f.add([url("/a?ref=x", 2_000_000), url("/b", 3_000_000)], now=T0)
    lease = f.take(T0)
    assert lease is not None and lease.url.endswith("/a?ref=x")
    f.requeue(lease, host_ready_at=T0, defer=True)
    f.add([url("/a?ref=x", 0, gain=0.5)], now=T0)
    record = f.get("a.example", lease.fp)
    assert record is not None
    assert abs(record.priority - raised_key(2_000_000 + DEFERRED, 0.01, 0.5)) <= 1
    assert is_deferred(record.priority)
    assert taken(f) == ["a.example/b", "a.example/a?ref=x"]


def test_a_revisit_takes_a_url_out_of_the_band(backend: Backend) -> None:
    f = backend.frontier()
    f.add([url("/a?ref=x", 2_000), url("/b", 3_000)], now=T0)
    lease = f.take(T0)
    assert lease is not None
    f.requeue(lease, host_ready_at=T0, defer=True)
    assert taken(f) == ["a.example/b", "a.example/a?ref=x"]
    for path in ("/a?ref=x", "/b"):
        f.set_status("a.example", fp(path), UrlStatus.PARSED)
    f.revisit("a.example", fp("/a?ref=x"), due=T0 + 10, interval=60.0, shift=-500)
    f.revisit("a.example", fp("/b"), due=T0 + 10, interval=60.0)
    assert f.wake_due(T0 + 10) == 2
    record = f.get("a.example", fp("/a?ref=x"))
    assert record is not None and record.priority == 1_500  # its own key, moved by the shift
    assert taken(f, T0 + 10) == ["a.example/a?ref=x", "a.example/b"]
