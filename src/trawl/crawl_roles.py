"""A crawl process's fetch and parse roles, each built with what it uses from the config.

``Crawl`` (``crawl.py``) builds one or both from its store, logs and clock; each
function returns the role with the stage, logs and clients the crawl keeps for its
commits, its steering and its shutdown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from trawl import memory, wire
from trawl.archive.events import EventLog
from trawl.archive.links import LinkLog
from trawl.archive.textstore import TextStore
from trawl.clock import Clock
from trawl.config import CrawlConfig
from trawl.dedup.minhash import MinHasher
from trawl.fetch.dns import DnsCache
from trawl.fetch.hostgate import HostGate
from trawl.fetch.http import Client
from trawl.fetch.role import FetchRole
from trawl.fetch.stage import FetchStage, ParseTask
from trawl.frontier.admission import Admission
from trawl.frontier.revisit import Revisits
from trawl.parse.page import ParseOptions
from trawl.parse.role import ParseRole
from trawl.parse.stage import ParseStage
from trawl.space import DiskStop
from trawl.storage.base import CrawlStore, Frontier, HostLeases
from trawl.storage.blobs import EVENT_LOG, TEXT_LOG, WARC_LOG, BlobStore, LogWriters
from trawl.storage.gate import CommitGate
from trawl.telemetry import Telemetry

__all__ = ["FetchSide", "ParseSide", "RoleDeps", "fetch_side", "parse_side"]


@dataclass(frozen=True, slots=True)
class RoleDeps:
    """What both roles of a crawl process are built on, beside the config and store."""

    clock: Clock
    logs: LogWriters
    admission: Admission
    revisits: Revisits | None
    gate: CommitGate
    page_bytes: memory.PageBytes
    disk: DiskStop
    on_done: Callable[[], None]
    telemetry: Telemetry | None


@dataclass(frozen=True, slots=True)
class FetchSide:
    role: FetchRole
    stage: FetchStage
    client: Client
    dns: DnsCache | None  # the resolver this side opened (None: the client was given)
    host_gate: HostGate | None  # the host leases shared with other crawls, if any
    frontier: Frontier  # the frontier as the fetch path sees it (gated by those leases)


def fetch_side(
    c: CrawlConfig,
    store: CrawlStore,
    deps: RoleDeps,
    *,
    client: Client | None,
    leases: HostLeases | None,
    hand_off: Callable[[ParseTask], None] | None,
    fleet: bool,
) -> FetchSide:
    """The fetch role; ``hand_off``: the parse role's door when both run here;
    ``fleet``: other processes share the store (the role renews its session)."""
    clock, logs, admission, revisits = deps.clock, deps.logs, deps.admission, deps.revisits
    gate, page_bytes, disk, telemetry = deps.gate, deps.page_bytes, deps.disk, deps.telemetry
    warc_log = logs.open(WARC_LOG, c.warc_max_bytes)
    dns = None
    if client is None:
        client, dns = wire.http_client(c, clock, page_bytes)
    pacing = wire.pacing(c, admission.hosts)
    host_gate, frontier = wire.host_gate(
        c, store.frontier, store.counters, clock, leases=leases, politeness=pacing
    )
    stage = wire.fetch_stage(
        c,
        store,
        clock,
        client=client,
        admission=admission,
        warc_log=warc_log,
        revisits=revisits,
        frontier=frontier,
        gate=gate,
        politeness=pacing,
    )
    role = FetchRole(
        stage=stage,
        frontier=frontier,
        counters=store.counters,
        clock=clock,
        delay=c.delay,
        hand_off=hand_off,
        on_done=deps.on_done,
        on_error=disk.dealt_with,
        writable=disk.writable,
        on_fetched=None if telemetry is None else telemetry.fetch_done,
        fleet=store if fleet else None,
        page_bytes=page_bytes,
    )
    return FetchSide(role, stage, client, dns, host_gate, frontier)


@dataclass(frozen=True, slots=True)
class ParseSide:
    role: ParseRole
    stage: ParseStage
    options: ParseOptions
    texts: TextStore
    events: EventLog
    events_key: str  # the meta key of this writer's next event id
    links: LinkLog | None


def parse_side(
    c: CrawlConfig, store: CrawlStore, deps: RoleDeps, *, blobs: BlobStore, writer: str
) -> ParseSide:
    """The parse role, writing its texts, events and links as ``writer``."""
    clock, logs, admission, revisits = deps.clock, deps.logs, deps.admission, deps.revisits
    gate, page_bytes, disk, telemetry = deps.gate, deps.page_bytes, deps.disk, deps.telemetry
    text_log = logs.open(TEXT_LOG, c.text_max_bytes)
    events_log = logs.open(EVENT_LOG, 64 << 20)
    events_key = "events.next_id" + (f"@{writer}" if writer else "")
    events = EventLog(events_log, next_id=int(store.meta.get(events_key) or 1))
    texts = TextStore(text_log)
    links = wire.link_log(c, logs)
    hasher = MinHasher() if c.near_duplicates else None
    stage = wire.parse_stage(
        c,
        store,
        clock,
        admission=admission,
        texts=texts,
        events=events,
        hasher=hasher,
        revisits=revisits,
        gate=gate,
        links=links,
    )
    options = wire.parse_options(c, hasher)
    sitemaps = wire.sitemap_stage(c, store, clock, admission=admission, revisits=revisits)
    role = ParseRole(
        stage=stage,
        sitemaps=sitemaps,
        options=options,
        workers=c.parse_workers,
        read_warc=lambda location: blobs.read(WARC_LOG, location),
        max_body_bytes=c.max_body_bytes,
        counters=store.counters,
        on_done=deps.on_done,
        on_error=disk.dealt_with,
        writable=disk.writable,
        latency=None if telemetry is None else telemetry.parse_latency.observe,
        max_held_pages=max(64, 32 * max(1, c.parse_workers), 2 * c.max_in_flight),
        page_bytes=page_bytes,
    )
    return ParseSide(role, stage, options, texts, events, events_key, links)
