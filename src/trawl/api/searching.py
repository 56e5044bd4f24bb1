"""What the search routes need of a searcher, and the default one (``trawl.index``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol


class HitLike(Protocol):
    title: str
    snippet: str
    link: str
    host: str
    fetched_at: Any


class ResultsLike(Protocol):
    query: str
    results: Sequence[HitLike]
    total: int
    took_ms: float
    corrected: str | None
    page: int
    size: int


class Searcher(Protocol):
    def search(self, query: str, *, page: int = 1, size: int = 10) -> ResultsLike: ...

    def reload(self) -> None: ...

    def close(self) -> None: ...


SearcherFactory = Callable[[Path], Searcher]


def default_factory(cache_size: int) -> tuple[SearcherFactory, tuple[type[Exception], ...]]:
    """``trawl.index.Searcher`` over an index directory, and its query error type."""
    index: Any = importlib.import_module("trawl.index")
    errors: tuple[type[Exception], ...] = ()
    if isinstance(getattr(index, "QueryError", None), type):
        errors = (index.QueryError,)

    def factory(index_dir: Path) -> Searcher:
        searcher: Searcher = index.Searcher(index_dir, cache_size=cache_size)
        return searcher

    return factory, errors


def iso_time(value: Any) -> str | None:
    """A fetch time as ISO 8601 UTC, whatever form the index keeps it in."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        when: datetime = value if value.tzinfo else value.replace(tzinfo=UTC)
        text: str = when.astimezone(UTC).isoformat()
        return text.replace("+00:00", "Z")
    if isinstance(value, int | float):
        return iso_time(datetime.fromtimestamp(float(value), UTC))
    return str(value)


def hit_json(hit: HitLike) -> dict[str, Any]:
    return {
        "title": hit.title or hit.link,
        "snippet": hit.snippet,
        "link": hit.link,
        "host": hit.host,
        "fetched_at": iso_time(hit.fetched_at),
    }
