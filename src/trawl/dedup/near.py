"""Near-duplicate lookup over SimHash signatures (Manku, Jain and Das Sarma, WWW 2007).

For a Hamming threshold ``k``, the 64 bits are cut into ``blocks`` (at least ``k + 1``)
contiguous blocks. Two signatures within distance ``k`` differ in at most ``k`` blocks,
so they agree exactly on at least ``blocks - k`` of them: on every block of at least one
of the ``C(blocks, k)`` combinations of ``blocks - k`` blocks. Each combination is a
"table" whose key is the signature's bits in those blocks; a signature is stored once
per table, and a query reads the rows sharing its key in each table and checks the full
distance of those candidates only. ``blocks = k + 1`` gives ``k + 1`` tables of 16-bit
keys (for k = 3); more blocks give more tables with longer keys, which keeps the
candidates per table few as the index grows (about N / 2^key_bits each).

Cluster policy (``assign``): a page within ``k`` of an earlier kept page joins that
page's cluster; a page with no near match founds its own cluster, named by its doc key.
Only founders are added to the index, so a cluster cannot drift away from its founder
by a chain of small edits (A ~ B ~ C with A far from C).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from trawl.dedup.simhash import hamming

__all__ = [
    "DEFAULT_K",
    "Assignment",
    "BlockTables",
    "NearDupIndex",
    "NearMatch",
    "assign",
]

DEFAULT_K = 3
"""The Hamming threshold (chosen by bench/bench_neardup.py)."""

_MASK = (1 << 64) - 1


@dataclass(frozen=True, slots=True)
class NearMatch:
    """The nearest stored signature within the threshold of a query."""

    signature: int
    distance: int
    cluster_id: str
    doc_key: str


@dataclass(frozen=True, slots=True)
class Assignment:
    """Where a page goes: its cluster, and the founder it repeats (None if it founds one)."""

    cluster_id: str
    near_duplicate_of: str | None
    distance: int | None


class NearDupIndex(Protocol):
    """Stored signatures of kept documents, searchable by Hamming distance <= ``k``."""

    @property
    def k(self) -> int: ...

    def add(self, signature: int, cluster_id: str, doc_key: str) -> None:
        """Store a signature (again for the same ``doc_key``: no effect)."""
        ...

    def find(self, signature: int) -> NearMatch | None:
        """The nearest stored signature within ``k`` (the earliest stored on a tie)."""
        ...

    def count(self) -> int:
        """How many signatures are stored."""
        ...


def _signed(value: int) -> int:
    value &= _MASK
    return value - (1 << 64) if value >> 63 else value


class BlockTables:
    """The block layout of an index: which bits key each table.

    ``keys(signature)`` gives one ``(table, key)`` pair per table; keys are the
    signature's bits outside the table's blocks cleared, as a signed int64 (so they fit
    an SQLite INTEGER, and equal keys mean equal bits in those blocks).
    """

    def __init__(self, k: int = DEFAULT_K, blocks: int | None = None) -> None:
        if not 0 <= k < 32:
            raise ValueError("k must be between 0 and 31")
        blocks = k + 1 if blocks is None else blocks
        if not k + 1 <= blocks <= 64:
            raise ValueError("blocks must be between k + 1 and 64")
        self.k = k
        self.blocks = blocks
        bounds = [round(i * 64 / blocks) for i in range(blocks + 1)]
        block_masks = [((1 << (hi - lo)) - 1) << lo for lo, hi in itertools.pairwise(bounds)]
        self.masks: tuple[int, ...] = tuple(
            sum(combo) for combo in itertools.combinations(block_masks, blocks - k)
        )

    @property
    def tables(self) -> int:
        return len(self.masks)

    def keys(self, signature: int) -> list[tuple[int, int]]:
        return [(t, _signed(signature & mask)) for t, mask in enumerate(self.masks)]


def nearest(
    signature: int, candidates: Sequence[tuple[int, int]], k: int
) -> tuple[int, int, int] | None:
    """``(distance, order, signature)`` of the nearest ``(order, signature)`` within ``k``."""
    best: tuple[int, int, int] | None = None
    for order, stored in candidates:
        d = hamming(signature, stored)
        if d <= k and (best is None or (d, order) < best[:2]):
            best = (d, order, stored)
    return best


def assign(index: NearDupIndex, signature: int, doc_key: str) -> Assignment:
    """Apply the cluster policy to a kept page's signature, adding founders to ``index``.

    A page seen again (the same ``doc_key``, e.g. parsed again after a restart) keeps
    the cluster it was given the first time.
    """
    match = index.find(signature)
    if match is not None and match.doc_key == doc_key:
        return Assignment(match.cluster_id, None, None)
    if match is not None:
        return Assignment(match.cluster_id, match.doc_key, match.distance)
    index.add(signature, doc_key, doc_key)
    return Assignment(doc_key, None, None)


class MemoryNearIndex:
    """An in-memory ``NearDupIndex`` (tests, benchmarks, one-off runs)."""

    def __init__(self, k: int = DEFAULT_K, *, blocks: int | None = None) -> None:
        self.layout = BlockTables(k, blocks)
        self._tables: list[dict[int, list[int]]] = [{} for _ in self.layout.masks]
        self._docs: list[tuple[int, str, str]] = []
        self._keys: set[str] = set()

    @property
    def k(self) -> int:
        return self.layout.k

    def add(self, signature: int, cluster_id: str, doc_key: str) -> None:
        if doc_key in self._keys:
            return
        self._keys.add(doc_key)
        order = len(self._docs)
        self._docs.append((_signed(signature), cluster_id, doc_key))
        for table, key in self.layout.keys(signature):
            self._tables[table].setdefault(key, []).append(order)

    def find(self, signature: int) -> NearMatch | None:
        orders: set[int] = set()
        for table, key in self.layout.keys(signature):
            orders.update(self._tables[table].get(key, ()))
        best = nearest(signature, [(o, self._docs[o][0]) for o in orders], self.k)
        if best is None:
            return None
        distance, order, stored = best
        _, cluster, doc = self._docs[order]
        return NearMatch(stored, distance, cluster, doc)

    def count(self) -> int:
        return len(self._docs)
