"""Shared settings for crawling the test web in tests: fast, loopback only, small caps."""

from __future__ import annotations

import asyncio
import gzip
import ipaddress
from pathlib import Path
from typing import Any

import orjson

from tests.testweb import TestWeb
from trawl.config import CrawlConfig, Timeouts
from trawl.crawl import Crawl
from trawl.testing.sampleweb import SampleWeb, SampleWebServer

DELAY = 0.05


def web_config(web: TestWeb, data: Path, seeds: list[str], **changes: Any) -> CrawlConfig:
    """A crawl of ``web`` that opts in to loopback, as a user would, with short waits."""
    base = CrawlConfig(
        data_dir=data,
        seeds=tuple(seeds),
        delay=DELAY,
        allow_networks=(ipaddress.ip_network("127.0.0.0/8"),),
        resolve=web.resolve_map(),
        parse_workers=0,
        timeouts=Timeouts(connect=1.0, first_byte=1.0, total=2.0),
        commit_interval=0.2,
        max_depth=5,
        max_per_host=150,
        max_backoff_delay=1.0,
        retry_base=0.2,
        retry_max=1.0,
        robots_retry_base=0.3,
        robots_retry_max=1.0,
        max_body_bytes=2 * 1024 * 1024,
        fsync=False,
    )
    return base.with_changes(**changes)


def text_records(data: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for f in sorted((data / "text").glob("*.jsonl.gz")):
        out += [orjson.loads(line) for line in gzip.decompress(f.read_bytes()).splitlines()]
    return out


def crawl_sample_web(web: SampleWeb, data: Path, hosts: list[str]) -> int:
    """Crawl ``hosts`` of ``web`` into ``data`` to the end (the crawl indexes as it
    goes); returns the port the sample web was served on."""

    async def go() -> int:
        async with SampleWebServer(web) as srv:
            config = CrawlConfig(
                data_dir=data,
                seeds=tuple(srv.url(h) for h in hosts),
                delay=0.02,
                allow_networks=(ipaddress.ip_network("127.0.0.0/8"),),
                resolve=srv.resolve_map(),
                scope="allowlist",
                allowed_hosts=tuple(hosts),
                parse_workers=0,
                timeouts=Timeouts(connect=1.0, first_byte=1.0, total=2.0),
                commit_interval=0.2,
                fsync=False,
            )
            crawl = Crawl(config)
            try:
                await crawl.run()
            finally:
                crawl.close()
            return srv.port

    return asyncio.run(go())
