"""The host schedule: pure, time passed in."""

from __future__ import annotations

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
