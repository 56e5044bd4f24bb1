"""The fetch stage: one lease in, its outcome recorded. Robots, pacing, HTTP, WARC.

For each URL handed out by the frontier: make sure the origin's robots.txt is known
(fetching it uses the host's turn), check the rules for every product token of the
crawl, fetch with the client (no redirects followed: a redirect target goes back
through admission, so each hop is checked against scope, traps, robots and the seen
set), store the response as WARC, and queue an HTML page for the parse stage (not
one whose content coding was refused: that URL fails with the client's reason). The
host goes back into the schedule when the fetch ends, at the time politeness says.

While an origin's robots.txt is unreachable (5xx, 429, network error: RFC 9309
2.3.1.4), its URLs are not tried and not failed: each goes back to its queue as it
was, and the host sleeps until the next robots.txt retry (``robots_waits`` names
such hosts, for the crawl's patience with them: ``fetch/robots_wait.py``).

A sitemap item (``frontier/sitemaps.py``) takes the same path with its file's URL,
what differs about it in ``fetch/sitemaps.py``; a host the operator blocked is
contacted for nothing (its URLs queued before the block are skipped).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from trawl.archive.warc import HttpExchange, RenderedDom, WarcWriter
from trawl.clock import Clock
from trawl.fetch.hostgate import GatedFrontier
from trawl.fetch.http import HTML_TYPES, Client, FetchError, FetchResponse, sniff_html
from trawl.fetch.outcomes import FetchPolicy, LeaseEnds
from trawl.fetch.politeness import Politeness, parse_retry_after
from trawl.fetch.render.step import BrowserLostError, PageRender, RenderStep, renderable
from trawl.fetch.robots import FetchOutcome
from trawl.fetch.robots_cache import RobotsCache, fetch_robots, origin_of
from trawl.fetch.robots_wait import RobotsWaits
from trawl.fetch.sitemaps import SitemapFetch
from trawl.fetch.tdm_cache import TdmCache
from trawl.frontier.admission import BLOCKED, Admission, CounterSink
from trawl.frontier.revisit import Revisits
from trawl.frontier.shape import HostRules
from trawl.frontier.sitemaps import SitemapRef, is_item
from trawl.jobs import ParseJob, TdmFileDecision
from trawl.models import Lease, UrlStatus
from trawl.parse.tdm import MAX_BYTES as TDM_MAX_BYTES
from trawl.parse.tdm import WELL_KNOWN_PATH
from trawl.storage.base import FetchRecord, Frontier, PageStore, ParseQueue
from trawl.storage.gate import CommitGate


def accept_html(mime_type: str | None) -> bool:
    """The content-type filter: HTML and XHTML, or no type (sniffed after download)."""
    return mime_type is None or mime_type in HTML_TYPES


@dataclass(frozen=True, slots=True)
class ParseTask:
    """A stored page handed to the parse stage (body already decoded)."""

    seq: int
    job: ParseJob
    body: bytes


class FetchStage:
    def __init__(
        self,
        *,
        client: Client,
        robots: RobotsCache,
        politeness: Politeness,
        frontier: Frontier,
        admission: Admission,
        warc: WarcWriter,
        pages: PageStore,
        parse_queue: ParseQueue,
        counters: CounterSink,
        clock: Clock,
        policy: FetchPolicy,
        rng: random.Random | None = None,
        tdm: TdmCache | None = None,
        revisits: Revisits | None = None,
        robots_waits: RobotsWaits | None = None,
        gate: CommitGate | None = None,
        sitemaps: SitemapFetch | None = None,
        hosts: HostRules | None = None,
        render: RenderStep | None = None,
    ) -> None:
        """``gate``: the group commit's (see ``storage/gate.py``); a response waits
        there before its WARC record is written and referenced. ``sitemaps`` None:
        sitemaps are off (items queued before are skipped)."""
        self._client = client
        self._robots = robots
        self._pace = politeness
        self._frontier = frontier
        self._admission = admission
        self._warc = warc
        self._pages = pages
        self._queue = parse_queue
        self._count = counters
        self._clock = clock
        self._policy = policy
        self._rng = rng or random.Random()
        self._tdm = tdm if policy.tdmrep else None
        self._revisits = revisits
        self._sitemaps = sitemaps
        self._hosts = hosts or HostRules()
        self._render = render
        self.bytes_received = 0
        self.robots_waits = robots_waits or RobotsWaits(patience=600.0)
        self._gate = gate
        self._ends = LeaseEnds(
            frontier=frontier,
            admission=admission,
            counters=counters,
            clock=clock,
            policy=policy,
            politeness=politeness,
            rng=self._rng,
        )

    @property
    def render(self) -> RenderStep | None:
        return self._render

    def set_delay(self, delay: float) -> None:
        """The gap between two requests to a host from now on (a steered crawl)."""
        self._pace.set_delay(delay)

    # -- the one entry point ---------------------------------------------------------

    async def process(self, lease: Lease) -> ParseTask | None:
        ref = SitemapRef.parse(lease.url) if is_item(lease.url) else None
        target = lease.url if ref is None else ref.url
        if self._hosts.blocked(lease.host):
            self._count.add("skipped:host blocked")
            self._skip(lease, BLOCKED)
            return None
        if ref is None and self._admission.respelled(lease, now=self._clock.now()):
            # A spelling of a URL the frontier has: nothing sent, and other crawls
            # sharing the host need not wait for this crawl's next fetch there.
            if isinstance(self._frontier, GatedFrontier):
                self._frontier.turn_unused(lease.host)
            return None
        origin = origin_of(target)
        rules = self._robots.get(origin, self._clock.now())
        if rules is None:
            await self._fetch_robots(lease, origin)
            return None
        if rules.outcome is FetchOutcome.UNREACHABLE:
            # Not a failed attempt: the URL waits, queued, until robots.txt can be read.
            self._wait_for_robots(lease, rules.expires_at)
            return None
        self.robots_waits.clear(lease.host)
        agents = self._policy.agents
        self._pace.set_crawl_delay(lease.host, rules.crawl_delay(agents))
        if not rules.is_allowed(target, agents):
            self._count.add("skipped:robots")
            self._skip(lease, "robots")
            return None
        if ref is not None:
            return await self._sitemap(lease, ref)
        tdm_rules = None
        if self._tdm is not None:
            tdm_rules = self._tdm.get(origin, self._clock.now())
            if tdm_rules is None:
                await self._fetch_tdmrep(lease, origin)
                return None
        try:
            resp = await self._client.get(
                lease.url,
                accept=accept_html,
                etag=lease.etag,
                last_modified=lease.last_modified,
                refuse_oversized=True,
            )
        except FetchError as exc:
            self._ends.network_error(lease, exc)
            return None
        render = None
        if self._render is not None and renderable(resp):
            host, now = lease.host, self._clock.now()
            # The page's host stays this lease's while the browser's requests go to it.
            ready = now + self._pace.delay(host) + self._pace.backoff(host)
            try:
                render = await self._render.run(lease, resp, ready_at=ready)
            except BrowserLostError as exc:
                # Not the page's fault: fetched and rendered again later, nothing kept.
                self._ends.retry(lease, reason=f"render: {exc}", host_ready_at=ready)
                return None
        now = self._clock.now()  # the host's next turn counts from here, not the gate
        if self._gate is not None:
            await self._gate.passage()
        tdm_well_known = None
        if tdm_rules is not None:
            decision = tdm_rules.for_path(lease.url)
            if decision is not None:
                tdm_well_known = TdmFileDecision(decision.reserved, decision.policy)
        return self._response(lease, resp, now, tdm_well_known=tdm_well_known, render=render)

    def _skip(self, lease: Lease, reason: str) -> None:
        """Nothing was sent: the host's turn is not used up."""
        self._frontier.finish(
            lease, UrlStatus.SKIPPED, reason=reason, host_ready_at=self._clock.now()
        )

    async def _sitemap(self, lease: Lease, ref: SitemapRef) -> ParseTask | None:
        if self._sitemaps is None:
            self._skip(lease, "sitemaps off")
            return None
        try:
            resp = await self._sitemaps.request(self._client, lease, ref)
        except FetchError as exc:
            self._ends.network_error(lease, exc)
            return None
        now = self._clock.now()
        if self._gate is not None:
            await self._gate.passage()
        return self._response(lease, resp, now, sitemap=ref)

    async def _fetch_tdmrep(self, lease: Lease, origin: str) -> None:
        """Fetch the origin's tdmrep.json in this host's turn, then give the URL back."""
        assert self._tdm is not None
        status: int | None = None
        body: bytes | None = None
        try:
            resp = await self._client.get(origin + WELL_KNOWN_PATH, max_body_bytes=TDM_MAX_BYTES)
            self.bytes_received += len(resp.raw_body)
            status, body = resp.status, resp.body
        except FetchError as exc:
            self._count.add(f"tdmrep:error:{exc.kind}")
        now = self._clock.now()
        rules = self._tdm.record(origin, status=status, body=body, now=now)
        self._count.add("tdmrep:rules" if rules.rules else "tdmrep:none")
        self._frontier.requeue(lease, host_ready_at=self._pace.after_success(lease.host, now))

    # -- robots.txt ------------------------------------------------------------------

    async def _fetch_robots(self, lease: Lease, origin: str) -> None:
        """Fetch the origin's robots.txt in this host's turn, then give the URL back."""

        async def pause() -> None:
            # Each hop is a request to a host: keep the host's pace between them.
            await self._clock.sleep(self._pace.delay(lease.host))

        got = await fetch_robots(
            self._client,
            self._robots,
            origin,
            now=self._clock.now,
            pause=pause,
            counters=self._count,
        )
        self.bytes_received += got.received
        if got.rules is None:
            self._frontier.finish(
                lease,
                UrlStatus.SKIPPED,
                reason=f"blocked address: {got.blocked}",
                host_ready_at=self._clock.now(),
            )
            return
        now = self._clock.now()
        if got.rules.outcome is FetchOutcome.UNREACHABLE:
            self._wait_for_robots(lease, got.rules.expires_at)
            return
        self.robots_waits.clear(lease.host)
        if got.trouble:
            ready = self._pace.after_trouble(lease.host, now)
        else:
            self._pace.set_crawl_delay(lease.host, got.rules.crawl_delay(self._policy.agents))
            ready = self._pace.after_success(lease.host, now)
            if self._sitemaps is not None:
                self._sitemaps.discover(origin, got.rules.sitemaps)
        self._frontier.requeue(lease, host_ready_at=ready)

    def _wait_for_robots(self, lease: Lease, retry_at: float) -> None:
        """The origin's robots.txt is unreachable: the URL goes back to its queue
        uncounted (never failed for it) and the host sleeps until the next retry."""
        self._count.add("robots:waiting")
        self.robots_waits.wait(lease.host, retry_at)
        self._frontier.requeue(lease, host_ready_at=max(retry_at, self._clock.now()))

    # -- responses ---------------------------------------------------------------------

    def _response(
        self,
        lease: Lease,
        resp: FetchResponse,
        now: float,
        *,
        tdm_well_known: TdmFileDecision | None = None,
        sitemap: SitemapRef | None = None,
        render: PageRender | None = None,
    ) -> ParseTask | None:
        host = lease.host
        status = resp.status
        self.bytes_received += len(resp.raw_body)
        self._count.add(f"status:{status}")
        mime = resp.mime_type
        refused = resp.undecodable
        if (
            # A sitemap's 4xx or 5xx is about the file, whatever its type says.
            (resp.body_skipped and (sitemap is None or 200 <= status < 300))
            or (
                sitemap is None
                and 200 <= status < 300
                and mime is None
                and refused is None  # an undecodable body cannot be sniffed: refused below
                and not sniff_html(resp.body[:1024])
            )
        ):
            kind = mime or "unknown"
            self._count.add("skipped:content type" if sitemap is None else "sitemap:not a sitemap")
            self._frontier.finish(
                lease,
                UrlStatus.SKIPPED,
                reason=f"content type {kind}",
                host_ready_at=self._pace.after_success(host, now),
            )
            return None
        target = lease.url if sitemap is None else sitemap.url
        exchange = HttpExchange(
            url=target,
            fetched_at=resp.started_at,
            ip=resp.ip,
            request_headers=resp.request_headers,
            status=status,
            reason=resp.reason,
            response_headers=resp.headers,
            body=resp.raw_body,
            http_version=resp.http_version,
            truncated=resp.truncated if resp.truncated == "length" else None,
        )
        dom_at = None
        if render is not None and render.dom is not None:
            dom = RenderedDom(render.dom, render.rendered_at, render.browser, render.note)
            location, dom_at = self._warc.write_rendered(exchange, dom)
        else:
            location = self._warc.write(exchange)
        previous = self._pages.fetch_of(host, lease.fp)
        self._pages.record_fetch(
            FetchRecord(
                host=host,
                fp=lease.fp,
                url=lease.via or lease.url,
                final_url=target,
                status=status,
                fetched_at=resp.started_at,
                warc=location,
                outcome=None,
            )
        )
        if resp.too_large is not None:
            # Refused unread: the WARC holds the headers and says the body is cut.
            self._count.add("skipped:too large")
            self._frontier.finish(
                lease,
                UrlStatus.SKIPPED,
                reason=f"too large: Content-Length {resp.too_large} over the body cap",
                host_ready_at=self._pace.after_success(host, now),
            )
            return None
        if status in (429, 503) or 500 <= status < 600:
            retry_after = parse_retry_after(resp.header("retry-after"), now)
            ready = self._pace.after_trouble(host, now, retry_after=retry_after)
            self._ends.retry(lease, reason=f"http {status}", host_ready_at=ready)
            return None
        ready = self._pace.after_success(host, now)
        if 300 <= status < 400 and status != 304:
            if sitemap is not None and self._sitemaps is not None:
                self._sitemaps.redirect(lease, sitemap, resp, ready)
            else:
                self._ends.redirect(lease, resp, ready)
            return None
        if status == 304:
            self._count.add("fetch:not modified")
            self._frontier.finish(
                lease,
                UrlStatus.PARSED,
                reason="not modified",
                host_ready_at=ready,
                etag=resp.header("etag") or lease.etag,
                last_modified=resp.header("last-modified") or lease.last_modified,
            )
            if self._revisits is not None:
                self._revisits.schedule(lease.host, lease.fp, lease.revisit, changed=False)
            return None
        if not 200 <= status < 300:
            if sitemap is not None and self._sitemaps is not None and status < 500:
                self._sitemaps.missing(lease, status, ready)
                return None
            self._ends.fail(lease, f"http {status}", ready)
            self._admission.failed(host, lease.url, f"http {status}", now=now)
            return None
        if refused is not None:
            # A content coding not offered or not decodable: the response is in the
            # WARC as received, and nothing of it is parsed.
            self._count.add("error:content-encoding")
            self._ends.fail(lease, refused[:300], ready, kind="content-encoding")
            return None
        job = ParseJob(
            host=host,
            fp=lease.fp,
            url=lease.via or lease.url,
            final_url=target,
            depth=lease.depth,
            fetched_at=resp.started_at,
            status=status,
            headers=tuple(resp.headers),
            content_type=resp.header("content-type"),
            warc=location,
            truncated=resp.truncated,
            previous_hash=previous.content_hash if previous is not None else None,
            revisit=lease.revisit,
            # In the durable job: a page parsed again after a crash keeps the decision.
            tdm_well_known=tdm_well_known,
            kind="page" if sitemap is None else "sitemap",
            cash=lease.cash,
            rendered=dom_at,
            render=render.note if render is not None else None,
        )
        seq = self._queue.put(job)
        self._count.add("fetch:stored" if sitemap is None else "sitemap:fetched")
        self._frontier.finish(
            lease,
            UrlStatus.FETCHED,
            host_ready_at=ready,
            etag=resp.header("etag"),
            last_modified=resp.header("last-modified"),
        )
        body = render.dom if render is not None and render.dom is not None else resp.body
        return ParseTask(seq=seq, job=job, body=body)
