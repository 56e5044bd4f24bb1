"""The parse stage admitting a page's links: in chunks, with the event loop's turn
between them, and the page acknowledged only in a commit that holds every link."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from trawl.config import CrawlConfig
from trawl.crawl import Crawl
from trawl.export_links import export_links
from trawl.jobs import ParseJob
from trawl.models import Location, UrlStatus
from trawl.parse.page import ParsedPage
from trawl.parse.stage import ParseStage

HOST = "a.test"
PAGE = f"http://{HOST}/"


def _crawl(data: Path) -> Crawl:
    return Crawl(CrawlConfig(data_dir=data, seeds=(PAGE,), parse_workers=0, near_duplicates=False))


def _stage(crawl: Crawl, chunk: int) -> ParseStage:
    return ParseStage(
        frontier=crawl.frontier,
        admission=crawl.admission,
        pages=crawl.pages,
        parse_queue=crawl.parse_queue,
        texts=crawl.texts,
        counters=crawl.counters,
        clock=crawl.clock,
        links=crawl.links,
        chunk=chunk,
    )


def _page(crawl: Crawl, n: int) -> tuple[int, ParseJob, ParsedPage]:
    crawl.add_seeds([PAGE])
    lease = crawl.frontier.take(crawl.clock.now())
    assert lease is not None
    job = ParseJob(
        host=HOST,
        fp=lease.fp,
        url=PAGE,
        final_url=PAGE,
        depth=0,
        fetched_at=0.0,
        status=200,
        headers=(),
        content_type=None,
        warc=Location("trawl-00001.warc.gz", 0, 0),
    )
    seq = crawl.parse_queue.put(job)
    crawl.frontier.finish(lease, UrlStatus.FETCHED, host_ready_at=0.0)
    links = tuple(f"http://{HOST}/p/{i}" for i in range(n))
    page = ParsedPage(url=PAGE, text="", links=links, links_over_cap=7, tags_over_cap=30)
    return seq, job, page


def _known(crawl: Crawl) -> int:
    return sum(crawl.frontier.counts().values())


async def test_links_are_admitted_in_chunks_with_the_loop_running_between(
    tmp_path: Path,
) -> None:
    crawl = _crawl(tmp_path / "data")
    try:
        stage = _stage(crawl, chunk=100)
        seq, job, page = _page(crawl, 1000)
        turns: list[int] = []  # links known at each turn another task got

        async def other_work() -> None:
            while True:
                turns.append(_known(crawl))
                await asyncio.sleep(0)

        other = asyncio.create_task(other_work())
        await asyncio.sleep(0)
        outcome = await stage.apply_async(seq, job, page)
        other.cancel()
        assert str(outcome) == "no text"
        # Ten chunks: other work ran between them, watching the frontier fill up.
        between = [n for n in turns if 1 < n < 1001]
        assert len(set(between)) >= 9
        assert _known(crawl) == 1001
        assert crawl.counters.get("dropped:over per-page cap") == 7
        assert crawl.counters.get("parse:tags over cap") == 1  # one page cut
        assert len(crawl.parse_queue) == 0
    finally:
        crawl.close()


async def test_a_commit_between_chunks_then_a_crash_loses_no_link(tmp_path: Path) -> None:
    data = tmp_path / "data"
    crawl = _crawl(data)
    seq, job, page = _page(crawl, 1000)
    crawl.commit(indexing=False)
    stage = _stage(crawl, chunk=100)
    committed: list[tuple[int, int]] = []  # (links known, pages unacknowledged) per commit
    half_way = asyncio.Event()

    async def group_commits() -> None:
        while True:
            crawl.commit(indexing=False)
            committed.append((_known(crawl), len(crawl.parse_queue)))
            if committed[-1][0] > 500:
                half_way.set()
            await asyncio.sleep(0)

    committer = asyncio.create_task(group_commits())
    await asyncio.sleep(0)
    task = asyncio.create_task(stage.apply_async(seq, job, page))
    await half_way.wait()
    committer.cancel()
    task.cancel()  # killed half way: links committed so far, the page not acknowledged
    await asyncio.gather(task, return_exceptions=True)
    assert all(waiting == 1 for known, waiting in committed if known < 1001)
    crawl.store.close(commit=False)  # as kill -9 would leave it
    assert crawl.links is not None
    crawl.links.flush()  # even written out, the page's links were never committed
    crawl.logs.close()
    assert crawl.indexing is not None
    crawl.indexing.close()
    # The link graph holds the page's links only with its acknowledgement.
    assert export_links(data, tmp_path / "before").links == 0

    again = _crawl(data)
    try:
        known_before = _known(again)
        assert 1 < known_before < 1001
        ((seq2, job2),) = again.parse_queue.pending()
        outcome = again.parser.apply(seq2, job2, page)
        assert str(outcome) == "no text"
        assert _known(again) == 1001
        assert again.counters.get("links:seen") >= known_before - 1
        assert len(again.parse_queue) == 0
    finally:
        again.close()
    graph = export_links(data, tmp_path / "after")  # parsed twice, its links once
    assert (graph.pages, graph.links) == (1, 1000)


def test_max_per_host_zero_is_no_limit(tmp_path: Path) -> None:
    seeds = [f"http://{HOST}/{i}" for i in range(5)]
    for limit, admitted in ((2, 2), (0, 5)):
        config = CrawlConfig(data_dir=tmp_path / str(limit), max_per_host=limit, parse_workers=0)
        crawl = Crawl(config)
        try:
            assert crawl.add_seeds(seeds) == admitted
        finally:
            crawl.close()


async def test_a_cut_page_is_counted_whatever_becomes_of_it(tmp_path: Path) -> None:
    crawl = _crawl(tmp_path / "data")
    try:
        stage = _stage(crawl, chunk=100)
        seq, job, page = _page(crawl, 3)
        nofollow = dataclasses.replace(page, directives=frozenset({"nofollow"}))  # no links
        await stage.apply_async(seq, job, nofollow)
        assert crawl.counters.get("parse:tags over cap") == 1
        assert _known(crawl) == 1  # the seed only
    finally:
        crawl.close()
