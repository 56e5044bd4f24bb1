"""The crawl's settings: one frozen, typed config, merged from a file, env and the CLI.

Nothing reads settings from anywhere else: the composition root (crawl.py) builds
every component from a ``CrawlConfig``.
"""

from __future__ import annotations

import ipaddress
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

import orjson

from trawl._version import __version__
from trawl.errors import ConfigError

Scope = Literal["host", "domain", "any", "allowlist"]
Purpose = Literal["search", "training"]
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
    strip_tracking: bool = False
    follow_nofollow_links: bool = False
    near_duplicates: bool = True  # MinHash near-duplicate detection (dedup/minhash.py)
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
    # Storage.
    warc_max_bytes: int = 1 * GIB
    text_max_bytes: int = 256 * MIB
    commit_interval: float = 0.5
    fsync: bool = True
    # The crawl stops cleanly (exit status 75 from ``trawl crawl``, resumable) when
    # the data directory's file system has less free space than this, checked at
    # the start and at every group commit, so the last commit, the index merge and
    # SQLite's checkpoint still have room. 0 turns the guard off; a write that finds
    # the disk full stops the crawl the same way.
    min_free_space: int = 256 * MIB
    # Parse worker processes; 0 parses in the crawler's own process (tests, tiny crawls).
    parse_workers: int = field(default_factory=lambda: max(1, os.cpu_count() or 1))

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
    def honour_ai_opt_outs(self) -> bool:
        return self.purpose == "training" if self.ai_opt_outs is None else self.ai_opt_outs

    def with_changes(self, **changes: Any) -> CrawlConfig:
        return replace(self, **changes)


def _check(c: CrawlConfig) -> None:
    if not c.agent or any(ch.isspace() or ch in "/;()" for ch in c.agent):
        raise ConfigError(f"agent must be a bare product token, got {c.agent!r}")
    for name in ("delay", "max_crawl_delay", "retry_base", "retry_max", "commit_interval"):
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
    if c.purpose not in ("search", "training"):
        raise ConfigError(f"purpose must be search or training, got {c.purpose!r}")
    t = c.timeouts
    if min(t.connect, t.first_byte, t.total) <= 0:
        raise ConfigError("timeouts must be positive")


# -- merging sources ------------------------------------------------------------------

_ENV_PREFIX = "TRAWL_"


def parse_network(text: str | IPNetwork) -> IPNetwork:
    if isinstance(text, ipaddress.IPv4Network | ipaddress.IPv6Network):
        return text
    try:
        return ipaddress.ip_network(str(text).strip(), strict=False)
    except ValueError as exc:
        raise ConfigError(f"not a network: {text!r}") from exc


def parse_resolve(entries: list[str]) -> dict[str, str]:
    """``HOST=IP`` entries (also lines of a resolve file) into a mapping."""
    out: dict[str, str] = {}
    for raw in entries:
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        host, sep, ip = line.partition("=")
        if not sep:
            host, _, ip = line.partition(" ")
        host, ip = host.strip().lower().rstrip("."), ip.strip().strip("[]")
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            raise ConfigError(f"resolve entry needs HOST=IP, got {raw!r}") from None
        if not host:
            raise ConfigError(f"resolve entry needs HOST=IP, got {raw!r}")
        out[host] = ip
    return out


def read_resolve_file(path: Path) -> dict[str, str]:
    try:
        return parse_resolve(path.read_text(encoding="utf-8").splitlines())
    except OSError as exc:
        raise ConfigError(f"cannot read resolve file {path}: {exc}") from exc


_LIMITS = ("max_per_host", "max_links_per_page")  # counts where 0 means no limit


def parse_limit(text: str | int) -> int:
    """A count limit: a whole number, or ``none`` / ``0`` for no limit."""
    if isinstance(text, int):
        return text
    word = str(text).strip().lower()
    if word in ("none", "unlimited"):
        return 0
    try:
        return int(word)
    except ValueError:
        raise ConfigError(f"not a limit (a number, or none): {text!r}") from None


_SIZE_UNITS = {"": 1, "k": KIB, "m": MIB, "g": GIB, "t": 1024 * GIB}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?")


def parse_size(text: str | int) -> int:
    """A size in bytes: ``268435456``, ``256M``, ``256MiB``, ``1.5G`` (units of 1024)."""
    if isinstance(text, int):
        return text
    match = _SIZE.fullmatch(str(text).strip().lower())
    if match is None:
        raise ConfigError(f"not a size (like 256M or 1G): {text!r}")
    return int(float(match[1]) * _SIZE_UNITS[match[2]])


def _coerce(name: str, value: Any) -> Any:
    """Turn file/env values into the field's type."""
    if name == "data_dir":
        return Path(value)
    if name in _LIMITS:
        return parse_limit(value)
    if name == "min_free_space":
        return parse_size(value)
    if name in ("seeds", "allowed_hosts", "opt_out_agents"):
        if isinstance(value, str):
            value = [v for v in (p.strip() for p in value.split(",")) if v]
        return tuple(value)
    if name == "allow_networks":
        if isinstance(value, str):
            value = value.split(",")
        return tuple(parse_network(v) for v in value)
    if name == "resolve":
        if isinstance(value, str):
            return parse_resolve(value.split(","))
        if isinstance(value, Mapping):
            return parse_resolve([f"{k}={v}" for k, v in value.items()])
        return parse_resolve(list(value))
    if name == "quality":
        if isinstance(value, QualityThresholds):
            return value
        if value in ("gopher", "default"):
            return QualityThresholds.gopher()
        if value in ("none", "off", None, ""):
            return QualityThresholds()
        if isinstance(value, Mapping):
            return QualityThresholds(**dict(value))
        raise ConfigError(f"quality must be gopher, none or a table of thresholds: {value!r}")
    if name == "timeouts":
        if isinstance(value, Timeouts):
            return value
        return Timeouts(**{k: float(v) for k, v in dict(value).items()})
    return value


_FIELDS = {f.name: f for f in fields(CrawlConfig)}
_NUMERIC = {
    name: f.type
    for name, f in _FIELDS.items()
    if isinstance(f.type, str) and f.type.split(" ")[0] in ("int", "float")
}


def _from_env(env: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, raw in env.items():
        if not key.startswith(_ENV_PREFIX):
            continue
        name = key[len(_ENV_PREFIX) :].lower()
        if name not in _FIELDS:
            continue
        value: Any = raw
        kind = _NUMERIC.get(name)
        try:
            if name in _LIMITS:
                value = parse_limit(raw)
            elif name == "min_free_space":
                value = parse_size(raw)
            elif kind is not None:
                value = float(raw) if kind.startswith("float") else int(raw)
            elif _FIELDS[name].type in ("bool", "bool | None"):
                value = raw.strip().lower() in ("1", "true", "yes", "on")
        except ValueError:
            raise ConfigError(f"{key}={raw!r} is not a number") from None
        out[name] = value
    return out


def load_config(
    *,
    file: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> CrawlConfig:
    """Merge settings: defaults < config file (TOML) < TRAWL_* environment < overrides."""
    merged: dict[str, Any] = {}
    if file is not None:
        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read config {file}: {exc}") from exc
        section = data.get("crawl", data)
        unknown = set(section) - set(_FIELDS)
        if unknown:
            raise ConfigError(f"unknown settings in {file}: {', '.join(sorted(unknown))}")
        merged.update(section)
    merged.update(_from_env(env if env is not None else os.environ))
    for key, value in (overrides or {}).items():
        if value is not None:
            merged[key] = value
    if "data_dir" not in merged:
        raise ConfigError("a data directory is required (--data DIR)")
    try:
        return CrawlConfig(**{k: _coerce(k, v) for k, v in merged.items()})
    except TypeError as exc:
        raise ConfigError(str(exc)) from exc


def config_json(config: CrawlConfig) -> str:
    """The config as JSON (stored in the data directory so ``--resume`` can reuse it)."""
    data = asdict(config)
    data["data_dir"] = str(config.data_dir)
    data["allow_networks"] = [str(n) for n in config.allow_networks]
    data["resolve"] = dict(config.resolve)
    return orjson.dumps(data).decode()
