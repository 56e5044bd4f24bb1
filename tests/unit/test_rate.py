"""The page rate of the live progress line, with the times given (no sleeping)."""

from __future__ import annotations

import pytest

from trawl.stats import RateWindow


def test_the_first_reading_counts_from_the_start() -> None:
    # The reported case: 896 pages in the first 10 s showed "0.0 pages/s".
    w = RateWindow()
    w.start(100.0, 0)
    assert w.rate(110.0, 896) == pytest.approx(89.6)


def test_a_resumed_crawl_counts_only_this_run() -> None:
    w = RateWindow()
    w.start(0.0, 5000)  # pages stored by earlier runs
    assert w.rate(10.0, 5100) == pytest.approx(10.0)


def test_the_rate_follows_the_last_ten_seconds() -> None:
    w = RateWindow(span=10.0)
    w.start(0.0, 0)
    count = 0
    readings = []
    for tick in range(1, 61):  # a reading every 0.5 s; 20 pages/s, then none after 15 s
        now = tick * 0.5
        if now <= 15.0:
            count += 10
        readings.append((now, w.rate(now, count)))
    by_time = dict(readings)
    assert by_time[10.0] == pytest.approx(20.0)
    assert by_time[15.0] == pytest.approx(20.0)
    assert by_time[20.0] == pytest.approx(10.0)  # half of the last 10 s were idle
    assert by_time[30.0] == pytest.approx(0.0)


def test_no_time_passed_is_no_rate() -> None:
    w = RateWindow()
    w.start(5.0, 0)
    assert w.rate(5.0, 3) == 0.0
    assert RateWindow().rate(1.0, 10) == 0.0
