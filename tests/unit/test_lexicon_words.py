"""The lexicon's words of a text: its own ASCII split is the plain analyzer's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from trawl.index.lexicon import NewWords, _word, words_of
from trawl.index.schema import PLAIN, analyzer

PLAIN_ANALYZER = analyzer(PLAIN)


def _by_analyzer(text: str) -> set[str]:
    return {w for w in PLAIN_ANALYZER.analyze(text) if _word(w)}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=300))
def test_ascii_words_are_the_analyzers(text: str) -> None:
    assert text.isascii()
    assert words_of(PLAIN_ANALYZER, text) == _by_analyzer(text)
    known = set(list(_by_analyzer(text))[::2]) | {"zzz"}
    encoded = {w.encode("utf-8") for w in known}
    assert words_of(PLAIN_ANALYZER, text, encoded) == _by_analyzer(text) - known


def test_long_words_digits_and_other_text() -> None:
    cases = [
        "Running RUNNERS x1y 42 don't e-mail " + "a" * 39 + " " + "b" * 40 + " " + "c" * 41,
        "caf\u00e9 CAF\u00c9 na\u00efve stra\u00dfe \u0130stanbul",
        "",
        "\x00\x01word\x7fother",
    ]
    for text in cases:
        assert words_of(PLAIN_ANALYZER, text) == _by_analyzer(text)
        known = {"running", "caf\u00e9", "other"}
        encoded = {w.encode("utf-8") for w in known}
        assert words_of(PLAIN_ANALYZER, text, encoded) == _by_analyzer(text) - known
    assert "a" * 39 in words_of(PLAIN_ANALYZER, cases[0])
    assert "b" * 40 not in words_of(PLAIN_ANALYZER, cases[0])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["xx", "en", "de"]), st.sets(st.sampled_from("abcdefgh"))),
        max_size=12,
    )
)
def test_new_words_count_documents_and_keep_the_first_code(
    docs: list[tuple[str, set[str]]],
) -> None:
    # What the batch's lexicon update reads: in how many documents each word is, and
    # the field code of the first of them, in the order the words were first seen.
    found = NewWords()
    for code, words in docs:
        found.add(code, words)
    counts: dict[str, int] = {}
    where: dict[str, str] = {}
    for code, words in docs:
        for word in words:
            counts[word] = counts.get(word, 0) + 1
            where.setdefault(word, code)
    assert found.counts == counts and list(found.counts) == list(counts)
    assert found.where == where
    assert found.documents == len(docs)
