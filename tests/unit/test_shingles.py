from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from trawl.dedup.shingles import shingle_hashes, tokens


def test_tokens_split_on_punctuation_and_lower_case() -> None:
    assert tokens("Hello, World! It\u2019s \u201cquoted\u201d\u2014ok") == [
        b"hello",
        b"world",
        b"it",
        b"s",
        b"quoted",
        b"ok",
    ]


def test_shingles_are_distinct_sorted_and_order_sensitive() -> None:
    words = tokens("one two three one two three four")
    h = shingle_hashes(words, 3)
    assert list(h) == sorted(set(h.tolist()))
    assert len(h) == 4  # "one two three" twice counts once
    assert set(shingle_hashes(tokens("one two"), 2).tolist()) != set(
        shingle_hashes(tokens("two one"), 2).tolist()
    )


@given(st.text(max_size=2000), st.integers(1, 8))
def test_deterministic(text: str, size: int) -> None:
    words = tokens(text)
    if words:
        assert np.array_equal(shingle_hashes(words, size), shingle_hashes(words, size))
