"""traps.test: URL spaces without end, and pages that are merely huge or deep.

Every trap is generated from its URL, so it answers for any depth a crawler reaches.
"""

from __future__ import annotations

import html
import re
import secrets
from urllib.parse import parse_qsl, urlencode

from aiohttp import web

from tests.testweb._model import ALLOW_ALL, Context, Page, Resource, Site, document

COLORS = ("red", "green", "blue", "black", "white", "grey", "navy", "olive")
SIZES = ("xs", "s", "m", "l", "xl", "xxl")
SORTS = ("price", "name", "newest", "rating")
MANY_LINKS = 5000
MILLION_LINKS = 1_000_000
DEEP_CHAIN = 100
SESSION_PAGES = 10
MAX_TARGET = 64 * 1024  # longer request targets are answered 414

_CALENDAR = re.compile(r"/calendar/(\d{1,4})/(\d{1,2})")
_REPEAT = re.compile(r"/repeat/(a/b/)+")
_LONG = re.compile(r"/long/(x+)")
_NUMBERED = re.compile(r"/(deep|many|million|session)/(\d+)")


class TrapSite(Site):
    def dynamic(self, path: str, query: str) -> Resource | None:
        if len(path) + len(query) > MAX_TARGET:
            return Resource(414, body=document("URI too long", "<p>414</p>"))
        if match := _CALENDAR.fullmatch(path):
            return self._calendar(int(match[1]), int(match[2]))
        if path == "/facets":
            return self._facets(query)
        if _REPEAT.fullmatch(path):
            return self._page(path, "Repeated segments", [(path + "a/b/", "deeper")])
        if match := _LONG.fullmatch(path):
            return self._page(path, "Longer", [(f"/long/{match[1] * 2}", "twice as long")])
        if path == "/many-links":
            return self._many_links()
        if path == "/million-links":
            return self._million_links()
        if path == "/to-million-links":
            return self._page(path, "On the way", [("/million-links", "a million links")])
        if match := _NUMBERED.fullmatch(path):
            return self._numbered(match[1], int(match[2]), query)
        return None

    def _page(
        self, target: str, title: str, links: list[tuple[str, str]], head: str = ""
    ) -> Resource:
        page = Page(self.url(target))
        body = f"<h1>{html.escape(title)}</h1>\n{page.nav(links)}"
        return Resource(200, body=document(title, body, head=head), links=tuple(page.links))

    def _calendar(self, year: int, month: int) -> Resource | None:
        if not (1 <= month <= 12 and 1 <= year <= 9999):
            return None
        prev = (year - 1, 12) if month == 1 else (year, month - 1)
        nxt = (year + 1, 1) if month == 12 else (year, month + 1)
        links = [(f"/calendar/{y}/{m}", f"{y}-{m:02d}") for y, m in (prev, nxt) if 1 <= y <= 9999]
        return self._page(f"/calendar/{year}/{month}", f"Events in {year}-{month:02d}", links)

    def _facets(self, query: str) -> Resource | None:
        params = dict(parse_qsl(query, keep_blank_values=True))
        choice = {"color": COLORS, "size": SIZES, "sort": SORTS}
        if any(k not in (*choice, "page") for k in params) or any(
            params[k] not in values for k, values in choice.items() if k in params
        ):
            return None
        if not params.get("page", "1").isdigit():
            return None
        links = []
        for key, values in choice.items():
            for value in values:
                if params.get(key) != value:
                    links.append((_facet_url({**params, key: value}), f"{key} {value}"))
        page = int(params.get("page", "1"))
        links.append((_facet_url({**params, "page": str(page + 1)}), "next page"))
        target = f"/facets?{query}" if query else "/facets"
        return self._page(target, "Products", links)

    def _many_links(self) -> Resource:
        cached = self.routes.get("/many-links")
        if cached is None:
            links = [(f"/many/{n}", f"item {n}") for n in range(1, MANY_LINKS + 1)]
            cached = self.routes["/many-links"] = self._page("/many-links", "5,000 links", links)
        return cached

    def _million_links(self) -> Resource:
        """1,000,000 links (about 31 MB), written as they are generated, never stored."""
        head = document("A million links", "<h1>A million links</h1>\n<ul>")
        head = head[: head.rindex(b"</body>")]
        step = 10_000

        async def serve(request: web.BaseRequest) -> web.StreamResponse:
            response = web.StreamResponse(headers={"Content-Type": "text/html; charset=utf-8"})
            await response.prepare(request)
            await response.write(head)
            for start in range(1, MILLION_LINKS + 1, step):
                end = min(start + step, MILLION_LINKS + 1)
                chunk = "".join(f'<li><a href="/million/{n}">{n}</a>\n' for n in range(start, end))
                # One chunk at a time, each awaited: the server's other hosts (and its
                # request log's timestamps) are not held up while this page streams.
                await response.write(chunk.encode())
            await response.write(b"</ul>\n</body>\n</html>\n")
            await response.write_eof()
            return response

        return Resource(
            200, serve=serve, modeled=False, note="1,000,000 links, generated while sent"
        )

    def _numbered(self, kind: str, n: int, query: str) -> Resource | None:
        if kind == "deep" and 1 <= n <= DEEP_CHAIN and not query:
            nxt = [(f"/deep/{n + 1}", "deeper")] if n < DEEP_CHAIN else []
            return self._page(f"/deep/{n}", f"Depth {n}", nxt)
        if kind == "many" and 1 <= n <= MANY_LINKS and not query:
            return self._page(f"/many/{n}", f"Item {n}", [])
        if kind == "million" and 1 <= n <= MILLION_LINKS and not query:
            return self._page(f"/million/{n}", f"Entry {n}", [])
        if kind == "session" and 1 <= n <= SESSION_PAGES:
            return self._session(n)
        return None

    def _session(self, n: int) -> Resource:
        canonical = self.url(f"/session/{n}")

        async def serve(request: web.BaseRequest) -> web.StreamResponse:
            # A fresh session id on every link of every response.
            others = [m for m in (n - 1, n + 1, 1) if 1 <= m <= SESSION_PAGES and m != n]
            links = [(f"/session/{m}?sid={secrets.token_hex(8)}", f"page {m}") for m in others]
            head = f'<link rel="canonical" href="{html.escape(canonical)}">\n'
            return self._page(request.raw_path, f"Session page {n}", links, head).response()

        return Resource(
            200,
            serve=serve,
            canonical=canonical,
            modeled=False,
            note="links carry a fresh random sid on every response",
        )


def _facet_url(params: dict[str, str]) -> str:
    order = ("color", "size", "sort", "page")
    return "/facets?" + urlencode([(k, params[k]) for k in order if k in params])


def traps(ctx: Context) -> Site:
    site = TrapSite("traps.test", ctx, robots=ALLOW_ALL)
    site.text_page(
        "/",
        "Crawler traps",
        [
            ("/calendar/2026/12", "calendar"),
            ("/facets?color=red", "facets"),
            ("/session/1", "sessions"),
            ("/repeat/a/b/", "repeated segments"),
            ("/long/x", "ever longer URLs"),
            ("/many-links", "5,000 links"),
            ("/deep/1", "a chain 100 deep"),
        ],
    )
    return site
