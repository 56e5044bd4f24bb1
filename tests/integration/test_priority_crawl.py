"""OPIC order on a real crawl: the pages many pages link to come before breadth-first
order could reach them (the rank web, served by aiohttp; its request log says when)."""

from __future__ import annotations

import asyncio
import ipaddress
from pathlib import Path

from trawl.config import CrawlConfig, Timeouts
from trawl.crawl import Crawl
from trawl.testing.rankweb import RankWeb, RankWebServer


def test_important_pages_are_fetched_before_breadth_first_order_reaches_them(
    tmp_path: Path,
) -> None:
    web = RankWeb(2, seed=3)
    bfs_before = web.before_important() * len(web.hosts)  # pages shallower than the guides

    async def go() -> tuple[list[str], set[str]]:
        async with RankWebServer(web) as srv:
            config = CrawlConfig(
                data_dir=tmp_path / "data",
                seeds=tuple(web.seeds(port=srv.port)),
                delay=0.0,
                allow_networks=(ipaddress.ip_network("127.0.0.0/8"),),
                resolve=srv.resolve_map(),
                parse_workers=0,
                timeouts=Timeouts(connect=1.0, first_byte=1.0, total=2.0),
                commit_interval=0.2,
                fsync=False,
                max_pages=bfs_before + 20,
            )
            assert config.priority == "opic"  # the default
            crawl = Crawl(config)
            try:
                await crawl.run()
            finally:
                crawl.close()
            fetched = [
                web.url(r.host, r.target, port=srv.port)
                for r in srv.log.records
                if r.target != "/robots.txt"
            ]
            return fetched, web.important(port=srv.port)

    fetched, guides = asyncio.run(go())
    early = set(fetched[:bfs_before]) & guides
    # Breadth-first order fetches all bfs_before pages first (the guides lie among the
    # 305 extras of each host after them); OPIC most of the guides within them.
    assert len(early) >= 0.9 * len(guides), (len(early), len(guides))
