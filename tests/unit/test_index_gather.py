"""Search over several indexes (crawls, shards) ranks as one index holding them all:
the same pages, the same scores, one hit per page across crawls, paging, typo
correction, ``crawl=`` and the cache across them."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.unit.test_index_corpus import Page, index_all, prose_pages, write_pages
from trawl.index import Searcher, SearchResults
from trawl.index.layout import shard_count
from trawl.index.rebuild import rebuild_index
from trawl.index.search import UnknownCrawlError
from trawl.index.shard import IndexSpec
from trawl.testing._sample_site import distinctive_phrase

PAGES = list(prose_pages(160, hosts=8))
SMALL = 16  # pages 0..19 in the small crawl, the rest in the big one
MOVED = 7  # the page moved from the small crawl to the big one


def _crawl(data: Path, pages: Sequence[Page], first: int) -> Path:
    write_pages(data, pages, first=first)
    index_all(data)
    return data / "index"


def _numbered(numbers: Sequence[int]) -> list[Page]:
    return [PAGES[n] for n in numbers]


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("gather")
    out = {"union": _crawl(root / "union", PAGES, 0)}
    # One content hash and fetch time per page whatever crawl holds it.
    small = list(range(SMALL))
    big = list(range(SMALL, len(PAGES)))
    for name, (a, b) in {
        "in_small": (small, big),
        "in_big": ([n for n in small if n != MOVED], [MOVED, *big]),
    }.items():
        for part, numbers in (("small", a), ("big", b)):
            data = root / f"{name}-{part}"
            write_pages(data, _numbered(numbers), numbers=numbers)
            index_all(data)
            out[f"{name}-{part}"] = data / "index"
    return out


def _two(dirs: dict[str, Path], split: str) -> Searcher:
    specs = [IndexSpec("small", dirs[f"{split}-small"]), IndexSpec("big", dirs[f"{split}-big"])]
    return Searcher(indexes=lambda: specs, cache_size=0, exact_budget=10_000)


def _same_ranking(a: SearchResults, b: SearchResults) -> None:
    """The same pages with the same scores (single precision), each list best first
    (pages tied with the last one shown may differ: either may be cut)."""
    assert len(a.results) == len(b.results) and a.total == b.total
    cut = a.results[-1].score * (1 + 1e-4) if a.results else 0.0
    above_a = {h.link: h.score for h in a.results if h.score > cut}
    above_b = {h.link: h.score for h in b.results if h.score > cut}
    assert above_a.keys() == above_b.keys()
    for link, score in above_a.items():
        assert above_b[link] == pytest.approx(score, rel=2e-5), link
    for r in (a, b):
        pairs = zip(r.results, r.results[1:], strict=False)
        assert all(x.score >= y.score * (1 - 2e-5) for x, y in pairs)


def _queries(page: Page, rng: random.Random) -> list[str]:
    words = [w.strip(".,;") for w in page.text.split()]
    start = rng.randrange(len(words) - 3)
    return [
        " ".join(rng.sample(words, 2)),
        f'"{words[start]} {words[start + 1]}"',
        f"{rng.choice(words)} OR {rng.choice(words)}",
        f"{rng.choice(words)} -{rng.choice(words)}",
        f"{rng.choice(words)} site:{page.host}",
    ]


def ranks_as_whole(whole_dir: Path, other: Searcher, *, seed: int, pages: Sequence[int]) -> None:
    """``other`` ranks as the index in ``whole_dir`` (every page in one index) on five
    queries drawn from each of ``pages``."""
    whole = Searcher(whole_dir, cache_size=0)
    rng = random.Random(seed)
    for n in pages:
        for query in _queries(PAGES[n], rng):
            _same_ranking(whole.search(query, size=20), other.search(query, size=20))


def test_a_page_ranks_the_same_in_a_small_crawl_a_big_one_or_one_index(
    dirs: dict[str, Path],
) -> None:
    union = Searcher(dirs["union"], cache_size=0)
    splits = {split: _two(dirs, split) for split in ("in_small", "in_big")}
    alone = [Searcher(dirs[f"in_small-{part}"], cache_size=0) for part in ("small", "big")]
    moved = PAGES[MOVED]
    rng = random.Random(4)
    naive_wrong = 0
    for query in _queries(moved, rng) + _queries(PAGES[3], rng) + _queries(PAGES[100], rng):
        whole = union.search(query, size=30)
        for searcher in splits.values():
            _same_ranking(whole, searcher.search(query, size=30))
        # Each crawl's own statistics would rank otherwise: the small crawl's words are
        # rarer there, so its pages would rise above better ones of the big crawl.
        hits = [h for s in alone for h in s.search(query, size=30).results]
        naive = [h.link for h in sorted(hits, key=lambda h: -h.score)][: len(whole.results)]
        naive_wrong += naive != [h.link for h in whole.results]
    assert naive_wrong >= 5  # what the test would catch without corpus statistics


def test_past_its_budget_a_query_places_pages_by_estimate_within_the_bounds(
    dirs: dict[str, Path],
) -> None:
    specs = [IndexSpec(p, dirs[f"in_small-{p}"]) for p in ("small", "big")]
    cheap = Searcher(indexes=lambda: specs, cache_size=0, exact_budget=0)
    query = "the OR and OR of"  # every page: scores closer than the statistics differ
    exact = {h.link: h.score for h in Searcher(dirs["union"]).search(query, size=60).results}
    estimated = cheap.search(query, size=20).results
    assert sum(h.link in exact for h in estimated) >= 15
    for h in estimated:
        if h.link in exact:
            assert h.score == pytest.approx(exact[h.link], rel=0.1)


def test_pages_of_results_across_crawls_follow_one_order(dirs: dict[str, Path]) -> None:
    union = Searcher(dirs["union"], cache_size=0)
    two = _two(dirs, "in_small")
    query = "garden OR history"
    whole = union.search(query, size=30)
    pages = [two.search(query, page=p, size=10) for p in (1, 2, 3)]
    links = [h.link for r in pages for h in r.results]
    assert len(set(links)) == 30
    assert {h.link for h in whole.results} == set(links)
    assert [r.total for r in pages] == [whole.total] * 3
    assert {h.crawl for h in pages[0].results} <= {"small", "big"}


def test_crawl_narrows_to_one_and_an_unknown_one_is_refused(dirs: dict[str, Path]) -> None:
    two = _two(dirs, "in_small")
    query = distinctive_phrase(11, MOVED % 8, MOVED // 8, len(PAGES) // 8 + 1)
    assert [h.link for h in two.search(query).results][:1] == [PAGES[MOVED].url]
    assert two.search(query, crawl="big").results == []
    only = two.search(query, crawl="small").results
    assert [(h.link, h.crawl) for h in only][:1] == [(PAGES[MOVED].url, "small")]
    with pytest.raises(UnknownCrawlError):
        two.search(query, crawl="nope")
    assert two.crawls() == ["small", "big"]


def test_one_page_in_two_crawls_is_one_hit_showing_the_newest_fetch(tmp_path: Path) -> None:
    old = Page("https://news.example/a/", "Harbour report", "The harbour lights were red.")
    new = Page("https://news.example/a/", "Harbour report", "The harbour lights are green now.")
    copy = Page("https://mirror.example/a/", "Mirror", "Zephyrine quartz in the harbour.")
    same = Page("https://other.example/a/", "Quartz", "Zephyrine quartz in the harbour.")
    a = _crawl(tmp_path / "a", [old, copy], 0)  # fetched first
    b = _crawl(tmp_path / "b", [new], 5)  # the same URL fetched later
    c = tmp_path / "c"  # the same text (content hash 1) at another URL, fetched later
    write_pages(c, [same], first=1, later=60.0)
    index_all(c)
    c = c / "index"
    specs = [IndexSpec("a", a), IndexSpec("b", b), IndexSpec("c", c)]
    s = Searcher(indexes=lambda: specs, cache_size=0)
    lights = s.search("harbour lights")
    assert [(h.link, h.crawl) for h in lights.results] == [("https://news.example/a/", "b")]
    assert "green" in lights.results[0].snippet and lights.total == 1
    # The old copy alone matches "red": the newest copy that matches is shown.
    assert [h.crawl for h in s.search("harbour red").results] == ["a"]
    quartz = s.search("zephyrine quartz")
    assert len(quartz.results) == 1 and quartz.total == 1
    assert quartz.results[0].crawl == "c"
    harbour = s.search("harbour")
    assert len(harbour.results) == 2 == harbour.total


def test_a_typo_is_corrected_from_any_crawls_words(tmp_path: Path) -> None:
    a = _crawl(tmp_path / "a", [Page("https://a.example/", "Boats", "Sailing boats.")], 0)
    b = _crawl(tmp_path / "b", [Page("https://b.example/", "Birds", "A lighthouse keeper.")], 1)
    s = Searcher(indexes=lambda: [IndexSpec("a", a), IndexSpec("b", b)], cache_size=0)
    r = s.search("lighthuose")
    assert r.corrected == "lighthouse" and [h.link for h in r.results] == ["https://b.example/"]
    assert s.search("saling boats").corrected == "sailing boats"


def test_a_commit_in_any_crawl_empties_the_cache_and_crawls_come_and_go(tmp_path: Path) -> None:
    a = _crawl(tmp_path / "a", [Page("https://a.example/", "Tea", "Green tea leaves.")], 0)
    specs = [IndexSpec("a", a)]
    s = Searcher(indexes=lambda: list(specs), reload_interval=0.0)
    assert s.search("tea").total == 1 and s.search("tea").total == 1
    b = _crawl(tmp_path / "b", [Page("https://b.example/", "Tea", "Black tea.")], 1)
    specs.append(IndexSpec("b", b))  # a new crawl appears
    assert s.search("tea").total == 2
    write_pages(tmp_path / "b", [Page("https://b.example/2", "Tea", "More tea.")], first=2)
    index_all(tmp_path / "b")
    assert s.search("tea").total == 3
    specs.pop(0)  # a crawl deleted
    assert {h.crawl for h in s.search("tea").results} == {"b"}


def test_an_index_split_into_shards_ranks_as_the_whole(
    dirs: dict[str, Path], tmp_path: Path
) -> None:
    write_pages(tmp_path, PAGES)
    rebuild_index(tmp_path, shards=3)
    assert shard_count(tmp_path / "index") == 3
    split = Searcher(tmp_path / "index", cache_size=0, exact_budget=10_000)
    assert split.num_docs == len(PAGES)
    ranks_as_whole(dirs["union"], split, seed=9, pages=(11, 140))
    # A crawl keeps writing the split index; back to one piece with --shards 1.
    rebuild_index(tmp_path, shards=1)
    assert shard_count(tmp_path / "index") is None
    assert Searcher(tmp_path / "index").num_docs == len(PAGES)
