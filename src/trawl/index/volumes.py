"""The closed volumes of an index (``layout.py``): where a page's earlier copy may be.

The index writer adds to its last volume only; the volumes before it are closed. A
page written again (a refetch, or a batch written again after a crash) must replace
its earlier copy wherever that is, so after each commit of the open volume the
closed ones are asked whether they hold any of the batch's URLs or content hashes:
first their filter of the terms they hold (``terms.py``), which rules out most, then
a query of the terms it may hold. Only a volume that holds one gets a writer, for
those deletes, and gives it back once committed. A crawl mostly writes new pages:
the filters rule them out, and a closed volume is never written again.

A crash between the open volume's commit and a closed one's leaves the earlier copy
for a while: the batch's pages are not marked indexed, so they are written again on
start, and their deletes run again.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import tantivy

from trawl.errors import StorageError
from trawl.index.schema import open_index
from trawl.index.terms import Hashes, TermFilter, term_hashes

# The least heap tantivy lets a writer have: a closed volume's writer only deletes.
_DELETE_HEAP = 15 * 1024 * 1024


class ClosedVolume:
    """One closed volume, opened for reading (its searcher) and, now and then, for
    deletes."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._index = open_index(directory)  # IndexFormatError for an older trawl's
        self._index.config_reader(reload_policy="manual")
        self._index.reload()
        self.filter = TermFilter.load(directory)

    def holds_any(self, urls: list[str], keys: list[str], hashes: Hashes | None = None) -> bool:
        """Whether a live document of this volume has one of ``urls`` or ``keys``
        (``hashes``: their ``term_hashes``, urls first, if already made)."""
        if self.filter is not None:
            if hashes is None:
                hashes = term_hashes(urls, keys)
            maybe = self.filter.may_hold(hashes)
            if not any(maybe):
                return False
            n = len(urls)
            urls = [u for u, m in zip(urls, maybe[:n], strict=True) if m]
            keys = [k for k, m in zip(keys, maybe[n:], strict=True) if m]
        schema = self._index.schema
        query = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Should, tantivy.Query.term_set_query(schema, "url", urls)),
                (tantivy.Occur.Should, tantivy.Query.term_set_query(schema, "key", keys)),
            ]
        )
        return bool(self._index.searcher().search(query, limit=1, count=False).hits)

    def delete(self, urls: list[str], keys: list[str]) -> None:
        """Delete every document with one of ``urls`` or ``keys``, and commit."""
        try:
            writer = self._index.writer(heap_size=_DELETE_HEAP, num_threads=1)
        except ValueError as exc:
            raise StorageError(f"{self.directory}: the index is in use by another writer") from exc
        try:
            for url in urls:
                writer.delete_documents_by_term("url", url)
            for key in keys:
                writer.delete_documents_by_term("key", key)
            writer.commit()
            writer.wait_merging_threads()
        finally:
            del writer
        self._index.reload()


class ClosedVolumes:
    """The closed volumes of one index (or shard), oldest first."""

    def __init__(self, directories: Sequence[Path]) -> None:
        self.volumes = [ClosedVolume(d) for d in directories]

    def __len__(self) -> int:
        return len(self.volumes)

    def add(self, directory: Path) -> None:
        self.volumes.append(ClosedVolume(directory))

    def retire(self, urls: list[str], keys: list[str], hashes: Hashes | None = None) -> None:
        """Delete the earlier copies of a batch written to the open volume (``urls`` and
        content hashes ``keys``; ``hashes``: their ``term_hashes``, if made)."""
        if hashes is None and self.volumes:
            hashes = term_hashes(urls, keys)
        for volume in self.volumes:
            if volume.holds_any(urls, keys, hashes):
                volume.delete(urls, keys)

    def close(self) -> None:
        self.volumes = []
