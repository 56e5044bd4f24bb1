"""The JSON view of a crawl: its state, request and progress (from progress.json)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from trawl.records import Snapshot
from trawl.service.manager import CrawlManager
from trawl.service.runner import SPEC_FILE
from trawl.service.spec import seed_urls
from trawl.telemetry import PROGRESS_FILE, read_json

# The snapshot's whole-number fields, as the crawler writes them into progress.json.
SNAPSHOT_INTS = tuple(f.name for f in fields(Snapshot) if f.type == "int")
# The view's whole-number fields: those, and one derived from them.
PROGRESS_INTS = (*SNAPSHOT_INTS, "hosts_active")


def _prefixed(counters: dict[str, int], prefix: str) -> dict[str, int]:
    return {k[len(prefix) :]: int(v) for k, v in counters.items() if k.startswith(prefix)}


def progress_view(doc: dict[str, Any] | None) -> dict[str, Any]:
    snap = (doc or {}).get("snapshot") or {}
    counters = (doc or {}).get("counters") or {}
    out: dict[str, Any] = {k: int(snap.get(k, 0)) for k in SNAPSHOT_INTS}
    out["hosts_active"] = out["hosts_ready"] + out["hosts_waiting"]
    out["pages_per_second"] = float(snap.get("pages_per_second", 0.0))
    out["elapsed"] = float(snap.get("elapsed", 0.0))
    out["updated"] = (doc or {}).get("updated")
    out["skipped_by_reason"] = _prefixed(counters, "skipped:")
    out["links_dropped_by_reason"] = _prefixed(counters, "dropped:")
    out["errors_by_kind"] = _prefixed(counters, "error:")
    out["failed_by_reason"] = _prefixed(counters, "failed:")
    out["status_codes"] = _prefixed(counters, "status:")
    out["robots"] = _prefixed(counters, "robots:")
    out["dedup"] = {
        "exact": int(counters.get("parse:duplicate", 0)),
        "near": int(counters.get("parse:near", 0)),
    }
    for key in ("top_hosts_by_pages", "top_hosts_by_errors"):
        out[key] = [{"host": h, "count": int(n)} for h, n in (doc or {}).get(key, [])]
    out["history"] = (doc or {}).get("history", [])
    return out


def crawl_view(manager: CrawlManager, crawl_id: str, *, full: bool) -> dict[str, Any]:
    directory = manager.root / crawl_id
    spec = read_json(directory / SPEC_FILE) or {}
    state = manager.state(crawl_id)
    out: dict[str, Any] = {
        "id": crawl_id,
        "name": spec.get("name", ""),
        "state": manager.status(crawl_id),
        "created": state.get("created"),
        "finished": state.get("finished"),
        "stopped": state.get("stopped"),
        "error": state.get("error"),
        "seeds": seed_urls(spec.get("seeds", []))[:20],
        "purpose": spec.get("purpose", "search"),
        "progress": progress_view(read_json(directory / PROGRESS_FILE)),
    }
    if full:
        out["spec"] = spec
    return out
