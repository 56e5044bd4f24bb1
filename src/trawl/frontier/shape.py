"""The crawl's shape as the operator sets it: URL patterns and per-host overrides.

``UrlPatterns`` are the ``include`` / ``exclude`` regular expressions, searched in the
normal form of every URL admission sees (seeds, links, redirect targets, canonical
links, sitemap entries; not the sitemap files themselves, which ``sitemaps = false``
turns off): an exclude match refuses, and with includes given a URL must match one.
Regular expressions rather than globs: a glob is easily written as one (``*`` is
``.*``), while globs cannot say "this query parameter" or "one path segment".

``HostRules`` finds a host's ``HostOverride``: by ``host:port``, then by the host
name, then by each parent domain (``example.org`` covers ``www.example.org``), so the
longest matching name wins. Admission applies ``block`` (and gives the frontier the
host's budget and priority), politeness the ``delay``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from trawl.config import HostOverride, host_override_key
from trawl.frontier.traps import hostname

__all__ = ["EXCLUDED", "NOT_INCLUDED", "HostRules", "UrlPatterns"]

EXCLUDED = "excluded by pattern"
NOT_INCLUDED = "not included by pattern"


class UrlPatterns:
    def __init__(self, *, include: Iterable[str] = (), exclude: Iterable[str] = ()) -> None:
        self._include = tuple(re.compile(p) for p in include)
        self._exclude = tuple(re.compile(p) for p in exclude)

    def __bool__(self) -> bool:
        return bool(self._include or self._exclude)

    def refusal(self, url: str) -> str | None:
        """Why ``url`` is outside the crawl's shape, or None if it is inside."""
        for pattern in self._exclude:
            if pattern.search(url):
                return EXCLUDED
        if self._include and not any(p.search(url) for p in self._include):
            return NOT_INCLUDED
        return None


class HostRules:
    """The operator's per-host overrides, looked up by politeness key (host[:port])."""

    def __init__(self, overrides: Mapping[str, HostOverride] | None = None) -> None:
        self._rules = {host_override_key(k): v for k, v in (overrides or {}).items()}
        self._found: dict[str, HostOverride | None] = {}

    def __bool__(self) -> bool:
        return bool(self._rules)

    def update(self, overrides: Mapping[str, HostOverride]) -> set[str]:
        """Take ``overrides`` instead (a steered crawl's); the keys whose rule changed."""
        new = {host_override_key(k): v for k, v in overrides.items()}
        changed = {k for k in new.keys() | self._rules.keys() if new.get(k) != self._rules.get(k)}
        self._rules = new
        self._found.clear()
        return changed

    def get(self, host: str) -> HostOverride | None:
        """The override for the host key ``host`` (``name`` or ``name:port``), or None."""
        if not self._rules:
            return None
        if host in self._found:
            return self._found[host]
        rule = self._rules.get(host)
        if rule is None:
            name = hostname(host)
            while rule is None and name:
                rule = self._rules.get(name)
                name = name.partition(".")[2]
        if len(self._found) >= 100_000:
            self._found.clear()
        self._found[host] = rule
        return rule

    def blocked(self, host: str) -> bool:
        rule = self.get(host)
        return rule is not None and rule.block

    def delay(self, host: str) -> float | None:
        rule = self.get(host)
        return None if rule is None else rule.delay
