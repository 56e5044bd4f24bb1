"""The read-only routes of ``trawl serve --redis``: one fleet crawl's pages and hosts.

A fleet's crawl lives in Redis and its logs in S3 (or a shared directory); crawls are
started with ``trawl crawl --redis`` and run by ``trawl worker`` processes, so this
route set has no crawl control: it answers ``GET /v1/pages`` and ``GET /v1/hosts/{host}``
from the crawl's committed state, exactly as the one-machine service does for a data
directory (``trawl.service.reader`` does the reading for both), and ``GET /v1/events``
from every worker's committed events (``trawl.service.fleet_events``: the cursor is
one id per writer).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from trawl.api._json import json_error, json_response
from trawl.config import CrawlConfig
from trawl.service import openapi
from trawl.service.fleet_events import CursorError, FleetEventTail, format_cursor, parse_cursor
from trawl.service.reader import host_view, page_copy
from trawl.service.routes import stream_events
from trawl.storage.place import CrawlPlace

_PATHS = ("/v1/pages", "/v1/hosts/{host}")


def _events_path() -> dict[str, Any]:
    """The one-machine ``/v1/events`` with the fleet's cursor in place of an id."""
    get = dict(openapi.PATHS["/v1/events"]["get"])
    cursor = {"type": "string", "description": "writer=id,writer=id (or 0)"}
    get["parameters"] = [
        {**p, "schema": cursor} if p["name"] == "after" else p for p in get["parameters"]
    ]
    get["description"] = (
        "Committed events of every worker of the fleet's crawl. Each worker numbers its "
        "own events, so the cursor (`after`, `Last-Event-ID`, `last_id`, each SSE `id:`) "
        "is one last id per writer: `writer=id,writer=id`; each event carries `writer`."
    )
    answer = {
        "description": "events",
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/FleetEventPage"}},
            "text/event-stream": {"schema": {"type": "string"}},
        },
    }
    get["responses"] = {**get["responses"], "200": answer}
    return {"get": get}


class FleetRoutes:
    openapi_paths: Mapping[str, Any] = {
        **{p: openapi.PATHS[p] for p in _PATHS},
        "/v1/events": _events_path(),
    }
    openapi_schemas: Mapping[str, Any] = {
        **openapi.SCHEMAS,
        "FleetEventPage": {
            "type": "object",
            "required": ["crawl", "events", "last_id"],
            "properties": {
                "crawl": {"type": "string"},
                "events": {"type": "array", "items": {"type": "object"}},
                "last_id": {"type": "string"},
            },
        },
    }

    def __init__(self, place: CrawlPlace, config: CrawlConfig) -> None:
        self.place = place
        self.config = config  # the crawl's own (its delay and robots agents, for hosts)
        self._closing = asyncio.Event()

    def register(self, app: web.Application) -> None:
        app.router.add_get("/v1/pages", self.page)
        app.router.add_get("/v1/hosts/{host}", self.host)
        app.router.add_get("/v1/events", self.events)

    async def startup(self, app: web.Application) -> None:
        return None

    async def cleanup(self, app: web.Application) -> None:
        self._closing.set()  # open event streams end

    def _other_crawl(self, request: web.Request) -> web.Response | None:
        wanted = request.query.get("crawl")
        if wanted is not None and wanted != self.place.crawl:
            return json_error(404, "no such crawl")
        return None

    async def page(self, request: web.Request) -> web.Response:
        url = request.query.get("url")
        if not url:
            return json_error(400, "url is required", {"url": "required"})
        if (other := self._other_crawl(request)) is not None:
            return other
        body = request.query.get("body", "true").lower() not in ("false", "0", "no")
        found = await asyncio.to_thread(page_copy, self.place, url, body=body)
        if found is None:
            return json_error(404, "no stored copy of that URL")
        return json_response({**found, "crawl": self.place.crawl})

    async def host(self, request: web.Request) -> web.Response:
        if (other := self._other_crawl(request)) is not None:
            return other
        host = request.match_info["host"].strip().lower()
        view = await asyncio.to_thread(host_view, self.place, host, self.config)
        if view is None:
            return json_error(404, "the crawl has not met that host")
        return json_response({**view, "crawl": self.place.crawl})

    async def events(self, request: web.Request) -> web.StreamResponse:
        if (other := self._other_crawl(request)) is not None:
            return other
        try:
            text = request.headers.get("Last-Event-ID") or request.query.get("after")
            cursor = parse_cursor(text)
            limit = int(request.query.get("limit", "100"))
        except CursorError as exc:
            return json_error(400, str(exc))
        except ValueError:
            return json_error(400, "limit is an integer")
        if not 1 <= limit <= 1000:
            return json_error(400, "limit must be 1..1000")
        tail = FleetEventTail(self.place, cursor)
        crawl = self.place.crawl
        if "text/event-stream" not in request.headers.get("Accept", ""):
            found = await asyncio.to_thread(tail.read, limit=limit)
            last = format_cursor(tail.cursor)
            return json_response({"crawl": crawl, "events": found, "last_id": last})

        def poll() -> list[tuple[str, dict[str, Any]]]:
            return [(e["cursor"], e) for e in tail.read(limit=500)]

        return await stream_events(request, poll, crawl, self._closing)
