"""The service's routes on ``trawl serve``: crawl control, progress, pages, hosts,
events (SSE) and ``/metrics``. Anything that changes state needs the bearer token
(compared in constant time), else 401; reads are open on a loopback bind, and need the
read token or this token elsewhere (checked by the app: ``trawl.api.guard``).

Every crawl of the data directory is served (``catalog.py``: ``main``, the directory's
own ``trawl crawl``, read-only, and each API crawl). Several ``trawl serve`` processes
may serve one data directory; the one holding its lock manages the crawls, the others
answer control calls with 503 and take over when it dies (``leader.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from trawl.api import guard
from trawl.api._json import json_error, json_response
from trawl.config import parse_politeness_dir
from trawl.fetch.address import IPNetwork
from trawl.logs import setup_logging
from trawl.service import openapi
from trawl.service.catalog import MAIN, Catalog
from trawl.service.events import EventTail
from trawl.service.leader import ManagerLock
from trawl.service.manager import CrawlConflictError, CrawlManager, TooManyCrawlsError
from trawl.service.metrics import CrawlCollector
from trawl.service.reader import host_view, page_copy, shared_host
from trawl.service.runner import POLITENESS_ENV
from trawl.service.spec import SpecError, check_spec
from trawl.service.steer import check_change, check_delete, check_seeds

log = logging.getLogger("trawl.service")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Middleware = Callable[[web.Request, Handler], Awaitable[web.StreamResponse]]
TOKEN_FILE = "service-token"


def load_token(data_dir: Path) -> tuple[str, bool]:
    """The token (TRAWL_TOKEN, else DATA/service-token, else a new one) and if it is new."""
    return guard.load_token(data_dir / TOKEN_FILE, os.environ.get("TRAWL_TOKEN"))


class ServiceRoutes:
    openapi_paths = openapi.PATHS
    openapi_schemas = openapi.SCHEMAS
    openapi_security_schemes = openapi.SECURITY_SCHEMES

    def __init__(
        self,
        data_dir: Path,
        *,
        allow_networks: Sequence[IPNetwork] = (),
        takeover_interval: float = 1.0,
    ) -> None:
        self.data_dir = data_dir
        # The operator's ceiling on what an API crawl may open (trawl serve --allow-network).
        self.allow_networks = tuple(allow_networks)
        self.manager = CrawlManager(
            data_dir,
            max_running=int(os.environ.get("TRAWL_MAX_CRAWLS", "8")),
            # Every crawl of this server shares its host leases (TRAWL_POLITENESS_DIR,
            # trawl serve --politeness-dir; default DATA/hosts; none: each alone).
            politeness_dir=parse_politeness_dir(
                os.environ.get(POLITENESS_ENV, str(data_dir.resolve() / "hosts"))
            ),
        )
        self.catalog = Catalog(data_dir, self.manager)
        self.lock = ManagerLock(data_dir)
        self._takeover_interval = takeover_interval
        self._watcher: asyncio.Task[None] | None = None
        self._token = ""
        self._closing = asyncio.Event()
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(CrawlCollector(self._crawl_dirs))

    @property
    def read_tokens(self) -> tuple[str, ...]:
        """The control token grants reads too (where reads need a token)."""
        return (self._token,) if self._token else ()

    @property
    def middlewares(self) -> tuple[Middleware, ...]:
        return (self._gate,)

    @web.middleware
    async def _gate(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Every control call (a POST, PATCH or DELETE under /v1/crawls): the token
        first (401), then ``main`` is read-only (409), then a standby refuses (503)."""
        if request.method in ("GET", "HEAD", "OPTIONS") or not request.path.startswith(
            "/v1/crawls"
        ):
            return await handler(request)
        if not self._authorized(request):
            return self._unauthorized()
        if request.match_info.get("id") == MAIN and self.catalog.has_main():
            return json_error(
                409,
                f"crawl {MAIN} is this data directory's own crawl (trawl crawl): this "
                "server did not start it and cannot change it; stop the trawl crawl "
                "process itself (Ctrl-C or SIGTERM; it resumes when run again)",
            )
        if not self.lock.held:
            return self._standby()
        return await handler(request)

    @property
    def role(self) -> str:
        """``manager`` (runs and controls the crawls) or ``standby`` (serves reads)."""
        return "manager" if self.lock.held else "standby"

    def health(self) -> dict[str, Any]:
        return {"role": self.role, "crawls": len(self.catalog.ids())}

    def _crawl_dirs(self) -> list[tuple[str, Path, str]]:
        c = self.catalog
        return [(i, d, c.status(i)) for i in c.ids() if (d := c.directory(i)) is not None]

    def register(self, app: web.Application) -> None:
        r = app.router
        r.add_get("/v1/crawls", self.list_crawls)
        r.add_post("/v1/crawls", self.create)
        r.add_get("/v1/crawls/{id}", self.get_crawl)
        r.add_patch("/v1/crawls/{id}", self.change)
        r.add_delete("/v1/crawls/{id}", self.delete)
        r.add_post("/v1/crawls/{id}/seeds", self.add_seeds)
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
        if self.lock.try_take():
            await self.manager.start()
        else:
            log.info(
                "standby: another trawl serve manages the crawls",
                extra={"manager": self.lock.holder()},
            )
            self._watcher = asyncio.create_task(self._take_over())

    async def _take_over(self) -> None:
        """A standby: take the lock when the manager lets go of it (or dies)."""
        while not self._closing.is_set():
            await asyncio.sleep(self._takeover_interval)
            if not self._closing.is_set() and self.lock.try_take():
                log.warning("took over the crawls of %s", self.data_dir)
                try:
                    await self.manager.start()
                except Exception:  # the crawls it could not adopt show as failed
                    log.exception("taking over the crawls of %s failed", self.data_dir)
                return

    async def _on_shutdown(self, app: web.Application) -> None:
        self._closing.set()

    async def cleanup(self, app: web.Application) -> None:
        self._closing.set()
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        if self.lock.held:
            try:
                await self.manager.close()  # the crawls stop before another may manage
            finally:
                self.lock.release()

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

    def _standby(self) -> web.Response:
        """A control call on a standby: 503, naming the manager."""
        holder = self.lock.holder()
        who = (
            f"trawl serve pid {holder.get('pid')} on {holder.get('host')}"
            if holder
            else "another trawl serve"
        )
        response = json_error(
            503,
            f"this server is a standby: the crawls of this data directory are managed by "
            f"{who}; send control calls there (a load balancer retries them on it), or "
            "retry: a standby takes over within seconds when the manager stops",
        )
        response.headers["Retry-After"] = "1"
        return response

    def _pick(self, request: web.Request) -> tuple[str, Path] | web.Response:
        wanted = request.query.get("crawl")
        if wanted is not None:
            directory = self.catalog.directory(wanted)
            return (wanted, directory) if directory else json_error(404, "no such crawl")
        ids = self.catalog.ids()
        if not ids:
            return json_error(404, "no crawls yet")
        if len(ids) > 1:
            return json_error(400, "several crawls: say which", {"crawl": "required"})
        directory = self.catalog.directory(ids[0])
        return (ids[0], directory) if directory else json_error(404, "no crawls yet")

    # -- crawls ------------------------------------------------------------------

    async def list_crawls(self, request: web.Request) -> web.Response:
        ids = self.catalog.ids()
        crawls = await asyncio.to_thread(lambda: [self.catalog.view(i, full=False) for i in ids])
        return json_response({"crawls": crawls})

    async def get_crawl(self, request: web.Request) -> web.Response:
        crawl_id = request.match_info["id"]
        if self.catalog.directory(crawl_id) is None:
            return json_error(404, "no such crawl")
        view = await asyncio.to_thread(self.catalog.view, crawl_id, full=True)
        return json_response(view)

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

    # -- steering ----------------------------------------------------------------

    async def _steer_request(self, request: web.Request) -> tuple[str, Any] | web.Response:
        """The crawl id and the JSON body of a steering request, or the error answer."""
        if not self._authorized(request):
            return self._unauthorized()
        crawl_id = request.match_info["id"]
        if self.manager.directory(crawl_id) is None:
            return json_error(404, "no such crawl")
        raw = await request.read()
        if not raw and request.method == "DELETE":
            return crawl_id, {"confirm": request.query.get("confirm")}
        try:
            return crawl_id, orjson.loads(raw)
        except orjson.JSONDecodeError:
            return json_error(400, "the body is not JSON", {"body": "not JSON"})

    async def _steer(self, crawl_id: str, change: dict[str, Any]) -> web.Response:
        try:
            spec = await self.manager.steer(crawl_id, change)
        except CrawlConflictError as exc:
            return json_error(409, str(exc))
        answer = {
            "id": crawl_id,
            "state": self.manager.status(crawl_id),
            "revision": spec["revision"],
            "seeds": len(spec["seeds"]),
            "limits": spec.get("limits", {}),
            "delay": spec.get("delay"),
        }
        return json_response(answer, status=202)

    async def add_seeds(self, request: web.Request) -> web.Response:
        return await self._change(request, "seeds", check_seeds)

    async def change(self, request: web.Request) -> web.Response:
        return await self._change(request, "set", check_change)

    async def _change(
        self, request: web.Request, kind: str, check: Callable[[Any], Any]
    ) -> web.Response:
        """A revision of the spec: ``{kind: check(body)}``."""
        got = await self._steer_request(request)
        if isinstance(got, web.Response):
            return got
        crawl_id, body = got
        try:
            change = check(body)
        except SpecError as exc:
            return json_error(400, f"invalid request: {exc}", exc.fields)
        return await self._steer(crawl_id, {kind: change})

    async def delete(self, request: web.Request) -> web.Response:
        got = await self._steer_request(request)
        if isinstance(got, web.Response):
            return got
        crawl_id, body = got
        try:
            check_delete(body, crawl_id)
        except SpecError as exc:
            return json_error(400, str(exc), exc.fields)
        try:
            await self.manager.delete(crawl_id)
        except CrawlConflictError as exc:
            return json_error(409, str(exc))
        return json_response({"id": crawl_id, "deleted": True})

    # -- pages and hosts ---------------------------------------------------------

    async def page(self, request: web.Request) -> web.Response:
        url = request.query.get("url")
        if not url:
            return json_error(400, "url is required", {"url": "required"})
        body = request.query.get("body", "true").lower() not in ("false", "0", "no")
        wanted = request.query.get("crawl")
        ids = [wanted] if wanted is not None else self.catalog.ids()
        best: dict[str, Any] | None = None
        for crawl_id in ids:
            directory = self.catalog.directory(crawl_id)
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
        config = await asyncio.to_thread(self.catalog.config, crawl_id, directory)
        host = request.match_info["host"].strip().lower()
        view = await asyncio.to_thread(host_view, directory, host, config)
        if view is None:
            return json_error(404, "the crawl has not met that host")
        # The leases the crawl shares: the server's for its crawls, main's own for main.
        where = config.politeness_dir if crawl_id == MAIN else self.manager.politeness_dir
        shared = None if where is None else await asyncio.to_thread(shared_host, where, host)
        return json_response({**view, "crawl": crawl_id, "shared": shared})

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
