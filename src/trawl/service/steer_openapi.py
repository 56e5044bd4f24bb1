"""The OpenAPI of steering a crawl: add seeds, change limits, delay and per-host
overrides, delete it; and the seed and host-override schemas a crawl request shares."""

from __future__ import annotations

from typing import Any

from trawl.frontier.admission import MAX_SEED_PRIORITY
from trawl.service.openapi_base import BEARER
from trawl.service.openapi_base import answer as _json
from trawl.service.openapi_base import ref as _ref
from trawl.service.spec import HOST_SETTINGS, LIMITS, MAX_HOST_OVERRIDES, MAX_SEEDS, NUMBERS
from trawl.service.steer import LIFTABLE, STEER_LIMITS


def _limit(name: str) -> dict[str, Any]:
    kind, low, high = LIMITS[name]
    number = {"type": "integer" if kind is int else "number", "minimum": low, "maximum": high}
    if name in LIFTABLE:
        return {"oneOf": [number, {"type": "null"}], "description": "null: no limit"}
    return number


def _number(kind: type, low: float, high: float) -> dict[str, Any]:
    return {"type": "integer" if kind is int else "number", "minimum": low, "maximum": high}


# A seed: a URL, or a URL with its priority.
SEED: dict[str, Any] = {
    "oneOf": [
        {"type": "string"},
        {
            "type": "object",
            "required": ["url"],
            "additionalProperties": False,
            "properties": {
                "url": {"type": "string"},
                "priority": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_SEED_PRIORITY},
            },
        },
    ]
}
# One host's override.
HOST_OVERRIDE: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        **{key: _number(*bounds) for key, bounds in HOST_SETTINGS.items()},
        "block": {"type": "boolean"},
    },
}

SCHEMAS: dict[str, Any] = {
    "CrawlSeeds": {
        "type": "object",
        "required": ["seeds"],
        "additionalProperties": False,
        "properties": {
            "seeds": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_SEEDS,
                "items": SEED,
                "description": "http(s) URLs (each may carry a priority, as in a crawl "
                "request); their hosts join the crawl's scope",
            }
        },
    },
    "CrawlChange": {
        "type": "object",
        "additionalProperties": False,
        "minProperties": 1,
        "properties": {
            "limits": {
                "type": "object",
                "additionalProperties": False,
                "properties": {name: _limit(name) for name in STEER_LIMITS},
            },
            "delay": {
                "type": "number",
                "minimum": NUMBERS["delay"][1],
                "maximum": NUMBERS["delay"][2],
                "description": "seconds between requests to a host",
            },
            "hosts": {
                "type": "object",
                "maxProperties": MAX_HOST_OVERRIDES,
                "description": "per-host overrides to set (a host's settings replace its "
                "override whole) or, with null, to remove; the others stay",
                "additionalProperties": {"oneOf": [HOST_OVERRIDE, {"type": "null"}]},
            },
        },
    },
    "CrawlDelete": {
        "type": "object",
        "required": ["confirm"],
        "properties": {"confirm": {"type": "string", "description": "the crawl's id, again"}},
    },
    "CrawlSteered": {
        "type": "object",
        "required": ["id", "state", "revision", "seeds", "limits"],
        "properties": {
            "id": {"type": "string"},
            "state": {"type": "string"},
            "revision": {"type": "integer", "description": "the spec's revision now"},
            "seeds": {"type": "integer", "description": "how many seeds the spec holds"},
            "limits": {"type": "object"},
            "delay": {"type": ["number", "null"]},
        },
    },
    "CrawlDeleted": {
        "type": "object",
        "required": ["id", "deleted"],
        "properties": {"id": {"type": "string"}, "deleted": {"type": "boolean"}},
    },
}

_ERR = _json("Error", "an error, for people")
_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
_ANSWERS = {
    "400": _json("Error", "a bad request: one message per bad field in `fields`"),
    "401": _json("Error", "no or a wrong bearer token"),
    "404": _ERR,
    "409": _json(
        "Error",
        "the crawl has ended (or, to delete it, has not), or it is `main` (read-only)",
    ),
    "503": _json(
        "Error",
        "this server is a standby: another trawl serve over the same data directory "
        "manages the crawls (the message names it; Retry-After: 1)",
    ),
}
_STEERED = _json(
    "CrawlSteered", "recorded in the crawl's spec; its process applies it within a second"
)


def _body(name: str, *, required: bool = True) -> dict[str, Any]:
    return {"required": required, "content": {"application/json": {"schema": _ref(name)}}}


SEEDS_PATH: dict[str, Any] = {
    "post": {
        "operationId": "addSeeds",
        "summary": "Add seeds to a running, paused or failed crawl",
        "description": "Recorded as the next revision of the crawl's spec and published as "
        "a `crawl.seeds` event when the crawl applies it.",
        "tags": ["crawls"],
        "security": [{BEARER: []}],
        "parameters": [_ID],
        "requestBody": _body("CrawlSeeds"),
        "responses": {"202": _STEERED, **_ANSWERS},
    }
}

CRAWL_OPERATIONS: dict[str, Any] = {
    "patch": {
        "operationId": "changeCrawl",
        "summary": "Change a running, paused or failed crawl's limits and delay",
        "description": "Recorded as the next revision of the crawl's spec and published as "
        "a `crawl.changed` event when the crawl applies it (within a second while it runs).",
        "tags": ["crawls"],
        "security": [{BEARER: []}],
        "parameters": [_ID],
        "requestBody": _body("CrawlChange"),
        "responses": {"202": _STEERED, **_ANSWERS},
    },
    "delete": {
        "operationId": "deleteCrawl",
        "summary": "Delete a finished or failed crawl and all its data",
        "description": "The body (or the `confirm` query parameter) must name the crawl "
        'again: `{"confirm": "<id>"}`.',
        "tags": ["crawls"],
        "security": [{BEARER: []}],
        "parameters": [
            _ID,
            {
                "name": "confirm",
                "in": "query",
                "required": False,
                "schema": {"type": "string"},
                "description": "the crawl's id, when the request has no body",
            },
        ],
        "requestBody": _body("CrawlDelete", required=False),
        "responses": {"200": _json("CrawlDeleted", "deleted"), **_ANSWERS},
    },
}
