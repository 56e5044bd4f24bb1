"""Revisit policy: pages that change often come back sooner, pages that do not, later.

A page fetched once comes back after the initial interval. Each later visit halves
the interval when the text changed and doubles it when it did not (a 304 Not Modified
or the same text), within ``[minimum, maximum]``: the classic adaptive schedule, so a
fresh index spends its requests where the web moves. Revisits send If-None-Match /
If-Modified-Since with the validators of the last fetch (the frontier keeps them).
A page a sitemap says changed after its last fetch (``lastmod``) is fetched again at
once (``expedite``), its interval kept.
In OPIC order the interval also moves the revisit's key (``Ranker.revisit_shift``):
a page that changes often is fetched before one that does not.
"""

from __future__ import annotations

from trawl.clock import Clock
from trawl.frontier.admission import CounterSink
from trawl.frontier.priority import Ranker
from trawl.storage.base import Frontier


class Revisits:
    def __init__(
        self,
        *,
        frontier: Frontier,
        clock: Clock,
        counters: CounterSink,
        initial: float,
        minimum: float,
        maximum: float,
        ranker: Ranker | None = None,
    ) -> None:
        self._frontier = frontier
        self._ranker = ranker
        self._clock = clock
        self._count = counters
        self._initial = initial
        self._min = min(minimum, initial)
        self._max = max(maximum, initial)

    def interval(self, previous: float | None, *, changed: bool | None) -> float:
        """The next interval: ``changed`` None for a first visit."""
        if previous is None or changed is None:
            return self._initial
        nxt = previous / 2 if changed else previous * 2
        return min(self._max, max(self._min, nxt))

    def schedule(
        self, host: str, fp: int, previous: float | None, *, changed: bool | None
    ) -> float:
        interval = self.interval(previous, changed=changed)
        shift = 0
        if self._ranker is not None:
            shift = self._ranker.revisit_shift(previous, interval, self._initial)
        self._frontier.revisit(
            host, fp, due=self._clock.now() + interval, interval=interval, shift=shift
        )
        self._count.add("revisit:scheduled")
        if changed:
            self._count.add("revisit:changed")
        elif changed is False:
            self._count.add("revisit:unchanged")
        return interval

    def expedite(self, host: str, fp: int, previous: float | None) -> None:
        """Fetch a page again now: it changed since its fetch (a sitemap's ``lastmod``).
        A page waiting for its revisit is brought forward; its interval stays."""
        interval = previous if previous is not None else self._initial
        self._frontier.revisit(host, fp, due=self._clock.now(), interval=interval)
        self._count.add("revisit:lastmod")
