"""A sample web whose links spell each page in several ways: URL hygiene's test bed.

    web = SpellingWeb(hosts=40, pages_per_host=150, seed=1)  # 3+ spellings a page
    web = SpellingWeb(hosts=250, pages_per_host=48, seed=1, campaign=True)
    async with SpellingWebServer(web) as srv: ...  # aiohttp, for tests
    web.write_static(directory, port=8080)  # files and an nginx config, for benchmarks

The pages are ``SampleWeb``'s (same arguments, same text), with every link to a page of
the web respelled. With ``campaign=True`` one page in four is promoted, and a third of
the links to it carry its campaign's tags (``utm_*``, ``gclid``, ``fbclid``,
``msclkid`` or ``mc_cid``/``mc_eid``; one of two values), as a newsletter's or an
ad's links do; links to other hosts too. Otherwise each host spells its links in its
own ways (``profile``): clean, a ``ref`` parameter of a few values, a ``sessionid`` of
one value per linking page (on one host in three), campaign tags, and two of: no
trailing slash, ``index.html``, an ``/amp/`` copy, a ``/print/`` copy; every page also
links the next page of its host under three spellings, so each page is linked under
three or more. ``plain=True`` serves SampleWeb's pages as they are (a control).
Every spelling serves the same bytes. Every other host puts a rel=canonical
(the clean URL) in its pages. One host in five also has pages that a parameter
chooses: ``/listing/?page=N`` (the listing itself is page 1) and ``/item?id=N``,
linked clean, with ``ref`` and with campaign tags: a crawler that learned to drop
``page`` or ``id`` would miss them.

The oracle: ``page_of(url)`` names the distinct page a URL serves (None: a 404), and
``distinct_pages(port)`` every page a crawl from ``seeds`` can reach. The aiohttp
server answers exactly as the nginx config ``write_static`` writes.
"""

from __future__ import annotations

import collections
import random
import re
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import xxhash
from aiohttp import web

from trawl.testing._sample_text import text_generator
from trawl.testing.requestlog import RequestLog
from trawl.testing.sampleweb import SampleWeb
from trawl.testing.vhost import LOOPBACK, ServedWeb, VirtualHostServer

__all__ = ["SpellingWeb", "SpellingWebServer"]

PATH_SPELLINGS = ("noslash", "index", "amp", "print")
TRACKING = ("utm", "gclid", "fbclid", "msclkid", "mc")
REFS = ("nav", "related", "footer", "home", "more", "side")
LISTING_PAGES = 6
ITEMS = 30
PARAMETER_PATHS = ("/listing/", "/item")
_HREF = re.compile(rb'href="([^"]+)"')
_HOST_OF = re.compile(r"^https?://([^/:]+)(?::\d+)?(/.*)$")


def _pick(options: tuple[str, ...], *parts: object) -> str:
    return options[_digest(parts) % len(options)]


def _hex(*parts: object) -> str:
    return f"{_digest(parts):08x}"


def _digest(parts: tuple[object, ...]) -> int:
    return xxhash.xxh32_intdigest("\x00".join(map(str, parts)).encode())


class SpellingWeb:
    def __init__(
        self,
        hosts: int,
        pages_per_host: int,
        seed: int = 0,
        *,
        campaign: bool = False,
        plain: bool = False,
    ) -> None:
        self.sample = SampleWeb(hosts, pages_per_host, seed)
        self.campaign = campaign
        self.plain = plain  # SampleWeb's pages as they are: the control
        self.hosts = self.sample.hosts
        self._text = text_generator(seed)
        self._order = {h: list(self.sample.plan(h).pages) for h in self.hosts}
        self._cache: collections.OrderedDict[tuple[str, str, int], bytes] = (
            collections.OrderedDict()
        )

    # -- who spells how ------------------------------------------------------------------
    def profile(self, host: str) -> tuple[tuple[str, ...], bool, bool]:
        """(the spellings its links use, rel=canonical on its pages, parameter pages)."""
        i = self.hosts.index(host)
        if self.plain:
            return ("clean",), False, False
        if self.campaign:
            return ("clean", *TRACKING), False, False
        paths = (PATH_SPELLINGS[i % 4], PATH_SPELLINGS[(i + 1) % 4])
        params = ("ref", "session") if i % 3 == 0 else ("ref",)
        return ("clean", *paths, *params, "utm", "gclid"), i % 2 == 0, i % 5 == 3

    def _spell(self, kind: str, target: str, source: str, n: int) -> str:
        """``target`` spelled as ``kind`` in the link number ``n`` of page ``source``.
        A ``ref`` takes one of a few values, a ``sessionid`` one per linking page;
        campaign tags one of two values per target (a campaign or two a page)."""
        path, _, query = target.partition("?")
        join = "&" if query else "?"
        campaign = (target, _digest((source,)) % 2)
        if kind == "noslash" and path != "/" and not query:
            return path.rstrip("/")
        if kind == "index" and not query:
            return path + "index.html"
        if kind == "amp" and not query:
            return "/amp" + path
        if kind == "print" and not query:
            return path + "print/"
        if kind == "ref":
            return f"{target}{join}ref={_pick(REFS, source, n)}"
        if kind == "session":
            return f"{target}{join}sessionid={_hex('s', source)}"
        if kind == "utm":
            tags = f"utm_source={_pick(('news', 'mail', 'x'), *campaign)}&utm_medium=email"
            return f"{target}{join}{tags}&utm_campaign=c{_hex(*campaign)[:3]}"
        if kind in ("gclid", "fbclid", "msclkid"):
            return f"{target}{join}{kind}={_hex(kind, *campaign)}"
        if kind == "mc":
            return f"{target}{join}mc_cid={_hex('c', *campaign)}&mc_eid={_hex('e', *campaign)}"
        return target

    def _link_kind(self, host: str, source: str, target: str, n: int) -> str:
        kinds, _, _ = self.profile(host)
        if self.campaign:
            return self._campaign_kind(source, target, n)
        if target.startswith(PARAMETER_PATHS):  # a parameter page: parameters only
            kinds = tuple(k for k in kinds if k not in PATH_SPELLINGS)
        return _pick(kinds, source, target, n)

    @staticmethod
    def _campaign_kind(source: str, target: str, n: int) -> str:
        """One page in four is promoted: a third of the links to it carry its
        campaign's tags (one kind of tag a page)."""
        promoted = _digest((target,)) % 4 == 0
        tracked = promoted and _digest((source, target, n)) % 3 == 0
        return _pick(TRACKING, target) if tracked else "clean"

    # -- the oracle -----------------------------------------------------------------------
    def resolve(self, host: str, path: str, query: str) -> str | None:
        """The page ``host`` serves at ``path``/``query`` (its clean target), or None."""
        if host not in self._order:
            return None
        _, _, params = self.profile(host)
        args = dict(parse_qsl(query, keep_blank_values=True))
        if params and path == "/listing/":
            page = args.get("page") or "1"
            if page not in {str(n) for n in range(1, LISTING_PAGES + 1)}:
                return None
            return "/listing/" if page == "1" else f"/listing/?page={page}"
        if params and path == "/item":
            ident = args.get("id", "")
            return f"/item?id={ident}" if ident in {str(n) for n in range(1, ITEMS + 1)} else None
        if path.startswith("/amp/"):
            path = path[4:]
        if path.endswith("/print/"):
            path = path[:-6]
        if path.endswith("/index.html"):
            path = path[:-10]
        if not path.endswith("/"):
            path += "/"
        spec = self.sample.plan(host).pages.get(path)
        return path if spec is not None else None

    def page_of(self, url: str) -> str | None:
        """The distinct page ``url`` serves (``host`` + clean target), None for a 404."""
        parts = urlsplit(url)
        found = self.resolve(parts.hostname or "", parts.path or "/", parts.query)
        return None if found is None else f"{parts.hostname}{found}"

    def distinct_pages(self) -> set[str]:
        """Every page of the web a crawl from the home pages reaches (``page_of`` keys);
        SampleWeb's colour facets are linked from nowhere and left out."""
        out = set()
        for host in self.hosts:
            plan = self.sample.plan(host)
            out |= {f"{host}{p}" for p, spec in plan.pages.items() if spec.kind != "facet"}
            if self.profile(host)[2]:
                out |= {f"{host}{t}" for t in self._parameter_pages()}
        return out

    @staticmethod
    def _parameter_pages() -> list[str]:
        pages = ["/listing/"] + [f"/listing/?page={n}" for n in range(2, LISTING_PAGES + 1)]
        return pages + [f"/item?id={n}" for n in range(1, ITEMS + 1)]

    def seeds(self, *, port: int = 80) -> list[str]:
        return self.sample.seeds(port=port)

    # -- content --------------------------------------------------------------------------
    def body(self, host: str, target: str, *, port: int = 80) -> bytes:
        """The bytes of the page at clean ``target`` (from ``resolve``)."""
        key = (host, target, port)
        found = self._cache.get(key)
        if found is None:
            found = self._render(host, target, port)
            self._cache[key] = found
            if len(self._cache) > 4096:
                self._cache.popitem(last=False)
        return found

    def _render(self, host: str, target: str, port: int) -> bytes:
        if self.plain:
            return self.sample.page(host, target, port=port) or b""
        if target.startswith(PARAMETER_PATHS):
            html = self._parameter_page(host, target)
        else:
            html = self.sample.page(host, target, port=port) or b""
        html = _HREF.sub(lambda m: self._respell(host, target, m, port), html)
        _, canonical, params = self.profile(host)
        head = b""
        if canonical:
            href = self.sample.url(host, target, port=port).replace("&", "&amp;")
            head = f'<link rel="canonical" href="{href}">'.encode()
        extra = self._extra_links(host, target, params)
        return html.replace(b"</head>", head + b"</head>", 1).replace(
            b"</body>", extra + b"</body>", 1
        )

    def _respell(self, host: str, source: str, match: re.Match[bytes], port: int) -> bytes:
        href = match.group(1).decode()
        to_host, target = host, href
        absolute = _HOST_OF.match(href)
        if absolute is not None:
            to_host, target = absolute.group(1), absolute.group(2)
        if self.resolve(to_host, *target.partition("?")[::2]) != target:
            return match.group(0)  # not a page (a 404 link, robots' /search/): as it is
        n = match.start()
        if to_host != host:  # to another host: campaign tags only
            kind = self._campaign_kind(source, f"{to_host}{target}", n)
            spelled = self.sample.url(to_host, self._spell(kind, target, source, n), port=port)
        else:
            spelled = self._spell(self._link_kind(host, source, target, n), target, source, n)
        return b'href="' + spelled.replace("&", "&amp;").encode() + b'"'

    def _extra_links(self, host: str, target: str, params: bool) -> bytes:
        """Every page links the next page of its host under three spellings (not in
        campaign mode); the home page of a host with parameter pages links them."""
        if self.campaign:
            return b""
        order = self._order[host]
        index = order.index(target) if target in order else 0
        follow = order[(index + 1) % len(order)]
        kinds = [k for k in self.profile(host)[0] if k != "clean"]
        links = [self._spell(kinds[(index + i) % len(kinds)], follow, target, i) for i in range(3)]
        if params and target == "/":
            links += ["/listing/", "/listing/?page=1&ref=home", "/item?id=1"]
        items = "".join(f'<li><a href="{u.replace("&", "&amp;")}">more</a></li>' for u in links)
        return f"<ul class=more>{items}</ul>".encode()

    def _parameter_page(self, host: str, target: str) -> bytes:
        rng = random.Random(f"{self.sample.seed} {host} {target}")
        text = "".join(f"<p>{self._text.paragraph(rng)}</p>" for _ in range(4))
        links: list[str] = ["/"]
        if target.startswith("/listing/"):
            page = int(target.rpartition("=")[2]) if "page=" in target else 1
            per = ITEMS // LISTING_PAGES
            links += [f"/item?id={n}" for n in range((page - 1) * per + 1, page * per + 1)]
            links += [f"/listing/?page={p}" for p in (page - 1, page + 1) if p >= 2]
            links += ["/listing/"] if page in (2,) else []
            title = f"Listing, page {page}"
        else:
            ident = int(target.rpartition("=")[2])
            links += ["/listing/", f"/item?id={ident % ITEMS + 1}", f"/item?id={ident % 7 + 1}"]
            title = f"Item {ident}"
        anchors = "".join(f'<li><a href="{u}">{u}</a></li>' for u in links)
        return (
            f"<!DOCTYPE html><html><head><title>{title}</title></head><body><h1>{title}</h1>"
            f"<article>{text}</article><ul>{anchors}</ul></body></html>\n"
        ).encode()

    # -- static export ----------------------------------------------------------------------
    def write_static(self, directory: str | Path, *, port: int = 8080) -> Path:
        """Every page as ``<dir>/<host>/<path>/index.html`` (parameter pages under
        ``listing/pN/`` and ``items/N/``), robots.txt, and ``<dir>/nginx.conf`` (server
        blocks for an nginx ``http {}`` block) that serves every spelling as the aiohttp
        server does. Returns the config's path."""
        root = Path(directory).resolve()
        blocks = [
            "# The spelling web; include inside http { } (with mime.types).",
            'map $arg_page $spelling_page { "" "1"; default $arg_page; }',
            f"server {{\n    listen {LOOPBACK}:{port} default_server;\n    return 421;\n}}",
        ]
        for host in self.hosts:
            base = root / host
            base.mkdir(parents=True, exist_ok=True)
            (base / "robots.txt").write_bytes(self.sample.robots_txt(host))
            for path in self.sample.plan(host).pages:
                folder = base / path.strip("/")
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "index.html").write_bytes(self.body(host, path, port=port))
            if self.profile(host)[2]:
                files = [(f"listing/p{n}", t) for n, t in enumerate(self._parameter_pages(), 1)]
                files = files[:LISTING_PAGES]
                files += [(f"items/{n}", f"/item?id={n}") for n in range(1, ITEMS + 1)]
                for where, target in files:
                    (base / where).mkdir(parents=True, exist_ok=True)
                    (base / where / "index.html").write_bytes(self.body(host, target, port=port))
            blocks.append(
                f"server {{\n    listen {LOOPBACK}:{port};\n    server_name {host};\n"
                f"    root {base};\n    index index.html;\n"
                "    rewrite ^/amp(/.*)$ $1 last;\n    rewrite ^(.*/)print/$ $1 last;\n"
                "    location = /listing/ {\n"
                "        try_files /listing/p$spelling_page/index.html =404;\n    }\n"
                "    location = /item {\n        try_files /items/$arg_id/index.html =404;\n    }\n"
                "    location / {\n        try_files $uri $uri/index.html =404;\n    }\n}"
            )
        config = root / "nginx.conf"
        config.write_text("\n".join(blocks) + "\n")
        return config


class SpellingWebServer(ServedWeb):
    """Serves a ``SpellingWeb`` on 127.0.0.1 (virtual hosts by Host header)."""

    def __init__(self, web_: SpellingWeb, *, port: int = 0, log: bool = False) -> None:
        self.web = web_
        self.log: RequestLog | None = RequestLog() if log else None
        self._server = VirtualHostServer(self._handle, log=self.log, port=port)

    def resolve_map(self) -> dict[str, str]:
        return dict.fromkeys(self.web.hosts, LOOPBACK)

    def url(self, host: str, path: str = "/") -> str:
        return self.web.sample.url(host, path, port=self.port)

    async def _handle(self, request: web.BaseRequest, host: str) -> web.StreamResponse:
        if host not in self.web.hosts:
            return web.Response(status=421, text="not a sample host\n")
        path, _, query = request.raw_path.partition("?")
        if path == "/robots.txt":
            return web.Response(body=self.web.sample.robots_txt(host), content_type="text/plain")
        target = self.web.resolve(host, path, query)
        if target is None:
            return web.Response(status=404, text="not found\n", content_type="text/html")
        body = self.web.body(host, target, port=self.port)
        return web.Response(body=body, content_type="text/html", charset="utf-8")
