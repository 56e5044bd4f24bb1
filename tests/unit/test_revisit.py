"""The adaptive revisit schedule, on virtual time."""

from __future__ import annotations

from pathlib import Path

from trawl.frontier.revisit import Revisits
from trawl.models import NewUrl, UrlStatus
from trawl.storage.open import open_store
from trawl.testing import FakeClock


def test_interval_halves_on_change_doubles_otherwise_within_bounds(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    clock = FakeClock()
    frontier = store.frontier
    r = Revisits(
        frontier=frontier,
        clock=clock,
        counters=store.counters,
        initial=100.0,
        minimum=30.0,
        maximum=500.0,
    )
    assert r.interval(None, changed=None) == 100.0
    assert r.interval(100.0, changed=True) == 50.0
    assert r.interval(50.0, changed=True) == 30.0
    assert r.interval(100.0, changed=False) == 200.0
    assert r.interval(400.0, changed=False) == 500.0

    frontier.add([NewUrl("http://a.test/", 1, "a.test", 0, 0)], now=clock.now())
    lease = frontier.take(clock.now())
    assert lease is not None
    frontier.finish(lease, UrlStatus.PARSED, host_ready_at=clock.now())
    assert r.schedule("a.test", 1, None, changed=None) == 100.0
    clock.advance(99)
    assert frontier.wake_due(clock.now()) == 0
    clock.advance(1)
    assert frontier.wake_due(clock.now()) == 1
    again = frontier.take(clock.now())
    assert again is not None
    assert again.revisit == 100.0
    store.close()
