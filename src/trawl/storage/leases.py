"""The rules of the shared host lease (``HostLeases``), as pure functions over one row.

The memory and SQLite backends apply them to a host's row; the Redis backend runs the
same rules in a Lua script (``storage/redis/hostleases.py``). Times are wall-clock
seconds passed in, so crawls in different processes (or on different machines of a
fleet) compare them, and tests use plain floats.

A row: the holder (who has a request in flight to the host) and when that lease
lapses, the next allowed contact, and the gap each crawl asked for lately
(``asks``: holder -> (gap, until)). A release moves the next contact to at least the
releaser's own next time and, when it asked for a gap (it contacted the host), to
``now`` plus the largest live ask: so the host gets the largest delay any crawl asks,
whichever crawl goes next. An ask is forgotten ``ASK_MEMORY`` seconds (or four gaps)
after it was last made, so a crawl that ended stops slowing the others.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field

from trawl.storage.base import SharedHost

__all__ = ["LeaseRow", "acquire", "holder_alive", "new_holder", "release"]

ASK_MEMORY = 60.0
MIN_POLL = 0.05  # a crawl asking no gap comes back this soon to a leased host


@dataclass(slots=True)
class LeaseRow:
    holder: str | None = None
    expires: float = 0.0
    next_at: float = 0.0
    asks: dict[str, tuple[float, float]] = field(default_factory=dict)

    def gap(self, now: float) -> float:
        return max((gap for gap, until in self.asks.values() if until > now), default=0.0)

    def view(self, host: str, now: float) -> SharedHost:
        holder = self.holder if self.expires > now else None
        return SharedHost(host, holder, self.expires, self.next_at, self.gap(now))

    def stale(self, now: float) -> bool:
        """Nothing in it matters any more (it may be dropped)."""
        return self.expires <= now and self.next_at <= now and self.gap(now) == 0.0


def acquire(
    row: LeaseRow,
    *,
    holder: str,
    now: float,
    ttl: float,
    alive: Callable[[str], bool] = lambda _holder: True,
    gap: float = 0.0,
) -> float | None:
    """Take the host for ``holder`` (the row is updated): None, or when to ask again.

    ``gap``: how long the host waits after a lease taken from a dead holder (killed,
    or silent past its beat), which counts as that holder's release now: its last
    request may have ended just before, or still run at the server (the caller passes
    a fetch's timeout and its delay). The host waits ``gap`` (or a larger live ask)
    from now, and the caller asks again then.
    """
    other = row.holder
    if other is not None and other != holder and row.expires > now:
        if alive(other):
            # The other's release sets the next contact at least one gap from now.
            wait = max(row.next_at, now + max(row.gap(now), MIN_POLL))
            return min(row.expires, wait)
        row.holder, row.expires = None, 0.0
        row.next_at = max(row.next_at, now + max(gap, row.gap(now)))
    if row.next_at > now:
        return row.next_at
    row.holder = holder
    row.expires = now + ttl
    return None


def release(row: LeaseRow, *, holder: str, now: float, ready_at: float) -> None:
    """End ``holder``'s lease; the next contact moves as the module says."""
    row.asks = {h: a for h, a in row.asks.items() if a[1] > now}
    asked = ready_at - now
    if asked > 0:
        row.asks[holder] = (asked, now + max(ASK_MEMORY, 4 * asked))
        row.next_at = max(row.next_at, now + row.gap(now))
    row.next_at = max(row.next_at, ready_at)
    if row.holder == holder:
        row.holder = None
        row.expires = 0.0


def new_holder(token: str) -> str:
    """A holder name that says which machine and process hold a lease."""
    return f"{socket.gethostname()}:{os.getpid()}:{token}"


def holder_alive(holder: str) -> bool:
    """False only for a holder on this machine whose process is gone (kill -9)."""
    machine, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if machine != socket.gethostname() or not pid_text.isdigit():
        return True
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    return True
