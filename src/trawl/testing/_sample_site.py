"""The sample web's sites: which pages each host has (the plan) and their HTML.

A host's plan depends only on (seed, host index, pages per host); a page's bytes only
on (seed, host, path, port), drawn from a ``random.Random`` of its own, so any page
can be made alone, in any order, and always comes out the same. Text is ASCII only,
so a page's size in characters is its size in bytes.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from trawl.testing._sample_text import RARE_WORDS

KINDS = ("news", "shop", "blog", "wiki")
SECTIONS = {
    "news": ("world", "politics", "business", "science", "sport", "culture", "travel", "opinion"),
    "shop": ("kitchen", "garden", "outdoor", "toys", "books", "audio", "office", "bath"),
    "blog": ("notes", "travel", "recipes", "projects", "reviews", "photos"),
    "wiki": ("history", "science", "geography", "arts", "technology", "people"),
}
INFO_PAGES = ("/about/", "/contact/", "/privacy/", "/terms/", "/help/", "/careers/")
PER_LISTING = 25
COLORS = ("red", "blue", "green")


@dataclass(frozen=True, slots=True)
class PageSpec:
    path: str
    kind: str  # home, listing, facet, article, info, search
    section: int = -1
    number: int = 0
    items: tuple[int, ...] = ()
    content: tuple[int, int] | None = None  # (host index, article index) of the text
    exact_of: str | None = None  # a same-host page whose bytes this one repeats


@dataclass(slots=True)
class HostPlan:
    index: int
    name: str
    kind: str
    sections: tuple[str, ...]
    pages: dict[str, PageSpec] = field(default_factory=dict)
    articles: list[str] = field(default_factory=list)
    listings: list[list[str]] = field(default_factory=list)
    disallow: tuple[str, ...] = ()
    crawl_delay: int | None = None
    dead_link: str = "/archive/0/"  # the stale link every page's footer carries (404)
    hidden: list[str] = field(default_factory=list)  # articles only the sitemaps list

    def robots_txt(self, sitemap: str | None = None) -> str:
        lines = ["User-agent: *"]
        lines += [f"Disallow: {p}" for p in self.disallow] or ["Disallow:"]
        if self.crawl_delay is not None:
            lines.append(f"Crawl-delay: {self.crawl_delay}")
        if sitemap is not None:
            lines.append(f"Sitemap: {sitemap}")
        return "\n".join(lines) + "\n"


def host_name(index: int, hosts: int) -> str:
    kind = KINDS[index % len(KINDS)]
    width = max(2, len(str(max(0, hosts - 1) // len(KINDS))))
    return f"{kind}-{index // len(KINDS):0{width}d}.sample"


def _layout(kind: str, pages: int) -> tuple[int, int, int]:
    """(sections, articles, facet pages) so that all pages add up to ``pages``."""
    sections = max(1, min(len(SECTIONS[kind]), pages // 30))
    facets = sections * len(COLORS) if kind == "shop" and pages >= 60 else 0
    articles = pages - 1 - facets - sections
    while articles > 0:
        per = [len(range(s, articles, sections)) for s in range(sections)]
        total = 1 + facets + articles + sum(max(1, math.ceil(p / PER_LISTING)) for p in per)
        if total <= pages:
            break
        articles -= 1
    return sections, max(0, articles), facets


def plan_host(seed: int, index: int, hosts: int, pages: int, hidden: int = 0) -> HostPlan:
    """The host's pages: ``hidden`` of them articles that no page links to."""
    kind = KINDS[index % len(KINDS)]
    rng = random.Random(f"{seed}:plan:{index}")
    linked = pages - hidden
    sections_n, articles_n, facets = _layout(kind, linked)
    plan = HostPlan(index, host_name(index, hosts), kind, SECTIONS[kind][:sections_n])
    plan.pages["/"] = PageSpec("/", "home")
    for n in range(articles_n):
        section = n % sections_n
        slug = f"{rng.choice(_SLUG_WORDS)}-{rng.choice(_SLUG_WORDS)}-{n}"
        path = _article_path(kind, plan.sections[section], slug, rng)
        plan.articles.append(path)
        plan.pages[path] = PageSpec(path, "article", section, n, content=(index, n))
    for s, name in enumerate(plan.sections):
        mine = list(range(s, articles_n, sections_n))
        chunks = [mine[i : i + PER_LISTING] for i in range(0, len(mine), PER_LISTING)] or [[]]
        paths = []
        for number, chunk in enumerate(chunks, 1):
            path = f"/{name}/" if number == 1 else f"/{name}/page/{number}/"
            paths.append(path)
            plan.pages[path] = PageSpec(path, "listing", s, number, tuple(chunk))
        plan.listings.append(paths)
        if facets:
            for color in COLORS:
                path = f"/{name}/color-{color}/"
                plan.pages[path] = PageSpec(path, "facet", s, 1, tuple(chunks[0][::2]))
    for n in range(linked - len(plan.pages)):
        path = INFO_PAGES[n] if n < len(INFO_PAGES) else f"/info/{n}/"
        plan.pages[path] = PageSpec(path, "info", number=n)
    _duplicates(plan, rng, hosts, articles_n)
    if rng.random() < 0.15 or (hosts > 2 and index == 2):
        plan.disallow = ("/search/",)
    if hosts > 1 and index == 1:
        plan.crawl_delay = 2
    plan.dead_link = f"/archive/{random.Random(f'{seed}:dead:{index}').randint(1000, 9999)}/"
    hidden_rng = random.Random(f"{seed}:hidden:{index}")
    for j in range(hidden):
        n = articles_n + j  # article numbers below ``pages``: texts of their own
        section = j % sections_n
        slug = f"{hidden_rng.choice(_SLUG_WORDS)}-{hidden_rng.choice(_SLUG_WORDS)}-{n}"
        path = _article_path(kind, plan.sections[section], slug, hidden_rng)
        plan.hidden.append(path)
        plan.pages[path] = PageSpec(path, "article", section, n, content=(index, n))
    return plan


def _duplicates(plan: HostPlan, rng: random.Random, hosts: int, articles_n: int) -> None:
    """Make about 1.5 % of articles exact copies and 1.5 % near copies of others."""
    if articles_n < 10:
        return
    peers = [i for i in range(plan.index % len(KINDS), hosts, len(KINDS))]
    for n in range(2, articles_n):
        roll = rng.random()
        path = plan.articles[n]
        spec = plan.pages[path]
        if roll < 0.015:
            source = plan.articles[rng.randrange(0, n // 2 or 1)]
            if plan.pages[source].exact_of is None:
                plan.pages[path] = PageSpec(
                    path,
                    "article",
                    spec.section,
                    n,
                    exact_of=source,
                    content=plan.pages[source].content,
                )
        elif roll < 0.03:
            host = rng.choice(peers)
            plan.pages[path] = PageSpec(
                path, "article", spec.section, n, content=(host, rng.randrange(0, n // 2 or 1))
            )


def _article_path(kind: str, section: str, slug: str, rng: random.Random) -> str:
    if kind == "news":
        return f"/{section}/{rng.randint(2015, 2026)}/{rng.randint(1, 12):02d}/{slug}/"
    if kind == "shop":
        return f"/{section}/p/{slug}/"
    if kind == "blog":
        return f"/{rng.randint(2010, 2026)}/{rng.randint(1, 12):02d}/{slug}/"
    return f"/wiki/{slug.replace('-', '_').title()}/"


_SLUG_WORDS = [
    "river",
    "city",
    "market",
    "plan",
    "light",
    "garden",
    "house",
    "energy",
    "story",
    "power",
    "music",
    "road",
    "bridge",
    "school",
    "water",
    "summer",
    "winter",
    "island",
    "forest",
    "station",
    "harbor",
    "valley",
    "field",
    "ocean",
    "tower",
]


def distinctive_phrase(seed: int, host: int, article: int, pages: int) -> str:
    """Three rare words, different for every (host, article) of one sample web."""
    size = len(RARE_WORDS)
    space = size * (size - 1) * (size - 2)
    rng = random.Random(f"{seed}:phrases")
    step = rng.randrange(1, space)
    while math.gcd(step, space) != 1:
        step += 1
    code = (host * pages + article) * step % space
    first, rest = code % size, code // size
    second, third = rest % (size - 1), rest // (size - 1) % (size - 2)
    second += second >= first
    lo, hi = sorted((first, second))
    third += third >= lo
    third += third >= hi
    return f"{RARE_WORDS[first]} {RARE_WORDS[second]} {RARE_WORDS[third]}"
