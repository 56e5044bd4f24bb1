"""The OpenAPI fragment of the search route set (merged by ``trawl.api.app``)."""

from __future__ import annotations

from typing import Any

from trawl.api.query import DEFAULT_SIZE, MAX_PAGE, MAX_QUERY_CHARS, MAX_RESULTS, MAX_SIZE

_ERROR = {"$ref": "#/components/schemas/Error"}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ERROR}}}


SEARCH_PATHS: dict[str, Any] = {
    "/api/v1/search": {
        "get": {
            "operationId": "search",
            "summary": "Search the stored pages of every crawl",
            "description": (
                'Words and phrases (`"..."`), AND/OR/NOT, typo tolerance and stemming; '
                "ranked by relevance (BM25 over all the crawls searched as one corpus; a "
                "page stored by several crawls is one hit, its newest fetch). Snippets are "
                "HTML-safe, with `<mark>` around the "
                "words that matched. Read-only: no token needed on a loopback bind (off loopback, "
                "the server asks for its read token; see the 401 answer where it does)."
            ),
            "tags": ["search"],
            "parameters": [
                {
                    "name": "query",
                    "in": "query",
                    "required": True,
                    "description": f"the query, 1 to {MAX_QUERY_CHARS} characters",
                    "schema": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS},
                },
                {
                    "name": "page",
                    "in": "query",
                    "required": False,
                    "description": f"1-based page of results (page * size <= {MAX_RESULTS})",
                    "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": 1},
                },
                {
                    "name": "crawl",
                    "in": "query",
                    "required": False,
                    "description": "search this crawl's pages only (an id of GET /v1/crawls: "
                    "`main` for the data directory's own crawl); default: every crawl the "
                    "server holds, ranked as one index",
                    "schema": {"type": "string", "maxLength": 200},
                },
                {
                    "name": "size",
                    "in": "query",
                    "required": False,
                    "description": "results per page",
                    "schema": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_SIZE,
                        "default": DEFAULT_SIZE,
                    },
                },
            ],
            "responses": {
                "200": {
                    "description": "one page of results",
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/SearchResults"}
                        }
                    },
                },
                "400": _error("a bad query or parameter; `fields` says which and why"),
                "404": _error("`crawl` names no crawl this server holds"),
                "503": _error("there is no search index yet (crawl first)"),
            },
        }
    }
}

SEARCH_SCHEMAS: dict[str, Any] = {
    "SearchHit": {
        "type": "object",
        "required": ["title", "snippet", "link", "host", "fetched_at"],
        "properties": {
            "title": {"type": "string"},
            "snippet": {
                "type": "string",
                "description": "HTML-safe text with <mark> around matched words",
            },
            "link": {"type": "string", "format": "uri"},
            "host": {"type": "string"},
            "crawl": {
                "type": ["string", "null"],
                "description": "the crawl whose copy of the page this is",
            },
            "fetched_at": {
                "type": ["string", "null"],
                "description": "when the page was fetched (ISO 8601, UTC)",
            },
        },
    },
    "SearchResults": {
        "type": "object",
        "required": [
            "query",
            "results",
            "total",
            "took_ms",
            "page",
            "size",
            "correction_skipped",
        ],
        "properties": {
            "query": {"type": "string", "description": "the query as searched"},
            "results": {"type": "array", "items": {"$ref": "#/components/schemas/SearchHit"}},
            "total": {"type": "integer", "minimum": 0, "description": "matching pages"},
            "took_ms": {"type": "number", "minimum": 0},
            "page": {"type": "integer", "minimum": 1},
            "size": {"type": "integer", "minimum": 1},
            "corrected": {
                "type": "string",
                "description": "the spelling searched instead, when the query had typos",
            },
            "correction_skipped": {
                "type": "boolean",
                "description": (
                    "typo correction ran out of its time budget: some words may have "
                    "been searched as typed"
                ),
            },
        },
    },
}
