"""The index writer: stored pages go into the tantivy index, idempotently.

One process writes (the crawl, or ``trawl index``); tantivy's own lock file keeps a
second writer out. A batch is: the pages the page store has not marked indexed, each
added after deleting any earlier document with the same URL (a refetch replaces its
earlier version) or the same content hash (adding a page twice leaves one document);
then the tantivy commit; then, and only then, the pages are marked indexed in the
page store, whose own commit follows at the crawl's next group commit. A crash
between the two commits leaves pages indexed but not marked: they are indexed again
on start, and the deletes make that a replacement, never a second copy.

The crawl calls ``index_pending`` right after a database commit, so every page it
reads is committed: a page whose parse was rolled back by a crash (and that might
not be stored again on resume) is never indexed. The index stores where each page's
text record is, not the text: a committed record is never rewritten.

The index is a series of volumes (``layout.py``): the writer adds to the last, and
begins the next once it holds ``MemoryLimits.index_volume`` documents; the earlier
copies a batch replaces are deleted from the closed volumes after the batch's commit
(``volumes.py``). Each volume has its own lexicon: after each commit the writer keeps
the open volume's typo-correction lexicon up (``lexicon.py``).
An index of an older schema is refused (``IndexFormatError``: rebuild it with
``trawl index``), or, for that rebuild, removed first.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import tantivy
import xxhash

from trawl.archive.textstore import decode_record
from trawl.errors import StorageError
from trawl.index.layout import SHARDS_FILE, volume_dir, volume_dirs, volume_number
from trawl.index.lexicon import MAX_WORDS, LexiconWriter, NewWords
from trawl.index.schema import (
    IndexFormatError,
    body_field,
    field_code,
    normalise,
    open_index,
    site_terms,
    title_field,
)
from trawl.index.stems import Stems, ascii_split, register_writer
from trawl.index.terms import (
    TERMS_FILE,
    OpenTerms,
    append_terms,
    clear_terms,
    repair_terms,
    term_hashes,
)
from trawl.index.volumes import ClosedVolumes
from trawl.memory import MemoryLimits
from trawl.models import Location
from trawl.storage.base import PageRecord
from trawl.storage.blobs import TEXT_LOG, BlobStore

DEFAULT_BATCH = 500
# tantivy's indexing heap (at least 15 MB a thread; a crawl sets ``memory.index_heap``):
# the postings of the documents added since the last commit, or of part of them, as
# tantivy writes a segment out whenever its heap is full. One thread leaves the
# crawl's other core to the crawl.
HEAP_BYTES = MemoryLimits().index_heap
_THREADS = 1
BATCH_BYTES = MemoryLimits().index_batch
VOLUME_DOCS = MemoryLimits().index_volume


def within_bytes(pages: Sequence[PageRecord], max_bytes: int) -> list[PageRecord]:
    """The first of ``pages`` whose text records come to at most ``max_bytes`` (the
    first page whatever its size): what indexing a batch holds grows with its text
    (``MemoryLimits.index_batch``)."""
    total = 0
    for i, page in enumerate(pages):
        total += page.text.length
        if total > max_bytes and i:
            return list(pages[:i])
    return list(pages)


def batches(
    pages: Sequence[PageRecord], max_pages: int, max_bytes: int
) -> Iterator[list[PageRecord]]:
    """``pages`` in order, in batches of at most ``max_pages`` and ``max_bytes`` of text."""
    done = 0
    while done < len(pages):
        batch = within_bytes(pages[done : done + max_pages], max_bytes)
        done += len(batch)
        yield batch


class PendingPages(Protocol):
    """What the indexer needs of a page store."""

    def unindexed(self, limit: int) -> list[PageRecord]: ...

    def mark_indexed(self, content_hashes: list[str], *, indexed: bool = True) -> None: ...


class TextReader(Protocol):
    def read(self, location: Location) -> dict[str, Any]: ...


class CommittedTexts:
    """Reads committed text records from any thread, through the crawl's blob store."""

    def __init__(self, blobs: BlobStore) -> None:
        self._blobs = blobs

    def read(self, location: Location) -> dict[str, Any]:
        return decode_record(self._blobs.read(TEXT_LOG, location), location)


@dataclass(frozen=True, slots=True)
class IndexDoc:
    """One page as the index holds it."""

    key: str  # content hash
    url: str
    host: str
    title: str
    text: str
    language: str | None
    fetched_at: float
    cluster: str
    where: Location  # the text record (title and text were read from it)


def cluster_key(cluster: str) -> int:
    """The cluster id as the u64 the index's fast field holds."""
    return int(xxhash.xxh64_intdigest(cluster.encode("utf-8")))


def doc_from(page: PageRecord, record: dict[str, Any]) -> IndexDoc:
    """The index document of a page, from its page row and its text record."""
    # The parse stage writes "cluster" (and the same value as provenance.near_cluster);
    # a record without one is its own cluster.
    cluster = record.get("cluster")
    return IndexDoc(
        key=page.content_hash,
        url=page.url,
        host=page.host,
        title=str(record.get("title") or page.title or ""),
        text=str(record.get("text") or ""),
        language=page.language,
        fetched_at=float(page.fetched_at),
        cluster=str(cluster or page.content_hash),
        where=page.text,
    )


def _document(
    doc: IndexDoc, code: str, title: str, body: str | tantivy.PreTokenizedString, stems: Stems
) -> tantivy.Document:
    # Typed adds only: an int passed where the schema wants u64 panics tantivy's
    # indexing thread and poisons the writer.
    d = tantivy.Document()
    d.add_text("key", doc.key)
    d.add_text("url", doc.url)
    d.add_text("host", doc.host)
    for term in site_terms(doc.host):
        d.add_text("site", term)
    if doc.language:
        d.add_text("language", doc.language)
    d.add_float("fetched_at", doc.fetched_at)
    d.add_unsigned("cluster", cluster_key(doc.cluster))
    d.add_text("code", code)
    d.add_text("text_file", doc.where.file)
    d.add_unsigned("text_offset", doc.where.offset)
    d.add_unsigned("text_length", doc.where.length)
    for field, value in (
        (title_field(code), stems.title(title)),
        (body_field(code), body),
    ):
        if isinstance(value, str):
            d.add_text(field, value)
        else:
            d.add_pre_tokenized_text(field, value)
    return d


@dataclass(slots=True)
class IndexStats:
    documents: int = 0
    seconds: float = 0.0  # wall time spent in write() (adds and commits)


class PageIndex:
    """What every writer of the index does with stored pages: read their texts, write
    them (``write``: the writer's own), mark them indexed."""

    def write(self, docs: Iterable[IndexDoc]) -> int:
        raise NotImplementedError

    # -- the steps (the crawl runs ``docs`` and ``write`` off its event loop) --------

    def docs(
        self,
        taken: Sequence[PageRecord],
        texts: TextReader,
        *,
        on_unreadable: Callable[[PageRecord, Exception], None] | None = None,
    ) -> Iterator[IndexDoc]:
        """The documents of ``taken`` pages, each text read from the text store as it
        is wanted: a writer holds one page's text at a time, not a batch's."""
        for page in taken:
            try:
                record = texts.read(page.text)
            except Exception as exc:  # a text record lost: the page stays out of the index
                if on_unreadable is not None:
                    on_unreadable(page, exc)
                continue
            yield doc_from(page, record)

    def index_pending(
        self,
        pages: PendingPages,
        texts: TextReader,
        *,
        limit: int = DEFAULT_BATCH,
        max_bytes: int = BATCH_BYTES,
    ) -> int:
        """One batch (at most ``limit`` pages, ``max_bytes`` of text records), start
        to end; returns how many pages it took (0: none left)."""
        return self.index_taken(pages, texts, within_bytes(pages.unindexed(limit), max_bytes))

    def index_taken(
        self, pages: PendingPages, texts: TextReader, taken: Sequence[PageRecord]
    ) -> int:
        """Write ``taken`` (pages not indexed yet) and mark them indexed; returns how many."""
        if not taken:
            return 0
        self.write(self.docs(taken, texts))
        pages.mark_indexed([p.content_hash for p in taken])
        return len(taken)


class Indexer(PageIndex):
    """The one writer of ``index_dir`` (raises StorageError if another holds it, and
    IndexFormatError for an index of an older schema unless ``replace_old``)."""

    def __init__(
        self,
        index_dir: Path,
        *,
        heap_bytes: int = HEAP_BYTES,
        threads: int = _THREADS,
        replace_old: bool = False,
        lexicon_words: int = MAX_WORDS,
        volume_docs: int = VOLUME_DOCS,
    ) -> None:
        self.index_dir = index_dir
        if (index_dir / SHARDS_FILE).exists():
            raise StorageError(f"{index_dir} is split into shards: open it with open_indexer")
        self._heap, self._threads, self._words = heap_bytes, threads, lexicon_words
        self._volume_docs = volume_docs
        dirs = volume_dirs(index_dir)
        try:
            self._closed = ClosedVolumes(dirs[:-1])
            self._index = open_index(dirs[-1])
        except IndexFormatError:
            if not replace_old:
                raise
            shutil.rmtree(index_dir)
            dirs = [index_dir]
            self._closed = ClosedVolumes([])
            self._index = open_index(index_dir)
        self._stems: dict[str, Stems] = {}
        self._open(dirs[-1])
        self.stats = IndexStats()

    def _open(self, volume: Path) -> None:
        """Take the writer of ``volume`` (``self._index``), the one written to."""
        # Texts are stemmed here, once per distinct word (stems.py), not by tantivy.
        register_writer(self._index)
        try:
            self._writer = self._index.writer(heap_size=self._heap, num_threads=self._threads)
        except ValueError as exc:
            raise StorageError(f"{volume}: the index is in use by another writer") from exc
        self._lexicon = LexiconWriter(volume, max_words=self._words)
        self.volume = volume
        repair_terms(volume)
        # A volume an older trawl began has documents and no terms file: it gets
        # none (a file of only the later terms would hide the earlier from retire).
        self._terms = (volume / TERMS_FILE).exists() or self._index.searcher().num_docs == 0
        self._held = self._open_terms() if self._terms else None

    def _open_terms(self) -> OpenTerms:
        return OpenTerms(self.volume, expected=2 * self._volume_docs)

    def _close_volume(self) -> None:
        """Let the open volume's merges finish and give its writer back."""
        try:
            self._lexicon.close()
            self._writer.wait_merging_threads()
        finally:
            del self._writer

    def _next_volume(self) -> None:
        """Close the open volume (it is full) and begin the next."""
        self._close_volume()
        self._closed.add(self.volume)
        directory = volume_dir(self.index_dir, volume_number(self.index_dir, self.volume) + 1)
        self._index = open_index(directory)
        self._open(directory)

    def write(self, docs: Iterable[IndexDoc]) -> int:
        """Add ``docs`` (replacing earlier versions) and commit; returns the opstamp."""
        started = time.perf_counter()
        w = self._writer
        found = NewWords()  # the documents' words new to the lexicon
        urls: list[str] = []
        keys: list[str] = []
        # An earlier copy is deleted where there may be one: in the volume (its terms
        # say so; without a terms file, always) or earlier in this batch. A delete of
        # what is not there is no harm, but tantivy applies each to every segment of
        # the volume at the commit: for a new page, CPU and memory for nothing.
        terms = self._held
        batch_urls: set[str] = set()
        batch_keys: set[str] = set()
        try:
            for doc in docs:
                urls.append(doc.url)
                keys.append(doc.key)
                code = field_code(doc.language)
                title, text = normalise(doc.title), normalise(doc.text)
                if (
                    terms is None
                    or doc.url in batch_urls
                    or doc.key in batch_keys
                    or terms.may_hold(doc.url, doc.key)
                ):
                    w.delete_documents_by_term("url", doc.url)
                    w.delete_documents_by_term("key", doc.key)
                batch_urls.add(doc.url)
                batch_keys.add(doc.key)
                stems = self._stems.get(code)
                if stems is None:
                    stems = self._stems[code] = Stems(code)
                # An ASCII text is split once, for the lexicon and for the body's terms.
                body = ascii_split(text) if text.isascii() else None
                head = ascii_split(title) if body is not None and title.isascii() else None
                w.add_document(_document(doc, code, title, stems.body(text, body), stems))
                parts = None if head is None or body is None else (head, body)
                found.add(code, self._lexicon.words(f"{title}\n{text}", parts))
            # Made once, for the open volume's terms file and the closed volumes' filters.
            hashes = term_hashes(urls, keys) if urls and (self._terms or self._closed) else None
            if hashes is not None and self._terms:  # before the commit: all it may hold
                append_terms(self.volume, hashes)
                if terms is not None:
                    terms.add(hashes)
            opstamp = w.commit()
        except BaseException:
            # What was added stays in the writer, uncommitted, and the next commit makes
            # it live: a later copy of those pages must delete it, so the terms file
            # (where it can still be written) and the filter have them.
            if self._terms and urls:
                attempted, filed = term_hashes(urls, keys), True
                try:
                    append_terms(self.volume, attempted)
                except OSError:  # a full disk: this process's filter has them still
                    filed = False
                if terms is not None:
                    terms.add(attempted, filed=filed)
            raise
        held = self._lexicon.update(self._index, found)
        if urls and len(self._closed):
            self._closed.retire(urls, keys, hashes)  # their copies in closed volumes
        if self._volume_docs and held >= self._volume_docs:
            self._next_volume()
        self.stats.documents += found.documents
        self.stats.seconds += time.perf_counter() - started
        return opstamp

    def clear(self) -> None:
        """Delete every document (``trawl index`` rebuilds from the text store): the
        volumes after the first go, the first is emptied."""
        self._close_volume()
        self._closed.close()
        for directory in volume_dirs(self.index_dir)[1:]:
            shutil.rmtree(directory)
        self._closed = ClosedVolumes([])
        self._index = open_index(self.index_dir)
        self._open(self.index_dir)
        self._writer.delete_all_documents()
        self._writer.commit()
        clear_terms(self.index_dir)
        self._terms = True  # empty now: its terms file begins again
        self._held = self._open_terms()
        self._lexicon.clear()

    def close(self) -> None:
        """Let merges finish and free the writer lock."""
        try:
            self._close_volume()
        finally:
            del self._index
            self._closed.close()
