"""A fake clock: time moves only when a test (or a sleeper) moves it."""

from __future__ import annotations

import asyncio


class FakeClock:
    """Virtual time. ``sleep`` advances time instantly, so delays are exact and free."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("time does not go backwards")
        self._now += seconds

    async def sleep(self, seconds: float) -> None:
        self._now += max(0.0, seconds)
        await asyncio.sleep(0)
