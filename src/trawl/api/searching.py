"""What the search routes need of a searcher, and the default one (``trawl.index``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol


class HitLike(Protocol):
    @property
    def title(self) -> str: ...
    @property
    def snippet(self) -> str: ...
    @property
    def link(self) -> str: ...
    @property
    def host(self) -> str: ...
    @property
    def fetched_at(self) -> Any: ...


class ResultsLike(Protocol):
    @property
    def query(self) -> str: ...
    @property
    def results(self) -> Sequence[HitLike]: ...
    @property
    def total(self) -> int: ...
    @property
    def took_ms(self) -> float: ...
    @property
    def corrected(self) -> str | None: ...
    @property
    def page(self) -> int: ...
    @property
    def size(self) -> int: ...


class Searcher(Protocol):
    def search(self, query: str, *, page: int = 1, size: int = 10) -> ResultsLike: ...

    def reload(self) -> None: ...

    def close(self) -> None: ...


SearcherFactory = Callable[[Path], Searcher]


def default_factory(cache_size: int) -> tuple[SearcherFactory, tuple[type[Exception], ...]]:
    """``trawl.index.Searcher`` over an index directory, and its query error type."""
    from trawl.index import QueryError
    from trawl.index import Searcher as IndexSearcher

    def factory(index_dir: Path) -> Searcher:
        return IndexSearcher(index_dir, cache_size=cache_size)

    return factory, (QueryError,)


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
