"""The crawl dashboard: ``/crawls`` and ``/crawls/{id}``, a page shell plus local JS.

The script polls ``GET /v1/crawls[/{id}]`` every second, follows a crawl's page events
through one ``GET /v1/events`` stream (SSE), and draws the pages/s chart as inline SVG.
Control buttons send the operator's token, typed once and kept in ``sessionStorage``, as
a bearer header: no cookie, so another site cannot make the browser send it (no CSRF),
and it is gone when the tab closes.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from aiohttp import web

_ASSETS = ("dashboard.js", "dashboard.css")
_TYPES = {"js": "text/javascript", "css": "text/css"}

_SHELL = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/crawls/assets/dashboard.css"></head>
<body data-crawl="{crawl}"><header><h1><a href="/crawls">trawl crawls</a></h1>
<label>token <input id="token" type="password" autocomplete="off" placeholder="bearer token">
</label></header><main id="app"><p class="muted">loading…</p></main>
<script src="/crawls/assets/dashboard.js"></script></body></html>"""

_HTML = {"text/html": {"schema": {"type": "string"}}}


class DashboardRoutes:
    openapi_paths: Mapping[str, Any] = {
        "/crawls": {
            "get": {
                "operationId": "crawlsPage",
                "summary": "Dashboard: the crawls",
                "tags": ["pages"],
                "responses": {"200": {"description": "HTML", "content": _HTML}},
            }
        },
        "/crawls/{id}": {
            "get": {
                "operationId": "crawlPage",
                "summary": "Dashboard: one crawl, live",
                "tags": ["pages"],
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {"200": {"description": "HTML", "content": _HTML}},
            }
        },
    }
    openapi_schemas: Mapping[str, Any] = {}
    public_paths = ("/crawls/assets/",)  # package files: no read token needed

    def __init__(self, data_dir: Path) -> None:
        self._dir = resources.files("trawl.web") / "dashboard"

    def register(self, app: web.Application) -> None:
        app.router.add_get("/crawls", self.page)
        app.router.add_get("/crawls/assets/{name}", self.asset)
        app.router.add_get("/crawls/{id}", self.page)

    async def startup(self, app: web.Application) -> None:
        return None

    async def cleanup(self, app: web.Application) -> None:
        return None

    async def page(self, request: web.Request) -> web.Response:
        crawl = request.match_info.get("id", "")
        title = f"crawl {crawl}" if crawl else "crawls"
        text = _SHELL.format(title=html.escape(title), crawl=html.escape(crawl, quote=True))
        return web.Response(text=text, content_type="text/html")

    async def asset(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in _ASSETS:
            raise web.HTTPNotFound()
        body = (self._dir / name).read_bytes()
        return web.Response(body=body, content_type=_TYPES[name.rsplit(".", 1)[1]])
