"""A crawl under tiny memory limits (``MemoryLimits``) does what it does under the
defaults: the bounds hold work back (pages), spill to disk (the index's pages, SQLite's
cache, the writer's heap) or keep less (the lexicon's rare words), never change an
outcome. The one that forgets evidence, the URLs equivalences are learned from, may
learn less, and the crawl still ends. The SQLite store and files in a data directory,
the real index, a fake client (pages in memory)."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from trawl.config import CrawlConfig
from trawl.crawl import Crawl
from trawl.index.layout import volume_dirs
from trawl.index.search import Searcher
from trawl.memory import MemoryLimits
from trawl.models import UrlStatus
from trawl.storage.open import open_reader
from trawl.testing.fakeclient import FakeClient, FakePage

WORDS = [
    "river",
    "mill",
    "miller",
    "records",
    "harbour",
    "lantern",
    "orchard",
    "meadow",
    "granite",
    "copper",
    "willow",
    "falcon",
    "thunder",
    "quarry",
    "beacon",
    "hollow",
    "summit",
    "tide",
    "ferry",
    "market",
]
HOSTS = ("alpha.example", "beta.example", "gamma.example")
PAGES = 40

TINY = MemoryLimits(
    pages=1,  # one page fetched at a time: nothing held when the next starts
    index_heap=15 << 20,  # tantivy's least
    index_mapped=1,  # the index's pages paged out whenever any were read
    db_cache=64 << 10,
    lexicon_words=20,
    index_volume=25,  # an index volume of 25 pages: some 5 of them
    index_batch=1,  # one page an index batch
    parse_tags=100_000,  # the default: the pages are small
    trim=0.01,
    frontier_hosts=1,  # one host in the schedule: the others wait on disk, parked
)


def _page(host: str, i: int, spellings: bool) -> FakePage:
    rng = random.Random(f"{host}{i}")
    text = " ".join(rng.choices(WORDS, k=400))
    links = " ".join(f'<a href="/{j}">{j}</a>' for j in (i + 1, (i * 7) % PAGES, i // 2))
    # Two spellings of some pages (a session parameter): equivalences to learn. (What
    # comes of a spelling depends on the order pages are fetched in, which the pages
    # held change: none for the outcomes compared.)
    extra = f'<a href="/{i + 1}?sid={i}">same</a>' if spellings and i % 3 == 0 else ""
    return FakePage.html(
        f"<html><head><title>{host} {i}</title></head><body><article><h1>{host} {i}</h1>"
        f"<p>{text}</p></article><nav>{links} {extra}</nav></body></html>"
    )


def _web(spellings: bool) -> dict[str, FakePage]:
    web: dict[str, FakePage] = {}
    for host in HOSTS:
        web[f"https://{host}/robots.txt"] = FakePage(
            b"User-agent: *\nAllow: /\n", 200, (("Content-Type", "text/plain"),)
        )
        for i in range(PAGES):
            web[f"https://{host}/{i}"] = _page(host, i, spellings)
            web[f"https://{host}/{i}?sid={i - 1}"] = _page(host, i, spellings)
    return web


def _crawl(
    data: Path, limits: MemoryLimits, *, spellings: bool = False
) -> tuple[str, list[tuple[str, str, str]], int]:
    """How the crawl stopped, each URL's state, and how often the index's pages were
    paged out."""
    config = CrawlConfig(
        data_dir=data,
        seeds=tuple(f"https://{h}/0" for h in HOSTS),
        delay=0.0,
        parse_workers=0,
        commit_interval=0.02,
        fsync=False,
        min_free_space=0,
        politeness_dir=None,
        memory=limits,
    )

    async def go() -> tuple[str, int]:
        crawl = Crawl(config, client=FakeClient(_web(spellings)))
        try:
            stopped = (await asyncio.wait_for(crawl.run(), 120)).stopped
        finally:
            crawl.close()
        assert crawl.page_bytes.held == 0  # every page held was given back
        assert crawl.indexing is not None
        return stopped, crawl.indexing.mapped.paged_out

    stopped, paged_out = asyncio.run(go())
    reader = open_reader(data)
    try:
        states = sorted((u, UrlStatus(s).name, str(r)) for u, s, r in reader.url_states())
    finally:
        reader.close()
    return stopped, states, paged_out


def _hits(index: Path) -> list[list[str]]:
    searcher = Searcher(index)
    try:
        return [
            sorted(h.link for h in searcher.search(q, size=50).results)
            for q in ("harbour lantern", "alpha", "granite 7", "beta 12")
        ]
    finally:
        searcher.close()


def test_tiny_limits_change_no_outcome(tmp_path: Path) -> None:
    stopped, states, _ = _crawl(tmp_path / "default", MemoryLimits())
    tiny_stopped, tiny_states, paged_out = _crawl(tmp_path / "tiny", TINY)
    assert stopped == tiny_stopped == "done"
    assert paged_out > 0
    assert tiny_states == states
    parsed = [u for u, s, _r in states if s == "PARSED"]
    assert len(parsed) >= len(HOSTS) * PAGES
    hits = _hits(tmp_path / "default" / "index")
    assert all(hits) and _hits(tmp_path / "tiny" / "index") == hits
    assert len(volume_dirs(tmp_path / "default" / "index")) == 1
    assert len(volume_dirs(tmp_path / "tiny" / "index")) >= 4


def test_equivalences_remembering_few_urls_learn_less_and_end(tmp_path: Path) -> None:
    _stopped, states, _ = _crawl(tmp_path / "default", MemoryLimits(), spellings=True)
    stopped, few, _ = _crawl(tmp_path / "few", MemoryLimits(equivalence_urls=3), spellings=True)
    assert stopped == "done"
    learned = [u for u, _s, r in states if "(param:sid)" in r]
    assert learned  # with the default memory: the session parameter is learned
    # Every page of the web is parsed under one spelling or the other all the same.
    pages = {u.split("?")[0] for u, s, _r in few if s == "PARSED"}
    assert pages == {u.split("?")[0] for u, s, _r in states if s == "PARSED"}
