from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from trawl.dedup.simhash import hamming, simhash, tokens
from trawl.testing._sample_text import text_generator


def _article(seed: int) -> str:
    return "\n".join(text_generator(0).prose(random.Random(seed), 6000))


def test_tokens_split_on_punctuation_and_lower_case() -> None:
    assert tokens("Hello, World! It\u2019s \u201cquoted\u201d\u2014ok") == [
        b"hello",
        b"world",
        b"it",
        b"s",
        b"quoted",
        b"ok",
    ]


def test_small_edits_stay_close_and_other_texts_are_far() -> None:
    a = _article(1)
    edited = a.replace(". ", ". Indeed, ", 3)
    assert hamming(simhash(a), simhash(edited)) <= 6
    assert hamming(simhash(a), simhash(_article(2))) > 12


def test_signature_is_a_signed_64_bit_int() -> None:
    values = [simhash(_article(n)) for n in range(20)]
    assert all(-(2**63) <= v < 2**63 for v in values)
    assert any(v < 0 for v in values)


def test_empty_and_tiny_texts() -> None:
    assert simhash("") == 0
    assert simhash("!!! ... ---") == 0
    assert simhash("one") != 0
    assert simhash("one two") != simhash("two one")


def test_hamming() -> None:
    assert hamming(0, -1) == 64
    assert hamming(-1, (1 << 64) - 1) == 0
    assert hamming(0b1011, 0b0001) == 2


@given(st.text(max_size=2000))
def test_deterministic_and_in_range(text: str) -> None:
    value = simhash(text)
    assert value == simhash(text)
    assert -(2**63) <= value < 2**63


@given(st.integers(-(2**63), 2**64 - 1), st.integers(-(2**63), 2**64 - 1))
def test_hamming_is_symmetric_and_bounded(a: int, b: int) -> None:
    assert hamming(a, b) == hamming(b, a)
    assert 0 <= hamming(a, b) <= 64
    assert hamming(a, a) == 0
