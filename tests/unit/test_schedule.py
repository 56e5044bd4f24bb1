"""The host schedule: pure, time passed in."""

from __future__ import annotations

import math

from trawl import urls
from trawl.models import NewUrl, UrlStatus
from trawl.storage.memory import MemoryCrawlStore
from trawl.storage.schedule import HostSchedule


def test_pop_returns_hosts_whose_time_has_come() -> None:
    s = HostSchedule()
    s.schedule("a", 10.0)
    s.schedule("b", 5.0)
    assert s.pop(4.9) is None
    assert s.next_wake(4.9) == 5.0
    assert s.pop(5.0) == "b"
    assert s.pop(9.0) is None
    assert s.pop(10.0) == "a"
    assert s.next_wake(10.0) is None


def test_busy_host_is_not_scheduled_until_released() -> None:
    s = HostSchedule()
    s.schedule("a", 0.0)
    assert s.pop(1.0) == "a"
    s.schedule("a", 0.0)  # ignored: in flight
    assert s.pop(1.0) is None
    assert s.busy == 1
    s.release("a", 3.0, has_work=True)
    assert s.busy == 0
    assert s.next_wake(1.0) == 3.0
    assert s.pop(3.0) == "a"


def test_release_without_work_forgets_the_host() -> None:
    s = HostSchedule()
    s.schedule("a", 0.0)
    assert s.pop(0.0) == "a"
    s.release("a", 1.0, has_work=False)
    assert len(s) == 0
    assert s.next_wake(5.0) is None


def test_ready_hosts_go_by_priority_then_time() -> None:
    s = HostSchedule()
    s.schedule("demoted", 0.0, priority=5)
    s.schedule("late", 2.0)
    s.schedule("early", 1.0)
    assert [s.pop(3.0), s.pop(3.0), s.pop(3.0)] == ["early", "late", "demoted"]


def test_rescheduling_replaces_the_earlier_entry() -> None:
    s = HostSchedule()
    s.schedule("a", 10.0)
    s.schedule("a", 2.0)
    assert s.next_wake(0.0) == 2.0
    assert s.pop(2.0) == "a"
    assert s.pop(20.0) is None  # the stale entry at 10.0 is skipped


def test_unschedule_and_counts() -> None:
    s = HostSchedule()
    s.schedule("a", 0.0)
    s.schedule("b", 5.0)
    assert len(s) == 2 and "a" in s
    assert s.ready_count(1.0) == 1
    s.unschedule("a")
    assert s.pop(1.0) is None
    assert s.next_wake(1.0) == 5.0


def test_a_host_is_released_exactly_at_its_ready_time_and_never_before() -> None:
    """No granularity is added: the wake-up asked for is the ready time itself, a
    host is handed out at that instant (to the last bit of the float), never a tick
    before, and a host that ran dry and gets work again keeps its ready time."""
    ready = 1_000_000.123456789
    s = HostSchedule()
    s.schedule("a", ready)
    before = math.nextafter(ready, 0.0)
    assert s.pop(before) is None
    assert s.next_wake(before) == ready  # the loop sleeps exactly ready - now
    assert s.pop(ready) == "a"

    frontier = MemoryCrawlStore().frontier

    def url(path: str) -> NewUrl:
        u = f"https://h.example{path}"
        return NewUrl(url=u, fp=urls.fingerprint(u), host="h.example", depth=1, priority=1)

    frontier.add([url("/1")], now=0.0)
    lease = frontier.take(0.0)
    assert lease is not None
    frontier.finish(lease, UrlStatus.PARSED, host_ready_at=ready)  # its queue ran dry
    frontier.add([url("/2")], now=ready - 0.5)  # a link comes in before the time
    assert frontier.take(before) is None
    assert frontier.next_wake(before) == ready
    again = frontier.take(ready)
    assert again is not None and again.url.endswith("/2")


def test_hosts_rescheduled_again_and_again_leave_no_pile_of_stale_entries() -> None:
    s = HostSchedule()
    for i in range(100):
        s.schedule(f"h{i}", 0.0, priority=1_000)
    assert s.pop(0.0) == "h0"  # promoted: the others wait in the ready heap
    for step in range(50_000):  # a better URL for some host, again and again
        s.schedule(f"h{1 + step % 99}", 0.0, priority=999 - step)
    assert len(s._ready) + len(s._waiting) <= 4 * len(s) + 1024
    order = [host for _ in range(99) if (host := s.pop(0.0)) is not None]
    assert order[0] == f"h{1 + 49_999 % 99}"  # the best order still goes first
    assert sorted(order) == sorted(f"h{i}" for i in range(1, 100))
    assert s.pop(0.0) is None
