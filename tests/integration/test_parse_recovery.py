"""A page fetched and committed, whose parse never committed (kill -9 between the two
stages), is parsed on resume from its stored record with everything the fetch knew."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.integration.crawlkit import text_records, web_config
from tests.testweb import TestWeb
from trawl.crawl import Crawl
from trawl.jobs import OutcomeKind, ParseJob, ParseOutcome
from trawl.parse.page import ParsedPage
from trawl.stats import url_states


async def _fetch_only(crawl: Crawl) -> None:
    """Run the crawl with a parse stage that never acknowledges: what a kill -9 after
    the fetch's commit and before the parse's commit leaves behind."""

    async def never(seq: int, job: ParseJob, page: ParsedPage) -> ParseOutcome:
        return ParseOutcome(OutcomeKind.ERROR, "killed before the parse committed")

    crawl.parser.apply_async = never  # type: ignore[method-assign]
    await crawl.run()


def test_tdmrep_decision_survives_a_crash_between_fetch_and_parse(tmp_path: Path) -> None:
    async def go() -> tuple[TestWeb, dict[str, tuple[str, str | None]]]:
        async with TestWeb() as web:
            seeds = [web.url("tdmrep.test", "/reserved/1"), web.url("tdmrep.test", "/free/1")]
            config = web_config(web, tmp_path, seeds, purpose="training")
            first = Crawl(config)
            try:
                await _fetch_only(first)
                assert len(first.parse_queue) == 2  # fetched, stored, never parsed
            finally:
                first.close()
            second = Crawl(config)
            try:
                await second.run()
            finally:
                second.close()
            assert second.counters.get("recover:parsed") == 2
            return web, url_states(tmp_path)

    web, states = asyncio.run(go())
    assert web.log.count("tdmrep.test", "/.well-known/tdmrep.json") == 1
    reserved = states[web.url("tdmrep.test", "/reserved/1")]
    assert reserved == ("parsed", "opted out: tdm-reservation (tdmrep.json)")
    assert states[web.url("tdmrep.test", "/free/1")] == ("parsed", "stored")
    kept = {r["final_url"] for r in text_records(tmp_path)}
    assert web.url("tdmrep.test", "/reserved/1") not in kept
