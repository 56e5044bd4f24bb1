"""robots.txt per origin: cached rules, their expiry, and what to do while unreachable.

The rules come from ``trawl.fetch.robots`` (pure); this module keeps them per origin
(scheme, host, port, as RFC 9309 scopes them) in memory and in the durable store, so a
restarted crawl does not fetch every robots.txt again within its 24 hours.
``fetch_robots`` fetches one (redirects followed, up to five hops, at the host's pace)
and records it, for a page's URL (the fetch stage) and for a browser's requests
(``fetch/render/gate.py``) alike.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from trawl import urls
from trawl.errors import UrlError
from trawl.fetch.http import FetchError, FetchResponse
from trawl.fetch.robots import MAX_BYTES as ROBOTS_MAX_BYTES
from trawl.fetch.robots import (
    MAX_REDIRECTS,
    RETRY_BASE,
    RETRY_CAP,
    FetchOutcome,
    RobotsGroup,
    RobotsRules,
    retry_delay,
    rules_for_fetch,
    rules_for_outage,
)
from trawl.memory import MemoryLimits
from trawl.storage.base import RobotsRow, RobotsStore


def origin_of(url: str) -> str:
    """``scheme://authority`` of a normalised URL: the scope of one robots.txt."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0].split('?', 1)[0]}"


# What one origin's rules hold in memory, parsed and with their matchers compiled
# (measured with tracemalloc: 1.3 to 2 KB for a robots.txt of one group and one rule,
# 480 KB for one of 2,000 rules of some 20 characters, 60 KB as written).
_RULES_BASE = 1_536
_RULE_BYTES = 150
_PATTERN_BYTE = 4
# What an origin costs beside rules another origin holds already: its entry and its
# ``RobotsRules`` sharing the other's parse (tracemalloc: some 300 bytes).
_ORIGIN_BYTES = 320


def rules_bytes(rules: RobotsRules) -> int:
    """An estimate of what ``rules`` hold in memory, matchers compiled."""
    n = chars = 0
    for group in rules.groups:
        n += len(group.rules) + len(group.agents)
        chars += sum(len(rule.pattern) for rule in group.rules)
    return _RULES_BASE + _RULE_BYTES * n + _PATTERN_BYTE * chars


# Rules are shared by content: their outcome, groups and sitemaps (not their times).
_Content = tuple[FetchOutcome, tuple[RobotsGroup, ...], tuple[str, ...]]


class _Shared:
    """One content's rules, held for as many origins as ``refs``."""

    __slots__ = ("cost", "refs", "rules")

    def __init__(self, rules: RobotsRules) -> None:
        self.rules = rules
        self.refs = 0
        self.cost = rules_bytes(rules)


class RobotsCache:
    """Rules per origin; ``None`` from ``get`` means robots.txt must be fetched first.

    Held in memory: the most recently used, up to ``max_bytes`` (``rules_bytes``) and
    ``capacity`` origins; the others are parsed again from the store when wanted. A
    count alone did not bound it: a robots.txt may be 500 KB, and hosts serving such
    files (as many as a site has subdomains) held some 4 MB each. Origins serving the
    same rules (a platform's subdomains, the common ``Disallow:`` alone, every 404)
    share one parse and one set of compiled matchers: such an origin costs some 300
    bytes rather than 1.3 KB and more.
    """

    def __init__(
        self,
        store: RobotsStore,
        *,
        capacity: int = 50_000,
        max_bytes: int = MemoryLimits().robots,
        retry_base: float = RETRY_BASE,
        retry_cap: float = RETRY_CAP,
    ) -> None:
        self._store = store
        self._retry_base = retry_base
        self._retry_cap = retry_cap
        self._mem: OrderedDict[str, RobotsRules] = OrderedDict()
        self._shared: dict[_Content, _Shared] = {}
        self._capacity = capacity
        self._max_bytes = max_bytes
        self.held_bytes = 0  # the estimate of what ``_mem`` holds

    @property
    def distinct(self) -> int:
        """Distinct rules held (origins sharing rules count once)."""
        return len(self._shared)

    def _remember(self, origin: str, rules: RobotsRules) -> RobotsRules:
        """Hold ``rules`` for ``origin``, sharing an equal content's; what is held."""
        self._forget(origin)
        content = (rules.outcome, rules.groups, rules.sitemaps)
        shared = self._shared.get(content)
        if shared is None:
            shared = self._shared[content] = _Shared(rules)
            self.held_bytes += shared.cost
        else:
            rules = shared.rules.restamped(fetched_at=rules.fetched_at, expires_at=rules.expires_at)
        shared.refs += 1
        self._mem[origin] = rules
        self.held_bytes += _ORIGIN_BYTES
        # The newest stays even alone over the budget: the fetch stage asks for it next.
        while len(self._mem) > 1 and (
            len(self._mem) > self._capacity or self.held_bytes > self._max_bytes
        ):
            self._forget(next(iter(self._mem)))
        return rules

    def _forget(self, origin: str) -> None:
        rules = self._mem.pop(origin, None)
        if rules is None:
            return
        self.held_bytes -= _ORIGIN_BYTES
        content = (rules.outcome, rules.groups, rules.sitemaps)
        shared = self._shared[content]
        shared.refs -= 1
        if not shared.refs:
            del self._shared[content]
            self.held_bytes -= shared.cost

    def __len__(self) -> int:
        return len(self._mem)

    def get(self, origin: str, now: float) -> RobotsRules | None:
        rules = self._mem.get(origin)
        if rules is not None:
            self._mem.move_to_end(origin)
        else:
            row = self._store.load(origin)
            if row is None:
                return None
            rules = self._remember(origin, _rules_from_row(row))
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
        return self._remember(origin, rules)


class _Getter(Protocol):
    async def get(self, url: str, *, max_body_bytes: int | None = None) -> FetchResponse: ...


class _Counter(Protocol):
    def add(self, name: str, n: int = 1) -> Any: ...


@dataclass(frozen=True, slots=True)
class RobotsFetch:
    """What fetching an origin's robots.txt came to."""

    rules: RobotsRules | None  # None: the address guard refused the host
    trouble: bool  # unreachable, 5xx, a network error: slow the host down
    blocked: FetchError | None = None
    received: int = 0  # bytes as received


async def fetch_robots(
    client: _Getter,
    cache: RobotsCache,
    origin: str,
    *,
    now: Callable[[], float],
    pause: Callable[[], Awaitable[None]],
    counters: _Counter,
) -> RobotsFetch:
    """Fetch ``origin``/robots.txt (``pause`` between two hops keeps the host's pace),
    record the outcome in ``cache`` and count it (``robots:<outcome>``)."""
    url = origin + "/robots.txt"
    status: int | None = None
    body: bytes | None = None
    redirects = received = 0
    trouble = False
    while True:
        try:
            resp = await client.get(url, max_body_bytes=ROBOTS_MAX_BYTES + 1)
        except FetchError as exc:
            counters.add(f"robots:error:{exc.kind}")
            if exc.kind == "blocked":
                return RobotsFetch(None, True, exc, received)
            trouble = True
            break
        received += len(resp.raw_body)
        status, body = resp.status, resp.body
        location = resp.header("location")
        if 300 <= status < 400 and location and redirects < MAX_REDIRECTS:
            try:
                url = urls.join(url, location)
            except UrlError:
                break
            redirects += 1
            await pause()
            continue
        break
    rules = cache.record(origin, status=status, body=body, now=now(), redirects=redirects)
    trouble = trouble or rules.outcome is FetchOutcome.UNREACHABLE
    counters.add(f"robots:{rules.outcome.value}")
    return RobotsFetch(rules, trouble, None, received)


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
