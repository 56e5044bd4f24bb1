"""When a host may be contacted again: its delay, its Crawl-delay, and back-off.

Pure state keyed by host, time passed in. The delay between two requests to a host is
the crawl's delay (or the operator's override for that host, which may be smaller or
larger), or the host's Crawl-delay when larger (bounded by a maximum): an override
never takes a host below what its robots.txt asks.
429 and 503 (and 5xx or network errors) double a back-off factor, honouring
Retry-After; successful answers shrink it again.
"""

from __future__ import annotations

import email.utils
import math
from collections.abc import Callable
from dataclasses import dataclass

from trawl.lru import Lru

# Hosts whose pace is held (some 90 bytes each and the name; only those with a Crawl-delay
# or a back-off): the least recently fetched beyond are forgotten. Was 1,000,000 (some
# 150 MB); four times the frontier's 50,000.
MAX_HOSTS = 200_000


@dataclass(slots=True)
class _HostPace:
    crawl_delay: float | None = None
    backoff: float = 0.0  # extra seconds added after trouble


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a Retry-After value (delta-seconds or HTTP-date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - now)


class Politeness:
    """Per-host pacing for the fetch stage."""

    def __init__(
        self,
        *,
        delay: float,
        max_crawl_delay: float,
        max_backoff: float,
        max_hosts: int = MAX_HOSTS,
        overrides: Callable[[str], float | None] | None = None,
    ) -> None:
        """``overrides(host)``: the operator's delay for a host, or None."""
        self._delay = delay
        self._overrides = overrides
        self._max_crawl_delay = max_crawl_delay
        self._max_backoff = max_backoff
        # Every fetch sets its host's Crawl-delay, so the hosts forgotten first are
        # those least recently fetched: set again at their next fetch, a back-off lost.
        self._hosts: Lru[str, _HostPace] = Lru(max_hosts)

    def _pace(self, host: str) -> _HostPace:
        return self._hosts.get_or_add(host, _HostPace)

    def set_delay(self, delay: float) -> None:
        """The crawl's own delay from now on (a steered crawl)."""
        self._delay = delay

    def set_crawl_delay(self, host: str, seconds: float | None) -> None:
        if seconds is not None and (math.isnan(seconds) or seconds < 0):
            seconds = None
        if seconds is None:
            # Most hosts ask no Crawl-delay: a host with neither it nor a back-off is
            # not held (what it would hold is what a host not held gets).
            pace = self._hosts.get(host)
            if pace is not None:
                pace.crawl_delay = None
                self._drop_if_plain(host, pace)
            return
        self._pace(host).crawl_delay = seconds

    def _drop_if_plain(self, host: str, pace: _HostPace) -> None:
        if pace.crawl_delay is None and not pace.backoff:
            self._hosts.pop(host)

    def delay(self, host: str) -> float:
        """The gap this host gets between two requests, before any back-off."""
        pace = self._hosts.peek(host)
        crawl_delay = pace.crawl_delay if pace is not None else None
        base = self._delay
        if self._overrides is not None:
            own = self._overrides(host)
            if own is not None:
                base = own
        if crawl_delay is None:
            return base
        return max(base, min(crawl_delay, self._max_crawl_delay))

    def after_success(self, host: str, now: float) -> float:
        pace = self._hosts.peek(host)
        if pace is None:
            return now + self.delay(host)
        if pace.backoff:
            pace.backoff = pace.backoff / 2 if pace.backoff > 1.0 else 0.0
        wait = self.delay(host) + pace.backoff
        self._drop_if_plain(host, pace)
        return now + wait

    def after_trouble(self, host: str, now: float, *, retry_after: float | None = None) -> float:
        """A 429/503/5xx or a network error: slow the host down."""
        pace = self._pace(host)
        base = self.delay(host)
        pace.backoff = min(self._max_backoff, max(base, pace.backoff * 2 or base))
        wait = base + pace.backoff
        if retry_after is not None:
            wait = max(wait, min(retry_after, self._max_backoff))
        return now + wait

    def backoff(self, host: str) -> float:
        pace = self._hosts.peek(host)
        return pace.backoff if pace is not None else 0.0
