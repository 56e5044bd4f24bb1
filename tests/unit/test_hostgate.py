"""The fetch path's side of the shared host leases, on plain floats (no event loop)."""

from __future__ import annotations

from pathlib import Path

from tests.contract.test_frontier import url
from tests.contract.test_host_leases import dead_holder
from trawl import wire
from trawl.config import CrawlConfig, Timeouts
from trawl.fetch.hostgate import GatedFrontier, HostGate
from trawl.frontier.shape import HostRules
from trawl.models import UrlStatus
from trawl.storage.memory import MemoryCrawlStore
from trawl.storage.memory.hostleases import MemoryHostLeases
from trawl.storage.sqlite.hostleases import SqliteHostLeases
from trawl.testing import FakeClock

T0 = 1_000.0


class _Crawl:
    """One crawl's frontier, seen through a gate on leases it shares."""

    def __init__(self, leases: MemoryHostLeases, clock: FakeClock, name: str) -> None:
        store = MemoryCrawlStore()
        self.counters, self.frontier = store.counters, store.frontier
        self.gate = HostGate(leases, ttl=60.0, counters=self.counters, holder=name)
        self.view = GatedFrontier(self.frontier, self.gate, clock)
        self.frontier.add([url("a.example", "/1"), url("a.example", "/2")], now=T0)


def test_a_host_another_crawl_holds_goes_back_for_later() -> None:
    clock, leases = FakeClock(T0), MemoryHostLeases()
    one, two = _Crawl(leases, clock, "one"), _Crawl(leases, clock, "two")
    first = one.view.take(T0)
    assert first is not None and first.host == "a.example"
    # The other crawl finds the host taken: nothing handed out, the host put back.
    assert two.view.take(T0) is None
    assert two.counters.get("politeness:shared wait") == 1
    later = two.frontier.next_wake(T0)
    assert later is not None and later > T0
    assert two.frontier.counts()[UrlStatus.QUEUED] == 2  # given back uncounted
    # The fetch ends at T0 + 0.5 and asks a 1 s gap: the other waits for T0 + 1.5.
    clock.advance(0.5)
    one.view.finish(first, UrlStatus.FETCHED, host_ready_at=T0 + 1.5)
    assert one.gate.held == 0
    assert two.view.take(T0 + 1.4) is None
    assert two.frontier.next_wake(T0 + 1.4) == T0 + 1.5
    second = two.view.take(T0 + 1.5)
    assert second is not None and two.gate.held == 1


def test_close_gives_back_what_is_still_held() -> None:
    clock, leases = FakeClock(T0), MemoryHostLeases()
    one = _Crawl(leases, clock, "one")
    assert one.view.take(T0) is not None
    one.gate.close(T0 + 2, delay=1.0)  # a fetch dropped on a full disk
    view = leases.get("a.example", T0 + 2)
    assert view is not None and view.holder is None and view.next_at == T0 + 3


def test_a_rendered_pages_request_holds_the_host_across_crawls_too() -> None:
    clock, leases = FakeClock(T0), MemoryHostLeases()
    one, two = _Crawl(leases, clock, "one"), _Crawl(leases, clock, "two")
    # Crawl one's browser loads a script from cdn.example: the host's turn is held.
    assert one.view.hold_host("cdn.example", T0, until=T0 + 30) is None
    assert one.gate.held == 1
    # Crawl two's browser wants the same host: it waits, and holds nothing meanwhile.
    later = two.view.hold_host("cdn.example", T0, until=T0 + 30)
    assert later is not None and later > T0 and two.gate.held == 0
    one.view.release_host("cdn.example", host_ready_at=T0 + 1)
    assert two.view.hold_host("cdn.example", T0 + 0.5, until=T0 + 30) == T0 + 1
    assert two.view.hold_host("cdn.example", T0 + 1, until=T0 + 30) is None


def test_a_dead_holders_host_waits_this_crawls_gap_after_the_takeover(tmp_path: Path) -> None:
    """A worker killed (or silent past its beat) mid-fetch: its response may have
    ended just before the takeover, so the host gets this crawl's gap from then."""
    dead = dead_holder("dead")
    leases = SqliteHostLeases(tmp_path)
    try:
        assert leases.acquire("a.example", holder=dead, now=T0, ttl=600.0) is None
        clock = FakeClock(T0 + 1)
        store = MemoryCrawlStore()
        gate = HostGate(leases, ttl=60.0, counters=store.counters, gap_of=lambda _host: 0.75)
        view = GatedFrontier(store.frontier, gate, clock)
        store.frontier.add([url("a.example", "/1")], now=T0)
        assert view.take(T0 + 1) is None  # not at once: given back for T0 + 1.75
        assert store.frontier.next_wake(T0 + 1) == T0 + 1.75
        lease = view.take(T0 + 1.75)
        assert lease is not None and gate.held == 1
    finally:
        leases.close()


def test_the_crawl_waits_a_fetchs_timeout_and_its_delay_after_a_takeover(
    tmp_path: Path,
) -> None:
    """The dead holder's last request may still run at the server (found by the fleet
    drill: it started there after the takeover), for as long as a fetch may take."""
    dead = dead_holder("dead")
    leases = SqliteHostLeases(tmp_path / "leases")
    try:
        assert leases.acquire("a.example", holder=dead, now=T0, ttl=600.0) is None
        c = CrawlConfig(data_dir=tmp_path, delay=0.5, timeouts=Timeouts(total=7.0))
        clock, store = FakeClock(T0 + 1), MemoryCrawlStore()
        pace = wire.pacing(c, HostRules())
        gate, view = wire.host_gate(
            c, store.frontier, store.counters, clock, leases=leases, politeness=pace
        )
        assert gate is not None
        store.frontier.add([url("a.example", "/1")], now=T0)
        assert view.take(T0 + 1) is None
        assert store.frontier.next_wake(T0 + 1) == T0 + 1 + 7.0 + 0.5
        assert view.take(T0 + 8.5) is not None
    finally:
        leases.close()


def test_a_turn_left_unused_gives_the_shared_lease_back_at_once() -> None:
    clock, leases = FakeClock(T0), MemoryHostLeases()
    one, two = _Crawl(leases, clock, "one"), _Crawl(leases, clock, "two")
    lease = one.view.take(T0)
    assert lease is not None
    # Ended through the store's frontier (a spelling skipped): nothing was sent.
    one.frontier.finish(lease, UrlStatus.SKIPPED, reason="same as", host_ready_at=T0)
    held = leases.get("a.example", T0)
    assert one.gate.held == 1 and held is not None and held.holder == "one"
    one.view.turn_unused(lease.host)
    free = leases.get("a.example", T0)
    assert one.gate.held == 0 and free is not None and free.holder is None
    assert two.view.take(T0) is not None  # no wait: the host was not contacted
