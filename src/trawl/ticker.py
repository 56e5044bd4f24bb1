"""A daemon thread that calls a function every so many seconds, from ``start`` to
``stop`` (the heap's trims, the index's page-outs)."""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["Ticker"]


class Ticker:
    """Calls ``tick`` every ``every`` seconds in a thread named ``name`` until stopped,
    or until ``tick`` returns False. ``wait(seconds)`` is the thread's only clock: True
    when stopped (a fake in tests; by default the stop event's own wait)."""

    def __init__(
        self,
        tick: Callable[[], bool],
        every: float,
        *,
        name: str,
        wait: Callable[[float], bool] | None = None,
    ) -> None:
        self._tick = tick
        self._every = every
        self._name = name
        self._stopped = threading.Event()
        self._wait = wait if wait is not None else self._stopped.wait
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread (once; not again after ``stop``)."""
        if self._thread is None and not self._stopped.is_set():
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """No more ticks; returns once the thread has ended (at most one tick's wait)."""
        self._stopped.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while not self._wait(self._every) and not self._stopped.is_set():
            if not self._tick():
                return
