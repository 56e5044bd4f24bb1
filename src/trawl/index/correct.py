"""Typo correction: a word the index has never seen becomes its likeliest neighbour.

The vocabulary is the ``vocab`` field's terms (unstemmed, folded words of titles and
bodies) with their document frequencies. A word absent from it is corrected to the
most frequent vocabulary word within edit distance 1, else 2 (a transposition counts
as one edit), with the distance allowed by length as in Lucene's "AUTO": none up to
2 characters, 1 for 3 to 5, 2 from 6 on. Numbers are never corrected. The searcher
takes a few such candidates per word and keeps the first combination that finds
pages with the rest of the query ("thxme moth" is "thyme moth", though "theme" is
the commoner word).

The search is tantivy's Levenshtein automaton over a small in-memory index of the
vocabulary (one document per word, the frequency as a fast field to sort by), so it
runs in Rust: about 0.2 ms a lookup over 270,000 words. Building that index takes
about 0.6 s for as many words, so it is built when first needed and then rebuilt in
a background thread when the main index has changed and the copy is older than
``max_age``; meanwhile the older copy answers (a word new since then is not offered).
Words seen in one document only are left out of a large index: they are mostly
typos themselves, and the vocabulary is the better for it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import tantivy

from trawl.index.schema import VOCAB

_MAX_WORD = 40
_MAX_TERMS = 2_000_000  # beyond this, only the commonest words (memory bound)
_RARE_CUTOFF_DOCS = 1000  # an index this large drops words of document frequency 1


def max_edits(word: str) -> int:
    if len(word) <= 2 or not word.isalpha():
        return 0
    return 1 if len(word) <= 5 else 2


class Vocabulary:
    """An immutable snapshot of the index's words, searchable by edit distance."""

    def __init__(self, terms: list[tuple[str, int]]) -> None:
        b = tantivy.SchemaBuilder()
        b.add_text_field("t", stored=True, tokenizer_name="raw")
        b.add_unsigned_field("df", fast=True)
        self._schema = b.build()
        index = tantivy.Index(self._schema)  # in memory
        writer = index.writer(heap_size=20_000_000, num_threads=1)
        for term, df in terms:
            d = tantivy.Document()
            d.add_text("t", term)
            d.add_unsigned("df", df)
            writer.add_document(d)
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        self._searcher = index.searcher()

    @classmethod
    def of(cls, searcher: tantivy.Searcher) -> Vocabulary:
        terms = searcher.terms_with_prefix(VOCAB, "")
        min_df = 2 if searcher.num_docs >= _RARE_CUTOFF_DOCS else 1
        kept = [(t, df) for t, df in terms if df >= min_df and len(t) <= _MAX_WORD and t.isalpha()]
        if len(kept) > _MAX_TERMS:
            kept.sort(key=lambda p: -p[1])
            del kept[_MAX_TERMS:]
        return cls(kept)

    def suggest(self, word: str, *, limit: int = 4) -> list[str]:
        """Up to ``limit`` words within the allowed distance: nearer first, then the
        more frequent first."""
        out: list[str] = []
        for distance in range(1, max_edits(word) + 1):
            q = tantivy.Query.fuzzy_term_query(self._schema, "t", word, distance, True)
            hits = self._searcher.search(q, limit, count=False, order_by_field="df").hits
            for _score, addr in hits:
                found = self._searcher.doc(addr).get_first("t")
                if isinstance(found, str) and found != word and found not in out:
                    out.append(found)
            if len(out) >= limit:
                break
        return out[:limit]


class Corrector:
    """Keeps a vocabulary fresh enough for the searcher it serves."""

    def __init__(self, *, max_age: float = 60.0, clock: Callable[[], float] = time.monotonic):
        self._max_age = max_age
        self._clock = clock
        self._vocab: Vocabulary | None = None
        self._built_at = 0.0
        self._generation = -1
        self._lock = threading.Lock()
        self._building = False

    def vocabulary(self, searcher: tantivy.Searcher, generation: int) -> Vocabulary:
        vocab = self._vocab
        if vocab is None:
            with self._lock:
                if self._vocab is None:
                    self._install(Vocabulary.of(searcher), generation)
                vocab = self._vocab
            assert vocab is not None
            return vocab
        stale = generation != self._generation and self._clock() - self._built_at > self._max_age
        if stale and not self._building:
            self._building = True
            threading.Thread(target=self._rebuild, args=(searcher, generation), daemon=True).start()
        return vocab

    def _rebuild(self, searcher: tantivy.Searcher, generation: int) -> None:
        try:
            fresh = Vocabulary.of(searcher)
            with self._lock:
                self._install(fresh, generation)
        finally:
            self._building = False

    def _install(self, vocab: Vocabulary, generation: int) -> None:
        self._vocab = vocab
        self._generation = generation
        self._built_at = self._clock()

    def candidates(self, searcher: tantivy.Searcher, generation: int, word: str) -> list[str]:
        """Corrections of the folded ``word``, likeliest first (none when it is known)."""
        if max_edits(word) == 0 or searcher.doc_freq(VOCAB, word) > 0:
            return []
        found = self.vocabulary(searcher, generation).suggest(word)
        # The vocabulary may be older than the searcher: keep words still there.
        return [w for w in found if searcher.doc_freq(VOCAB, w) > 0]
