"""Matching a request target against a group's rules: the hot half of ``trawl.fetch.robots``.

Both sides are compared in one normal form (RFC 9309 2.2.2): percent-escapes of
unreserved characters decoded (``/%7Ea`` = ``/~a``), other escapes with upper-case hex
(``%2F`` stays distinct from ``/``), and every octet that may not stand in a URI (raw
UTF-8, space, a stray ``%``) escaped. On the URL side ``*`` and ``$`` are escaped too, so
``%2A`` and ``%24`` in a rule match them literally (the RFC 9309 2.2.3 examples), while
a raw ``*`` in a rule is the wildcard and a final ``$`` the end anchor. The URL's path and
query (``/p?q``) are matched; the fragment is dropped.

The most specific rule wins: the longest pattern (in octets of its normal form, a ``$``
inside it as the three of ``%24``, ``*`` and a final ``$`` one each, as Google counts),
allow before disallow at equal length (``rules.pattern_octets``).

Matching is precompiled per merged group. Rules whose literal head has at least
``BUCKET`` characters are filed under that head; the others ("generic") can match any
target. A target's candidates (its bucket's rules and the generic ones), in rank order,
are cut into chunks of at most ``CHUNK_RULES`` rules, each compiled into one regex
alternation whose first matching alternative is the chunk's winner: usually one
C-level ``re.match`` decides. Big sides look plain literals (no ``*``, no final ``$``)
up in a dict by length instead. Wildcards compile to atomic lazy groups (the earliest
occurrence of each literal segment but the last), exact for ``*``-only globs and near
O(len(target) x len(pattern)) on hostile patterns. Chunks compile on first use, and a
group compiles at most ``COMPILE_BUDGET`` pattern characters; past that (huge or
hostile files) chunks are decided rule by rule, so no file makes a check or a compile
take long. ``reference_verdict`` is the plain-Python definition the compiled form must
agree with (the tests check that on generated rules).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Sequence
from typing import cast

from trawl.fetch._robots_parse import RobotsRule
from trawl.rules import glob_matches, pattern_octets, split_pattern

# ``re.compile`` keeps its last 512 patterns in a module cache: every host's compiled
# chunks would stay alive there after the robots cache forgot the host's rules (2.9 MB
# for 30 hosts of 500 rules, measured), and push the process's other patterns out.
# So the regex compiler is called directly, uncached (``re._compiler``, Python 3.11+).
_compile = cast(
    Callable[[str, int], "re.Pattern[str]"], importlib.import_module("re._compiler").compile
)


BUCKET = 3
"""Length of the target prefix that selects a bucket of candidate rules."""
CHUNK_RULES = 32
"""Most rules in one compiled alternation (sre slows down per branch past ~64)."""
CHUNK_CHARS = 4_096
"""Most pattern characters in one compiled alternation."""
COMPILE_BUDGET = 65_536
"""Pattern characters a group may compile; beyond, chunks are decided rule by rule."""
NO_MATCH = 1 << 62


def rank(rules: Sequence[RobotsRule]) -> list[RobotsRule]:
    """Distinct rules, most specific first (longest pattern; allow first on a tie)."""
    distinct = list(dict.fromkeys(rules))
    distinct.sort(key=lambda rule: (-pattern_octets(rule.pattern), not rule.allow))
    return distinct


def reference_verdict(rules: Sequence[RobotsRule], target: str) -> bool:
    """Allowed? The definition in plain Python: the winning matching rule decides."""
    for rule in rank(rules):
        if glob_matches(rule.pattern, target):
            return rule.allow
    return True


def _regex(pattern: str) -> str:
    # Middle segments: earliest occurrence, atomic (no backtracking into them); the last
    # segment only has to occur somewhere after them (greedy ``.*`` is faster in sre).
    segments, anchored = split_pattern(pattern)
    parts = [re.escape(segments[0])]
    parts += [f"(?>.*?{re.escape(segment)})" for segment in segments[1:-1] if segment]
    if len(segments) > 1 and (segments[-1] or anchored):
        parts.append(".*" + re.escape(segments[-1]))
    if anchored:
        parts.append(r"\Z")
    return "".join(parts)


class _Chunk:
    """Up to CHUNK_RULES consecutive ranked rules; ``winner`` gives the best one's rank.

    Compiled on first use into one alternation (the first alternative that matches is the
    winner), while the group's compile budget lasts; otherwise decided rule by rule.
    """

    __slots__ = ("_match", "_orders", "_pending", "_rules", "first")

    def __init__(self, items: Sequence[tuple[int, RobotsRule]]) -> None:
        self._orders = (NO_MATCH, *(order for order, _ in items))
        self._rules = tuple(rule for _, rule in items)
        self.first = self._orders[1]
        self._match: Callable[[str], re.Match[str] | None] | None = None
        self._pending = True  # not compiled yet

    def source_size(self) -> int:
        return sum(len(rule.pattern) for rule in self._rules)

    def compile(self) -> None:
        self._pending = False
        try:
            source = "|".join(f"({_regex(rule.pattern)})" for rule in self._rules)
            self._match = _compile(source, re.DOTALL).match
        except (re.error, RecursionError, OverflowError, MemoryError):
            self._match = None  # beyond the regex engine: stay rule by rule

    def winner(self, target: str, matcher: GroupMatcher) -> int:
        if self._pending:
            matcher.maybe_compile(self)
        match = self._match
        if match is not None:
            found = match(target)
            return NO_MATCH if found is None else self._orders[found.lastindex or 0]
        for number, rule in enumerate(self._rules, 1):
            if glob_matches(rule.pattern, target):
                return self._orders[number]
        return NO_MATCH


def _chunks(items: list[tuple[int, RobotsRule]]) -> tuple[_Chunk, ...]:
    chunks: list[_Chunk] = []
    current: list[tuple[int, RobotsRule]] = []
    size = 0
    for item in items:
        length = len(item[1].pattern)
        if current and (len(current) >= CHUNK_RULES or size + length > CHUNK_CHARS):
            chunks.append(_Chunk(current))
            current, size = [], 0
        current.append(item)
        size += length
    if current:
        chunks.append(_Chunk(current))
    return tuple(chunks)


class _Side:
    """Ranked rules decided together: ``best`` lowers ``best`` to the winner's rank.

    Small: one chunk (a single ``re.match``). Large: plain literals (no ``*``, no final
    ``$``) looked up by length, longest first, in a dict; the other rules in chunks.
    """

    __slots__ = ("_chunks", "_lengths", "_literals")

    def __init__(self, items: list[tuple[int, RobotsRule]]) -> None:
        chunks = _chunks(items)
        self._literals: dict[str, int] = {}
        if len(chunks) > 1:
            others: list[tuple[int, RobotsRule]] = []
            for order, rule in items:
                segments, anchored = split_pattern(rule.pattern)
                if len(segments) == 1 and not anchored:
                    self._literals.setdefault(segments[0], order)  # allow ranks first
                else:
                    others.append((order, rule))
            chunks = _chunks(others)
        self._lengths = tuple(sorted({len(key) for key in self._literals}, reverse=True))
        self._chunks = chunks

    def best(self, target: str, best: int, matcher: GroupMatcher) -> int:
        if self._lengths:
            literals = self._literals
            for length in self._lengths:
                found = literals.get(target[:length])
                if found is not None:
                    best = min(best, found)
                    break
        # Chunks are in rank order: the first with a match holds the best rule among them.
        for chunk in self._chunks:
            if chunk.first >= best:
                break
            found = chunk.winner(target, matcher)
            if found != NO_MATCH:
                return min(found, best)
        return best


class GroupMatcher:
    """The compiled rules of one merged group. Build with ``compile_group``.

    Rules whose literal head is shorter than BUCKET can match any target ("generic");
    the others are filed under their first BUCKET characters. A target is decided by its
    bucket's rules and the generic ones: merged into one side when that is small, else
    the best of each side, compared by rank.
    """

    __slots__ = ("_allow", "_buckets", "_budget", "_generic")

    def __init__(self, ranked: list[RobotsRule]) -> None:
        self._allow = tuple(rule.allow for rule in ranked)
        generic: list[tuple[int, RobotsRule]] = []
        buckets: dict[str, list[tuple[int, RobotsRule]]] = {}
        for order, rule in enumerate(ranked):
            head = split_pattern(rule.pattern)[0][0]
            if len(head) < BUCKET:
                generic.append((order, rule))
            else:
                buckets.setdefault(head[:BUCKET], []).append((order, rule))
        self._generic = (_Side(generic),) if generic else ()
        self._buckets: dict[str, tuple[_Side, ...]] = {}
        for key, items in buckets.items():
            merged = sorted(items + generic)
            if len(_chunks(merged)) == 1:  # small: bucket and generic rules in one regex
                self._buckets[key] = (_Side(merged),)
            else:
                self._buckets[key] = (_Side(items), *self._generic)
        self._budget = COMPILE_BUDGET

    def maybe_compile(self, chunk: _Chunk) -> None:
        size = chunk.source_size()
        if size <= self._budget:
            self._budget -= size
            chunk.compile()

    def allows(self, target: str) -> bool:
        best = NO_MATCH
        for side in self._buckets.get(target[:BUCKET]) or self._generic:
            best = side.best(target, best, self)
        return True if best == NO_MATCH else self._allow[best]


def compile_group(rules: Sequence[RobotsRule]) -> GroupMatcher | None:
    """The matcher of a merged group, or None when it has no rules (allows everything)."""
    ranked = rank(rules)
    return GroupMatcher(ranked) if ranked else None
