"""robots.txt rules per RFC 9309: parse once, check URLs in microseconds, no I/O.

Where it sits: the fetcher downloads ``/robots.txt`` of a host (following at most
``MAX_REDIRECTS`` redirects, reading at most ``MAX_BYTES + 1`` bytes), turns the HTTP
result into a ``RobotsRules`` with ``rules_for_fetch``, caches it in the host record
until ``expires_at``, and asks ``is_allowed`` before every request to that host. The
object is immutable and picklable, so it can be stored and sent to worker processes.

Parsing details are in ``_robots_parse``, matching details in ``_robots_match``. In short:
groups are chosen by product token (exact, case-insensitive; ``User-agent: Foo`` does not
apply to ``FooBot``), all groups naming a token are merged, and the ``*`` groups apply
only to a token that no group names. Inside the chosen group the longest matching
pattern wins and allow wins a tie. ``/robots.txt`` itself is always allowed.

Several tokens at once (the crawler's own plus opt-out tokens such as ``GPTBot``,
``CCBot`` or ``Google-Extended``): each token chooses its groups as above, falling back
to ``*`` on its own, and a URL is disallowed if it is disallowed for any of them. The
crawl delay for several tokens is the largest of their delays: the most cautious
reading of the requests that apply.

Policies chosen where RFC 9309 leaves room (section numbers are RFC 9309's):

- 2xx: the body is parsed. 4xx other than 429 (401 and 403 included): no rules, all
  allowed (2.3.1.3, the RFC's "unavailable"). 429, 5xx and network errors: disallow
  everything for now (2.3.1.4, the RFC's "unreachable"), retried after ``retry_delay``:
  ``RETRY_BASE`` (5 min) doubling per consecutive failure up to ``RETRY_CAP`` (1 h).
- 1xx, a 3xx the fetcher could not follow (no usable Location), and codes outside
  100-599 are treated as unreachable: nothing says the file is absent, so be careful.
  That includes 304: this module keeps no previous copy, so a fetcher that revalidates
  with If-None-Match should keep its cached rules on a 304 (``dataclasses.replace``
  with a new ``expires_at``) instead of calling ``rules_for_fetch``.
- A 3xx after ``MAX_REDIRECTS`` (5) hops, i.e. more than five consecutive redirects:
  no rules. 2.3.1.2 says the crawler MAY then assume the file is "unavailable", and
  "unavailable" is the 4xx case of 2.3.1.3; Google documents the same (a 404).
- Cache lifetime: at most ``CACHE_TTL`` (24 h, section 2.4); a fetcher may pass a shorter
  ``ttl`` from Cache-Control.
- Long outage (2.3.1.4): while the file has been unreachable for at most
  ``OUTAGE_GRACE`` (30 days) everything stays disallowed; after that
  ``rules_for_outage`` returns the last good copy (a parsed file or a 4xx "no rules"),
  however old, or no rules at all if there is none, as Google documents. The fetch
  keeps being retried at ``retry_delay`` intervals either way.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from trawl.fetch._robots_match import GroupMatcher, compile_group
from trawl.fetch._robots_parse import (
    MAX_BYTES,
    RobotsGroup,
    RobotsRule,
    parse_robots,
    product_token,
)
from trawl.rules import request_target

__all__ = [
    "CACHE_TTL",
    "MAX_BYTES",
    "MAX_REDIRECTS",
    "OUTAGE_GRACE",
    "RETRY_BASE",
    "RETRY_CAP",
    "FetchOutcome",
    "RobotsGroup",
    "RobotsRule",
    "RobotsRules",
    "retry_delay",
    "rules_for_fetch",
    "rules_for_outage",
]

MAX_REDIRECTS = 5
"""Redirect hops a fetcher follows for /robots.txt (RFC 9309 2.3.1.2: at least five)."""
CACHE_TTL = 86_400.0
"""Longest time, in seconds, a fetched robots.txt is used before it is fetched again."""
RETRY_BASE = 300.0
"""Seconds before the first retry of an unreachable robots.txt."""
RETRY_CAP = 3_600.0
"""Longest interval, in seconds, between retries of an unreachable robots.txt."""
OUTAGE_GRACE = 30 * 86_400.0
"""Seconds of unreachability after which ``rules_for_outage`` stops disallowing all."""

_MEMO_LIMIT = 256


class FetchOutcome(enum.Enum):
    """What the fetch of /robots.txt produced, and so what the rules mean."""

    PARSED = "parsed"
    """2xx: the rules of the body."""
    NO_RULES = "no-rules"
    """4xx other than 429, or too many redirects: everything allowed."""
    UNREACHABLE = "unreachable"
    """429, 5xx, network error, other odd statuses: everything disallowed for now."""


@dataclass(frozen=True, slots=True)
class _Selection:
    matchers: tuple[GroupMatcher, ...]
    crawl_delay: float | None


def _clamp_ttl(ttl: float) -> float:
    return min(ttl, CACHE_TTL) if ttl > 0.0 else 0.0


def _tokens(agents: str | Sequence[str]) -> list[str]:
    names = [agents] if isinstance(agents, str) else [str(agent) for agent in agents]
    return [product_token(name.strip().encode("utf-8", "surrogatepass")) for name in names]


@dataclass(frozen=True, slots=True)
class RobotsRules:
    """The parsed rules of one host's robots.txt, with when they were fetched and expire.

    Build with ``parse``, ``allow_all``, ``disallow_all`` or ``rules_for_fetch``. Checks
    never raise, whatever the URL; results are memoised per agent tuple internally.
    """

    groups: tuple[RobotsGroup, ...] = ()
    sitemaps: tuple[str, ...] = ()
    outcome: FetchOutcome = FetchOutcome.PARSED
    fetched_at: float = 0.0
    expires_at: float = CACHE_TTL
    _index: dict[str, tuple[int, ...]] = field(init=False, repr=False, compare=False)
    _by_agents: dict[object, _Selection] = field(init=False, repr=False, compare=False)
    _by_groups: dict[tuple[int, ...], GroupMatcher | None] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        index: dict[str, list[int]] = {}
        for number, group in enumerate(self.groups):
            for agent in group.agents:
                index.setdefault(agent, []).append(number)
        object.__setattr__(self, "_index", {agent: tuple(ids) for agent, ids in index.items()})
        object.__setattr__(self, "_by_agents", {})
        object.__setattr__(self, "_by_groups", {})

    def restamped(self, *, fetched_at: float, expires_at: float) -> RobotsRules:
        """These rules with other times, sharing their parse and compiled matchers (hosts
        serving the same robots.txt hold one copy: ``RobotsCache``)."""
        twin: RobotsRules = object.__new__(RobotsRules)
        for name in RobotsRules.__slots__:  # every field, those outside __init__ too
            object.__setattr__(twin, name, getattr(self, name))
        object.__setattr__(twin, "fetched_at", fetched_at)
        object.__setattr__(twin, "expires_at", expires_at)
        return twin

    def __reduce__(self) -> tuple[type[RobotsRules], tuple[object, ...]]:
        # Pickle the parsed content only; compiled matchers are rebuilt on first use.
        fields = (self.groups, self.sitemaps, self.outcome, self.fetched_at, self.expires_at)
        return (RobotsRules, fields)

    @classmethod
    def parse(cls, body: bytes, *, now: float = 0.0, ttl: float = CACHE_TTL) -> RobotsRules:
        """The rules of a robots.txt body (any bytes; only the first MAX_BYTES are read)."""
        groups, sitemaps = parse_robots(body)
        return cls(groups, sitemaps, FetchOutcome.PARSED, now, now + _clamp_ttl(ttl))

    @classmethod
    def allow_all(cls, *, now: float = 0.0, ttl: float = CACHE_TTL) -> RobotsRules:
        """No rules: every URL allowed (a 4xx robots.txt)."""
        return cls((), (), FetchOutcome.NO_RULES, now, now + _clamp_ttl(ttl))

    @classmethod
    def disallow_all(cls, *, now: float = 0.0, ttl: float = RETRY_BASE) -> RobotsRules:
        """Every URL but /robots.txt disallowed (an unreachable robots.txt)."""
        group = RobotsGroup(("*",), (RobotsRule(False, "/"),))
        return cls((group,), (), FetchOutcome.UNREACHABLE, now, now + _clamp_ttl(ttl))

    def is_expired(self, now: float) -> bool:
        """Whether the rules should be fetched again at time ``now``."""
        return now >= self.expires_at

    def is_allowed(self, url_or_path: str, agents: str | Sequence[str]) -> bool:
        """May ``url_or_path`` (a URL or a path) be fetched by all of ``agents``?

        ``agents`` is a product token (``"trawl"``) or several (``("trawl", "GPTBot")``);
        with several, one disallowing token is enough to disallow.
        """
        matchers = self._select(agents).matchers
        if not matchers:
            return True
        target = request_target(url_or_path)
        if target.startswith("/robots.txt") and target[11:12] in ("", "?"):
            return True
        for matcher in matchers:  # noqa: SIM110 - a plain loop beats all() on the hot path
            if not matcher.allows(target):
                return False
        return True

    def crawl_delay(self, agents: str | Sequence[str]) -> float | None:
        """Crawl-delay seconds for ``agents`` (the largest over several), or None."""
        return self._select(agents).crawl_delay

    def _select(self, agents: str | Sequence[str]) -> _Selection:
        key: object = agents if isinstance(agents, str) else tuple(agents)
        selection = self._by_agents.get(key)
        if selection is None:
            selection = self._build_selection(agents)
            if len(self._by_agents) >= _MEMO_LIMIT:
                self._by_agents.clear()
            self._by_agents[key] = selection
        return selection

    def _build_selection(self, agents: str | Sequence[str]) -> _Selection:
        chosen: dict[tuple[int, ...], None] = {}
        for token in _tokens(agents):
            ids = self._index.get(token, ()) if token else ()
            chosen.setdefault(ids or self._index.get("*", ()), None)
        matchers: list[GroupMatcher] = []
        delays: list[float] = []
        for ids in chosen:
            matcher = self._matcher(ids)
            if matcher is not None:
                matchers.append(matcher)
            delay = next((d for i in ids if (d := self.groups[i].crawl_delay) is not None), None)
            if delay is not None:
                delays.append(delay)
        return _Selection(tuple(matchers), max(delays) if delays else None)

    def _matcher(self, ids: tuple[int, ...]) -> GroupMatcher | None:
        if ids not in self._by_groups:
            rules = [rule for i in ids for rule in self.groups[i].rules]
            if len(self._by_groups) >= _MEMO_LIMIT:
                self._by_groups.clear()
            self._by_groups[ids] = compile_group(rules)
        return self._by_groups[ids]


def retry_delay(failures: int, *, base: float = RETRY_BASE, cap: float = RETRY_CAP) -> float:
    """Seconds to wait before fetching an unreachable robots.txt again.

    ``failures`` counts consecutive unreachable results, this one included (1, 2, ...):
    ``base`` after the first, doubling after each further one, never more than ``cap``.
    """
    doublings = min(max(failures, 1) - 1, 60)
    return min(base * 2.0**doublings, cap)


def rules_for_fetch(
    status: int | None,
    body: bytes | None,
    *,
    now: float = 0.0,
    redirects: int = 0,
    failures: int = 1,
    ttl: float = CACHE_TTL,
) -> RobotsRules:
    """The rules to use after fetching /robots.txt (see the module docstring).

    ``status`` is the final HTTP status, or None for a network error (DNS, connect,
    timeout, TLS, truncated body). ``redirects`` is the number of redirect hops the
    fetcher followed to get it; ``failures`` the count of consecutive unreachable
    results including this one (for the retry interval); ``ttl`` a lifetime from
    Cache-Control, capped at 24 hours.
    """
    if status is None:
        return RobotsRules.disallow_all(now=now, ttl=retry_delay(failures))
    if 200 <= status <= 299:
        return RobotsRules.parse(body or b"", now=now, ttl=ttl)
    if 400 <= status <= 499 and status != 429:
        return RobotsRules.allow_all(now=now, ttl=ttl)
    if 300 <= status <= 399 and redirects >= MAX_REDIRECTS:
        return RobotsRules.allow_all(now=now, ttl=ttl)
    return RobotsRules.disallow_all(now=now, ttl=retry_delay(failures))


def rules_for_outage(
    last_good: RobotsRules | None,
    *,
    unreachable_for: float,
    now: float,
    failures: int = 1,
    grace: float = OUTAGE_GRACE,
) -> RobotsRules:
    """The rules to use while a host's robots.txt is unreachable (RFC 9309 2.3.1.4).

    ``unreachable_for`` is how long, in seconds, fetches have been failing. Up to
    ``grace`` (30 days): everything disallowed. Beyond: ``last_good`` (a parsed or
    "no rules" result, kept with its original ``fetched_at``), or no rules when there
    is no good copy. The result expires at the next retry either way.
    """
    wait = retry_delay(failures)
    if not unreachable_for > grace:
        return RobotsRules.disallow_all(now=now, ttl=wait)
    if last_good is not None and last_good.outcome is not FetchOutcome.UNREACHABLE:
        return replace(last_good, expires_at=now + wait)
    return RobotsRules.allow_all(now=now, ttl=wait)
