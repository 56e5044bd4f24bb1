"""The hostile test web crawled by a fleet: three workers over one real redis-server,
writing their logs into one shared directory, checked by the same oracle tests as the
one-machine crawl (``test_crawl_testweb``), imported here to run on this fixture.

Each worker is a ``Crawl`` with its own Redis session and writer id, all three running
at once in one event loop (the processes of ``trawl worker``, without the processes):
robots, redirects, errors, retries, caps, bombs, charsets, traps, exact and near
duplicates, sitemaps and politeness must come out as they do on one machine.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from tests.integration.crawlkit import web_config
from tests.integration.test_crawl_testweb import (  # noqa: F401  (collected here too)
    Result,
    test_bodies,
    test_bombs_in_br_and_zstd_stop_at_the_cap,
    test_br_and_zstd_pages_are_decoded_stored_and_followed,
    test_crawl_delay_is_honoured,
    test_crawl_ends_with_nothing_left,
    test_duplicates_canonical_and_robots_directives,
    test_errors_retries_and_timeouts,
    test_every_expected_url_is_reached_and_nothing_else,
    test_every_hostile_sitemap_is_recorded_with_its_reason,
    test_every_sitemap_file_ends_as_the_oracle_says,
    test_every_sitemap_only_page_is_fetched,
    test_lying_charsets_give_the_real_english_text,
    test_near_duplicates_keep_one_document_per_family,
    test_never_requested_urls_were_never_requested,
    test_one_request_at_a_time_per_host_with_the_delay_between,
    test_redirects,
    test_refused_and_binary_bodies_end_with_their_reason_and_no_text,
    test_refused_codings_are_kept_in_the_warc_as_received,
    test_retry_after_is_honoured,
    test_robots_variants,
    test_text_records_once_each,
    test_the_link_graph_holds_the_links_of_every_page_followed,
    test_the_oracle_names_every_body_that_is_no_document,
    test_traps_are_bounded_and_counted,
    test_warc_files_are_valid,
)
from tests.redis_servers import RedisServer
from tests.testweb import TestWeb
from trawl.crawl import Crawl
from trawl.roles import Role
from trawl.service.fleet_events import FleetEventTail
from trawl.stats import url_states
from trawl.storage.local import LocalBlobStore
from trawl.storage.place import CrawlPlace
from trawl.storage.redis.store import RedisCrawlStore

WORKERS = 3


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory, redis_server: RedisServer) -> Result:
    data = tmp_path_factory.mktemp("fleet")
    crawl_id = uuid.uuid4().hex[:12]

    async def go() -> Result:
        web = TestWeb(
            header_delay=3.0,
            retry_after=1,
            ratelimit_retry_after=1,
            robots_503_count=2,
            big_body_bytes=3 * 1024 * 1024,
            bomb_bytes=200 * 1024 * 1024,
        )
        await web.start()
        seeds = [web.url(h) for h in web.hosts]
        config = web_config(web, data, seeds)
        crawls = [
            Crawl(
                config,
                store=RedisCrawlStore(
                    redis_server.url,
                    crawl_id,
                    worker=f"w{i}",
                    max_per_host=config.max_per_host,
                    lease_seconds=config.timeouts.total * 2 + 60,
                ),
                blobs=LocalBlobStore(data),
                roles={Role.FETCH, Role.PARSE},
                writer=f"w{i}",
            )
            for i in range(WORKERS)
        ]
        try:
            summaries = await asyncio.gather(*(c.run() for c in crawls))
        finally:
            for c in crawls:
                c.close()
        expected = web.expected(seeds, follow_nofollow_links=False, max_depth=5)
        await web.stop()
        place = CrawlPlace(redis=redis_server.url, crawl=crawl_id, blobs=str(data))
        states = url_states(place)
        return Result(web, summaries[-1], expected, states, data, place=place)

    return asyncio.run(go())


def test_every_worker_took_part(crawled: Result) -> None:
    assert crawled.place is not None
    events = FleetEventTail(crawled.place, {}).read(limit=10**6)
    assert {e["writer"] for e in events} == {f"w{i}" for i in range(WORKERS)}
    pages = {u: v for u, v in crawled.states.items() if "#sitemap" not in u}
    parsed = {u for u, (status, _r) in pages.items() if status == "parsed"}
    parsed -= {u for u, (_s, r) in pages.items() if r == "not modified"}
    assert sorted(e["final_url"] for e in events) == sorted(parsed)  # each page once


def test_hosts_split_between_workers_yet_one_request_at_a_time(crawled: Result) -> None:
    test_one_request_at_a_time_per_host_with_the_delay_between(crawled)
    writers = {f.name.split("-")[1] for f in (crawled.data / "warc").glob("*.warc.gz")}
    assert writers == {f"w{i}" for i in range(WORKERS)}
