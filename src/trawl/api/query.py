"""Search parameters from a query string: checked, with one message per bad field.

The index's rules hold (``trawl.index.query.clean``: the length cap; its limits on
``size`` and on depth, ``page * size``), checked here so that a bad request is a 400
naming the field even before an index exists. On top of them, at the HTTP edge: tabs
and line breaks count as spaces, and other control characters (NUL, C0, DEL, C1) and
text that was not valid UTF-8 are refused rather than silently dropped.

aiohttp decodes a query string with ``errors="replace"``, so a byte that is not UTF-8
and a real U+FFFD sent as UTF-8 (``%EF%BF%BD``) both arrive as U+FFFD.
:func:`query_params` decodes the raw query string again with ``surrogateescape``: bytes
that are not UTF-8 become lone surrogates (refused), U+FFFD stays text (searched).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl

from trawl.index.query import MAX_QUERY_CHARS, QueryError, clean
from trawl.index.search import MAX_RESULTS, MAX_SIZE

__all__ = [
    "DEFAULT_SIZE",
    "MAX_PAGE",
    "MAX_QUERY_CHARS",
    "MAX_RESULTS",
    "MAX_SIZE",
    "ParamError",
    "SearchParams",
    "check_query",
    "parse_params",
    "query_params",
]

MAX_PAGE = MAX_RESULTS
DEFAULT_SIZE = 10

_SPACE_CONTROLS = re.compile(r"[\t\n\r\f\v]+")
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# What query_params makes of bytes that are not UTF-8 (and text that cannot be encoded).
_NOT_UTF8 = re.compile("[\ud800-\udfff]")
_INT = re.compile(r"[0-9]{1,9}")


MAX_CRAWL_CHARS = 200


@dataclass(frozen=True, slots=True)
class SearchParams:
    query: str
    page: int = 1
    size: int = DEFAULT_SIZE
    crawl: str | None = None  # one crawl's pages only (None: every crawl's)


class ParamError(ValueError):
    """One message per invalid parameter, and a summary."""

    def __init__(self, fields: Mapping[str, str]) -> None:
        self.fields = dict(fields)
        self.message = "; ".join(f"{name}: {msg}" for name, msg in self.fields.items())
        super().__init__(self.message)


def query_params(raw_query: str) -> dict[str, str]:
    """The first value of each parameter of a raw (percent-encoded) query string.

    Split and decoded as aiohttp's ``request.query`` is, except that bytes which are not
    UTF-8 become lone surrogates instead of U+FFFD (see the module docstring).
    """
    params: dict[str, str] = {}
    for name, value in parse_qsl(raw_query, keep_blank_values=True, errors="surrogateescape"):
        params.setdefault(name, value)
    return params


def check_query(raw: str | None) -> tuple[str, str | None]:
    """The cleaned query and an error message (or None)."""
    if raw is None:
        return "", "required: pass ?query=words"
    query = _SPACE_CONTROLS.sub(" ", raw).strip()
    if _CONTROLS.search(query):
        return query, "contains control characters"
    if _NOT_UTF8.search(query):
        return query, "is not valid UTF-8 text"
    try:
        empty = not clean(query)
    except QueryError as exc:
        return query, exc.message
    if empty:
        return query, "is empty: type some words"
    return query, None


def _int(raw: str | None, name: str, default: int, high: int, errors: dict[str, str]) -> int:
    if raw is None:
        return default
    text = raw
    if not _INT.fullmatch(text):
        errors[name] = f"must be a whole number from 1 to {high}"
        return default
    value = int(text)
    if not 1 <= value <= high:
        errors[name] = f"must be from 1 to {high} (got {value})"
        return default
    return value


def parse_params(query: Mapping[str, str]) -> SearchParams:
    """``SearchParams`` from :func:`query_params` of a request, or ``ParamError``."""
    errors: dict[str, str] = {}
    text, problem = check_query(query.get("query"))
    if problem is not None:
        errors["query"] = problem
    page = _int(query.get("page"), "page", 1, MAX_PAGE, errors)
    size = _int(query.get("size"), "size", DEFAULT_SIZE, MAX_SIZE, errors)
    crawl = query.get("crawl") or None  # an empty choice (the page's "all crawls") is none
    if crawl is not None and (
        len(crawl) > MAX_CRAWL_CHARS or _CONTROLS.search(crawl) or _NOT_UTF8.search(crawl)
    ):
        errors["crawl"] = "is not a crawl id"
    if "page" not in errors and page * size > MAX_RESULTS:
        errors["page"] = (
            f"results go {MAX_RESULTS:,} deep: with size {size}, pages go up to "
            f"{MAX_RESULTS // size}"
        )
    if errors:
        raise ParamError(errors)
    return SearchParams(text, page, size, crawl)
