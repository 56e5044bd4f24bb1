"""Test-web hosts about what pages say: duplicates, canonical links, robots meta tags
and headers, link forms, and AI / text-and-data-mining opt-outs."""

from __future__ import annotations

import functools
import html
import json
import random
from dataclasses import replace

from tests.testweb._model import (
    ALLOW_ALL,
    Context,
    Directive,
    Page,
    Resource,
    Site,
    article_html,
)

CC_BY = "https://creativecommons.org/licenses/by/4.0/"
# content.test paths with the same article text in different page furniture.
NEAR_DUPLICATES = ("/articles/2", "/near/1", "/near/2", "/near/3")
ARTICLES = 5


def _article(ctx: Context, key: str, paragraphs: int = 6) -> str:
    return article_html(ctx.text, random.Random(key), paragraphs=paragraphs)


def _template(page: Page, title: str, article: str, *, date: str = "2026-03-01") -> str:
    nav = page.nav([("/", "Home"), *((f"/articles/{n}", f"Article {n}") for n in range(1, 4))])
    return (
        f"<header><nav>{nav}</nav></header>\n<main><article><h1>{html.escape(title)}</h1>\n"
        f'<p class="date">Published {date}</p>\n{article}</article></main>\n'
        "<footer><p>Content Test Web. All rights reserved.</p></footer>"
    )


def _near_duplicate(page: Page, title: str, article: str, variant: int) -> str:
    rng = random.Random(f"near-{variant}")
    offer = f"Advertisement {variant}: buy {rng.randint(2, 99)} lamps today!"
    ads = f'<aside class="ad"><p>{offer}</p></aside>'
    comments = "".join(
        f"<li>Comment {c} by reader {rng.randint(100, 999)}: nice piece.</li>"
        for c in range(variant)
    )
    extra = page.nav([(f"/near/{(variant % 3) + 1}", "Another version"), ("/sitemap", "Sitemap")])
    # A correction note inside the article: the main text differs from the original's
    # by a line, so only near-duplicate detection (not the exact hash) can join them.
    note = f"<p>Update {variant}: corrected on 2026-03-{10 + variant:02d} at {8 + variant}:15.</p>"
    return (
        _template(page, title, article + note, date=f"2026-03-{10 + variant:02d} {8 + variant}:15")
        + f"\n{ads}\n<section class=comments><ul>{comments}</ul></section>\n<nav>{extra}</nav>"
    )


def content(ctx: Context) -> list[Site]:
    site = Site("content.test", ctx, robots=ALLOW_ALL)
    mirror = Site("mirror.test", ctx, robots=ALLOW_ALL)
    for n in range(1, ARTICLES + 1):
        text = _article(ctx, f"article-{n}")
        site.add_page(
            f"/articles/{n}",
            f"Article {n}",
            functools.partial(_template, title=f"Article {n}", article=text),
        )
    original = _article(ctx, "article-1")
    for target, path in ((site, "/dup/a"), (site, "/dup/b"), (mirror, "/articles/1")):
        target.add_page(path, "Article 1", lambda p: _template(p, "Article 1", original))
    mirror.text_page("/", "Mirror", [("/articles/1", "Mirrored article")])
    second = _article(ctx, "article-2")
    for v in (1, 2, 3):
        site.add_page(
            f"/near/{v}",
            "Article 2",
            functools.partial(_near_duplicate, title="Article 2", article=second, variant=v),
        )
    site.text_page("/sitemap", "Sitemap", [("/", "Home")])
    for query in ("id=5", "id=5&sid=abc123", "id=5&sid=def456"):
        site.add_page(
            f"/item?{query}",
            "Item 5",
            lambda p: f"<p>Item five.</p>{p.nav([('/', 'Home')])}",
            head=lambda p: (
                '<link rel="canonical" '
                f'href="{p.href("/item?id=5", tag="link", rel="canonical")}">\n'
            ),
            canonical=site.url("/item?id=5"),
        )

    def robots_page(
        path: str, *, meta: str = "", header: str = "", directives: tuple[Directive, ...]
    ) -> None:
        target = f"/only-from{path}"
        site.text_page(target, f"Linked only from {path}", [])
        site.add_page(
            path,
            f"Robots signal {path}",
            lambda p: (
                f"<p>Page with {html.escape(meta or header)}.</p>{p.nav([(target, 'onward')])}"
            ),
            head=lambda p: meta and f"{meta}\n",
            headers=(("X-Robots-Tag", header),) if header else (),
            directives=directives,
        )

    robots_page(
        "/meta-noindex",
        meta='<meta name="robots" content="noindex">',
        directives=((None, "noindex"),),
    )
    robots_page(
        "/meta-nofollow",
        meta='<meta name="robots" content="nofollow">',
        directives=((None, "nofollow"),),
    )
    robots_page("/header-noindex", header="noindex", directives=((None, "noindex"),))
    robots_page("/header-nofollow", header="nofollow", directives=((None, "nofollow"),))
    robots_page(
        "/header-gptbot-noindex", header="GPTBot: noindex", directives=(("GPTBot", "noindex"),)
    )
    robots_page(
        "/meta-gptbot-noindex",
        meta='<meta name="GPTBot" content="noindex">',
        directives=(("GPTBot", "noindex"),),
    )
    site.text_page("/nofollowed-target", "Linked with rel=nofollow", [])
    site.add_page(
        "/rel-nofollow",
        "rel=nofollow links",
        lambda p: (
            p.a("/nofollowed-target", "sponsored", rel="nofollow sponsored")
            + p.a("/articles/3", "followed")
        ),
    )
    _link_forms(site)
    site.text_page(
        "/",
        "Content",
        [(f"/articles/{n}", f"Article {n}") for n in range(1, ARTICLES + 1)]
        + [(p, p) for p in ("/dup/a", "/dup/b", "/near/1", "/near/2", "/near/3")]
        + [("/item?id=5&sid=abc123", "item"), ("/item?id=5&sid=def456", "item again")]
        + [
            (p, p)
            for p in ("/meta-noindex", "/meta-nofollow", "/header-noindex", "/header-nofollow")
        ]
        + [(p, p) for p in ("/header-gptbot-noindex", "/meta-gptbot-noindex", "/rel-nofollow")]
        + [
            (p, p)
            for p in ("/base-href", "/link-kinds", "/frames", "/schemes", "/relative/a/b/page")
        ],
    )
    return [site, mirror]


def _link_forms(site: Site) -> None:
    for target in (
        "/base/dir/page",
        "/base/up",
        "/alternate",
        "/area-target",
        "/iframe-target",
        "/frame/a",
        "/frame/b",
        "/schemes-target",
        "/relative/a/sibling",
        "/relative/top",
        "/relative/a/b/same",
        "/escape",
    ):
        site.text_page(target, f"Target {target}", [])
    site.add_page(
        "/base-href",
        "Base href",
        lambda p: p.a("page", "relative to base") + p.a("../up", "up from base"),
        head=lambda p: '<base href="/base/dir/">\n',
        base="/base/dir/",
    )
    site.add_page(
        "/link-kinds",
        "Link kinds",
        lambda p: (
            f'<map name="m">'
            '<area shape="rect" coords="0,0,1,1" '
            f'href="{p.href("/area-target", tag="area")}" alt="a"></map>'
            f'<iframe src="{p.href("/iframe-target", tag="iframe")}"></iframe>'
        ),
        head=lambda p: (
            f'<link rel="canonical" href="{p.href("/link-kinds", tag="link", rel="canonical")}">\n'
            f'<link rel="alternate" href="{p.href("/alternate", tag="link", rel="alternate")}">\n'
        ),
        canonical=site.url("/link-kinds"),
    )
    page = Page(site.url("/frames"))
    frames = (
        '<!DOCTYPE html><html><head><title>Frames</title></head><frameset cols="50%,50%">'
        f'<frame src="{page.href("/frame/a", tag="frame")}">'
        f'<frame src="{page.href("/frame/b", tag="frame")}">'
        "</frameset></html>"
    ).encode()
    site.routes["/frames"] = Resource(200, body=frames, links=tuple(page.links))
    site.add_page(
        "/schemes",
        "Other schemes",
        lambda p: (
            p.a("mailto:editor@content.test", "mail")
            + p.a("javascript:void(0)", "script")
            + p.a("data:text/html,<p>inline</p>", "data")
            + p.a("tel:+15555550100", "phone")
            + p.a("/schemes-target", "the only real link")
        ),
    )
    site.add_page(
        "/relative/a/b/page",
        "Relative links",
        lambda p: (
            p.a("../sibling", "..")
            + p.a("../../top", "../..")
            + p.a("./same", ".")
            + p.a("../../../../escape", "above the root")
        ),
    )


TDM_POLICY_PATH = "/tdm-policy.json"


def tdmrep_entries(ctx: Context, host: str) -> list[dict[str, object]]:
    policy = ctx.url(host, TDM_POLICY_PATH)
    return [
        {"location": "/reserved/*", "tdm-reservation": 1, "tdm-policy": policy},
        {"location": "/free/*", "tdm-reservation": 0},
    ]


def ai(ctx: Context) -> list[Site]:
    site = Site("ai.test", ctx, robots=ALLOW_ALL)
    policy = ctx.url("ai.test", TDM_POLICY_PATH)
    odrl = json.dumps(
        {
            "@context": "http://www.w3.org/ns/odrl.jsonld",
            "@type": "Offer",
            "uid": policy,
            "permission": [
                {"target": "*", "action": "tdm:mine", "duty": [{"action": "compensate"}]}
            ],
        }
    ).encode()
    site.routes[TDM_POLICY_PATH] = Resource(200, "application/json", odrl)

    def signal(
        path: str,
        *,
        meta: str = "",
        headers: tuple[tuple[str, str], ...] = (),
        opt_outs: tuple[str, ...] = (),
        license: str | None = None,
    ) -> None:
        site.add_page(
            path,
            f"AI signal {path}",
            lambda p: f"<p>{html.escape(path)}: {html.escape(meta or str(headers))}</p>",
            head=lambda p: meta and f"{meta}\n",
            headers=headers,
            opt_outs=opt_outs,
            license=license,
        )

    signal(
        "/meta-noai",
        meta='<meta name="robots" content="noai, noimageai">',
        opt_outs=("noai", "noimageai"),
    )
    signal("/header-noai", headers=(("X-Robots-Tag", "noai"),), opt_outs=("noai",))
    signal(
        "/tdm-header",
        headers=(("tdm-reservation", "1"), ("tdm-policy", policy)),
        opt_outs=("tdm-reservation",),
    )
    signal(
        "/tdm-meta", meta='<meta name="tdm-reservation" content="1">', opt_outs=("tdm-reservation",)
    )
    signal("/license-link", meta=f'<link rel="license" href="{CC_BY}">', license=CC_BY)
    site.add_page(
        "/license-anchor",
        "AI signal /license-anchor",
        lambda p: f"<p>Licensed {p.a(CC_BY, 'CC BY 4.0', rel='license')}.</p>",
        license=CC_BY,
    )
    signal("/open")
    paths = [
        "/meta-noai",
        "/header-noai",
        "/tdm-header",
        "/tdm-meta",
        "/license-link",
        "/license-anchor",
        "/open",
    ]
    site.text_page("/", "AI opt-outs", [(p, p) for p in paths])

    rep = Site("tdmrep.test", ctx, robots=ALLOW_ALL)
    entries = tdmrep_entries(ctx, rep.host)
    rep.routes["/.well-known/tdmrep.json"] = Resource(
        200, "application/json", json.dumps(entries, indent=2).encode()
    )
    rep.routes[TDM_POLICY_PATH] = replace(site.routes[TDM_POLICY_PATH])
    pages = ["/reserved/1", "/reserved/2", "/free/1"]
    for path in pages:
        reserved = any(
            _location_match(str(e["location"]), path) and e["tdm-reservation"] == 1 for e in entries
        )
        rep.add_page(
            path,
            f"TDMRep {path}",
            functools.partial(_home_link, text=path),
            opt_outs=("tdm-reservation",) if reserved else (),
        )
    rep.text_page("/", "TDMRep", [(p, p) for p in pages])
    return [site, rep]


def _home_link(page: Page, text: str) -> str:
    return f"<p>{html.escape(text)}</p>{page.nav([('/', 'Home')])}"


def _location_match(pattern: str, path: str) -> bool:
    return path.startswith(pattern[:-1]) if pattern.endswith("*") else path == pattern
