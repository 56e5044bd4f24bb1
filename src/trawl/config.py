"""The crawl's settings: one frozen, typed config, merged from a file, env and the CLI.

Nothing reads settings from anywhere else: the composition root (crawl.py) builds
every component from a ``CrawlConfig``.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

from trawl._version import __version__
from trawl.errors import ConfigError
from trawl.memory import MemoryLimits

Scope = Literal["host", "domain", "any", "allowlist"]
Purpose = Literal["search", "training"]
# What the frontier fetches first (frontier/priority.py): OPIC importance, or depth.
PriorityMode = Literal["opic", "depth"]
# When a page is rendered in headless Chromium before it is parsed (fetch/render/).
RenderMode = Literal["never", "auto", "always"]
RENDER_MODES: tuple[str, ...] = ("never", "auto", "always")
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Robots.txt product tokens of AI crawlers, honoured together with our own token when a
# crawl gathers training data (a URL is skipped if any of them is disallowed).
AI_OPT_OUT_AGENTS: tuple[str, ...] = (
    "GPTBot",
    "ChatGPT-User",
    "CCBot",
    "Google-Extended",
    "anthropic-ai",
    "ClaudeBot",
    "Claude-Web",
    "Applebot-Extended",
    "Bytespider",
    "cohere-ai",
    "PerplexityBot",
    "Meta-ExternalAgent",
    "FacebookBot",
    "Amazonbot",
    "Diffbot",
    "omgili",
    "Omgilibot",
    "ImagesiftBot",
    "Timpibot",
    "YouBot",
)

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB


@dataclass(frozen=True, slots=True)
class QualityThresholds:
    """Rules that drop a document; each None (the default) drops nothing.

    ``gopher()`` gives the Gopher paper's values (as datatrove's GopherQualityFilter
    and GopherRepetitionFilter use them) plus C4's terminal punctuation share.
    """

    min_words: int | None = None
    max_words: int | None = None
    min_mean_word_length: float | None = None
    max_mean_word_length: float | None = None
    max_hash_word_ratio: float | None = None
    max_ellipsis_word_ratio: float | None = None
    min_terminal_punct_line_share: float | None = None
    max_ellipsis_line_share: float | None = None
    max_bullet_line_share: float | None = None
    max_dup_line_share: float | None = None
    max_dup_line_char_share: float | None = None
    min_stop_words: int | None = None
    min_alpha_word_share: float | None = None

    @classmethod
    def gopher(cls) -> QualityThresholds:
        return cls(
            min_words=50,
            max_words=100_000,
            min_mean_word_length=3,
            max_mean_word_length=10,
            max_hash_word_ratio=0.1,
            max_ellipsis_word_ratio=0.1,
            min_terminal_punct_line_share=0.12,
            max_ellipsis_line_share=0.3,
            max_bullet_line_share=0.9,
            max_dup_line_share=0.3,
            max_dup_line_char_share=0.2,
            min_stop_words=2,
            min_alpha_word_share=0.8,
        )

    @property
    def active(self) -> bool:
        return any(getattr(self, f.name) is not None for f in fields(self))

    def failures(self, signals: Any) -> tuple[str, ...]:
        """The rules ``signals`` (a ``parse.quality.QualitySignals``) fail, named like
        ``"words<50"``; empty means keep."""
        out: list[str] = []
        for f in fields(self):
            limit = getattr(self, f.name)
            if limit is None:
                continue
            bound, _, name = f.name.partition("_")
            value = getattr(signals, name)
            if bound == "min" and value < limit:
                out.append(f"{name}<{limit}")
            elif bound == "max" and value > limit:
                out.append(f"{name}>{limit}")
        return tuple(out)


def default_politeness_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where the crawls of this user on this machine share their host leases:
    ``$XDG_STATE_HOME/trawl/hosts``, else ``~/.local/state/trawl/hosts``."""
    env = os.environ if env is None else env
    state = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "trawl" / "hosts"


def parse_politeness_dir(value: str | Path | None) -> Path | None:
    """A politeness directory setting: a path, or ``none``/``off`` for no sharing."""
    if value is None or isinstance(value, Path):
        return value
    text = str(value).strip()
    return None if text.lower() in ("", "none", "off") else Path(text)


@dataclass(frozen=True, slots=True)
class HostOverride:
    """The operator's settings for one host (and its subdomains: see ``CrawlConfig.hosts``).

    Each None keeps the crawl's own value. An override never makes a crawl less polite
    than robots.txt asks: a host's Crawl-delay, when larger, still wins over ``delay``.
    """

    delay: float | None = None  # seconds between two requests to the host
    budget: int | None = None  # URLs admitted for the host, instead of max_per_host
    priority: int | None = None  # its rank in the schedule: lower first (the default is 0)
    block: bool = False  # fetch nothing from it; its URLs are refused with a reason


@dataclass(frozen=True, slots=True)
class Timeouts:
    connect: float = 10.0
    first_byte: float = 30.0
    total: float = 60.0


@dataclass(frozen=True, slots=True)
class CrawlConfig:
    """Everything one crawl needs to know. Defaults are polite and safe."""

    data_dir: Path
    seeds: tuple[str, ...] = ()
    # Who we are: the product token robots.txt groups match, and where to reach us.
    agent: str = "trawl"
    contact: str = "https://trawl.invalid/bot"
    purpose: Purpose = "search"
    ai_opt_outs: bool | None = None  # None: on for training crawls, off for search
    opt_out_agents: tuple[str, ...] = AI_OPT_OUT_AGENTS
    # Politeness.
    delay: float = 1.0
    max_crawl_delay: float = 30.0
    max_backoff_delay: float = 600.0
    # One request in flight per host and the largest asked delay across every crawl
    # that shares this directory's host leases (storage/sqlite/hostleases.py): by
    # default all crawls of this user on this machine. None: this crawl alone.
    politeness_dir: Path | None = field(default_factory=default_politeness_dir)
    # Limits.
    max_pages: int | None = None
    max_depth: int = 20
    # URLs admitted per host over the crawl (0: no limit). 100,000 is more pages than
    # most sites have and bounds what one endless URL space the trap rules miss (a
    # calendar, a faceted shop, generated pages) can put in the frontier.
    max_per_host: int = 100_000
    # Links taken from one page (0: no limit); the rest are counted under
    # ``dropped:over per-page cap``. Real pages rarely link more than a few hundred
    # URLs; a generated page with a million would flood the frontier and the
    # parse worker's result with them.
    max_links_per_page: int = 5000
    max_duration: float | None = None
    # Scope.
    scope: Scope = "host"
    allowed_hosts: tuple[str, ...] = ()
    # URL hygiene before the seen check: known tracking parameters dropped
    # (urls.TRACKING_PARAMS), and each host's learned equivalences applied
    # (dedup/urlrules.py): a rule is learned once ``equivalence_pages`` distinct pages
    # showed it and nothing contradicted it; a parameter that may take any value also
    # needs ``equivalence_values`` different values seen. ``defer_spellings``: a link
    # that is probably another spelling of a URL its host has, by a rule still
    # learning, goes last in its host's queue (frontier/deferral.py).
    strip_tracking: bool = True
    equivalences: bool = True
    equivalence_pages: int = 4
    equivalence_values: int = 3
    defer_spellings: bool = True
    # The crawl's shape: a URL (seed, link, redirect target, sitemap entry) is admitted
    # only if it matches one ``include`` pattern (when there are any) and no ``exclude``
    # pattern: Python regular expressions, searched in the URL's normal form.
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    # Per-host overrides, by host name: a name applies to that host and its subdomains
    # (the longest matching name wins); ``name:port`` to that port only.
    hosts: Mapping[str, HostOverride] = field(default_factory=dict)
    # Sitemaps as a URL source: the Sitemap lines of each host's robots.txt and its
    # /sitemap.xml, index files included; at most this many sitemap files per host.
    sitemaps: bool = True
    max_sitemaps_per_host: int = 200
    follow_nofollow_links: bool = False
    near_duplicates: bool = True  # MinHash near-duplicate detection (dedup/minhash.py)
    # Order: "opic" fetches first what many pages link to (scores from in-links, host
    # quality, depth, change history; frontier/priority.py); "depth" breadth first.
    priority: PriorityMode = "opic"
    # Keep every page's links (target, anchor text, nofollow) for `trawl export --links`.
    link_graph: bool = True
    # Keep the search index up as pages are stored. Off: no search while crawling and some
    # 35 % less CPU a page (text for training, say); the pages wait in the store,
    # unindexed, for `trawl index` or the next crawl of this data directory with it on.
    index: bool = True
    # Training data: documents failing a threshold are not kept (none set by default).
    quality: QualityThresholds = field(default_factory=QualityThresholds)
    # Revisits (a search index kept fresh): None crawls each page once. Otherwise a page
    # comes back after ``recrawl`` seconds, sooner when it changed, later when not.
    recrawl: float | None = None
    recrawl_min: float = 3600.0
    recrawl_max: float = 30 * 86400.0
    # Traps.
    max_url_length: int = 2048
    max_query_params: int = 12
    max_repeated_segments: int = 2
    # Network.
    allow_networks: tuple[IPNetwork, ...] = ()
    resolve: Mapping[str, str] = field(default_factory=dict)
    timeouts: Timeouts = field(default_factory=Timeouts)
    max_body_bytes: int = 10 * MIB
    max_redirects: int = 5
    max_in_flight: int = 512
    dns_min_ttl: float = 30.0
    dns_max_ttl: float = 3600.0
    # Retries.
    max_attempts: int = 3
    retry_base: float = 30.0
    retry_max: float = 3600.0
    robots_retry_base: float = 300.0
    robots_retry_max: float = 3600.0
    # While a host's robots.txt is unreachable its URLs wait (never failed for it). A
    # crawl whose only remaining work is such URLs ends after this many seconds,
    # leaving them queued for a resume.
    robots_patience: float = 600.0
    # Storage.
    warc_max_bytes: int = 1 * GIB
    text_max_bytes: int = 256 * MIB
    commit_interval: float = 0.5
    fsync: bool = True
    # What the crawl process may hold, by holder (trawl/memory.py; docs "Memory").
    memory: MemoryLimits = field(default_factory=MemoryLimits)
    # The crawl stops cleanly (exit status 75 from ``trawl crawl``, resumable) when
    # the data directory's file system has less free space than this, checked at
    # the start and at every group commit, so the last commit, the index merge and
    # SQLite's checkpoint still have room. 0 turns the guard off; a write that finds
    # the disk full stops the crawl the same way.
    min_free_space: int = 256 * MIB
    # Parse worker processes; 0 parses in the crawler's own process (tests, tiny crawls).
    parse_workers: int = field(default_factory=lambda: max(1, os.cpu_count() or 1))
    # Rendering (fetch/render/, needs the ``render`` extra): ``auto`` renders a page
    # whose HTML looks like an application shell, or of a host learned to need it.
    render: RenderMode = "never"
    render_pages: int = 2  # pages rendered at once (one browser per crawl process)
    render_deadline: float = 20.0  # seconds a page may take, subresources included
    render_scrolls: int = 3  # scrolls to the bottom for lazily loaded content
    render_memory: int = 1 * GIB  # memory of the browser (PSS of its processes) before a restart
    # Hosts other than the page's whose scripts and API calls the browser may load
    # (``cdn.example`` or ``.example`` for a whole domain); none by default.
    render_hosts: tuple[str, ...] = ()
    # The Chromium to drive ("": /usr/bin/chromium if present, else Playwright's own).
    render_browser: str = ""

    def __post_init__(self) -> None:
        _check(self)

    @property
    def user_agent(self) -> str:
        return f"Mozilla/5.0 (compatible; {self.agent}/{__version__}; +{self.contact})"

    @property
    def robots_agents(self) -> tuple[str, ...]:
        """Product tokens checked in robots.txt: ours, plus AI opt-outs for training."""
        if self.honour_ai_opt_outs:
            return (self.agent, *self.opt_out_agents)
        return (self.agent,)

    @property
    def lease_seconds(self) -> float:
        """How long a URL handed out may take before it goes back to the queue: two
        fetches' worth and a minute, and a render's deadline three times over (a
        page may wait for the browser before its own render)."""
        render = 3 * self.render_deadline if self.render != "never" else 0.0
        return self.timeouts.total * 2 + 60 + render

    @property
    def honour_ai_opt_outs(self) -> bool:
        return self.purpose == "training" if self.ai_opt_outs is None else self.ai_opt_outs

    def with_changes(self, **changes: Any) -> CrawlConfig:
        return replace(self, **changes)


def _check(c: CrawlConfig) -> None:
    if not c.agent or any(ch.isspace() or ch in "/;()" for ch in c.agent):
        raise ConfigError(f"agent must be a bare product token, got {c.agent!r}")
    for name in (
        "delay",
        "max_crawl_delay",
        "retry_base",
        "retry_max",
        "commit_interval",
        "robots_patience",
    ):
        if getattr(c, name) < 0:
            raise ConfigError(f"{name} must not be negative")
    for name in ("max_pages", "max_duration"):
        value = getattr(c, name)
        if value is not None and value <= 0:
            raise ConfigError(f"{name} must be positive")
    for name in ("max_per_host", "max_links_per_page"):
        if getattr(c, name) < 0:
            raise ConfigError(f"{name} must not be negative (0: no limit)")
    if c.min_free_space < 0:
        raise ConfigError("min_free_space must not be negative (0: no reserve)")
    if c.equivalence_pages < 2 or c.equivalence_values < 2:
        raise ConfigError("equivalence_pages and equivalence_values must be at least 2")
    if c.max_sitemaps_per_host <= 0:
        raise ConfigError("max_sitemaps_per_host must be positive (sitemaps = false: none)")
    for name in ("include", "exclude"):
        for pattern in getattr(c, name):
            try:
                re.compile(pattern)
            except (re.error, TypeError) as exc:
                message = f"{name} pattern {pattern!r} is not a regular expression: {exc}"
                raise ConfigError(message) from None
    for host, rule in c.hosts.items():
        if not isinstance(rule, HostOverride):
            raise ConfigError(f"hosts.{host} must be a table of delay, budget, priority, block")
        if rule.delay is not None and not 0 <= rule.delay <= 86400:
            raise ConfigError(f"hosts.{host}.delay must be between 0 and 86400 seconds")
        if rule.budget is not None and rule.budget < 0:
            raise ConfigError(f"hosts.{host}.budget must not be negative")
        if rule.priority is not None and not -1000 <= rule.priority <= 1000:
            raise ConfigError(f"hosts.{host}.priority must be between -1000 and 1000")
    positive = (
        "max_depth",
        "max_url_length",
        "max_body_bytes",
        "max_in_flight",
        "max_attempts",
        "warc_max_bytes",
        "text_max_bytes",
    )
    for name in positive:
        if getattr(c, name) <= 0:
            raise ConfigError(f"{name} must be positive")
    if c.parse_workers < 0:
        raise ConfigError("parse_workers must not be negative")
    if c.max_redirects < 0 or c.max_query_params < 0 or c.max_repeated_segments < 1:
        raise ConfigError("max_redirects, max_query_params and max_repeated_segments are bounds")
    if c.scope not in ("host", "domain", "any", "allowlist"):
        raise ConfigError(f"scope must be host, domain, any or allowlist, got {c.scope!r}")
    if c.scope == "allowlist" and not c.allowed_hosts:
        raise ConfigError("scope allowlist needs allowed_hosts")
    if c.render not in RENDER_MODES:
        raise ConfigError(f"render must be never, auto or always, got {c.render!r}")
    if c.render_pages < 1 or c.render_deadline <= 0 or c.render_scrolls < 0:
        raise ConfigError("render_pages and render_deadline must be positive, render_scrolls >= 0")
    if c.render_memory < 64 * MIB:
        raise ConfigError("render_memory must be at least 64M")
    if c.purpose not in ("search", "training"):
        raise ConfigError(f"purpose must be search or training, got {c.purpose!r}")
    if c.priority not in ("opic", "depth"):
        raise ConfigError(f"priority must be opic or depth, got {c.priority!r}")
    t = c.timeouts
    if min(t.connect, t.first_byte, t.total) <= 0:
        raise ConfigError("timeouts must be positive")


# -- merging sources ------------------------------------------------------------------


def parse_network(text: str | IPNetwork) -> IPNetwork:
    if isinstance(text, ipaddress.IPv4Network | ipaddress.IPv6Network):
        return text
    try:
        return ipaddress.ip_network(str(text).strip(), strict=False)
    except ValueError as exc:
        raise ConfigError(f"not a network: {text!r}") from exc


_HOST_KEY = re.compile(r"[a-z0-9._~!$&'()*+,;=\[\]:-]+")


def host_override_key(name: str) -> str:
    """A ``hosts`` key as matched: lower case, no trailing dot (a port is kept)."""
    key = name.strip().lower().rstrip(".").lstrip(".")
    if not key or _HOST_KEY.fullmatch(key) is None:
        raise ConfigError(f"hosts: {name!r} is not a host name")
    return key
