"""Search: indexing throughput and query latency on an index of 100,000 pages.

    python bench/bench_search.py [--pages 100000] [--queries 300] [--keep DIR]
                                 [--random-words] [--volume 64000]

Pages of generated English prose (``trawl.testing``'s sample text: 1 to 12 KB each,
about 4.5 KB on average, like the main text of web articles), each with a title, a
host among 2,000, a distinctive phrase of three rare words, and a few junk tokens
(product codes and the like: the long tail of a real vocabulary). They are written
as a crawl writes them (text records in a ``TextStore``, rows in the SQLite pages
table), then indexed through the crawl's own path, ``Indexer.index_pending`` in
batches of 500 (a tantivy commit each), as ``trawl index`` or a crawl would.

Queries, ``--queries`` of each kind, shuffled together: one word (drawn from the
generator's vocabulary, common and rare alike), several words (two or three words of
one page), a phrase (two to four consecutive words of a page, quoted), and a typo (a
page's distinctive phrase with one letter of a word changed). Each is timed through
``Searcher.search`` (parse, correction, query, collapse, stored fields and
snippets for 10 hits), uncached (a searcher without a cache), then cached (the same
queries again on a searcher that has seen them). Figures are printed, not asserted.

After indexing, the index's size is broken down by tantivy file kind (``.store``
stored fields, ``.idx`` postings, ``.pos`` positions, ``.term`` term dictionaries,
``.fast`` fast fields, ``.fieldnorm``; ``lexicon/`` is typo correction's) against the
text it indexes: the UTF-8 bytes of titles and texts, and the gzip'd text store.

``--random-words``: pages of about 19 KB of random lower-case words instead (the odd
vocabulary of issue 16: nearly every word a dictionary entry of its own); the typo
queries change a letter of a word the lexicon holds.
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from trawl.archive.textstore import TextStore
from trawl.index import Indexer, Searcher
from trawl.index.schema import index_exists
from trawl.index.writer import CommittedTexts
from trawl.memory import MemoryLimits
from trawl.models import Location
from trawl.storage.base import PageRecord
from trawl.storage.blobs import TEXT_LOG
from trawl.storage.open import open_blobs, open_store
from trawl.testing._sample_site import distinctive_phrase
from trawl.testing._sample_text import text_generator, vocabulary

HOSTS = 2000
SAMPLE_EVERY = 97  # pages kept in memory to draw queries from


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _junk(rng: random.Random) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz0123456789"
    return " ".join(
        "".join(rng.choice(letters) for _ in range(rng.randint(4, 9)))
        for _ in range(rng.randint(2, 6))
    )


def _random_page(rng: random.Random) -> tuple[str, str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: list[str] = []
    size = 0
    while size < 19_000:
        word = "".join(rng.choice(letters) for _ in range(rng.randint(3, 12)))
        words.append(word)
        size += len(word) + 1
    return " ".join(words[:5]), " ".join(words)


def generate(
    data: Path, pages: int, *, random_words: bool = False, first: int = 0, total: int | None = None
) -> tuple[list[tuple[str, str, str]], float]:
    """Write ``pages`` text records and page rows (numbers ``first`` on, of a web of
    ``total`` pages: another crawl writes the next ones); returns (url, text, phrase)
    samples."""
    g = text_generator(11)
    store, blobs = open_store(data), open_blobs(data, fsync=False)
    log = blobs.open_writer(
        TEXT_LOG, committed=store.committed_logs().get(TEXT_LOG.name), max_bytes=1 << 30
    )
    texts = TextStore(log)
    samples: list[tuple[str, str, str]] = []
    size = 0
    started = time.perf_counter()
    per_host = (total or pages) // HOSTS + 1
    for n in range(first, first + pages):
        rng = random.Random(n)
        host_n, article = n % HOSTS, n // HOSTS
        host = f"site{host_n:04d}.example"
        url = f"https://{host}/articles/{article}/"
        if random_words:
            title, text = _random_page(rng)
            phrase = " ".join(text.split()[5:8])
        else:
            phrase = distinctive_phrase(11, host_n, article, per_host)
            paragraphs = g.prose(rng, int(rng.triangular(1000, 12000, 2000)))
            at = rng.randrange(len(paragraphs))
            paragraphs[at] = f"{paragraphs[at]} The {phrase} {_junk(rng)}."
            text = "\n\n".join(paragraphs)
            title = g.title(rng)
        size += len(text.encode()) + len(title.encode())
        key = f"{n:032x}"
        where = texts.append(
            {
                "id": key,
                "url": url,
                "title": title,
                "text": text,
                "language": None if random_words else "en",
                "content_hash": key,
                "cluster": key,
                "provenance": {},
            }
        )
        store.pages.add(
            PageRecord(
                content_hash=key,
                url=url,
                host=host,
                fp=n,
                fetched_at=1.7e9 + n,
                title=title,
                language=None if random_words else "en",
                warc=Location("none", 0, 0),
                text=where,
            )
        )
        if n % SAMPLE_EVERY == 0:
            samples.append((url, text, phrase))
        if n % 10_000 == 0:
            store.commit({TEXT_LOG.name: log.sync()})
    store.commit({TEXT_LOG.name: log.sync()})
    log.close()
    store.close()
    took = time.perf_counter() - started
    stored = sum(f.stat().st_size for f in (data / "text").iterdir())
    print(
        f"generated {pages:,} pages, {size / 1e6:,.1f} MB of title and text (UTF-8; "
        f"{size / pages:,.0f} bytes a page), {stored / 1e6:,.1f} MB gzip'd in the text "
        f"store, in {took:.0f} s"
    )
    (data / "text-bytes").write_text(str(size))
    return samples, size / pages


def index(data: Path, volume: int = MemoryLimits().index_volume) -> None:
    store = open_store(data)
    texts = CommittedTexts(open_blobs(data))
    indexer = Indexer(data / "index", volume_docs=volume)
    cpu0, t0 = _cpu(), time.perf_counter()
    n = 0
    while taken := indexer.index_pending(store.pages, texts, limit=500):
        n += taken
        store.commit()
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
    indexer.close()
    merged = time.perf_counter() - t0
    store.close()
    disk = sum(f.stat().st_size for f in (data / "index").rglob("*") if f.is_file())
    print(
        f"indexed {n:,} pages in {wall:.1f} s wall, {cpu:.1f} CPU-s: "
        f"{n / wall:,.0f} pages/s ({n / cpu:,.0f} pages per CPU-s); "
        f"merges done after {merged:.1f} s; index {disk / 1e6:,.1f} MB on disk"
    )
    sizes(data)


def sizes(data: Path) -> None:
    """The index's bytes by file kind, against the text it indexes."""
    index_dir = data / "index"
    kinds: dict[str, int] = {}
    segments = set()
    for f in index_dir.iterdir():
        if f.is_file():
            kinds[f.suffix or f.name] = kinds.get(f.suffix or f.name, 0) + f.stat().st_size
            if f.suffix == ".store":
                segments.add(f.stem)
    kinds["lexicon/"] = sum(f.stat().st_size for f in index_dir.rglob("lexicon/*"))
    total = sum(kinds.values())
    text = int((data / "text-bytes").read_text())
    stored = sum(f.stat().st_size for f in (data / "text").iterdir())
    print(
        f"index {total / 1e6:,.1f} MB in {len(segments)} segments = {total / text:.2f} x the "
        f"{text / 1e6:,.1f} MB of title and text it indexes ({total / stored:.2f} x the "
        f"{stored / 1e6:,.1f} MB gzip'd text store)"
    )
    for kind, n in sorted(kinds.items(), key=lambda kv: -kv[1]):
        if n:
            print(f"  {kind:>10}: {n / 1e6:8.2f} MB  {n / text:5.2f} x text")


def _typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 1)
    return word[:i] + ("q" if word[i] != "q" else "z") + word[i + 1 :]


def queries(
    samples: list[tuple[str, str, str]],
    per_kind: int,
    rng: random.Random,
    *,
    random_words: bool = False,
) -> list[tuple[str, str, str | None]]:
    """(kind, query, the page it should bring first, for typos) ..."""
    vocab = sorted(vocabulary())
    out: list[tuple[str, str, str | None]] = []
    for _ in range(per_kind):
        url, text, phrase = rng.choice(samples)
        words = [w.strip(".,;") for w in text.split()]
        out.append(("one word", rng.choice(words if random_words else vocab), None))
        out.append(("multi-word", " ".join(rng.sample(words, rng.randint(2, 3))), None))
        start = rng.randrange(len(words) - 4)
        out.append(("phrase", '"' + " ".join(words[start : start + rng.randint(2, 4)]) + '"', None))
        parts = phrase.split()
        j = max(range(3), key=lambda k: len(parts[k]))
        parts[j] = _typo(parts[j], rng)
        out.append(("typo", " ".join(parts), url))
    rng.shuffle(out)
    return out


def _pct(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def _report(label: str, timings: dict[str, list[float]]) -> None:
    every = [t for ts in timings.values() for t in ts]
    print(
        f"{label}: p50 {_pct(every, 50):.2f} ms, p99 {_pct(every, 99):.2f} ms, "
        f"mean {statistics.fmean(every):.2f} ms over {len(every)} queries"
    )
    for kind, ts in timings.items():
        print(
            f"  {kind:>10}: p50 {_pct(ts, 50):6.2f} ms  p99 {_pct(ts, 99):6.2f} ms  "
            f"max {max(ts):6.2f} ms"
        )


def run_queries(index_dir: Path, qs: list[tuple[str, str, str | None]]) -> None:
    t0 = time.perf_counter()
    cold = Searcher(index_dir, cache_size=0)
    opened = time.perf_counter() - t0
    t0 = time.perf_counter()
    typo = qs[[k for k, _q, _t in qs].index("typo")][1]
    first = cold.search(typo)
    print(
        f"searcher opened in {opened * 1000:.0f} ms; first typo query {typo!r} "
        f"{(time.perf_counter() - t0) * 1000:.0f} ms, corrected to {first.corrected!r}"
        + (" (correction skipped)" if first.correction_skipped else "")
    )
    uncached: dict[str, list[float]] = {}
    found = corrected = 0
    for kind, q, target in qs:
        t = time.perf_counter()
        r = cold.search(q)
        uncached.setdefault(kind, []).append((time.perf_counter() - t) * 1000)
        if target is not None:
            found += bool(r.results) and r.results[0].link == target
            corrected += r.corrected is not None
    typos = sum(1 for _k, _q, t in qs if t is not None)
    _report("uncached", uncached)
    print(f"typo queries: corrected {corrected}/{typos}, right page first {found}/{typos}")
    cold.close()

    warm = Searcher(index_dir, cache_size=len(qs) * 2)
    for _kind, q, _t in qs:
        warm.search(q)
    cached: dict[str, list[float]] = {}
    for kind, q, _t in qs:
        t = time.perf_counter()
        warm.search(q)
        cached.setdefault(kind, []).append((time.perf_counter() - t) * 1000)
    _report("cached", cached)
    warm.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=300, help="of each kind")
    ap.add_argument("--keep", type=Path, help="build in DIR and keep it (reused if there)")
    ap.add_argument("--random-words", action="store_true", help="pages of random words")
    ap.add_argument(
        "--volume",
        type=int,
        default=MemoryLimits().index_volume,
        help="documents an index volume holds (MemoryLimits.index_volume)",
    )
    args = ap.parse_args()
    tmp = None
    if args.keep is None:
        tmp = Path(tempfile.mkdtemp(prefix="trawl-bench-search-"))
        data = tmp
    else:
        data = args.keep
    try:
        sample_file = data / "samples.txt"
        if index_exists(data / "index") and sample_file.exists():
            lines = sample_file.read_text().split("\x1e")
            samples = [(u, t, p) for u, t, p in (s.split("\x1f") for s in lines if s)]
            print(f"reusing the index in {data}")
            sizes(data)
        else:
            data.mkdir(parents=True, exist_ok=True)
            samples, _ = generate(data, args.pages, random_words=args.random_words)
            sample_file.write_text("\x1e".join("\x1f".join(s) for s in samples))
            index(data, args.volume)
        qs = queries(samples, args.queries, random.Random(5), random_words=args.random_words)
        run_queries(data / "index", qs)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
