"""Admission: the one gate every discovered URL passes before the frontier.

Seeds, links from pages, redirect targets and canonical links all come through here:
normal form, scope, trap limits, then the frontier's exact seen check and host
budgets. Every URL turned away is counted under ``dropped:<reason>``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from trawl import urls
from trawl.errors import UrlError
from trawl.frontier.traps import ScopeFilter, TrapLimits, trap_reason
from trawl.models import AddResult, NewUrl
from trawl.storage.base import Frontier


class CounterSink(Protocol):
    def add(self, name: str, n: int = 1) -> None: ...


@dataclass(frozen=True, slots=True)
class Candidate:
    """A URL found somewhere, already in normal form (or to be normalised)."""

    url: str
    depth: int
    via: str | None = None
    hops: int = 0


class Admission:
    def __init__(
        self,
        *,
        frontier: Frontier,
        scope: ScopeFilter,
        limits: TrapLimits,
        counters: CounterSink,
        strip_tracking: bool = False,
    ) -> None:
        self._frontier = frontier
        self._scope = scope
        self._limits = limits
        self._counters = counters
        self._strip = strip_tracking

    @property
    def scope(self) -> ScopeFilter:
        return self._scope

    def seed(self, raw: Iterable[str], *, now: float) -> tuple[AddResult, list[str]]:
        """Admit seed URLs, their hosts into the scope; also ``URL: reason`` per bad seed."""
        candidates, errors = [], []
        for line in raw:
            try:
                url = urls.normalize(line.strip(), strip_tracking=self._strip)
            except UrlError as exc:
                errors.append(f"{line}: {exc.reason}")
                continue
            self._scope.add_host(urls.host_key(url))
            candidates.append(Candidate(url, depth=0))
        return self.offer(candidates, now=now), errors

    def offer(
        self, candidates: Iterable[Candidate], *, now: float, normalised: bool = True
    ) -> AddResult:
        """Admit what may be crawled; count the rest by reason."""
        batch: list[NewUrl] = []
        dropped: dict[str, int] = {}
        limits, scope = self._limits, self._scope
        for c in candidates:
            url = c.url
            if not normalised:
                try:
                    url = urls.normalize(url, strip_tracking=self._strip)
                except UrlError as exc:
                    dropped[exc.reason] = dropped.get(exc.reason, 0) + 1
                    continue
            host = urls.host_key(url)
            if not scope.allows(host):
                dropped["out of scope"] = dropped.get("out of scope", 0) + 1
                continue
            reason = trap_reason(url, c.depth, limits)
            if reason is not None:
                dropped[reason] = dropped.get(reason, 0) + 1
                continue
            batch.append(
                NewUrl(
                    url=url,
                    fp=urls.fingerprint(url),
                    host=host,
                    depth=c.depth,
                    priority=c.depth,
                    via=c.via,
                    hops=c.hops,
                )
            )
        result = self._frontier.add(batch, now=now) if batch else AddResult(())
        for reason, n in result.dropped.items():
            dropped[reason] = dropped.get(reason, 0) + n
        for reason, n in dropped.items():
            self._counters.add(f"dropped:{reason}", n)
        self._counters.add("links:seen", result.seen)
        self._counters.add("links:new", len(result.added))
        return AddResult(result.added, seen=result.seen, dropped=dropped)
