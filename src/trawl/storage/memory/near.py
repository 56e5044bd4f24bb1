"""The near-duplicate index of a memory crawl store: founders kept with the crawl's state.

The lookup structure is ``MemoryNearIndex``; the founders added are also recorded
as plain rows in the store's state, so that a commit keeps them and an index opened
after a restart is rebuilt from what was committed (the SQLite index's rules:
another band count rebuilds, another signature layout empties).
"""

from __future__ import annotations

from trawl.dedup.minhash import MinHasher, Signature
from trawl.dedup.near import MemoryNearIndex, NearMatch, claim_founder
from trawl.storage.memory.pages import MemoryMeta

LAYOUT_KEY = "near.minhash"  # the meta key SqliteNearIndex records its layout under

NearRow = tuple[Signature, str, str]  # (signature, cluster, doc key)


class StoredNearIndex:
    """``NearDupIndex`` whose founders live in ``rows`` (part of the committed state)."""

    def __init__(self, rows: list[NearRow], meta: MemoryMeta, hasher: MinHasher) -> None:
        stored = meta.get(LAYOUT_KEY)
        if stored is not None and stored.split(";")[0] != hasher.signature_layout:
            rows.clear()  # signatures not comparable with the new ones
        meta.set(LAYOUT_KEY, hasher.layout)
        self._rows = rows
        self._index = MemoryNearIndex(hasher)
        for signature, cluster, doc_key in rows:
            self._index.add(signature, cluster, doc_key)

    @property
    def hasher(self) -> MinHasher:
        return self._index.hasher

    def add(self, signature: Signature, cluster_id: str, doc_key: str) -> None:
        before = self._index.count()
        self._index.add(signature, cluster_id, doc_key)
        if self._index.count() > before:
            self._rows.append((signature, cluster_id, doc_key))

    def find(self, signature: Signature) -> NearMatch | None:
        return self._index.find(signature)

    def claim(self, signature: Signature, cluster_id: str, doc_key: str) -> NearMatch | None:
        return claim_founder(self, signature, cluster_id, doc_key)

    def count(self) -> int:
        return self._index.count()
