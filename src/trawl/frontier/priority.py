"""What to fetch first: each URL's score, as the key the frontier orders by.

Two orders (config ``priority``):

- ``"depth"``: the key is the URL's depth (seeds 0), so a host's queue is breadth
  first and, among hosts ready at the same moment, the one with the shallowest URL
  goes first. In-links change nothing.
- ``"opic"`` (the default): OPIC, Abiteboul, Preda and Cobena's On-line Page
  Importance Computation (WWW 2003). Every seed starts with cash (its priority, 1 by
  default); a fetched page passes the cash it holds on to its links in equal shares,
  so a URL's importance is the cash it received, which grows with every in-link found
  while it waits: a page many pages link to rises in its host's queue as they are
  parsed, before breadth-first order would reach it. The score is

      importance x depth_decay ** depth x quality(host) x (initial / interval) ** w

  the last factor only for a revisit (a page that changes often comes back sooner,
  ``frontier/revisit.py``), and ``quality`` the share of the host's pages that were
  kept rather than duplicates or errors (``HostQuality``). The key is
  ``-SCALE * ln(score)`` (``trawl.ranking``); the factors multiply, so the frontier
  raises a waiting URL's key for an in-link from its own record.

A demoted host (``dedup/hostdups.py``) goes after others by ``demotion_step`` per
level: 10 depths, or a score four times lower.
"""

from __future__ import annotations

import math

from trawl.config import PriorityMode
from trawl.lru import Lru
from trawl.ranking import SCALE, importance_key

__all__ = ["HostQuality", "PriorityMode", "Ranker"]

DEPTH_DECAY = 0.9  # a score's factor per link from a seed (opic)
CHANGE_WEIGHT = 0.5  # exponent of the revisit factor (opic)


def _no_pages() -> list[int]:
    return [0, 0]  # good, bad


class HostQuality:
    """Per host, the pages kept against the duplicates and errors seen: a factor in
    (0, 1] for its URLs' scores. Bounded: past ``max_hosts`` the hosts seen longest
    ago are forgotten, a tenth at a time (each starts again at 1, as a new host does)."""

    def __init__(self, *, prior: float = 2.0, max_hosts: int = 100_000) -> None:
        if prior <= 0 or max_hosts < 1:
            raise ValueError("prior must be positive and max_hosts at least 1")
        self.prior = prior
        self.max_hosts = max_hosts
        self._hosts: Lru[str, list[int]] = Lru(max_hosts)  # host -> [good, bad]

    def __len__(self) -> int:
        return len(self._hosts)

    def record(self, host: str, *, good: bool) -> None:
        """One page of ``host`` kept (``good``), or a duplicate, an error, a failure."""
        self._hosts.get_or_add(host, _no_pages)[0 if good else 1] += 1

    def factor(self, host: str) -> float:
        counts = self._hosts.peek(host)
        if counts is None:
            return 1.0
        good, bad = counts
        return (good + self.prior) / (good + bad + self.prior)


class Ranker:
    """Keys for new URLs, cash shares for links, shifts for revisits, by ``mode``."""

    def __init__(
        self,
        mode: PriorityMode = "opic",
        *,
        quality: HostQuality | None = None,
        depth_decay: float = DEPTH_DECAY,
        change_weight: float = CHANGE_WEIGHT,
    ) -> None:
        if mode not in ("opic", "depth"):
            raise ValueError(f"priority must be opic or depth, got {mode!r}")
        if not 0 < depth_decay <= 1:
            raise ValueError("depth_decay must be in (0, 1]")
        self.mode = mode
        self.quality = quality
        self._depth_step = round(-math.log(depth_decay) * SCALE)
        self._change_weight = change_weight

    @property
    def opic(self) -> bool:
        return self.mode == "opic"

    def key(self, host: str, depth: int, cash: float) -> int:
        """The key of a new URL of ``host`` at ``depth`` holding ``cash``."""
        if not self.opic:
            return depth
        key = importance_key(cash) + depth * self._depth_step
        if self.quality is not None:
            key += round(-math.log(self.quality.factor(host)) * SCALE)
        return key

    def seed_cash(self, priority: float | None) -> float:
        """What a seed starts with: its priority (1 when it gives none)."""
        return 1.0 if priority is None else priority

    def share(self, cash: float, links: int) -> float:
        """What each of a page's ``links`` receives of the page's ``cash`` (0 in depth
        order: no in-link raises anything)."""
        if not self.opic or links <= 0:
            return 0.0
        return cash / links

    def stored_cash(self, cash: float) -> float:
        """The cash a new URL is stored with: its share in OPIC; in depth order 1, the
        importance of a seed, so that a crawl continued in OPIC order finds its depth
        keys and cash telling the same story (``trawl.ranking``)."""
        return cash if self.opic else 1.0

    @property
    def demotion_step(self) -> int:
        """A demotion level's weight in the host's order: 10 depths, or a score / 4."""
        return round(math.log(4) * SCALE) if self.opic else 10

    def revisit_shift(self, previous: float | None, interval: float, initial: float) -> int:
        """How a revisit's key moves when its interval goes from ``previous`` (None: a
        first visit, ``initial``) to ``interval``: up for a page that changes often."""
        if not self.opic or interval <= 0:
            return 0
        before = previous if previous and previous > 0 else initial
        return round(self._change_weight * math.log(interval / before) * SCALE)
