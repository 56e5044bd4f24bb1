"""The NearDupIndex contract, on every backend (memory and SQLite)."""

from __future__ import annotations

import random

import pytest

from tests.contract.conftest import Backend
from trawl.dedup.minhash import MinHasher
from trawl.dedup.near import NearDupIndex, assign
from trawl.testing._sample_text import text_generator


def _open(backend: Backend, hasher: MinHasher | None = None) -> NearDupIndex:
    return backend.store().near_index(hasher or MinHasher())


def _text(seed: int, words: int = 400) -> str:
    return "\n".join(text_generator(0).prose(random.Random(seed), words))


def _sig(text: str) -> bytes:
    sig = MinHasher().signature(text)
    assert sig is not None
    return sig


def test_finds_similar_and_not_different(backend: Backend) -> None:
    index = _open(backend)
    a = _text(1)
    index.add(_sig(a), "c1", "d1")
    assert index.count() == 1
    edited = a.replace(". ", ". Indeed, ", 2) + " Posted 3 March 2026."
    match = index.find(_sig(edited))
    assert match is not None and (match.cluster_id, match.doc_key) == ("c1", "d1")
    assert 0.5 <= match.similarity < 1.0
    assert index.find(_sig(_text(2))) is None


def test_best_wins(backend: Backend) -> None:
    index = _open(backend)
    a = _text(3)
    index.add(_sig(a[: len(a) * 2 // 3]), "part", "part")
    index.add(_sig(a), "whole", "whole")
    match = index.find(_sig(a))
    assert match is not None and match.cluster_id == "whole" and match.similarity == 1.0


def test_adding_a_doc_again_does_nothing(backend: Backend) -> None:
    index = _open(backend)
    s = _sig(_text(4))
    index.add(s, "c", "d")
    index.add(s, "other", "d")
    assert index.count() == 1
    match = index.find(s)
    assert match is not None and match.cluster_id == "c"


def test_cluster_policy(backend: Backend) -> None:
    index = _open(backend)
    a = _text(5)
    first = assign(index, _sig(a), "a")
    assert (first.cluster_id, first.near_duplicate_of) == ("a", None)
    index.add(_sig(a), first.cluster_id, "a")  # the caller adds founders it stored
    second = assign(index, _sig(a + " Comments: 3"), "b")
    assert (second.cluster_id, second.near_duplicate_of) == ("a", "a")
    again = assign(index, _sig(a), "a")  # the founder parsed again keeps its cluster
    assert (again.cluster_id, again.near_duplicate_of) == ("a", None)
    other = assign(index, _sig(_text(6)), "c")
    assert (other.cluster_id, other.near_duplicate_of) == ("c", None)


def test_many_signatures(backend: Backend) -> None:
    index = _open(backend)
    texts = [_text(100 + n, 150) for n in range(150)]
    for n, t in enumerate(texts):
        index.add(_sig(t), f"c{n}", f"d{n}")
    for n in range(0, 150, 13):
        match = index.find(_sig(texts[n] + " Updated today."))
        assert match is not None and match.doc_key == f"d{n}"


def test_survives_restart_and_loses_uncommitted(backend: Backend) -> None:
    index = _open(backend)
    a, b = _sig(_text(7)), _sig(_text(8))
    index.add(a, "c7", "d7")
    backend.commit()
    index.add(b, "c8", "d8")
    backend.restart(crash=True)
    index = _open(backend)
    assert index.count() == 1
    assert index.find(a) is not None and index.find(b) is None


def test_layout_change_rebuilds_bands(backend: Backend) -> None:
    s = _sig(_text(9))
    _open(backend).add(s, "c", "d")
    backend.restart(crash=False)
    index = _open(backend, MinHasher(bands=16))
    match = index.find(s)
    assert match is not None and match.doc_key == "d"
    backend.restart(crash=False)
    index = _open(backend, MinHasher(shingle=4))  # signatures no longer comparable: emptied
    assert index.count() == 0


def test_one_index_per_store(backend: Backend) -> None:
    index = _open(backend)
    assert _open(backend) is index
    with pytest.raises(ValueError, match="near index"):
        _open(backend, MinHasher(bands=16))


def test_claim_founds_a_cluster_or_names_its_founder(backend: Backend) -> None:
    index = _open(backend)
    a = _text(10)
    assert index.claim(_sig(a), "a", "a") is None  # no near copy stored: a founds
    assert index.count() == 1
    copy = index.claim(_sig(a + " Comments: 3"), "b", "b")
    assert copy is not None and (copy.cluster_id, copy.doc_key) == ("a", "a")
    assert index.count() == 1  # a near copy is not added
    assert index.claim(_sig(a), "a", "a") is None  # the founder again: still the founder
    assert index.claim(_sig(_text(11)), "c", "c") is None
    assert index.count() == 2


def test_peers_see_each_others_founders_before_any_commit(backend: Backend) -> None:
    peer = backend.open_peer()
    if peer is None:
        pytest.skip(f"{backend.name} has one writer at a time")
    try:
        mine, theirs = _open(backend), peer.near_index(MinHasher())
        a = _text(12)
        assert mine.claim(_sig(a), "a", "a") is None  # claimed, not committed
        seen = theirs.find(_sig(a + " Posted today."))
        assert seen is not None and seen.doc_key == "a"
        late = theirs.claim(_sig(a + " Comments: 7"), "b", "b")
        assert late is not None and late.doc_key == "a"  # two near copies, one founder
        assert theirs.claim(_sig(_text(13)), "c", "c") is None
        found = mine.find(_sig(_text(13)))
        assert found is not None and found.doc_key == "c"
    finally:
        peer.close(commit=False)


def test_a_crash_gives_back_uncommitted_claims(backend: Backend) -> None:
    index = _open(backend)
    a, b = _text(14), _text(15)
    assert index.claim(_sig(a), "a", "a") is None
    backend.commit()
    assert index.claim(_sig(b), "b", "b") is None
    backend.restart(crash=True)
    index = _open(backend)
    assert index.count() == 1
    assert index.find(_sig(b)) is None  # not kept: a near copy of b may found again
    assert index.claim(_sig(b + " Updated."), "b2", "b2") is None
    kept = index.find(_sig(a))
    assert kept is not None and kept.doc_key == "a"
