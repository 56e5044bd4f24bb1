"""What the live progress shows about a real crawl of the test web."""

from __future__ import annotations

from pathlib import Path

from tests.integration.crawlkit import web_config
from tests.testweb import TestWeb
from trawl.crawl import Crawl


async def test_the_first_snapshot_already_has_a_page_rate(tmp_path: Path) -> None:
    # The first progress line comes one interval (10 s off a terminal) after the
    # start: its rate must count the pages fetched since the start, not be 0.0.
    async with TestWeb() as web:
        crawl = Crawl(web_config(web, tmp_path / "data", [web.url("books.test")], max_pages=8))
        try:
            summary = await crawl.run()
        finally:
            crawl.close()
    s = summary.snapshot
    assert s.fetched == 8
    assert s.elapsed > 0
    assert s.pages_per_second > 0
    assert abs(s.pages_per_second - 8 / s.elapsed) < 0.5 * 8 / s.elapsed
