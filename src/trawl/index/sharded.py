"""Writing an index split into shards (``layout.py``), and opening whichever an index is.

A ``ShardedIndexer`` holds one ``Indexer`` per shard and sends each page to the shard
its URL hashes to; a batch is written to the shards in parallel threads (tantivy and
gzip work in native code), each shard committing its part. A crash between two
shards' commits leaves the batch's pages unmarked, so they are written again, and the
deletes by URL and content hash make that a replacement. Every writer of an index
opens it with ``open_indexer``, which follows the layout on disk; ``trawl index
--shards N`` lays an index out anew (``fresh_indexer``).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from trawl.errors import StorageError
from trawl.index.layout import shard_count, shard_dirs, shard_of, write_layout
from trawl.index.lexicon import MAX_WORDS
from trawl.index.writer import (
    HEAP_BYTES,
    VOLUME_DOCS,
    IndexDoc,
    Indexer,
    IndexStats,
    PageIndex,
)

_SHARD_HEAP = 20 * 1024 * 1024  # tantivy's least is 15 MB a thread


class ShardedIndexer(PageIndex):
    """The one writer of the split index in ``index_dir`` (StorageError if another
    holds one of its shards)."""

    def __init__(
        self,
        index_dir: Path,
        *,
        replace_old: bool = False,
        heap_bytes: int = HEAP_BYTES,
        lexicon_words: int = MAX_WORDS,
        volume_docs: int = VOLUME_DOCS,
    ) -> None:
        self.index_dir = index_dir
        dirs = shard_dirs(index_dir)
        heap = max(_SHARD_HEAP, heap_bytes // len(dirs))
        words = max(1, lexicon_words // len(dirs))
        # Shards merge side by side: their volumes share the bound as their heaps do.
        volume = -(-volume_docs // len(dirs))
        self._shards: list[Indexer] = []
        try:
            for d in dirs:
                self._shards.append(
                    Indexer(
                        d,
                        heap_bytes=heap,
                        replace_old=replace_old,
                        lexicon_words=words,
                        volume_docs=volume,
                    )
                )
        except BaseException:
            for opened in self._shards:
                opened.close()
            raise
        self._pool = ThreadPoolExecutor(len(dirs), thread_name_prefix="trawl-index")
        self.stats = IndexStats()

    @property
    def shards(self) -> int:
        return len(self._shards)

    def write(self, docs: Iterable[IndexDoc]) -> int:
        """Add ``docs``, each to its shard (replacing earlier versions), and commit the
        shards written; returns the number of documents. (The batch's texts are held
        here, parted by shard, for the shards' writers in parallel.)"""
        parts: list[list[IndexDoc]] = [[] for _ in self._shards]
        count = 0
        for doc in docs:
            parts[shard_of(doc.url, len(parts))].append(doc)
            count += 1
        jobs = [(ix, part) for ix, part in zip(self._shards, parts, strict=True) if part]
        list(self._pool.map(lambda job: job[0].write(job[1]), jobs))
        self.stats.documents += count
        self.stats.seconds = sum(ix.stats.seconds for ix in self._shards)
        return count

    def clear(self) -> None:
        for ix in self._shards:
            ix.clear()

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        errors: list[BaseException] = []
        for ix in self._shards:
            try:
                ix.close()
            except Exception as exc:  # free every shard's lock, then say what failed
                errors.append(exc)
        if errors:
            raise errors[0]


def open_indexer(
    index_dir: Path,
    *,
    replace_old: bool = False,
    heap_bytes: int = HEAP_BYTES,
    lexicon_words: int = MAX_WORDS,
    volume_docs: int = VOLUME_DOCS,
) -> Indexer | ShardedIndexer:
    """The writer of ``index_dir``, whole or split as it is on disk (``heap_bytes``,
    ``lexicon_words`` and ``volume_docs`` for all its shards)."""
    try:
        split = shard_count(index_dir) is not None
    except ValueError as exc:
        raise StorageError(str(exc)) from None
    bounds = {"heap_bytes": heap_bytes, "lexicon_words": lexicon_words, "volume_docs": volume_docs}
    if split:
        return ShardedIndexer(index_dir, replace_old=replace_old, **bounds)
    return Indexer(index_dir, replace_old=replace_old, **bounds)


def fresh_indexer(index_dir: Path, shards: int | None) -> Indexer | ShardedIndexer:
    """The writer of ``index_dir`` for a rebuild: an older format is replaced, and
    ``shards`` (None: keep the layout there) lays the index out anew, whole for 1."""
    try:
        current = shard_count(index_dir) or 1
    except ValueError:
        current = 0  # unreadable: laid out anew
        if shards is None:
            raise StorageError(f"{index_dir}: the shard layout is unreadable") from None
    if shards is not None and shards != current:
        if index_dir.exists():
            if current:
                # The writer lock of what is there first: a writer at work is refused.
                open_indexer(index_dir, replace_old=True).close()
            shutil.rmtree(index_dir)
        if shards > 1:
            write_layout(index_dir, shards)
    return open_indexer(index_dir, replace_old=True)
