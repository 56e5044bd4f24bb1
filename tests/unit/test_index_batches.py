"""Index batches are bounded by their text as well as their pages (``index_batch``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from tests.unit.test_index_corpus import prose_pages, write_pages
from trawl.index import Indexer
from trawl.index.crawling import CrawlIndexing
from trawl.index.writer import CommittedTexts, batches, within_bytes
from trawl.memory import MemoryLimits
from trawl.models import Location
from trawl.storage.base import PageRecord
from trawl.storage.open import open_blobs, open_store


def _page(n: int, length: int) -> PageRecord:
    return PageRecord(
        content_hash=f"{n:032x}",
        url=f"http://a.test/{n}",
        host="a.test",
        fp=n,
        fetched_at=1.7e9,
        title="",
        language="en",
        warc=Location("none", 0, 0),
        text=Location("t", 0, length),
    )


def test_a_batch_takes_pages_up_to_its_bytes() -> None:
    pages = [_page(n, 100) for n in range(10)]
    assert within_bytes(pages, 350) == pages[:3]
    assert within_bytes(pages, 300) == pages[:3]
    assert within_bytes(pages, 10_000) == pages
    assert within_bytes([], 10) == []


def test_a_page_larger_than_the_bound_is_a_batch_of_its_own() -> None:
    pages = [_page(0, 5_000), _page(1, 10), _page(2, 10)]
    assert within_bytes(pages, 100) == pages[:1]
    assert [len(b) for b in batches(pages, 10, 100)] == [1, 2]


def test_batches_keep_the_order_and_both_bounds() -> None:
    pages = [_page(n, 10 + n % 7 * 40) for n in range(100)]
    got = list(batches(pages, 8, 200))
    assert [p for b in got for p in b] == pages
    assert all(0 < len(b) <= 8 for b in got)
    assert all(sum(p.text.length for p in b) <= 200 for b in got if len(b) > 1)


def test_index_pending_takes_a_backlog_in_bounded_batches(tmp_path: Path) -> None:
    write_pages(tmp_path, prose_pages(24, hosts=3))
    store, indexer = open_store(tmp_path), Indexer(tmp_path / "index")
    texts = CommittedTexts(open_blobs(tmp_path))
    sizes = []
    try:
        every = list(store.pages.pages())
        bound = 3 * max(p.text.length for p in every)
        while n := indexer.index_pending(store.pages, texts, limit=500, max_bytes=bound):
            store.commit()
            sizes.append(n)
        assert sizes == [len(b) for b in batches(every, 500, bound)]
        assert sum(sizes) == 24 and 3 <= max(sizes) < 24
        assert indexer.stats.documents == 24
    finally:
        indexer.close()
        store.close()


class _Counts:
    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, name: str, n: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + n


@pytest.mark.parametrize("bound", [1, 4 << 20])
def test_the_crawls_indexing_drains_a_backlog_in_batches_of_its_bytes(
    tmp_path: Path, bound: int
) -> None:
    write_pages(tmp_path, prose_pages(20, hosts=2))
    store = open_store(tmp_path)
    counts = _Counts()
    indexing = CrawlIndexing(
        pages=store.pages,
        blobs=open_blobs(tmp_path),
        index_dir=tmp_path / "index",
        counters=counts,
        batch=500,
        limits=MemoryLimits(index_batch=bound),
    )
    written: list[int] = []
    write = indexing.indexer.write

    def counted(docs):  # type: ignore[no-untyped-def]
        batch = list(docs)
        written.append(len(batch))
        return write(batch)

    indexing.indexer.write = counted  # type: ignore[method-assign]
    reads: list[int] = []
    unindexed = store.pages.unindexed

    def read(limit: int) -> list[PageRecord]:
        taken = unindexed(limit)
        reads.append(len(taken))
        return taken

    indexing._pages = cast(
        Any, SimpleNamespace(unindexed=read, mark_indexed=store.pages.mark_indexed)
    )

    async def run() -> None:
        indexing.after_commit()  # the first batch, due at once
        await indexing.drain(index_rest=True)

    try:
        asyncio.run(run())
        store.commit()
    finally:
        indexing.close()
    assert sum(written) == 20 and counts.counts["index:pages"] == 20
    # A bound smaller than any page: one page a batch; the default: one batch.
    assert written == ([1] * 20 if bound == 1 else [20])
    assert store.pages.unindexed(100) == []
    # Each page read from the store once: what a batch left out is the next one's.
    assert reads == [20, 0]
    store.close()
