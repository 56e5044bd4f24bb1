"""The seam between `trawl serve`'s app and the route groups it mounts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from aiohttp import web


class RouteSet(Protocol):
    """A group of routes with its part of the OpenAPI document.

    The app factory calls ``register`` once, merges ``openapi_paths`` into the
    document's ``paths`` and ``openapi_schemas`` into ``components.schemas``.
    ``startup``/``cleanup`` run with the app's own lifecycle.

    Optional attributes, read with ``getattr``: ``openapi_security_schemes`` (merged
    into ``components.securitySchemes``), ``public_paths`` (paths, a trailing ``/`` for
    all below, that need no read token: package files), ``read_tokens`` (tokens that
    also grant reads, asked on each request: the service's control token) and
    ``middlewares`` (run after the app's own, before any route: the service's gate on
    control calls).
    """

    # Read-only properties, so a route set may hold them as plain dicts.
    @property
    def openapi_paths(self) -> Mapping[str, Any]: ...

    @property
    def openapi_schemas(self) -> Mapping[str, Any]: ...

    def register(self, app: web.Application) -> None: ...

    async def startup(self, app: web.Application) -> None: ...

    async def cleanup(self, app: web.Application) -> None: ...
