"""The SQLite frontier holds a bounded number of hosts in memory: the rest wait on disk
(parked) and come in best first, take turns, keep their politeness, and survive a
restart. The contract suite runs every frontier test with 2 hosts in memory too
(``sqlite-parked``)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


def test_a_parked_host_held_and_released_stays_parked(tmp_path: Path) -> None:
    store = _store(tmp_path, 1)
    f = _frontier(store)
    f.add([url("a.example", "/1")], now=T0)
    f.add([url("b.example", "/1")], now=T0)  # parked: the schedule is full
    assert f.hold_host("b.example", T0, until=T0 + 60) is None  # another crawl's turn
    f.release_host("b.example", host_ready_at=T0 + 5)
    assert "b.example" not in f._schedule and f._parked == 1  # still waits on disk
    order = []
    while (lease := f.take(T0 + 5)) is not None:
        order.append(lease.host)
        f.finish(lease, UrlStatus.FETCHED, host_ready_at=T0 + 5)
    assert order == ["a.example", "b.example"]
    store.close()


# -- random runs: the parked frontier's books always balance ---------------------------

_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 4), st.integers(0, 5), st.integers(-3, 9)),
        st.tuples(st.just("finish"), st.integers(0, 30)),  # ready again after this many s
        st.tuples(st.just("retry"), st.integers(1, 20)),
        st.tuples(st.just("requeue"), st.booleans()),
        st.tuples(st.just("hold"), st.integers(0, 4)),
        st.tuples(st.just("release")),
        st.tuples(st.just("tick"), st.integers(1, 30)),
        st.tuples(st.just("commit")),
        st.tuples(st.just("restart"), st.booleans()),  # crash or not
    ),
    max_size=80,
)


def _check_books(f: SqliteFrontier, hosts: int, peak_busy: int) -> None:
    """Counters, host records, rows, schedule and parked marks agree; the schedule holds
    ``hosts`` at most, and those a fetch or hold had when they came back (as many as
    were ever out at once). Read without writing anything: a held record stands for its
    row (what the next commit writes; a record the commit would write is always held)."""
    c = f._c
    rows = dict(c.execute("SELECT status, count(*) FROM urls GROUP BY status").fetchall())
    counts = f.counts()
    assert {int(s): n for s, n in counts.items() if n} == rows
    assert counts[UrlStatus.IN_FLIGHT] == 0  # each step ends the lease it takes
    assert all(f._hosts.get(h.name) is h for h in f._dirty.values())
    queued = dict(
        c.execute("SELECT host_id, count(*) FROM urls WHERE status=0 GROUP BY host_id").fetchall()
    )
    heads = dict(
        c.execute(
            "SELECT host_id, min(priority) FROM urls WHERE status=0 GROUP BY host_id"
        ).fetchall()
    )
    parked = 0
    for host_id, name, n, priority, parked_order in c.execute(
        "SELECT id, name, queued, priority, parked_order FROM hosts"
    ).fetchall():
        held = f._hosts.get(name)
        if held is not None:
            n, priority = held.queued, held.priority
            parked_order = held.order if held.parked else None
            if n > 0:  # the head may be pessimistic (a URL raised while out), never unknown
                assert held.head is not None and held.head >= heads[host_id], name
        assert n == queued.get(host_id, 0), name
        if parked_order is not None:
            parked += 1
            assert name not in f._schedule, name  # parked: on disk only
            # Its order never better than its queue's (a head may be pessimistic).
            assert parked_order >= priority + heads[host_id], name
        elif n > 0:  # work, not parked: the schedule or a fetch has it
            assert name in f._schedule or f._schedule.is_busy(name), name
    assert parked == f._parked
    assert len(f._schedule) <= hosts + peak_busy


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_OPS)
@pytest.mark.parametrize("hosts", [1, 2, 50_000])  # 50,000: nothing parked
def test_random_runs_keep_the_books_and_serve_everything(
    hosts: int, ops: list[tuple[object, ...]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp)
        store = _store(path, hosts)
        f = _frontier(store)
        now = T0
        held: list[str] = []
        peak_busy = 0
        committed: set[str] = set()  # URLs admitted and committed
        admitted: set[str] = set()
        for op in ops:
            kind = op[0]
            if kind == "add":
                _, h, p, key = op
                u = url(f"h{h}.example", f"/{p}", priority=int(str(key)))
                admitted.update(a.url for a in f.add([u], now=now).added)
            elif kind in ("finish", "retry", "requeue"):
                lease = f.take(now)
                if lease is None:
                    continue
                if kind == "finish":
                    f.finish(lease, UrlStatus.FETCHED, host_ready_at=now + int(str(op[1])))
                elif kind == "retry":
                    f.retry(lease, due=now + int(str(op[1])), host_ready_at=now, reason="503")
                else:
                    f.requeue(lease, host_ready_at=now, defer=bool(op[1]))
            elif kind == "hold":
                host = f"h{op[1]}.example"
                if f.hold_host(host, now, until=now + 60) is None:
                    held.append(host)
            elif kind == "release" and held:
                f.release_host(held.pop(), host_ready_at=now)
            elif kind == "tick":
                now += int(str(op[1]))
                f.wake_due(now)
            elif kind == "commit":
                store.commit()
                committed |= admitted
            elif kind == "restart":
                crash = bool(op[1])
                store.close(commit=not crash)
                if not crash:
                    committed |= admitted
                admitted = set(committed)
                store = _store(path, hosts)
                f = _frontier(store)
                held = []
            peak_busy = max(peak_busy, f._schedule.busy)
            _check_books(f, hosts, peak_busy)
        # Everything admitted is served in the end, each URL once.
        for host in held:
            f.release_host(host, host_ready_at=now)
        served: list[str] = []
        for _ in range(10_000):
            lease = f.take(now)
            if lease is not None:
                served.append(lease.url)
                f.finish(lease, UrlStatus.FETCHED, host_ready_at=now)
                continue
            wake = f.next_wake(now)
            due = f.next_wake_due()
            if wake is None and due is None:
                break
            now = max(now + 1, min(t for t in (wake, due) if t is not None))
            f.wake_due(now)
        _check_books(f, hosts, peak_busy)
        assert f.counts()[UrlStatus.QUEUED] == 0 and f.counts()[UrlStatus.WAITING] == 0
        assert len(served) == len(set(served))
        done = {r[0] for r in f._c.execute("SELECT url FROM urls WHERE status=2")}
        assert admitted <= done
        store.close()
