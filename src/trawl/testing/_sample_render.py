"""HTML for the sample web: four site templates around generated articles.

Each page is page furniture (header, menus, cookie banner, share buttons, sidebar,
comments, footer) around a main part, filled with generated paragraphs until the
page reaches a size drawn from the sample web's range. Links per page: 20 to 60,
mostly on the same host, a few to other hosts. Broken links are as rare as on a
real site: every page's footer links the host's one stale archive page, and about one
page in fifty has a broken link in its text (``.../missing-N/``), so a few per cent of
a host's URLs answer 404.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from trawl.testing._sample_site import HostPlan, PageSpec, distinctive_phrase
from trawl.testing._sample_text import TextGenerator

# Pages with a broken link of their own (before issue 13: one in two, and a stale
# archive link of its own on every page, so 404s were more than half of all URLs).
BROKEN_LINK_SHARE = 0.02
_MARGIN = 2_500  # the most one paragraph can overshoot a size target by, with slack


@dataclass(frozen=True, slots=True)
class RenderContext:
    seed: int
    hosts: int
    pages_per_host: int
    page_bytes: tuple[int, int]
    text: TextGenerator
    plan: Callable[[int], HostPlan]


class _Links:
    """Collects a page's links while its HTML is written."""

    def __init__(self) -> None:
        self.count = 0

    def a(self, href: str, label: str, cls: str = "") -> str:
        self.count += 1
        attr = f' class="{cls}"' if cls else ""
        return f'<a href="{href}"{attr}>{label}</a>'


def _host_url(name: str, port: int, path: str) -> str:
    return f"http://{name}{'' if port == 80 else f':{port}'}{path}"


def render(ctx: RenderContext, plan: HostPlan, spec: PageSpec, port: int) -> bytes:
    if spec.exact_of is not None:
        return render(ctx, plan, plan.pages[spec.exact_of], port)
    rng = random.Random(f"{ctx.seed}:{plan.name}:{spec.path}")
    low, high = ctx.page_bytes
    target = rng.randint(low + _MARGIN // 2, max(low + _MARGIN // 2, high - _MARGIN))
    links = _Links()
    text = ctx.text
    title, main, content_rng = _main(ctx, plan, spec, rng, links)
    wanted_links = rng.randint(20, 60)
    head, tail = _furniture(ctx, plan, spec, rng, links, title, wanted_links, port)
    parts = [head, main]
    size = len(head) + len(main) + len(tail) + 30
    if size < target:
        # Each paragraph gains 8 characters of markup: ask for a little less text.
        paragraphs = text.prose(content_rng, int((target - size) * 0.985))
        parts.append("".join(f"<p>{p}</p>\n" for p in paragraphs))
    parts.append("</div>\n</article>\n</main>\n" if spec.kind == "article" else "</div>\n</main>\n")
    parts.append(tail)
    return "".join(parts).encode("ascii")


def _main(
    ctx: RenderContext, plan: HostPlan, spec: PageSpec, rng: random.Random, links: _Links
) -> tuple[str, str, random.Random]:
    """The page's title, the start of its main part (left open for more prose), and
    the random stream that more prose comes from (the article's own, for articles)."""
    text = ctx.text
    if spec.kind == "article":
        assert spec.content is not None
        host, article = spec.content
        crng = random.Random(f"{ctx.seed}:article:{host}:{article}")
        title = text.title(crng)
        phrase = distinctive_phrase(ctx.seed, *spec.content, ctx.pages_per_host)
        when = f"{crng.randint(1, 28)} {_month(rng)} {rng.randint(2015, 2026)}"
        byline = f"By {text.person(crng)} | {when}"
        body = [
            f'<main>\n<article>\n<h1 class="title">{title}</h1>\n<p class="byline">{byline}</p>\n'
        ]
        if plan.kind == "shop":
            body.append(_product_box(crng, text))
        if plan.kind == "wiki":
            body.append(_infobox(crng, text))
        body.append(
            f'<div class="article-body">\n<p class="lead">{text.paragraph(crng, (2, 3))}</p>\n'
        )
        body.append(
            f"<p>{text.paragraph(crng, (2, 4))} The report mentioned the {phrase} "
            f"only once. {text.paragraph(crng, (2, 3))}</p>\n"
        )
        for _ in range(crng.randint(1, 3)):
            body.append(f"<h2>{text.heading(crng)}</h2>\n<p>{text.paragraph(crng)}</p>\n")
        items = "".join(f"<li>{text.list_item(crng)}</li>" for _ in range(crng.randint(3, 6)))
        body.append(f"<ul>{items}</ul>\n<p>{text.paragraph(crng)}</p>\n")
        if crng.random() < 0.5:
            body.append(f"<blockquote>{text.sentence(crng)}</blockquote>\n")
        return title, "".join(body), crng
    section = plan.sections[spec.section] if spec.section >= 0 else ""
    if spec.kind in ("listing", "facet"):
        suffix = f" - page {spec.number}" if spec.number > 1 else ""
        title = f"{section.title()}{suffix}"
        teaser_items = []
        for n in spec.items:
            child = plan.articles[n]
            teaser_items.append(
                f"<li>{links.a(child, text.pooled_title(rng))}<p>{text.sentence(rng)}</p></li>\n"
            )
        pager = _pager(plan, spec, links)
        teasers = "".join(teaser_items)
        main = (
            f'<main>\n<h1>{title}</h1>\n<ul class="teasers">\n{teasers}</ul>\n{pager}\n'
            '<div class="more">\n'
        )
        return title, main, rng
    if spec.kind == "home":
        title = f"{plan.name.split('.')[0].replace('-', ' ').title()} - home"
        latest = [plan.articles[i] for i in range(min(12, len(plan.articles)))]
        items = "".join(f"<li>{links.a(p, text.pooled_title(rng))}</li>\n" for p in latest)
        return (
            title,
            f'<main>\n<h1>{title}</h1>\n<ul class="latest">\n{items}</ul>\n<div class="more">\n',
            rng,
        )
    title = spec.path.strip("/").replace("/", " ").title() or "Info"
    return title, f'<main>\n<h1>{title}</h1>\n<div class="more">\n', rng


def _pager(plan: HostPlan, spec: PageSpec, links: _Links) -> str:
    if spec.kind != "listing":
        return ""
    pages = plan.listings[spec.section]
    here = spec.number - 1
    wanted = sorted(
        {
            i
            for i in (0, here - 10, here - 1, here + 1, here + 10, len(pages) - 1)
            if 0 <= i < len(pages) and i != here
        }
    )
    return (
        '<nav class="pager">' + " ".join(links.a(pages[i], str(i + 1)) for i in wanted) + "</nav>"
    )


def _furniture(
    ctx: RenderContext,
    plan: HostPlan,
    spec: PageSpec,
    rng: random.Random,
    links: _Links,
    title: str,
    wanted_links: int,
    port: int,
) -> tuple[str, str]:
    text = ctx.text
    site = plan.name.split(".")[0]
    menu = " ".join(links.a(f"/{s}/", s.title()) for s in plan.sections)
    search = ""
    if plan.disallow:
        search = f" {links.a('/search/?q=' + text.noun(rng), 'Search', 'search')}"
    head = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{title} | {site}</title>\n"
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="description" content="{text.sentence(rng)}">\n'
        f'</head>\n<body class="{plan.kind}">\n'
        f'<div id="cookie-banner"><p>We use cookies to improve your experience. '
        f"<button>Accept all</button> <button>Manage settings</button></p></div>\n"
        f'<header><div class="logo">{links.a("/", site)}</div>\n'
        f'<nav class="menu">{menu}{search}</nav></header>\n'
        '<div class="share">Share: <button>Facebook</button> <button>X</button> '
        "<button>Email</button></div>\n"
    )
    tail_links = [
        links.a("/", "Home"),
        links.a(plan.dead_link, "Old archive"),  # 404, the same on every page of the host
    ]
    if plan.pages.get("/about/"):
        tail_links.append(links.a("/about/", "About us"))
    if plan.pages.get("/contact/"):
        tail_links.append(links.a("/contact/", "Contact"))
    if ctx.hosts > 1:
        for _ in range(rng.randint(1, 3)):
            other = rng.randrange(ctx.hosts - 1)
            other += other >= plan.index
            peer = ctx.plan(other)
            path = rng.choice(peer.articles) if peer.articles and rng.random() < 0.6 else "/"
            tail_links.append(links.a(_host_url(peer.name, port, path), f"From {peer.name}"))
    if rng.random() < BROKEN_LINK_SHARE:
        tail_links.append(
            links.a(f"{spec.path}missing-{rng.randint(1, 99)}/", "Broken link")
        )  # 404
    related = []
    room = wanted_links - links.count
    for _ in range(max(0, room)):
        if not plan.articles:
            break
        related.append(links.a(rng.choice(plan.articles), text.pooled_title(rng)))
    sidebar = "".join(f"<li>{r}</li>" for r in related)
    comments = ""
    if spec.kind == "article" and plan.kind in ("news", "blog", "shop"):
        label = "Reviews" if plan.kind == "shop" else "Comments"
        entries = "".join(
            f'<li><span class="author">{text.pooled_person(rng)}</span> {text.sentence(rng)}</li>'
            for _ in range(rng.randint(2, 6))
        )
        comments = f'<section class="comments"><h3>{label}</h3><ol>{entries}</ol></section>\n'
    tail = (
        f'{comments}<aside class="sidebar"><h3>Related</h3><ul>{sidebar}</ul>\n'
        f'<div class="ad">Advertisement: {text.pooled_title(rng)}</div></aside>\n'
        f"<footer><nav>{' | '.join(tail_links)}</nav>\n"
        f"<p>&copy; {rng.randint(2001, 2026)} {site}. All rights reserved. "
        f"Terms of use and privacy policy apply.</p></footer>\n</body>\n</html>\n"
    )
    return head, tail


def _product_box(rng: random.Random, text: TextGenerator) -> str:
    rows = "".join(
        f"<tr><th>{text.noun(rng).title()}</th><td>{text.adjective(rng)}</td></tr>"
        for _ in range(5)
    )
    return (
        f'<div class="product"><p class="price">${rng.randint(3, 900)}.{rng.randint(0, 99):02d}</p>'
        f'<p class="rating">{rng.randint(1, 5)} of 5 stars</p><button>Add to cart</button>'
        f'<table class="specs">{rows}</table></div>\n'
    )


def _infobox(rng: random.Random, text: TextGenerator) -> str:
    rows = "".join(
        f"<tr><th>{text.noun(rng).title()}</th>"
        f"<td>{text.place(rng)}, {rng.randint(1700, 2020)}</td></tr>"
        for _ in range(6)
    )
    return f'<table class="infobox">{rows}</table>\n<div class="toc">Contents</div>\n'


_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def _month(rng: random.Random) -> str:
    return rng.choice(_MONTHS)
