"""Shared settings for crawling the test web in tests: fast, loopback only, small caps."""

from __future__ import annotations

import asyncio
import gzip
import ipaddress
import re
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

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
        robots_patience=1.0,  # robots-500.test's robots.txt never comes back
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


def portless(url: str) -> str:
    """``url`` without the server's port (which differs between runs)."""
    return re.sub(r":\d+/", "/", url, count=1)


def copies(web: SampleWeb, *, exact: bool = True) -> set[str]:
    """The pages (portless) of ``web`` that are, or have, a near copy (and an exact one,
    unless ``exact`` is False). Which copy is kept is a race in any crawl with more than
    one page in flight whose order depends on what was parsed first: a fleet, and one
    machine in OPIC order (each in-link found moves a URL up its host's queue)."""
    out: set[str] = set()
    for url, _body in web.pages():
        found = [web.near_duplicate_of(url)] + ([web.duplicate_of(url)] if exact else [])
        for original in found:
            if original is not None:
                out |= {portless(url), portless(original)}
    return out


def links_of_near_copies(web: SampleWeb) -> set[str]:
    """The URLs (portless) only pages of near-duplicate pairs link to: a near copy that
    is not kept has its links not followed (``copies``)."""
    pairs = copies(web, exact=False)
    only: set[str] = set()
    elsewhere: set[str] = set()
    for url, body in web.pages():
        links = {portless(urljoin(url, h.decode())) for h in re.findall(rb'href="([^"]+)"', body)}
        (only if portless(url) in pairs else elsewhere).update(links)
    return only - elsewhere


def assert_same_states(got: dict[str, str], reference: dict[str, str], web: SampleWeb) -> None:
    """URL -> status of two crawls of ``web`` agree, but for URLs only near copies link to."""
    mine = {portless(u): s for u, s in got.items()}
    theirs = {portless(u): s for u, s in reference.items()}
    differ = {u for u in mine.keys() | theirs.keys() if mine.get(u) != theirs.get(u)}
    unexplained = differ - links_of_near_copies(web)
    assert not unexplained, {u: (mine.get(u), theirs.get(u)) for u in sorted(unexplained)}


def assert_same_texts_and_events(
    got: tuple[list[dict[str, Any]], list[dict[str, Any]]],
    reference: tuple[list[dict[str, Any]], list[dict[str, Any]]],
    web: SampleWeb,
) -> None:
    """(text records, events) of two crawls of ``web``: each text once, the same texts
    and events, but for the pages of duplicate pairs (which copy is kept may differ)
    and those only near copies link to."""
    texts, events = got
    hashes = [t["content_hash"] for t in texts]
    assert len(hashes) == len(set(hashes)), "a text was stored twice"
    pairs = copies(web)

    pairs |= links_of_near_copies(web)

    def kept(records: list[dict[str, Any]], key: str) -> list[str]:
        return sorted(str(r[key]) for r in records if portless(str(r["url"])) not in pairs)

    assert kept(texts, "content_hash") == kept(reference[0], "content_hash")
    assert kept(events, "url") == kept(reference[1], "url")
