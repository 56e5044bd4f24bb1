"""Throughput of URL normal form + fingerprint on a realistic mix of links.

Run with ``.venv/bin/python bench/bench_urls.py [--count N] [--repeat R] [--seed S]``.
Builds a deterministic (seeded) mix of links such as a crawl meets them: mostly
already-normal absolute https links with paths and some queries, plus upper-case
hosts, default ports, fragments, percent-escapes, IDN hosts, long query strings, and
relative links resolved against their page with ``join``. Times ``normalize`` +
``fingerprint`` and ``join`` + ``fingerprint`` on one core (wall time with
``time.perf_counter`` and CPU time with ``time.process_time``) and prints URLs/s.
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import can_ada

from trawl.urls import fingerprint, join, normalize

_WORDS = (
    *("news", "world", "books", "fiction", "classics", "review", "article", "page"),
    *("index", "about", "contact", "blog", "post", "2024", "2025", "sports", "tech"),
    *("science", "health", "travel", "food", "recipes", "dosa", "curry", "tag"),
    *("category", "author", "archive", "search", "results", "item", "product", "shop"),
    *("cart", "help", "faq"),
)
_TLDS = ("com", "org", "net", "de", "co.uk", "example", "io", "fr", "in")
_IDN = ("bücher", "münchen", "straße", "café", "日本語", "пример", "ελληνικά", "faß")


def _host(rng: random.Random) -> str:
    name = f"{rng.choice(_WORDS)}{rng.randrange(5000)}"
    prefix = rng.choice(("www.", "", "", "blog.", "m."))
    return f"{prefix}{name}.{rng.choice(_TLDS)}"


def _path(rng: random.Random) -> str:
    depth = rng.choice((1, 2, 2, 3, 3, 4, 5))
    parts = [rng.choice(_WORDS) + (f"-{rng.randrange(1000)}" if rng.random() < 0.4 else "")]
    parts += [rng.choice(_WORDS) for _ in range(depth - 1)]
    leaf = rng.choice(("", ".html", "/", ".php", ""))
    return "/" + "/".join(parts) + leaf


def _query(rng: random.Random, long: bool = False) -> str:
    count = rng.randrange(8, 25) if long else rng.randrange(1, 4)
    pairs = [
        f"{rng.choice(_WORDS)}={rng.randrange(10 ** rng.randrange(1, 9))}" for _ in range(count)
    ]
    if long and rng.random() < 0.5:
        pairs += ["utm_source=newsletter", "utm_medium=email", "utm_campaign=spring_sale"]
    return "?" + "&".join(pairs)


def absolute_links(rng: random.Random, count: int) -> list[str]:
    """Absolute links in the proportions a crawl sees them."""
    links: list[str] = []
    for _ in range(count):
        host, path = _host(rng), _path(rng)
        query = _query(rng) if rng.random() < 0.25 else ""
        roll = rng.random()
        if roll < 0.62:
            url = f"https://{host}{path}{query}"  # already normal
        elif roll < 0.67:
            url = f"http://{host}{path}{query}"
        elif roll < 0.72:
            url = f"https://{host.upper()}{path}{query}"
        elif roll < 0.76:
            url = f"https://{host}:443{path}{query}"
        elif roll < 0.78:
            url = f"http://{host}:8080{path}{query}"
        elif roll < 0.85:
            url = f"https://{host}{path}{query}#{rng.choice(_WORDS)}"
        elif roll < 0.91:
            escape = rng.choice(("%20", "%7Euser", "%3a", "%C3%A9", "%2F", "%e2%82%ac", "%41"))
            url = f"https://{host}{path}{escape}{rng.choice(_WORDS)}{query}"
        elif roll < 0.94:
            url = f"https://{rng.choice(_IDN)}.{rng.choice(_TLDS)}{path}"
        elif roll < 0.98:
            url = f"https://{host}{path}{_query(rng, long=True)}"
        else:
            url = f"HTTPS://{host}/a/./b/../{rng.choice(_WORDS)}?q={rng.choice(_WORDS)}"
        links.append(url)
    return links


def relative_links(rng: random.Random, count: int) -> list[tuple[str, str]]:
    """(page URL, href) pairs: about 30 links per page, most of them relative."""
    pairs: list[tuple[str, str]] = []
    base = ""
    for index in range(count):
        if index % 30 == 0:
            base = f"https://{_host(rng)}{_path(rng)}"
        roll = rng.random()
        if roll < 0.35:
            href = _path(rng)
        elif roll < 0.55:
            href = rng.choice(_WORDS) + ".html"
        elif roll < 0.68:
            href = "../" + rng.choice(_WORDS) + "/" + rng.choice(_WORDS)
        elif roll < 0.78:
            href = _query(rng)
        elif roll < 0.84:
            href = "#" + rng.choice(_WORDS)
        elif roll < 0.90:
            href = f"//{_host(rng)}{_path(rng)}"
        elif roll < 0.95:
            href = f"https://{_host(rng)}{_path(rng)}"
        else:
            href = f"{_path(rng)}?q={rng.choice(_WORDS)}%20{rng.choice(_WORDS)}"
        pairs.append((base, href))
    return pairs


def _time(run: Callable[[], int], repeat: int) -> tuple[float, float, int]:
    """Best wall and CPU seconds of ``repeat`` runs, and the count of URLs handled."""
    best_wall = best_cpu = float("inf")
    done = 0
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        done = run()
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best_wall, best_cpu, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=200_000, help="links per mix")
    parser.add_argument("--repeat", type=int, default=5, help="runs; the best is reported")
    parser.add_argument("--seed", type=int, default=20240611)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    absolute = absolute_links(rng, args.count)
    relative = relative_links(rng, args.count)

    def run_normalize() -> int:
        for url in absolute:
            fingerprint(normalize(url))
        return len(absolute)

    def run_join() -> int:
        for base, href in relative:
            fingerprint(join(base, href))
        return len(relative)

    def run_parse_only() -> int:
        # The floor: what ada alone costs (parse and serialise), for comparison.
        for url in absolute:
            can_ada.parse(url).href  # noqa: B018
        return len(absolute)

    run_normalize()  # warm up caches and the interpreter's specialisation
    run_join()
    print(f"{args.count} links per mix, seed {args.seed}, best of {args.repeat} runs, one core")
    for name, run in (
        ("normalize+fingerprint", run_normalize),
        ("join+fingerprint", run_join),
        ("baseline: ada parse+href", run_parse_only),
    ):
        wall, cpu, done = _time(run, args.repeat)
        print(
            f"{name:24s} {done / wall:>10,.0f} URLs/s wall  {done / cpu:>10,.0f} URLs/s cpu"
            f"  ({wall / done * 1e6:.2f} us/URL)"
        )


if __name__ == "__main__":
    main()
