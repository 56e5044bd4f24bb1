"""The lexicon: the words typo correction draws from, kept on disk beside the index.

A small tantivy index in ``<index>/lexicon/``: one document per word (unstemmed,
folded: what the plain analyzer makes of it), its document frequency as last counted
in a fast field. Searchers open it like the main index and look words up with
tantivy's Levenshtein automaton over its term dictionary (in Rust, a fraction of a
millisecond), so nothing is built at query time.

The index writer keeps it up (``LexiconWriter.update`` after each commit of the
main index): the words of the batch it does not hold yet are admitted when the index
holds them in at least ``min_df`` documents: 2, or 1 while the index is small (under
1,000 documents, and while the lexicon has room for words seen once). Words seen in
one document only are mostly typos themselves, and in an odd vocabulary (random
strings, identifiers) they are nearly all the words: leaving them out keeps the
lexicon a small fraction of the index. A word's document frequency is that of its
stem in the title or body of its language (the larger), which the main index knows
without a field of its own. A word seen in its second document is looked up then,
so only words new to the lexicon cost a lookup.

The counts go stale as pages are replaced, and the rare words admitted while the
index was small outlive that: the writer compacts the lexicon (counts again, drops
what fell under ``min_df``, keeps the ``MAX_WORDS`` commonest) when the index crosses
1,000 documents, whenever it has doubled since, and when the lexicon is over its
bound. The main index commits first; a crash before the lexicon's commit loses that
batch's new words until they are seen again. Searchers reload the lexicon when they
reload the index, so they may see it one batch behind.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path

import tantivy

from trawl.index.schema import (
    LANGUAGES,
    MAX_TOKEN_BYTES,
    PLAIN,
    analyzer,
    body_field,
    title_field,
)
from trawl.index.stems import AsciiTokens, ascii_split
from trawl.memory import MemoryLimits

try:
    from trawl import _native
except ImportError:  # pragma: no cover - not built (no C compiler): a set
    _native = None  # type: ignore[assignment]

# Words held (a crawl sets ``memory.lexicon_words``): the writer keeps them in a Python
# set (some 80 bytes a word), and typo correction wants the common ones.
MAX_WORDS = MemoryLimits().lexicon_words
MAX_WORD = 40  # characters
RARE_CUTOFF_DOCS = 1000  # from this many documents on, words of one document are out
_SMALL = 20_000  # words of one document are admitted while the lexicon is smaller
_HEAP_BYTES = 16 * 1024 * 1024  # tantivy's least


def lexicon_dir(index_dir: Path) -> Path:
    return index_dir / "lexicon"


def _schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    b.add_text_field("w", stored=True, tokenizer_name="raw", index_option="basic")
    b.add_unsigned_field("df", fast=True)
    return b.build()


def _open(path: Path) -> tantivy.Index:
    path.mkdir(parents=True, exist_ok=True)
    return tantivy.Index(_schema(), path=str(path), reuse=True)


def stem_df(
    searcher: tantivy.Searcher,
    analyzers: Mapping[str, tantivy.TextAnalyzer],
    codes: Sequence[str],
    word: str,
) -> int:
    """How many documents hold ``word``, by its stem in each language of ``codes``
    (the larger of title and body; a document counts once per language)."""
    total = 0
    for code in codes:
        tokens = analyzers[code].analyze(word)
        if len(tokens) != 1:
            continue
        stem = tokens[0]
        total += max(
            searcher.doc_freq(body_field(code), stem), searcher.doc_freq(title_field(code), stem)
        )
    return total


def _word(word: str) -> bool:
    return len(word) <= MAX_WORD and word.isalpha()


class KnownWords:
    """The words a lexicon holds, UTF-8: a native ``Terms`` table where
    ``trawl._native`` is built (a page's tokens are looked up without a Python object
    each), else a set."""

    def __init__(self, words: Iterable[bytes] = (), *, native: bool = True) -> None:
        self._table = _native.Terms() if native and _native is not None else None
        self._set: set[bytes] = set()
        self.update(words)

    def update(self, words: Iterable[bytes]) -> None:
        table = self._table
        if table is None:
            self._set.update(words)
            return
        for word in words:
            table[word] = None

    def __len__(self) -> int:
        return len(self._set) if self._table is None else len(self._table)

    def __contains__(self, word: bytes) -> bool:
        return word in self._set if self._table is None else word in self._table

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._set if self._table is None else self._table.keys())

    def unknown(self, tokens: AsciiTokens) -> Iterable[bytes]:
        """The distinct ``tokens`` not held."""
        table = self._table
        if table is None:
            words = tokens if isinstance(tokens, list) else tokens.as_list()
            return set(words).difference(self._set)
        if isinstance(tokens, list):
            return [w for w in set(tokens) if w not in table]
        return table.missing(tokens)


def words_of(
    plain: tantivy.TextAnalyzer,
    text: str,
    known: AbstractSet[bytes] | KnownWords = frozenset(),
    parts: Sequence[AsciiTokens] | None = None,
) -> set[str]:
    """The distinct words of ``text`` the lexicon may hold (``_word``), as the plain
    analyzer makes them, less those ``known`` (UTF-8). An ASCII text (nearly every
    page of a crawl's first language) is split in one pass over its bytes
    (``parts``: that split, ``stems.ascii_split`` of each part of the text, if made
    already), as the analyzer would split it (on anything but a letter or digit,
    lower-cased, tokens of 40 bytes and more dropped, folding a no-op), and only the
    words not ``known`` (a few of a page's thousands once the lexicon has the common
    words) are tested and made strings: a third cheaper than building every token as
    a Python string, and natively (``KnownWords``) cheaper again."""
    if parts is None and text.isascii():
        parts = [ascii_split(text)]
    if parts is not None:
        new: set[bytes] = set()
        for part in parts:
            if isinstance(known, KnownWords):
                new.update(known.unknown(part))
            else:
                new.update(set(part if isinstance(part, list) else part.as_list()) - known)
        return {w.decode("ascii") for w in new if len(w) < MAX_TOKEN_BYTES and w.isalpha()}
    return {w for w in plain.analyze(text) if _word(w) and w.encode("utf-8") not in known}


class NewWords:
    """The words new to the lexicon in a batch's documents: how many documents hold
    each, and the field code of its first document. Counted document by document, so
    a batch holds its distinct words and not every document's set of them: a new
    index volume's lexicon is empty, and every word of its first batch's 235 pages is
    new (held until the commit, those sets were the crawl's step of 25 to 40 MB at a
    volume switch: Python's arenas, left fragmented)."""

    __slots__ = ("counts", "documents", "where")

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.where: dict[str, str] = {}
        self.documents = 0

    def add(self, code: str, words: Iterable[str]) -> None:
        """One document's new words (``LexiconWriter.words``), in field ``code``."""
        counts, where = self.counts, self.where
        for word in words:
            counts[word] = counts.get(word, 0) + 1
            if word not in where:
                where[word] = code
        self.documents += 1


class LexiconWriter:
    """The one writer of ``<index>/lexicon`` (the main index's writer holds it)."""

    def __init__(self, index_dir: Path, *, max_words: int = MAX_WORDS) -> None:
        self._max_words = max_words
        self._index = _open(lexicon_dir(index_dir))
        self._writer = self._index.writer(heap_size=_HEAP_BYTES, num_threads=1)
        self._index.reload()
        searcher = self._index.searcher()
        # The words held, UTF-8 (an ASCII page's words are compared as its bytes).
        self._known = KnownWords(
            str(t).encode("utf-8") for t, _df in searcher.terms_with_prefix("w", "")
        )
        self._analyzers = {PLAIN: analyzer(PLAIN)}
        self._compacted_at: int | None = None  # num_docs at the last compaction

    def _analyzer(self, code: str) -> tantivy.TextAnalyzer:
        a = self._analyzers.get(code)
        if a is None:
            a = self._analyzers[code] = analyzer(code)
        return a

    def words(self, text: str, parts: Sequence[AsciiTokens] | None = None) -> set[str]:
        """The words of a document's ``text`` (normalised title and body) that the
        lexicon does not hold (``parts``: its ASCII split, as for ``words_of``)."""
        return words_of(self._analyzer(PLAIN), text, self._known, parts)

    def update(self, index: tantivy.Index, found: NewWords) -> int:
        """After a commit of ``index``: admit the new words ``found`` in the documents
        added (their ``words``, counted before this call), and compact when due;
        returns the index's documents as of that commit."""
        counts, where = found.counts, found.where
        index.reload()
        searcher = index.searcher()
        num_docs = searcher.num_docs
        if self._compacted_at is None:
            self._compacted_at = num_docs
        min_df = self._min_df(num_docs)
        added: list[str] = []
        doc_freq = searcher.doc_freq
        for word, n in counts.items():
            df = n
            if n < min_df:
                # Seen once in the batch: in another document already? (Its body, as
                # titles repeat their bodies' words; compaction counts both.)
                code = where[word]
                if code == PLAIN:
                    stem = word
                else:
                    tokens = self._analyzer(code).analyze(word)
                    if len(tokens) != 1:
                        continue
                    stem = tokens[0]
                df = doc_freq(body_field(code), stem)
                if df < min_df:
                    continue
            self._writer.add_document(self._doc(word, df))
            added.append(word)
            if min_df == 1 and len(self._known) + len(added) >= _SMALL:
                min_df = 2
        if added:
            self._writer.commit()
            self._known.update(w.encode("utf-8") for w in added)
        done = self._compacted_at
        if (
            (done < RARE_CUTOFF_DOCS <= num_docs)
            or (num_docs >= RARE_CUTOFF_DOCS and num_docs >= 2 * done)
            or len(self._known) > self._max_words
        ):
            self.compact(searcher)
        return int(num_docs)

    def _min_df(self, num_docs: int) -> int:
        return 1 if num_docs < RARE_CUTOFF_DOCS and len(self._known) < _SMALL else 2

    @staticmethod
    def _doc(word: str, df: int) -> tantivy.Document:
        d = tantivy.Document()
        d.add_text("w", word)
        d.add_unsigned("df", df)
        return d

    def compact(self, searcher: tantivy.Searcher) -> None:
        """Count every word again on ``searcher``; keep those still common enough."""
        codes = [c for c in LANGUAGES if searcher.doc_freq("code", c) > 0]
        analyzers = {c: self._analyzer(c) for c in codes}
        num_docs = searcher.num_docs
        min_df = 1 if num_docs < RARE_CUTOFF_DOCS else 2
        words = (w.decode("utf-8") for w in self._known)
        counted = ((stem_df(searcher, analyzers, codes, w), w) for w in words)
        kept = [(df, w) for df, w in counted if df >= min_df]
        if len(kept) > self._max_words:
            kept = heapq.nlargest(self._max_words, kept)
        self._writer.delete_all_documents()
        for df, word in kept:
            self._writer.add_document(self._doc(word, df))
        self._writer.commit()
        self._known = KnownWords(w.encode("utf-8") for _df, w in kept)
        self._compacted_at = num_docs

    def clear(self) -> None:
        self._writer.delete_all_documents()
        self._writer.commit()
        self._known = KnownWords()
        self._compacted_at = None

    def close(self) -> None:
        try:
            self._writer.wait_merging_threads()
        finally:
            del self._writer
            del self._index


class Lexicon:
    """Read side: the words near a word (any number of readers, any process)."""

    def __init__(self, index_dir: Path) -> None:
        self._path = lexicon_dir(index_dir)
        self._index: tantivy.Index | None = None
        self._searcher: tantivy.Searcher | None = None
        self._schema = _schema()

    def reload(self) -> None:
        """Pick up the writer's latest commit (the searcher calls it when it reloads)."""
        if self._index is None:
            if not (self._path / "meta.json").exists():
                return
            index = tantivy.Index.open(str(self._path))
            index.config_reader(reload_policy="manual")
            self._index = index
        self._index.reload()
        self._searcher = self._index.searcher()

    def near(self, word: str, distance: int, limit: int) -> list[str]:
        """Up to ``limit`` words within ``distance`` edits of ``word`` (a transposition
        is one), the more frequent first."""
        searcher = self._searcher
        if searcher is None:
            return []
        q = tantivy.Query.fuzzy_term_query(self._schema, "w", word, distance, True)
        hits = searcher.search(q, limit, count=False, order_by_field="df").hits
        out = []
        for _df, addr in hits:
            found = searcher.doc(addr).get_first("w")
            if isinstance(found, str):
                out.append(found)
        return out
