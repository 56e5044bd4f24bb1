"""Every request a browser makes while rendering a page, kept to the crawler's rules.

The renderer (``fetch/render/page.py``) routes each request of the browser here and
fulfils it with the answer, or aborts it with the reason, which is counted
(``render:refused:<why>``) and kept with the page. Allowed requests are made with the
crawl's own HTTP client, so in this order:

1. Only http(s) ``GET``: a crawler changes nothing on a site (forms, beacons, ``POST``
   API calls are not sent). Images, media, fonts, event streams, websockets and the
   like (``NOT_LOADED``) are not loaded.
2. The page's own document is the response already fetched (no second request); any
   other navigation of the main frame is "navigation away" and refused.
3. Nothing starts after the page's deadline, nor past ``MAX_REQUESTS`` requests or
   ``max_body_bytes`` x ``BYTES_FACTOR`` bytes for one page.
4. The address guard: the URL's host read as the client would (address literals,
   ``localhost``), then every resolved address in the client's DNS cache, which is
   also where the connection goes (no second lookup a rebinding server could answer).
5. Another host than the page's only when the crawl allows it (``render_hosts``).
6. robots.txt of the request's origin, for every product token of the crawl; fetched
   first (in the host's turn) when not known.
7. The host's pace: one request at a time per host and the host's delay (or
   Crawl-delay, or back-off) between two. The page's own host is the lease's: its
   requests follow the page's fetch at the politeness delay. Another host's turn is
   taken from the frontier (``Frontier.hold_host``), as one of its own fetches
   would, and given back at now + its delay.
8. The client's timeouts, size cap (also decoded) and content-coding rules; a body
   cut at the cap or in a coding refused is not handed to the browser.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final, TypeVar

from trawl import urls
from trawl.clock import Clock
from trawl.errors import UrlError
from trawl.fetch.address import AddressGuard
from trawl.fetch.http import Client, FetchError, FetchResponse
from trawl.fetch.politeness import Politeness
from trawl.fetch.robots import FetchOutcome
from trawl.fetch.robots_cache import RobotsCache, fetch_robots, origin_of
from trawl.frontier.admission import CounterSink
from trawl.frontier.traps import ScopeFilter
from trawl.storage.base import Frontier

__all__ = ["NOT_LOADED", "Answer", "BrowserRequest", "PageGate", "RenderGate"]

# Browser resource types never fetched for a render.
NOT_LOADED: Final = frozenset(
    {"image", "media", "font", "eventsource", "websocket", "manifest", "texttrack", "ping"}
)
MAX_REQUESTS: Final = 200  # requests one page may make
BYTES_FACTOR: Final = 4  # one page's requests may bring max_body_bytes x this
KEPT_REFUSALS: Final = 50  # refusals kept with a page's record (all are counted)
_POLL: Final = 0.25  # at most this long between two asks for a busy host's turn

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class BrowserRequest:
    """One request of the browser, as the renderer saw it."""

    url: str
    method: str = "GET"
    resource_type: str = "fetch"  # Playwright's names: document, script, fetch, xhr, ...
    navigation: bool = False  # a navigation of the page's main frame
    accept: str | None = None


@dataclass(frozen=True, slots=True)
class Answer:
    """Fulfil the request with ``response``, or abort it because of ``refused``."""

    response: FetchResponse | None
    refused: str | None = None


class _RefusedError(Exception):
    """A request not answered; ``trouble``: the host failed it (slow the host down)."""

    def __init__(self, why: str, *, trouble: bool = False) -> None:
        super().__init__(why)
        self.trouble = trouble


@dataclass(frozen=True, slots=True)
class GateRules:
    """The crawl-wide rules for browsers' requests (from the config)."""

    agents: tuple[str, ...]
    other_hosts: ScopeFilter | None = None  # hosts besides the page's that may be asked
    max_body_bytes: int = 10 * 1024 * 1024


class RenderGate:
    """The crawl's rules and components, shared by every page rendered."""

    def __init__(
        self,
        *,
        client: Client,
        robots: RobotsCache,
        politeness: Politeness,
        frontier: Frontier,
        guard: AddressGuard,
        counters: CounterSink,
        clock: Clock,
        rules: GateRules,
    ) -> None:
        self.client = client
        self.robots = robots
        self.pace = politeness
        self.frontier = frontier
        self.guard = guard
        self.count = counters
        self.clock = clock
        self.rules = rules

    def for_page(
        self, url: str, host: str, document: FetchResponse, *, ready_at: float, deadline: float
    ) -> PageGate:
        """The gate of one render: ``document`` is the page's response, ``ready_at``
        when its host may be asked again, ``deadline`` when the render ends."""
        return PageGate(self, url, host, document, ready_at=ready_at, deadline=deadline)


@dataclass(slots=True)
class _Tally:
    requests: int = 0
    received: int = 0
    refusals: list[tuple[str, str]] = field(default_factory=list)


class PageGate:
    """One page's requests: their tally, and its host's next allowed contact."""

    def __init__(
        self,
        shared: RenderGate,
        url: str,
        host: str,
        document: FetchResponse,
        *,
        ready_at: float,
        deadline: float,
    ) -> None:
        self._g = shared
        self.url = url
        self.host = host
        self._document = document
        self._served = False
        self.host_ready_at = ready_at  # the page's host: when it may be asked again
        self._deadline = deadline
        self._locks: dict[str, asyncio.Lock] = {}
        self._work: set[asyncio.Future[FetchResponse]] = set()
        self._closed = False
        self.tally = _Tally()

    @property
    def refusals(self) -> list[tuple[str, str]]:
        return self.tally.refusals

    async def answer(self, req: BrowserRequest) -> Answer:
        """What to give the browser for ``req`` (never raises but on cancellation)."""
        if self._closed:
            return Answer(None, "render ended")
        work = asyncio.ensure_future(self._answer(req))
        self._work.add(work)
        try:
            return Answer(await work)
        except _RefusedError as refusal:
            return self._refuse(req.url, str(refusal))
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self._closed and (current is None or not current.cancelling()):
                return Answer(None, "render ended")
            raise
        finally:
            self._work.discard(work)

    def close(self) -> None:
        """The render is over: what its requests still wait for or have under way is
        cancelled (a host held is given back), and nothing more starts, so the page's
        host is free of them when its lease ends."""
        self._closed = True
        for work in list(self._work):
            work.cancel()

    def _refuse(self, url: str, why: str) -> Answer:
        self._g.count.add("render:refused:" + why.split(":", 1)[0])
        kept = self.tally.refusals
        if len(kept) < KEPT_REFUSALS:
            kept.append((url[:300], why[:200]))
        return Answer(None, why)

    async def _answer(self, req: BrowserRequest) -> FetchResponse:
        if not req.url.startswith(("http://", "https://")):
            raise _RefusedError(f"scheme {req.url.split(':', 1)[0][:20]}")
        if req.method != "GET":
            raise _RefusedError(f"method {req.method[:20]}")
        if req.resource_type in NOT_LOADED:
            raise _RefusedError(f"{req.resource_type} not loaded")
        try:
            url = urls.normalize(req.url)
            host = urls.host_key(url)
        except UrlError as exc:
            raise _RefusedError(f"bad URL: {exc.reason}") from None
        if req.navigation:
            if url == self.url and not self._served:
                self._served = True
                return self._document
            raise _RefusedError("navigation away")
        tally, rules = self.tally, self._g.rules
        if self._g.clock.now() >= self._deadline:
            raise _RefusedError("deadline")
        if tally.requests >= MAX_REQUESTS:
            raise _RefusedError("too many requests")
        if tally.received >= rules.max_body_bytes * BYTES_FACTOR:
            raise _RefusedError("too many bytes")
        blocked = self._g.guard.check_url(url)
        if blocked is not None:
            raise _RefusedError(f"blocked address: {blocked}")
        if host != self.host and (rules.other_hosts is None or not rules.other_hosts.allows(host)):
            raise _RefusedError("third-party host")
        await self._robots(url, host)
        tally.requests += 1
        self._g.count.add("render:requests")
        resp = await self._turn(host, lambda: self._get(url, req.accept))
        tally.received += len(resp.raw_body)
        if resp.undecodable is not None:
            raise _RefusedError(f"undecodable: {resp.undecodable[:100]}")
        if resp.truncated == "length":
            raise _RefusedError("over the size cap")
        return resp

    async def _get(self, url: str, accept: str | None) -> FetchResponse:
        headers = {"Accept": accept} if accept else None
        try:
            return await self._g.client.get(url, headers=headers)
        except FetchError as exc:
            if exc.kind == "blocked":
                raise _RefusedError(f"blocked address: {exc.message}") from None
            raise _RefusedError(f"{exc.kind}: {exc.message}"[:200], trouble=True) from None

    async def _robots(self, url: str, host: str) -> None:
        g = self._g
        origin = origin_of(url)
        rules = g.robots.get(origin, g.clock.now())
        if rules is None:

            async def fetch() -> None:
                got = await fetch_robots(
                    g.client,
                    g.robots,
                    origin,
                    now=g.clock.now,
                    pause=lambda: g.clock.sleep(g.pace.delay(host)),
                    counters=g.count,
                )
                self.tally.received += got.received
                if got.rules is None:
                    why = got.blocked.message if got.blocked else "refused"
                    raise _RefusedError(f"blocked address: {why}")
                if got.trouble:
                    raise _RefusedError("robots.txt unreachable", trouble=True)
                # Before the turn ends: the host's next request waits its Crawl-delay.
                g.pace.set_crawl_delay(host, got.rules.crawl_delay(g.rules.agents))

            await self._turn(host, fetch)
            rules = g.robots.get(origin, g.clock.now())
            if rules is None:
                raise _RefusedError("robots.txt unreachable")
        if rules.outcome is FetchOutcome.UNREACHABLE:
            raise _RefusedError("robots.txt unreachable")
        g.pace.set_crawl_delay(host, rules.crawl_delay(g.rules.agents))
        if not rules.is_allowed(url, g.rules.agents):
            raise _RefusedError("robots.txt")

    # -- the host's turn ------------------------------------------------------------------

    async def _turn(self, host: str, work: Callable[[], Awaitable[R]]) -> R:
        """Run ``work`` (one request to ``host``) in the host's turn, at its pace: the
        page's host follows the page's own fetch; another host is held in the frontier."""
        lock = self._locks.setdefault(host, asyncio.Lock())
        async with lock:
            if self._g.clock.now() >= self._deadline:  # waited for the lock past it
                raise _RefusedError("deadline")
            own = host == self.host
            if own:
                await self._wait_until(self.host_ready_at)
            else:
                await self._hold(host)
            trouble = False
            try:
                result = await work()
                if isinstance(result, FetchResponse):
                    trouble = result.status == 429 or result.status >= 500
                return result
            except _RefusedError as refusal:
                trouble = refusal.trouble
                raise
            finally:
                pace, now = self._g.pace, self._g.clock.now()
                ready = pace.after_trouble(host, now) if trouble else pace.after_success(host, now)
                if own:
                    self.host_ready_at = ready
                else:
                    self._g.frontier.release_host(host, host_ready_at=ready)

    async def _hold(self, host: str) -> None:
        """Take another host's turn from the frontier, waiting while it is busy."""
        g = self._g
        while True:
            now = g.clock.now()
            at = g.frontier.hold_host(host, now, until=self._deadline + 60.0)
            if at is None:
                return
            if at >= self._deadline:
                raise _RefusedError("host busy until the deadline")
            await self._wait_until(min(at, now + _POLL))

    async def _wait_until(self, at: float) -> None:
        clock = self._g.clock
        wait = at - clock.now()
        if wait <= 0:
            return
        if at >= self._deadline:
            raise _RefusedError("deadline")
        await clock.sleep(wait)
