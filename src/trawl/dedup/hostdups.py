"""Duplicate feedback to the frontier: hosts whose recent pages are mostly repeats.

Session ids, mirrors and endless facets show up as a run of pages that the parse
stage finds to be exact or near duplicates of pages already kept. ``HostDupTracker``
keeps, per host, the outcomes of the last ``window`` parsed pages and says when a
host should be demoted (its priority lowered, its budget cut), with a reason for the
record. It is pure and time-free: the parse stage calls ``record`` with each outcome
and passes what it says on to ``Frontier.demote_host``.

A host is demoted once, and again only when its duplicate share has grown by at
least ``worse_by`` since the last demotion. Memory is bounded: at most ``max_hosts``
hosts are tracked, the least recently seen forgotten first (a forgotten host starts
afresh, which is safe: the frontier keeps its demotion).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from trawl.lru import Lru

__all__ = ["Demotion", "HostDupTracker", "Outcome"]


class Outcome(enum.IntEnum):
    """What the parse stage made of a page."""

    NEW = 0
    DUPLICATE = 1  # the exact text of a kept page
    NEAR_DUPLICATE = 2  # within the MinHash threshold of a kept page
    CANONICAL_ELSEWHERE = 3  # names another URL as canonical


@dataclass(frozen=True, slots=True)
class Demotion:
    """What to pass to ``Frontier.demote_host``."""

    host: str
    priority: int
    budget: int
    reason: str
    share: float


class _Window:
    """The last outcomes of one host, two bits each in one integer, the newest lowest
    (181 bytes a host with a full window and its map entry, measured: 248 as a ring of
    bytes)."""

    __slots__ = ("bits", "demoted_at", "level", "seen")

    def __init__(self) -> None:
        self.bits = 0  # the unfilled part holds NEW (0), never counted
        self.seen = 0
        self.demoted_at: float | None = None  # the share at the last demotion
        self.level = 0

    def push(self, outcome: Outcome, mask: int) -> None:
        """``mask``: the window's bits (the oldest outcome shifted out past them)."""
        self.bits = ((self.bits << 2) | outcome) & mask
        self.seen += 1

    def counts(self, lows: int) -> tuple[int, int, int]:
        """The window's duplicates (01), near-duplicates (10) and canonical elsewhere
        (11), in one pass; ``lows``: the low bit of every field."""
        low = self.bits & lows
        high = (self.bits >> 1) & lows
        both = low & high
        return (low ^ both).bit_count(), (high ^ both).bit_count(), both.bit_count()


assert max(Outcome) < 4, "an outcome is two bits of a window"


class HostDupTracker:
    """Per-host windows of parse outcomes; ``record`` returns a demotion when due."""

    def __init__(
        self,
        *,
        window: int = 50,
        min_pages: int = 20,
        threshold: float = 0.6,
        worse_by: float = 0.1,
        count_canonical: bool = False,
        priority_step: int = 10,
        budget_slack: float = 0.1,
        budget_floor: int = 10,
        max_hosts: int = 100_000,
    ) -> None:
        if not 1 <= min_pages <= window:
            raise ValueError("need 1 <= min_pages <= window")
        if max_hosts < 1:
            raise ValueError("max_hosts must be at least 1")
        self.window = window
        self.min_pages = min_pages
        self.threshold = threshold
        self.worse_by = worse_by
        self.count_canonical = count_canonical
        self.priority_step = priority_step
        self.budget_slack = budget_slack
        self.budget_floor = budget_floor
        self.max_hosts = max_hosts
        self._hosts: Lru[str, _Window] = Lru(max_hosts)
        self._mask = (1 << 2 * window) - 1
        self._lows = self._mask // 3  # 0b0101...01: the low bit of every field

    def __len__(self) -> int:
        return len(self._hosts)

    def share(self, host: str) -> float | None:
        """The duplicate share of the host's window, None if it is not tracked."""
        w = self._hosts.peek(host)
        if w is None:
            return None
        filled = min(w.seen, self.window)
        return self._share(w.counts(self._lows), filled) if filled else 0.0

    def _share(self, counts: tuple[int, int, int], filled: int) -> float:
        dups, near, canonical = counts
        return (dups + near + (canonical if self.count_canonical else 0)) / filled

    def record(self, host: str, outcome: Outcome, *, admitted: int) -> Demotion | None:
        """Count one parsed page of ``host``; ``admitted`` is the host's page count so far.

        Returns a demotion when the window holds at least ``min_pages`` outcomes, the
        duplicate share exceeds ``threshold``, and the host was not demoted before at
        a share within ``worse_by`` of this one.
        """
        w = self._hosts.get_or_add(host, _Window)
        w.push(Outcome(outcome), self._mask)
        filled = min(w.seen, self.window)
        if filled < self.min_pages:
            return None
        counts = w.counts(self._lows)
        share = self._share(counts, filled)
        if share <= self.threshold:
            return None
        if w.demoted_at is not None and share < w.demoted_at + self.worse_by - 1e-9:
            return None
        w.demoted_at = share
        w.level += 1
        admitted = max(0, admitted)
        budget = admitted + max(self.budget_floor, math.ceil(admitted * self.budget_slack))
        return Demotion(
            host=host,
            priority=w.level * self.priority_step,
            budget=budget,
            reason=self._reason(counts, share, filled),
            share=share,
        )

    def _reason(self, counts: tuple[int, int, int], share: float, filled: int) -> str:
        dups, near, canonical = counts
        parts = [f"{dups} duplicates", f"{near} near-duplicates"]
        if self.count_canonical:
            parts.append(f"{canonical} canonical elsewhere")
            kinds = "duplicates, near-duplicates or canonical elsewhere"
        else:
            kinds = "duplicates or near-duplicates"
        return f"{round(share * 100)}% of the last {filled} pages were {kinds} ({', '.join(parts)})"
