"""The search page at ``/``: server-rendered HTML that needs no JavaScript.

A GET form (with a choice of crawl when the server holds several), the results
(title link, host, the crawl it came from, highlighted snippet), "About N results
(X ms)", the spelling searched instead of a typo, paging links, and a clear message
for a bad query. Every piece of user or page text is escaped; snippets keep only the
``<mark>`` tags the index puts around matched words.
"""

from __future__ import annotations

import html
import re
from importlib import resources
from string import Template
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlencode, urlsplit

from aiohttp import web

from trawl.api.query import (
    DEFAULT_SIZE,
    MAX_QUERY_CHARS,
    MAX_RESULTS,
    ParamError,
    parse_params,
    query_params,
)
from trawl.index.schema import NoIndexError
from trawl.index.search import UnknownCrawlError

if TYPE_CHECKING:
    from trawl.api.query import SearchParams
    from trawl.index import Hit, SearchResults


class SearchRunner(Protocol):
    """What the page needs of the search routes: the search itself, off the loop."""

    @property
    def query_errors(self) -> tuple[type[Exception], ...]: ...

    async def run(self, params: SearchParams) -> SearchResults:
        """Raises NoIndexError, or one of ``query_errors`` for a bad query."""
        ...

    def crawls(self) -> list[str]:
        """The crawls searched, to choose from ([] or one: no choice shown)."""
        ...


_MARK = re.compile(r"(</?mark>)")
_ENTITY = re.compile(r"&(#[0-9]{1,7}|#x[0-9a-fA-F]{1,6}|[a-zA-Z][a-zA-Z0-9]{1,31});")


def _template() -> Template:
    text = (resources.files("trawl.web") / "templates" / "search.html").read_text("utf-8")
    return Template(text)


def safe_snippet(snippet: str) -> str:
    """``snippet`` with nothing but text, entities and ``<mark>``/``</mark>`` left."""
    out: list[str] = []
    depth = 0
    for part in _MARK.split(snippet):
        if part == "<mark>":
            if depth == 0:
                out.append(part)
            depth += 1
        elif part == "</mark>":
            if depth == 1:
                out.append(part)
            depth = max(0, depth - 1)
        else:
            kept = _ENTITY.split(part)
            for i, piece in enumerate(kept):
                # split() puts each entity body at the odd positions
                out.append(f"&{piece};" if i % 2 else html.escape(piece, quote=True))
    if depth:
        out.append("</mark>")
    return "".join(out)


def _href(query: str, page: int = 1, size: int = DEFAULT_SIZE, crawl: str | None = None) -> str:
    params: dict[str, str] = {"query": query}
    if page > 1:
        params["page"] = str(page)
    if size != DEFAULT_SIZE:
        params["size"] = str(size)
    if crawl:
        params["crawl"] = crawl
    return html.escape("/?" + urlencode(params), quote=True)


def crawl_choice(crawls: list[str], chosen: str | None) -> str:
    """The form's choice of crawl: every crawl, or one (nothing when there is one)."""
    if len(crawls) < 2 and not chosen:
        return ""
    e = html.escape
    options = ['<option value="">all crawls</option>']
    for crawl in [*crawls, *([chosen] if chosen and chosen not in crawls else [])]:
        selected = " selected" if crawl == chosen else ""
        options.append(f'<option value="{e(crawl, quote=True)}"{selected}>{e(crawl)}</option>')
    return f'<select name="crawl" aria-label="Crawl to search">{"".join(options)}</select>'


def _link(url: str) -> str | None:
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        return None
    return url if scheme in ("http", "https") else None


def _hit(hit: Hit, *, crawl: bool = False) -> str:
    e = html.escape
    link = _link(hit.link)
    title = e(hit.title or hit.link)
    heading = f'<a href="{e(link)}">{title}</a>' if link else title
    badge = f'<span class="hit-crawl">{e(hit.crawl)}</span>' if crawl and hit.crawl else ""
    return (
        '<li class="hit">'
        f'<div class="hit-url"><span class="hit-host">{e(hit.host)}</span>'
        f'<span class="hit-link">{e(hit.link)}</span>{badge}</div>'
        f'<h2 class="hit-title">{heading}</h2>'
        f'<p class="hit-snippet">{safe_snippet(hit.snippet)}</p>'
        "</li>"
    )


def _pager(results: SearchResults, crawl: str | None) -> str:
    size = max(1, results.size)
    last = min(MAX_RESULTS // size, max(1, -(-results.total // size)))
    page = results.page
    if last <= 1:
        return ""
    items: list[str] = []
    if page > 1:
        items.append(
            f'<a rel="prev" href="{_href(results.query, page - 1, size, crawl)}">Previous</a>'
        )
    first = max(1, min(page - 4, last - 9))
    for n in range(first, min(last, first + 9) + 1):
        if n == page:
            items.append(f'<span class="current" aria-current="page">{n}</span>')
        else:
            items.append(f'<a href="{_href(results.query, n, size, crawl)}">{n}</a>')
    if page < last:
        items.append(f'<a rel="next" href="{_href(results.query, page + 1, size, crawl)}">Next</a>')
    return f'<nav class="pager" aria-label="Result pages">{"".join(items)}</nav>'


def _count(total: int, took_ms: float, page: int) -> str:
    noun = "result" if total == 1 else "results"
    where = f"Page {page} of about" if page > 1 else "About"
    return f'<p class="stats">{where} {total:,} {noun} ({took_ms:.1f} ms)</p>'


def render_results(
    results: SearchResults, original: str, *, crawl: str | None = None, several: bool = False
) -> str:
    """The results part of the page (``crawl``: the one searched; ``several``: the
    server holds several crawls, so each hit names its own)."""
    e = html.escape
    parts = [_count(results.total, results.took_ms, results.page)]
    if results.correction_skipped:
        parts.append(
            '<p class="corrected skipped">Spelling correction ran out of time: some '
            "words may have been searched as typed.</p>"
        )
    if results.corrected and results.corrected != original:
        parts.append(
            '<p class="corrected">Showing results for '
            f'<a href="{_href(results.corrected, crawl=crawl)}"><b>{e(results.corrected)}</b></a>. '
            f'Search instead for <a href="{_href(original, crawl=crawl)}">{e(original)}</a>?</p>'
        )
    if not results.results:
        parts.append(
            f'<div class="notice"><p>No pages match <b>{e(original)}</b>.</p>'
            "<p>Try other or fewer words, or drop quotes and operators.</p></div>"
        )
    else:
        items = "".join(_hit(hit, crawl=several) for hit in results.results)
        parts.append(
            f'<ol class="hits" start="{(results.page - 1) * results.size + 1}">{items}</ol>'
        )
    parts.append(_pager(results, crawl))
    return "\n".join(parts)


def _notice(kind: str, heading: str, text: str) -> str:
    e = html.escape
    return f'<div class="notice {kind}" role="alert"><h2>{e(heading)}</h2><p>{e(text)}</p></div>'


class SearchPage:
    """Renders ``/`` with the searcher of the search routes (``api.search``)."""

    def __init__(self, routes: SearchRunner) -> None:
        self._routes = routes
        self._template = _template()

    def register(self, app: web.Application) -> None:
        app.router.add_get("/", self.page)

    def _page(
        self,
        query: str,
        content: str,
        *,
        status: int = 200,
        home: bool = False,
        crawl: str | None = None,
    ) -> web.Response:
        title = f"{query} - trawl search" if query else "trawl search"
        api = {"query": query, **({"crawl": crawl} if crawl else {})}
        body = self._template.substitute(
            title=html.escape(title),
            body_class="home" if home else "serp",
            query=html.escape(query, quote=True),
            crawl_choice=crawl_choice(self._routes.crawls(), crawl),
            api_link=(
                f'<a href="/api/v1/search?{html.escape(urlencode(api))}">JSON</a>' if query else ""
            ),
            max_chars=str(MAX_QUERY_CHARS),
            autofocus="autofocus" if home else "",
            content=content,
        )
        return web.Response(text=body, status=status, content_type="text/html", charset="utf-8")

    async def page(self, request: web.Request) -> web.Response:
        raw = request.query.get("query", "")  # bytes not UTF-8 shown as U+FFFD
        shown = raw[:MAX_QUERY_CHARS]
        if not raw.strip() and "page" not in request.query and "size" not in request.query:
            hint = '<p class="hint">Words, "exact phrases", AND, OR, NOT. Typos are forgiven.</p>'
            return self._page("", hint, home=True)
        try:
            params = parse_params(query_params(request.rel_url.raw_query_string))
        except ParamError as exc:
            problems = "; ".join(f"{k} {v}" for k, v in exc.fields.items())
            return self._page(shown, _notice("bad", "That search cannot run", problems), status=400)
        crawl = params.crawl
        try:
            results = await self._routes.run(params)
        except NoIndexError as exc:
            return self._page(params.query, _notice("wait", "No index yet", str(exc)), status=503)
        except UnknownCrawlError as exc:
            notice = _notice("bad", "No such crawl", f"{exc}: search every crawl instead")
            return self._page(params.query, notice, status=404)
        except self._routes.query_errors as exc:
            text = f"{exc}. Check quotes and operators (AND, OR, NOT need words on both sides)."
            return self._page(
                params.query,
                _notice("bad", "That query cannot be read", text),
                status=400,
                crawl=crawl,
            )
        several = len(self._routes.crawls()) > 1
        content = render_results(results, params.query, crawl=crawl, several=several)
        return self._page(params.query, content, crawl=crawl)
