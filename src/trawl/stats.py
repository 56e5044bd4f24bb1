"""Read a crawl's numbers from where it lives, also while the crawl runs.

Everything goes through the store's read-only ``CrawlReader`` (SQLite's WAL lets
readers in beside the one writer), so ``trawl stats`` and the API never take the
crawl's lock.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

from trawl.dedup.urlrules import RuleState, UrlRule
from trawl.errors import StorageError
from trawl.models import UrlStatus
from trawl.parse.stage import iso_time
from trawl.storage.base import CrawlReader
from trawl.storage.open import open_reader
from trawl.storage.place import CrawlPlace

Where = Path | CrawlPlace  # a data directory, or a crawl in Redis


def _open(where: Where) -> CrawlReader:
    return where.reader() if isinstance(where, CrawlPlace) else open_reader(where)


def read_meta(data_dir: Where, key: str) -> str | None:
    reader = _open(data_dir)
    try:
        return reader.meta(key)
    finally:
        reader.close()


def read_stats(data_dir: Where) -> dict[str, Any]:
    """URL counts by status, documents, hosts, and every named counter."""
    reader = _open(data_dir)
    try:
        s = reader.stats()
        rules = reader.url_rules()
    finally:
        reader.close()
    statuses = {status.label: s.urls.get(status, 0) for status in UrlStatus}
    counters = s.counters
    return {
        "urls known": sum(statuses.values()),
        "urls": statuses,
        "documents": s.documents,
        "parse backlog": s.parse_backlog,
        "hosts": s.hosts,
        "hosts with queued urls": s.hosts_with_queued,
        "failed by reason": {k[7:]: v for k, v in counters.items() if k.startswith("failed:")},
        "dropped links": {k[8:]: v for k, v in counters.items() if k.startswith("dropped:")},
        "errors": {k[6:]: v for k, v in counters.items() if k.startswith("error:")},
        "http statuses": {k[7:]: v for k, v in counters.items() if k.startswith("status:")},
        "url equivalences": equivalence_summary(rules, counters),
        "counters": {
            k: v
            for k, v in counters.items()
            if not k.startswith(("failed:", "dropped:", "error:", "status:"))
        },
    }


def equivalence_summary(rules: list[UrlRule], counters: dict[str, int]) -> dict[str, int]:
    """How many learned rules there are in each state, on how many hosts, and how many
    URLs they respelled (at admission) or skipped (queued before the rule), and how
    many probable spellings were deferred while a rule learned."""
    by_state = {state: 0 for state in RuleState}
    for rule in rules:
        by_state[rule.state] += 1
    return {
        "hosts with rules applied": len({r.host for r in rules if r.state is RuleState.ACTIVE}),
        "rules applied": by_state[RuleState.ACTIVE],
        "rules learning": by_state[RuleState.CANDIDATE],
        "rules refuted": by_state[RuleState.REFUTED],
        "urls respelled": counters.get("equivalence:rewritten", 0),
        "urls skipped": counters.get("equivalence:skipped", 0),
        "urls given back": counters.get("equivalence:restored", 0),
        "urls deferred": counters.get("equivalence:deferred", 0),
    }


def rule_view(rule: UrlRule) -> dict[str, Any]:
    """A learned rule as the API and ``trawl stats --host`` show it."""
    return {
        "rule": rule.key,
        "state": rule.state.label,
        "pages": len(rule.pages),
        "values": len(rule.values),
        "rewrites": rule.rewrites,
        "prefer": rule.prefer if rule.key == "slash" else None,
        "reason": rule.reason or None,
        "since": iso_time(rule.changed_at) if rule.changed_at else None,
    }


def rule_views(rules: list[UrlRule]) -> list[dict[str, Any]]:
    """Rules as ``rule_view`` shows them: applied first, then learning, then refuted."""
    order = {RuleState.ACTIVE: 0, RuleState.CANDIDATE: 1, RuleState.REFUTED: 2}
    return [rule_view(r) for r in sorted(rules, key=lambda r: (order[r.state], r.key))]


def url_states(data_dir: Where, *, status: str | None = None) -> dict[str, tuple[str, str | None]]:
    """URL -> (status label, reason) for every URL the crawl knows (optionally one status)."""
    wanted = None
    if status is not None:
        labels = {s.label: s for s in UrlStatus}
        if status not in labels:
            raise StorageError(f"unknown status {status!r}; one of {', '.join(labels)}")
        wanted = labels[status]
    reader = _open(data_dir)
    try:
        return {url: (s.label, reason) for url, s, reason in reader.url_states(wanted)}
    finally:
        reader.close()


class RateWindow:
    """Pages per second over about the last ``span`` seconds of a running crawl.

    Times are passed in (monotonic seconds), so the arithmetic is tested without
    sleeping. ``start`` records the count at the start of the run: the first reading
    (the first progress line, one interval later) then has a base to compare with.
    """

    def __init__(self, span: float = 10.0) -> None:
        self._span = span
        self._samples: deque[tuple[float, int]] = deque()

    def start(self, now: float, count: int) -> None:
        self._samples.clear()
        self._samples.append((now, count))

    def rate(self, now: float, count: int) -> float:
        """The rate from the newest sample at least ``span`` old (or the oldest) to now."""
        samples = self._samples
        if not samples or now > samples[-1][0]:
            samples.append((now, count))
        while len(samples) > 2 and now - samples[1][0] >= self._span:
            samples.popleft()
        t0, n0 = samples[0]
        return max(0.0, (count - n0) / (now - t0)) if now > t0 else 0.0
