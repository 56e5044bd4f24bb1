"""Calls to a store's service made again while it is out of reach, for a bounded time.

One loop for every backend that talks to a server: Redis (``redis/conn.py``: every
command, for ``conn.OUTAGE``) and S3 (``s3/objects.py``: the requests its client does
not retry itself). The time counts from the first try, so a call that hung for the
whole of it is not made again; the pause doubles up to ``most``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["again_until", "never"]

T = TypeVar("T")


def never() -> bool:
    """A ``give_up`` that never gives up."""
    return False


def _nothing() -> None:
    pass


def again_until(
    call: Callable[[], T],
    transient: Callable[[Exception], bool],
    within: float,
    pause: float,
    most: float,
    *,
    give_up: Callable[[], bool] = never,
    retried: Callable[[], None] = _nothing,
    now: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """``call()``, made again after an error ``transient`` says is worth it, until
    ``within`` seconds from the first try, or ``give_up`` (asked after each failure:
    a process told twice to stop). ``retried`` runs before each new try."""
    deadline = now() + within
    while True:
        try:
            return call()
        except Exception as exc:
            if not transient(exc) or now() + pause > deadline or give_up():
                raise
        sleep(pause)
        pause = min(pause * 2, most)
        retried()
