"""Crawler traps and scope: which discovered links may enter the frontier at all.

Every dropped link is counted with its reason, so an operator can see why a site
was only partly crawled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from publicsuffixlist import PublicSuffixList

from trawl.config import CrawlConfig, Scope


@dataclass(frozen=True, slots=True)
class TrapLimits:
    max_depth: int = 20
    max_url_length: int = 2048
    max_query_params: int = 12
    max_repeated_segments: int = 2

    @classmethod
    def from_config(cls, config: CrawlConfig) -> TrapLimits:
        return cls(
            max_depth=config.max_depth,
            max_url_length=config.max_url_length,
            max_query_params=config.max_query_params,
            max_repeated_segments=config.max_repeated_segments,
        )


def trap_reason(url: str, depth: int, limits: TrapLimits) -> str | None:
    """Why a normalised URL at ``depth`` looks like a trap, or None if it does not."""
    if depth > limits.max_depth:
        return "too deep"
    if len(url) > limits.max_url_length:
        return "url too long"
    rest = url.split("://", 1)[-1]
    slash = rest.find("/")
    path = rest[slash:] if slash >= 0 else "/"
    path, _, query = path.partition("?")
    if query and query.count("&") + 1 > limits.max_query_params:
        return "too many query parameters"
    if path.count("/") > limits.max_repeated_segments:
        segments = [s for s in path.split("/") if s]
        # Most paths repeat no segment at all: the set test settles them cheaply.
        if len(set(segments)) < len(segments):
            top = Counter(segments).most_common(1)[0][1]
            if top > limits.max_repeated_segments:
                return "repeated path segments"
    return None


@lru_cache(maxsize=1)
def _psl() -> PublicSuffixList:
    return PublicSuffixList()


@lru_cache(maxsize=65536)
def registered_domain(host: str) -> str:
    """The registrable domain of ``host`` (eTLD+1), or the host itself for IPs/locals."""
    host = host.split(":", 1)[0] if not host.startswith("[") else host
    if host.startswith("[") or host.replace(".", "").isdigit():
        return host
    return _psl().privatesuffix(host) or host


def hostname(host_key: str) -> str:
    """The host name of a politeness key (``name`` or ``name:port``)."""
    if host_key.startswith("["):
        return host_key.split("]", 1)[0] + "]"
    return host_key.rsplit(":", 1)[0] if ":" in host_key else host_key


class ScopeFilter:
    """The crawl's scope: seeds' hosts, their registered domains, an allow list, or any."""

    def __init__(self, kind: Scope, *, hosts: Iterable[str] = (), allowed: Iterable[str] = ()):
        self.kind = kind
        self._hosts: set[str] = set()
        self._domains: set[str] = set()
        # A set, looked up once per label of a host: a crawl may allow thousands of
        # hosts, and every link found is checked against them.
        self._allowed = frozenset(h.lower().strip(".") for h in allowed)
        for h in hosts:
            self.add_host(h)

    def add_host(self, host_key: str) -> None:
        """Bring a host into scope (a seed, or where a seed redirected to)."""
        name = hostname(host_key)
        self._hosts.add(name)
        self._domains.add(registered_domain(name))

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset(self._hosts)

    def allows(self, host_key: str) -> bool:
        kind = self.kind
        if kind == "any":
            return True
        name = hostname(host_key)
        if kind == "host":
            return name in self._hosts
        if kind == "domain":
            return registered_domain(name) in self._domains
        return name in self._hosts or _within(name, self._allowed)


def _within(name: str, allowed: frozenset[str]) -> bool:
    """Whether ``name`` is one of ``allowed`` or under one (``a.b`` allows ``x.a.b``)."""
    if not allowed:
        return False
    if name in allowed:
        return True
    dot = name.find(".")
    while dot >= 0:
        if name[dot + 1 :] in allowed:
            return True
        dot = name.find(".", dot + 1)
    return False
