"""Search over a real crawl: the index follows the crawl, and finds what it stored.

One crawl of a small sample web (module scope); then relevance: each article's
distinctive phrase (three rare words found in that article only) brings that article
first, and so does the same query with a typo in it, which the answer names.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.crawlkit import crawl_sample_web
from trawl.index import Searcher
from trawl.storage.open import open_reader
from trawl.testing.sampleweb import SampleWeb


@dataclass
class Crawled:
    web: SampleWeb
    data: Path
    port: int
    urls: set[str]  # the URLs whose text was stored


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Crawled:
    data = tmp_path_factory.mktemp("search-crawl")
    # Host index 1 has Crawl-delay 2: three hosts of the other kinds keep it short.
    web = SampleWeb(hosts=4, pages_per_host=25, seed=5)
    hosts = [h for i, h in enumerate(web.hosts) if i != 1]

    port = crawl_sample_web(web, data, hosts)
    reader = open_reader(data)
    try:
        urls = {p.url for p in reader.pages()}
    finally:
        reader.close()
    return Crawled(web, data, port, urls)


def _articles(c: Crawled) -> list[str]:
    out = []
    for url in sorted(c.urls):
        try:
            c.web.distinctive_phrase(url)
        except KeyError:
            continue
        if c.web.duplicate_of(url) is None and c.web.near_duplicate_of(url) is None:
            out.append(url)
    return out


def _is(c: Crawled, got: str, url: str) -> bool:
    """``got`` is ``url``, or a near-duplicate copy of it (same text, other furniture;
    until near-duplicates are dropped at parse time, both may be stored)."""
    return got == url or c.web.near_duplicate_of(got) == url


def _typo(phrase: str, rng: random.Random) -> tuple[str, str]:
    """The phrase with one letter of its longest word changed, and that word."""
    words = phrase.split()
    longest = max(range(len(words)), key=lambda i: len(words[i]))
    word = words[longest]
    i = rng.randrange(1, len(word) - 1)
    letter = "x" if word[i] != "x" else "z"
    words[longest] = word[:i] + letter + word[i + 1 :]
    return " ".join(words), word


def test_every_stored_page_is_indexed_once(crawled: Crawled) -> None:
    with Searcher(crawled.data / "index") as s:
        assert s.num_docs == len(crawled.urls) > 30
    reader = open_reader(crawled.data)
    try:
        assert [p.url for p in reader.pages() if not p.indexed] == []
    finally:
        reader.close()


def test_a_distinctive_phrase_brings_its_page_first(crawled: Crawled) -> None:
    articles = _articles(crawled)
    assert len(articles) >= 20
    with Searcher(crawled.data / "index") as s:
        for url in articles:
            phrase = crawled.web.distinctive_phrase(url)
            words = s.search(phrase)
            assert words.results, phrase
            assert _is(crawled, words.results[0].link, url), (phrase, words.results)
            assert words.corrected is None
            quoted = s.search(f'"{phrase}"')
            assert _is(crawled, quoted.results[0].link, url)
            assert "<mark>" in quoted.results[0].snippet


def test_the_same_query_with_a_typo_still_finds_it(crawled: Crawled) -> None:
    rng = random.Random(2)
    with Searcher(crawled.data / "index") as s:
        for url in _articles(crawled):
            phrase = crawled.web.distinctive_phrase(url)
            typo, word = _typo(phrase, rng)
            r = s.search(typo)
            assert r.results and _is(crawled, r.results[0].link, url), (typo, r.results)
            assert r.corrected is not None and word in r.corrected.split(), (typo, r.corrected)


def test_site_and_paging(crawled: Crawled) -> None:
    host = next(iter(sorted(crawled.urls))).split("/")[2].split(":")[0]
    with Searcher(crawled.data / "index") as s:
        first = s.search(f"site:{host}", size=5)
        assert first.total == sum(1 for u in crawled.urls if f"//{host}:" in u)
        assert all(h.host.split(":")[0] == host for h in first.results)
        second = s.search(f"site:{host}", page=2, size=5)
        assert not {h.link for h in first.results} & {h.link for h in second.results}
