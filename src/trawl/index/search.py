"""The searcher: queries over one index or many (crawls, shards), from any process,
while crawls write.

A ``Searcher`` searches the indexes its source names (``IndexSpec``: one index
directory, a split one standing for its shards, and the crawl it holds), each a
``Shard`` that follows its own commits. ``search`` looks at the source and the shards'
``meta.json`` at most every ``reload_interval`` seconds; a new commit anywhere, or an
index come or gone, empties the cache of answers, which is keyed by the query's
canonical form, the crawl asked for, page and size. An index that does not exist yet
is an empty one until it appears. ``crawl=ID`` searches that crawl's indexes alone.

Several indexes are searched at once, each in a thread (tantivy lets go of the GIL),
and merged as one index holding all their pages would rank them: BM25 on the
statistics of them all (``stats.py``), pages placed in the order of their exact scores
(``gather.py``). Results keep one hit per page (the best of a near-duplicate cluster
within a crawl; across crawls, the copies of one URL, one text or one cluster are one
hit, showing the newest fetch), ``size`` per page. The total is the number of matching
pages; when collapsing removed pages beyond the ones fetched for this page, it is an
upper bound (counting clusters exactly would cost a pass over every match). The index
stores no body: the text record of each hit shown is read from its crawl's text store
for its snippet, one gzip member each.

Typo correction draws from every index's lexicon and gets ``correction_budget``
seconds of the searcher's clock; past it, the query runs with the corrections found so
far and the answer says ``correction_skipped`` (such an answer is not cached: the next
try may do better). Searches hold no lock while they run: any number of threads may
search at once.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import tantivy

from trawl.index.correct import Budget, Corrector, merged_candidates
from trawl.index.gather import EXACT_BUDGET, Gather, Run
from trawl.index.hits import SearchResults, hit
from trawl.index.layout import index_parts
from trawl.index.plan import Compiler, Leaf, Plan, exact_score, render
from trawl.index.query import ParsedQuery, QueryError, Word, parse, rewrite
from trawl.index.schema import (
    LANGUAGES,
    PLAIN,
    IndexFormatError,
    analyzer,
    body_field,
    title_field,
)
from trawl.index.shard import DEFAULT_CRAWL, IndexSpec, Shard, ShardView
from trawl.index.stats import CorpusStats, explained, tf_and_length
from trawl.storage.blobs import BlobStore
from trawl.storage.open import open_blobs

log = logging.getLogger(__name__)

MAX_SIZE = 100
_MAX_COMBOS = 16  # combinations of correction candidates tried against the index
MAX_RESULTS = 1000  # page * size: deeper paging is refused (it costs the whole prefix)
SEARCH_THREADS = 8  # indexes searched at once by one query
CORRECTION_BUDGET = 0.05  # seconds

IndexSource = Callable[[], Sequence[IndexSpec]]


class UnknownCrawlError(QueryError):
    """``crawl=ID`` names no crawl the searcher holds."""


_CacheKey = tuple[str, str, int, int, str | None]


class Searcher:
    """Searches the index in ``index_dir``, or those ``indexes`` names (thread-safe;
    many may be open at once). ``blobs`` and ``corrector`` go with ``index_dir``."""

    def __init__(
        self,
        index_dir: Path | None = None,
        *,
        indexes: IndexSource | None = None,
        cache_size: int = 1024,
        reload_interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        blobs: BlobStore | None = None,
        corrector: Corrector | None = None,
        correction_budget: float = CORRECTION_BUDGET,
        threads: int = SEARCH_THREADS,
        exact_budget: int = EXACT_BUDGET,
    ) -> None:
        if (index_dir is None) == (indexes is None):
            raise ValueError("a Searcher searches index_dir or indexes (one of them)")
        self.index_dir = Path(index_dir) if index_dir is not None else None
        if self.index_dir is not None:
            spec = IndexSpec(DEFAULT_CRAWL, self.index_dir, blobs)
            self._source: IndexSource = lambda: [spec]
        else:
            assert indexes is not None
            self._source = indexes
        self._single = index_dir is not None
        self._corrector = corrector
        self._cache_size = cache_size
        self._reload_interval = reload_interval
        self._clock = clock
        self._lock = threading.Lock()
        self._cache: OrderedDict[_CacheKey, SearchResults] = OrderedDict()
        self._shards: dict[tuple[str, Path], Shard] = {}
        self._blobs: dict[tuple[str, Path], BlobStore] = {}
        self._refused: dict[Path, str] = {}  # indexes of an older format: why
        self._generations: tuple[tuple[str, int], ...] = ()
        self._checked = 0.0
        self._analyzers = {code: analyzer(code) for code in LANGUAGES}
        self._budget = correction_budget
        self._threads = threads
        self._exact_budget = exact_budget
        self._pool: ThreadPoolExecutor | None = None
        self._closed = False
        self.reload()

    # -- lifecycle ---------------------------------------------------------------------

    def reload(self) -> None:
        """Pick up the indexes the source names now and their latest commits."""
        with self._lock:
            self._checked = self._clock()
            wanted: dict[tuple[str, Path], Shard] = {}
            for spec in self._source():
                for n, directory in enumerate(self._dirs(spec)):
                    key = (spec.crawl, directory)
                    shard = self._shards.get(key) or self._open(spec, directory, n)
                    wanted[key] = shard
            for key, shard in self._shards.items():
                if key not in wanted:
                    shard.close()
            self._shards = wanted
            self._blobs = {k: b for k, b in self._blobs.items() if k[0] in {c for c, _ in wanted}}
            for shard in list(wanted.values()):
                try:
                    shard.reload()
                except IndexFormatError as exc:
                    if self._single:
                        raise
                    if shard.index_dir not in self._refused:
                        log.warning("%s", exc)
                    self._refused[shard.index_dir] = str(exc)
                except Exception as exc:
                    if self._single:
                        raise
                    # One crawl's index unreadable for now: the others are searched.
                    log.warning("cannot open the index in %s yet: %s", shard.index_dir, exc)
                else:
                    self._refused.pop(shard.index_dir, None)
            generations = tuple(
                (s.name, s.view.generation if s.view is not None else 0) for s in wanted.values()
            )
            if generations != self._generations:
                self._generations = generations
                self._cache.clear()

    def _dirs(self, spec: IndexSpec) -> list[Path]:
        try:
            return index_parts(spec.index_dir)
        except ValueError as exc:
            if self._single:
                raise IndexFormatError(str(exc)) from None
            log.warning("%s", exc)
            return []

    def _open(self, spec: IndexSpec, directory: Path, n: int) -> Shard:
        blobs_key = (spec.crawl, spec.index_dir)
        blobs = self._blobs.get(blobs_key)
        if blobs is None:
            blobs = spec.blobs if spec.blobs is not None else open_blobs(spec.index_dir.parent)
            self._blobs[blobs_key] = blobs
        name = spec.crawl if directory == spec.index_dir else f"{spec.crawl}/{n}"
        corrector = self._corrector if directory == spec.index_dir else None
        return Shard(directory, blobs=blobs, crawl=spec.crawl, name=name, corrector=corrector)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for shard in self._shards.values():
                shard.close()
            self._shards = {}
            self._cache.clear()
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def num_docs(self) -> int:
        return sum(s.num_docs for s in list(self._shards.values()))

    def crawls(self) -> list[str]:
        """The crawls searched, in the source's order."""
        return list(dict.fromkeys(s.crawl for s in list(self._shards.values())))

    # -- searching ---------------------------------------------------------------------

    def search(
        self, query: str, *, page: int = 1, size: int = 10, crawl: str | None = None
    ) -> SearchResults:
        """Run ``query`` (over ``crawl`` alone if given); raises QueryError (with a
        message for the user) for bad input, UnknownCrawlError for a crawl not held."""
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
        raw: _CacheKey = ("raw", query, page, size, crawl)
        cached = self._cached(raw)
        if cached is None:
            generations = self._generations
            shards = self._selected(crawl)
            parsed = parse(query)
            key: _CacheKey = ("canonical", parsed.canonical, page, size, crawl)
            cached = self._cached(key)
            if cached is None:
                views = [(s, s.view) for s in shards if s.view is not None]
                refused = [
                    self._refused[s.index_dir] for s in shards if s.index_dir in self._refused
                ]
                if not views and refused:
                    # Nothing to search but indexes of an older trawl: say how to rebuild.
                    raise IndexFormatError(refused[0])
                if not views:
                    results = SearchResults(query, [], 0, 0.0, None, page, size)
                else:
                    results = self._run(views, parsed, query, page, size)
                took = (time.perf_counter() - started) * 1000
                results = dataclasses.replace(results, took_ms=took)
                if not results.correction_skipped:
                    self._store(key, results, generations)
                    self._store(raw, results, generations)
                return results
            self._store(raw, cached, generations)
        took = (time.perf_counter() - started) * 1000
        return dataclasses.replace(cached, query=query, took_ms=took)

    def _selected(self, crawl: str | None) -> list[Shard]:
        shards = list(self._shards.values())
        if crawl is None:
            return shards
        chosen = [s for s in shards if s.crawl == crawl]
        if not chosen:
            raise UnknownCrawlError(f"no crawl {crawl!r} here")
        return chosen

    def _cached(self, key: _CacheKey) -> SearchResults | None:
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
        return cached

    def _store(
        self, key: _CacheKey, results: SearchResults, generations: tuple[tuple[str, int], ...]
    ) -> None:
        with self._lock:
            # Only answers from the current commits: a reload in between emptied the cache.
            if self._generations == generations and self._cache_size > 0:
                self._cache[key] = results
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="trawl-shard")
            return self._pool

    # -- one query ---------------------------------------------------------------------

    def _run(
        self,
        views: list[tuple[Shard, ShardView]],
        parsed: ParsedQuery,
        query: str,
        page: int,
        size: int,
    ) -> SearchResults:
        languages = tuple(c for c in LANGUAGES if any(c in v.languages for _s, v in views))
        compiler = Compiler(views[0][1].schema, languages, self._analyzers)
        budget = Budget(self._clock, self._clock() + self._budget)
        corrections = self._corrections(views, compiler, parsed, budget)
        plan = compiler.compile(parsed.root, {id(w): fixed for w, fixed in corrections})
        corrected = rewrite(parsed, corrections) if corrections else None
        runs, corpus = self._runs(views, plan)
        pool = self._executor() if len(runs) > 1 else None

        def exact(run: Run, addr: tantivy.DocAddress) -> float:
            return self._exact(run, addr, plan, corpus)

        gather = Gather(runs, exact=exact, pool=pool, budget=self._exact_budget)
        gather.run(page * size)
        shown = gather.groups[(page - 1) * size :]
        if len(runs) > 1:
            for group in shown:
                gather.complete(group)
        generators: dict[tuple[int, str], tantivy.SnippetGenerator] = {}
        hits = [hit(plan, generators, group) for group in shown]
        total = gather.total()
        return SearchResults(query, hits, total, 0.0, corrected, page, size, budget.spent)

    def _runs(
        self, views: list[tuple[Shard, ShardView]], plan: Plan
    ) -> tuple[list[Run], CorpusStats | None]:
        if len(views) == 1:
            shard, view = views[0]
            return [Run(0, shard, view, plan.query)], None
        corpus = CorpusStats([v.stats for _s, v in views])
        runs = []
        for n, (shard, view) in enumerate(views):
            weighted = render(plan.tree, functools.partial(corpus.weight, n))
            lo, hi = corpus.bounds(view.stats, plan.fields)
            runs.append(Run(n, shard, view, weighted, lo, hi))
        return runs, corpus

    def _exact(
        self, run: Run, addr: tantivy.DocAddress, plan: Plan, corpus: CorpusStats | None
    ) -> float:
        """The page's score over the whole corpus, from tantivy's explanation of each leaf."""
        if corpus is None:
            raise AssertionError("one index needs no exact scores")
        seen: dict[int, float | None] = {}
        searcher = run.view.searcher

        def leaf_score(leaf: Leaf) -> float | None:
            if id(leaf) not in seen:
                explanation = explained(leaf.query, searcher, addr)
                if explanation is None:
                    seen[id(leaf)] = None
                else:
                    tf, length = tf_and_length(explanation)
                    seen[id(leaf)] = corpus.leaf_score(leaf, tf, length)
            return seen[id(leaf)]

        score = exact_score(plan.tree, leaf_score)
        return 0.0 if score is None else score

    # -- typo correction ---------------------------------------------------------------

    def _corrections(
        self,
        views: list[tuple[Shard, ShardView]],
        compiler: Compiler,
        parsed: ParsedQuery,
        budget: Budget,
    ) -> list[tuple[Word, str]]:
        """Unknown words and their corrections: the likeliest combination of candidates
        that finds something, else the likeliest (within the budget)."""
        unknown: list[tuple[Word, list[str]]] = []
        plain = self._analyzers[PLAIN]
        parts = [(s.corrector, v.searcher, v.languages) for s, v in views]
        for word in parsed.words():
            tokens = plain.analyze(word.text)
            if len(tokens) != 1 or any(self._known(v, word.text) for _s, v in views):
                continue
            if not budget.left():
                break
            found = merged_candidates(parts, self._analyzers, tokens[0])
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
            if any(v.searcher.search(plan.query, 1, count=False).hits for _s, v in views):
                return [(w, pick) for pick, (w, _c) in zip(combo, unknown, strict=True)]
        return [(w, cands[0]) for w, cands in unknown]

    def _known(self, view: ShardView, text: str) -> bool:
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
