"""The index and searcher on a small hand-made index: analysis, ranking, operators,
replacement, collapsing, paging, typos, snippets, cache, and bad input."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import tantivy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.test_index_corpus import NOWHERE, add_docs
from trawl.index import Indexer, QueryError, Searcher
from trawl.index.correct import Corrector
from trawl.index.schema import IndexFormatError, analyzer, field_code, normalise, site_terms
from trawl.index.writer import IndexDoc
from trawl.testing import FakeClock

FILLER = (
    "The committee met on Tuesday to discuss the annual budget and the harbour. "
    "Members raised questions about the library, the parks and the bridge. "
)


def _doc(n: int, title: str, text: str, **kw: object) -> IndexDoc:
    fields: dict[str, object] = {
        "key": f"hash{n}",
        "url": f"http://www.example.org/{n}",
        "host": "www.example.org",
        "title": title,
        "text": text,
        "language": "en",
        "fetched_at": 1_700_000_000.0 + n,
        "cluster": f"hash{n}",
        "where": NOWHERE,
    }
    fields.update(kw)
    return IndexDoc(**fields)  # type: ignore[arg-type]


DOCS = [
    _doc(1, "Running shoes", FILLER + "Our running shoes are the best for marathon runners."),
    _doc(2, "Gardening", FILLER + "Plant tomatoes in spring; water the garden. Running late."),
    _doc(3, "Bridges of Lisbon", FILLER * 3 + "The bridge over the Tagus river is long."),
    _doc(
        4,
        "Laufschuhe",
        "Die besten Laufschuhe für glückliche Läufer in den Häusern der Stadt.",
        language="de",
        host="shop.beispiel.de",
        url="http://shop.beispiel.de/4",
    ),
    _doc(5, "Kitchen", FILLER + "A <script>alert(1)</script> tomato & basil sauce recipe."),
    _doc(6, "Shoes sale", FILLER + "Everything about shoes, and nothing about running at all."),
    _doc(7, "Copy one", FILLER + "The unique zephyrine quartz garden", cluster="c7"),
    _doc(8, "Copy two", FILLER + "The unique zephyrine quartz garden again", cluster="c7"),
]


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    d = tmp_path / "index"
    add_docs(d, DOCS)
    return d


@pytest.fixture
def searcher(index_dir: Path) -> Searcher:
    return Searcher(index_dir)


def _links(s: Searcher, q: str, **kw: Any) -> list[str]:
    return [h.link for h in s.search(q, **kw).results]


def _n(link: str) -> int:
    return int(link.rsplit("/", 1)[1])


def test_analysis_folds_case_accents_and_stems() -> None:
    assert analyzer("en").analyze("Running RUNNERS café") == ["run", "runner", "cafe"]
    assert analyzer("de").analyze("Häusern") == ["haus"]
    assert analyzer("xx").analyze("Running") == ["running"]
    assert field_code("en-GB") == "en" and field_code("zh-Hant") == "xx"
    assert field_code(None) == "xx" and field_code("nb") == "no"
    assert normalise("a<b>c</b>&amp;\x00\ufb01") == "a c & fi"
    assert site_terms("A.b.Example.org:8080") == [
        "a.b.example.org",
        "b.example.org",
        "example.org",
        "org",
    ]


def test_stemmed_words_match_and_the_title_ranks_first(searcher: Searcher) -> None:
    links = _links(searcher, "run shoes")
    assert [_n(x) for x in links[:2]] == [1, 6]  # both words; the title holds them in 1
    assert "http://www.example.org/2" not in links  # no "shoes"
    assert _n(_links(searcher, "running")[0]) == 1


def test_phrase_is_in_order(searcher: Searcher) -> None:
    assert [_n(x) for x in _links(searcher, '"running shoes"')] == [1]
    assert _links(searcher, '"shoes running"') == []


def test_or_not_minus(searcher: Searcher) -> None:
    assert {_n(x) for x in _links(searcher, "tomatoes OR marathon")} == {1, 2, 5}
    assert {_n(x) for x in _links(searcher, "running -shoes")} == {2}
    assert {_n(x) for x in _links(searcher, "running NOT (shoes OR garden)")} == set()
    assert {_n(x) for x in _links(searcher, "tomato -(basil OR marathon)")} == {2}


def test_site_matches_the_host_and_subdomains(searcher: Searcher) -> None:
    assert {_n(x) for x in _links(searcher, "site:beispiel.de")} == {4}
    assert {_n(x) for x in _links(searcher, "site:shop.beispiel.de")} == {4}
    assert _links(searcher, "site:other.de") == []
    assert len(_links(searcher, "bridge site:example.org")) == 6  # the filler names it


def test_german_pages_are_stemmed_as_german(searcher: Searcher) -> None:
    assert [_n(x) for x in _links(searcher, "haus")] == [4]
    assert [_n(x) for x in _links(searcher, "Laufschuh")] == [4]


def test_near_duplicates_collapse_to_one_hit(searcher: Searcher) -> None:
    r = searcher.search("zephyrine quartz")
    assert len(r.results) == 1 and r.total == 1
    assert _n(r.results[0].link) in (7, 8)


def test_paging_and_total(searcher: Searcher) -> None:
    everything = searcher.search("committee", size=100)
    assert everything.total == 6  # the filler, in 6 pages of 7 clusters
    pages = [searcher.search("committee", page=p, size=2) for p in (1, 2, 3, 4)]
    assert [len(p.results) for p in pages] == [2, 2, 2, 0]
    assert [h.link for p in pages for h in p.results] == [h.link for h in everything.results]
    assert all(p.total == 6 for p in pages[:3])


def test_typo_is_corrected_and_said(searcher: Searcher) -> None:
    r = searcher.search("marathn")
    assert r.corrected == "marathon"
    assert [_n(h.link) for h in r.results] == [1]
    r = searcher.search('tomatoez "running late"')
    assert r.corrected == 'tomatoes "running late"'
    assert [_n(h.link) for h in r.results] == [2]
    assert searcher.search("marathon").corrected is None
    # Short words and known stems are left alone.
    assert searcher.search("run").corrected is None
    assert searcher.search("qz").corrected is None


def test_snippet_marks_terms_and_escapes_the_rest(searcher: Searcher) -> None:
    hit = searcher.search("basil sauce").results[0]
    assert "<mark>basil</mark>" in hit.snippet and "<mark>sauce</mark>" in hit.snippet
    assert "<script>" not in hit.snippet and "&lt;" not in hit.snippet  # markup stripped
    assert "&amp;" in hit.snippet
    assert hit.title == "Kitchen" and hit.language == "en" and hit.host == "www.example.org"
    # A match in the title only: the page's first words.
    only_title = searcher.search("lisbon").results[0]
    assert only_title.snippet.startswith("The committee met")


def test_refetch_replaces_and_re_adding_is_idempotent(index_dir: Path) -> None:
    s = Searcher(index_dir, reload_interval=0.0)
    assert s.num_docs == len(DOCS)
    add_docs(index_dir, [DOCS[0]])  # the same page again (a crash before mark_indexed)
    s.reload()
    assert s.num_docs == len(DOCS)
    assert len(_links(s, '"running shoes"')) == 1
    refetched = _doc(1, "Walking shoes", "Now about walking boots only.", key="hash1b")
    add_docs(index_dir, [refetched])
    s.reload()
    assert s.num_docs == len(DOCS)
    assert _links(s, "marathon") == []
    assert [_n(x) for x in _links(s, "walking boots")] == [1]


def test_cache_answers_repeats_and_a_commit_empties_it(index_dir: Path) -> None:
    s = Searcher(index_dir, reload_interval=0.0)
    first = s.search("tomatoes")
    again = s.search("tomatoes")
    assert again.results == first.results
    assert s._cache
    assert again.results is first.results  # the second came from the cache
    add_docs(index_dir, [_doc(9, "Tomatoes", "Tomatoes, tomatoes, tomatoes.")])
    after = s.search("tomatoes")
    assert _n(after.results[0].link) == 9 and after.total == first.total + 1


def test_a_missing_index_is_empty_until_it_appears(tmp_path: Path) -> None:
    s = Searcher(tmp_path / "index", reload_interval=0.0)
    assert s.search("anything").results == []
    add_docs(tmp_path / "index", DOCS[:1])
    assert len(s.search("marathon").results) == 1
    s.close()


@pytest.mark.parametrize(("page", "size"), [(0, 10), (1, 0), (1, 101), (200, 10), (-1, 5)])
def test_bad_paging_is_a_query_error(searcher: Searcher, page: int, size: int) -> None:
    with pytest.raises(QueryError):
        searcher.search("shoes", page=page, size=size)


@pytest.mark.parametrize("query", ["-shoes", "NOT shoes", "!!! ???", "- +", "site:"])
def test_queries_with_nothing_to_find_are_errors(searcher: Searcher, query: str) -> None:
    with pytest.raises(QueryError):
        searcher.search(query)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=120))
def test_any_text_searches_or_raises_query_error(searcher: Searcher, text: str) -> None:
    try:
        r = searcher.search(text)
    except QueryError as exc:
        message = exc.message
        assert message
        return
    assert r.total >= len(r.results)


def _older_index(index_dir: Path) -> None:
    """An index of the schema before issue 16 (bodies stored, a ``vocab`` field)."""
    b = tantivy.SchemaBuilder()
    b.add_text_field("key", stored=True, tokenizer_name="raw")
    b.add_text_field("url", stored=True, tokenizer_name="raw")
    b.add_text_field("body_en", stored=True)
    b.add_text_field("vocab", index_option="basic")
    index_dir.mkdir(parents=True)
    writer = tantivy.Index(b.build(), path=str(index_dir)).writer(15_000_000, 1)
    writer.add_document(tantivy.Document(key="k", url="http://old.test/", body_en="old text"))
    writer.commit()
    writer.wait_merging_threads()


def test_an_older_index_is_refused_by_name_or_replaced(tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    _older_index(index_dir)
    rebuild = f"trawl index --data {tmp_path}"
    with pytest.raises(IndexFormatError, match=re.escape(rebuild)):
        Indexer(index_dir)  # the crawl's writer: it says what to run
    with pytest.raises(IndexFormatError, match=re.escape(rebuild)):
        Searcher(index_dir)
    ix = Indexer(index_dir, replace_old=True)  # what `trawl index` does
    ix.close()
    with Searcher(index_dir) as s:
        assert s.num_docs == 0
    add_docs(index_dir, DOCS[:1])
    with Searcher(index_dir) as s:
        assert [_n(x) for x in _links(s, "marathon")] == [1]


class _SlowCorrector(Corrector):
    """Each lookup takes a second of the fake clock."""

    def __init__(self, index_dir: Path, clock: FakeClock) -> None:
        super().__init__(index_dir)
        self.clock = clock
        self.calls = 0

    def candidates(self, *args: Any, **kwargs: Any) -> list[str]:
        self.calls += 1
        self.clock.advance(1.0)
        return super().candidates(*args, **kwargs)


def test_correction_past_its_budget_stops_and_the_answer_says_so(index_dir: Path) -> None:
    clock = FakeClock()
    slow = _SlowCorrector(index_dir, clock)
    s = Searcher(
        index_dir, clock=clock.now, reload_interval=1e9, corrector=slow, correction_budget=0.5
    )
    r = s.search("marathn tomatoez")
    # The first word was corrected in time; then the budget was spent: the second is
    # searched as typed, and the answer says so.
    assert slow.calls == 1
    assert r.corrected == "marathon tomatoez" and r.correction_skipped
    assert not s._cache  # an answer cut short is not kept
    # Within the budget: both corrected, nothing skipped, and cached.
    roomy = Searcher(
        index_dir,
        clock=clock.now,
        reload_interval=1e9,
        corrector=_SlowCorrector(index_dir, clock),
        correction_budget=10.0,
    )
    r = roomy.search("marathn tomatoez")
    assert r.corrected == "marathon tomatoes" and not r.correction_skipped
    assert roomy._cache
    # A query with no typo never spends any.
    assert not s.search("marathon").correction_skipped


def test_normalise_controls_in_ascii_and_other_text() -> None:
    assert normalise("a\x01\x02b\tc\nd\x7fe") == "a b\tc\nd e"
    assert normalise("plain text, no controls\n") == "plain text, no controls\n"
    assert normalise("caf\u00e9\x85\x01x") == "caf\u00e9 x"
