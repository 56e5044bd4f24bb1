"""robots.txt per origin: cached rules, their expiry, and what to do while unreachable.

The rules come from ``trawl.fetch.robots`` (pure); this module keeps them per origin
(scheme, host, port, as RFC 9309 scopes them) in memory and in the durable store, so a
restarted crawl does not fetch every robots.txt again within its 24 hours.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace

from trawl.fetch.robots import (
    MAX_REDIRECTS,
    RETRY_BASE,
    RETRY_CAP,
    FetchOutcome,
    RobotsRules,
    retry_delay,
    rules_for_fetch,
    rules_for_outage,
)
from trawl.storage.base import RobotsRow, RobotsStore


def origin_of(url: str) -> str:
    """``scheme://authority`` of a normalised URL: the scope of one robots.txt."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0].split('?', 1)[0]}"


class RobotsCache:
    """Rules per origin; ``None`` from ``get`` means robots.txt must be fetched first."""

    def __init__(
        self,
        store: RobotsStore,
        *,
        capacity: int = 50_000,
        retry_base: float = RETRY_BASE,
        retry_cap: float = RETRY_CAP,
    ) -> None:
        self._store = store
        self._retry_base = retry_base
        self._retry_cap = retry_cap
        self._mem: OrderedDict[str, RobotsRules] = OrderedDict()
        self._capacity = capacity

    def _remember(self, origin: str, rules: RobotsRules) -> None:
        self._mem[origin] = rules
        self._mem.move_to_end(origin)
        while len(self._mem) > self._capacity:
            self._mem.popitem(last=False)

    def get(self, origin: str, now: float) -> RobotsRules | None:
        rules = self._mem.get(origin)
        if rules is None:
            row = self._store.load(origin)
            if row is None:
                return None
            rules = _rules_from_row(row)
            self._remember(origin, rules)
        if rules.is_expired(now):
            return None
        return rules

    def record(
        self, origin: str, *, status: int | None, body: bytes | None, now: float, redirects: int = 0
    ) -> RobotsRules:
        """Store the outcome of fetching ``origin``/robots.txt and return the rules."""
        row = self._store.load(origin)
        failures = (row.failures if row is not None else 0) + 1
        rules = rules_for_fetch(status, body, now=now, redirects=redirects, failures=failures)
        if rules.outcome is FetchOutcome.UNREACHABLE:
            since = row.unreachable_since if row and row.unreachable_since is not None else now
            last_good = _good_rules(row)
            rules = rules_for_outage(
                last_good, unreachable_for=now - since, now=now, failures=failures
            )
            wait = retry_delay(failures, base=self._retry_base, cap=self._retry_cap)
            rules = replace(rules, expires_at=now + wait)
            new = RobotsRow(
                host=origin,
                status=status,
                body=None,
                fetched_at=now,
                expires_at=rules.expires_at,
                failures=failures,
                unreachable_since=since,
                good_status=row.good_status if row else None,
                good_body=row.good_body if row else None,
                good_fetched_at=row.good_fetched_at if row else None,
            )
        else:
            kept = body[: 512_000 + 1] if body is not None else None
            new = RobotsRow(
                host=origin,
                status=status,
                body=kept,
                fetched_at=now,
                expires_at=rules.expires_at,
                failures=0,
                unreachable_since=None,
                good_status=status,
                good_body=kept,
                good_fetched_at=now,
            )
        self._store.save(new)
        self._remember(origin, rules)
        return rules


def _rules_from_row(row: RobotsRow) -> RobotsRules:
    if row.unreachable_since is not None:
        # In an outage: the same answer as when it was recorded, until the stored retry.
        rules = rules_for_outage(
            _good_rules(row),
            unreachable_for=row.fetched_at - row.unreachable_since,
            now=row.fetched_at,
            failures=row.failures,
        )
        return replace(rules, expires_at=row.expires_at)
    rules = rules_for_fetch(
        row.status, row.body, now=row.fetched_at, redirects=_redirects(row.status)
    )
    return replace(rules, expires_at=row.expires_at)


def _redirects(status: int | None) -> int:
    """A row holds no hop count: a 3xx recorded as an answer (not as an outage) can only
    be the end of too many redirects, which means no rules."""
    return MAX_REDIRECTS if status is not None and 300 <= status <= 399 else 0


def _good_rules(row: RobotsRow | None) -> RobotsRules | None:
    if row is None or row.good_fetched_at is None:
        return None
    return rules_for_fetch(
        row.good_status,
        row.good_body,
        now=row.good_fetched_at,
        redirects=_redirects(row.good_status),
    )
