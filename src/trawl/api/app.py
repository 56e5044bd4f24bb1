"""The ``trawl serve`` application: route sets, one OpenAPI document, JSON errors.

``create_app`` mounts a list of :class:`~trawl.api._routes.RouteSet` (by default the
search API and page), merges their OpenAPI fragments into one OpenAPI 3.1 document at
``GET /api/v1/openapi.json``, answers ``GET /healthz`` (no token: for load balancers;
each route set may add what it knows, e.g. whether this server manages the crawls),
turns every error under ``/api``, ``/v1`` and ``/metrics``
into JSON, aiohttp's own too (404, 405, 413; an unexpected exception is logged and
answered with a 500 carrying no traceback), answers only the Host names it serves and,
where the operator wants it, reads with a token only (:mod:`trawl.api.guard`), and
sets strict security headers on every response: the pages load nothing but their own
assets, which the app serves from the package (``/static/``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from trawl.api._json import API_ROOTS, is_api_path, json_error, json_response
from trawl.api._routes import RouteSet
from trawl.api.guard import (
    HOST_ANSWER,
    READ_ANSWER,
    READ_SECURITY,
    READ_SECURITY_SCHEMES,
    Guard,
    guard_middleware,
    is_public,
)
from trawl.fetch.address import IPNetwork

if TYPE_CHECKING:
    from trawl.config import CrawlConfig
    from trawl.storage.place import CrawlPlace

__all__ = [
    "API_ROOTS",
    "DATA_DIR",
    "MAX_BODY_BYTES",
    "OPENAPI",
    "OPENAPI_PATH",
    "SECURITY_HEADERS",
    "SERVER_LIMITS",
    "build_openapi",
    "create_app",
    "default_route_sets",
    "is_api_path",
    "json_error",
    "json_response",
]

log = logging.getLogger("trawl.api")

OPENAPI_PATH = "/api/v1/openapi.json"
HEALTH_PATH = "/healthz"
DATA_DIR = web.AppKey("trawl.data_dir", Path)
OPENAPI = web.AppKey("trawl.openapi", dict)
ROUTE_SETS = web.AppKey("trawl.route_sets", list)

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {"type": "string", "description": "what went wrong, for people"},
        "fields": {
            "type": "object",
            "description": "one message per invalid parameter",
            "additionalProperties": {"type": "string"},
        },
    },
}

# Passed to the server (AppRunner / TestServer): a request line long enough for a
# 10,000-character query (percent-encoded), so it is refused by the app with a clear
# JSON message instead of by the HTTP parser.
SERVER_LIMITS: dict[str, Any] = {"max_line_size": 128 * 1024, "max_field_size": 16 * 1024}
MAX_BODY_BYTES = 1024**2  # a crawl request with 10,000 seeds fits

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def default_route_sets(
    data_dir: Path, *, allow_networks: Sequence[IPNetwork] = ()
) -> list[RouteSet]:
    """The route sets ``trawl serve`` mounts (each group adds its own line here).

    ``allow_networks`` is the ceiling on the networks an API crawl may reach.
    """
    from trawl.api.search import SearchRoutes
    from trawl.service.dashboard import DashboardRoutes
    from trawl.service.routes import ServiceRoutes

    service = ServiceRoutes(data_dir, allow_networks=allow_networks)
    search = SearchRoutes(data_dir, indexes=service.catalog.index_specs)
    return [search, service, DashboardRoutes(data_dir)]


def fleet_route_sets(data_dir: Path, place: CrawlPlace, config: CrawlConfig) -> list[RouteSet]:
    """The route sets ``trawl serve --redis`` mounts: search over the index in
    ``data_dir/index`` (its snippets read from the fleet's text log), and the crawl's
    pages and hosts; crawls are run by ``trawl worker``, so no control routes."""
    from trawl.api.search import SearchRoutes
    from trawl.index.shard import IndexSpec
    from trawl.service.fleet import FleetRoutes

    # The index (whole or split into shards) under the crawl's own id; its snippets
    # are read from the fleet's blobs.
    spec = IndexSpec(place.crawl, data_dir / "index", place.blob_store())
    search = SearchRoutes(data_dir, indexes=lambda: [spec])
    return [search, FleetRoutes(place, config)]


def create_app(
    data_dir: Path,
    *,
    route_sets: Sequence[RouteSet] | None = None,
    title: str = "trawl",
    version: str | None = None,
    guard: Guard | None = None,
) -> web.Application:
    """The aiohttp application over the crawl in ``data_dir``.

    ``guard`` says which Host names it answers and whether reads need a token (by
    default: the loopback names, open reads; see :mod:`trawl.api.guard`).
    """
    sets = list(route_sets) if route_sets is not None else default_route_sets(data_dir)
    guard = guard or Guard()
    public = public_paths(sets)

    def more_tokens() -> list[str]:  # the control token also grants reads
        return [t for s in sets for t in getattr(s, "read_tokens", ())]

    middlewares = [
        guard_middleware(guard, public=public, tokens=more_tokens),
        _error_middleware,
        *(m for s in sets for m in getattr(s, "middlewares", ())),
    ]
    app = web.Application(middlewares=middlewares, client_max_size=MAX_BODY_BYTES)
    app[DATA_DIR] = data_dir
    app[ROUTE_SETS] = sets
    app[OPENAPI] = build_openapi(
        sets, title=title, version=version or _version(), reads_need_token=guard.reads_need_token
    )
    app.router.add_get(OPENAPI_PATH, _openapi)
    app.router.add_get(HEALTH_PATH, _healthz)
    for route_set in sets:
        route_set.register(app)
    static = resources.files("trawl.web") / "static"
    if static.is_dir():
        app.router.add_static("/static/", Path(str(static)), name="static")
    for route_set in sets:
        app.on_startup.append(route_set.startup)
        app.on_cleanup.append(route_set.cleanup)
    app.on_response_prepare.append(_security_headers)
    return app


def public_paths(sets: Sequence[RouteSet]) -> tuple[str, ...]:
    """Paths (a trailing ``/``: all below) that need no read token: the package's files."""
    return (
        "/static/",
        OPENAPI_PATH,
        HEALTH_PATH,
        *(p for s in sets for p in getattr(s, "public_paths", ())),
    )


def build_openapi(
    sets: Sequence[RouteSet], *, title: str, version: str, reads_need_token: bool = False
) -> dict[str, Any]:
    """One OpenAPI 3.1 document from the fragments of ``sets``.

    A route set may also carry ``openapi_security_schemes`` (a mapping), merged into
    ``components.securitySchemes``; the same path or schema twice is a programming error.
    The answers the app gives on every route (421 to a Host it does not serve, 413 to a
    body that is too large, and with ``reads_need_token`` 401 to a read without a token)
    are added to each operation here, so no fragment has to repeat them.
    """
    paths: dict[str, Any] = {
        OPENAPI_PATH: {
            "get": {
                "operationId": "openapi",
                "summary": "This OpenAPI document",
                "tags": ["meta"],
                "responses": {"200": {"description": "the OpenAPI 3.1 document"}},
            }
        },
        HEALTH_PATH: {
            "get": {
                "operationId": "health",
                "summary": "Whether this server answers (for load balancers; no token)",
                "description": "`status` is `ok` whenever the server answers; `role` says "
                "whether it manages the crawls (`manager`) or serves reads while another "
                "does (`standby`); `search` whether an index is open.",
                "tags": ["meta"],
                "responses": {
                    "200": {
                        "description": "the server answers",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    }
                },
            }
        },
    }
    schemas: dict[str, Any] = {"Error": ERROR_SCHEMA}
    security: dict[str, Any] = {}
    for route_set in sets:
        _merge(paths, route_set.openapi_paths, "path")
        _merge(schemas, route_set.openapi_schemas, "schema")
        _merge(security, getattr(route_set, "openapi_security_schemes", {}), "security scheme")
    public = public_paths(sets)
    paths = {
        path: _app_answers(item, reads_need_token and not is_public(path, public))
        for path, item in paths.items()
    }
    if reads_need_token:
        _merge(security, READ_SECURITY_SCHEMES, "security scheme")
    components: dict[str, Any] = {"schemas": schemas}
    if security:
        components["securitySchemes"] = security
    return {
        "openapi": "3.1.0",
        "info": {
            "title": f"{title} API",
            "version": version,
            "description": "Search what trawl stored, and (with a token) control its crawls."
            + (" Reads need a token on this server too." if reads_need_token else ""),
        },
        "servers": [{"url": "/", "description": "this server"}],
        "paths": paths,
        "components": components,
    }


_ERROR_ANSWER = {
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
}


def _app_answers(item: Mapping[str, Any], needs_token: bool) -> dict[str, Any]:
    """A copy of a path item whose operations also list the app's own answers."""
    out: dict[str, Any] = {}
    for method, operation in item.items():
        if not isinstance(operation, Mapping) or "responses" not in operation:
            out[method] = operation
            continue
        answers = dict(operation["responses"])
        changed = {**operation, "responses": answers}
        answers.setdefault("421", {"description": HOST_ANSWER, **_ERROR_ANSWER})
        answers["400"] = _with_plain_400(answers.get("400"))
        if "requestBody" in operation:
            answers.setdefault("413", {"description": _REASONS[413], **_ERROR_ANSWER})
        if needs_token:
            answers.setdefault("401", {"description": READ_ANSWER, **_ERROR_ANSWER})
            # A write keeps its own (stricter) security: the control token only.
            changed.setdefault("security", READ_SECURITY)
        out[method] = changed
    return out


# aiohttp answers a request it cannot parse (a bad header, chunked framing that is
# not) in plain text before any route or middleware runs; the document says so.
_MALFORMED = "the request is not valid HTTP; the HTTP layer answers in plain text"
_PLAIN = {"text/plain": {"schema": {"type": "string"}}}


def _with_plain_400(answer: Mapping[str, Any] | None) -> dict[str, Any]:
    if answer is None:
        return {"description": _MALFORMED, "content": dict(_PLAIN)}
    return {
        **answer,
        "description": f"{answer.get('description', '')}; or {_MALFORMED}",
        "content": {**answer.get("content", {}), **_PLAIN},
    }


def _merge(into: dict[str, Any], fragment: Mapping[str, Any], what: str) -> None:
    for key, value in fragment.items():
        if key in into and into[key] != value:
            raise ValueError(f"two route sets define the OpenAPI {what} {key!r}")
        into[key] = value


def _version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("trawl")
    except PackageNotFoundError:
        return "0"


async def _openapi(request: web.Request) -> web.Response:
    return json_response(request.app[OPENAPI])


async def _healthz(request: web.Request) -> web.Response:
    body: dict[str, Any] = {"status": "ok", "pid": os.getpid()}
    for route_set in request.app[ROUTE_SETS]:
        health = getattr(route_set, "health", None)
        if health is not None:
            body.update(health())
    return json_response(body)


_REASONS = {
    404: "no such endpoint",
    405: "method not allowed on this endpoint",
    413: f"the request body is too large (at most {MAX_BODY_BYTES // 1024**2} MiB)",
}


@web.middleware
async def _error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if not is_api_path(request.path) or exc.status < 400:
            raise
        if exc.content_type == "application/json":
            raise
        message = _REASONS.get(exc.status) or exc.reason
        response = json_error(exc.status, message)
        for name in ("Allow", "Retry-After", "WWW-Authenticate"):
            if name in exc.headers:
                response.headers[name] = exc.headers[name]
        return response
    except (ConnectionResetError, TimeoutError):
        raise
    except Exception:
        log.exception("unexpected error on %s %s", request.method, request.path)
        if is_api_path(request.path):
            return json_error(500, "internal error (logged on the server)")
        return web.Response(
            status=500, text="Internal error (logged on the server).", content_type="text/plain"
        )


async def _security_headers(request: web.Request, response: web.StreamResponse) -> None:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
