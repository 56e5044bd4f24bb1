"""The crawl process's heap bounds (trawl.memory): arenas capped, trims paced."""

from __future__ import annotations

import sys

import pytest

from trawl import memory
from trawl.testing.clock import FakeClock


def test_trimmer_trims_once_per_period() -> None:
    clock = FakeClock()
    trims: list[float] = []

    def trim() -> bool:
        trims.append(clock.now())
        return True

    t = memory.Trimmer(clock.now, every=10.0, trim_heap=trim)
    assert not t.maybe()  # not before the first period has passed
    clock.advance(9.9)
    assert not t.maybe()
    clock.advance(0.1)
    assert t.maybe()
    assert not t.maybe()  # asked again at once: the period starts from the trim
    clock.advance(25.0)
    assert t.maybe()
    assert not t.maybe()
    assert trims == [1_000_010.0, 1_000_035.0]


def test_default_period_is_the_documented_bound() -> None:
    clock = FakeClock()
    calls: list[int] = []

    def trim() -> bool:
        calls.append(1)
        return True

    t = memory.Trimmer(clock.now, trim_heap=trim)
    clock.advance(memory.TRIM_EVERY)
    assert t.maybe()
    assert calls == [1]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_glibc_calls_answer() -> None:
    # Returns whether glibc took them; on a glibc Linux both do (trim may free nothing).
    assert memory.limit_arenas(memory.MALLOC_ARENAS) in (True, False)
    assert memory.trim() in (True, False)
