"""The sample web: a deterministic, realistic web of many hosts for demos and benchmarks.

    web = SampleWeb(hosts=40, pages_per_host=100, seed=1)
    async with SampleWebServer(web) as srv:
        crawl(web.seeds(port=srv.port), resolve=srv.resolve_map())

Hosts are named ``news-03.sample``, ``shop-12.sample``, ``blog-07.sample``,
``wiki-00.sample`` (the four templates in turn). Each has exactly ``pages_per_host``
HTML pages: a home page ``/`` linking its sections, section listings (``/world/``,
``/world/page/2/``, ...) linking every article, the articles, a shop's bounded colour
facets (``/kitchen/color-red/``), and info pages (``/about/``, ...) to make up the
count. Every page is 20 to 60 links (mostly on the host, one to three to other hosts,
the host's one stale ``/archive/NNNN/`` link, and on one page in fifty a broken
``.../missing-N/``: a few per cent of all URLs answer 404, as on a real site) and a
size within ``page_bytes``. robots.txt allows all, except about one host in seven (and
host index 2) disallowing ``/search/`` (which their pages link, and which is not a
page), and host index 1 having ``Crawl-delay: 2``. About 1.5 % of articles repeat
another article's bytes exactly and 1.5 % repeat another article's text (possibly from
another host of the same kind) in their own page furniture.

With ``sitemap_only=N`` each host also has sitemaps (robots.txt names ``/sitemap.xml``,
an index of a gzip'd urlset of every linked page with ``lastmod`` dates and a text
file) and N of its ``pages_per_host`` pages are articles no page links to, listed only
in its sitemaps (``sitemap_only_urls``): a crawl finds them there or not at all.

Same arguments, same bytes. Absolute links to other hosts carry the port the web is
served on (``port``, default 80, i.e. none in the URL), so pages are rendered for a
port. Run ``python -m trawl.testing.sampleweb serve --hosts N --pages M`` to serve one
in the foreground, or ``... write DIR --port P`` for static files and an nginx config.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import signal
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import web

from trawl.testing import _sample_sitemaps as sitemaps
from trawl.testing._sample_render import RenderContext, render
from trawl.testing._sample_site import HostPlan, distinctive_phrase, host_name, plan_host
from trawl.testing._sample_text import text_generator
from trawl.testing.requestlog import RequestLog
from trawl.testing.vhost import LOOPBACK, ServedWeb, VirtualHostServer, nginx_config

__all__ = ["SampleWeb", "SampleWebServer"]

_SEARCH_PAGE = (
    b"<!DOCTYPE html><html><head><title>Search</title></head>"
    b"<body><p>No results.</p></body></html>\n"
)
_NOT_FOUND = (
    b"<!DOCTYPE html><html><head><title>Not found</title></head><body><h1>404</h1></body></html>\n"
)


class SampleWeb:
    """A deterministic web of ``hosts`` hosts with ``pages_per_host`` pages each."""

    def __init__(
        self,
        hosts: int,
        pages_per_host: int,
        seed: int = 0,
        page_bytes: tuple[int, int] = (15_000, 80_000),
        sitemap_only: int = 0,
    ) -> None:
        low, high = page_bytes
        if hosts < 1 or pages_per_host < 3:
            raise ValueError("a sample web needs at least 1 host and 3 pages per host")
        if not 0 <= sitemap_only <= pages_per_host - 3:
            raise ValueError("sitemap_only must leave at least 3 linked pages per host")
        if low < 15_000 or high - low < 5_000:
            raise ValueError("page_bytes must start at 15,000 or more and span 5,000 or more")
        self.seed = seed
        self.pages_per_host = pages_per_host
        self.sitemap_only = sitemap_only
        self.page_bytes = page_bytes
        self.hosts: tuple[str, ...] = tuple(host_name(i, hosts) for i in range(hosts))
        self._index = {name: i for i, name in enumerate(self.hosts)}
        self._plans: dict[int, HostPlan] = {}
        self._ctx = RenderContext(
            seed, hosts, pages_per_host, page_bytes, text_generator(seed), self._plan
        )

    def _plan(self, index: int) -> HostPlan:
        plan = self._plans.get(index)
        if plan is None:
            plan = plan_host(
                self.seed, index, len(self.hosts), self.pages_per_host, self.sitemap_only
            )
            self._plans[index] = plan
        return plan

    def plan(self, host: str) -> HostPlan:
        """The page plan of ``host`` (its sections, pages and robots rules)."""
        return self._plan(self._index[host])

    # -- addresses -------------------------------------------------------------
    @staticmethod
    def url(host: str, path: str = "/", *, port: int = 80) -> str:
        return f"http://{host}{'' if port == 80 else f':{port}'}{path}"

    def seeds(self, *, port: int = 80) -> list[str]:
        """The home page of every host."""
        return [self.url(host, "/", port=port) for host in self.hosts]

    def urls(self, *, port: int = 80) -> list[str]:
        """Every HTML page of the web (robots.txt, 404s and /search/ are not pages)."""
        return [self.url(h, p, port=port) for h in self.hosts for p in self.plan(h).pages]

    def _locate(self, url: str) -> tuple[HostPlan, str]:
        parts = urlsplit(url)
        return self.plan(parts.hostname or ""), parts.path or "/"

    # -- content ---------------------------------------------------------------
    def page(self, host: str, path: str, *, port: int = 80) -> bytes | None:
        """The bytes of one page, or None if ``path`` is not a page of ``host``."""
        plan = self.plan(host)
        spec = plan.pages.get(path)
        return None if spec is None else render(self._ctx, plan, spec, port)

    def sitemap_only_urls(self, *, port: int = 80) -> list[str]:
        """The pages no page links to (listed only in their host's sitemaps)."""
        return [self.url(h, p, port=port) for h in self.hosts for p in self.plan(h).hidden]

    def robots_txt(self, host: str, *, port: int = 80) -> bytes:
        plan = self.plan(host)
        sitemap = sitemaps.sitemap_url(plan, port) if self.sitemap_only else None
        return plan.robots_txt(sitemap).encode()

    def sitemap(self, host: str, path: str, *, port: int = 80) -> tuple[bytes, str] | None:
        """(body, content type) of a sitemap file of ``host``, or None (no such file,
        or a web without sitemaps)."""
        if not self.sitemap_only:
            return None
        return sitemaps.sitemap_file(self.seed, self.plan(host), path, port)

    def pages(self, *, port: int = 80) -> Iterator[tuple[str, bytes]]:
        """(URL, body) of every page, host by host."""
        for host in self.hosts:
            plan = self.plan(host)
            for spec in plan.pages.values():
                yield self.url(host, spec.path, port=port), render(self._ctx, plan, spec, port)

    def distinctive_phrase(self, url: str) -> str:
        """Three rare words in a row found in this article's text and no other's
        (exact and near duplicates carry their original's phrase)."""
        plan, path = self._locate(url)
        spec = plan.pages.get(path)
        if spec is None or spec.content is None:
            raise KeyError(f"{url} is not an article of the sample web")
        return distinctive_phrase(self.seed, *spec.content, self.pages_per_host)

    def duplicate_of(self, url: str) -> str | None:
        """The URL whose bytes this page repeats exactly, if any."""
        plan, path = self._locate(url)
        spec = plan.pages.get(path)
        if spec is None or spec.exact_of is None:
            return None
        return self.url(plan.name, spec.exact_of, port=urlsplit(url).port or 80)

    def near_duplicate_of(self, url: str) -> str | None:
        """The article whose text this page repeats in other furniture, if any."""
        plan, path = self._locate(url)
        spec = plan.pages.get(path)
        if spec is None or spec.content is None or spec.exact_of is not None:
            return None
        host, article = spec.content
        if (host, article) == (plan.index, spec.number):
            return None
        source = self._plan(host)
        return self.url(source.name, source.articles[article], port=urlsplit(url).port or 80)

    # -- static export ---------------------------------------------------------
    def write_static(self, directory: str | Path, *, port: int = 8080) -> Path:
        """Write ``<dir>/<host>/<path>/index.html`` and robots.txt for every host, and
        ``<dir>/nginx.conf``: server blocks (listen 127.0.0.1:PORT only) to include in
        an nginx ``http {}`` block. Returns the config's path."""
        root = Path(directory).resolve()
        roots = {}
        for host in self.hosts:
            plan = self.plan(host)
            base = roots[host] = root / host
            base.mkdir(parents=True, exist_ok=True)
            (base / "robots.txt").write_bytes(self.robots_txt(host, port=port))
            for path in sitemaps.PATHS if self.sitemap_only else ():
                found = self.sitemap(host, path, port=port)
                assert found is not None
                (base / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
                (base / path.lstrip("/")).write_bytes(found[0])
            if plan.disallow:
                (base / "search").mkdir(exist_ok=True)
                (base / "search" / "index.html").write_bytes(_SEARCH_PAGE)
            for spec in plan.pages.values():
                folder = base / spec.path.strip("/")
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "index.html").write_bytes(render(self._ctx, plan, spec, port))
        config = root / "nginx.conf"
        config.write_text(nginx_config(roots, port, title="The sample web"))
        return config


class SampleWebServer(ServedWeb):
    """Serves a ``SampleWeb`` on 127.0.0.1 (one aiohttp server, virtual hosts by Host
    header), rendering each page on first request and keeping the bytes in an LRU
    cache of ``cache_bytes``."""

    def __init__(
        self, web_: SampleWeb, *, port: int = 0, cache_bytes: int = 2 * 1024**3, log: bool = False
    ) -> None:
        self.web = web_
        self.log: RequestLog | None = RequestLog() if log else None
        self._server = VirtualHostServer(self._handle, log=self.log, port=port)
        self._cache: collections.OrderedDict[tuple[str, str], bytes] = collections.OrderedDict()
        self._cache_bytes = cache_bytes
        self._cached = 0

    def url(self, host: str, path: str = "/") -> str:
        return self.web.url(host, path, port=self.port)

    def resolve_map(self) -> dict[str, str]:
        return dict.fromkeys(self.web.hosts, LOOPBACK)

    def _body(self, host: str, path: str) -> bytes | None:
        key = (host, path)
        body = self._cache.get(key)
        if body is not None:
            self._cache.move_to_end(key)
            return body
        body = self.web.page(host, path, port=self.port)
        if body is not None:
            self._cache[key] = body
            self._cached += len(body)
            while self._cached > self._cache_bytes and self._cache:
                _, old = self._cache.popitem(last=False)
                self._cached -= len(old)
        return body

    async def _handle(self, request: web.BaseRequest, host: str) -> web.StreamResponse:
        if host not in self.web._index:
            return web.Response(status=421, text="not a sample host\n")
        path = request.raw_path.split("?", 1)[0]
        if path == "/robots.txt":
            robots = self.web.robots_txt(host, port=self.port)
            return web.Response(body=robots, content_type="text/plain")
        sitemap = self.web.sitemap(host, path, port=self.port)
        if sitemap is not None:
            return web.Response(body=sitemap[0], content_type=sitemap[1])
        body = self._body(host, path)
        if body is None and path == "/search/" and self.web.plan(host).disallow:
            body = _SEARCH_PAGE
        if body is None:
            return web.Response(status=404, body=_NOT_FOUND, content_type="text/html")
        return web.Response(body=body, content_type="text/html", charset="utf-8")


async def _serve(args: argparse.Namespace) -> None:
    sample = SampleWeb(
        args.hosts, args.pages, args.seed, (args.min_bytes, args.max_bytes), args.sitemap_only
    )
    async with SampleWebServer(sample, port=args.port) as srv:
        if args.resolve_file:
            lines = "".join(f"{h}={LOOPBACK}\n" for h in sample.hosts)
            await asyncio.to_thread(Path(args.resolve_file).write_text, lines)
        print(f"serving {len(sample.hosts)} hosts on {LOOPBACK}:{srv.port}", file=sys.stderr)
        for seed_url in sample.seeds(port=srv.port):
            print(seed_url)
        sys.stdout.flush()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trawl.testing.sampleweb")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("serve", "write"):
        sub = commands.add_parser(name)
        sub.add_argument("--hosts", type=int, default=20)
        sub.add_argument("--pages", type=int, default=100, help="pages per host")
        sub.add_argument("--seed", type=int, default=0)
        sub.add_argument("--min-bytes", type=int, default=15_000)
        sub.add_argument("--max-bytes", type=int, default=80_000)
        sub.add_argument(
            "--sitemap-only",
            type=int,
            default=0,
            metavar="N",
            help="N pages per host linked from nowhere, listed in the host's sitemaps",
        )
    serve = commands.choices["serve"]
    serve.add_argument("--port", type=int, default=0, help="0: an ephemeral port")
    serve.add_argument("--resolve-file", help="write HOST=127.0.0.1 lines here")
    write = commands.choices["write"]
    write.add_argument("directory")
    write.add_argument("--port", type=int, default=8080, help="the port nginx will listen on")
    args = parser.parse_args(argv)
    if args.command == "serve":
        asyncio.run(_serve(args))
        return 0
    sample = SampleWeb(
        args.hosts, args.pages, args.seed, (args.min_bytes, args.max_bytes), args.sitemap_only
    )
    print(sample.write_static(args.directory, port=args.port))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
