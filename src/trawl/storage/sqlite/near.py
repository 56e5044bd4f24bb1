"""The near-duplicate index (``trawl.dedup.near.NearDupIndex``) on the crawl's database.

Two tables: ``near_docs`` holds each stored signature once (with its cluster and doc
key), ``near_keys`` one row per table of the block layout, keyed by (table, key) so a
query is one index range per table. ``near_keys`` carries the signature too, so the
candidates' distances are checked without touching ``near_docs``; only the winner's
cluster is read from there. Everything is written in the crawl's open transaction and
becomes durable with its commit, like the pages it describes.

The layout (``k`` and ``blocks``) is recorded in ``meta``; opening with another layout
rebuilds the keys from the stored signatures, so the setting can change between runs.
"""

from __future__ import annotations

from trawl.dedup.near import DEFAULT_K, BlockTables, NearMatch, nearest
from trawl.storage.sqlite.db import Database

_SCHEMA = """
CREATE TABLE IF NOT EXISTS near_docs (
    id INTEGER PRIMARY KEY,
    signature INTEGER NOT NULL,
    cluster TEXT,  -- NULL: the doc founded its own cluster (cluster = doc_key)
    doc_key TEXT NOT NULL UNIQUE
);
-- One row per (table, signature): the key is the signature's bits in the table's blocks.
CREATE TABLE IF NOT EXISTS near_keys (
    tbl INTEGER NOT NULL,
    key INTEGER NOT NULL,
    doc INTEGER NOT NULL,
    sig INTEGER NOT NULL,
    PRIMARY KEY (tbl, key, doc)
) WITHOUT ROWID;
"""

_LAYOUT_KEY = "near.layout"


class SqliteNearIndex:
    """``NearDupIndex`` over SQLite: survives restarts, shares the crawl's commits."""

    def __init__(self, db: Database, *, k: int = DEFAULT_K, blocks: int | None = None) -> None:
        self.layout = BlockTables(k, blocks)
        self._db = db
        self._c = db.conn
        # Statement by statement inside the open transaction: ``executescript`` would
        # COMMIT first, making the crawl's pending writes durable before their hooks ran.
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                self._c.execute(statement)
        tables = self.layout.tables
        self._query = " UNION ALL ".join(
            ["SELECT doc, sig FROM near_keys WHERE tbl=? AND key=?"] * tables
        )
        self._ensure_layout()

    @property
    def k(self) -> int:
        return self.layout.k

    def _ensure_layout(self) -> None:
        wanted = f"k={self.layout.k},blocks={self.layout.blocks}"
        stored = self._db.get_meta(_LAYOUT_KEY)
        if stored == wanted:
            return
        if stored is not None:
            self._c.execute("DELETE FROM near_keys")
            rows = self._c.execute("SELECT id, signature FROM near_docs").fetchall()
            for doc, signature in rows:
                self._insert_keys(doc, signature)
        self._db.set_meta(_LAYOUT_KEY, wanted)

    def _insert_keys(self, doc: int, signature: int) -> None:
        self._c.executemany(
            "INSERT OR IGNORE INTO near_keys(tbl, key, doc, sig) VALUES(?,?,?,?)",
            [(t, key, doc, signature) for t, key in self.layout.keys(signature)],
        )

    def add(self, signature: int, cluster_id: str, doc_key: str) -> None:
        signature = _signed(signature)
        cur = self._c.execute(
            "INSERT OR IGNORE INTO near_docs(signature, cluster, doc_key) VALUES(?,?,?)",
            (signature, None if cluster_id == doc_key else cluster_id, doc_key),
        )
        if cur.rowcount == 1 and cur.lastrowid is not None:
            self._insert_keys(cur.lastrowid, signature)

    def find(self, signature: int) -> NearMatch | None:
        params: list[int] = []
        for table, key in self.layout.keys(signature):
            params += (table, key)
        candidates = self._c.execute(self._query, params).fetchall()
        best = nearest(signature, candidates, self.layout.k)
        if best is None:
            return None
        distance, doc, stored = best
        row = self._c.execute(
            "SELECT cluster, doc_key FROM near_docs WHERE id=?", (doc,)
        ).fetchone()
        if row is None:  # cannot happen: keys are written with their doc
            return None
        cluster, doc_key = row
        return NearMatch(
            stored, distance, str(doc_key if cluster is None else cluster), str(doc_key)
        )

    def count(self) -> int:
        return int(self._c.execute("SELECT count(*) FROM near_docs").fetchone()[0])


def _signed(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value
