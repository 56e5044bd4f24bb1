"""The near-duplicate index (``trawl.dedup.near.NearDupIndex``) on the crawl's database.

Two tables: ``minhash_docs`` holds each founder's signature once (with its cluster and
doc key), ``minhash_bands`` one row per band key, keyed by (key, doc) so a query is one
index probe per band. Everything is written in the crawl's open transaction and
becomes durable with its commit, like the pages it describes; a page parsed again
after a crash finds only what committed plus the current transaction, so never its
own rolled-back attempt.

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


class SqliteNearIndex:
    """``NearDupIndex`` over SQLite: survives restarts, shares the crawl's commits."""

    def __init__(self, db: Database, hasher: MinHasher | None = None) -> None:
        self._hasher = hasher or MinHasher()
        self._db = db
        self._c = db.conn
        # A page's check and its founder claim ask about the same signature, with no
        # write to these tables in between (only ``add`` writes them; the transaction
        # is rolled back only when the database closes): the last answer and band keys
        # are kept until then.
        self._last_keys: tuple[Signature, list[int]] | None = None
        self._last_find: tuple[Signature, NearMatch | None] | None = None
        # Statement by statement inside the open transaction: ``executescript`` would
        # COMMIT first, making the crawl's pending writes durable before their hooks ran.
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                self._c.execute(statement)
        self._ensure_layout()

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
        self._db.set_meta(_LAYOUT_KEY, wanted)

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
            self._insert_bands(cur.lastrowid, signature)

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
        found = best(self._hasher, signature, [(int(d), bytes(s)) for d, s in rows])
        if found is None:
            return None
        similarity, doc = found
        cluster, doc_key = self._c.execute(
            "SELECT cluster, doc_key FROM minhash_docs WHERE id=?", (doc,)
        ).fetchone()
        return NearMatch(similarity, str(doc_key if cluster is None else cluster), str(doc_key))

    def count(self) -> int:
        return int(self._c.execute("SELECT count(*) FROM minhash_docs").fetchone()[0])
