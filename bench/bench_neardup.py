"""Near-duplicate detection: precision and recall on generated pages, and its cost.

    python -m bench.bench_neardup [--articles 200] [--index-docs 100000]

Each generated article is rendered on one news template into several variants that
should be near-duplicates of each other: another date, other ads, other navigation and
related links, other comments, another byline, and a few edited sentences; different
articles on the same template should not be. The signature is computed, as in the
crawl, on the main text that ``trawl.parse.extract.extract`` keeps from the full page;
the same on the page's whole visible text shows what extraction buys.

Pairs: precision = true near-duplicate pairs found / all pairs found; recall = true
pairs found / all true pairs. A pair is "found" as the index finds it: the two MinHash
signatures share an LSH band and their estimated Jaccard reaches the threshold.
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

from trawl.dedup.minhash import MinHasher
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


def pairs(m: MinHasher, texts: list[str], family: npt.NDArray[np.int64]) -> str:
    sigs = [m.signature(t) or b"" for t in texts]
    values = np.array([np.frombuffer(s, dtype="<u4") for s in sigs])
    keys = np.array([m.band_keys(s) for s in sigs])
    i, j = np.triu_indices(len(sigs), 1)
    equal = np.zeros(len(i), dtype=np.int32)
    for p in range(m.perms):
        equal += values[i, p] == values[j, p]
    band = np.zeros(len(i), dtype=bool)
    for b in range(m.bands):
        band |= keys[i, b] == keys[j, b]
    found = band & (equal / m.perms >= m.threshold)
    true = family[i] == family[j]
    tp = int(np.count_nonzero(found & true))
    precision = tp / max(1, int(np.count_nonzero(found)))
    recall = tp / max(1, int(np.count_nonzero(true)))
    return f"precision {precision:.3f} recall {recall:.3f}"


def detection(articles: int) -> list[str]:
    g = text_generator(0)
    pages: list[tuple[int, str]] = []
    for n in range(articles):
        a = Article(g, n)
        pages += [(n, render(g, a, v, f"{n}:{v}")) for v in VARIANTS]
    family = np.array([n for n, _ in pages], dtype=np.int64)
    texts = [extract(html).text for _, html in pages]
    print(f"{len(pages)} pages: {articles} articles x {len(VARIANTS)} variants {VARIANTS}")
    for shingle in (3, 4, 5):
        for bands, threshold in ((16, 0.5), (32, 0.5), (32, 0.6)):
            m = MinHasher(shingle=shingle, bands=bands, threshold=threshold)
            print(
                f"shingle {shingle} bands {bands} threshold {threshold}: {pairs(m, texts, family)}"
            )
    return texts


def cost(texts: list[str]) -> None:
    m = MinHasher()
    t0 = time.process_time()
    sigs = [m.signature(t) or b"" for t in texts]
    sig_ms = (time.process_time() - t0) / len(sigs) * 1000
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "state.db")
        index = SqliteNearIndex(db, m)
        t0 = time.process_time()
        for n, s in enumerate(sigs):
            if index.find(s) is None:
                index.add(s, str(n), str(n))
        look_ms = (time.process_time() - t0) / len(sigs) * 1000
        db.close()
    print(f"cost per page (cpu): signature {sig_ms:.3f} ms, lookup + insert {look_ms:.3f} ms")


def index_speed(docs: int) -> None:
    m = MinHasher()
    rng = np.random.default_rng(0)
    # Random signatures: every value drawn independently, so no two share a band.
    sigs = [
        rng.integers(0, 2**32, m.perms, dtype=np.uint32).astype("<u4").tobytes()
        for _ in range(docs)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "state.db")
        index = SqliteNearIndex(db, m)
        w0 = time.perf_counter()
        for n, s in enumerate(sigs):
            index.add(s, f"{n:064x}", f"{n:064x}")
            if n % 10_000 == 9_999:
                db.commit()
        db.commit()
        wall = time.perf_counter() - w0
        size = (Path(tmp) / "state.db").stat().st_size
        queries = []
        for n in range(5_000):
            q = np.frombuffer(sigs[int(rng.integers(docs))], dtype="<u4").copy()
            if n % 2:  # half the queries: a near copy (a third of the values changed)
                q[rng.choice(m.perms, m.perms // 3, replace=False)] = 7
            else:
                q = rng.integers(0, 2**32, m.perms, dtype=np.uint32)
            queries.append(q.astype("<u4").tobytes())
        w1 = time.perf_counter()
        hits = sum(index.find(q) is not None for q in queries)
        qwall = time.perf_counter() - w1
        db.close()
    print(
        f"index of {docs:,}: inserts/s {docs / wall:,.0f}; lookups/s {len(queries) / qwall:,.0f} "
        f"wall ({hits} of {len(queries)} hit); {size / docs:.0f} bytes/doc"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--articles", type=int, default=200)
    p.add_argument("--index-docs", type=int, default=100_000, help="0 to skip")
    args = p.parse_args()
    cost(detection(args.articles))
    if args.index_docs:
        index_speed(args.index_docs)


if __name__ == "__main__":
    main()
