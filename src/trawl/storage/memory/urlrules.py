"""``UrlRuleStore`` in memory: the rules, their rewrite counts and the rewritten URLs,
in the dicts of a ``MemoryState`` (kept by a commit like everything else)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from trawl.dedup.urlrules import Rewrite, UrlRule

RuleKey = tuple[str, str]  # (host, key)


def sorted_rules(
    rules: dict[RuleKey, UrlRule], counts: dict[RuleKey, int], host: str | None
) -> list[UrlRule]:
    """The rules of ``host`` (or all), each with its count, by host and key."""
    return [
        replace(rule, rewrites=counts.get(name, 0))
        for name, rule in sorted(rules.items())
        if host is None or name[0] == host
    ]


class MemoryUrlRuleStore:
    def __init__(
        self,
        rules: dict[RuleKey, UrlRule],
        counts: dict[RuleKey, int],
        log: dict[tuple[str, str, str], Rewrite],
    ) -> None:
        self._rules, self._counts, self._log = rules, counts, log

    def rules(self, host: str) -> list[UrlRule]:
        return sorted_rules(self._rules, self._counts, host)

    def save(self, rule: UrlRule) -> None:
        name = (rule.host, rule.key)
        old = self._rules.get(name)
        self._rules[name] = rule if old is None else old.merged(rule)

    def count(self, host: str, key: str, n: int) -> None:
        if n:
            self._counts[(host, key)] = self._counts.get((host, key), 0) + n

    def log(self, rewrites: Sequence[Rewrite]) -> None:
        for r in rewrites:
            self._log[(r.host, r.key, r.url)] = r

    def logged(self, host: str, key: str) -> list[Rewrite]:
        return [r for (h, k, _), r in self._log.items() if (h, k) == (host, key)]

    def forget(self, host: str, key: str) -> None:
        for name in [n for n in self._log if n[:2] == (host, key)]:
            del self._log[name]
