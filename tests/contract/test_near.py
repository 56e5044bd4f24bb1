"""The NearDupIndex contract, on every backend (memory and SQLite)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from trawl.dedup.near import BlockTables, MemoryNearIndex, NearDupIndex, assign
from trawl.storage.sqlite.db import Database
from trawl.storage.sqlite.near import SqliteNearIndex


class NearBackend:
    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self.path = path
        self.db: Database | None = None
        self._memory: MemoryNearIndex | None = None

    def open(self, *, k: int = 3, blocks: int | None = None) -> NearDupIndex:
        if self.name == "memory":
            if self._memory is None:
                self._memory = MemoryNearIndex(k, blocks=blocks)
            return self._memory
        if self.db is None:
            self.db = Database(self.path / "state.db")
        return SqliteNearIndex(self.db, k=k, blocks=blocks)

    def restart(self, *, crash: bool) -> None:
        if self.db is not None:
            self.db.close(commit=not crash)
            self.db = None

    def close(self) -> None:
        self.restart(crash=True)


@pytest.fixture(params=["memory", "sqlite"])
def near(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[NearBackend]:
    b = NearBackend(request.param, tmp_path)
    yield b
    b.close()


def _flip(sig: int, bits: list[int]) -> int:
    for b in bits:
        sig ^= 1 << b
    return sig - (1 << 64) if sig >> 63 else sig


def test_finds_within_k_and_not_beyond(near: NearBackend) -> None:
    index = near.open(k=3)
    rng = random.Random(1)
    base = rng.getrandbits(64)
    index.add(base, "c1", "d1")
    assert index.count() == 1
    for bits in ([], [0], [5, 63], [1, 17, 40], [15, 16, 31]):
        match = index.find(_flip(base, bits))
        assert match is not None and match.distance == len(bits)
        assert (match.cluster_id, match.doc_key) == ("c1", "d1")
    assert index.find(_flip(base, [1, 2, 3, 4])) is None
    assert index.find(base ^ ((1 << 64) - 1)) is None


def test_nearest_wins_then_earliest(near: NearBackend) -> None:
    index = near.open()
    base = 0x0123456789ABCDEF
    index.add(_flip(base, [1, 2]), "far", "far")
    index.add(_flip(base, [9]), "near", "near")
    index.add(_flip(base, [10]), "later", "later")
    match = index.find(base)
    assert match is not None and match.cluster_id == "near" and match.distance == 1


def test_signed_and_unsigned_forms_are_one(near: NearBackend) -> None:
    index = near.open()
    index.add((1 << 64) - 5, "c", "d")
    match = index.find(-5)
    assert match is not None and match.distance == 0 and match.signature == -5


def test_adding_a_doc_again_does_nothing(near: NearBackend) -> None:
    index = near.open()
    index.add(42, "c", "d")
    index.add(42, "other", "d")
    assert index.count() == 1
    match = index.find(42)
    assert match is not None and match.cluster_id == "c"


def test_cluster_policy(near: NearBackend) -> None:
    index = near.open()
    first = assign(index, 1000, "a")
    assert (first.cluster_id, first.near_duplicate_of) == ("a", None)
    second = assign(index, _flip(1000, [40, 41]), "b")
    assert (second.cluster_id, second.near_duplicate_of, second.distance) == ("a", "a", 2)
    assert index.count() == 1  # members are not added: no chaining away from the founder
    again = assign(index, 1000, "a")  # the founder parsed again keeps its cluster
    assert (again.cluster_id, again.near_duplicate_of) == ("a", None)
    other = assign(index, ~1000, "c")
    assert (other.cluster_id, other.near_duplicate_of) == ("c", None)


def test_many_random_signatures(near: NearBackend) -> None:
    index = near.open(k=3, blocks=5)
    rng = random.Random(7)
    sigs = [rng.getrandbits(64) for _ in range(2000)]
    for n, s in enumerate(sigs):
        index.add(s, f"c{n}", f"d{n}")
    for n in range(0, 2000, 37):
        match = index.find(_flip(sigs[n], rng.sample(range(64), 3)))
        assert match is not None and match.doc_key == f"d{n}"


def test_survives_restart_and_loses_uncommitted(near: NearBackend) -> None:
    if near.name == "memory":
        pytest.skip("the memory index does not persist")
    index = near.open()
    index.add(7, "c7", "d7")
    assert near.db is not None
    near.db.commit()
    index.add(8 << 40, "c8", "d8")
    near.restart(crash=True)
    index = near.open()
    assert index.count() == 1
    assert index.find(7) is not None and index.find(8 << 40) is None


def test_layout_change_rebuilds_keys(near: NearBackend) -> None:
    if near.name == "memory":
        pytest.skip("the memory index does not persist")
    index = near.open(k=3)
    index.add(12345, "c", "d")
    near.restart(crash=False)
    index = near.open(k=4, blocks=6)
    match = index.find(_flip(12345, [0, 20, 40, 60]))
    assert match is not None and match.doc_key == "d"


def test_block_layout() -> None:
    t = BlockTables(3)
    assert t.tables == 4 and len({bin(m).count("1") for m in t.masks}) == 1
    assert BlockTables(3, 6).tables == 20
    with pytest.raises(ValueError, match="blocks"):
        BlockTables(3, 3)
