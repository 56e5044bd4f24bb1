"""The SQLite near index holds its latest founders' band keys in memory, then writes them.

Real SQLite files; a small ``flush_docs`` so the held keys, their flush and their
recovery after a restart (clean or a crash) all happen in a few founders.
"""

from __future__ import annotations

import random
from pathlib import Path

from trawl.dedup.minhash import MinHasher
from trawl.dedup.near import MemoryNearIndex
from trawl.storage.sqlite.db import Database
from trawl.storage.sqlite.near import SqliteNearIndex
from trawl.testing._sample_text import text_generator


def _text(seed: int, words: int = 150) -> str:
    return "\n".join(text_generator(0).prose(random.Random(seed), words))


def _sig(text: str) -> bytes:
    sig = MinHasher().signature(text)
    assert sig is not None
    return sig


def _open(path: Path, flush_docs: int = 3) -> tuple[Database, SqliteNearIndex]:
    db = Database(path / "state.db")
    return db, SqliteNearIndex(db, MinHasher(), flush_docs=flush_docs)


def _band_rows(db: Database) -> int:
    return int(db.conn.execute("SELECT count(*) FROM minhash_bands").fetchone()[0])


def test_held_founders_are_found_then_written_sorted_at_the_flush(tmp_path: Path) -> None:
    db, index = _open(tmp_path)
    texts = [_text(n) for n in range(5)]
    for n, t in enumerate(texts[:2]):
        index.add(_sig(t), f"c{n}", f"d{n}")
    assert _band_rows(db) == 0  # held in memory
    for n, t in enumerate(texts[:2]):
        match = index.find(_sig(t + " Updated today."))
        assert match is not None and match.doc_key == f"d{n}"
    index.add(_sig(texts[2]), "c2", "d2")  # the third: all three written
    assert _band_rows(db) == 3 * MinHasher().bands
    assert db.get_meta("near.banded") == "3"
    index.add(_sig(texts[3]), "c3", "d3")  # held again, beside written ones
    for n, t in enumerate(texts[:4]):
        match = index.find(_sig(t + " Posted 3 March."))
        assert match is not None and match.doc_key == f"d{n}"
    assert index.find(_sig(texts[4])) is None
    db.close()


def test_held_founders_come_back_after_a_restart(tmp_path: Path) -> None:
    db, index = _open(tmp_path)
    texts = [_text(10 + n) for n in range(5)]
    for n, t in enumerate(texts[:4]):  # three written, one held
        index.add(_sig(t), f"c{n}", f"d{n}")
    db.close()
    db, index = _open(tmp_path)
    assert index.count() == 4 and _band_rows(db) == 3 * MinHasher().bands
    match = index.find(_sig(texts[3] + " Comments: 3"))
    assert match is not None and match.doc_key == "d3"
    index.add(_sig(texts[4]), "c4", "d4")
    db.close(commit=False)  # a crash: d4 was never stored
    db, index = _open(tmp_path)
    assert index.count() == 4
    assert index.find(_sig(texts[4])) is None
    match = index.find(_sig(texts[3]))
    assert match is not None and match.doc_key == "d3"
    db.close()


def test_a_crash_after_a_flush_undoes_it(tmp_path: Path) -> None:
    db, index = _open(tmp_path)
    texts = [_text(20 + n) for n in range(3)]
    index.add(_sig(texts[0]), "c0", "d0")
    db.commit()
    index.add(_sig(texts[1]), "c1", "d1")
    index.add(_sig(texts[2]), "c2", "d2")  # flushed, not committed
    db.close(commit=False)
    db, index = _open(tmp_path)
    assert index.count() == 1 and _band_rows(db) == 0
    assert db.get_meta("near.banded") == "0"
    match = index.find(_sig(texts[0]))
    assert match is not None and match.doc_key == "d0"
    assert index.find(_sig(texts[1])) is None
    db.close()


def test_an_index_from_before_counts_all_its_founders_written(tmp_path: Path) -> None:
    db, index = _open(tmp_path, flush_docs=1)  # each founder written at once, as before
    index.add(_sig(_text(30)), "c", "d")
    db.conn.execute("DELETE FROM meta WHERE key='near.banded'")
    db.close()
    db, index = _open(tmp_path)
    assert db.get_meta("near.banded") == "1"
    match = index.find(_sig(_text(30)))
    assert match is not None and match.doc_key == "d"
    db.close()


def test_same_answers_as_the_memory_index_through_restarts(tmp_path: Path) -> None:
    """Founders and near copies of them, held, written and reopened: every answer is
    the memory index's."""
    rng = random.Random(5)
    bases = [_text(40 + n, 120) for n in range(12)]
    memory = MemoryNearIndex()
    db, index = _open(tmp_path, flush_docs=4)
    for step in range(40):
        text = rng.choice(bases) + f" Edition {rng.randrange(3)}."
        sig, key = _sig(text), f"p{step}"
        assert index.find(sig) == memory.find(sig)
        assert index.claim(sig, key, key) == memory.claim(sig, key, key)
        if step % 7 == 6:
            db.close()
            db, index = _open(tmp_path, flush_docs=4)
    assert index.count() == memory.count()
    db.close()
