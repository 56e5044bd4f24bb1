"""One index a searcher reads: a crawl's, or one shard of a split index.

A ``Shard`` opens its index read-only and sees a commit once it reloads: a ``stat`` of
tantivy's ``meta.json`` (rewritten at every commit) tells whether there is one, so
``reload`` is cheap when nothing changed. An index that does not exist yet is an
empty one until it appears. Each commit seen is a ``ShardView``: its tantivy searcher,
the languages it holds, and its BM25 statistics (``stats.py``). The shard also holds
what reads beside the index: the lexicon typo correction draws from (``Corrector``)
and the blob store its pages' text records are in (snippets).

``IndexSpec`` is what a searcher is told to search: the index's directory (a split
one stands for its shards, ``layout.py``), the crawl it belongs to, and its blobs.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

import tantivy

from trawl.index.correct import Corrector
from trawl.index.schema import LANGUAGES, PLAIN, open_index
from trawl.index.stats import ShardStats
from trawl.storage.blobs import BlobStore

DEFAULT_CRAWL = "main"


@dataclass(frozen=True, eq=False, slots=True)
class IndexSpec:
    """An index to search, the crawl it holds, and where that crawl's texts are (None:
    the data directory the index lives in)."""

    crawl: str
    index_dir: Path
    blobs: BlobStore | None = None


def _stamp(index_dir: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(index_dir / "meta.json")
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class ShardView:
    """One commit of one index: its searcher and what depends on it."""

    def __init__(self, index: tantivy.Index, generation: int) -> None:
        self.searcher = index.searcher()
        self.generation = generation
        self.schema = index.schema
        present = tuple(c for c in LANGUAGES if self.searcher.doc_freq("code", c) > 0)
        self.languages = present or (PLAIN,)
        self.stats = ShardStats(self.searcher, self.schema)


class Shard:
    """The index in ``index_dir``, followed commit by commit (thread-safe)."""

    def __init__(
        self,
        index_dir: Path,
        *,
        blobs: BlobStore,
        crawl: str = DEFAULT_CRAWL,
        name: str | None = None,
        corrector: Corrector | None = None,
    ) -> None:
        self.index_dir = index_dir
        self.crawl = crawl
        self.name = name or crawl
        self.blobs = blobs
        self.corrector = corrector if corrector is not None else Corrector(index_dir)
        self._lock = threading.Lock()
        self._index: tantivy.Index | None = None
        self._stamp: tuple[int, int, int] | None = None
        self._generation = 0
        self.view: ShardView | None = None

    def reload(self) -> bool:
        """Pick up the latest commit (a stat when there is none new); whether it changed.
        Raises IndexFormatError for an index of an older trawl."""
        with self._lock:
            stamp = _stamp(self.index_dir)
            if stamp == self._stamp and (stamp is None or self.view is not None):
                return False
            if stamp is None:
                self._index, self.view = None, None
            else:
                if self._index is None:
                    # Checks the schema: IndexFormatError for an older trawl's index.
                    index = open_index(self.index_dir)
                    index.config_reader(reload_policy="manual")
                    self._index = index
                self._index.reload()
                self.corrector.reload()
                self._generation += 1
                self.view = ShardView(self._index, self._generation)
            self._stamp = stamp
            return True

    @property
    def num_docs(self) -> int:
        view = self.view
        return 0 if view is None else int(view.searcher.num_docs)

    def close(self) -> None:
        with self._lock:
            self.view = None
            self._index = None
