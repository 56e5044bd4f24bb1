"""How each stage is built from the crawl's config: the composition root's parts.

``crawl.py`` decides which stages a process runs and connects them; the functions
here turn the typed config into each stage's arguments, and nothing else does.
"""

from __future__ import annotations

from collections.abc import Callable

from trawl.archive.events import EventLog
from trawl.archive.links import LinkLog
from trawl.archive.textstore import TextStore
from trawl.archive.warc import WarcWriter
from trawl.clock import Clock
from trawl.config import CrawlConfig
from trawl.dedup.hostdups import HostDupTracker
from trawl.dedup.minhash import MinHasher
from trawl.dedup.urlrules import Thresholds
from trawl.errors import DiskFullError
from trawl.fetch.address import AddressGuard
from trawl.fetch.dns import DnsCache
from trawl.fetch.hostgate import GatedFrontier, HostGate
from trawl.fetch.http import Client, HttpClient
from trawl.fetch.outcomes import FetchPolicy
from trawl.fetch.politeness import Politeness
from trawl.fetch.render.browser import find_browser, require_playwright
from trawl.fetch.render.gate import GateRules, RenderGate
from trawl.fetch.render.hints import RenderHints
from trawl.fetch.render.pool import BrowserPool
from trawl.fetch.render.step import RenderStep
from trawl.fetch.robots_cache import RobotsCache
from trawl.fetch.robots_wait import RobotsWaits
from trawl.fetch.sitemaps import SitemapFetch
from trawl.fetch.stage import FetchStage
from trawl.fetch.tdm_cache import TdmCache
from trawl.frontier.admission import Admission, CounterSink
from trawl.frontier.equivalences import Equivalences
from trawl.frontier.priority import HostQuality, Ranker
from trawl.frontier.revisit import Revisits
from trawl.frontier.shape import HostRules, UrlPatterns
from trawl.frontier.sitemaps import SitemapLedger
from trawl.frontier.traps import ScopeFilter, TrapLimits
from trawl.index.crawling import CrawlIndexing
from trawl.memory import PageBytes
from trawl.parse.page import ParseOptions
from trawl.parse.sitemap_stage import SitemapStage
from trawl.parse.stage import IndexNearCheck, KeepPolicy, ParseStage
from trawl.storage.base import CrawlStore, Frontier, HostLeases
from trawl.storage.blobs import LINK_LOG, BlobStore, LogWriters, SegmentWriter
from trawl.storage.gate import CommitGate
from trawl.storage.open import open_blobs, open_host_leases, open_store

__all__ = [
    "admission",
    "equivalences",
    "fetch_stage",
    "host_gate",
    "http_client",
    "indexing",
    "link_log",
    "open_storage",
    "pacing",
    "parse_options",
    "parse_stage",
    "ranker",
    "render_step",
    "revisits",
    "sitemap_stage",
]

# A process that shares its crawl with others (a fleet's worker, one role of two)
# reads each host's learned equivalences again after this many seconds.
SHARED_RULES_REFRESH = 10.0


def equivalences(
    c: CrawlConfig, store: CrawlStore, clock: Clock, *, shared: bool
) -> Equivalences | None:
    if not c.equivalences:
        return None
    return Equivalences(
        store=store.url_rules,
        pages=store.pages,
        counters=store.counters,
        clock=clock,
        thresholds=Thresholds(pages=c.equivalence_pages, values=c.equivalence_values),
        refresh=SHARED_RULES_REFRESH if shared else None,
        memory=c.memory.equivalence_urls,
    )


def open_storage(
    c: CrawlConfig, *, store: CrawlStore | None, blobs: BlobStore | None
) -> tuple[BlobStore, CrawlStore]:
    """The crawl's logs and state: those given, else the data directory's files and
    SQLite store; the blobs first, so a store open is the last thing that can fail."""
    if blobs is None:
        blobs = open_blobs(c.data_dir, fsync=c.fsync)
    if store is None:
        store = open_store(
            c.data_dir,
            max_per_host=c.max_per_host or None,
            lease_seconds=c.lease_seconds,
            cache_bytes=c.memory.db_cache,
            frontier_hosts=c.memory.frontier_hosts,
        )
    return blobs, store


def indexing(
    c: CrawlConfig,
    store: CrawlStore,
    blobs: BlobStore,
    on_disk_full: Callable[[DiskFullError], None],
) -> CrawlIndexing:
    """The index role's hook on the crawl's commits (the index in ``<data>/index``)."""
    counters = store.counters
    return CrawlIndexing(
        pages=store.pages,
        blobs=blobs,
        index_dir=c.data_dir / "index",
        counters=counters,
        # Pages stored so far (by whichever process parses) decide when a batch is due.
        stored=lambda: counters.get("parse:stored"),
        on_disk_full=on_disk_full,
        limits=c.memory,
    )


def admission(
    c: CrawlConfig, store: CrawlStore, scope: ScopeFilter, *, clock: Clock, shared: bool
) -> Admission:
    """The gate of every URL: tracking parameters, scope, the host's learned
    equivalences, blocked hosts, patterns, traps, sitemap bounds."""
    return Admission(
        frontier=store.frontier,
        scope=scope,
        limits=TrapLimits.from_config(c),
        counters=store.counters,
        ranker=ranker(c),
        strip_tracking=c.strip_tracking,
        patterns=UrlPatterns(include=c.include, exclude=c.exclude),
        hosts=HostRules(c.hosts),
        sitemaps=SitemapLedger(store.origin_files, cap=c.max_sitemaps_per_host),
        equivalences=equivalences(c, store, clock, shared=shared),
        defer=c.defer_spellings,
    )


def link_log(c: CrawlConfig, logs: LogWriters) -> LinkLog | None:
    """The link graph's writer, when the crawl keeps one (its log opened in ``logs``)."""
    return LinkLog(logs.open(LINK_LOG, c.text_max_bytes)) if c.link_graph else None


def ranker(c: CrawlConfig) -> Ranker:
    """The crawl's order, with a host quality tracker the stages feed (OPIC order)."""
    return Ranker(c.priority, quality=HostQuality() if c.priority == "opic" else None)


def revisits(c: CrawlConfig, store: CrawlStore, clock: Clock, ranker: Ranker) -> Revisits | None:
    if c.recrawl is None:
        return None
    return Revisits(
        frontier=store.frontier,
        clock=clock,
        counters=store.counters,
        initial=c.recrawl,
        minimum=c.recrawl_min,
        maximum=c.recrawl_max,
        ranker=ranker,
    )


def http_client(
    c: CrawlConfig, clock: Clock, page_bytes: PageBytes | None = None
) -> tuple[HttpClient, DnsCache]:
    """The real HTTP client, behind the address guard through its DNS cache;
    ``page_bytes`` counts the bodies it is reading."""
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
        max_idle=c.memory.idle_connections,
        page_bytes=page_bytes,
    )
    return client, dns


def host_gate(
    c: CrawlConfig,
    frontier: Frontier,
    counters: CounterSink,
    clock: Clock,
    *,
    leases: HostLeases | None,
    politeness: Politeness | None = None,
) -> tuple[HostGate | None, Frontier]:
    """The shared host leases the fetch path consults (those given, else the file in
    ``politeness_dir``; none when that is None), and the frontier as the fetch path
    sees it. ``politeness``: the fetch stage's pacing (a dead holder's lease is taken
    over only a fetch's timeout and a host's delay after)."""
    opened = leases is None and c.politeness_dir is not None
    if leases is None and c.politeness_dir is not None:
        leases = open_host_leases(c.politeness_dir, now=clock.now())
    if leases is None:
        return None, frontier
    # As long as a URL's lease: a fetch, with robots.txt's redirects, ends well within.
    ttl = c.lease_seconds
    gap_of = None
    if politeness is not None:
        # A dead holder's last request may still reach the server after its death (in
        # a socket's buffer, a busy server's queue) and run there as long as a fetch
        # may: the fleet drill saw one start after the takeover. Its host waits that
        # long, then this crawl's delay.
        pace, longest = politeness, c.timeouts.total
        gap_of = lambda host: longest + pace.delay(host)  # noqa: E731
    gate = HostGate(leases, ttl=ttl, counters=counters, owned=opened, gap_of=gap_of)
    return gate, GatedFrontier(frontier, gate, clock)


def pacing(c: CrawlConfig, hosts: HostRules) -> Politeness:
    """Per-host pacing: the crawl's delay, a host's override, its Crawl-delay, back-off."""
    return Politeness(
        delay=c.delay,
        max_crawl_delay=c.max_crawl_delay,
        max_backoff=c.max_backoff_delay,
        overrides=hosts.delay,
    )


def fetch_stage(
    c: CrawlConfig,
    store: CrawlStore,
    clock: Clock,
    *,
    client: Client,
    admission: Admission,
    warc_log: SegmentWriter,
    revisits: Revisits | None,
    frontier: Frontier | None = None,
    gate: CommitGate | None = None,
    politeness: Politeness | None = None,
) -> FetchStage:
    hosts = admission.hosts  # one set of overrides: a steered change reaches both
    # The fetch path's frontier (gated by the shared host leases): a lease it took ends
    # through it, sitemap files' leases too, so the host's shared lease is released.
    frontier = store.frontier if frontier is None else frontier
    sitemaps = SitemapFetch(
        admission=admission,
        frontier=frontier,
        counters=store.counters,
        clock=clock,
        max_redirects=c.max_redirects,
        max_files=c.max_sitemaps_per_host,
    )
    robots = RobotsCache(
        store.robots,
        max_bytes=c.memory.robots,
        retry_base=c.robots_retry_base,
        retry_cap=c.robots_retry_max,
    )
    if politeness is None:
        politeness = pacing(c, hosts)
    return FetchStage(
        client=client,
        robots=robots,
        politeness=politeness,
        frontier=frontier,
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
        robots_waits=RobotsWaits(patience=c.robots_patience),
        gate=gate,
        render=render_step(
            c,
            store,
            clock,
            client=client,
            robots=robots,
            politeness=politeness,
            frontier=frontier,
        ),
        sitemaps=sitemaps if c.sitemaps else None,
        hosts=hosts,
    )


def render_step(
    c: CrawlConfig,
    store: CrawlStore,
    clock: Clock,
    *,
    client: Client,
    robots: RobotsCache,
    politeness: Politeness,
    frontier: Frontier | None = None,
) -> RenderStep | None:
    """The render step, sharing the fetch stage's client, robots.txt and pacing
    (None when the crawl never renders). No browser starts before the first render."""
    if c.render == "never":
        return None
    require_playwright()
    others = ScopeFilter("allowlist", allowed=c.render_hosts) if c.render_hosts else None
    gate = RenderGate(
        client=client,
        robots=robots,
        politeness=politeness,
        # As the fetch path sees it: a held host is held across crawls too.
        frontier=store.frontier if frontier is None else frontier,
        guard=AddressGuard(c.allow_networks),
        counters=store.counters,
        clock=clock,
        rules=GateRules(
            agents=c.robots_agents,
            other_hosts=others,
            max_body_bytes=c.max_body_bytes,
        ),
    )
    pool = BrowserPool(
        executable=find_browser(c.render_browser),
        pages=c.render_pages,
        memory_cap=c.render_memory,
        user_agent=c.user_agent,
        close_grace=min(5.0, c.render_deadline),
        counters=store.counters,
    )
    return RenderStep(
        mode=c.render,
        pool=pool,
        gate=gate,
        hints=RenderHints(store.origin_files),
        clock=clock,
        counters=store.counters,
        deadline=c.render_deadline,
        scrolls=c.render_scrolls,
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
    links: LinkLog | None,
    gate: CommitGate | None = None,
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
        host_dups=HostDupTracker(priority_step=admission.ranker.demotion_step),
        revisits=revisits,
        links=links,
        gate=gate,
    )


def sitemap_stage(
    c: CrawlConfig,
    store: CrawlStore,
    clock: Clock,
    *,
    admission: Admission,
    revisits: Revisits | None,
) -> SitemapStage:
    return SitemapStage(
        frontier=store.frontier,
        admission=admission,
        pages=store.pages,
        parse_queue=store.parse_queue,
        counters=store.counters,
        clock=clock,
        revisits=revisits,
        strip_tracking=c.strip_tracking,
    )


def parse_options(c: CrawlConfig, hasher: MinHasher | None) -> ParseOptions:
    return ParseOptions(
        agents=c.robots_agents,
        follow_nofollow_links=c.follow_nofollow_links,
        strip_tracking=c.strip_tracking,
        quality=c.purpose == "training" or c.quality.active,
        near=hasher,
        max_links=c.max_links_per_page,
        max_tags=c.memory.parse_tags,
        link_graph=c.link_graph,
    )
