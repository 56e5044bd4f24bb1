"""Helpers that ship with trawl: a fake clock and the deterministic sample web.

The sample web (``trawl.testing.sampleweb``) serves ``make demo`` and the benchmarks;
``vhost`` and ``requestlog`` are its loopback server and request log. The hostile test
web and its oracle are not shipped: they live in the checkout's ``tests/testweb/``.
"""

from trawl.testing.clock import FakeClock

__all__ = ["FakeClock"]
