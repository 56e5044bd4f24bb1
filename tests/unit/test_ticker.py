"""The periodic thread under the heap's trims and the index's page-outs."""

from __future__ import annotations

import threading

from trawl.ticker import Ticker


def _running(name: str) -> bool:
    return any(t.name == name for t in threading.enumerate())


def test_ticks_every_period_until_a_tick_says_stop() -> None:
    waits: list[float] = []
    ticks: list[str] = []
    done = threading.Event()

    def wait(seconds: float) -> bool:  # never stopped: the tick ends it
        waits.append(seconds)
        return False

    def tick() -> bool:
        ticks.append(threading.current_thread().name)
        if len(ticks) == 3:
            done.set()
            return False
        return True

    ticker = Ticker(tick, 2.5, name="test-ticker", wait=wait)
    ticker.start()
    assert done.wait(5)
    ticker.stop()
    assert waits == [2.5] * 3
    assert ticks == ["test-ticker"] * 3
    assert not _running("test-ticker")


def test_stop_wakes_the_wait_and_nothing_ticks_after() -> None:
    ticks: list[int] = []

    def tick() -> bool:
        ticks.append(1)
        return True

    ticker = Ticker(tick, 3600.0, name="test-ticker-2")  # the real wait: stop() ends it
    ticker.start()
    ticker.start()  # once
    assert _running("test-ticker-2")
    ticker.stop()
    ticker.stop()
    ticker.start()  # not again after stop
    assert ticks == [] and not _running("test-ticker-2")
