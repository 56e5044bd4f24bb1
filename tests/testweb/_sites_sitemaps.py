"""Test-web hosts with sitemaps: pages linked from nowhere but a sitemap, and sitemap
files that are gzip'd, plain text, indexes, redirected, missing, or hostile."""

from __future__ import annotations

import asyncio
import functools
import gzip
import zlib
from datetime import UTC, datetime

from aiohttp import web

from tests.testweb._model import (
    ALLOW_ALL,
    HTML,
    Context,
    Resource,
    RobotsGroup,
    RobotsRules,
    Site,
    SitemapDoc,
    document,
    redirect,
)

MAIN = "sitemaps.test"
CDN = "cdn.sitemaps.test"
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
XML = "application/xml"
# sitemaps.test pages that nothing links to: a correct crawl finds each in a sitemap.
HIDDEN = (
    "/hidden/plain/1",
    "/hidden/plain/2",
    "/hidden/gz/fresh",
    "/hidden/gz/unknown",
    "/hidden/gz/old",
    "/hidden/encoded/1",
    "/hidden/text/1",
    "/hidden/text/2",
    "/hidden/malformed/1",
    "/hidden/bomb/1",
    "/hidden/moved/1",
    "/hidden/cross/1",
)
BOMB_INFLATED = 60 * 1024 * 1024  # past the 50 MiB a sitemap may inflate to
MANY = 50_010  # URLs in one file, past the 50,000 a sitemap may list


def _urlset(entries: list[tuple[str, str | None]]) -> bytes:
    items = "".join(
        f"<url><loc>{url}</loc>" + (f"<lastmod>{mod}</lastmod>" if mod else "") + "</url>\n"
        for url, mod in entries
    )
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS}">\n'
    return (head + items + "</urlset>\n").encode()


def _index(urls: list[str]) -> bytes:
    items = "".join(f"<sitemap><loc>{u}</loc></sitemap>\n" for u in urls)
    return f'<?xml version="1.0"?>\n<sitemapindex xmlns="{NS}">\n{items}</sitemapindex>\n'.encode()


@functools.lru_cache(maxsize=2)
def _bomb(first: str) -> bytes:
    """A gzip'd urlset: one URL, then white space inflating past 50 MiB (about 60 KB)."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = deflate.compress(f'<urlset xmlns="{NS}"><url><loc>{first}</loc></url>'.encode())
    chunk = b" " * (1 << 20)
    for _ in range(BOMB_INFLATED // len(chunk)):
        out += deflate.compress(chunk)
    return out + deflate.compress(b"</urlset>") + deflate.flush()


def _xml(body: bytes, doc: SitemapDoc, *, content_type: str = XML) -> Resource:
    return Resource(200, content_type, body, sitemap=doc)


def sitemap_sites(ctx: Context) -> list[Site]:
    """sitemaps.test (robots.txt Sitemap lines, /sitemap.xml, an index of every kind of
    file) and cdn.sitemaps.test (a sitemap for sitemaps.test, granted by its robots.txt)."""
    main = Site(MAIN, ctx)
    cdn = Site(CDN, ctx, robots=ALLOW_ALL)
    u, c = main.url, cdn.url
    elsewhere = ctx.url("books.test", "/only-in-a-foreign-sitemap")
    main.robots = RobotsRules(
        (RobotsGroup(("*",), (("disallow", "/private/"),)),),
        sitemaps=(
            u("/maps/index.xml"),
            u("/maps/news.txt"),
            u("/private/sitemap.xml"),
            c("/for-main/sitemap.xml"),
        ),
    )
    r = main.routes
    main.text_page("/", "Sitemaps test home", [("/about", "About")])
    main.text_page("/about", "About the sitemaps test")
    for path in HIDDEN:
        main.text_page(path, f"Only in a sitemap: {path}")
    main.text_page("/private/listed", "Listed but disallowed")

    plain = [u("/hidden/plain/1"), u("/hidden/plain/2"), u("/private/listed")]
    r["/sitemap.xml"] = _xml(
        _urlset([(x, None) for x in [*plain, elsewhere]]),
        SitemapDoc("urlset", urls=tuple(plain), refused=(elsewhere,)),
    )
    today = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    gz = [
        (u("/hidden/gz/old"), "2001-01-01"),
        (u("/hidden/gz/unknown"), None),
        (u("/hidden/gz/fresh"), today),
    ]
    r["/maps/pages.xml.gz"] = _xml(
        gzip.compress(_urlset(gz)),
        SitemapDoc("urlset", urls=tuple(x for x, _ in gz)),
        content_type="application/gzip",
    )
    r["/maps/encoded.xml"] = Resource(
        200,
        XML,
        gzip.compress(_urlset([(u("/hidden/encoded/1"), "2025-06-01")])),
        headers=(("Content-Encoding", "gzip"),),
        sitemap=SitemapDoc("urlset", urls=(u("/hidden/encoded/1"),)),
    )
    text = [u("/hidden/text/1"), u("/hidden/text/2")]
    r["/maps/news.txt"] = _xml(
        ("\n".join([*text, "not a url", ""])).encode(),
        SitemapDoc("text", urls=tuple(text)),
        content_type="text/plain; charset=utf-8",
    )
    r["/maps/loop.xml"] = _xml(_index([u("/maps/index.xml")]), SitemapDoc("index"))
    r["/maps/hostile/dtd.xml"] = _xml(
        b'<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
        b' <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">\n'
        b' <!ENTITY xxe SYSTEM "file:///etc/passwd">\n]>\n'
        + f'<urlset xmlns="{NS}"><url><loc>{u("/")}&lol2;&xxe;</loc></url></urlset>'.encode(),
        SitemapDoc("none", error="DTD not allowed"),
    )
    r["/maps/hostile/namespace.xml"] = _xml(
        _urlset([(u("/hidden/never/namespace"), None)]).replace(
            NS.encode(), b"http://www.sitemaps.org/schemas/sitemap/9.9"
        ),
        SitemapDoc("none", error="wrong namespace", refused=(u("/hidden/never/namespace"),)),
    )
    r["/maps/hostile/malformed.xml"] = _xml(
        _urlset([(u("/hidden/malformed/1"), None)]).replace(b"</urlset>", b"<url><loc>&&</url>"),
        SitemapDoc("urlset", urls=(u("/hidden/malformed/1"),), error="malformed XML"),
    )

    async def bomb(_request: web.BaseRequest) -> web.StreamResponse:
        body = await asyncio.to_thread(_bomb, u("/hidden/bomb/1"))
        return web.Response(body=body, content_type="application/gzip")

    r["/maps/hostile/bomb.xml.gz"] = Resource(
        200,
        "application/gzip",
        serve=bomb,
        sitemap=SitemapDoc("urlset", urls=(u("/hidden/bomb/1"),), error="over 50 MiB decoded"),
    )
    many = "\n".join(ctx.url("books.test", f"/many/{n}") for n in range(MANY))
    r["/maps/hostile/many.txt"] = _xml(
        many.encode(),
        SitemapDoc("text", error="more than 50,000 URLs"),
        content_type="text/plain",
    )
    r["/maps/redirect.xml"] = redirect(301, u("/maps/moved.xml"))
    r["/maps/moved.xml"] = _xml(
        _urlset([(u("/hidden/moved/1"), None)]),
        SitemapDoc("urlset", urls=(u("/hidden/moved/1"),)),
    )
    r["/maps/soft404.xml"] = Resource(200, HTML, document("Oops", "<p>No such page.</p>"))
    children = [
        "/maps/pages.xml.gz",
        "/maps/encoded.xml",
        "/maps/loop.xml",
        "/maps/hostile/dtd.xml",
        "/maps/hostile/namespace.xml",
        "/maps/hostile/malformed.xml",
        "/maps/hostile/bomb.xml.gz",
        "/maps/hostile/many.txt",
        "/maps/redirect.xml",
        "/maps/missing.xml",
        "/maps/soft404.xml",
    ]
    r["/maps/index.xml"] = _xml(
        _index([u(p) for p in children] + [u("/maps/index.xml"), ctx.url("books.test", "/x.xml")]),
        SitemapDoc("index", sitemaps=tuple(u(p) for p in children)),
    )
    r["/private/sitemap.xml"] = _xml(
        _urlset([(u("/hidden/never/private-map"), None)]),
        SitemapDoc("urlset", urls=(u("/hidden/never/private-map"),)),
    )
    main.text_page("/hidden/never/private-map", "Only in a disallowed sitemap")

    cdn.text_page("/", "The CDN of the sitemaps test")
    cross = [u("/hidden/cross/1"), c("/for-main/own")]
    cdn.routes["/for-main/sitemap.xml"] = _xml(
        _urlset([(x, None) for x in [*cross, ctx.url("books.test", "/cdn-foreign")]]),
        SitemapDoc("urlset", urls=tuple(cross), refused=(ctx.url("books.test", "/cdn-foreign"),)),
    )
    cdn.text_page("/for-main/own", "A CDN page only its sitemap lists")
    ungranted = u("/hidden/never/ungranted")
    cdn.routes["/sitemap.xml"] = _xml(
        _urlset([(ungranted, None)]), SitemapDoc("urlset", refused=(ungranted,))
    )
    main.text_page("/hidden/never/ungranted", "Listed only by a sitemap without the right")
    return [main, cdn]
