"""The near-duplicate index (``trawl.dedup.near.NearDupIndex``) on the crawl's database.

Two tables: ``minhash_docs`` holds each founder's signature once (with its cluster and
doc key), ``minhash_bands`` one row per band key, keyed by (key, doc) so a query is one
index probe per band. Everything is written in the crawl's open transaction and
becomes durable with its commit, like the pages it describes; a page parsed again
after a crash finds only what committed plus the current transaction, so never its
own rolled-back attempt.

Band keys are random, so each founder's 32 rows land on 32 B-tree pages that each
commit writes out again (at 100,000 founders some 30 pages, 0.3 ms, a founder). The
band keys of the latest founders (up to ``FLUSH_DOCS``) are kept in memory instead,
and written sorted in one go when that many have gathered. They need no durability
of their own: a founder's signature is in ``minhash_docs`` (appended, in the same
transaction), so opening the index recomputes the keys of the founders past the last
one written (``meta`` ``near.banded``).

The hasher's layout (shingle, permutations, bands, seed) is recorded in ``meta``;
opening with another band count rebuilds the band keys from the stored signatures.
Signatures made with another shingle size, permutation count or seed are not
comparable, so that change empties the index (later pages found new clusters).
"""

from __future__ import annotations

from trawl.dedup.minhash import MinHasher, Signature
from trawl.dedup.near import NearMatch, best, claim_founder
from trawl.storage.sqlite.db import Database

_SCHEMA = """
CREATE TABLE IF NOT EXISTS minhash_docs (
    id INTEGER PRIMARY KEY,
    signature BLOB NOT NULL,
    cluster TEXT,  -- NULL: the doc founded its own cluster (cluster = doc_key)
    doc_key TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS minhash_bands (
    key INTEGER NOT NULL,
    doc INTEGER NOT NULL,
    PRIMARY KEY (key, doc)
) WITHOUT ROWID;
"""

_LAYOUT_KEY = "near.minhash"
_BANDED_KEY = "near.banded"  # the last doc id whose band rows are in minhash_bands
# Founders whose band keys are held in memory before being written (32 keys each,
# some 110 bytes a key in a dict: 7 MB at 2048; and their 512-byte signatures, 1 MB).
# More: fewer B-tree pages written per founder once the table outgrows them; 2048
# founders' keys, sorted, touch each page of 100,000 founders' bands once or less.
FLUSH_DOCS = 2048


class SqliteNearIndex:
    """``NearDupIndex`` over SQLite: survives restarts, shares the crawl's commits."""

    def __init__(
        self, db: Database, hasher: MinHasher | None = None, *, flush_docs: int = FLUSH_DOCS
    ) -> None:
        self._hasher = hasher or MinHasher()
        self._flush_docs = flush_docs
        self._db = db
        self._c = db.conn
        # A page's check and its founder claim ask about the same signature, with no
        # write to these tables in between (only ``add`` writes them; the transaction
        # is rolled back only when the database closes): the last answer and band keys
        # are kept until then.
        self._last_keys: tuple[Signature, list[int]] | None = None
        self._last_find: tuple[Signature, NearMatch | None] | None = None
        # Band keys of founders not in minhash_bands yet: key -> doc (the first), and
        # the rare key that more of them share -> the others.
        self._recent: dict[int, int] = {}
        self._recent_more: dict[int, list[int]] = {}
        self._recent_docs: dict[int, Signature] = {}  # held founders' signatures, in order
        # Statement by statement inside the open transaction: ``executescript`` would
        # COMMIT first, making the crawl's pending writes durable before their hooks ran.
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                self._c.execute(statement)
        self._ensure_layout()
        self._load_recent()

    @property
    def hasher(self) -> MinHasher:
        return self._hasher

    def _ensure_layout(self) -> None:
        wanted = self._hasher.layout
        stored = self._db.get_meta(_LAYOUT_KEY)
        if stored == wanted:
            return
        if stored is not None:
            self._c.execute("DELETE FROM minhash_bands")
            if stored.split(";")[0] != self._hasher.signature_layout:
                self._c.execute("DELETE FROM minhash_docs")
            for doc, signature in self._c.execute("SELECT id, signature FROM minhash_docs"):
                self._insert_bands(int(doc), bytes(signature))
            self._set_banded(self._last_doc())
        self._db.set_meta(_LAYOUT_KEY, wanted)

    def _last_doc(self) -> int:
        return int(self._c.execute("SELECT coalesce(max(id), 0) FROM minhash_docs").fetchone()[0])

    def _set_banded(self, doc: int) -> None:
        self._db.set_meta(_BANDED_KEY, str(doc))

    def _load_recent(self) -> None:
        """Hold the band keys of the founders past the last one written."""
        banded = self._db.get_meta(_BANDED_KEY)
        if banded is None:  # a new index, or one from before: every founder is written
            self._set_banded(self._last_doc())
            return
        for doc, signature in self._c.execute(
            "SELECT id, signature FROM minhash_docs WHERE id > ? ORDER BY id", (int(banded),)
        ):
            self._hold(int(doc), bytes(signature), self._hasher.band_keys(bytes(signature)))

    def _hold(self, doc: int, signature: Signature, keys: list[int]) -> None:
        recent = self._recent
        for key in keys:
            first = recent.setdefault(key, doc)
            if first != doc:
                more = self._recent_more.setdefault(key, [])
                if doc not in more:
                    more.append(doc)
        self._recent_docs[doc] = signature

    def _flush(self) -> None:
        """Write the held band keys (sorted: each B-tree page once) and forget them."""
        rows = [(key, doc) for key, doc in self._recent.items()]
        rows += [(key, doc) for key, docs in self._recent_more.items() for doc in docs]
        rows.sort()
        self._c.executemany("INSERT OR IGNORE INTO minhash_bands(key, doc) VALUES(?,?)", rows)
        self._set_banded(next(reversed(self._recent_docs)))
        self._recent.clear()
        self._recent_more.clear()
        self._recent_docs.clear()

    def _insert_bands(self, doc: int, signature: Signature) -> None:
        self._c.executemany(
            "INSERT OR IGNORE INTO minhash_bands(key, doc) VALUES(?,?)",
            [(key, doc) for key in self._band_keys(signature)],
        )

    def _band_keys(self, signature: Signature) -> list[int]:
        last = self._last_keys
        if last is not None and last[0] == signature:
            return last[1]
        keys = self._hasher.band_keys(signature)
        self._last_keys = (signature, keys)
        return keys

    def add(self, signature: Signature, cluster_id: str, doc_key: str) -> None:
        cur = self._c.execute(
            "INSERT OR IGNORE INTO minhash_docs(signature, cluster, doc_key) VALUES(?,?,?)",
            (signature, None if cluster_id == doc_key else cluster_id, doc_key),
        )
        if cur.rowcount == 1 and cur.lastrowid is not None:
            self._last_find = None
            self._hold(cur.lastrowid, signature, self._band_keys(signature))
            if len(self._recent_docs) >= self._flush_docs:
                self._flush()

    def claim(self, signature: Signature, cluster_id: str, doc_key: str) -> NearMatch | None:
        return claim_founder(self, signature, cluster_id, doc_key)

    def find(self, signature: Signature) -> NearMatch | None:
        last = self._last_find
        if last is not None and last[0] == signature:
            return last[1]
        match = self._find(signature)
        self._last_find = (signature, match)
        return match

    def _find(self, signature: Signature) -> NearMatch | None:
        keys = self._band_keys(signature)
        marks = ",".join("?" * len(keys))
        rows = self._c.execute(
            f"SELECT id, signature FROM minhash_docs WHERE id IN "  # only ? placeholders
            f"(SELECT doc FROM minhash_bands WHERE key IN ({marks}))",
            keys,
        ).fetchall()
        candidates = [(int(d), bytes(s)) for d, s in rows]
        candidates += self._held_candidates(keys)
        found = best(self._hasher, signature, candidates)
        if found is None:
            return None
        similarity, doc = found
        cluster, doc_key = self._c.execute(
            "SELECT cluster, doc_key FROM minhash_docs WHERE id=?", (doc,)
        ).fetchone()
        return NearMatch(similarity, str(doc_key if cluster is None else cluster), str(doc_key))

    def _held_candidates(self, keys: list[int]) -> list[tuple[int, Signature]]:
        """(doc, signature) of the founders held in memory that share one of ``keys``."""
        recent = self._recent
        docs = {doc for doc in map(recent.get, keys) if doc is not None}
        if docs and self._recent_more:
            for key in keys:
                docs.update(self._recent_more.get(key, ()))
        return [(doc, self._recent_docs[doc]) for doc in docs]

    def count(self) -> int:
        return int(self._c.execute("SELECT count(*) FROM minhash_docs").fetchone()[0])
