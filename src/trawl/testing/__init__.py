"""Test helpers that ship with trawl: a fake clock and the multi-host test web."""

from trawl.testing.clock import FakeClock

__all__ = ["FakeClock"]
