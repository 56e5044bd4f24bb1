"""Corpora for the index tests, written as a crawl writes them (text records in a
``TextStore`` on the crawl's blobs, rows in its page store, both opened as a crawl
opens them) and indexed through the crawl's own path (``Indexer.index_pending``);
and a check of that path itself."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from trawl.archive.textstore import TextStore
from trawl.index import Indexer, Searcher
from trawl.index.writer import CommittedTexts, IndexDoc
from trawl.models import Location, Position
from trawl.storage.base import PageRecord
from trawl.storage.blobs import TEXT_LOG
from trawl.storage.local.segments import SegmentLog
from trawl.storage.open import open_blobs, open_store
from trawl.testing._sample_site import distinctive_phrase
from trawl.testing._sample_text import text_generator


@dataclass(frozen=True, slots=True)
class Page:
    url: str
    title: str
    text: str
    language: str | None = "en"
    cluster: str | None = None  # None: its own

    @property
    def host(self) -> str:
        return self.url.split("/")[2]


def write_pages(
    data: Path,
    pages: Iterable[Page],
    *,
    first: int = 0,
    numbers: Iterable[int] | None = None,
    later: float = 0.0,
) -> int:
    """Store ``pages`` in ``data`` as a crawl does; returns the UTF-8 bytes of their
    titles and texts (what the index indexes). Page ``n`` gets the content hash and
    fetch time of number ``first + n``, or of ``numbers[n]`` (pages of other crawls:
    other numbers), fetched ``later`` seconds after that."""
    store, blobs = open_store(data), open_blobs(data, fsync=False)
    log = blobs.open_writer(
        TEXT_LOG, committed=store.committed_logs().get(TEXT_LOG.name), max_bytes=1 << 30
    )
    texts = TextStore(log)
    size = 0
    numbered = zip(numbers, pages, strict=True) if numbers is not None else None
    for n, page in numbered or enumerate(pages, start=first):
        key = f"{n:032x}"
        where = texts.append(
            {
                "id": key,
                "url": page.url,
                "title": page.title,
                "text": page.text,
                "language": page.language,
                "content_hash": key,
                "cluster": page.cluster or key,
                "provenance": {},
            }
        )
        store.pages.add(
            PageRecord(
                content_hash=key,
                url=page.url,
                host=page.host,
                fp=n,
                fetched_at=1.7e9 + n + later,
                title=page.title,
                language=page.language,
                warc=Location("none", 0, 0),
                text=where,
            )
        )
        size += len(page.title.encode()) + len(page.text.encode())
    store.commit({TEXT_LOG.name: log.sync()})
    log.close()
    store.close()
    return size


def index_all(data: Path, *, batch: int = 500) -> int:
    """Index every stored page in batches, as ``trawl index`` does; returns how many."""
    store = open_store(data)
    indexer = Indexer(data / "index")
    texts = CommittedTexts(open_blobs(data))
    done = 0
    try:
        while n := indexer.index_pending(store.pages, texts, limit=batch):
            store.commit()
            done += n
    finally:
        indexer.close()
        store.close()
    return done


NOWHERE = Location("", 0, 0)  # an IndexDoc's place before ``add_docs`` stores its text


def add_docs(index_dir: Path, docs: Sequence[IndexDoc]) -> list[IndexDoc]:
    """Store the texts of ``docs`` in the text store beside ``index_dir`` (where the
    searcher reads them) and index them in one batch; returns them as indexed."""
    log = SegmentLog(
        index_dir.parent / "text",
        prefix="trawl",
        suffix=".jsonl.gz",
        max_bytes=1 << 30,
        committed=Position(1, 1 << 62),  # append to whatever is there
        fsync=False,
    )
    texts = TextStore(log)
    placed = [
        dataclasses.replace(
            d,
            where=texts.append(
                {"id": d.key, "url": d.url, "title": d.title, "text": d.text, "cluster": d.cluster}
            ),
        )
        for d in docs
    ]
    log.close()
    indexer = Indexer(index_dir)
    try:
        indexer.write(placed)
    finally:
        indexer.close()
    return placed


def index_bytes(index_dir: Path) -> int:
    """Every byte under the index directory."""
    return sum(p.stat().st_size for p in index_dir.rglob("*") if p.is_file())


def prose_pages(count: int, *, seed: int = 11, hosts: int = 40) -> Iterator[Page]:
    """Generated English articles like the search benchmark's: 1 to 12 KB of prose, a
    distinctive phrase of three rare words and a few junk tokens (product codes and
    the like: the long tail of a real vocabulary)."""
    g = text_generator(seed)
    letters = "abcdefghijklmnopqrstuvwxyz0123456789"
    for n in range(count):
        rng = random.Random(n)
        host_n, article = n % hosts, n // hosts
        phrase = distinctive_phrase(seed, host_n, article, count // hosts + 1)
        paragraphs = g.prose(rng, int(rng.triangular(1000, 12000, 2000)))
        junk = " ".join(
            "".join(rng.choice(letters) for _ in range(rng.randint(4, 9)))
            for _ in range(rng.randint(2, 6))
        )
        at = rng.randrange(len(paragraphs))
        paragraphs[at] = f"{paragraphs[at]} The {phrase} {junk}."
        url = f"https://site{host_n:03d}.example/articles/{article}/"
        yield Page(url, g.title(rng), "\n\n".join(paragraphs))


def random_word_pages(count: int, *, chars: int = 19_000) -> Iterator[Page]:
    """Pages of random lower-case words of 3 to 12 letters (no language): the odd
    vocabulary of issue 16, where nearly every word is a dictionary entry of its own."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    for n in range(count):
        rng = random.Random(n)
        words: list[str] = []
        size = 0
        while size < chars:
            word = "".join(rng.choice(letters) for _ in range(rng.randint(3, 12)))
            words.append(word)
            size += len(word) + 1
        yield Page(f"http://r{n % 50}.test/{n}", " ".join(words[:5]), " ".join(words), None)


def test_every_written_page_is_indexed_once(tmp_path: Path) -> None:
    pages = list(prose_pages(30, hosts=3))
    write_pages(tmp_path, pages)
    assert index_all(tmp_path, batch=7) == 30
    assert index_all(tmp_path) == 0
    with Searcher(tmp_path / "index") as s:
        assert s.num_docs == 30
        first = pages[0]
        hit = s.search(f'"{first.text.split()[0]} {first.text.split()[1]}"', size=100)
        assert first.url in [h.link for h in hit.results]
