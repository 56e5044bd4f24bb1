"""The service's part of the OpenAPI document: control, progress, pages, hosts, events."""

from __future__ import annotations

from typing import Any

from trawl.config import RENDER_MODES
from trawl.service import steer_openapi
from trawl.service.openapi_base import BEARER
from trawl.service.openapi_base import answer as _json
from trawl.service.openapi_base import ref as _ref
from trawl.service.spec import (
    LIMITS,
    MAX_HOST_OVERRIDES,
    MAX_PATTERN_LENGTH,
    MAX_PATTERNS,
    MAX_RENDER_HOSTS,
    MAX_SEEDS,
    NUMBERS,
    PRIORITIES,
    PURPOSES,
    QUALITIES,
    RECRAWL,
    SCOPES,
)
from trawl.service.views import PROGRESS_INTS

SECURITY_SCHEMES = {
    BEARER: {
        "type": "http",
        "scheme": "bearer",
        "description": "The service (control) token: printed once on the first start of "
        "`trawl serve` and kept in DATA/service-token, or set with TRAWL_TOKEN. It grants "
        "reads too where they need a token.",
    }
}


def _nullable(kind: str, **more: Any) -> dict[str, Any]:
    return {"type": [kind, "null"], **more}


def _bounded(kind: type, low: float, high: float, **more: Any) -> dict[str, Any]:
    """A number as spec.py checks it: (int or float, lowest, highest)."""
    return {
        "type": "integer" if kind is int else "number",
        "minimum": low,
        "maximum": high,
        **more,
    }


def _enum(values: Any, default: str | None = None, **more: Any) -> dict[str, Any]:
    return {"enum": list(values), **({"default": default} if default else {}), **more}


COUNTS = {"type": "object", "additionalProperties": {"type": "integer"}}
TOP = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["host", "count"],
        "properties": {"host": {"type": "string"}, "count": {"type": "integer"}},
    },
}
_INT = {"type": "integer"}
_PATTERNS = {
    "type": "array",
    "maxItems": MAX_PATTERNS,
    "items": {"type": "string", "maxLength": MAX_PATTERN_LENGTH},
    "description": "Python regular expressions searched in each URL's normal form (seeds, "
    "links, redirect targets, sitemap entries): include admits only URLs matching one, "
    "exclude refuses URLs matching any (exclude wins)",
}
_NUM = {"type": "number"}

# What a create or a control answers: the crawl and its state now.
_CRAWL_STATE = {
    "type": "object",
    "required": ["id", "state"],
    "properties": {"id": {"type": "string"}, "state": {"type": "string"}},
}

SCHEMAS: dict[str, Any] = {
    "CrawlRequest": {
        "type": "object",
        "required": ["seeds"],
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string", "maxLength": 200, "description": "a label for people"},
            "seeds": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_SEEDS,
                "description": "seed URLs; a seed may carry a priority (default 1): the OPIC "
                "cash it starts with, so a higher one is fetched sooner, and so are the pages "
                "it links to",
                "items": steer_openapi.SEED,
            },
            "scope": _enum(SCOPES, "host"),
            "allowed_hosts": {"type": "array", "items": {"type": "string"}},
            "limits": {
                "type": "object",
                "additionalProperties": False,
                "properties": {key: _bounded(*b) for key, b in LIMITS.items()},
            },
            "priority": _enum(
                PRIORITIES,
                "normal",
                description="CPU priority of the crawl's processes (nice 0, 10, 19)",
            ),
            "agent": {"type": "string", "description": "robots.txt product token (User-Agent)"},
            "contact": {"type": "string", "description": "URL put in the User-Agent"},
            "purpose": _enum(
                PURPOSES,
                "search",
                description="training honours the AI opt-outs (GPTBot, CCBot, noai, TDMRep)",
            ),
            "recrawl": {
                "type": ["object", "null"],
                "required": ["interval"],
                "additionalProperties": False,
                "description": "revisit pages after interval seconds (adaptive within min..max)",
                "properties": {key: _bounded(*b) for key, b in RECRAWL.items()},
            },
            "delay": _bounded(*NUMBERS["delay"], description="seconds between requests to a host"),
            "timeout": _bounded(*NUMBERS["timeout"], description="total seconds per fetch"),
            "parse_workers": _bounded(*NUMBERS["parse_workers"]),
            "robots_patience": _bounded(
                *NUMBERS["robots_patience"],
                description="seconds the crawl goes on when only URLs of hosts whose "
                "robots.txt is unreachable are left (they stay queued); default 600",
            ),
            "allow_networks": {
                "type": "array",
                "items": {"type": "string"},
                "description": "CIDR networks the crawl may reach although private or "
                "loopback (e.g. 127.0.0.0/8 for a local test web); each must lie within a "
                "network the server's operator allows (`trawl serve --allow-network`, none "
                "by default), else 400 naming `allow_networks[i]`",
            },
            "resolve": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "host name -> IP address, used instead of DNS; an address "
                "that is not public must lie within a network the server's operator allows, "
                "else 400 naming `resolve.HOST`",
            },
            "strip_tracking": {
                "type": "boolean",
                "default": True,
                "description": "drop known tracking parameters (utm_*, gclid, fbclid, ...: "
                "`trawl url normalize --help` lists them) from URLs before the seen check; "
                "false keeps them",
            },
            "equivalences": {
                "type": "boolean",
                "default": True,
                "description": "learn, per host, which spellings of its URLs serve the same "
                "page (a session or referrer parameter, /amp/, index.html, a trailing slash) "
                "from rel=canonical and duplicates, and rewrite URLs by them at admission",
            },
            "quality": _enum(QUALITIES),
            "sitemaps": {
                "type": "boolean",
                "default": True,
                "description": "read each host's sitemaps (the Sitemap lines of its "
                "robots.txt and its /sitemap.xml, index files and gzip included) for URLs",
            },
            "index": {
                "type": "boolean",
                "default": True,
                "description": "keep the crawl's search index up as pages are stored; false: "
                "no search of this crawl while it runs (a third less CPU a page, for text "
                "alone), its pages left unindexed for `trawl index`",
            },
            "include": _PATTERNS,
            "exclude": _PATTERNS,
            "hosts": {
                "type": "object",
                "maxProperties": MAX_HOST_OVERRIDES,
                "description": "per-host overrides by host name (the host and its "
                "subdomains; name:port for one port; the longest name wins). delay: seconds "
                "between requests, never below the host's robots.txt Crawl-delay; budget: "
                "URLs admitted for the host instead of limits.max_per_host (0: no limit); "
                "priority: the host's rank in the schedule, lower first (default 0); block: "
                "fetch nothing from it, its URLs refused with the reason 'host blocked'",
                "additionalProperties": steer_openapi.HOST_OVERRIDE,
            },
            "render": _enum(
                RENDER_MODES,
                "never",
                description="render pages in headless Chromium before parsing them: auto "
                "renders pages that look like application shells (and hosts learned to need "
                "it), always every HTML page; every request of the browser keeps the crawl's "
                "rules (address guard, robots.txt, the host's pace, size caps)",
            ),
            "render_hosts": {
                "type": "array",
                "maxItems": MAX_RENDER_HOSTS,
                "items": {"type": "string"},
                "description": "other hosts whose scripts and API calls a rendered page may "
                "load (cdn.example, or .example for a domain); none by default",
            },
        },
    },
    "CrawlCreated": _CRAWL_STATE,
    "CrawlState": _CRAWL_STATE,
    "Progress": {
        "type": "object",
        "required": [*PROGRESS_INTS, "pages_per_second", "elapsed"],
        "properties": {
            **{k: _INT for k in PROGRESS_INTS},
            "pages_per_second": _NUM,
            "elapsed": _NUM,
            "updated": _nullable("number"),
            "skipped_by_reason": COUNTS,
            "links_dropped_by_reason": COUNTS,
            "errors_by_kind": COUNTS,
            "failed_by_reason": COUNTS,
            "status_codes": COUNTS,
            "robots": COUNTS,
            "dedup": COUNTS,
            "top_hosts_by_pages": TOP,
            "top_hosts_by_errors": TOP,
            "history": {"type": "array", "items": {"type": "array", "items": _NUM}},
        },
    },
    **steer_openapi.SCHEMAS,
    "Crawl": {
        "type": "object",
        "required": ["id", "name", "state", "created", "seeds", "progress"],
        "properties": {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "state": {"enum": ["running", "paused", "stopping", "finished", "failed"]},
            "created": _nullable("number"),
            "finished": _nullable("number"),
            "stopped": _nullable(
                "string",
                description="why it ended (done, max pages, waiting for robots.txt, ...)",
            ),
            "error": _nullable("string"),
            "seeds": {"type": "array", "items": {"type": "string"}},
            "purpose": {"type": "string"},
            "progress": _ref("Progress"),
            "spec": {"type": "object"},
            "managed": {
                "type": "boolean",
                "description": "started and run by the server; false for `main`, the data "
                "directory's own crawl (trawl crawl), which it serves read-only",
            },
        },
    },
    "CrawlList": {
        "type": "object",
        "required": ["crawls"],
        "properties": {"crawls": {"type": "array", "items": _ref("Crawl")}},
    },
    "Page": {
        "type": "object",
        "required": ["url", "crawl", "status", "fetch_time", "headers", "warc"],
        "properties": {
            "url": {"type": "string"},
            "crawl": {"type": "string"},
            "requested_url": {"type": "string"},
            "final_url": {"type": "string"},
            "status": _INT,
            "fetch_time": {"type": "string"},
            "headers": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
            "content_hash": _nullable("string"),
            "outcome": _nullable("string"),
            "duplicate_of": _nullable("string"),
            "title": _nullable("string"),
            "language": _nullable("string"),
            "provenance": _nullable("object"),
            "warc": {"type": "object"},
            "body": _nullable("string"),
            "body_bytes": _INT,
            "body_truncated": {"type": "boolean"},
        },
    },
    "Host": {
        "type": "object",
        "required": ["host", "crawl", "delay", "pages_fetched", "errors", "robots"],
        "properties": {
            "host": {"type": "string"},
            "crawl": {"type": "string"},
            "delay": _NUM,
            "next_contact": _nullable("string"),
            "queued": _INT,
            "admitted": _INT,
            "budget": _nullable("integer"),
            "priority": _INT,
            "demoted": _nullable("string"),
            "pages_fetched": _INT,
            "urls": COUNTS,
            "errors": {"type": "array", "items": {"type": "object"}},
            "robots": {"type": "array", "items": {"type": "object"}},
            "shared": {
                "type": ["object", "null"],
                "description": "the host as every crawl sharing this server's host leases "
                "sees it: a fetch in flight (busy), the next allowed contact, the largest "
                "gap a crawl asked for lately",
                "properties": {
                    "busy": {"type": "boolean"},
                    "next_contact": _nullable("string"),
                    "gap": _NUM,
                },
            },
            "equivalences": {
                "type": "array",
                "items": _ref("UrlRule"),
                "description": "the host's learned URL equivalences: spellings of its URLs "
                "that serve the same page, applied first, then learning, then refuted",
            },
        },
    },
    "UrlRule": {
        "type": "object",
        "required": ["rule", "state", "pages", "values", "rewrites"],
        "properties": {
            "rule": {
                "type": "string",
                "description": "param:NAME (any value), param:NAME=VALUE, segment:amp, "
                "segment:print, segment:printable, index:FILE (index.html, ...), slash",
            },
            "state": _enum(("active", "candidate", "refuted")),
            "pages": {**_INT, "description": "distinct pages that showed it (at most 16)"},
            "values": {**_INT, "description": "values of the parameter seen (at most 16)"},
            "rewrites": {**_INT, "description": "URLs it respelled or skipped"},
            "prefer": _nullable("string", description='slash: the form URLs get ("/" or "")'),
            "reason": _nullable(
                "string",
                description="why it was applied (its evidence) or refuted (the counterexample)",
            ),
            "since": _nullable("string", description="when it got its state (ISO 8601)"),
        },
    },
    "EventPage": {
        "type": "object",
        "required": ["crawl", "events", "last_id"],
        "properties": {
            "crawl": {"type": "string"},
            "events": {"type": "array", "items": {"type": "object"}},
            "last_id": _INT,
        },
    },
}

_ERR = _json("Error", "an error, for people")
_AUTH = {"401": _json("Error", "no or a wrong bearer token")}
_STANDBY = {
    "503": _json(
        "Error",
        "this server is a standby: another trawl serve over the same data directory "
        "manages the crawls (the message names it; Retry-After: 1)",
    )
}
_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
_CRAWL_Q = {
    "name": "crawl",
    "in": "query",
    "required": False,
    "schema": {"type": "string"},
    "description": "crawl id (may be left out when there is only one crawl)",
}


def _control(action: str, summary: str) -> dict[str, Any]:
    return {
        "post": {
            "operationId": f"{action}Crawl",
            "summary": summary,
            "tags": ["crawls"],
            "security": [{BEARER: []}],
            "parameters": [_ID],
            "responses": {
                "202": _json("CrawlState", "accepted; the crawl's state now"),
                **_AUTH,
                "404": _ERR,
                "409": _json(
                    "Error", "the crawl's state does not allow it, or it is `main` (read-only)"
                ),
                **_STANDBY,
                **(
                    {"429": _json("Error", "too many crawls running")} if action == "resume" else {}
                ),
            },
        }
    }


PATHS: dict[str, Any] = {
    "/v1/crawls": {
        "get": {
            "operationId": "listCrawls",
            "summary": "Every crawl with its state and progress (`main` first: the data "
            "directory's own crawl, if it holds one)",
            "tags": ["crawls"],
            "responses": {"200": _json("CrawlList", "the crawls, newest last")},
        },
        "post": {
            "operationId": "createCrawl",
            "summary": "Start a crawl in the background",
            "tags": ["crawls"],
            "security": [{BEARER: []}],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": _ref("CrawlRequest")}},
            },
            "responses": {
                "201": _json("CrawlCreated", "started"),
                "400": _json("Error", "a bad request: one message per bad field in `fields`"),
                **_AUTH,
                "429": _json("Error", "too many crawls running"),
                **_STANDBY,
            },
        },
    },
    "/v1/crawls/{id}": {
        "get": {
            "operationId": "getCrawl",
            "summary": "One crawl: state and progress",
            "tags": ["crawls"],
            "parameters": [_ID],
            "responses": {"200": _json("Crawl", "the crawl"), "404": _ERR},
        },
        **steer_openapi.CRAWL_OPERATIONS,
    },
    "/v1/crawls/{id}/seeds": steer_openapi.SEEDS_PATH,
    "/v1/crawls/{id}/pause": _control("pause", "Take no new URLs (in-flight work finishes)"),
    "/v1/crawls/{id}/resume": _control("resume", "Go on after a pause (or a failure)"),
    "/v1/crawls/{id}/stop": _control("stop", "Stop gracefully; the crawl ends finished"),
    "/v1/pages": {
        "get": {
            "operationId": "getPage",
            "summary": "The latest stored copy of a page, from its WARC record",
            "tags": ["pages"],
            "parameters": [
                {"name": "url", "in": "query", "required": True, "schema": {"type": "string"}},
                {**_CRAWL_Q, "description": "crawl id (default: the latest copy in any crawl)"},
                {
                    "name": "body",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "boolean", "default": True},
                    "description": "include the body as text (at most 256 Ki characters)",
                },
            ],
            "responses": {"200": _json("Page", "the page"), "400": _ERR, "404": _ERR},
        }
    },
    "/v1/hosts/{host}": {
        "get": {
            "operationId": "getHost",
            "summary": "A host: robots.txt state, delay, next contact, errors, pages",
            "tags": ["hosts"],
            "parameters": [
                {"name": "host", "in": "path", "required": True, "schema": {"type": "string"}},
                _CRAWL_Q,
            ],
            "responses": {"200": _json("Host", "the host"), "400": _ERR, "404": _ERR},
        }
    },
    "/v1/events": {
        "get": {
            "operationId": "getEvents",
            "summary": "Page events: a live Server-Sent Events stream, or a JSON page of them",
            "description": "With `Accept: text/event-stream`: every committed event after "
            "`Last-Event-ID` (or `after`), then new ones as they are committed; `id:` is the "
            "event id, so a reconnecting EventSource misses nothing. Otherwise a JSON page.",
            "tags": ["events"],
            "parameters": [
                _CRAWL_Q,
                {
                    "name": "after",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "integer", "minimum": 0},
                },
                {
                    "name": "limit",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100},
                },
                {
                    "name": "Last-Event-ID",
                    "in": "header",
                    "required": False,
                    "schema": {"type": "string"},
                },
            ],
            "responses": {
                "200": {
                    "description": "events",
                    "content": {
                        "application/json": {"schema": _ref("EventPage")},
                        "text/event-stream": {"schema": {"type": "string"}},
                    },
                },
                "400": _ERR,
                "404": _ERR,
            },
        }
    },
    "/metrics": {
        "get": {
            "operationId": "metrics",
            "summary": "Prometheus metrics of every crawl",
            "tags": ["meta"],
            "responses": {
                "200": {
                    "description": "text format 0.0.4",
                    "content": {"text/plain": {"schema": {"type": "string"}}},
                }
            },
        }
    },
}
