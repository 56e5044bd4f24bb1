"""The searcher: queries over the index, from any process, while the crawl writes.

A ``Searcher`` opens the index read-only and sees a commit once it reloads: a
``stat`` of tantivy's ``meta.json`` (rewritten at every commit) tells whether there
is one, so ``reload`` is cheap when nothing changed, and ``search`` calls it at most
every ``reload_interval`` seconds. A reload that finds a new commit also empties the
cache of answers, which is keyed by the query's canonical form, page and size. An
index that does not exist yet is an empty one until it appears.

Results keep one hit per near-duplicate cluster (the best), ``size`` per page. The
total is the number of matching pages; when collapsing removed pages beyond the
ones fetched for this page, it is an upper bound (counting clusters exactly would
cost a pass over every match). The index stores no body: the text record of each hit
shown is read from the text store (``<data>/text``, beside the index) for its
snippet, one gzip member each.

Typo correction gets ``correction_budget`` seconds of the searcher's clock; past it,
the query runs with the corrections found so far and the answer says
``correction_skipped`` (such an answer is not cached: the next try may do better).
Searches hold no lock while they run: any number of threads may search at once, and
tantivy lets go of the GIL while it searches.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import os
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import tantivy

from trawl.archive.textstore import decode_record
from trawl.index.correct import Budget, Corrector
from trawl.index.plan import Compiler, Plan
from trawl.index.query import ParsedQuery, QueryError, Word, parse, rewrite
from trawl.index.schema import (
    LANGUAGES,
    PLAIN,
    analyzer,
    body_field,
    normalise,
    open_index,
    title_field,
)
from trawl.index.snippet import SNIPPET_CHARS, snippet
from trawl.models import Location
from trawl.storage.blobs import TEXT_LOG, BlobStore
from trawl.storage.open import open_blobs

log = logging.getLogger(__name__)

MAX_SIZE = 100
_MAX_COMBOS = 16  # combinations of correction candidates tried against the index
MAX_RESULTS = 1000  # page * size: deeper paging is refused (it costs the whole prefix)
CORRECTION_BUDGET = 0.05  # seconds


@dataclass(frozen=True)
class Hit:
    title: str
    snippet: str  # HTML: escaped text, query terms in <mark>
    link: str
    host: str
    score: float
    fetched_at: float  # Unix time
    language: str | None


@dataclass(frozen=True)
class SearchResults:
    query: str
    results: list[Hit]
    total: int
    took_ms: float
    corrected: str | None  # the query as run, when a word was corrected
    page: int
    size: int
    correction_skipped: bool = False  # the budget ran out: some typos may be left


def _stamp(index_dir: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(index_dir / "meta.json")
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class _View:
    """One commit of the index: its searcher and what depends on it."""

    def __init__(self, index: tantivy.Index, generation: int) -> None:
        self.searcher = index.searcher()
        self.generation = generation
        self.schema = index.schema
        present = tuple(c for c in LANGUAGES if self.searcher.doc_freq("code", c) > 0)
        self.languages = present or (PLAIN,)


class Searcher:
    """Searches the index in ``index_dir`` (thread-safe; many may be open at once)."""

    def __init__(
        self,
        index_dir: Path,
        *,
        cache_size: int = 1024,
        reload_interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        blobs: BlobStore | None = None,
        corrector: Corrector | None = None,
        correction_budget: float = CORRECTION_BUDGET,
    ) -> None:
        self.index_dir = Path(index_dir)
        # The text records the snippets come from: the crawl's blob store (by default
        # the data directory the index lives in).
        self._blobs = blobs if blobs is not None else open_blobs(self.index_dir.parent)
        self._cache_size = cache_size
        self._reload_interval = reload_interval
        self._clock = clock
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, str, int, int], SearchResults] = OrderedDict()
        self._index: tantivy.Index | None = None
        self._view: _View | None = None
        self._stamp: tuple[int, int, int] | None = None
        self._generation = 0
        self._checked = 0.0
        self._analyzers = {code: analyzer(code) for code in LANGUAGES}
        self._corrector = corrector if corrector is not None else Corrector(self.index_dir)
        self._budget = correction_budget
        self._closed = False
        self.reload()

    # -- lifecycle ---------------------------------------------------------------------

    def reload(self) -> None:
        """Pick up the latest commit (a stat when there is none new)."""
        with self._lock:
            self._checked = self._clock()
            stamp = _stamp(self.index_dir)
            if stamp == self._stamp and (stamp is None or self._view is not None):
                return
            if stamp is None:
                self._index, self._view = None, None
            else:
                if self._index is None:
                    # Checks the schema: IndexFormatError for an older trawl's index.
                    index = open_index(self.index_dir)
                    index.config_reader(reload_policy="manual")
                    self._index = index
                self._index.reload()
                self._corrector.reload()
                self._generation += 1
                self._view = _View(self._index, self._generation)
            self._stamp = stamp
            self._cache.clear()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._view = None
            self._index = None
            self._cache.clear()

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def num_docs(self) -> int:
        view = self._view
        return 0 if view is None else view.searcher.num_docs

    # -- searching ---------------------------------------------------------------------

    def search(self, query: str, *, page: int = 1, size: int = 10) -> SearchResults:
        """Run ``query``; raises QueryError (with a message for the user) for bad input."""
        started = time.perf_counter()
        if self._closed:
            raise RuntimeError("the searcher is closed")
        if not isinstance(page, int) or page < 1:
            raise QueryError("page must be a whole number from 1")
        if not isinstance(size, int) or not 1 <= size <= MAX_SIZE:
            raise QueryError(f"size must be a whole number from 1 to {MAX_SIZE}")
        if page * size > MAX_RESULTS:
            raise QueryError(f"results beyond the first {MAX_RESULTS:,} are not shown")
        if not isinstance(query, str):
            raise QueryError("the query must be text")
        if self._clock() - self._checked >= self._reload_interval:
            self.reload()
        # A repeat of the very same text is answered before parsing it; other spellings
        # of one query meet under the canonical form.
        raw = ("raw", query, page, size)
        cached = self._cached(raw)
        if cached is None:
            parsed = parse(query)
            key = ("canonical", parsed.canonical, page, size)
            cached = self._cached(key)
            if cached is None:
                view = self._view
                if view is None:
                    results = SearchResults(query, [], 0, 0.0, None, page, size)
                else:
                    results = self._run(view, parsed, query, page, size)
                took = (time.perf_counter() - started) * 1000
                results = dataclasses.replace(results, took_ms=took)
                if not results.correction_skipped:
                    self._store(key, results, view)
                    self._store(raw, results, view)
                return results
            self._store(raw, cached, self._view)
        took = (time.perf_counter() - started) * 1000
        return dataclasses.replace(cached, query=query, took_ms=took)

    def _cached(self, key: tuple[str, str, int, int]) -> SearchResults | None:
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
        return cached

    def _store(
        self, key: tuple[str, str, int, int], results: SearchResults, view: _View | None
    ) -> None:
        with self._lock:
            # Only answers from the current view: a reload in between emptied the cache.
            if self._view is view and self._cache_size > 0:
                self._cache[key] = results
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)

    def _corrections(
        self, view: _View, compiler: Compiler, parsed: ParsedQuery, budget: Budget
    ) -> list[tuple[Word, str]]:
        """Unknown words and their corrections: the likeliest combination of candidates
        that finds something, else the likeliest (within the budget)."""
        unknown: list[tuple[Word, list[str]]] = []
        plain = self._analyzers[PLAIN]
        for word in parsed.words():
            tokens = plain.analyze(word.text)
            if len(tokens) != 1 or self._known(view, word.text):
                continue
            if not budget.left():
                break
            found = self._corrector.candidates(
                view.searcher, self._analyzers, view.languages, tokens[0]
            )
            if found:
                unknown.append((word, found))
        if not unknown:
            return []
        combos = itertools.islice(itertools.product(*(c for _w, c in unknown)), _MAX_COMBOS)
        ranked = sorted(
            combos,
            key=lambda combo: sum(
                cands.index(pick) for pick, (_w, cands) in zip(combo, unknown, strict=True)
            ),
        )
        for combo in ranked:
            if not budget.left():
                break
            fixes = {id(w): pick for pick, (w, _c) in zip(combo, unknown, strict=True)}
            try:
                plan = compiler.compile(parsed.root, fixes)
            except QueryError:
                break
            if view.searcher.search(plan.query, 1, count=False).hits:
                return [(w, pick) for pick, (w, _c) in zip(combo, unknown, strict=True)]
        return [(w, cands[0]) for w, cands in unknown]

    def _known(self, view: _View, text: str) -> bool:
        """Whether the word's stem is in some title or body (then it is no typo: "run"
        is not in the vocabulary of a page that says "running", its stem is)."""
        for code in view.languages:
            tokens = self._analyzers[code].analyze(text)
            if len(tokens) != 1:
                return True
            if view.searcher.doc_freq(body_field(code), tokens[0]) or view.searcher.doc_freq(
                title_field(code), tokens[0]
            ):
                return True
        return False

    def _run(
        self, view: _View, parsed: ParsedQuery, query: str, page: int, size: int
    ) -> SearchResults:
        compiler = Compiler(view.schema, view.languages, self._analyzers)
        budget = Budget(self._clock, self._clock() + self._budget)
        corrections = self._corrections(view, compiler, parsed, budget)
        plan = compiler.compile(parsed.root, {id(w): fixed for w, fixed in corrections})
        corrected = rewrite(parsed, corrections) if corrections else None
        kept, total = self._collapsed(view, plan, page * size)
        generators: dict[str, tantivy.SnippetGenerator] = {}
        hits = [
            self._hit(view, plan, generators, score, addr)
            for score, addr in kept[(page - 1) * size :]
        ]
        return SearchResults(query, hits, total, 0.0, corrected, page, size, budget.spent)

    def _collapsed(
        self, view: _View, plan: Plan, need: int
    ) -> tuple[list[tuple[float, tantivy.DocAddress]], int]:
        """The best ``need`` hits, one per cluster, and the total."""
        fetch = need * 2 + 10
        while True:
            result = view.searcher.search(plan.query, fetch, count=True)
            # ``count`` is there when asked for, though the type stubs omit it.
            counted: int | None = getattr(result, "count", None)
            count = counted if counted is not None else len(result.hits)
            hits = result.hits
            clusters = view.searcher.fast_field_values("cluster", [a for _s, a in hits])
            seen: set[object] = set()
            kept: list[tuple[float, tantivy.DocAddress]] = []
            for (score, addr), cluster in zip(hits, clusters, strict=True):
                if cluster in seen:
                    continue
                seen.add(cluster)
                kept.append((float(score), addr))
            exhausted = len(hits) < fetch
            if len(kept) >= need or exhausted or fetch >= MAX_RESULTS * 8:
                dropped = len(hits) - len(kept)
                total = len(kept) if exhausted else count - dropped
                return kept[:need], total
            fetch *= 4

    def _hit(
        self,
        view: _View,
        plan: Plan,
        generators: dict[str, tantivy.SnippetGenerator],
        score: float,
        addr: tantivy.DocAddress,
    ) -> Hit:
        doc = view.searcher.doc(addr)
        code = str(doc.get_first("code") or PLAIN)
        body = self._body(doc)
        generator = None
        if plan.highlight is not None:
            generator = generators.get(code)
            if generator is None:
                # One per language field and query: it holds the query's term weights.
                generator = tantivy.SnippetGenerator.create(
                    view.searcher, plan.highlight, view.schema, body_field(code)
                )
                generator.set_max_num_chars(SNIPPET_CHARS)
                generators[code] = generator
        language = doc.get_first("language")
        text = tantivy.Document()  # what the generator highlights: the body as indexed
        text.add_text(body_field(code), body)
        return Hit(
            title=str(doc.get_first(title_field(code)) or ""),
            snippet=snippet(generator, text, body),
            link=str(doc.get_first("url")),
            host=str(doc.get_first("host")),
            score=score,
            fetched_at=float(doc.get_first("fetched_at") or 0.0),
            language=str(language) if language else None,
        )

    def _body(self, doc: tantivy.Document) -> str:
        """The page's text as it was indexed, read from its text record ("" if lost)."""
        where = Location(
            str(doc.get_first("text_file")),
            int(doc.get_first("text_offset") or 0),
            int(doc.get_first("text_length") or 0),
        )
        try:
            record = decode_record(self._blobs.read(TEXT_LOG, where), where)
        except (OSError, ValueError, EOFError, zlib.error) as exc:
            log.warning("text record of %s unreadable: %s", doc.get_first("url"), exc)
            return ""
        return normalise(str(record.get("text") or ""))
