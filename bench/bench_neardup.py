"""Near-duplicate detection: precision and recall on generated pages, and its cost.

    python bench/bench_neardup.py [--articles 200] [--index-docs 1000000]

Each generated article is rendered on one news template into several variants that
should be near-duplicates of each other: another date, other ads, other navigation and
related links, other comments, another byline, and a few edited sentences; different
articles on the same template should not be. The signature is computed, as in the
crawl, on the main text that ``trawl.parse.extract.extract`` keeps from the full page;
the same on the page's whole visible text shows what extraction buys.

Pairs: precision = true near-duplicate pairs found / all pairs found; recall = true
pairs found / all true pairs (a pair is "found" when its signatures are within k; the
block index finds exactly those). Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt
from selectolax.lexbor import LexborHTMLParser

from trawl.dedup.simhash import simhash
from trawl.parse.extract import extract
from trawl.storage.sqlite.db import Database
from trawl.storage.sqlite.near import SqliteNearIndex
from trawl.testing._sample_text import TextGenerator, text_generator

VARIANTS = ("original", "date", "ads+nav", "comments", "byline+edits", "all")
_MONTHS = ("January", "March", "May", "July", "September", "November")


class Article:
    def __init__(self, g: TextGenerator, n: int) -> None:
        rng = random.Random(f"article-{n}")
        self.title = g.title(rng)
        self.author = g.person(rng)
        self.date = f"{rng.randint(1, 28)} {rng.choice(_MONTHS)} {rng.randint(2015, 2025)}"
        words = rng.choice((150, 300, 600, 1200, 2000))
        self.paragraphs: list[list[str]] = []
        while sum(len(" ".join(p).split()) for p in self.paragraphs) < words:
            self.paragraphs.append([g.sentence(rng) for _ in range(rng.randint(2, 6))])


def render(g: TextGenerator, a: Article, variant: str, seed: str) -> str:
    rng = random.Random(seed)  # furniture differs on every rendering, as on the web
    author, date, paragraphs = a.author, a.date, [list(p) for p in a.paragraphs]
    if variant in ("date", "all"):
        date = f"{rng.randint(1, 28)} {rng.choice(_MONTHS)} {rng.randint(2015, 2025)}"
    if variant in ("byline+edits", "all"):
        author = g.person(rng)
        for _ in range(rng.randint(1, 3)):
            p = rng.randrange(len(paragraphs))
            paragraphs[p][rng.randrange(len(paragraphs[p]))] = g.sentence(rng)
    changes_furniture = variant in ("ads+nav", "comments", "all")
    frng = rng if changes_furniture else random.Random(f"furniture-{a.title}")
    menu = " ".join(f'<a href="/{w}/">{w.title()}</a>' for w in g.words(frng, 8))
    ads = "".join(
        f'<div class="ad">Advertisement: {g.pooled_title(frng)}. {g.sentence(frng)}</div>'
        for _ in range(frng.randint(1, 3))
    )
    related = "".join(
        f'<li><a href="/a/{frng.randint(1, 10**6)}/">{g.pooled_title(frng)}</a></li>'
        for _ in range(frng.randint(5, 12))
    )
    crng = rng if variant in ("comments", "all") else random.Random(f"comments-{a.title}")
    comments = "".join(
        f'<li><span class="author">{g.pooled_person(crng)}</span> {g.sentence(crng)}</li>'
        for _ in range(crng.randint(2, 8))
    )
    body = "".join(f"<p>{' '.join(p)}</p>\n" for p in paragraphs)
    return (
        f"<!DOCTYPE html><html><head><title>{a.title} | Daily</title></head><body>"
        '<div id="cookie-banner"><p>We use cookies. <button>Accept</button></p></div>'
        f'<header><a href="/">Daily</a><nav class="menu">{menu}</nav></header>{ads}'
        f'<main><article><h1>{a.title}</h1><p class="byline">By {author} | {date}</p>'
        f'<div class="article-body">{body}</div></article></main>'
        f'<section class="comments"><h3>Comments</h3><ol>{comments}</ol></section>'
        f'<aside class="sidebar"><h3>Related</h3><ul>{related}</ul>{ads}</aside>'
        "<footer><p>&copy; 2025 Daily. All rights reserved. Terms and privacy.</p></footer>"
        "</body></html>"
    )


def visible_text(html: str) -> str:
    body = LexborHTMLParser(html).body
    return "" if body is None else body.text(separator="\n")


def pair_table(
    sigs: npt.NDArray[np.int64], family: npt.NDArray[np.int64], ks: list[int]
) -> list[tuple[int, float, float]]:
    u = sigs.view(np.uint64)
    i, j = np.triu_indices(len(u), 1)
    dist = np.bitwise_count(u[i] ^ u[j])
    true = family[i] == family[j]
    out = []
    for k in ks:
        found = dist <= k
        tp = int(np.count_nonzero(found & true))
        precision = tp / max(1, int(np.count_nonzero(found)))
        recall = tp / max(1, int(np.count_nonzero(true)))
        out.append((k, precision, recall))
    return out


def detection(args: argparse.Namespace) -> None:
    g = text_generator(0)
    pages: list[tuple[int, str]] = []
    for n in range(args.articles):
        a = Article(g, n)
        pages += [(n, render(g, a, v, f"{n}:{v}")) for v in VARIANTS]
    family = np.array([n for n, _ in pages], dtype=np.int64)
    t0 = time.process_time()
    extracted = [extract(html).text for _, html in pages]
    extract_ms = (time.process_time() - t0) / len(pages) * 1000
    raw = [visible_text(html) for _, html in pages]
    print(f"{len(pages)} pages: {args.articles} articles x {len(VARIANTS)} variants {VARIANTS}")
    print(
        f"extraction {extract_ms:.2f} ms/page (cpu); median extracted words "
        f"{int(np.median([len(t.split()) for t in extracted]))}, visible words "
        f"{int(np.median([len(t.split()) for t in raw]))}"
    )
    ks = [2, 3, 4, 6, 8, 10]
    print("\nprecision / recall of pairs by shingle size and k")
    print(f"{'input':<10}{'shingle':>8}  " + "".join(f"{'k=' + str(k):>13}" for k in ks))
    for label, texts in (("extracted", extracted), ("raw page", raw)):
        for shingle in (1, 2, 3, 4, 5):
            sigs = np.array([simhash(t, shingle=shingle) for t in texts], dtype=np.int64)
            cells = "".join(f"{p:>6.3f}/{r:<6.3f}" for _, p, r in pair_table(sigs, family, ks))
            print(f"{label:<10}{shingle:>8}  {cells}")
    breakdown(extracted, pages, args.articles)
    cost(extracted)


def breakdown(texts: list[str], pages: list[tuple[int, str]], articles: int) -> None:
    """Recall of variant-vs-original pairs, by variant and by article length (shingle 3)."""
    sigs = np.array([simhash(t) for t in texts], dtype=np.int64).view(np.uint64)
    v = len(VARIANTS)
    lengths = np.array([len(texts[n * v].split()) for n in range(articles)])
    print("\nrecall of variant vs original (extracted, shingle 3), by variant and article words")
    buckets = [(0, 250), (250, 500), (500, 1000), (1000, 10**9)]
    head = "".join(f"{f'{lo}-{hi}' if hi < 10**9 else f'{lo}+':>12}" for lo, hi in buckets)
    for k in (3, 6):
        print(f"k={k:<3}{'variant':<14}{head}")
        for j, name in enumerate(VARIANTS[1:], 1):
            d = np.bitwise_count(sigs[0::v] ^ sigs[j::v])
            cells = ""
            for lo, hi in buckets:
                sel = (lengths >= lo) & (lengths < hi)
                cells += f"{np.mean(d[sel] <= k) if sel.any() else float('nan'):>12.2f}"
            print(f"     {name:<14}{cells}")


def cost(texts: list[str]) -> None:
    t0 = time.process_time()
    sigs = [simhash(t) for t in texts for _ in range(5)]
    sig_ms = (time.process_time() - t0) / len(sigs) * 1000
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "state.db")
        index = SqliteNearIndex(db)
        t0 = time.process_time()
        for n, s in enumerate(sigs[::5]):
            if index.find(s) is None:
                index.add(s, str(n), str(n))
        look_ms = (time.process_time() - t0) / len(texts) * 1000
        db.close()
    print(
        f"\ncost per page (cpu): signature {sig_ms:.3f} ms, lookup + insert {look_ms:.3f} ms "
        f"(small index; see below for 1M)"
    )


def index_speed(docs: int, blocks: int | None) -> None:
    rng = random.Random(0)
    sigs = [rng.getrandbits(64) for _ in range(docs)]
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "state.db")
        index = SqliteNearIndex(db, blocks=blocks)
        w0, c0 = time.perf_counter(), time.process_time()
        for n, s in enumerate(sigs):
            index.add(s, f"{n:064x}", f"{n:064x}")
            if n % 10_000 == 9_999:
                db.commit()
        db.commit()
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        size = (Path(tmp) / "state.db").stat().st_size
        queries = []
        for n in range(20_000):
            s = rng.getrandbits(64) if n % 2 else sigs[rng.randrange(docs)]
            for bit in rng.sample(range(64), rng.randint(0, 3)) if n % 2 == 0 else []:
                s ^= 1 << bit
            queries.append(s)
        w1, c1 = time.perf_counter(), time.process_time()
        hits = sum(index.find(q) is not None for q in queries)
        qwall, qcpu = time.perf_counter() - w1, time.process_time() - c1
        db.close()
    print(
        f"index of {docs:,} (k=3, {index.layout.tables} tables): inserts/s {docs / wall:,.0f} "
        f"wall, {docs / cpu:,.0f} cpu; lookups/s {len(queries) / qwall:,.0f} wall, "
        f"{len(queries) / qcpu:,.0f} cpu ({hits} of {len(queries)} hit); "
        f"{size / docs:.0f} bytes/doc"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--articles", type=int, default=200)
    p.add_argument("--index-docs", type=int, default=1_000_000, help="0 to skip")
    p.add_argument("--blocks", type=int, default=None, help="index blocks (default k+1)")
    args = p.parse_args()
    detection(args)
    if args.index_docs:
        index_speed(args.index_docs, args.blocks)


if __name__ == "__main__":
    main()
