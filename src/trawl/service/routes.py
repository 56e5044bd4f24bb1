"""The service's routes on ``trawl serve``: crawl control, progress, pages, hosts,
events (SSE) and ``/metrics``. Anything that changes state needs the bearer token
(compared in constant time), else 401; reads are open on a loopback bind, and need the
read token or this token elsewhere (checked by the app: ``trawl.api.guard``).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from trawl.api import guard
from trawl.api._json import json_error, json_response
from trawl.fetch.address import IPNetwork
from trawl.logs import setup_logging
from trawl.service import openapi
from trawl.service.events import EventTail
from trawl.service.manager import CrawlConflictError, CrawlManager, TooManyCrawlsError
from trawl.service.metrics import CrawlCollector
from trawl.service.reader import host_view, page_copy
from trawl.service.runner import SPEC_FILE
from trawl.service.spec import SpecError, check_spec, to_config
from trawl.service.views import crawl_view
from trawl.telemetry import read_json

log = logging.getLogger("trawl.service")
TOKEN_FILE = "service-token"


def load_token(data_dir: Path) -> tuple[str, bool]:
    """The token (TRAWL_TOKEN, else DATA/service-token, else a new one) and if it is new."""
    return guard.load_token(data_dir / TOKEN_FILE, os.environ.get("TRAWL_TOKEN"))


class ServiceRoutes:
    openapi_paths = openapi.PATHS
    openapi_schemas = openapi.SCHEMAS
    openapi_security_schemes = openapi.SECURITY_SCHEMES

    def __init__(self, data_dir: Path, *, allow_networks: Sequence[IPNetwork] = ()) -> None:
        self.data_dir = data_dir
        # The operator's ceiling on what an API crawl may open (trawl serve --allow-network).
        self.allow_networks = tuple(allow_networks)
        self.manager = CrawlManager(
            data_dir, max_running=int(os.environ.get("TRAWL_MAX_CRAWLS", "8"))
        )
        self._token = ""
        self._closing = asyncio.Event()
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(CrawlCollector(self._crawl_dirs))

    @property
    def read_tokens(self) -> tuple[str, ...]:
        """The control token grants reads too (where reads need a token)."""
        return (self._token,) if self._token else ()

    def _crawl_dirs(self) -> list[tuple[str, Path, str]]:
        m = self.manager
        return [(i, m.root / i, m.status(i)) for i in m.ids()]

    def register(self, app: web.Application) -> None:
        r = app.router
        r.add_get("/v1/crawls", self.list_crawls)
        r.add_post("/v1/crawls", self.create)
        r.add_get("/v1/crawls/{id}", self.get_crawl)
        for action in ("pause", "resume", "stop"):
            r.add_post(f"/v1/crawls/{{id}}/{action}", self.control)
        r.add_get("/v1/pages", self.page)
        r.add_get("/v1/hosts/{host}", self.host)
        r.add_get("/v1/events", self.events)
        r.add_get("/metrics", self.metrics)
        app.on_shutdown.append(self._on_shutdown)

    async def startup(self, app: web.Application) -> None:
        if not logging.getLogger("trawl").handlers:
            setup_logging()
        self._token, new = load_token(self.data_dir)
        if new:
            print(
                f"trawl serve: control token (shown once; kept in {self.data_dir / TOKEN_FILE}): "
                f"{self._token}",
                flush=True,
            )
        await self.manager.start()

    async def _on_shutdown(self, app: web.Application) -> None:
        self._closing.set()

    async def cleanup(self, app: web.Application) -> None:
        await self.manager.close()

    # -- helpers -----------------------------------------------------------------

    def _authorized(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not self._token:
            return False
        return hmac.compare_digest(given.strip().encode(), self._token.encode())

    def _unauthorized(self) -> web.Response:
        response = json_error(401, "a bearer token is required (Authorization: Bearer TOKEN)")
        response.headers["WWW-Authenticate"] = 'Bearer realm="trawl"'
        return response

    def _pick(self, request: web.Request) -> tuple[str, Path] | web.Response:
        wanted = request.query.get("crawl")
        if wanted is not None:
            directory = self.manager.directory(wanted)
            return (wanted, directory) if directory else json_error(404, "no such crawl")
        ids = self.manager.ids()
        if not ids:
            return json_error(404, "no crawls yet")
        if len(ids) > 1:
            return json_error(400, "several crawls: say which", {"crawl": "required"})
        return ids[0], self.manager.root / ids[0]

    # -- crawls ------------------------------------------------------------------

    async def list_crawls(self, request: web.Request) -> web.Response:
        crawls = [crawl_view(self.manager, i, full=False) for i in self.manager.ids()]
        return json_response({"crawls": crawls})

    async def get_crawl(self, request: web.Request) -> web.Response:
        crawl_id = request.match_info["id"]
        if self.manager.directory(crawl_id) is None:
            return json_error(404, "no such crawl")
        return json_response(crawl_view(self.manager, crawl_id, full=True))

    async def create(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            return json_error(400, "the body is not JSON", {"body": "not JSON"})
        try:
            spec = check_spec(body, allow_networks=self.allow_networks)
        except SpecError as exc:
            return json_error(400, f"invalid crawl request: {exc}", exc.fields)
        try:
            crawl_id = await self.manager.create(spec)
        except TooManyCrawlsError as exc:
            return json_error(429, str(exc))
        return json_response({"id": crawl_id, "state": self.manager.status(crawl_id)}, status=201)

    async def control(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        crawl_id = request.match_info["id"]
        if self.manager.directory(crawl_id) is None:
            return json_error(404, "no such crawl")
        action = request.path.rsplit("/", 1)[1]
        try:
            await getattr(self.manager, action)(crawl_id)
        except CrawlConflictError as exc:
            return json_error(409, str(exc))
        except TooManyCrawlsError as exc:
            return json_error(429, str(exc))
        log.info("crawl %s", action, extra={"crawl": crawl_id})
        return json_response({"id": crawl_id, "state": self.manager.status(crawl_id)}, status=202)

    # -- pages and hosts ---------------------------------------------------------

    async def page(self, request: web.Request) -> web.Response:
        url = request.query.get("url")
        if not url:
            return json_error(400, "url is required", {"url": "required"})
        body = request.query.get("body", "true").lower() not in ("false", "0", "no")
        wanted = request.query.get("crawl")
        ids = [wanted] if wanted is not None else self.manager.ids()
        best: dict[str, Any] | None = None
        for crawl_id in ids:
            directory = self.manager.directory(crawl_id)
            if directory is None:
                return json_error(404, "no such crawl")
            found = await asyncio.to_thread(page_copy, directory, url, body=body)
            if found is not None and (best is None or found["fetch_time"] > best["fetch_time"]):
                best = {**found, "crawl": crawl_id}
        if best is None:
            return json_error(404, "no stored copy of that URL")
        return json_response(best)

    async def host(self, request: web.Request) -> web.Response:
        picked = self._pick(request)
        if isinstance(picked, web.Response):
            return picked
        crawl_id, directory = picked
        config = to_config(read_json(directory / SPEC_FILE) or {}, directory)
        host = request.match_info["host"].strip().lower()
        view = await asyncio.to_thread(host_view, directory, host, config)
        if view is None:
            return json_error(404, "the crawl has not met that host")
        return json_response({**view, "crawl": crawl_id})

    # -- events and metrics ------------------------------------------------------

    async def events(self, request: web.Request) -> web.StreamResponse:
        picked = self._pick(request)
        if isinstance(picked, web.Response):
            return picked
        crawl_id, directory = picked
        try:
            after = int(request.headers.get("Last-Event-ID") or request.query.get("after") or 0)
            limit = int(request.query.get("limit", "100"))
        except ValueError:
            return json_error(400, "after, limit and Last-Event-ID are integers")
        if after < 0 or not 1 <= limit <= 1000:
            return json_error(400, "after must be >= 0 and limit 1..1000")
        tail = EventTail(directory)
        if "text/event-stream" not in request.headers.get("Accept", ""):
            found = await asyncio.to_thread(tail.read, after=after, limit=limit)
            last = int(found[-1]["id"]) if found else after
            return json_response({"crawl": crawl_id, "events": found, "last_id": last})

        def poll() -> list[tuple[str, dict[str, Any]]]:
            nonlocal after
            found = tail.read(after=after, limit=500)
            if found:
                after = int(found[-1]["id"])
            return [(str(e["id"]), e) for e in found]

        return await stream_events(request, poll, crawl_id, self._closing)

    async def metrics(self, request: web.Request) -> web.Response:
        data = await asyncio.to_thread(generate_latest, self.registry)
        return web.Response(body=data, headers={"Content-Type": CONTENT_TYPE_LATEST})


async def stream_events(
    request: web.Request,
    poll: Callable[[], list[tuple[str, dict[str, Any]]]],
    crawl_id: str,
    closing: asyncio.Event,
) -> web.StreamResponse:
    """Server-Sent Events from ``poll`` (run in a thread: ``(id, event)`` pairs, the id
    what a reconnecting client sends back as Last-Event-ID) until the client or the
    server goes."""
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await response.prepare(request)
    await response.write(b"retry: 1000\n\n")
    idle = 0.0
    try:
        while not closing.is_set():
            found = await asyncio.to_thread(poll)
            for ident, event in found:
                data = orjson.dumps({**event, "crawl": crawl_id})
                frame = f"id: {ident}\nevent: {event['type']}\n".encode()
                await response.write(frame + b"data: " + data + b"\n\n")
            if found:
                idle = 0.0
                continue
            idle += 0.25
            if idle >= 15.0:  # a comment keeps proxies and idle timeouts away
                await response.write(b": heartbeat\n\n")
                idle = 0.0
            await asyncio.sleep(0.25)
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    return response
