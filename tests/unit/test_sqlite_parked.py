"""The SQLite frontier holds a bounded number of hosts in memory: the rest wait on disk
(parked) and come in best first, take turns, keep their politeness, and survive a
restart. The contract suite runs every frontier test with 2 hosts in memory too
(``sqlite-parked``)."""

from __future__ import annotations

from pathlib import Path

from tests.contract.test_frontier import url
from trawl.models import UrlStatus
from trawl.storage.sqlite.frontier import SqliteFrontier
from trawl.storage.sqlite.frontier_state import TURNS
from trawl.storage.sqlite.store import SqliteCrawlStore

T0 = 1_000.0


def _store(tmp_path: Path, hosts: int) -> SqliteCrawlStore:
    return SqliteCrawlStore(tmp_path / "state.db", frontier_hosts=hosts)


def _frontier(store: SqliteCrawlStore) -> SqliteFrontier:
    f = store.frontier
    assert isinstance(f, SqliteFrontier)
    return f


def test_many_hosts_are_all_served_with_few_in_memory(tmp_path: Path) -> None:
    store = _store(tmp_path, 10)
    f = _frontier(store)
    for start in range(0, 1_000, 100):
        f.add([url(f"h{i}.example", "/1") for i in range(start, start + 100)], now=T0)
        store.commit()
        assert len(f._schedule) <= 10
        assert len(f._hosts) <= 10 + 10 // 4 + 100  # the schedule's, and one batch's
    assert f.hosts_waiting(T0) + f.hosts_ready(T0) == 1_000
    served = []
    while (lease := f.take(T0)) is not None:
        served.append(lease.host)
        f.finish(lease, UrlStatus.FETCHED, host_ready_at=T0)
        if len(served) % 50 == 0:
            store.commit()
            assert len(f._hosts) <= 10 + 10 // 4
    assert sorted(served) == sorted(f"h{i}.example" for i in range(1_000))
    assert f.counts()[UrlStatus.FETCHED] == 1_000 and f.counts()[UrlStatus.QUEUED] == 0
    assert f.next_wake(T0) is None
    store.close()


def test_parked_hosts_come_in_best_first(tmp_path: Path) -> None:
    store = _store(tmp_path, 1)
    f = _frontier(store)
    f.add([url("first.example", "/1", priority=50)], now=T0)  # takes the one place
    keys = {"c.example": 30, "a.example": 10, "d.example": 40, "b.example": 20}
    f.add([url(h, "/1", priority=k) for h, k in keys.items()], now=T0)
    order = []
    while (lease := f.take(T0)) is not None:
        order.append(lease.host)
        f.finish(lease, UrlStatus.FETCHED, host_ready_at=T0)
    assert order == ["first.example", "a.example", "b.example", "c.example", "d.example"]
    store.close()


def test_a_host_with_endless_work_takes_turns_with_parked_ones(tmp_path: Path) -> None:
    store = _store(tmp_path, 1)
    f = _frontier(store)
    f.add([url("big.example", f"/{i}") for i in range(3 * TURNS)], now=T0)
    f.add([url("small.example", "/1", priority=0)], now=T0)  # better, but no room: parked
    order = []
    while (lease := f.take(T0)) is not None:
        order.append(lease.host)
        f.finish(lease, UrlStatus.FETCHED, host_ready_at=T0)
    assert order.index("small.example") == TURNS
    assert order.count("big.example") == 3 * TURNS
    store.close()


def test_a_parked_host_keeps_its_delay(tmp_path: Path) -> None:
    store = _store(tmp_path, 1)
    f = _frontier(store)
    f.add([url("slow.example", f"/{i}") for i in range(TURNS + 2)], now=T0)
    for _ in range(TURNS):
        lease = f.take(T0)
        assert lease is not None and lease.host == "slow.example"
        f.finish(lease, UrlStatus.FETCHED, host_ready_at=T0)
    f.add([url("other.example", "/1")], now=T0)  # parked
    lease = f.take(T0)
    assert lease is not None and lease.host == "slow.example"
    # Its turns are up while another waits: parked, with its next time on disk.
    f.finish(lease, UrlStatus.FETCHED, host_ready_at=T0 + 30)
    store.commit()
    assert "slow.example" not in f._hosts
    lease = f.take(T0)
    assert lease is not None and lease.host == "other.example"
    f.finish(lease, UrlStatus.FETCHED, host_ready_at=T0)
    assert f.take(T0 + 29) is None
    assert f.next_wake(T0) == T0 + 30
    lease = f.take(T0 + 30)
    assert lease is not None and lease.host == "slow.example"
    store.close()


def test_parked_hosts_survive_a_restart_and_a_crash(tmp_path: Path) -> None:
    store = _store(tmp_path, 2)
    f = _frontier(store)
    f.add([url(f"h{i}.example", f"/{j}") for i in range(6) for j in range(2)], now=T0)
    lease = f.take(T0)
    assert lease is not None
    store.commit()
    f.add([url("late.example", "/1")], now=T0)  # not committed: lost in the crash
    store.close(commit=False)

    store = _store(tmp_path, 2)
    f = _frontier(store)
    # The lease a dead process held comes back; the uncommitted host does not.
    assert f.counts()[UrlStatus.QUEUED] == 12 and f.host_info("late.example") is None
    served = []
    while (lease := f.take(T0)) is not None:
        served.append(lease.url)
        f.finish(lease, UrlStatus.FETCHED, host_ready_at=T0)
        if len(served) == 5:
            store.close()  # a clean stop halfway
            store = _store(tmp_path, 2)
            f = _frontier(store)
    assert sorted(served) == sorted(f"https://h{i}.example/{j}" for i in range(6) for j in range(2))
    store.close()


def test_a_parked_host_is_known_to_every_read(tmp_path: Path) -> None:
    store = _store(tmp_path, 1)
    f = _frontier(store)
    f.add([url("a.example", "/1")], now=T0)
    f.add([url("b.example", "/1"), url("b.example", "/2")], now=T0)  # parked
    store.commit()
    assert "b.example" not in f._hosts
    info = f.host_info("b.example")
    assert info is not None and info.queued == 2 and not info.in_flight
    store.commit()
    # A link to a known URL of a parked host is seen, not added again.
    assert f.add([url("b.example", "/1")], now=T0).seen == 1
    record = f.get("b.example", url("b.example", "/2").fp)
    assert record is not None and record.status is UrlStatus.QUEUED
    store.close()
