"""Field checks shared by a crawl request and the steering of a running crawl: numbers
within bounds, lists of strings, seeds (a URL, or a URL with its priority), per-host
overrides. Each bad field gets its own message in ``errors`` (or a ``SpecError``)."""

from __future__ import annotations

from typing import Any

from trawl import urls
from trawl.config import host_override_key
from trawl.errors import ConfigError, UrlError
from trawl.frontier.admission import MAX_SEED_PRIORITY

MAX_SEEDS = 10_000
MAX_HOST_OVERRIDES = 10_000
HOST_SETTINGS: dict[str, tuple[type, float, float]] = {
    "delay": (float, 0.0, 86400.0),
    "budget": (int, 0, 10**9),
    "priority": (int, -1000, 1000),
}


class SpecError(Exception):
    """One message per bad field."""

    def __init__(self, fields: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in fields.items()))
        self.fields = fields


def check_number(value: Any, kind: type, low: float, high: float) -> tuple[Any, str | None]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None, "must be a number"
    if kind is int and (isinstance(value, float) and not value.is_integer()):
        return None, "must be a whole number"
    if not low <= value <= high:
        return None, f"must be between {low:g} and {high:g}"
    return (int(value) if kind is int else float(value)), None


def check_strings(value: Any, *, max_items: int) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return "must be a list of strings"
    if len(value) > max_items:
        return f"at most {max_items} items"
    return None


def check_seed_urls(seeds: Any, errors: dict[str, str]) -> list[str | dict[str, Any]]:
    """The good seeds of a request's ``seeds`` as kept in a spec: each URL in normal
    form, or ``{"url", "priority"}``; a message for each bad one (or for the list) goes
    into ``errors``."""
    if seeds is None:
        errors["seeds"] = "required: a list of http(s) URLs"
        return []
    problem = None
    if not isinstance(seeds, list):
        problem = 'must be a list of URLs or {"url", "priority"} objects'
    elif len(seeds) > MAX_SEEDS:
        problem = f"at most {MAX_SEEDS} items"
    elif not seeds:
        problem = "needs at least one URL"
    if problem is not None:
        errors["seeds"] = problem
        return []
    good: list[str | dict[str, Any]] = []
    for i, raw in enumerate(seeds):
        seed = _check_seed(f"seeds[{i}]", raw, errors)
        if seed is not None:
            good.append(seed)
    return good


def _check_seed(where: str, raw: Any, errors: dict[str, str]) -> str | dict[str, Any] | None:
    """A seed as kept in the spec: its URL in normal form, or ``{"url", "priority"}``."""
    priority = None
    if isinstance(raw, dict):
        extra = set(raw) - {"url", "priority"}
        if extra:
            errors[f"{where}.{sorted(map(str, extra))[0][:100]}"] = "unknown field"
            return None
        if "priority" in raw:
            priority = raw["priority"]
            number = isinstance(priority, int | float) and not isinstance(priority, bool)
            if not number or not 0 < priority <= MAX_SEED_PRIORITY:
                errors[f"{where}.priority"] = "must be a number above 0, up to 1e6"
                return None
            priority = float(priority)
        raw, where = raw.get("url"), f"{where}.url"
    if not isinstance(raw, str):
        errors[where] = "must be a URL (a string)"
        return None
    try:
        url = urls.normalize(raw.strip())
        urls.host_key(url)
    except UrlError as exc:
        errors[where] = f"not a crawlable URL: {exc.reason}"
        return None
    return url if priority is None else {"url": url, "priority": priority}


def check_host_overrides(
    hosts: Any, errors: dict[str, str], *, removable: bool = False
) -> dict[str, dict[str, Any] | None]:
    """Per-host overrides by their key (host or host:port) -> settings; a message for
    each bad one goes into ``errors``. ``removable``: null removes a host's override
    (a change to a running crawl)."""
    if not isinstance(hosts, dict) or len(hosts) > MAX_HOST_OVERRIDES:
        errors["hosts"] = (
            f"must be an object of at most {MAX_HOST_OVERRIDES:,} host names to settings"
        )
        return {}
    out: dict[str, dict[str, Any] | None] = {}
    for host, settings in hosts.items():
        where = f"hosts.{str(host)[:100]}"
        try:
            key = host_override_key(str(host))
        except ConfigError:
            errors[where] = "not a host name"
            continue
        if settings is None and removable:
            out[key] = None
            continue
        if not isinstance(settings, dict):
            errors[where] = "must be an object of delay, budget, priority, block" + (
                " (or null: no override)" if removable else ""
            )
            continue
        rule: dict[str, Any] = {}
        for name, value in settings.items():
            if name == "block":
                if isinstance(value, bool):
                    rule[name] = value
                else:
                    errors[f"{where}.block"] = "must be true or false"
            elif name in HOST_SETTINGS:
                rule[name], problem = check_number(value, *HOST_SETTINGS[name])
                if problem:
                    errors[f"{where}.{name}"] = problem
            else:
                errors[f"{where}.{str(name)[:100]}"] = "unknown setting"
        out[key] = rule
    return out
