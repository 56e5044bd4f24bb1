"""The HostLeases contract: one request in flight per host and the largest asked gap,
across crawls, on every backend (two handles on one place stand for two crawls)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from trawl.storage.base import HostLeases
from trawl.storage.leases import ASK_MEMORY, MIN_POLL, new_holder
from trawl.storage.memory.hostleases import MemoryHostLeases
from trawl.storage.redis.conn import connect
from trawl.storage.redis.hostleases import RedisHostLeases, holder_key
from trawl.storage.sqlite.hostleases import SqliteHostLeases

T = 1_700_000_000.0
A, B = "machine-a:1:crawl-a", "machine-b:2:crawl-b"  # holders on no real machine


@pytest.fixture(params=["memory", "sqlite", "redis", "redis-cluster"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], HostLeases]]:
    """Opens handles on one shared place: each handle is another crawl's."""
    opened: list[HostLeases] = []
    shared = MemoryHostLeases()

    def open_one() -> HostLeases:
        leases: HostLeases
        if request.param == "memory":
            leases = shared
        elif request.param == "sqlite":
            leases = SqliteHostLeases(tmp_path / "hosts")
        else:
            server = request.getfixturevalue(
                "redis_server" if request.param == "redis" else "redis_cluster"
            )
            leases = RedisHostLeases(server.url)
        opened.append(leases)
        return leases

    yield open_one
    for leases in opened:
        leases.close()


@pytest.fixture
def host() -> str:
    return f"h{uuid.uuid4().hex[:10]}.example"  # Redis keys are shared by every test


def test_one_holder_at_a_time(place: Callable[[], HostLeases], host: str) -> None:
    one, two = place(), place()
    assert one.acquire(host, holder=A, now=T, ttl=60.0) is None
    again = two.acquire(host, holder=B, now=T + 1, ttl=60.0)
    assert again is not None and T + 1 + MIN_POLL <= again <= T + 60
    assert two.acquire("other." + host, holder=B, now=T + 1, ttl=60.0) is None
    view = two.get(host, T + 1)
    assert view is not None and view.holder == A and view.expires == pytest.approx(T + 60)


def test_the_next_contact_is_the_releasers_next_time(
    place: Callable[[], HostLeases], host: str
) -> None:
    one, two = place(), place()
    assert one.acquire(host, holder=A, now=T, ttl=60.0) is None
    one.release(host, holder=A, now=T + 0.2, ready_at=T + 1.2)
    assert two.acquire(host, holder=B, now=T + 0.5, ttl=60.0) == pytest.approx(T + 1.2)
    assert two.acquire(host, holder=B, now=T + 1.2, ttl=60.0) is None
    view = one.get(host, T + 1.3)
    assert view is not None and view.holder == B and view.gap == pytest.approx(1.0)


def test_the_largest_gap_asked_holds_for_every_crawl(
    place: Callable[[], HostLeases], host: str
) -> None:
    slow, fast = place(), place()
    assert slow.acquire(host, holder=A, now=T, ttl=60.0) is None
    slow.release(host, holder=A, now=T + 1, ready_at=T + 3)  # asks 2 s
    assert fast.acquire(host, holder=B, now=T + 3, ttl=60.0) is None
    fast.release(host, holder=B, now=T + 3.1, ready_at=T + 3.6)  # asks 0.5 s
    # The slow crawl's 2 s hold after the fast crawl's request too.
    assert fast.acquire(host, holder=B, now=T + 3.6, ttl=60.0) == pytest.approx(T + 5.1)
    assert slow.acquire(host, holder=A, now=T + 5.1, ttl=60.0) is None


def test_a_release_that_sent_nothing_adds_no_gap(
    place: Callable[[], HostLeases], host: str
) -> None:
    one, two = place(), place()
    assert one.acquire(host, holder=A, now=T, ttl=60.0) is None
    one.release(host, holder=A, now=T + 1, ready_at=T + 3)
    assert two.acquire(host, holder=B, now=T + 3, ttl=60.0) is None
    two.release(host, holder=B, now=T + 3.01, ready_at=T + 3.01)  # robots said no
    assert one.acquire(host, holder=A, now=T + 3.02, ttl=60.0) is None


def test_asks_are_forgotten(place: Callable[[], HostLeases], host: str) -> None:
    one, two = place(), place()
    assert one.acquire(host, holder=A, now=T, ttl=60.0) is None
    one.release(host, holder=A, now=T, ready_at=T + 2)
    later = T + ASK_MEMORY + 10
    assert two.acquire(host, holder=B, now=later, ttl=60.0) is None
    two.release(host, holder=B, now=later, ready_at=later + 0.5)
    assert one.acquire(host, holder=A, now=later + 0.5, ttl=60.0) is None


def test_a_lease_never_given_back_lapses(place: Callable[[], HostLeases], host: str) -> None:
    one, two = place(), place()
    assert one.acquire(host, holder=A, now=T, ttl=10.0) is None
    later = two.acquire(host, holder=B, now=T + 5, ttl=10.0)
    assert later is not None and later <= T + 10
    assert two.acquire(host, holder=B, now=T + 10, ttl=10.0) is None
    # The first holder's late release does not take the second's lease away.
    one.release(host, holder=A, now=T + 11, ready_at=T + 11)
    assert one.acquire(host, holder=A, now=T + 11, ttl=10.0) is not None


def dead_holder(token: str) -> str:
    """A holder name of this machine whose process has ended (as after kill -9)."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return new_holder(token).replace(f":{os.getpid()}:", f":{gone.pid}:")


def test_a_dead_process_holds_nothing(tmp_path: Path) -> None:
    """On one machine a holder whose process is gone (kill -9) lapses at once."""
    dead = dead_holder("crawl-a")
    leases = SqliteHostLeases(tmp_path)
    try:
        assert leases.acquire("a.example", holder=dead, now=T, ttl=600.0) is None
        # Its last response may have ended just now: the taker waits its gap first.
        taker = new_holder("b")
        later = leases.acquire("a.example", holder=taker, now=T + 1, ttl=60.0, gap=0.5)
        assert later == pytest.approx(T + 1.5)
        assert leases.acquire("a.example", holder=new_holder("e"), now=T + 1.2, ttl=60.0)
        assert leases.acquire("a.example", holder=taker, now=T + 1.5, ttl=60.0) is None
        alive = new_holder("c")
        assert leases.acquire("b.example", holder=alive, now=T, ttl=600.0) is None
        assert leases.acquire("b.example", holder=new_holder("d"), now=T + 1, ttl=60.0)
    finally:
        leases.close()


def test_old_rows_are_dropped_on_open(tmp_path: Path) -> None:
    leases = SqliteHostLeases(tmp_path)
    leases.acquire("a.example", holder=A, now=T, ttl=10.0)
    leases.release("a.example", holder=A, now=T, ready_at=T + 1)
    leases.close()
    again = SqliteHostLeases(tmp_path, now=T + 2 * 86_400)
    try:
        assert again.get("a.example", T + 2 * 86_400) is None
    finally:
        again.close()


@pytest.mark.parametrize("which", ["redis", "redis-cluster"])
def test_a_holder_that_stops_beating_holds_nothing(
    request: pytest.FixtureRequest, which: str, host: str
) -> None:
    """Workers on other machines: a killed one stops beating and its leases lapse."""
    server = request.getfixturevalue("redis_server" if which == "redis" else "redis_cluster")
    one, two = RedisHostLeases(server.url), RedisHostLeases(server.url)
    client = connect(server.url)
    try:
        assert one.acquire(host, holder=A, now=T, ttl=600.0) is None  # beats as it acquires
        assert two.acquire(host, holder=B, now=T + 1, ttl=600.0) is not None
        client.delete(holder_key(A))  # its beat ran out (SIGKILL: nothing renews it)
        # Its last response may have ended just now: B waits its gap after the takeover.
        later = two.acquire(host, holder=B, now=T + 2, ttl=600.0, gap=0.5)
        assert later == pytest.approx(T + 2.5)
        assert two.acquire(host, holder=B, now=T + 2.5, ttl=600.0) is None
        assert one.acquire(host, holder=A, now=T + 3, ttl=600.0) is not None  # B beats
    finally:
        one.close()
        two.close()
        client.close()
