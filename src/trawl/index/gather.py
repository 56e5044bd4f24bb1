"""Scatter-gather: one query over several indexes, merged as one index would rank it.

Each index (a crawl's, or a shard of a split index) is searched in a thread of its own
(tantivy lets go of the GIL) for its best ``need * 2 + 10`` pages, with the query's
leaves weighted to the corpus's idf (``stats.py``). A page's exact score over the whole
corpus lies between its weighted score times its index's ``lo`` and ``hi``; so the
pages are taken from one heap ordered by those upper bounds, and a page is placed only
once its exact score is known and no other page (nor the rest of any index, bounded by
its last page fetched) can beat it: the order is that of the one index holding them
all, provably, and computing exact scores (tantivy's explanation of each leaf) costs
only the pages near the cut. An index whose fetched pages run out before the cut is
asked for four times more. With one index the weights are 1 and the bounds exact:
tantivy's own order and scores, nothing explained.

Exact scores have a budget (``EXACT_BUDGET`` pages a query; a page costs a fraction of
a millisecond). A query of words nearly every page holds ("the new") gives thousands
of pages scores closer together than the indexes' statistics differ, and ordering
them exactly would cost seconds; past the budget, the pages left are placed by their
weighted score times the middle of their bounds, which is within ``hi / lo`` of the
exact one (a fraction of a per cent between indexes of one kind of pages), and the
answer's order among such near-ties is what one index might give.

Placing a page makes or joins a ``Group``, one hit per page across indexes: a page
whose URL, content hash or near-duplicate cluster a placed page has already claimed
joins that page's group, ranked where its best copy is. Within one index only the
best of a cluster counts (as ever); across indexes the hit shows the newest fetch of
the group's copies that match the query (``complete`` looks for newer copies of the
URL or the text in the other indexes first).

The total is the indexes' matches less the copies found merged; while pages beyond
those fetched might still merge, it is an upper bound, as for one index.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field

import tantivy

from trawl.index.shard import Shard, ShardView

MAX_FETCH = 8000  # pages fetched from one index at most for one answer
EXACT_BUDGET = 48  # pages of one query whose exact score is computed at most


@dataclass(eq=False, slots=True)
class Run:
    """One index's part of one query."""

    position: int
    shard: Shard
    view: ShardView
    query: tantivy.Query  # weighted to the corpus's idf
    lo: float = 1.0
    hi: float = 1.0
    hits: list[tuple[float, tantivy.DocAddress]] = field(default_factory=list)  # scores placed
    raw: list[float] = field(default_factory=list)  # the weighted scores tantivy gave
    clusters: list[object] = field(default_factory=list)  # the pages' cluster values
    count: int = 0
    exhausted: bool = False
    asked: int = 0

    def fetch(self, limit: int) -> int:
        """Fetch up to ``limit`` pages in all (the first call counts the matches too);
        returns where the new ones start."""
        start = len(self.hits)
        searcher = self.view.searcher
        first = self.asked == 0
        result = searcher.search(self.query, limit - start, count=first, offset=start)
        new = [(float(s), a) for s, a in result.hits]
        if first:
            counted: int | None = getattr(result, "count", None)  # not in the type stubs
            self.count = counted if counted is not None else len(new)
        self.asked = limit
        self.hits += new
        self.raw += [score for score, _a in new]
        self.clusters += searcher.fast_field_values("cluster", [a for _s, a in new])
        self.exhausted = len(new) < limit - start
        return start


@dataclass(eq=False, slots=True)
class Member:
    run: Run
    addr: tantivy.DocAddress
    score: float
    cluster: object
    doc: tantivy.Document | None = None

    def document(self) -> tantivy.Document:
        if self.doc is None:
            self.doc = self.run.view.searcher.doc(self.addr)
        return self.doc

    @property
    def fetched_at(self) -> float:
        return float(self.document().get_first("fetched_at") or 0.0)


@dataclass(eq=False, slots=True)
class Group:
    """One hit: the copies of one page, ranked by the best."""

    score: float
    members: dict[int, Member]  # run position -> the best copy in that index

    @property
    def shown(self) -> Member:
        """The newest fetch (the best-scoring of equally new ones)."""
        best = next(iter(self.members.values()))
        if len(self.members) == 1:
            return best
        return max(self.members.values(), key=lambda m: (m.fetched_at, m is best))


Exact = Callable[[Run, tantivy.DocAddress], float]


class Gather:
    """Places the pages of ``runs`` in the corpus's order, ``need`` groups at most."""

    def __init__(
        self,
        runs: Sequence[Run],
        *,
        exact: Exact,
        pool: Executor | None,
        budget: int = EXACT_BUDGET,
    ) -> None:
        self.runs = list(runs)
        self._exact = exact
        self._budget = budget
        self.estimated = False  # the budget ran out: pages past it placed by estimate
        self._pool = pool
        self._many = len(self.runs) > 1
        self._heap: list[tuple[float, int, int, Run, int]] = []  # (-bound, seq, kind, run, i)
        self._seq = itertools.count()
        self._claims: dict[tuple[str, object], Group] = {}
        self.groups: list[Group] = []
        self.merged = 0  # copies that joined a group

    def run(self, need: int) -> None:
        fetch = need * 2 + 10
        if self._pool is not None and self._many:
            # The others in the pool's threads, the first in this one (one hand-off less).
            futures = [self._pool.submit(r.fetch, fetch) for r in self.runs[1:]]
            self.runs[0].fetch(fetch)
            for future in futures:
                future.result()
        else:
            for r in self.runs:
                r.fetch(fetch)
        for r in self.runs:
            self._push(r, 0)
        while self._heap and len(self.groups) < need:
            _bound, _seq, kind, r, i = heapq.heappop(self._heap)
            if kind == _REST:
                self._push(r, r.fetch(min(r.asked * 4, MAX_FETCH)))
            elif kind == _BOUND and self._budget <= 0:
                heapq.heappush(self._heap, (_bound, _seq, kind, r, i))
                self._estimate()
            elif kind == _BOUND:
                self._budget -= 1
                exact = self._exact(r, r.hits[i][1])
                heapq.heappush(self._heap, (-exact, _seq, _EXACT, r, i))
                r.hits[i] = (exact, r.hits[i][1])
            else:
                self._place(r, i)

    def _factor(self, r: Run) -> float:
        """What a weighted score is multiplied by for its heap key: its upper bound, or
        (once estimated) the middle of its bounds."""
        return (r.lo + r.hi) / 2 if self.estimated else r.hi

    def _push(self, r: Run, start: int) -> None:
        kind = _BOUND if self._many and not self.estimated else _EXACT
        factor = self._factor(r)
        for i in range(start, len(r.hits)):
            key = r.raw[i] * factor
            if self.estimated:
                r.hits[i] = (key, r.hits[i][1])
            heapq.heappush(self._heap, (-key, next(self._seq), kind, r, i))
        if r.hits and not r.exhausted and r.asked < MAX_FETCH:
            heapq.heappush(self._heap, (-r.raw[-1] * factor, next(self._seq), _REST, r, -1))

    def _estimate(self) -> None:
        """Out of budget: every page still bounded gets its estimated score instead."""
        self.estimated = True
        heap = []
        for key, seq, kind, r, i in self._heap:
            if kind == _BOUND:
                estimate = r.raw[i] * self._factor(r)
                r.hits[i] = (estimate, r.hits[i][1])
                heap.append((-estimate, seq, _EXACT, r, i))
            elif kind == _REST:
                heap.append((-r.raw[-1] * self._factor(r), seq, kind, r, i))
            else:
                heap.append((key, seq, kind, r, i))
        heapq.heapify(heap)
        self._heap = heap

    def _keys(self, m: Member) -> list[tuple[str, object]]:
        keys: list[tuple[str, object]] = [("cluster", m.cluster)]
        if self._many:  # a URL and a content hash are unique within one index
            doc = m.document()
            keys += [("url", doc.get_first("url")), ("key", doc.get_first("key"))]
        return keys

    def _place(self, r: Run, i: int) -> None:
        score, addr = r.hits[i]
        member = Member(r, addr, score, r.clusters[i])
        keys = self._keys(member)
        group = next((g for k in keys if (g := self._claims.get(k)) is not None), None)
        if group is None:
            group = Group(score, {r.position: member})
            self.groups.append(group)
        else:
            self.merged += 1
            group.members.setdefault(r.position, member)  # an index's best copy stays
        for k in keys:
            self._claims.setdefault(k, group)

    def total(self) -> int:
        """Matches less copies merged: those placed, and those fetched beyond the cut
        whose cluster was seen (exact when every index's matches were fetched)."""
        merged = self.merged
        seen = {k[1] for k in self._claims if k[0] == "cluster"}
        for _bound, _seq, kind, r, i in self._heap:
            if kind != _REST:
                if r.clusters[i] in seen:
                    merged += 1
                seen.add(r.clusters[i])
        return sum(r.count for r in self.runs) - merged

    def complete(self, group: Group) -> None:
        """Add the group's copies in other indexes (same URL or text, matching the query)
        it has not met: the hit shows the newest."""
        doc = next(iter(group.members.values())).document()
        url, key = doc.get_first("url"), doc.get_first("key")
        for r in self.runs:
            if r.position in group.members:
                continue
            searcher = r.view.searcher
            terms = [(f, v) for f, v in (("url", url), ("key", key)) if isinstance(v, str)]
            terms = [(f, v) for f, v in terms if searcher.doc_freq(f, v) > 0]
            if not terms:
                continue
            same = tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Should, tantivy.Query.term_query(r.view.schema, f, v))
                    for f, v in terms
                ]
            )
            q = tantivy.Query.boolean_query(
                [(tantivy.Occur.Must, r.query), (tantivy.Occur.Must, same)]
            )
            hits = searcher.search(q, 1, count=False).hits
            if hits:
                score, addr = hits[0]
                cluster = searcher.fast_field_values("cluster", [addr])[0]
                group.members[r.position] = Member(r, addr, float(score), cluster)


_EXACT, _BOUND, _REST = 0, 1, 2
