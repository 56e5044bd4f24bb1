"""The search route set: ``GET /api/v1/search`` and the search page at ``/``.

The searcher searches the indexes ``indexes`` lists (``trawl serve``: every crawl of
the data directory, ``trawl.service.catalog``), or ``<data>/index/``; ``crawl=ID``
narrows a search to one crawl (404 for a crawl not held). It opens at startup, or on
the first request once a crawl has written an index; until then search answers 503
with a clear message. The searcher picks up new commits and new crawls by itself (a
stat a second). Searches run
in a pool of threads, never on the event loop: one slow search (a typo correction
over a huge vocabulary, a cold disk) holds up no other request. tantivy lets go of
the GIL while it searches, so the threads really overlap; the Python parts
(parsing, snippets) take turns. Typo correction has a time budget of its own (the
searcher's), and the answer says ``correction_skipped`` when it ran out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from aiohttp import web

from trawl.api._json import json_error, json_response
from trawl.api.query import ParamError, SearchParams, parse_params, query_params
from trawl.api.search_openapi import SEARCH_PATHS, SEARCH_SCHEMAS
from trawl.index import Hit, QueryError, Searcher, SearchResults
from trawl.index.schema import IndexFormatError, NoIndexError, index_exists
from trawl.index.search import IndexSource, UnknownCrawlError
from trawl.web.search_page import SearchPage

log = logging.getLogger("trawl.api.search")

__all__ = ["NoIndexError", "SearchRoutes"]


SearcherFactory = Callable[[Path], Searcher]
SEARCH_THREADS = 4


def iso_time(when: float) -> str | None:
    """A fetch time (Unix seconds; 0 when the index has none) as ISO 8601 UTC."""
    if not when:
        return None
    return datetime.fromtimestamp(when, UTC).isoformat().replace("+00:00", "Z")


def hit_json(hit: Hit) -> dict[str, Any]:
    return {
        "title": hit.title or hit.link,
        "snippet": hit.snippet,
        "link": hit.link,
        "host": hit.host,
        "crawl": hit.crawl,
        "fetched_at": iso_time(hit.fetched_at),
    }


class SearchRoutes:
    """The read-only search API and page over the index in ``<data_dir>/index``."""

    openapi_paths: Mapping[str, Any] = SEARCH_PATHS
    openapi_schemas: Mapping[str, Any] = SEARCH_SCHEMAS
    # What a search raises for a query it cannot run: a 400 (the page: a notice).
    query_errors: ClassVar[tuple[type[Exception], ...]] = (QueryError,)

    def __init__(
        self,
        data_dir: Path,
        *,
        indexes: IndexSource | None = None,
        searcher_factory: SearcherFactory | None = None,
        cache_size: int = 1024,
        page: bool = True,
        clock: Callable[[], float] = time.monotonic,
        threads: int = SEARCH_THREADS,
    ) -> None:
        self.data_dir = data_dir
        self.index_dir = data_dir / "index"
        self._indexes = indexes
        self._factory = searcher_factory or self._default_factory(indexes, cache_size)
        self._page = page
        self._clock = clock
        self._searcher: Searcher | None = None
        self._last_try = float("-inf")
        self._threads = threads
        self._pool: ThreadPoolExecutor | None = None
        self._opening = threading.Lock()  # searches of the pool open it at most once

    @staticmethod
    def _default_factory(indexes: IndexSource | None, cache_size: int) -> SearcherFactory:
        def make(index_dir: Path) -> Searcher:
            if indexes is not None:
                return Searcher(indexes=indexes, cache_size=cache_size)
            return Searcher(index_dir, cache_size=cache_size)

        return make

    # RouteSet ---------------------------------------------------------------------

    def register(self, app: web.Application) -> None:
        app.router.add_get("/api/v1/search", self.api_search, allow_head=False)
        if self._page:
            SearchPage(self).register(app)

    async def startup(self, app: web.Application) -> None:
        self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="trawl-search")
        with contextlib.suppress(NoIndexError):
            await asyncio.get_running_loop().run_in_executor(self._pool, self.searcher)

    async def cleanup(self, app: web.Application) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._searcher is not None:
            self._searcher.close()
            self._searcher = None

    # the searcher -----------------------------------------------------------------

    def searcher(self) -> Searcher:
        """The open searcher, opening the index if it has appeared; else NoIndexError."""
        if self._searcher is not None:
            return self._searcher
        with self._opening:
            return self._open()

    def _open(self) -> Searcher:
        if self._searcher is not None:
            return self._searcher
        now = self._clock()
        if now - self._last_try < 1.0:
            raise NoIndexError(self.no_index_message())
        self._last_try = now
        if not self._any_index():
            raise NoIndexError(self.no_index_message())
        try:
            self._searcher = self._factory(self.index_dir)
        except IndexFormatError as exc:  # an older trawl's index: it must be rebuilt
            log.warning("%s", exc)
            raise NoIndexError(str(exc)) from exc
        except Exception as exc:
            log.warning("cannot open the search index in %s: %s", self.index_dir, exc)
            raise NoIndexError(
                f"the search index in {self.index_dir} cannot be opened yet"
            ) from exc
        return self._searcher

    def _any_index(self) -> bool:
        if self._indexes is None:
            return index_exists(self.index_dir)
        return any(index_exists(spec.index_dir) for spec in self._indexes())

    def health(self) -> dict[str, Any]:
        return {"search": "ready" if self._searcher is not None else "no index yet"}

    def crawls(self) -> list[str]:
        """The crawls searched (for the page's choice; [] before any index)."""
        return self._searcher.crawls() if self._searcher is not None else []

    def no_index_message(self) -> str:
        return (
            f"no search index in {self.index_dir} yet: crawl into {self.data_dir} first "
            f"(trawl crawl --data {self.data_dir} SEED ...), or, if it was crawled with "
            f"--no-index, build it (trawl index --data {self.data_dir})"
        )

    # the API ----------------------------------------------------------------------

    async def api_search(self, request: web.Request) -> web.Response:
        try:
            params = parse_params(query_params(request.rel_url.raw_query_string))
        except ParamError as exc:
            return json_error(400, exc.message, exc.fields)
        try:
            results = await self.run(params)
        except NoIndexError as exc:
            response = json_error(503, str(exc))
            response.headers["Retry-After"] = "5"
            return response
        except UnknownCrawlError as exc:
            return json_error(404, f"no such crawl: {exc}", {"crawl": "no such crawl"})
        except self.query_errors as exc:
            return json_error(400, f"bad query: {exc}", {"query": str(exc)})
        body: dict[str, Any] = {
            "query": results.query,
            "results": [hit_json(hit) for hit in results.results],
            "total": results.total,
            "took_ms": round(results.took_ms, 3),
            "page": results.page,
            "size": results.size,
        }
        if results.corrected:
            body["corrected"] = results.corrected
        body["correction_skipped"] = results.correction_skipped
        return json_response(body)

    async def run(self, params: SearchParams) -> SearchResults:
        """The searcher's answer for the page, from a thread of the pool (raises
        NoIndexError or a query error)."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, self._search, params)

    def _search(self, params: SearchParams) -> SearchResults:
        try:
            return self.searcher().search(
                params.query, page=params.page, size=params.size, crawl=params.crawl
            )
        except IndexFormatError as exc:  # only an older trawl's index to search
            raise NoIndexError(str(exc)) from exc
