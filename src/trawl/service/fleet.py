"""The read-only routes of ``trawl serve --redis``: one fleet crawl's pages and hosts.

A fleet's crawl lives in Redis and its logs in S3 (or a shared directory); crawls are
started with ``trawl crawl --redis`` and run by ``trawl worker`` processes, so this
route set has no crawl control: it answers ``GET /v1/pages`` and ``GET /v1/hosts/{host}``
from the crawl's committed state, exactly as the one-machine service does for a data
directory (``trawl.service.reader`` does the reading for both).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from trawl.api._json import json_error, json_response
from trawl.config import CrawlConfig
from trawl.service import openapi
from trawl.service.reader import host_view, page_copy
from trawl.storage.place import CrawlPlace

_PATHS = ("/v1/pages", "/v1/hosts/{host}")


class FleetRoutes:
    openapi_paths: Mapping[str, Any] = {p: openapi.PATHS[p] for p in _PATHS}
    openapi_schemas: Mapping[str, Any] = openapi.SCHEMAS

    def __init__(self, place: CrawlPlace, config: CrawlConfig) -> None:
        self.place = place
        self.config = config  # the crawl's own (its delay and robots agents, for hosts)

    def register(self, app: web.Application) -> None:
        app.router.add_get("/v1/pages", self.page)
        app.router.add_get("/v1/hosts/{host}", self.host)

    async def startup(self, app: web.Application) -> None:
        return None

    async def cleanup(self, app: web.Application) -> None:
        return None

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
