from __future__ import annotations

import random

import pytest

from trawl.dedup.minhash import MinHasher
from trawl.testing._sample_text import text_generator


def _article(seed: int) -> str:
    return "\n".join(text_generator(0).prose(random.Random(seed), 800))


def test_deterministic_and_sized() -> None:
    a = _article(1)
    s1, s2 = MinHasher().signature(a), MinHasher().signature(a)
    assert s1 is not None and s1 == s2 and len(s1) == 4 * 128
    assert len(MinHasher().band_keys(s1)) == 32


def test_similar_texts_are_close_and_different_far() -> None:
    m = MinHasher()
    a = _article(1)
    edited = "Published 3 March. " + a.replace(". ", ". Indeed, ", 3)
    sa, se, sb = m.signature(a), m.signature(edited), m.signature(_article(2))
    assert sa is not None and se is not None and sb is not None
    assert m.similarity(sa, se) >= m.threshold
    assert m.similarity(sa, sb) < 0.1
    assert set(m.band_keys(sa)) & set(m.band_keys(se))
    assert not set(m.band_keys(sa)) & set(m.band_keys(sb))


def test_empty_text_has_no_signature() -> None:
    assert MinHasher().signature(" .,; ") is None
    assert MinHasher().signature("one") is not None


def test_bad_parameters() -> None:
    with pytest.raises(ValueError, match="multiple"):
        MinHasher(perms=100, bands=32)
    with pytest.raises(ValueError, match="threshold"):
        MinHasher(threshold=0)
