"""The TDM Reservation Protocol (TDMRep, W3C Community Group final report, 2024).

A rightsholder reserves text-and-data-mining rights (``tdm-reservation: 1``, the
opt-out of Article 4 of the EU DSM Directive) and may point to a policy
(``tdm-policy: <url>``) in three ways: the ``/.well-known/tdmrep.json`` file of the
origin (an array of ``{"location", "tdm-reservation", "tdm-policy"}`` rules), HTTP
response headers, and ``<meta name="tdm-reservation">`` / ``<meta name="tdm-policy">``.

Precedence, as the report's "Processing priority" section states it: the file is
checked first; the header's values "supercede any value inferred from a TDM file";
the HTML meta values "supercede previous values". So meta over header over file.

Matching of ``location`` patterns, as the report states it: "The most specific match
found MUST be used. The most specific match is the first in sequence", i.e. the first
rule in file order whose pattern matches wins; matching is case sensitive, re-uses
robots.txt path matching (``*`` any run of characters, a final ``$`` the end of the
path, otherwise a prefix match; percent-escapes of unreserved characters decoded on
both sides), and "If no match is found ... `tdm-reservation` is unset". Values other
than 0 and 1 are protocol errors, read as unset. A policy is kept only with a
reservation (the report: TDM Agents "SHOULD NOT process `tdm-policy`" with 0).

Everything here is pure and never raises on hostile input; fetching and caching the
well-known file per origin is the fetch stage's business.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import orjson

from trawl.pickling import by_fields
from trawl.rules import glob_matches, normalize_rule, request_target

__all__ = [
    "WELL_KNOWN_PATH",
    "TdmDecision",
    "TdmRules",
    "decide",
    "from_headers",
    "from_meta",
    "parse_tdmrep_json",
]

WELL_KNOWN_PATH = "/.well-known/tdmrep.json"
MAX_BYTES = 512 * 1024
"""Most of a tdmrep.json read (like robots.txt's limit); a longer file is garbage."""
MAX_RULES = 10_000
_MAX_POLICY_CHARS = 2_000


@by_fields
@dataclass(frozen=True, slots=True)
class TdmDecision:
    """Whether TDM rights are reserved, the policy URL if any, and where it was said.

    ``source`` is ``"header"``, ``"meta"``, ``"tdmrep.json"`` or ``"unset"``.
    """

    reserved: bool
    policy: str | None
    source: str


UNSET = TdmDecision(reserved=False, policy=None, source="unset")


def _reservation(value: object) -> bool | None:
    """0/1 (an integer, or a string of one digit with blanks): other values are unset."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return {0: False, 1: True}.get(value)
    if isinstance(value, str):
        return {"0": False, "1": True}.get(value.strip())
    return None


def _policy(value: object, reserved: bool) -> str | None:
    if not reserved or not isinstance(value, str):
        return None
    value = value.strip()
    return value[:_MAX_POLICY_CHARS] or None


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: str  # in the robots.txt normal form
    decision: TdmDecision | None  # None: a matching rule with no valid reservation


@dataclass(frozen=True, slots=True)
class TdmRules:
    """The rules of one origin's tdmrep.json, in file order."""

    rules: tuple[_Rule, ...] = ()

    def for_path(self, path: str) -> TdmDecision | None:
        """The decision of the first rule matching ``path`` (a path or a URL), else None."""
        try:
            target = request_target(path)
        except Exception:  # a path that cannot be put in normal form matches nothing
            return None
        for rule in self.rules:
            if glob_matches(rule.pattern, target):
                return rule.decision
        return None


NO_RULES = TdmRules()


def parse_tdmrep_json(body: bytes) -> TdmRules:
    """The rules of a tdmrep.json body; garbage (or anything but an array) is no rules.

    A rule without a string ``location`` is skipped; one with an invalid reservation
    still matches, and leaves the reservation unset for the paths it covers.
    """
    if len(body) > MAX_BYTES:
        return NO_RULES
    try:
        data = orjson.loads(body.removeprefix(b"\xef\xbb\xbf"))
    except Exception:
        return NO_RULES
    if not isinstance(data, list):
        return NO_RULES
    rules: list[_Rule] = []
    for item in data[:MAX_RULES]:
        if not isinstance(item, dict):
            continue
        location = item.get("location")
        if not isinstance(location, str) or not location.strip():
            continue
        try:
            pattern = normalize_rule(location.strip().encode("utf-8", "surrogatepass"))
        except Exception:
            continue
        reserved = _reservation(item.get("tdm-reservation"))
        decision = None
        if reserved is not None:
            policy = _policy(item.get("tdm-policy"), reserved)
            decision = TdmDecision(reserved, policy, "tdmrep.json")
        rules.append(_Rule(pattern, decision))
    return TdmRules(tuple(rules))


def _first(pairs: Iterable[tuple[str, str]], name: str) -> str | None:
    for key, value in pairs:
        if isinstance(key, str) and key.strip().lower() == name and isinstance(value, str):
            return value
    return None


def _decision(pairs: list[tuple[str, str]], source: str) -> TdmDecision | None:
    raw = _first(pairs, "tdm-reservation")
    if raw is None:
        return None
    # A header repeated and folded by a proxy reads "1, 1": its first value counts.
    reserved = _reservation(raw.split(",", 1)[0])
    if reserved is None:
        return None
    return TdmDecision(reserved, _policy(_first(pairs, "tdm-policy"), reserved), source)


def from_headers(headers: Iterable[tuple[str, str]]) -> TdmDecision | None:
    """The ``tdm-reservation`` / ``tdm-policy`` response headers (names case-insensitive)."""
    try:
        return _decision(list(headers), "header")
    except Exception:
        return None


def from_meta(metas: Iterable[tuple[str, str]]) -> TdmDecision | None:
    """``<meta name="tdm-reservation" content="1">`` and ``<meta name="tdm-policy">``."""
    try:
        return _decision(list(metas), "meta")
    except Exception:
        return None


def decide(
    header: TdmDecision | None, meta: TdmDecision | None, well_known: TdmDecision | None
) -> TdmDecision:
    """The report's precedence: HTML meta over the HTTP header over tdmrep.json."""
    for decision in (meta, header, well_known):
        if decision is not None:
            return decision
    return UNSET
