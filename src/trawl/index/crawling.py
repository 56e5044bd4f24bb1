"""The index kept up with a running crawl: batches after group commits, off the loop.

After a commit of the crawl's store (the crawl calls ``after_commit``, so every page
record it reads is committed), when ``interval`` seconds have passed since the last
batch or ``batch`` pages were stored since, or the last batch was full (a backlog, e.g. after a
restart), the pages not yet indexed are taken (one indexed SELECT), and a task reads
their texts and writes them to tantivy in a worker thread (tantivy and gzip do the
work in native code). Back on the loop, the pages are marked indexed in the current
transaction, which the next group commit makes durable. One batch runs at a time.
At shutdown, everything left is indexed before the last commit.

What the writer holds is bounded by ``MemoryLimits``: a batch's text (``index_batch``
of text records: the documents waiting in tantivy's queue and their postings), tantivy's
indexing heap (``index_heap``), one page's text at a time on the Python side (the
batch's texts are read as they are added), the lexicon's words (``lexicon_words``),
and the pages of the index's files that its merges read through their mappings
(``index_mapped``: ``mapped.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from pathlib import Path

from trawl.errors import DiskFullError, as_disk_full
from trawl.frontier.admission import CounterSink
from trawl.index.mapped import MappedPages
from trawl.index.sharded import open_indexer
from trawl.index.writer import DEFAULT_BATCH, CommittedTexts, PendingPages, within_bytes
from trawl.memory import MemoryLimits
from trawl.storage.base import PageRecord
from trawl.storage.blobs import BlobStore

log = logging.getLogger(__name__)


class CrawlIndexing:
    def __init__(
        self,
        *,
        pages: PendingPages,
        blobs: BlobStore,
        index_dir: Path,
        counters: CounterSink,
        interval: float = 2.0,
        batch: int = DEFAULT_BATCH,
        stored: Callable[[], int] = lambda: 0,
        on_disk_full: Callable[[DiskFullError], None] | None = None,
        limits: MemoryLimits | None = None,
    ) -> None:
        limits = limits or MemoryLimits()
        try:
            self.indexer = open_indexer(
                index_dir,
                heap_bytes=limits.index_heap,
                lexicon_words=limits.lexicon_words,
                volume_docs=limits.index_volume,
            )
        except Exception as exc:
            full = as_disk_full(exc, index_dir)
            if full is None:
                raise
            raise full from exc
        self.mapped = MappedPages(index_dir, limit=limits.index_mapped)
        self.mapped.start()
        self._index_dir = index_dir
        self._on_disk_full = on_disk_full
        self._pages = pages
        self._texts = CommittedTexts(blobs)
        self._counters = counters
        self._interval = interval
        self._batch = batch
        self._batch_bytes = limits.index_batch
        self._left: list[PageRecord] = []
        self._read_full = False
        self._last = 0.0
        self._full = False
        self._task: asyncio.Task[bool] | None = None
        self._draining = False
        self._stored = stored  # pages stored so far (the parse stage's count)
        self._stored_then = 0
        self._halted = False  # a full disk: no more batches in this run

    def after_commit(self) -> None:
        """The crawl's store committed: start a batch if one is due (on the loop)."""
        if self._halted or self._draining or (self._task is not None and not self._task.done()):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # the commit of close(): nothing more to start
            return
        due = (
            self._full
            or time.monotonic() - self._last >= self._interval
            or self._stored() - self._stored_then >= self._batch
        )
        if not due:
            return
        self._last = time.monotonic()
        taken, self._full = self._take()
        self._stored_then = self._stored()
        if taken:
            self._task = loop.create_task(self._index(taken))

    def _take(self) -> tuple[list[PageRecord], bool]:
        """The next batch, and whether pages were left for the next (a backlog)."""
        # A backlog's pages read but left out of a batch by its bytes are the next
        # batch's first (not read again); they stay unindexed until a batch takes them.
        pending = self._left
        if not pending:
            pending = self._pages.unindexed(self._batch)
            self._read_full = len(pending) == self._batch  # more may wait in the store
        taken = within_bytes(pending, self._batch_bytes)
        self._left = pending[len(taken) :]
        return taken, self._read_full or bool(self._left)

    async def _index(self, taken: list[PageRecord]) -> bool:
        try:
            await asyncio.to_thread(self._write, taken)
        except Exception as exc:  # the pages stay unindexed and are taken again later
            self._full = False
            full = as_disk_full(exc, self._index_dir)
            if full is not None and self._on_disk_full is not None:
                # Not an indexing fault: the crawl stops, and the index catches up
                # (the pages are still unindexed) when it runs again with space.
                self._on_disk_full(full)
                self._halted = True
                return False
            log.exception("indexing %d pages failed", len(taken))
            self._counters.add("error:index")
            return False
        self._pages.mark_indexed([p.content_hash for p in taken])
        self._counters.add("index:pages", len(taken))
        return True

    def _write(self, taken: list[PageRecord]) -> None:
        def lost(page: PageRecord, exc: Exception) -> None:
            log.warning("text of %s unreadable, not indexed: %s", page.url, exc)

        self.indexer.write(self.indexer.docs(taken, self._texts, on_unreadable=lost))

    async def drain(self, *, index_rest: bool) -> None:
        """Wait for the batch in progress; then (``index_rest``) index every committed
        page left. The caller commits afterwards."""
        self._draining = True
        try:
            if self._task is not None:
                with contextlib.suppress(Exception):
                    await self._task
            while index_rest and not self._halted and (taken := self._take()[0]):
                if not await self._index(taken):
                    break
        finally:
            self._draining = False

    async def halt(self) -> None:
        """Start no more batches; wait for the one in its thread (a full disk)."""
        self._halted = True
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task

    def close(self, *, abandon: bool = False) -> None:
        """Let merges finish and free the writer; ``abandon``: errors are let go (the
        disk is full, and the next run's writer picks up from the last commit)."""
        self._draining = True  # for good: the closing commit must start nothing
        try:
            if not abandon:
                self.indexer.close()  # the last merges: their pages still paged out
                return
            with contextlib.suppress(Exception):
                self.indexer.close()
        finally:
            self.mapped.stop()
