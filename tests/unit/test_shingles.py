from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from trawl.dedup import shingles
from trawl.dedup.shingles import shingle_hashes, token_bytes, tokens, unicode_token_bytes


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


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=300))
def test_an_ascii_text_gives_the_bytes_the_unicode_path_gives(text: str) -> None:
    assert token_bytes(text) == unicode_token_bytes(text)


@given(st.text(max_size=100), st.text(alphabet=st.characters(max_codepoint=127), max_size=50))
def test_any_text_gives_the_bytes_the_unicode_path_gives(text: str, ascii_part: str) -> None:
    assert token_bytes(text) == unicode_token_bytes(text)
    # An ASCII part of a text that is not: the shortcut's bytes there too.
    joined = f"{ascii_part} {text}"
    assert token_bytes(joined) == token_bytes(ascii_part) + b" " + token_bytes(text)


def test_ascii_lower_casing_is_str_lower() -> None:
    every = "".join(map(chr, range(128)))
    assert token_bytes(every) == every.lower().encode().translate(shingles._ASCII_TABLE)
    assert token_bytes("Hello, WORLD! K\u212a") == b"hello  world  kk"  # the Kelvin sign
