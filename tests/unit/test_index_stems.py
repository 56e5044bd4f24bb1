"""The writer's own stemming (index/stems.py) makes the index tantivy's analyzers make.

The same documents go into two indexes: one analysed by tantivy's full analyzers
(``schema.register``, every token stemmed by tantivy), one through ``Stems`` with the
writer's analyzers (``register_writer``). Every term of every title and body field,
its document frequency, and the hits and scores of term and phrase queries (which
need the positions and field lengths) must be the same.
"""

from __future__ import annotations

import random
import re

import pytest
import tantivy
from hypothesis import given, settings
from hypothesis import strategies as st

from trawl.index.schema import body_field, build_schema, register, title_field
from trawl.index.stems import MAX_CACHED, Stems, register_writer

WORDS = (
    "Running runners ran easily generously happiness national nations Abilities "
    "connection connected 2024 x1y e-mail don't COVID-19 cafe Cafés naïve Häuser "
    "Läufer laufen İstanbul straße ½ ǅungla ﬁnance 東京 Ωμέγα ΟΔΟΣ а́нгел Москва "
    + "a" * 39
    + " "
    + "b" * 40
    + " "
    + "Ü" * 20
).split()


_WORD = re.compile(r"[^\W_]+")


def _text(rng: random.Random, n: int, *, ascii_only: bool) -> str:
    words = [w for w in WORDS if w.isascii()] if ascii_only else WORDS
    seps = [" ", "  ", ", ", ".\n", " - ", "\t", "'", "/"]
    return "".join(rng.choice(words) + rng.choice(seps) for _ in range(n))


def _indexes(
    docs: list[tuple[str, str, str]], *, native: bool = True
) -> tuple[tantivy.Index, tantivy.Index]:
    full = tantivy.Index(build_schema())
    register(full)
    ours = tantivy.Index(build_schema())
    register(ours)
    register_writer(ours)
    stems: dict[str, Stems] = {}
    wf = full.writer(heap_size=15_000_000, num_threads=1)
    wo = ours.writer(heap_size=15_000_000, num_threads=1)
    for i, (code, title, body) in enumerate(docs):
        a, b = tantivy.Document(), tantivy.Document()
        for d in (a, b):
            d.add_text("key", str(i))
        a.add_text(title_field(code), title)
        a.add_text(body_field(code), body)
        s = stems.setdefault(code, Stems(code, native=native))
        for field, value in ((title_field(code), s.title(title)), (body_field(code), s.body(body))):
            if isinstance(value, str):
                b.add_text(field, value)
            else:
                b.add_pre_tokenized_text(field, value)
        wf.add_document(a)
        wo.add_document(b)
    for w, index in ((wf, full), (wo, ours)):
        w.commit()
        w.wait_merging_threads()
        index.reload()
    return full, ours


def _same(docs: list[tuple[str, str, str]], rng: random.Random, *, native: bool = True) -> None:
    full, ours = _indexes(docs, native=native)
    sf, so = full.searcher(), ours.searcher()
    assert sf.num_docs == so.num_docs == len(docs)
    queries: list[tantivy.Query] = []
    for code in sorted({c for c, _, _ in docs}):
        for field in (title_field(code), body_field(code)):
            terms = sorted(sf.terms_with_prefix(field, ""))
            assert terms == sorted(so.terms_with_prefix(field, ""))
            for term, _df in terms[:40]:
                queries.append(tantivy.Query.term_query(full.schema, field, term))
        for doc_code, title, body in docs[:30]:
            if doc_code != code:
                continue
            words = _WORD.findall(body)
            for _ in range(3):
                at = rng.randrange(max(1, len(words) - 2))
                phrase = " ".join(words[at : at + rng.randint(2, 3)])
                if phrase:
                    fields = [body_field(code), title_field(code)]
                    queries.append(full.parse_query(f'"{phrase}"', fields))
            if _WORD.findall(title):
                query = " ".join(_WORD.findall(title))
                queries.append(full.parse_query(query, [title_field(code)]))
    for q in queries:
        hf = [(round(score, 5), sf.doc(a).get_first("key")) for score, a in sf.search(q, 50).hits]
        ho = [(round(score, 5), so.doc(a).get_first("key")) for score, a in so.search(q, 50).hits]
        assert hf == ho, q


@pytest.mark.parametrize("native", [True, False])
def test_the_same_terms_positions_and_scores_as_tantivys_analyzers(native: bool) -> None:
    rng = random.Random(5)
    docs = []
    for i in range(120):
        code = ("en", "de", "fr", "ru", "xx")[i % 5]
        ascii_only = i % 3 != 0
        docs.append(
            (code, _text(rng, 6, ascii_only=ascii_only), _text(rng, 200, ascii_only=ascii_only))
        )
    _same(docs, rng, native=native)


def test_stored_titles_are_the_original_text() -> None:
    _full, ours = _indexes([("en", "Running Dogs, naïvely", "The dogs were running.")])
    so = ours.searcher()
    (_, addr), *_ = so.search(tantivy.Query.all_query(), 1).hits
    assert so.doc(addr).get_first("title_en") == "Running Dogs, naïvely"


@pytest.mark.parametrize("native", [True, False])
def test_a_full_cache_is_emptied_and_refilled(native: bool) -> None:
    s = Stems("en", native=native)
    words = " ".join(f"w{i}x running" for i in range(MAX_CACHED + 10))
    body = s.body(words)
    assert isinstance(body, str)
    assert body.split()[:2] == ["w0x", "run"]
    assert body.split()[-2:] == [f"w{MAX_CACHED + 9}x", "run"]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.characters(max_codepoint=0x2FF), min_size=1, max_size=120),
        min_size=1,
        max_size=4,
    )
)
def test_any_text(texts: list[str]) -> None:
    docs = [(("en", "fr")[i % 2], t[:20], t) for i, t in enumerate(texts)]
    _same(docs, random.Random(1))
    _same(docs, random.Random(1), native=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(max_codepoint=127), max_size=80), max_size=6))
def test_native_and_python_bodies_are_the_same_text(texts: list[str]) -> None:
    """Page after page through one Stems each (the tables fill as a crawl's do)."""
    native, python = Stems("en"), Stems("en", native=False)
    for text in texts:
        a, b = native.body(text), python.body(text)
        assert type(a) is type(b)
        if isinstance(a, str):
            assert a == b
