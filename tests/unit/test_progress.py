"""The crawl summary: failures by reason, as text at a terminal and as a JSON log line."""

from __future__ import annotations

import asyncio
import io
import logging
from pathlib import Path

import orjson
import pytest

from trawl.config import CrawlConfig
from trawl.crawl import Crawl
from trawl.logs import setup_logging
from trawl.progress import LogReporter, ProgressReporter
from trawl.records import CrawlSummary
from trawl.storage.memory import MemoryBlobStore, MemoryCrawlStore
from trawl.testing.fakeclient import FakeClient, FakePage

SITE = "https://site.example"
PAGES = {
    f"{SITE}/": FakePage.html(
        '<a href="/a">a</a> <a href="/gone">gone</a> <a href="/lost">lost</a> '
        '<a href="/loop">loop</a> <a href="/down">down</a>'
    ),
    f"{SITE}/a": FakePage.html("<p>a page</p>"),
    f"{SITE}/loop": FakePage.redirect("/loop"),
    f"{SITE}/down": FakePage(b"", 500),
}


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> CrawlSummary:
    config = CrawlConfig(
        data_dir=tmp_path_factory.mktemp("data"),
        seeds=(f"{SITE}/",),
        delay=0.0,
        parse_workers=0,
        fsync=False,
        min_free_space=0,
        max_attempts=2,
        retry_base=0.01,  # real time: the retry of /down comes at once
    )

    async def go() -> CrawlSummary:
        client = FakeClient(PAGES)
        crawl = Crawl(config, store=MemoryCrawlStore(), blobs=MemoryBlobStore(), client=client)
        try:
            return await crawl.run()
        finally:
            crawl.close()

    return asyncio.run(go())


def test_failures_are_counted_by_reason(summary: CrawlSummary) -> None:
    failed = {k: v for k, v in summary.counters.items() if k.startswith("failed:")}
    # /gone and /lost 404 (robots.txt's 404 is not a URL of the crawl); /loop
    # redirects to itself; /down answers 500 twice (max_attempts 2) and gives up.
    assert failed == {"failed:http 404": 2, "failed:redirect loop": 1, "failed:http 500": 1}
    assert sum(failed.values()) == summary.snapshot.failed == 4


def test_the_text_summary_lists_failures_by_reason(summary: CrawlSummary) -> None:
    out = io.StringIO()
    ProgressReporter(out).finish(summary)
    text = out.getvalue()
    assert "crawl done" in text
    assert "failed by reason http 404 2, http 500 1, redirect loop 1" in text


def test_off_a_terminal_the_summary_is_one_json_line(summary: CrawlSummary) -> None:
    out = io.StringIO()
    setup_logging(out, json=True)
    try:
        reporter = LogReporter(interval=0.0)
        reporter.update(summary.snapshot)
        reporter.note("stopping: finishing in-flight work")
        reporter.finish(summary)
    finally:
        logging.getLogger("trawl").handlers.clear()
    lines = [orjson.loads(line) for line in out.getvalue().splitlines()]
    assert [r["message"] for r in lines] == [
        "progress",
        "stopping: finishing in-flight work",
        "crawl done",
    ]
    assert lines[0]["known"] == summary.snapshot.known
    end = lines[-1]
    assert end["stopped"] == "done" and end["failed"] == 4
    assert end["failed_by_reason"] == {"http 404": 2, "http 500": 1, "redirect loop": 1}


def test_reporters_are_interchangeable(tmp_path: Path) -> None:
    from trawl.cli._run import reporter_for

    with open(tmp_path / "err", "w") as stream:
        assert isinstance(reporter_for(stream, interval=None), LogReporter)
    logging.getLogger("trawl").handlers.clear()
