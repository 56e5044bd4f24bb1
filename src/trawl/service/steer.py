"""Steering a crawl of ``trawl serve``: the requests, and the spec's revisions.

``POST /v1/crawls/{id}/seeds`` adds seeds; ``PATCH /v1/crawls/{id}`` changes the limits
and the delay; each is checked here field by field (400 with ``fields``, like a crawl
request) and becomes a revision of the crawl's ``spec.json``: the spec holds the crawl's
settings as they are now, ``revision`` counts the changes and ``history`` lists them
(``{"revision", "at", "seeds"}`` or ``{"revision", "at", "set"}``). The crawl's process
(``service/runner.py``) follows the revisions: it applies each one it has not applied,
publishes it as an event (``crawl.seeds``, ``crawl.changed``) in the crawl's event log,
and records the revision in its store, all in one commit; a process started later
starts from the revised spec. ``DELETE /v1/crawls/{id}`` needs ``{"confirm": "<id>"}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trawl.service.spec import (
    LIMITS,
    NUMBERS,
    SpecError,
    check_host_overrides,
    check_number,
    check_seed_urls,
    seed_urls,
)

# The limits a running crawl takes on (max_in_flight sizes its HTTP client at start).
STEER_LIMITS = ("max_pages", "max_depth", "max_per_host", "max_duration")
# What PATCH may change; ``Crawl.reconfigure`` applies it to the running crawl.
STEER_FIELDS = ("limits", "delay", "hosts")
# Limits that may be lifted (null): the others have a default the crawl falls back to.
LIFTABLE = ("max_pages", "max_duration")
HISTORY_KEEP = 1000  # the history holds the latest changes; the spec holds their sum


def check_seeds(body: Any) -> list[str | dict[str, Any]]:
    """The seeds of ``{"seeds": [...]}``, each in normal form (or ``{"url", "priority"}``);
    raises ``SpecError``."""
    if not isinstance(body, dict):
        raise SpecError({"body": "must be a JSON object"})
    errors = {str(k)[:100]: "unknown field" for k in body if k != "seeds"}
    good = check_seed_urls(body.get("seeds"), errors)
    if errors:
        raise SpecError(errors)
    return good


def check_change(body: Any) -> dict[str, Any]:
    """The settings of a PATCH: ``{"limits": {name: value or null}, "delay": s,
    "hosts": {host: settings or null}}`` (a host's settings replace its override
    whole; null removes it)."""
    if not isinstance(body, dict):
        raise SpecError({"body": "must be a JSON object"})
    errors = {
        str(k)[:100]: "unknown field (or not changeable)" for k in body if k not in STEER_FIELDS
    }
    out: dict[str, Any] = {}
    limits = body.get("limits", {})
    if not isinstance(limits, dict):
        errors["limits"] = "must be an object"
    else:
        for key, value in limits.items():
            name = f"limits.{str(key)[:100]}"
            if key not in STEER_LIMITS:
                errors[name] = "unknown limit (or not changeable while the crawl runs)"
            elif value is None:
                if key in LIFTABLE:
                    out.setdefault("limits", {})[key] = None
                else:
                    errors[name] = "must be a number"
            else:
                number, problem = check_number(value, *LIMITS[key])
                if problem:
                    errors[name] = problem
                else:
                    out.setdefault("limits", {})[key] = number
    if "delay" in body:
        out["delay"], problem = check_number(body["delay"], *NUMBERS["delay"])
        if problem:
            errors["delay"] = problem
    if "hosts" in body:
        hosts = check_host_overrides(body["hosts"], errors, removable=True)
        if hosts:
            out["hosts"] = hosts
    if not errors and not out:
        errors["body"] = "nothing to change: give limits, delay or hosts"
    if errors:
        raise SpecError(errors)
    return out


def check_delete(body: Any, crawl_id: str) -> None:
    """A deletion names the crawl again: ``{"confirm": "<id>"}``."""
    if not isinstance(body, dict) or body.get("confirm") != crawl_id:
        raise SpecError({"confirm": "must be the crawl's id, to confirm the deletion"})


def revise(spec: Mapping[str, Any], change: Mapping[str, Any], *, at: float) -> dict[str, Any]:
    """The spec with ``change`` (``{"seeds": [...]}`` or ``{"set": {...}}``) applied and
    recorded as the next revision."""
    out = dict(spec)
    revision = int(spec.get("revision", 0)) + 1
    if "seeds" in change:
        known = set(seed_urls(out["seeds"]))
        new = [s for s in change["seeds"] if seed_urls([s])[0] not in known]
        out["seeds"] = [*out["seeds"], *new]
    settings = change.get("set", {})
    for name in ("limits", "hosts"):  # merged key by key; null removes a key
        if name in settings:
            merged = {**out.get(name, {}), **settings[name]}
            out[name] = {k: v for k, v in merged.items() if v is not None}
    if "delay" in settings:
        out["delay"] = settings["delay"]
    entry = {"revision": revision, "at": at, **change}
    out["history"] = [*spec.get("history", []), entry][-HISTORY_KEEP:]
    out["revision"] = revision
    return out


def changes_after(spec: Mapping[str, Any], revision: int) -> list[dict[str, Any]]:
    """The spec's recorded changes after ``revision``, oldest first."""
    return [e for e in spec.get("history", []) if int(e.get("revision", 0)) > revision]
