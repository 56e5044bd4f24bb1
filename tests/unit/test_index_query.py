"""The query language: what parses to what, and a clear QueryError for the rest."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trawl.index.query import (
    MAX_CLAUSES,
    MAX_QUERY_CHARS,
    And,
    Not,
    Or,
    Phrase,
    QueryError,
    Site,
    Word,
    parse,
    rewrite,
)


def test_words_are_anded() -> None:
    assert parse("cheap  flights").root == And((Word("cheap"), Word("flights")))
    assert parse("cheap AND flights").canonical == parse("cheap flights").canonical


def test_phrases_and_sites() -> None:
    q = parse('"new  york" site:Example.ORG')
    assert q.root == And((Phrase("new york"), Site("example.org")))
    assert parse("site:https://www.example.org/path").root == Site("example.org")
    assert parse("site:bücher.example").root == Site("xn--bcher-kva.example")


def test_or_binds_looser_than_and() -> None:
    assert parse("a b OR c").root == Or((And((Word("a"), Word("b"))), Word("c")))
    assert parse("a (b OR c)").root == And((Word("a"), Or((Word("b"), Word("c")))))


def test_not_and_minus_and_plus() -> None:
    assert parse("a -b").root == And((Word("a"), Not(Word("b"))))
    assert parse("a NOT b").root == And((Word("a"), Not(Word("b"))))
    assert parse("+a -(b OR c)").root == And((Word("a"), Not(Or((Word("b"), Word("c"))))))
    assert parse('-"x y" z').root == And((Not(Phrase("x y")), Word("z")))


def test_lower_case_operators_are_words() -> None:
    assert parse("rock and roll").root == And((Word("rock"), Word("and"), Word("roll")))
    assert parse("to be or not").words() == [Word("to"), Word("be"), Word("or"), Word("not")]


def test_words_under_not_do_not_count() -> None:
    assert parse("a -b (c OR d)").words() == [Word("a"), Word("c"), Word("d")]


def test_control_characters_and_markup_are_removed() -> None:
    assert parse("caf\u00e9\x00\x07 <b>bar</b>").root == And((Word("café"), Word("bar")))
    assert parse("\ufb01sh").root == Word("fish")  # NFKC: the ligature is two letters


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("", "empty"),
        ("   \x00\t", "empty"),
        ("<br>", "empty"),
        ('"unclosed phrase', "unbalanced quotes"),
        ('a "b" "c', "unbalanced quotes"),
        ("AND", "AND needs a search term on each side"),
        ("OR", "OR needs a search term on each side"),
        ("a OR", "OR needs a search term on each side"),
        ("OR a", "OR needs a search term on each side"),
        ("a AND", "AND needs a search term on each side"),
        ("a AND OR b", "AND needs a search term on each side"),
        ("NOT", "NOT needs a search term after it"),
        ("a NOT", "NOT needs a search term after it"),
        ("(a", "a ( is never closed"),
        ("a)", "a ) has no ( before it"),
        ("()", "empty parentheses"),
        ("site:", "site: needs a host name"),
        ("site:exa_mple..org", "not a valid host name"),
        ("x" * 10_000, "too long: 10,000 characters"),
        ("(" * 30 + "a" + ")" * 30, "nested too deep"),
        (" ".join(["w"] * (MAX_CLAUSES + 1)), "too many search terms"),
    ],
)
def test_bad_queries_say_why(query: str, message: str) -> None:
    with pytest.raises(QueryError) as info:
        parse(query)
    assert message in info.value.message
    assert isinstance(info.value, ValueError)


def test_the_longest_query_allowed() -> None:
    assert parse("a" * MAX_QUERY_CHARS).root == Word("a" * MAX_QUERY_CHARS)


def test_rewrite_puts_corrections_in_place() -> None:
    q = parse('hapiness "new york" -goverment hapiness')
    first, second = q.words()[0], q.words()[1]
    assert rewrite(q, [(first, "happiness"), (second, "happiness")]) == (
        'happiness "new york" -goverment happiness'
    )


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=200))
def test_any_text_parses_or_raises_query_error(text: str) -> None:
    try:
        q = parse(text)
    except QueryError as exc:
        message = exc.message
        assert message
        return
    assert q.canonical
    # The canonical form means the same and parses again, to itself.
    assert parse(q.canonical).canonical == q.canonical


_ALPHABET = st.sampled_from([*'ab "()-+:', "AND", "OR", "NOT", "site:", "x.org"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_ALPHABET, max_size=20).map(" ".join))
def test_operator_soup_parses_or_raises_query_error(text: str) -> None:
    with contextlib.suppress(QueryError):
        parse(text)


def test_markup_left_by_taking_markup_out_is_taken_out_too() -> None:
    # "< < > >" loses its inner "< >" and leaves "< >": the canonical form parses to itself.
    with pytest.raises(QueryError):
        parse("< < > >")
    assert parse("a < < > >").canonical == "a"
    assert parse("&lt;b&gt;x").canonical == "x"
