"""BM25 over several indexes, scored as if they were one.

tantivy scores a term in a field by BM25 on the statistics of the index it searches:

    score = idf * (K1 + 1) * tf / (tf + K1 * (1 - B + B * dl / avgdl))
    idf   = ln(1 + (N - n + 0.5) / (n + 0.5))     (a phrase: the sum over its terms)

with N the documents of the index (deleted ones too, until a merge drops them), n the
documents holding the term, dl the page's length in the field and avgdl the field's
tokens over N. Two crawls' indexes have different N, n and avgdl, so their scores
are not comparable: a word rare in a small crawl is worth more there than in a big
one. ``CorpusStats`` sums the statistics of the indexes searched together (N and the
field's tokens add up, so does n) and gives what one index holding all their
documents would use. Each index is then searched with every leaf of the query
weighted by ``idf(global) / idf(its own)``, which makes the idf part exact; what is
left differs only through avgdl, by a factor between 1 and ``avgdl(global) /
avgdl(its own)`` for each field (``bounds``). The merge (``gather.py``) takes pages in
the order of those bounds and computes a page's exact score from tantivy's
explanation of each leaf (its tf and dl) before it places it, so the pages come out
in the order, and with the scores, of the one index holding them all.

tantivy does not say N or a field's tokens directly: ``ShardStats`` reads them once
per commit from the explanation of a single hit (``_probe``).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Any

import orjson
import tantivy

from trawl.index.plan import Leaf

K1 = 1.2
B = 0.75
# tantivy scores in single precision: bounds are widened by this much.
SLACK = 1e-5
_PROBE_TERMS = 16
Json = dict[str, Any]  # an explanation as tantivy writes it


def idf(df: float, n: float) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def _find(node: Json, prefix: str) -> Json | None:
    if str(node.get("description", "")).startswith(prefix):
        return node
    for child in node.get("details") or ():
        found = _find(child, prefix)
        if found is not None:
            return found
    return None


def _detail(node: Json, prefix: str) -> float:
    for child in node.get("details") or ():
        if str(child.get("description", "")).startswith(prefix):
            return float(child["value"])
    raise ValueError(f"tantivy's explanation has no {prefix!r}")


def explained(
    query: tantivy.Query, searcher: tantivy.Searcher, addr: tantivy.DocAddress
) -> Json | None:
    """tantivy's explanation of ``addr``'s score under ``query`` (None: no match)."""
    try:
        text = query.explain(searcher, addr).to_json()
    except ValueError:  # "Document #n does not match"
        return None
    found: Json = orjson.loads(text)
    return found


def tf_and_length(explanation: Json) -> tuple[float, float]:
    """A leaf's term (or phrase) frequency in the page and the page's field length."""
    norm = _find(explanation, "freq / (freq")
    if norm is None:
        raise ValueError("tantivy's explanation has no BM25 term factor")
    return _detail(norm, "freq,"), _detail(norm, "dl,")


class ShardStats:
    """The statistics one commit of one index scores by (thread-safe, lazy)."""

    def __init__(self, searcher: tantivy.Searcher, schema: tantivy.Schema) -> None:
        self._searcher = searcher
        self._schema = schema
        self._lock = threading.Lock()
        self._docs: float | None = None
        self._tokens: dict[str, float] = {}

    def doc_freq(self, field: str, token: str) -> int:
        return int(self._searcher.doc_freq(field, token))

    @property
    def docs(self) -> float:
        """N as tantivy counts it (documents deleted but not merged away included)."""
        if self._docs is None:
            self.tokens("key")
        return self._docs or 0.0

    def tokens(self, field: str) -> float:
        """The tokens of ``field`` over every document (avgdl * N)."""
        with self._lock:
            if field not in self._tokens:
                probed = self._probe(field)
                if probed is not None:
                    docs, avgdl = probed
                    self._docs = docs
                    self._tokens[field] = avgdl * docs
                else:
                    self._tokens[field] = 0.0
                    if self._docs is None and field == "key":
                        self._docs = float(self._searcher.num_docs)
            return self._tokens[field]

    def avgdl(self, field: str) -> float:
        docs = self.docs
        return self.tokens(field) / docs if docs else 0.0

    def _probe(self, field: str) -> tuple[float, float] | None:
        """(N, avgdl of ``field``) from the explanation of a hit of one of its terms."""
        for term, _df in self._searcher.terms_with_prefix(field, "", limit=_PROBE_TERMS):
            query = tantivy.Query.term_query(self._schema, field, term)
            hits = self._searcher.search(query, 1, count=False).hits
            if not hits:
                continue  # only deleted documents hold it
            explanation = explained(query, self._searcher, hits[0][1])
            if explanation is None:
                continue
            idf_node = _find(explanation, "idf")
            norm = _find(explanation, "freq / (freq")
            if idf_node is None or norm is None:
                continue
            return _detail(idf_node, "N,"), _detail(norm, "avgdl,")
        return None


class CorpusStats:
    """The statistics of ``shards`` searched as one corpus."""

    def __init__(self, shards: Sequence[ShardStats]) -> None:
        self.shards = list(shards)
        self.docs = sum(s.docs for s in self.shards)
        self._avgdl: dict[str, float] = {}
        self._idf: dict[tuple[str, tuple[str, ...]], float] = {}
        self._df: dict[tuple[int, str, str], int] = {}  # (shard, field, token): its df

    def avgdl(self, field: str) -> float:
        if field not in self._avgdl:
            tokens = sum(s.tokens(field) for s in self.shards)
            self._avgdl[field] = tokens / self.docs if self.docs else 0.0
        return self._avgdl[field]

    def _doc_freq(self, n: int, field: str, token: str) -> int:
        key = (n, field, token)
        found = self._df.get(key)
        if found is None:
            found = self._df[key] = self.shards[n].doc_freq(field, token)
        return found

    def idf(self, leaf: Leaf) -> float:
        key = (leaf.field, leaf.tokens)
        if key not in self._idf:
            self._idf[key] = sum(
                idf(
                    sum(self._doc_freq(n, leaf.field, t) for n in range(len(self.shards))),
                    self.docs,
                )
                for t in leaf.tokens
            )
        return self._idf[key]

    def weight(self, n: int, leaf: Leaf) -> float:
        """What makes the idf of ``leaf`` in shard ``n`` the corpus's."""
        docs = self.shards[n].docs
        own = sum(idf(self._doc_freq(n, leaf.field, t), docs) for t in leaf.tokens)
        return self.idf(leaf) / own if own > 0 else 1.0

    def bounds(self, shard: ShardStats, fields: frozenset[str]) -> tuple[float, float]:
        """Exact score / weighted score of any page of ``shard`` lies within these."""
        lo = hi = 1.0
        for field in fields:
            own = shard.avgdl(field)
            if own > 0:
                ratio = self.avgdl(field) / own
                lo, hi = min(lo, ratio), max(hi, ratio)
        return lo * (1 - SLACK), hi * (1 + SLACK)

    def leaf_score(self, leaf: Leaf, tf: float, length: float) -> float:
        """BM25 of a leaf with ``tf`` occurrences in a field of ``length`` tokens."""
        avgdl = self.avgdl(leaf.field)
        norm = K1 * (1 - B + B * length / avgdl) if avgdl > 0 else K1
        return self.idf(leaf) * (K1 + 1) * tf / (tf + norm)
