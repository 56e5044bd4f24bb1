"""trawl._native's Tokens and Terms (csrc/terms.c) against the Python they stand for:
``stems.ascii_tokens`` and a dict (or a set) of bytes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trawl.index.lexicon import KnownWords, words_of
from trawl.index.schema import PLAIN, analyzer
from trawl.index.stems import ascii_split, ascii_tokens

native = pytest.importorskip("trawl._native", reason="the C module is not built")

ASCII = st.text(alphabet=st.characters(max_codepoint=127), max_size=400)


@settings(max_examples=300, deadline=None)
@given(ASCII)
def test_tokens_are_ascii_tokens(text: str) -> None:
    tokens = native.Tokens(text.encode("ascii"))
    assert tokens.as_list() == ascii_tokens(text)
    assert len(tokens) == len(ascii_tokens(text))


def test_tokens_of_long_runs_and_bytes_over_127() -> None:
    data = b"A" * 300 + b"\xe9x\xff" + b"Z9" * 200 + b"\x00 q"
    assert native.Tokens(data).as_list() == [b"a" * 300, b"x", b"z9" * 200, b"q"]
    assert native.Tokens(b"").as_list() == []
    assert native.Tokens(b" ,.; ").as_list() == []


@settings(max_examples=200, deadline=None)
@given(st.lists(ASCII, max_size=5), st.integers(0, 3))
def test_terms_is_a_dict_of_tokens(texts: list[str], clear_at: int) -> None:
    table, mirror = native.Terms(), dict[bytes, bytes]()
    for i, text in enumerate(texts):
        if i == clear_at:
            table.clear()
            mirror.clear()
        tokens = native.Tokens(text.encode("ascii"))
        words = tokens.as_list()
        new = table.missing(tokens)
        assert new == list(dict.fromkeys(w for w in words if w not in mirror))
        for w in new:
            table[w] = mirror[w] = w[::-1] + b"!"
        assert table.join(tokens) == b" ".join(mirror[w] for w in words)
        assert len(table) == len(mirror)
        assert sorted(table.keys()) == sorted(mirror)
        assert all(w in table for w in words)


WORDS = [b"a", b"b", b"ab", b"ba", b"a" * 300, b"a" * 299 + b"b", b"z" * 240, b"z" * 241]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=300), st.sets(st.sampled_from(WORDS)))
def test_repeated_tokens_are_looked_up_once_with_the_same_answers(
    words: list[bytes], held: set[bytes]
) -> None:
    # A page's tokens repeat: each distinct one is looked up at its first occurrence
    # (Tokens keeps where that is); one Tokens serves several tables.
    tokens = native.Tokens(b" ".join(words))
    for values in ({w: w.upper() for w in held}, {w: b"<%d>" % len(w) for w in held}):
        table = native.Terms()
        for w, v in values.items():
            table[w] = v
        assert table.missing(tokens) == list(dict.fromkeys(w for w in words if w not in held))
        for w in set(words) - held:
            table[w] = values[w] = b"-"
        assert table.join(tokens) == b" ".join(values[w] for w in words)


def test_terms_growth_lookups_and_errors() -> None:
    table = native.Terms()
    for i in range(5000):  # many resizes
        table[b"w%d" % i] = b"v%d" % i
    assert len(table) == 5000 and table[b"w4321"] == b"v4321"
    table[b"w1"] = None  # replaced; None values make a set
    assert table[b"w1"] is None and len(table) == 5000
    long_key = b"k" * 1000
    table[long_key] = b"long"
    assert table[long_key] == b"long" and (b"k" * 999) not in table
    with pytest.raises(KeyError):
        table[b"absent"]
    with pytest.raises(KeyError, match="absent"):
        table.join(native.Tokens(b"w2 absent"))
    with pytest.raises(TypeError, match="w1"):
        table.join(native.Tokens(b"w1"))  # a None value has no text
    with pytest.raises(TypeError, match="bytes"):
        table["str"] = b"x"
    with pytest.raises(TypeError, match="bytes or None"):
        table[b"x"] = "str"
    with pytest.raises(TypeError, match="Tokens"):
        table.missing([b"x"])
    with pytest.raises(TypeError, match="no arguments"):
        native.Terms(1)
    with pytest.raises(TypeError):
        del table[b"w2"]


@settings(max_examples=200, deadline=None)
@given(ASCII, st.sets(st.sampled_from(["the", "a", "zzz", "dog", "b" * 39]), max_size=4))
def test_known_words_native_and_set_agree(text: str, known: set[str]) -> None:
    plain = analyzer(PLAIN)
    encoded = [w.encode() for w in known]
    native_known, set_known = KnownWords(encoded), KnownWords(encoded, native=False)
    expected = words_of(plain, text, set(encoded))
    for k in (native_known, set_known):
        assert words_of(plain, text, k) == expected
        for split in (ascii_split(text), ascii_split(text, native=False)):
            assert words_of(plain, text, k, [split]) == expected
    assert len(native_known) == len(set_known) == len(known)
    assert sorted(native_known) == sorted(set_known)
