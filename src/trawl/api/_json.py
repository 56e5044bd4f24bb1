"""JSON answers of ``trawl serve``: one encoder, one error shape."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from aiohttp import web

# Paths answered in JSON, errors included (the pages answer errors in text).
API_ROOTS = ("/api", "/v1", "/metrics")


def json_response(body: Any, *, status: int = 200) -> web.Response:
    """A JSON response encoded with orjson (fast, and never NaN or raw bytes)."""
    return web.Response(
        body=orjson.dumps(body), status=status, content_type="application/json", charset="utf-8"
    )


def json_error(status: int, message: str, fields: Mapping[str, str] | None = None) -> web.Response:
    """``{"error": message, "fields": {...}}``: the shape of every JSON error."""
    body: dict[str, Any] = {"error": message}
    if fields:
        body["fields"] = dict(fields)
    return json_response(body, status=status)


def is_api_path(path: str) -> bool:
    """True for the JSON endpoints: ``/api``, ``/v1``, ``/metrics`` and what is below them."""
    return any(path == root or path.startswith(root + "/") for root in API_ROOTS)
