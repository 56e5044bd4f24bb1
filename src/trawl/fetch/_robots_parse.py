"""robots.txt bytes -> groups and sitemaps: the parsing half of ``trawl.fetch.robots``.

Pure: bytes in, immutable records out, no I/O, never raises. The matching half lives in
``_robots_match``; the public API and the fetch/caching policy in ``robots``.

What the parser accepts (RFC 9309 sections 2.1-2.2, plus the leniency of Google's
open-source parser, ``robots.cc``, where the RFC leaves room):

- Only the first ``MAX_BYTES`` (500 KiB = 512,000 bytes, the RFC 9309 section 2.5 floor)
  are read; a line that the limit cuts in two is dropped rather than half-read.
- A UTF-8 byte order mark (or a leading part of one, as Google's parser allows) is skipped.
- Lines end with CR, LF or CRLF; ``#`` starts a comment anywhere on a line.
- ``key: value`` with whitespace around both trimmed; a line without a colon is still read
  when it is exactly two words (``disallow /``), as Google's parser does.
- Keys are case-insensitive and recognised by their beginning, as Google's parser does:
  ``user-agent``, ``useragent``, ``user agent``; ``allow``; ``disallow``, ``dissallow``,
  ``dissalow``, ``disalow``, ``diasllow``, ``disallaw``; ``sitemap``, ``site-map``; and,
  for the non-standard crawl delay, ``crawl-delay``, ``crawldelay``, ``crawl delay``. So
  ``User-agents``, ``Sitemaps`` and ``Disallowed`` count too. Anything else is ignored.
- A user-agent value's product token is the part before the first ``/`` or whitespace,
  compared without ASCII case (``FooBot/1.0`` names ``foobot``; ``* anything`` is ``*``).
- Groups: consecutive user-agent lines share one group, and so do user-agent lines that
  are separated only by blank lines, comments, crawl-delays, sitemaps or unknown keys:
  RFC 9309 2.2.4 says other records must not interfere with the parsing of the defined
  ones ("a Sitemaps record MUST NOT terminate a group"), and only an allow or disallow
  line (even an empty one) ends a group's list of user agents, as in Google's parser.
  So ``User-agent: a`` / ``Crawl-delay: 5`` / ``User-agent: b`` / ``Disallow: /x`` is one
  group: a and b both get the rule and the crawl delay of 5 s (a crawl-delay is a member
  of the group it stands in, wherever in it it stands). The same holds with a blank line
  before the second user-agent: ``User-agent: *`` / ``Crawl-delay: 10`` / blank /
  ``User-agent: X`` / ``Disallow: /`` gives every crawler X's rules (Python's
  urllib.robotparser, which ends groups at blank lines, reads two groups there). Rules
  before the first user-agent line belong to no group and are ignored.
- Rule paths are put in the normal form used for matching (see ``normalize_rule``); an
  empty value (``Disallow:``) is a rule line that contributes no rule.
- Crawl-delay: a non-negative decimal number of seconds (``10``, ``2.5``, ``.5``); any
  other value (``10s``, ``2,5``, ``-1``, ``inf``, ``1e3``) is ignored. Each group keeps its
  first valid value.
- Sitemap values are kept wherever they stand (inside or outside groups), in file order,
  without duplicates, as written (not resolved or validated).
- Bytes that are not UTF-8 are percent-encoded byte for byte in rule paths (so a Latin-1
  ``/caf\\xe9`` matches ``/caf%E9``) and decoded with U+FFFD replacement elsewhere.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from trawl.rules import normalize_rule

MAX_BYTES = 512_000
"""Parse limit: bytes of a robots.txt read (500 KiB); a fetcher needs one more byte at most."""

_BOM = b"\xef\xbb\xbf"

_USER_AGENT, _ALLOW, _DISALLOW, _SITEMAP, _CRAWL_DELAY, _UNKNOWN = range(6)

_USER_AGENT_KEYS = (b"user-agent", b"useragent", b"user agent")
_DISALLOW_KEYS = (b"disallow", b"dissallow", b"dissalow", b"disalow", b"diasllow", b"disallaw")
_SITEMAP_KEYS = (b"sitemap", b"site-map")
_CRAWL_DELAY_KEYS = (b"crawl-delay", b"crawldelay", b"crawl delay")

_DELAY_VALUE = re.compile(rb"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\Z")


@dataclass(frozen=True, slots=True)
class RobotsRule:
    """One allow or disallow line; ``pattern`` is in normal form (see ``normalize_rule``)."""

    allow: bool
    pattern: str


@dataclass(frozen=True, slots=True)
class RobotsGroup:
    """One group as written: its product tokens (lower case), rules, first valid delay."""

    agents: tuple[str, ...]
    rules: tuple[RobotsRule, ...] = ()
    crawl_delay: float | None = None


def product_token(value: bytes) -> str:
    """The product token of a user-agent value: before ``/`` or whitespace, lower case."""
    words = value.split(b"/", 1)[0].split(None, 1)
    token = words[0] if words else b""
    return token.lower().decode("utf-8", "replace")


def _parse_delay(value: bytes) -> float | None:
    if _DELAY_VALUE.match(value) is None:
        return None
    seconds = float(value.decode("ascii"))
    return seconds if math.isfinite(seconds) else None


def _key_kind(key: bytes) -> int:
    if key.startswith(_USER_AGENT_KEYS):
        return _USER_AGENT
    if key.startswith(b"allow"):
        return _ALLOW
    if key.startswith(_DISALLOW_KEYS):
        return _DISALLOW
    if key.startswith(_SITEMAP_KEYS):
        return _SITEMAP
    if key.startswith(_CRAWL_DELAY_KEYS):
        return _CRAWL_DELAY
    return _UNKNOWN


def _within_limit(body: bytes) -> bytes:
    if len(body) <= MAX_BYTES:
        return body
    kept = body[:MAX_BYTES]
    if body[MAX_BYTES] in b"\r\n":
        return kept  # the last line ends exactly at the limit: it is whole
    cut = max(kept.rfind(b"\n"), kept.rfind(b"\r"))
    return kept[: cut + 1]


def _skip_bom(body: bytes) -> bytes:
    for size in (3, 2, 1):
        if body.startswith(_BOM[:size]):
            return body[size:]
    return body


class _GroupBuilder:
    __slots__ = ("agents", "crawl_delay", "rules")

    def __init__(self, agent: str) -> None:
        self.agents = [agent]
        self.rules: list[RobotsRule] = []
        self.crawl_delay: float | None = None

    def build(self) -> RobotsGroup:
        agents = tuple(dict.fromkeys(self.agents))
        return RobotsGroup(agents, tuple(self.rules), self.crawl_delay)


def _key_value(line: bytes) -> tuple[bytes, bytes] | None:
    hash_at = line.find(b"#")
    if hash_at >= 0:
        line = line[:hash_at]
    colon = line.find(b":")
    if colon >= 0:
        key, value = line[:colon].strip(), line[colon + 1 :].strip()
    else:
        words = line.split()
        if len(words) != 2:
            return None
        key, value = words
    return (key, value) if key else None


def parse_robots(body: bytes) -> tuple[tuple[RobotsGroup, ...], tuple[str, ...]]:
    """Groups in file order and sitemap URLs (file order, first occurrence) of a file."""
    if not isinstance(body, bytes):
        body = bytes(body)
    groups: list[_GroupBuilder] = []
    sitemaps: dict[str, None] = {}
    current: _GroupBuilder | None = None
    collecting_agents = False  # True until the current group's first member line
    for line in _skip_bom(_within_limit(body)).splitlines():
        pair = _key_value(line)
        if pair is None:
            continue
        key, value = pair
        kind = _key_kind(key.lower())
        if kind == _USER_AGENT:
            agent = product_token(value)
            if current is not None and collecting_agents:
                current.agents.append(agent)
            else:
                current = _GroupBuilder(agent)
                groups.append(current)
                collecting_agents = True
        elif kind in (_ALLOW, _DISALLOW):
            if current is None:
                continue  # a rule outside any group
            collecting_agents = False
            pattern = normalize_rule(value)
            if pattern:
                current.rules.append(RobotsRule(kind == _ALLOW, pattern))
        elif kind == _CRAWL_DELAY:
            if current is None:
                continue  # outside any group
            # Not a rule line: the group's list of user agents goes on (RFC 9309 2.2.4).
            if current.crawl_delay is None:
                current.crawl_delay = _parse_delay(value)
        elif kind == _SITEMAP and value:
            sitemaps.setdefault(value.decode("utf-8", "replace"), None)
    return tuple(group.build() for group in groups), tuple(sitemaps)
