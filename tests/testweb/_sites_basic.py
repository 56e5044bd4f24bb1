"""Test-web hosts that answer correctly: the baseline sites, robots.txt variants, redirects."""

from __future__ import annotations

import html
import itertools
import random
from collections.abc import Callable

from aiohttp import web

from tests.testweb._model import (
    ALLOW_ALL,
    Context,
    Page,
    Resource,
    RobotsGroup,
    RobotsRules,
    Site,
    article_html,
    redirect,
)

BOOK_SECTIONS = ("fiction", "science", "history", "travel")
BOOKS_PER_SECTION = 6
NEWS_SECTIONS = ("world", "tech", "culture")
NEWS_PER_SECTION = 5


def _nav(items: list[tuple[str, str]]) -> Callable[[Page], str]:
    return lambda page: page.nav(items)


def _prose_page(site: Site, path: str, title: str, extra: Callable[[Page], str]) -> Resource:
    rng = random.Random(f"{site.host}{path}")
    article = article_html(site.ctx.text, rng, paragraphs=4)
    header = f"<header>{site.host}</header>"
    return site.add_page(
        path,
        title,
        lambda p: f"{header}\n<main><h1>{html.escape(title)}</h1>\n{article}</main>\n{extra(p)}",
    )


def books(ctx: Context) -> Site:
    """books.test: home, 4 sections, 6 books each, reviews pages for the first two."""
    site = Site("books.test", ctx, robots=ALLOW_ALL)
    menu = [("/", "Home"), *((f"/{s}/", s.title()) for s in BOOK_SECTIONS), ("/about", "About")]
    _prose_page(
        site,
        "/",
        "Books: a well-behaved shop",
        lambda p: p.nav(menu) + p.a(ctx.url("news.test", "/"), "Our friends at the news"),
    )
    _prose_page(site, "/about", "About this shop", lambda p: p.nav(menu))
    for section in BOOK_SECTIONS:
        items = [(f"/{section}/{n}", f"{section.title()} book {n}") for n in range(1, 7)]
        _prose_page(site, f"/{section}/", section.title(), _nav(menu + items))
        for n in range(1, BOOKS_PER_SECTION + 1):
            path = f"/{section}/{n}"
            related = [(f"/{section}/{n % BOOKS_PER_SECTION + 1}", "Next book")]
            if n <= 2:
                related.append((f"{path}/reviews", "Reviews"))
                _prose_page(
                    site, f"{path}/reviews", f"Reviews of {section} book {n}", lambda p: p.nav(menu)
                )
            _prose_page(site, path, f"{section.title()} book {n}", _nav(menu + related))
    return site


def news(ctx: Context) -> Site:
    """news.test: home, 3 sections of 5 articles, an archive; one link to books.test."""
    site = Site("news.test", ctx, robots=ALLOW_ALL)
    menu = [("/", "Front page"), *((f"/{s}/", s.title()) for s in NEWS_SECTIONS)]
    articles = [
        (f"/{s}/2026/{n:02d}/story-{n}", f"{s.title()} story {n}")
        for s in NEWS_SECTIONS
        for n in range(1, NEWS_PER_SECTION + 1)
    ]
    _prose_page(site, "/", "The Test News", lambda p: p.nav([*menu, ("/archive/", "Archive")]))
    _prose_page(site, "/archive/", "Archive", lambda p: p.nav(menu + articles))
    for section in NEWS_SECTIONS:
        mine = [a for a in articles if a[0].startswith(f"/{section}/")]
        _prose_page(site, f"/{section}/", section.title(), _nav(menu + mine))
        for index, (path, title) in enumerate(mine):
            nxt = mine[(index + 1) % len(mine)]
            book = (ctx.url("books.test", f"/fiction/{index + 1}"), "A book we like")
            _prose_page(site, path, title, _nav([*menu, nxt, book]))
    return site


def _simple_site(ctx: Context, host: str, robots: object, paths: list[str]) -> Site:
    """A home page linking to ``paths``, each a prose page."""
    site = Site(host, ctx, robots=robots)  # type: ignore[arg-type]
    site.text_page("/", f"Home of {host}", [(p, p) for p in paths])
    for path in paths:
        if not path.startswith("http"):
            site.text_page(path, f"Page {path}", [("/", "Home")])
    return site


def robots_hosts(ctx: Context) -> list[Site]:
    sites = []
    disallow = RobotsRules(
        (
            RobotsGroup(
                ("*",),
                (
                    ("disallow", "/private/"),
                    ("allow", "/private/open-letter"),
                    ("disallow", "/*.pdf$"),
                    ("disallow", "/search?"),
                    ("disallow", "/~joe/"),
                ),
            ),
        )
    )
    sites.append(
        _simple_site(
            ctx,
            "robots-disallow.test",
            disallow,
            [
                "/public/1",
                "/public/2",
                "/private/secret",
                "/private/open-letter",
                "/files/report.pdf",
                "/files/report.pdf.html",
                "/search",
                "/search?q=books",
                "/%7Ejoe/notes",
            ],
        )
    )
    delay = RobotsRules((RobotsGroup(("*",), (("disallow", ""),), crawl_delay=2),))
    sites.append(_simple_site(ctx, "robots-delay.test", delay, [f"/p/{n}" for n in range(1, 6)]))
    agents = RobotsRules(
        (
            RobotsGroup(("*",), (("disallow", "/members/"), ("disallow", "/drafts/"))),
            RobotsGroup(
                ("trawl",),
                (
                    ("disallow", "/drafts/"),
                    ("allow", "/members/public/"),
                    ("disallow", "/members/"),
                    ("disallow", "/not-for-trawl/"),
                ),
            ),
            RobotsGroup(("GPTBot", "CCBot"), (("disallow", "/"),)),
        )
    )
    sites.append(
        _simple_site(
            ctx,
            "robots-agents.test",
            agents,
            ["/open/1", "/members/public/1", "/members/secret", "/drafts/1", "/not-for-trawl/1"],
        )
    )
    plain = ["/page/1", "/page/2", "/private/1"]
    sites.append(_simple_site(ctx, "robots-404.test", "allow-all", plain))
    sites.append(_simple_site(ctx, "robots-500.test", "unavailable", plain))
    private = RobotsRules((RobotsGroup(("*",), (("disallow", "/private/"),)),))
    flaky = _simple_site(ctx, "robots-503.test", private, plain)
    flaky.routes["/robots.txt"] = _robots_503(flaky, ctx.options.robots_503_count)
    sites.append(flaky)
    moved = _simple_site(ctx, "robots-redirect.test", private, plain)
    moved.routes["/robots.txt"] = redirect(
        301, "/config/robots-real.txt", absolute=moved.url("/config/robots-real.txt")
    )
    moved.routes["/config/robots-real.txt"] = moved.robots_resource()
    moved.robots_files.add("/config/robots-real.txt")
    sites.append(moved)
    # Seven redirects before the file: more than RFC 9309's five, so a crawler may
    # treat robots.txt as unavailable (no rules); the final file disallows all.
    chain = _simple_site(ctx, "robots-redirect-chain.test", "allow-all", plain)
    hops = ["/robots.txt", *(f"/robots/{n}" for n in range(1, 7)), "/robots/final.txt"]
    for here, there in itertools.pairwise(hops):
        chain.routes[here] = redirect(302, there, absolute=chain.url(there))
    chain.robots_files.update(hops)
    final = RobotsRules((RobotsGroup(("*",), (("disallow", "/"),)),))
    chain.routes["/robots/final.txt"] = Resource(200, "text/plain", final.render().encode())
    sites.append(chain)
    huge = _simple_site(ctx, "robots-huge.test", private, plain)
    filler = "".join(
        f"# filler line {n:08d} to push the file past 500 KiB\n" for n in range(14_000)
    )
    huge_text = private.render() + filler + "User-agent: *\nDisallow: /beyond-limit/\n"
    huge.routes["/robots.txt"] = Resource(200, "text/plain", huge_text.encode())
    sites.append(huge)
    garbage_rules = RobotsRules(
        (RobotsGroup(("*",), (("disallow", "/private/"), ("allow", "/private/ok"))),)
    )
    garbage = _simple_site(ctx, "robots-garbage.test", garbage_rules, [*plain, "/private/ok"])
    garbage.routes["/robots.txt"] = Resource(
        200,
        "text/plain",
        b"\xef\xbb\xbfUser-agent: *\n\x00\xff\xfe\x80garbage\x9c\n"
        b"Disallow: /private/\nDisallow /no-colon-line\n\xc3\x28\xa0\xa1 <html>\n"
        b"Allow: /private/ok\n\x1b[31m\n",
    )
    sites.append(garbage)
    ai = RobotsRules(
        (
            RobotsGroup(("GPTBot", "CCBot"), (("disallow", "/"),)),
            RobotsGroup(("*",), (("disallow", ""),)),
        )
    )
    sites.append(_simple_site(ctx, "ai-robots.test", ai, ["/essay/1", "/essay/2"]))
    return sites


def _robots_503(site: Site, failures: int) -> Resource:
    counter = [0]
    rules = site.robots

    async def serve(request: web.BaseRequest) -> web.StreamResponse:
        counter[0] += 1
        if counter[0] <= failures:
            return web.Response(status=503, text="try again later\n", headers={"Retry-After": "1"})
        assert isinstance(rules, RobotsRules)
        return web.Response(text=rules.render(), content_type="text/plain")

    assert isinstance(rules, RobotsRules)
    return Resource(200, "text/plain", rules.render().encode(), serve=serve, note="503 first")


def redirects(ctx: Context) -> Site:
    """redirects.test: every kind of redirect; /landing/* are the targets."""
    rules = RobotsRules((RobotsGroup(("*",), (("disallow", "/forbidden/"),)),))
    site = Site("redirects.test", ctx, robots=rules)
    r = site.routes
    entries: list[str] = []

    def add(path: str, status: int, location: str, absolute: str | None = None) -> None:
        if absolute is None:
            absolute = site.url(location) if location.startswith("/") else location
        r[path] = redirect(status, location, absolute=absolute)
        entries.append(path)

    for status in (301, 302, 307, 308):
        add(f"/{status}", status, f"/landing/{status}")
    add("/chain3/1", 302, "/chain3/2")
    r["/chain3/2"] = redirect(302, "/chain3/3", absolute=site.url("/chain3/3"))
    r["/chain3/3"] = redirect(302, "/landing/chain3", absolute=site.url("/landing/chain3"))
    add("/chain6/1", 302, "/chain6/2")
    for n in range(2, 7):
        there = f"/chain6/{n + 1}" if n < 6 else "/landing/chain6"
        r[f"/chain6/{n}"] = redirect(302, there, absolute=site.url(there))
    add("/loop/a", 302, "/loop/b")
    r["/loop/b"] = redirect(302, "/loop/a", absolute=site.url("/loop/a"))
    add("/self", 302, "/self")
    add("/cross-host", 301, ctx.url("books.test", "/fiction/1"))
    add("/to-disallowed", 302, "/forbidden/page")
    add("/to-ftp", 302, "ftp://ftp.test/file.txt")
    add("/to-mailto", 302, "mailto:someone@example.test")
    add("/relative/start", 302, "../landing/relative", absolute=site.url("/landing/relative"))
    add("/to-private", 302, "http://10.0.0.1/")
    add("/to-metadata", 302, "http://169.254.169.254/latest/meta-data/")
    landings = ["301", "302", "307", "308", "chain3", "chain6", "relative"]
    for name in landings:
        site.text_page(f"/landing/{name}", f"Landing {name}", [("/", "Home")])
    site.text_page("/forbidden/page", "Forbidden by robots.txt", [("/", "Home")])
    site.text_page("/", "Redirects", [(p, p) for p in entries])
    return site
