"""Throughput of robots.txt checks against a cached, parsed 200-rule file.

Run with ``.venv/bin/python bench/bench_robots.py [--count N] [--seed S]``.
Builds a deterministic (seeded) robots.txt of 200 rules such as large sites publish:
a ``*`` group with long literal paths, wildcards and ``$`` anchors, groups for
Googlebot and Bingbot, several AI opt-out groups (GPTBot, CCBot, Google-Extended) that
disallow most or all of the site, and a group whose user-agent lines are spread over
comments and sitemap lines. Then checks a seeded mix of realistic URLs (full URLs with
paths, queries, percent-escapes, some hitting rules, most not) with one token and with
three tokens, timing with ``time.perf_counter`` (wall) and ``time.process_time`` (CPU),
and prints checks per second and microseconds per check. Figures are printed, never
asserted. Also prints the parse time of the file, and a baseline: the same loop with a
check that does nothing, which shows the harness cost and how fast the machine is.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence

from trawl.fetch.robots import RobotsRules

_WORDS = (
    "news",
    "world",
    "books",
    "fiction",
    "review",
    "article",
    "page",
    "index",
    "about",
    "contact",
    "blog",
    "post",
    "2024",
    "2025",
    "sports",
    "tech",
    "science",
    "health",
    "travel",
    "food",
    "recipes",
    "tag",
    "category",
    "author",
    "archive",
    "search",
    "results",
    "item",
    "product",
    "shop",
    "cart",
    "help",
    "faq",
    "account",
    "login",
    "static",
    "media",
)
_PRIVATE = (
    "admin",
    "wp-admin",
    "checkout",
    "cart",
    "account",
    "login",
    "logout",
    "register",
    "cgi-bin",
    "tmp",
    "private",
    "internal",
    "api",
    "ajax",
    "preview",
    "print",
    "export",
    "feed",
    "comments",
    "trackback",
    "xmlrpc",
)
_WILDCARDS = (
    "/*?sessionid=",
    "/*&sessionid=",
    "/*?sort=",
    "/*&sort=",
    "/*?replytocom=",
    "/*.pdf$",
    "/*.json$",
    "/*.php$",
    "/*/print/",
    "/*/feed/$",
    "/search*q=",
    "/tag/*/page/",
    "/*?utm_",
    "/shop/*?filter=",
    "/*/amp$",
)


def _literal(rng: random.Random) -> str:
    depth = rng.choice((1, 1, 2, 2, 3, 4))
    parts = [rng.choice(_PRIVATE)] + [rng.choice(_WORDS + _PRIVATE) for _ in range(depth - 1)]
    if rng.random() < 0.15:
        parts.append("-".join(rng.choice(_WORDS) for _ in range(rng.randrange(4, 9))))
    path = "/" + "/".join(parts)
    return path + rng.choice(("", "/", "/", ".html", "?"))


def _group(rng: random.Random, agents: Sequence[str], rules: int, wildcard_share: float) -> str:
    lines = [f"User-agent: {agent}" for agent in agents]
    for _ in range(rules):
        wild = rng.random() < wildcard_share
        pattern = rng.choice(_WILDCARDS) if wild else _literal(rng)
        verb = "Allow" if rng.random() < 0.2 else "Disallow"
        lines.append(f"{verb}: {pattern}")
    return "\n".join(lines)


def robots_file(rng: random.Random) -> bytes:
    """A 200-rule robots.txt with several groups (deterministic for a seeded rng)."""
    parts = [
        "# robots.txt for www.example.com",
        "Sitemap: https://www.example.com/sitemap.xml",
        _group(rng, ["*"], 90, 0.25),
        "Crawl-delay: 1",
        _group(rng, ["Googlebot", "Googlebot-Image"], 40, 0.3),
        _group(rng, ["Bingbot"], 30, 0.2),
        "User-agent: GPTBot\n# AI crawlers\nSitemap: https://www.example.com/news.xml\n"
        "User-agent: CCBot\nUser-agent: Google-Extended\nDisallow: /\nAllow: /about/\n"
        "Allow: /contact$",
        _group(rng, ["Yandex"], 19, 0.1),
        _group(rng, ["Baiduspider"], 15, 0.2),
        "User-agent: GPTBot\nDisallow: /archive/",
        "User-agent: AhrefsBot\nCrawl-delay: 10\nDisallow: /search",
        "User-agent: SemrushBot\nDisallow: /",
    ]
    body = "\n\n".join(parts) + "\n"
    rules = sum(1 for line in body.splitlines() if line.split(":")[0] in ("Allow", "Disallow"))
    if rules != 200:
        raise RuntimeError(f"expected 200 rules, built {rules}")
    return body.encode()


def urls(rng: random.Random, count: int) -> list[str]:
    """Full URLs in a crawl-like mix: mostly allowed pages, some rule hits."""
    out: list[str] = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.15:
            path = _literal(rng) + rng.choice(("", "x", "/item-42", "?id=7"))
        else:
            depth = rng.choice((1, 2, 2, 3, 3, 4, 5))
            path = "/" + "/".join(rng.choice(_WORDS) for _ in range(depth))
            path += rng.choice(("", ".html", "/", ".php", ".pdf", "", "/amp"))
        if rng.random() < 0.3:
            pairs = [
                f"{rng.choice(_WORDS)}={rng.randrange(1000)}" for _ in range(rng.randrange(1, 4))
            ]
            if rng.random() < 0.2:
                pairs.append(rng.choice(("sessionid=ab12", "sort=asc", "utm_source=x")))
            path += "?" + "&".join(pairs)
        if rng.random() < 0.05:
            path += "/caf%c3%a9-%7Euser"
        out.append("https://www.example.com" + path)
    return out


def _time(label: str, check: Callable[[str], bool], targets: list[str]) -> None:
    wall, cpu = time.perf_counter(), time.process_time()
    allowed = sum(map(check, targets))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    count = len(targets)
    print(
        f"{label:<34} {count / wall:>11,.0f} checks/s  {wall / count * 1e6:6.2f} us/check "
        f"(cpu {cpu / count * 1e6:6.2f} us)  allowed {allowed / count:.0%}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=200_000, help="URLs checked per run")
    parser.add_argument("--seed", type=int, default=9309)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    body = robots_file(rng)
    targets = urls(rng, args.count)

    start = time.perf_counter()
    rounds = 20
    for _ in range(rounds):
        rules = RobotsRules.parse(body)
    parse_ms = (time.perf_counter() - start) / rounds * 1e3
    print(f"robots.txt: {len(body):,} bytes, 200 rules, {len(rules.groups)} groups")
    print(f"parse: {parse_ms:.2f} ms; URLs: {len(targets):,} (seed {args.seed})")

    one = ("trawl",)
    three = ("trawl", "GPTBot", "CCBot")
    google = ("Googlebot",)
    searchy = ("trawl", "Googlebot", "Bingbot")  # no opt-out: every token's rules run
    # Warm up: the first check per agent tuple and bucket compiles its matcher.
    for agents in (one, three, google, searchy):
        for url in targets[:2000]:
            rules.is_allowed(url, agents)
    _time("baseline (harness, no check)", lambda url: True, targets)
    _time("1 token  (trawl -> * group)", lambda url: rules.is_allowed(url, one), targets)
    _time("1 token  (Googlebot group)", lambda url: rules.is_allowed(url, google), targets)
    _time("3 tokens (trawl, GPTBot, CCBot)", lambda url: rules.is_allowed(url, three), targets)
    _time(
        "3 tokens (trawl, Googlebot, Bingbot)", lambda url: rules.is_allowed(url, searchy), targets
    )
    paths = [url[len("https://www.example.com") :] for url in targets]
    _time("1 token, paths not URLs", lambda path: rules.is_allowed(path, one), paths)


if __name__ == "__main__":
    main()
