"""The body of ``POST /v1/crawls``: checked field by field, then turned into a config.

Every bad field gets its own message (``{"fields": {"seeds[1]": "..."}}``), and the
result is also built into a real ``CrawlConfig`` before anything starts, so a request
that passes here is one the crawler accepts.

The networks a request may open to the crawler (``allow_networks``, and the addresses
of ``resolve``) must lie within the ceiling the server's operator set (``trawl serve
--allow-network``; none by default): a token holder cannot turn the address guard off.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, get_args

from trawl.config import RENDER_MODES, CrawlConfig, Purpose, Scope, Timeouts
from trawl.config_load import load_config
from trawl.errors import ConfigError
from trawl.fetch.address import AddressGuard, IPNetwork
from trawl.fetch.render.browser import require_playwright
from trawl.service.checks import (
    HOST_SETTINGS,
    MAX_HOST_OVERRIDES,
    MAX_SEEDS,
    SpecError,
    check_host_overrides,
    check_number,
    check_seed_urls,
    check_strings,
)

__all__ = [
    "HOST_SETTINGS",
    "LIMITS",
    "MAX_HOST_OVERRIDES",
    "MAX_SEEDS",
    "NUMBERS",
    "SpecError",
    "check_host_overrides",
    "check_number",
    "check_seed_urls",
    "check_spec",
    "check_strings",
    "seed_lines",
    "seed_urls",
    "to_config",
]

PRIORITIES = {"normal": 0, "low": 10, "idle": 19}  # the crawl's processes' nice value
SCOPES: tuple[str, ...] = get_args(Scope)
PURPOSES: tuple[str, ...] = get_args(Purpose)
QUALITIES = ("none", "gopher")
LIMITS: dict[str, tuple[type, float, float]] = {
    "max_pages": (int, 1, 10**12),
    "max_depth": (int, 1, 1000),
    "max_per_host": (int, 1, 10**9),
    "max_duration": (float, 0.1, 365 * 86400.0),
    "max_in_flight": (int, 1, 10_000),
    "max_sitemaps_per_host": (int, 1, 100_000),
}
MAX_PATTERNS = 100
MAX_PATTERN_LENGTH = 1000
NUMBERS: dict[str, tuple[type, float, float]] = {
    "delay": (float, 0.0, 3600.0),
    "timeout": (float, 0.1, 600.0),
    "parse_workers": (int, 0, 64),
    "robots_patience": (float, 0.0, 30 * 86400.0),
}
RECRAWL: dict[str, tuple[type, float, float]] = {
    "interval": (float, 1.0, 365 * 86400.0),
    "min": (float, 1.0, 365 * 86400.0),
    "max": (float, 1.0, 365 * 86400.0),
}
FIELDS = frozenset(
    (
        "name",
        "seeds",
        "scope",
        "allowed_hosts",
        "limits",
        "priority",
        "agent",
        "contact",
        "purpose",
        "recrawl",
        "delay",
        "timeout",
        "parse_workers",
        "robots_patience",
        "allow_networks",
        "resolve",
        "strip_tracking",
        "equivalences",
        "quality",
        "sitemaps",
        "index",
        "include",
        "exclude",
        "hosts",
        "render",
        "render_hosts",
    )
)
MAX_RENDER_HOSTS = 100


def _within(network: IPNetwork, ceiling: Sequence[IPNetwork]) -> bool:
    return any(
        network.version == top.version and network.subnet_of(top)  # type: ignore[arg-type]
        for top in ceiling
    )


class _Checker:
    def __init__(self, body: Mapping[str, Any], ceiling: Sequence[IPNetwork]) -> None:
        self.body = body
        self.ceiling = tuple(ceiling)
        # The crawler's own guard, opened only as far as the operator allows.
        self.guard = AddressGuard(self.ceiling)
        self.errors: dict[str, str] = {}
        self.out: dict[str, Any] = {}

    def run(self) -> dict[str, Any]:
        for key in self.body:
            if key not in FIELDS:
                self.errors[str(key)[:100]] = "unknown field"
        checks: list[Callable[[], None]] = [
            self._name,
            self._seeds,
            self._scope,
            self._limits,
            self._choices,
            self._agent,
            self._recrawl,
            self._numbers,
            self._network,
            self._flags,
            self._patterns,
            self._hosts,
        ]
        for check in checks:
            check()
        if self.errors:
            raise SpecError(self.errors)
        return self.out

    def _get(self, key: str, default: Any = None) -> Any:
        return self.body.get(key, default)

    def _name(self) -> None:
        name = self._get("name", "")
        if not isinstance(name, str) or len(name) > 200:
            self.errors["name"] = "must be a string of at most 200 characters"
        else:
            self.out["name"] = name

    def _seeds(self) -> None:
        self.out["seeds"] = check_seed_urls(self._get("seeds"), self.errors)

    def _scope(self) -> None:
        scope = self._get("scope", "host")
        if scope not in SCOPES:
            self.errors["scope"] = f"must be one of {', '.join(SCOPES)}"
            return
        self.out["scope"] = scope
        hosts = self._get("allowed_hosts", [])
        problem = check_strings(hosts, max_items=MAX_SEEDS)
        if problem is not None:
            self.errors["allowed_hosts"] = problem
        elif scope == "allowlist" and not hosts:
            self.errors["allowed_hosts"] = "scope allowlist needs at least one host"
        else:
            self.out["allowed_hosts"] = [h.strip().lower() for h in hosts]

    def _limits(self) -> None:
        limits = self._get("limits", {})
        if not isinstance(limits, dict):
            self.errors["limits"] = "must be an object"
            return
        out: dict[str, Any] = {}
        for key, value in limits.items():
            if key not in LIMITS:
                self.errors[f"limits.{str(key)[:100]}"] = "unknown limit"
                continue
            if value is None:
                continue
            out[key], problem = check_number(value, *LIMITS[key])
            if problem:
                self.errors[f"limits.{key}"] = problem
        self.out["limits"] = out

    def _choices(self) -> None:
        for key, allowed, default in (
            ("priority", tuple(PRIORITIES), "normal"),
            ("purpose", PURPOSES, "search"),
            ("quality", QUALITIES, "none"),
            ("render", RENDER_MODES, "never"),
        ):
            value = self._get(key, default)
            if value not in allowed:
                self.errors[key] = f"must be one of {', '.join(allowed)}"
            else:
                self.out[key] = value
        if self.out.get("render", "never") != "never":
            try:  # a crawl that cannot start is refused now, not failed later
                require_playwright()
            except ConfigError as exc:
                self.errors["render"] = str(exc)

    def _agent(self) -> None:
        agent = self._get("agent", "trawl")
        if not isinstance(agent, str) or not agent or len(agent) > 60:
            self.errors["agent"] = "must be a product token of 1 to 60 characters"
        elif any(not (ch.isalnum() or ch in "-_.") for ch in agent) or not agent.isascii():
            self.errors["agent"] = "must be a bare product token (letters, digits, - _ .)"
        else:
            self.out["agent"] = agent
        contact = self._get("contact", "https://trawl.invalid/bot")
        ok = isinstance(contact, str) and len(contact) <= 300 and contact.isprintable()
        if not ok or not contact.startswith(("http://", "https://", "mailto:")):
            self.errors["contact"] = "must be an http(s) or mailto: URL of at most 300 characters"
        else:
            self.out["contact"] = contact

    def _recrawl(self) -> None:
        recrawl = self._get("recrawl")
        if recrawl is None:
            self.out["recrawl"] = None
            return
        if not isinstance(recrawl, dict) or "interval" not in recrawl:
            self.errors["recrawl"] = 'must be null or an object with "interval" (seconds)'
            return
        out: dict[str, float] = {}
        for key, value in recrawl.items():
            if key not in RECRAWL:
                self.errors[f"recrawl.{str(key)[:100]}"] = "unknown setting"
                continue
            out[key], problem = check_number(value, *RECRAWL[key])
            if problem:
                self.errors[f"recrawl.{key}"] = problem
        low, high = out.get("min", 3600.0), out.get("max", 30 * 86400.0)
        bad = any(k.startswith("recrawl") for k in self.errors)
        if not bad and low > high:
            self.errors["recrawl.min"] = "must not be above recrawl.max"
        self.out["recrawl"] = out

    def _numbers(self) -> None:
        for key, bounds in NUMBERS.items():
            if self._get(key) is None:
                continue
            self.out[key], problem = check_number(self._get(key), *bounds)
            if problem:
                self.errors[key] = problem

    def _beyond(self, what: str) -> str:
        allowed = ", ".join(str(n) for n in self.ceiling) or "none"
        return f"{what} is beyond what this server allows ({allowed}; trawl serve --allow-network)"

    def _network(self) -> None:
        nets = self._get("allow_networks", [])
        problem = check_strings(nets, max_items=100)
        if problem is None:
            for i, net in enumerate(nets):
                try:
                    network = ipaddress.ip_network(net.strip(), strict=False)
                except ValueError:
                    self.errors[f"allow_networks[{i}]"] = "not a network (CIDR)"
                    continue
                if not _within(network, self.ceiling):
                    self.errors[f"allow_networks[{i}]"] = self._beyond(str(network))
            self.out["allow_networks"] = nets
        else:
            self.errors["allow_networks"] = problem
        resolve = self._get("resolve", {})
        if not isinstance(resolve, dict) or len(resolve) > 10_000:
            self.errors["resolve"] = "must be an object of host name to IP address"
            return
        for host, ip in resolve.items():
            key = f"resolve.{str(host)[:100]}"
            try:
                address = ipaddress.ip_address(ip if isinstance(ip, str) else "")
            except ValueError:
                self.errors[key] = "must be an IP address"
            else:
                # A name pinned to a private address is a second way past the guard.
                reason = self.guard.check_ip(address)
                if reason is not None:
                    self.errors[key] = self._beyond(f"{address} ({reason})")
            if not host or any(ch.isspace() or ch in "=#/" for ch in host):
                self.errors[key] = "not a host name"
        self.out["resolve"] = resolve

    def _flags(self) -> None:
        for name in ("strip_tracking", "equivalences", "sitemaps", "index"):
            value = self._get(name, True)
            if not isinstance(value, bool):
                self.errors[name] = "must be true or false"
            else:
                self.out[name] = value
        hosts = self._get("render_hosts", [])
        problem = check_strings(hosts, max_items=MAX_RENDER_HOSTS)
        if problem is None and any(not h.strip(" .") or "/" in h for h in hosts):
            problem = "must be host names (cdn.example, or .example for a domain)"
        if problem is not None:
            self.errors["render_hosts"] = problem
        else:
            self.out["render_hosts"] = [h.strip().lower() for h in hosts]

    def _patterns(self) -> None:
        for key in ("include", "exclude"):
            patterns = self._get(key, [])
            problem = check_strings(patterns, max_items=MAX_PATTERNS)
            if problem is not None:
                self.errors[key] = problem
                continue
            for i, pattern in enumerate(patterns):
                if len(pattern) > MAX_PATTERN_LENGTH:
                    self.errors[f"{key}[{i}]"] = f"at most {MAX_PATTERN_LENGTH} characters"
                    continue
                try:
                    re.compile(pattern)
                except re.error as exc:
                    self.errors[f"{key}[{i}]"] = f"not a regular expression: {exc}"
            self.out[key] = patterns

    def _hosts(self) -> None:
        self.out["hosts"] = check_host_overrides(self._get("hosts", {}), self.errors)


def seed_lines(seeds: Sequence[str | Mapping[str, Any]]) -> list[str]:
    """The spec's seeds as the config takes them: ``URL`` or ``URL PRIORITY``."""
    return [s if isinstance(s, str) else f"{s['url']} {s['priority']!r}" for s in seeds]


def seed_urls(seeds: Sequence[str | Mapping[str, Any]]) -> list[str]:
    """The URLs of the spec's seeds."""
    return [s if isinstance(s, str) else str(s["url"]) for s in seeds]


def check_spec(body: Any, *, allow_networks: Sequence[IPNetwork] = ()) -> dict[str, Any]:
    """The request, checked and with defaults filled in; raises ``SpecError``.

    ``allow_networks`` is the operator's ceiling: each network the request opens, and
    each non-public address it resolves a name to, must lie within one of them.
    """
    if not isinstance(body, dict):
        raise SpecError({"body": "must be a JSON object"})
    spec = _Checker(body, allow_networks).run()
    try:
        to_config(spec, Path("/nonexistent/check-only"))
    except ConfigError as exc:
        raise SpecError({"body": str(exc)}) from None
    return spec


def to_config(spec: Mapping[str, Any], data_dir: Path) -> CrawlConfig:
    """The crawl's config: defaults < the request (no file, no environment)."""
    overrides: dict[str, Any] = {
        "data_dir": data_dir,
        "seeds": tuple(seed_lines(spec["seeds"])),
        "scope": spec["scope"],
        "allowed_hosts": tuple(spec["allowed_hosts"]),
        "agent": spec["agent"],
        "contact": spec["contact"],
        "purpose": spec["purpose"],
        "quality": spec["quality"],
        # A spec stored before tracking parameters were dropped by default (it has no
        # "equivalences") holds false only as the default of then: today's applies.
        "strip_tracking": spec["strip_tracking"] if "equivalences" in spec else True,
        "equivalences": spec.get("equivalences", True),
        "sitemaps": spec.get("sitemaps", True),
        "index": spec.get("index", True),
        "include": tuple(spec.get("include", ())),
        "exclude": tuple(spec.get("exclude", ())),
        "hosts": spec.get("hosts", {}),
        "render": spec.get("render", "never"),
        "render_hosts": tuple(spec.get("render_hosts", ())),
        "allow_networks": spec["allow_networks"],
        "resolve": spec["resolve"],
        **spec["limits"],
    }
    for key in ("delay", "parse_workers", "robots_patience"):
        if spec.get(key) is not None:
            overrides[key] = spec[key]
    if spec.get("timeout") is not None:
        t = float(spec["timeout"])
        overrides["timeouts"] = Timeouts(connect=min(10.0, t), first_byte=t, total=t)
    recrawl = spec.get("recrawl")
    if recrawl:
        overrides["recrawl"] = recrawl["interval"]
        for key in ("min", "max"):
            if key in recrawl:
                overrides[f"recrawl_{key}"] = recrawl[key]
    return load_config(env={}, overrides=overrides)
