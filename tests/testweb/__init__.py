"""The hostile test web: many virtual hosts on one loopback server, each misbehaving
in one documented way, plus an oracle of what a correct crawl must do with them.

    async with TestWeb(header_delay=0.5) as web:
        seeds = [web.url("books.test")]
        crawl(seeds, resolve=web.resolve_map())          # the crawler under test
        expected = web.expected(seeds)
        assert web.log.max_concurrency("books.test") == 1

One aiohttp server on 127.0.0.1 and an ephemeral port serves every host, dispatching
on the Host header, so URLs look like ``http://books.test:PORT/fiction/1``; a crawler
reaches the names through its resolver override (``web.resolve_map()``). Nothing is
ever sent anywhere else: redirects to 10.0.0.1 only name the address. Unknown hosts
get 421, unknown paths 404. Every site's pages are generated deterministically.

Hosts and paths (robots.txt allows everything unless said otherwise):

Baseline
  books.test   / /about, sections /fiction/ /science/ /history/ /travel/, books
               /<section>/1../6, /<section>/1/reviews and /2/reviews; / links news.test.
  news.test    / /archive/, sections /world/ /tech/ /culture/, articles
               /<section>/2026/NN/story-N (5 each); each links one books.test book.
robots.txt (each host: / linking every path listed)
  robots-disallow.test  Disallow /private/ (Allow /private/open-letter), /*.pdf$,
               /search? and /~joe/; pages /public/1 /public/2 /private/secret
               /private/open-letter /files/report.pdf /files/report.pdf.html /search
               /search?q=books /%7Ejoe/notes (percent-encoded ~).
  robots-delay.test     Crawl-delay: 2; /p/1../p/5.
  robots-agents.test    `*`: Disallow /members/ /drafts/; `trawl`: Disallow /drafts/
               /not-for-trawl/ /members/ but Allow /members/public/; GPTBot and CCBot:
               Disallow /. Pages /open/1 /members/public/1 /members/secret /drafts/1
               /not-for-trawl/1.
  robots-404.test       no robots.txt (404): everything allowed. /page/1 /page/2 /private/1
  robots-500.test       robots.txt always 500: fetch nothing else. Same pages.
  robots-503.test       robots.txt 503 (Retry-After: 1) for the first ``robots_503_count``
               requests of this server, then 200 with Disallow /private/.
  robots-redirect.test  /robots.txt 301 -> /config/robots-real.txt (Disallow /private/).
  robots-redirect-chain.test  /robots.txt -> /robots/1 -> ... -> /robots/6 ->
               /robots/final.txt (Disallow /): 7 hops, more than RFC 9309's five, so a
               crawler may treat it as unavailable, i.e. no rules (the oracle does).
  robots-huge.test      Disallow /private/, then > 500 KiB of comment lines, then
               Disallow /beyond-limit/ (past the parse limit; nothing links there).
  robots-garbage.test   UTF-8 BOM, binary junk lines, a line without colon between
               Disallow /private/ and Allow /private/ok.
  ai-robots.test        GPTBot and CCBot: Disallow /; everyone else allowed. /essay/1 /essay/2
redirects.test (robots: Disallow /forbidden/)
  /301 /302 /307 /308 -> /landing/<code>; /chain3/1 -> /chain3/2 -> /chain3/3 ->
  /landing/chain3 (3 hops); /chain6/1 -> ... -> /chain6/6 -> /landing/chain6 (6 hops,
  too many); /loop/a <-> /loop/b; /self -> /self; /cross-host -> books.test/fiction/1;
  /to-disallowed -> /forbidden/page; /to-ftp -> ftp://ftp.test/file.txt; /to-mailto ->
  mailto:; /relative/start -> "../landing/relative"; /to-private -> http://10.0.0.1/;
  /to-metadata -> http://169.254.169.254/latest/meta-data/.
errors.test
  /404 /410 /500 (always); /flaky: 500 for the first ``flaky_failures`` requests, then
  200; /unavailable: 503 + Retry-After ``retry_after`` for ``unavailable_failures``
  requests, then 200; /ratelimited: 429 + Retry-After ``ratelimit_retry_after`` for
  ``ratelimit_failures`` requests, then 200 (counters per server); /close-before-headers
  (closed, nothing sent); /reset-mid-body (200, Content-Length 100000, 4 KiB, then RST);
  /short-body (Content-Length 100000, 1000 bytes, FIN); /bad-status-line; /garbage-headers
  (lines without colon, binary and empty names); /huge-headers (a 100 KB header block).
slow.test
  /slow-headers (headers after ``header_delay`` s); /trickle (headers, then 1 byte per
  ``trickle_interval`` s forever); /stall (Content-Length 100000, ``stall_after`` bytes,
  then nothing until the client leaves).
bodies.test
  /pdf /png /text /octet (application/pdf, image/png, text/plain,
  application/octet-stream); /no-content-type (HTML, no Content-Type header);
  /big (``big_body_bytes``, default 12 MiB, streamed, with its Content-Length: refused
  unread by a crawl whose cap is smaller); /big-chunked (``big_body_bytes`` of prose,
  chunked, no Content-Length: cut at the cap); /gzip-long (gzip, under the cap on the
  wire, ``big_body_bytes`` of prose once inflated: cut at the decoded cap); /gzip-bomb
  (Content-Encoding: gzip, about 1 MiB that inflates to ``bomb_bytes``, default
  1.06 GiB); /wrong-encoding
  (claims gzip, is plain); /malformed (unclosed tags, NUL bytes; links
  /malformed-target); /charset/latin1-header-utf8-body; /charset/cp1251-meta (no
  header charset, meta windows-1251, cp1251 bytes); /charset/shift-jis; /xhtml
  (application/xhtml+xml).
encodings.test (``refused`` on a resource names the outcome the oracle expects)
  /coding/br /coding/zstd (a page in a coding the crawler offers; links /via/br,
  /via/zstd); /coding/unknown-binary (bzip2), /coding/compress, /coding/stacked
  ("gzip, br"), /coding/br-noise (br label, random bytes brotli rejects),
  /coding/gzip-noise (gzip label, random bytes): no document, the content coding is
  refused; /coding/br-stored-noise (random bytes brotli reads as stored data);
  /coding/br-bomb /coding/zstd-bomb (inflate to ``bomb_bytes`` of zeros after an HTML
  prefix); /charset/utf16-header-ascii-body /charset/utf32-header-ascii-body (English
  ASCII under a lying charset); /charset/utf16-undeclared (UTF-16LE, no BOM, no
  charset); /charset/few-bad-bytes (UTF-8 with four bad bytes); /binary/random
  /binary/nuls /binary/png /binary/zip /binary/random-utf8-label (as text/html):
  binary content.
content.test and mirror.test
  /articles/1../5 (distinct, one template); /dup/a /dup/b and mirror.test/articles/1:
  the same bytes as /articles/1; /near/1../3: /articles/2's text with other dates, ads,
  navigation and comments; /item?id=5&sid=abc123 and &sid=def456 with rel=canonical
  /item?id=5; /meta-noindex /meta-nofollow /header-noindex /header-nofollow
  (X-Robots-Tag) /header-gptbot-noindex (X-Robots-Tag: GPTBot: noindex)
  /meta-gptbot-noindex, each linking /only-from<its path>; /rel-nofollow (rel=nofollow
  link to /nofollowed-target); /base-href (<base href="/base/dir/">: links
  /base/dir/page and /base/up); /link-kinds (area, iframe, link rel=canonical and
  alternate); /frames (a frameset: /frame/a /frame/b); /schemes (mailto:, javascript:,
  data:, tel: and /schemes-target); /relative/a/b/page (../sibling, ../../top, ./same,
  ../../../../escape).
ai.test
  /meta-noai (robots noai, noimageai) /header-noai (X-Robots-Tag: noai) /tdm-header
  (tdm-reservation: 1, tdm-policy) /tdm-meta (<meta name=tdm-reservation>)
  /license-link (<link rel=license> CC BY 4.0) /license-anchor (<a rel=license>) /open;
  /tdm-policy.json (the ODRL policy the headers name).
tdmrep.test
  /.well-known/tdmrep.json reserves /reserved/* (tdm-reservation 1, a tdm-policy on
  this host) and not /free/*; pages /reserved/1 /reserved/2 /free/1.
traps.test
  /calendar/Y/M (previous and next month, forever); /facets?color=&size=&sort=&page=
  (every page links every other value and the next page); /session/1../10 (links carry
  a fresh random ?sid= every time, rel=canonical without it); /repeat/a/b/ (links
  /repeat/a/b/a/b/ ...); /long/x (links a path twice as long; 414 past 64 KiB);
  /many-links (5,000 links to /many/1../5000); /deep/1 -> ... -> /deep/100;
  /million-links (1,000,000 links to /million/1..1000000, about 31 MB, generated while
  sent and never stored; not linked from /: seed it, or /to-million-links, a page
  linking it, to reach it one fetch later).
js.test and jscdn.test (``_sites_js.py``: pages built by their scripts)
  / (static index); application shells /app/articles (links added by script),
  /app/articles/1..3 (text from the JSON API /api/articles/N; each loads the third
  party jscdn.test/lib.js), /app/about (text in the script; links /hidden), /feed (an
  endless scroll feed), /reach (tries loopback, private addresses, POST, beacon,
  WebSocket, popup, navigation away), /forever (never quiet), /robots-api (its text
  behind /api/private/, which robots.txt disallows), /busy (a script that loops
  forever). Without a browser a crawl finds only the shells.
sitemaps.test and cdn.sitemaps.test (every other host: /sitemap.xml is a 404)
  robots.txt Disallow /private/ and Sitemap: /maps/index.xml, /maps/news.txt (text),
  /private/sitemap.xml (disallowed: never fetched), cdn.sitemaps.test/for-main/sitemap.xml
  (granted: it lists /hidden/cross/1 of this host). / links /about only; the pages
  /hidden/... are linked from nowhere (``HIDDEN``). /sitemap.xml: two hidden pages, a
  disallowed one, a books.test URL (foreign host). /maps/index.xml lists: pages.xml.gz
  (a gzip file: /hidden/gz/fresh, /unknown, /old with lastmods today, none, 2001),
  encoded.xml (Content-Encoding: gzip), loop.xml (an index listing index.xml), itself,
  a books.test sitemap (foreign), and the hostile: dtd.xml (billion laughs and an
  external entity), namespace.xml (a wrong namespace), malformed.xml (one URL, then
  broken), bomb.xml.gz (one URL, then inflating to 60 MiB), many.txt (50,010 URLs),
  redirect.xml (301 -> moved.xml), missing.xml (404), soft404.xml (200 HTML).
  cdn.sitemaps.test/sitemap.xml lists a sitemaps.test page (no grant: refused).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from types import TracebackType

from aiohttp import web

from tests.testweb import _sites_basic as basic
from tests.testweb import _sites_broken as broken
from tests.testweb import _sites_content as content
from tests.testweb import _sites_decoding as decoding
from tests.testweb import _sites_js as javascript
from tests.testweb import _sites_sitemaps as sitemaps
from tests.testweb import _sites_traps as traps
from tests.testweb._expect import ExpectedCrawl, expect, robots_violations
from tests.testweb._model import Context, Options, Resource, Site, normal_url
from trawl.testing._sample_text import text_generator
from trawl.testing.requestlog import RequestLog, RequestRecord
from trawl.testing.vhost import LOOPBACK, VirtualHostServer

__all__ = ["ExpectedCrawl", "RequestLog", "RequestRecord", "TestWeb"]


class TestWeb:
    """The hostile multi-host test web (see the module docstring for every URL).

    Keyword arguments tune the slow and flaky behaviours so tests stay fast:
    ``header_delay`` (s before /slow-headers answers), ``trickle_interval``,
    ``stall_after`` (bytes), ``flaky_failures``, ``unavailable_failures``,
    ``retry_after``, ``ratelimit_failures``, ``ratelimit_retry_after``,
    ``robots_503_count``, ``big_body_bytes``, ``bomb_bytes`` (inflated size), and
    ``port`` (0: ephemeral).
    """

    __test__ = False  # not a pytest test class, despite the name

    def __init__(
        self,
        *,
        header_delay: float = 3.0,
        trickle_interval: float = 0.2,
        stall_after: int = 1024,
        flaky_failures: int = 2,
        unavailable_failures: int = 1,
        retry_after: int = 3,
        ratelimit_failures: int = 1,
        ratelimit_retry_after: int = 2,
        robots_503_count: int = 3,
        big_body_bytes: int = 12 * 1024 * 1024,
        bomb_bytes: int = 1024**3 + 64 * 1024**2,
        port: int = 0,
    ) -> None:
        self.options = Options(
            header_delay=header_delay,
            trickle_interval=trickle_interval,
            stall_after=stall_after,
            flaky_failures=flaky_failures,
            unavailable_failures=unavailable_failures,
            retry_after=retry_after,
            ratelimit_failures=ratelimit_failures,
            ratelimit_retry_after=ratelimit_retry_after,
            robots_503_count=robots_503_count,
            big_body_bytes=big_body_bytes,
            bomb_bytes=bomb_bytes,
        )
        self.log = RequestLog()
        self._server = VirtualHostServer(self._handle, log=self.log, port=port)
        self._sites: dict[str, Site] = {}

    # -- lifecycle -------------------------------------------------------------
    async def __aenter__(self) -> TestWeb:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        port = await self._server.start()
        ctx = Context(port, self.options, text_generator(7, 2048))
        sites = [
            basic.books(ctx),
            basic.news(ctx),
            *basic.robots_hosts(ctx),
            basic.redirects(ctx),
            broken.errors(ctx),
            broken.slow(ctx),
            broken.bodies(ctx),
            decoding.decoding(ctx),
            *content.content(ctx),
            *content.ai(ctx),
            traps.traps(ctx),
            *sitemaps.sitemap_sites(ctx),
            *javascript.js(ctx),
        ]
        self._sites = {site.host: site for site in sites}

    async def stop(self) -> None:
        await self._server.stop()

    # -- addresses -------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._server.port

    @property
    def hosts(self) -> tuple[str, ...]:
        """Every host name this web serves (available once started)."""
        return tuple(self._sites)

    def url(self, host: str, path: str = "/") -> str:
        """``http://HOST:PORT/PATH`` for one of the hosts."""
        if host not in self._sites:
            raise KeyError(f"{host!r} is not a host of the test web")
        return f"http://{host}:{self.port}{path}"

    def resolve_map(self) -> dict[str, str]:
        """Every host name -> "127.0.0.1", for the crawler's resolver override."""
        return dict.fromkeys(self._sites, LOOPBACK)

    # -- what is served --------------------------------------------------------
    def resource(self, url: str) -> Resource:
        """The description of what ``url`` answers (status, links, headers, ...)."""
        from urllib.parse import urlsplit

        parts = urlsplit(normal_url(url))
        return self._sites[parts.hostname or ""].resource(parts.path, parts.query)

    def expected(
        self,
        seeds: Iterable[str],
        *,
        user_agents: Iterable[str] = ("trawl",),
        max_depth: int | None = None,
        scope: Iterable[str] | None = None,
        max_redirects: int = 5,
        follow_nofollow_links: bool = True,
        sitemaps: bool = True,
        render: str = "never",
        render_hosts: Iterable[str] = (),
    ) -> ExpectedCrawl:
        """What a correct crawl from ``seeds`` fetches, stores and must never fetch.

        ``user_agents``: product tokens whose robots rules and robots directives all
        apply (add "GPTBot", "CCBot" for a training crawl). ``scope``: host names
        the crawl may enter (default: the seeds' hosts). ``max_depth``: link hops
        from a seed (redirects do not count; None: unlimited, so do not seed a trap
        without it). Links from pages with meta/header nofollow are never followed;
        links with rel=nofollow are unless ``follow_nofollow_links`` is False.
        ``sitemaps``: the crawl reads each host's sitemaps (its default).
        ``render``: the crawl's render mode (never, auto, always), and ``render_hosts``
        the other hosts rendered pages may load from (see ``_sites_js.py``).
        """
        return expect(
            self._sites,
            seeds,
            user_agents=user_agents,
            max_depth=max_depth,
            scope=scope,
            max_redirects=max_redirects,
            follow_nofollow_links=follow_nofollow_links,
            sitemaps=sitemaps,
            render=render,
            render_hosts=render_hosts,
        )

    def robots_violations(self, user_agents: Iterable[str] = ("trawl",)) -> list[RequestRecord]:
        """Logged requests that break robots.txt for ``user_agents`` (see the oracle)."""
        return robots_violations(self._sites, self.log, user_agents)

    def duplicate_groups(self) -> list[frozenset[str]]:
        """Groups of URLs that answer byte-identical 200 HTML pages."""
        by_body: defaultdict[bytes, set[str]] = defaultdict(set)
        for site in self._sites.values():
            for target, resource in site.routes.items():
                if resource.status == 200 and resource.is_html and resource.serve is None:
                    by_body[resource.body].add(site.url(target))
        return [frozenset(urls) for urls in by_body.values() if len(urls) > 1]

    def near_duplicate_groups(self) -> list[frozenset[str]]:
        """Groups of URLs with the same article text in different page furniture."""
        return [frozenset(self.url("content.test", p) for p in content.NEAR_DUPLICATES)]

    # -- serving ---------------------------------------------------------------
    async def _handle(self, request: web.BaseRequest, host: str) -> web.StreamResponse:
        site = self._sites.get(host)
        if site is None:
            return web.Response(status=421, text=f"{host!r} is not served here\n")
        path, _, query = request.raw_path.partition("?")
        resource = site.resource(path, query)
        if resource.serve is not None:
            return await resource.serve(request)
        return resource.response()
