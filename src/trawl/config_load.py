"""Loading a crawl's config: the TOML file, ``TRAWL_*`` environment variables and
command-line overrides merged (file < env < CLI) and coerced into a ``CrawlConfig``;
its JSON form, saved in the data directory (or Redis) for a resume."""

from __future__ import annotations

import ipaddress
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import orjson

from trawl.config import (
    GIB,
    KIB,
    MIB,
    CrawlConfig,
    HostOverride,
    QualityThresholds,
    Timeouts,
    host_override_key,
    parse_network,
    parse_politeness_dir,
)
from trawl.errors import ConfigError
from trawl.memory import MemoryLimits

_ENV_PREFIX = "TRAWL_"


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
_SIZES = ("min_free_space", "render_memory")  # sizes in bytes, "256M" accepted


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


def parse_patterns(value: Any) -> tuple[str, ...]:
    """Regular expressions: a list, a JSON array (environment), or one pattern."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = orjson.loads(text)
            except orjson.JSONDecodeError as exc:
                raise ConfigError(f"not a JSON array of patterns: {exc}") from None
        else:
            value = [value] if text else []
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"patterns must be a list of regular expressions: {value!r}")
    return tuple(value)


def parse_host_overrides(value: Any) -> dict[str, HostOverride]:
    """``{host: {delay, budget, priority, block}}`` from a TOML table, a mapping, or a
    JSON object (environment)."""
    if isinstance(value, str):
        try:
            value = orjson.loads(value) if value.strip() else {}
        except orjson.JSONDecodeError as exc:
            raise ConfigError(f"hosts: not a JSON object: {exc}") from None
    if not isinstance(value, Mapping):
        raise ConfigError("hosts must be a table of host name -> settings")
    out: dict[str, HostOverride] = {}
    for name, raw in value.items():
        key = host_override_key(str(name))
        if isinstance(raw, HostOverride):
            out[key] = raw
            continue
        if not isinstance(raw, Mapping):
            raise ConfigError(f"hosts.{key} must be a table of delay, budget, priority, block")
        unknown = set(raw) - {"delay", "budget", "priority", "block"}
        if unknown:
            raise ConfigError(f"hosts.{key}: unknown settings {', '.join(sorted(unknown))}")
        block = _flag(raw.get("block", False), f"hosts.{key}.block")
        try:
            out[key] = HostOverride(
                delay=None if raw.get("delay") is None else float(raw["delay"]),
                budget=None if raw.get("budget") is None else parse_limit(raw["budget"]),
                priority=None if raw.get("priority") is None else int(raw["priority"]),
                block=block,
            )
        except (TypeError, ValueError):
            raise ConfigError(f"hosts.{key}: delay, budget and priority are numbers") from None
    return out


def _flag(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no", "1", "0"):
        return value.lower() in ("true", "yes", "1")
    raise ConfigError(f"{name} must be true or false")


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
    if name == "politeness_dir":
        return parse_politeness_dir(value)
    if name in _LIMITS:
        return parse_limit(value)
    if name in _SIZES:
        return parse_size(value)
    if name in ("include", "exclude"):
        return parse_patterns(value)
    if name == "hosts":
        return parse_host_overrides(value)
    if name in ("seeds", "allowed_hosts", "opt_out_agents", "render_hosts"):
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
    if name == "memory":
        return parse_memory(value)
    return value


# The memory limits that are not sizes (those are: "16M").
_MEMORY_COUNTS = {
    "lexicon_words": int,
    "equivalence_urls": int,
    "frontier_hosts": int,
    "idle_connections": int,
    "index_volume": int,
    "parse_tags": int,
    "trim": float,
}


def parse_memory(value: Any) -> MemoryLimits:
    """The ``[crawl.memory]`` table (``_MEMORY_COUNTS``, and sizes); what is left out
    keeps its default."""
    if isinstance(value, MemoryLimits):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError(f"memory must be a table of limits: {value!r}")
    known = {f.name for f in fields(MemoryLimits)}
    unknown = set(value) - known
    if unknown:
        raise ConfigError(f"unknown memory limits: {', '.join(sorted(unknown))}")
    try:
        return MemoryLimits(
            **{
                k: _MEMORY_COUNTS[k](v) if k in _MEMORY_COUNTS else parse_size(v)
                for k, v in value.items()
            }
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"memory: {exc}") from None


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
            elif name in _SIZES:
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
        section = dict(data.get("crawl", data))
        if "crawl" in data and "hosts" in data:  # [hosts."example.org"] beside [crawl]
            section["hosts"] = {**data["hosts"], **section.get("hosts", {})}
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


def saved_settings(raw: str) -> dict[str, Any]:
    """The settings of a stored ``config_json``, to resume that crawl with.

    The seeds are left out (they are in the frontier already). A crawl saved before
    tracking parameters were dropped by default (its config has no ``equivalences``)
    holds ``strip_tracking: false`` only because that was the default then (no setting
    could ask to keep them), so the default applies on resume; the URLs it admitted
    with tracking parameters stay as they are.
    """
    saved: dict[str, Any] = orjson.loads(raw)
    saved.pop("seeds", None)
    if "equivalences" not in saved and saved.get("strip_tracking") is False:
        del saved["strip_tracking"]
    return saved


def config_json(config: CrawlConfig) -> str:
    """The config as JSON (stored in the data directory so ``--resume`` can reuse it)."""
    data = asdict(config)
    data["data_dir"] = str(config.data_dir)
    data["politeness_dir"] = None if config.politeness_dir is None else str(config.politeness_dir)
    data["allow_networks"] = [str(n) for n in config.allow_networks]
    data["resolve"] = dict(config.resolve)
    data["hosts"] = {k: asdict(v) for k, v in config.hosts.items()}
    return orjson.dumps(data).decode()
