"""trawl._native's white-space loops (csrc/spaces.c) against the Python they stand for:
the extractor's line check and the exact-duplicate key's normalised text."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trawl.parse._extract_dom import _is_collapsed_py
from trawl.parse.page import text_hash

native = pytest.importorskip("trawl._native", reason="the C module is not built")

# Words, every kind of white space str.split() knows, and a few characters around them.
SPACES = " \t\n\v\f\r\x1c\x1d\x1e\x1f\x85\xa0\u2003\u3000"
PIECES = st.sampled_from(["a", "bc", "Z9", "\x01", "\x7f", "é", "\u4e2d", "\U0001f600", *SPACES])
TEXTS = st.lists(PIECES, max_size=80).map("".join)
ASCII = st.text(alphabet=st.characters(max_codepoint=127), max_size=300)


@settings(max_examples=500, deadline=None)
@given(st.one_of(TEXTS, ASCII))
def test_is_collapsed_is_the_python_check(text: str) -> None:
    assert native.is_collapsed(text) is _is_collapsed_py(text)
    # The Latin-1 and the wider string kinds take different loops.
    for wide in (text + "\u4e2d", "\U0001f600" + text):
        assert native.is_collapsed(wide) is _is_collapsed_py(wide)


@settings(max_examples=500, deadline=None)
@given(st.one_of(TEXTS, ASCII))
def test_ascii_words_is_split_and_join(text: str) -> None:
    words = native.ascii_words(text)
    if text.isascii():
        assert words == " ".join(text.split()).encode("ascii")
    else:
        assert words is None


def test_ascii_words_fast_and_slow_shapes() -> None:
    for text in ["", " ", "a", "lines\nof words\njoined", "a\n\nb", " a", "a ", "a\x1fb", "a\x01b"]:
        assert native.ascii_words(text) == " ".join(text.split()).encode("ascii")
    long = "word " * 5000 + "\n" + "x\ty  z" * 300
    assert native.ascii_words(long) == " ".join(long.split()).encode("ascii")
    with pytest.raises(TypeError):
        native.ascii_words(b"bytes")
    with pytest.raises(TypeError):
        native.is_collapsed(None)


@settings(max_examples=300, deadline=None)
@given(st.one_of(TEXTS, ASCII))
def test_text_hash_is_the_documented_key(text: str) -> None:
    expected = hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()
    assert text_hash(text) == expected


@settings(max_examples=200, deadline=None)
@given(st.one_of(TEXTS, ASCII))
def test_text_hash_without_the_c_module(text: str) -> None:
    from trawl.parse import page

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(page, "_native", None)
        python_key = text_hash(text)
    assert python_key == hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()
