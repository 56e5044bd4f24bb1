"""The fetch stage: one lease in, its outcome recorded. Robots, pacing, HTTP, WARC.

For each URL handed out by the frontier: make sure the origin's robots.txt is known
(fetching it uses the host's turn), check the rules for every product token of the
crawl, fetch with the client (no redirects followed: a redirect target goes back
through admission, so each hop is checked against scope, traps, robots and the seen
set), store the response as WARC, and queue an HTML page for the parse stage (not
one whose content coding was refused: that URL fails with the client's reason). The
host goes back into the schedule when the fetch ends, at the time politeness says.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Protocol

from trawl import urls
from trawl.archive.warc import HttpExchange, WarcWriter
from trawl.clock import Clock
from trawl.errors import UrlError
from trawl.fetch.http import FetchError, FetchResponse, sniff_html
from trawl.fetch.politeness import Politeness, parse_retry_after
from trawl.fetch.robots import MAX_BYTES as ROBOTS_MAX_BYTES
from trawl.fetch.robots import MAX_REDIRECTS as ROBOTS_MAX_REDIRECTS
from trawl.fetch.robots import FetchOutcome
from trawl.fetch.robots_cache import RobotsCache, origin_of
from trawl.fetch.tdm_cache import TdmCache
from trawl.frontier.admission import Admission, Candidate, CounterSink
from trawl.frontier.revisit import Revisits
from trawl.jobs import ParseJob, TdmFileDecision
from trawl.models import Lease, UrlStatus
from trawl.parse.tdm import MAX_BYTES as TDM_MAX_BYTES
from trawl.parse.tdm import WELL_KNOWN_PATH
from trawl.storage.base import FetchRecord, Frontier, PageStore, ParseQueue

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


def accept_html(mime_type: str | None) -> bool:
    """The content-type filter: HTML and XHTML, or no type (sniffed after download)."""
    return mime_type is None or mime_type in HTML_TYPES


class Client(Protocol):
    async def get(
        self,
        url: str,
        *,
        accept: Any = None,
        headers: Any = None,
        etag: str | None = None,
        last_modified: str | None = None,
        max_body_bytes: int | None = None,
    ) -> FetchResponse: ...

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class FetchPolicy:
    agents: tuple[str, ...]
    max_attempts: int = 3
    retry_base: float = 30.0
    retry_max: float = 3600.0
    max_redirects: int = 5
    tdmrep: bool = False  # fetch /.well-known/tdmrep.json per origin (training crawls)


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
    ) -> None:
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
        self.bytes_received = 0

    # -- the one entry point ---------------------------------------------------------

    async def process(self, lease: Lease) -> ParseTask | None:
        origin = origin_of(lease.url)
        rules = self._robots.get(origin, self._clock.now())
        if rules is None:
            await self._fetch_robots(lease, origin)
            return None
        if rules.outcome is FetchOutcome.UNREACHABLE:
            self._count.add("robots:waiting")
            self._retry(lease, reason="robots.txt unreachable", host_ready_at=rules.expires_at)
            return None
        agents = self._policy.agents
        self._pace.set_crawl_delay(lease.host, rules.crawl_delay(agents))
        if not rules.is_allowed(lease.url, agents):
            self._count.add("skipped:robots")
            # Nothing was sent: the host's turn is not used up.
            self._frontier.finish(
                lease, UrlStatus.SKIPPED, reason="robots", host_ready_at=self._clock.now()
            )
            return None
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
            )
        except FetchError as exc:
            self._network_error(lease, exc)
            return None
        tdm_well_known = None
        if tdm_rules is not None:
            decision = tdm_rules.for_path(lease.url)
            if decision is not None:
                tdm_well_known = TdmFileDecision(decision.reserved, decision.policy)
        return self._response(lease, resp, tdm_well_known=tdm_well_known)

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
        url = origin + "/robots.txt"
        status: int | None = None
        body: bytes | None = None
        redirects = 0
        trouble = False
        while True:
            try:
                resp = await self._client.get(url, max_body_bytes=ROBOTS_MAX_BYTES + 1)
            except FetchError as exc:
                self._count.add(f"robots:error:{exc.kind}")
                if exc.kind == "blocked":
                    self._frontier.finish(
                        lease,
                        UrlStatus.SKIPPED,
                        reason=f"blocked address: {exc}",
                        host_ready_at=self._clock.now(),
                    )
                    return
                trouble = True
                break
            self.bytes_received += len(resp.raw_body)
            status, body = resp.status, resp.body
            location = resp.header("location")
            if 300 <= status < 400 and location and redirects < ROBOTS_MAX_REDIRECTS:
                try:
                    url = urls.join(url, location)
                except UrlError:
                    break
                redirects += 1
                # Each hop is a request to a host: keep the host's pace between them.
                await self._clock.sleep(self._pace.delay(lease.host))
                continue
            break
        now = self._clock.now()
        rules = self._robots.record(origin, status=status, body=body, now=now, redirects=redirects)
        if rules.outcome is FetchOutcome.UNREACHABLE:
            trouble = True
        self._count.add(f"robots:{rules.outcome.value}")
        if trouble:
            ready = self._pace.after_trouble(lease.host, now)
        else:
            self._pace.set_crawl_delay(lease.host, rules.crawl_delay(self._policy.agents))
            ready = self._pace.after_success(lease.host, now)
        self._frontier.requeue(lease, host_ready_at=ready)

    # -- responses ---------------------------------------------------------------------

    def _response(
        self, lease: Lease, resp: FetchResponse, *, tdm_well_known: TdmFileDecision | None = None
    ) -> ParseTask | None:
        now = self._clock.now()
        host = lease.host
        status = resp.status
        self.bytes_received += len(resp.raw_body)
        self._count.add(f"status:{status}")
        mime = resp.mime_type
        refused = resp.undecodable
        if (
            resp.body_skipped
            or (
                200 <= status < 300
                and mime is None
                and refused is None  # an undecodable body cannot be sniffed: refused below
                and not sniff_html(resp.body[:1024])
            )
        ):
            kind = mime or "unknown"
            self._count.add("skipped:content type")
            self._frontier.finish(
                lease,
                UrlStatus.SKIPPED,
                reason=f"content type {kind}",
                host_ready_at=self._pace.after_success(host, now),
            )
            return None
        location = self._warc.write(
            HttpExchange(
                url=lease.url,
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
        )
        previous = self._pages.fetch_of(host, lease.fp)
        self._pages.record_fetch(
            FetchRecord(
                host=host,
                fp=lease.fp,
                url=lease.via or lease.url,
                final_url=lease.url,
                status=status,
                fetched_at=resp.started_at,
                warc=location,
                outcome=None,
            )
        )
        if status in (429, 503) or 500 <= status < 600:
            retry_after = parse_retry_after(resp.header("retry-after"), now)
            ready = self._pace.after_trouble(host, now, retry_after=retry_after)
            self._retry(lease, reason=f"http {status}", host_ready_at=ready)
            return None
        ready = self._pace.after_success(host, now)
        if 300 <= status < 400 and status != 304:
            self._redirect(lease, resp, ready)
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
            self._frontier.finish(
                lease, UrlStatus.FAILED, reason=f"http {status}", host_ready_at=ready
            )
            return None
        if refused is not None:
            # A content coding not offered or not decodable: the response is in the
            # WARC as received, and nothing of it is parsed.
            self._count.add("error:content-encoding")
            self._frontier.finish(
                lease, UrlStatus.FAILED, reason=refused[:300], host_ready_at=ready
            )
            return None
        job = ParseJob(
            host=host,
            fp=lease.fp,
            url=lease.via or lease.url,
            final_url=lease.url,
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
        )
        seq = self._queue.put(job)
        self._count.add("fetch:stored")
        self._frontier.finish(
            lease,
            UrlStatus.FETCHED,
            host_ready_at=ready,
            etag=resp.header("etag"),
            last_modified=resp.header("last-modified"),
        )
        return ParseTask(seq=seq, job=job, body=resp.body)

    def _redirect(self, lease: Lease, resp: FetchResponse, ready: float) -> None:
        raw = resp.header("location")
        try:
            target = urls.join(lease.url, raw or "")
        except UrlError as exc:
            self._count.add("redirect:bad")
            self._frontier.finish(
                lease, UrlStatus.FAILED, reason=f"bad redirect: {exc.reason}", host_ready_at=ready
            )
            return
        hops = lease.hops + 1
        origin = lease.via or lease.url
        if hops > self._policy.max_redirects:
            self._count.add("redirect:too many")
            self._frontier.finish(
                lease, UrlStatus.FAILED, reason="too many redirects", host_ready_at=ready
            )
            self._fail_origin(origin, "too many redirects")
            return
        if self._loops(target, lease.url, origin):
            # The seen set would end the loop quietly, with every hop "redirected" and
            # the chain's start, the URL that was wanted, never marked as failed.
            self._count.add("redirect:loop")
            self._frontier.finish(
                lease, UrlStatus.FAILED, reason="redirect loop", host_ready_at=ready
            )
            self._fail_origin(origin, "redirect loop")
            return
        if lease.depth == 0:
            # Where a seed redirects to is a seed too (http -> https, www., new domain).
            self._admission.scope.add_host(urls.host_key(target))
        result = self._admission.offer(
            [Candidate(target, depth=lease.depth, via=origin, hops=hops)], now=self._clock.now()
        )
        why = next(iter(result.dropped), None)
        self._count.add("redirect:followed" if result.added else "redirect:not queued")
        self._frontier.finish(
            lease,
            UrlStatus.REDIRECTED,
            reason=f"-> {target}" + (f" ({why})" if why else ""),
            host_ready_at=ready,
        )

    def _loops(self, target: str, url: str, origin: str) -> bool:
        """``target`` is a URL this redirect chain has already been through."""
        if target in (url, origin):
            return True
        host = urls.host_key(target)
        record = self._frontier.lookup(target, host, urls.fingerprint(target))
        return record is not None and record.via == origin

    def _fail_origin(self, origin: str, reason: str) -> None:
        host = urls.host_key(origin)
        record = self._frontier.lookup(origin, host, urls.fingerprint(origin))
        if record is not None and record.status is UrlStatus.REDIRECTED:
            self._frontier.set_status(host, record.fp, UrlStatus.FAILED, reason=reason)

    # -- failures ----------------------------------------------------------------------

    def _network_error(self, lease: Lease, exc: FetchError) -> None:
        now = self._clock.now()
        self._count.add(f"error:{exc.kind}")
        if exc.kind == "blocked":
            self._frontier.finish(
                lease, UrlStatus.SKIPPED, reason=f"blocked address: {exc}", host_ready_at=now
            )
            return
        ready = self._pace.after_trouble(lease.host, now)
        if exc.retryable:
            self._retry(lease, reason=f"{exc.kind}: {exc.message}", host_ready_at=ready)
        else:
            self._frontier.finish(
                lease, UrlStatus.FAILED, reason=f"{exc.kind}: {exc.message}", host_ready_at=ready
            )

    def _retry(self, lease: Lease, *, reason: str, host_ready_at: float) -> None:
        """Back off and try again later, or give up after the last attempt."""
        attempts = lease.attempts + 1
        if attempts >= self._policy.max_attempts:
            self._count.add("fetch:failed")
            self._frontier.finish(
                lease, UrlStatus.FAILED, reason=reason, host_ready_at=host_ready_at
            )
            return
        p = self._policy
        backoff = min(p.retry_max, p.retry_base * 2 ** (attempts - 1))
        backoff *= 0.5 + self._rng.random()  # jitter: retries of many URLs do not align
        due = max(self._clock.now() + backoff, host_ready_at)
        self._count.add("fetch:retried")
        self._frontier.retry(lease, due=due, host_ready_at=host_ready_at, reason=reason)
