"""How each stage is built from the crawl's config: the composition root's parts.

``crawl.py`` decides which stages a process runs and connects them; the functions
here turn the typed config into each stage's arguments, and nothing else does.
"""

from __future__ import annotations

from trawl.archive.events import EventLog
from trawl.archive.textstore import TextStore
from trawl.archive.warc import WarcWriter
from trawl.clock import Clock
from trawl.config import CrawlConfig
from trawl.dedup.hostdups import HostDupTracker
from trawl.dedup.minhash import MinHasher
from trawl.fetch.address import AddressGuard
from trawl.fetch.dns import DnsCache
from trawl.fetch.http import HttpClient
from trawl.fetch.politeness import Politeness
from trawl.fetch.robots_cache import RobotsCache
from trawl.fetch.stage import Client, FetchPolicy, FetchStage
from trawl.fetch.tdm_cache import TdmCache
from trawl.frontier.admission import Admission
from trawl.frontier.revisit import Revisits
from trawl.parse.page import ParseOptions
from trawl.parse.stage import IndexNearCheck, KeepPolicy, ParseStage
from trawl.storage.base import CrawlStore
from trawl.storage.blobs import SegmentWriter

__all__ = ["fetch_stage", "http_client", "parse_options", "parse_stage", "revisits"]


def revisits(c: CrawlConfig, store: CrawlStore, clock: Clock) -> Revisits | None:
    if c.recrawl is None:
        return None
    return Revisits(
        frontier=store.frontier,
        clock=clock,
        counters=store.counters,
        initial=c.recrawl,
        minimum=c.recrawl_min,
        maximum=c.recrawl_max,
    )


def http_client(c: CrawlConfig, clock: Clock) -> tuple[HttpClient, DnsCache]:
    """The real HTTP client, behind the address guard through its DNS cache."""
    dns = DnsCache(
        guard=AddressGuard(c.allow_networks),
        clock=clock,
        overrides=c.resolve,
        min_ttl=c.dns_min_ttl,
        max_ttl=c.dns_max_ttl,
    )
    client = HttpClient(
        dns=dns,
        user_agent=c.user_agent,
        timeouts=c.timeouts,
        max_body_bytes=c.max_body_bytes,
        clock=clock,
        max_connections=max(64, c.max_in_flight * 2),
    )
    return client, dns


def fetch_stage(
    c: CrawlConfig,
    store: CrawlStore,
    clock: Clock,
    *,
    client: Client,
    admission: Admission,
    warc_log: SegmentWriter,
    revisits: Revisits | None,
) -> FetchStage:
    return FetchStage(
        client=client,
        robots=RobotsCache(
            store.robots, retry_base=c.robots_retry_base, retry_cap=c.robots_retry_max
        ),
        politeness=Politeness(
            delay=c.delay, max_crawl_delay=c.max_crawl_delay, max_backoff=c.max_backoff_delay
        ),
        frontier=store.frontier,
        admission=admission,
        warc=WarcWriter(warc_log, operator=c.contact),
        pages=store.pages,
        parse_queue=store.parse_queue,
        counters=store.counters,
        clock=clock,
        policy=FetchPolicy(
            agents=c.robots_agents,
            max_attempts=c.max_attempts,
            retry_base=c.retry_base,
            retry_max=c.retry_max,
            max_redirects=c.max_redirects,
            tdmrep=c.honour_ai_opt_outs,
        ),
        tdm=TdmCache(store.origin_files),
        revisits=revisits,
    )


def parse_stage(
    c: CrawlConfig,
    store: CrawlStore,
    clock: Clock,
    *,
    admission: Admission,
    texts: TextStore,
    events: EventLog,
    hasher: MinHasher | None,
    revisits: Revisits | None,
) -> ParseStage:
    near = None if hasher is None else IndexNearCheck(store.near_index(hasher))
    return ParseStage(
        frontier=store.frontier,
        admission=admission,
        pages=store.pages,
        parse_queue=store.parse_queue,
        texts=texts,
        counters=store.counters,
        clock=clock,
        events=events,
        policy=KeepPolicy(training=c.honour_ai_opt_outs, agents=c.robots_agents, quality=c.quality),
        near=near,
        host_dups=HostDupTracker(),
        revisits=revisits,
    )


def parse_options(c: CrawlConfig, hasher: MinHasher | None) -> ParseOptions:
    return ParseOptions(
        agents=c.robots_agents,
        follow_nofollow_links=c.follow_nofollow_links,
        strip_tracking=c.strip_tracking,
        quality=c.purpose == "training" or c.quality.active,
        near=hasher,
        max_links=c.max_links_per_page,
    )
