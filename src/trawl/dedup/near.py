"""Near-duplicate lookup over MinHash signatures with LSH bands (``trawl.dedup.minhash``).

An index stores each kept founder's signature once, and one row per band key; a query
reads the documents sharing any of its band keys and verifies each by estimated
Jaccard similarity, which must reach the hasher's threshold. The best match wins,
the earliest stored on a tie.

Cluster policy (``assign``): a page within the threshold of an earlier kept page joins
that page's cluster; a page with no near match founds its own cluster, named by its
doc key. Only founders are added to the index (``NearDupIndex.claim``, called when the
page's text is about to be stored), so a cluster cannot drift away from its founder by a
chain of small edits (A ~ B ~ C with A far from C).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from trawl.dedup.minhash import MinHasher, Signature

__all__ = [
    "Assignment",
    "MemoryNearIndex",
    "NearDupIndex",
    "NearMatch",
    "assign",
    "best",
    "claim_founder",
]


@dataclass(frozen=True, slots=True)
class NearMatch:
    """The most similar stored signature within the threshold of a query."""

    similarity: float
    cluster_id: str
    doc_key: str


@dataclass(frozen=True, slots=True)
class Assignment:
    """Where a page goes: its cluster, and the founder it repeats (None if it founds one)."""

    cluster_id: str
    near_duplicate_of: str | None
    similarity: float | None


class NearDupIndex(Protocol):
    """Signatures of kept documents, searchable by estimated Jaccard similarity."""

    @property
    def hasher(self) -> MinHasher: ...

    def add(self, signature: Signature, cluster_id: str, doc_key: str) -> None:
        """Store a signature (again for the same ``doc_key``: no effect)."""
        ...

    def find(self, signature: Signature) -> NearMatch | None:
        """The most similar stored signature at or above the threshold."""
        ...

    def claim(self, signature: Signature, cluster_id: str, doc_key: str) -> NearMatch | None:
        """Add a founder unless a near copy of another doc is stored by now (one step,
        so of two workers keeping near copies at once only one founds): that copy's
        match, or None when ``doc_key`` is (now, or already) a founder."""
        ...

    def count(self) -> int:
        """How many signatures are stored."""
        ...


def best(
    hasher: MinHasher, query: Signature, candidates: Sequence[tuple[int, Signature]]
) -> tuple[float, int] | None:
    """``(similarity, order)`` of the best ``(order, signature)`` candidate, if close enough."""
    if not candidates:
        return None
    ordered = sorted(candidates)
    sims = hasher.similarities(query, [s for _, s in ordered])
    at = sims.index(max(sims))  # the first maximum: the earliest stored
    if sims[at] < hasher.threshold:
        return None
    return sims[at], ordered[at][0]


def claim_founder(
    index: NearDupIndex, signature: Signature, cluster_id: str, doc_key: str
) -> NearMatch | None:
    """``claim`` for an index with one writer: find, then add (nothing comes between)."""
    match = index.find(signature)
    if match is not None and match.doc_key != doc_key:
        return match
    index.add(signature, cluster_id, doc_key)
    return None


def assign(index: NearDupIndex, signature: Signature, doc_key: str) -> Assignment:
    """The cluster of a page about to be kept; the caller adds founders when stored.

    A page seen again (the same ``doc_key``, e.g. parsed again after a restart whose
    first parse had committed) keeps the cluster it was given the first time.
    """
    match = index.find(signature)
    if match is None:
        return Assignment(doc_key, None, None)
    if match.doc_key == doc_key:
        return Assignment(match.cluster_id, None, None)
    return Assignment(match.cluster_id, match.doc_key, match.similarity)


class MemoryNearIndex:
    """An in-memory ``NearDupIndex`` (tests, benchmarks, one-off runs)."""

    def __init__(self, hasher: MinHasher | None = None) -> None:
        self._hasher = hasher or MinHasher()
        self._bands: dict[int, list[int]] = {}
        self._docs: list[tuple[Signature, str, str]] = []
        self._keys: set[str] = set()

    @property
    def hasher(self) -> MinHasher:
        return self._hasher

    def add(self, signature: Signature, cluster_id: str, doc_key: str) -> None:
        if doc_key in self._keys:
            return
        self._keys.add(doc_key)
        order = len(self._docs)
        self._docs.append((signature, cluster_id, doc_key))
        for key in self._hasher.band_keys(signature):
            self._bands.setdefault(key, []).append(order)

    def find(self, signature: Signature) -> NearMatch | None:
        orders: set[int] = set()
        for key in self._hasher.band_keys(signature):
            orders.update(self._bands.get(key, ()))
        found = best(self._hasher, signature, [(o, self._docs[o][0]) for o in orders])
        if found is None:
            return None
        similarity, order = found
        _, cluster, doc = self._docs[order]
        return NearMatch(similarity, cluster, doc)

    def claim(self, signature: Signature, cluster_id: str, doc_key: str) -> NearMatch | None:
        return claim_founder(self, signature, cluster_id, doc_key)

    def count(self) -> int:
        return len(self._docs)
