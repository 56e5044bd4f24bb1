"""A crawl for model training: AI robots tokens, noai, TDMRep, provenance, quality."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.integration.crawlkit import text_records, web_config
from tests.testweb import TestWeb
from trawl.config import QualityThresholds
from trawl.crawl import Crawl
from trawl.stats import url_states

HOSTS = ("ai.test", "ai-robots.test", "tdmrep.test", "robots-agents.test", "content.test")


def _crawl(tmp: Path, **changes: object) -> tuple[TestWeb, dict[str, tuple[str, str | None]]]:
    async def go() -> tuple[TestWeb, dict[str, tuple[str, str | None]]]:
        async with TestWeb() as web:
            seeds = [web.url(h) for h in HOSTS]
            crawl = Crawl(web_config(web, tmp, seeds, **changes))
            try:
                await crawl.run()
            finally:
                crawl.close()
            return web, url_states(tmp)

    return asyncio.run(go())


def test_training_crawl_honours_every_opt_out(tmp_path: Path) -> None:
    web, states = _crawl(tmp_path, purpose="training")
    agents = ("trawl", "GPTBot", "CCBot")
    expected = web.expected(
        [web.url(h) for h in HOSTS], user_agents=agents, max_depth=5, follow_nofollow_links=False
    )

    def state(host: str, path: str) -> tuple[str, str | None]:
        return states[web.url(host, path)]

    # robots.txt groups of AI crawlers apply with our own token: nothing fetched.
    assert web.log.count("ai-robots.test") == 1  # robots.txt only
    assert state("ai-robots.test", "/")[0] == "skipped"
    assert state("robots-agents.test", "/") == ("skipped", "robots")
    # Opt-outs: fetched (allowed), text not kept, reason recorded.
    assert state("ai.test", "/meta-noai") == ("parsed", "opted out: noai, noimageai")
    assert state("ai.test", "/header-noai") == ("parsed", "opted out: noai")
    assert state("ai.test", "/tdm-header")[1] == "opted out: tdm-reservation (header)"
    assert state("ai.test", "/tdm-meta")[1] == "opted out: tdm-reservation (meta)"
    assert state("tdmrep.test", "/reserved/1")[1] == "opted out: tdm-reservation (tdmrep.json)"
    assert state("tdmrep.test", "/free/1") == ("parsed", "stored")
    assert web.log.count("tdmrep.test", "/.well-known/tdmrep.json") == 1
    # An X-Robots-Tag for GPTBot applies to a training crawl.
    assert state("content.test", "/header-gptbot-noindex") == ("parsed", "noindex")
    opted = {u for u, (_s, r) in states.items() if (r or "").startswith("opted out")}
    assert opted == set(expected.opted_out)

    records = {r["final_url"]: r for r in text_records(tmp_path)}
    assert not opted & set(records)
    licensed = records[web.url("ai.test", "/license-link")]
    assert licensed["provenance"]["license"] == "https://creativecommons.org/licenses/by/4.0/"
    assert {
        u: r["provenance"]["license"] for u, r in records.items() if r["provenance"]["license"]
    } == dict(expected.licenses)
    for r in records.values():
        prov = r["provenance"]
        assert prov["robots"] == "allowed"
        assert prov["robots_agents"][:3] == ["trawl", "GPTBot", "ChatGPT-User"]
        assert prov["tdm_reserved"] is False
        assert r["cluster"]
        assert r["quality"]["words"] > 0


def test_search_crawl_keeps_ai_opted_out_text(tmp_path: Path) -> None:
    web, states = _crawl(tmp_path, purpose="search")
    assert states[web.url("ai.test", "/meta-noai")] == ("parsed", "stored")
    assert states[web.url("ai-robots.test", "/essay/1")] == ("parsed", "stored")
    assert web.log.count("tdmrep.test", "/.well-known/tdmrep.json") == 0


def test_quality_thresholds_drop_documents_with_the_reason(tmp_path: Path) -> None:
    _web, states = _crawl(tmp_path, quality=QualityThresholds(min_words=60))
    low = {u: r for u, (_s, r) in states.items() if (r or "").startswith("low quality")}
    assert low
    assert all(r == "low quality: words<60" for r in low.values())
    assert not set(low) & {r["final_url"] for r in text_records(tmp_path)}
