"""``trawl index``: the index rebuilt from the stored text, for a crawl not running.

The crawl's database lock is taken first, so a running crawl (the index's writer) is
refused with a clear message. An index of an older trawl's schema is removed. Then:
every document deleted, every page marked not indexed (both committed: a rebuild cut
short is finished by the next rebuild or the next crawl, which indexes unindexed
pages on start), and the pages indexed in batches, each batch's marks committed as it
goes. Searchers see the index fill up.

``shards`` splits the index into that many shards (``layout.py``), or makes a split
one whole again (1), which every writer and searcher follows from then on.

A fleet's crawl lives in Redis; its index is a local directory (the one an index-role
worker keeps, or any other). ``rebuild_fleet_index`` fills it from the pages the fleet
has committed, read through the crawl's read-only view, so it runs beside the fleet
and changes nothing shared; tantivy's lock keeps it off an index a worker writes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from trawl.errors import DataDirInUseError, DiskFullError, StorageError, as_disk_full
from trawl.index.sharded import fresh_indexer
from trawl.index.writer import BATCH_BYTES, CommittedTexts, batches
from trawl.storage.open import has_crawl, open_blobs, open_store, state_path
from trawl.storage.place import CrawlPlace

_BATCH = 5000


@dataclass(frozen=True, slots=True)
class RebuildSummary:
    pages: int
    documents: int
    seconds: float


def rebuild_index(
    data_dir: Path,
    *,
    progress: Callable[[int, int], None] | None = None,
    shards: int | None = None,
) -> RebuildSummary:
    """Rebuild ``<data_dir>/index`` from the text records of the pages stored, split
    into ``shards`` (None: as it is now; 1: whole)."""
    if not has_crawl(data_dir):
        raise StorageError(f"{data_dir} holds no crawl (no {state_path(data_dir).name})")
    try:
        return _rebuild(data_dir, progress, shards)
    except DiskFullError:
        raise
    except Exception as exc:
        # A full disk is one clear error: committed batches stay, the rest is redone.
        full = as_disk_full(exc, data_dir / "index")
        if full is None:
            raise
        raise full from exc


def _rebuild(
    data_dir: Path, progress: Callable[[int, int], None] | None, shards: int | None
) -> RebuildSummary:
    started = time.perf_counter()
    try:
        store = open_store(data_dir)
    except DataDirInUseError:
        raise StorageError(
            f"a crawl is running on {data_dir}: it keeps the index up itself; "
            "stop it first to rebuild the index"
        ) from None
    try:
        pages = store.pages
        # An index of an older schema is removed: it is rebuilt in the new one.
        indexer = fresh_indexer(data_dir / "index", shards)
        try:
            indexer.clear()
            every = [p.content_hash for p in pages.pages()]
            pages.mark_indexed(every, indexed=False)
            store.commit()
            done = 0
            texts = CommittedTexts(open_blobs(data_dir))
            # Pages read once, _BATCH at a time, and indexed in batches bounded by their
            # text too (index_pending would read a whole _BATCH for each of those).
            while pending := pages.unindexed(_BATCH):
                for batch in batches(pending, _BATCH, BATCH_BYTES):
                    done += indexer.index_taken(pages, texts, batch)
                    store.commit()
                    if progress is not None:
                        progress(done, len(every))
            documents = indexer.stats.documents
        finally:
            indexer.close()
    finally:
        store.close()
    return RebuildSummary(len(every), documents, time.perf_counter() - started)


def rebuild_fleet_index(
    place: CrawlPlace,
    data_dir: Path,
    *,
    progress: Callable[[int, int], None] | None = None,
    shards: int | None = None,
) -> RebuildSummary:
    """Rebuild ``<data_dir>/index`` from the committed pages of the crawl at ``place``,
    split into ``shards`` (None: as it is now; 1: whole)."""
    started = time.perf_counter()
    index_dir = data_dir / "index"
    data_dir.mkdir(parents=True, exist_ok=True)
    reader = place.reader()
    try:
        every = list(reader.pages())
    finally:
        reader.close()
    texts = CommittedTexts(place.blob_store())
    indexer = fresh_indexer(index_dir, shards)  # StorageError if a worker writes it
    try:
        indexer.clear()
        done = 0
        for batch in batches(every, _BATCH, BATCH_BYTES):
            indexer.write(indexer.docs(batch, texts))
            done += len(batch)
            if progress is not None:
                progress(done, len(every))
        documents = indexer.stats.documents
    finally:
        indexer.close()
    return RebuildSummary(len(every), documents, time.perf_counter() - started)
