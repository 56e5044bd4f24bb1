"""The last check before a request goes out: its lease must still have time left.

A fetch is made under a lease on its host (one request in flight per host, fleet-wide).
A worker stopped between taking the lease and sending (SIGSTOP, a long pause, a
swapped-out machine) must not send after its lease expired: the host may be leased to
another worker by then, and two requests would be in flight at once. So each lease's
fetches run under a check (``sending_under``: a context variable, each lease being
fetched in a task of its own), and the client calls ``check_send`` right before it
writes a request, with no await in between. The check compares the monotonic clock with
the lease's end, less a margin that lets the request end within its lease; past it
the fetch raises ``LeaseEndingError`` and the fetch role gives the URL back untouched.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from trawl.errors import TrawlError

__all__ = ["LeaseEndingError", "SendWindow", "check_send", "sending_under"]


class LeaseEndingError(TrawlError):
    """A request was not sent: the lease it would go out under ends too soon."""


_CHECK: ContextVar[Callable[[], None] | None] = ContextVar("trawl_send_check", default=None)


class SendWindow:
    """Until when requests may go out under one lease (monotonic clock)."""

    def __init__(
        self,
        *,
        expires: float,
        now: float,
        margin: float,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """``expires`` and ``now`` on the crawl's clock (the lease's end and the time it
        was taken); from then on only ``monotonic`` is read, which no clock step moves."""
        self._monotonic = monotonic
        self.until = monotonic() + (expires - now) - margin

    def __call__(self) -> None:
        left = self.until - self._monotonic()
        if left <= 0:
            raise LeaseEndingError(f"lease ends too soon to send ({-left:.1f} s past its margin)")


@contextmanager
def sending_under(check: Callable[[], None]) -> Iterator[None]:
    """Requests sent in this context (this task) first pass ``check``."""
    token = _CHECK.set(check)
    try:
        yield
    finally:
        _CHECK.reset(token)


def check_send() -> None:
    """Called by a client just before it writes a request (raises ``LeaseEndingError``)."""
    check = _CHECK.get()
    if check is not None:
        check()
