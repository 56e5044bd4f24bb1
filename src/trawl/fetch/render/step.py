"""The render step of the fetch stage: decide, render in the pool, learn the host.

For a page the fetch stage stored (a 2xx HTML response), ``RenderStep.run`` applies
the render policy (``decide.py``, with the host's hint under ``auto``), renders the
page in a browser of the pool when the policy says so, and returns what the stage
stores with it: the decision as recorded ("rendered: auto: empty mount point #root;
settled in 0.8 s, 3 requests, 2 refused") and the DOM, if one was taken. A page
whose render gave no DOM (its scripts kept the browser busy) is parsed from its
HTML, the reason recorded. A browser that crashed or hung raises
``BrowserLostError``: the URL is fetched and rendered again later.

The host of the page is the lease's while it renders: its requests go at the host's
pace after the page's own fetch, and the host is released after the last of them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from trawl.clock import Clock
from trawl.config import RenderMode
from trawl.fetch.http import HTML_TYPES, FetchResponse, sniff_html
from trawl.fetch.render.decide import Decision, decide, page_shape
from trawl.fetch.render.gate import RenderGate
from trawl.fetch.render.hints import RenderHints, gained
from trawl.fetch.render.page import RenderResult, render_page
from trawl.fetch.render.pool import BrowserLostError, BrowserPool
from trawl.frontier.admission import CounterSink
from trawl.models import Lease

__all__ = ["BrowserLostError", "PageRender", "RenderStep"]

_SHOWN = 5  # refused requests named in a page's note (all are counted)
_RANK = {"blocked address": 0, "robots.txt": 1, "third-party host": 2}
_CLEAN = frozenset({"settled", "scroll limit"})  # renders whose tab may serve another


@dataclass(frozen=True, slots=True)
class PageRender:
    """What the render step leaves for the page's records."""

    note: str  # the decision and how it went, as recorded with the page
    dom: bytes | None = None  # the rendered DOM, when one was taken
    rendered_at: float = 0.0
    browser: str = ""
    refusals: tuple[tuple[str, str], ...] = ()  # (URL, why) of refused requests


def renderable(resp: FetchResponse) -> bool:
    """A 2xx HTML page whose body was read and decoded."""
    if not 200 <= resp.status < 300 or resp.body_skipped or resp.undecodable is not None:
        return False
    if resp.mime_type is None:
        return sniff_html(resp.body[:1024])
    return resp.mime_type in HTML_TYPES and bool(resp.body)


class RenderStep:
    def __init__(
        self,
        *,
        mode: RenderMode,
        pool: BrowserPool,
        gate: RenderGate,
        hints: RenderHints,
        clock: Clock,
        counters: CounterSink,
        deadline: float,
        scrolls: int,
    ) -> None:
        self.mode = mode
        self.pool = pool
        self._gate = gate
        self._hints = hints
        self._clock = clock
        self._count = counters
        self._deadline = deadline
        self._scrolls = scrolls

    @property
    def waiting(self) -> int:
        """Pages waiting for a browser (the crawl takes fewer leases while many do)."""
        return self.pool.waiting

    async def run(self, lease: Lease, resp: FetchResponse, *, ready_at: float) -> PageRender:
        """Decide and maybe render ``resp`` (the page of ``lease``); ``ready_at`` is
        when its host may be asked again after the page's own fetch."""
        learned = self.mode == "auto" and self._hints.needs(lease.host, self._clock.now())
        decision, shape = decide(
            self.mode, resp.body, content_type=resp.header("content-type"), learned=learned
        )
        if not decision.render:
            self._count.add("render:not rendered")
            return PageRender(str(decision))
        self._count.add("render:rendered")
        if decision.by_hint:
            self._count.add("render:learned host")
        try:
            result, refusals, requests = await self._render(lease, resp, decision, ready_at)
        except BrowserLostError:
            self._count.add("render:browser lost")
            raise
        if shape is not None and result.dom is not None:
            after = page_shape(result.dom, "text/html; charset=utf-8").text_chars
            gain = gained(shape.text_chars, after)
            self._hints.learn(
                lease.host, gain=gain, shell=not decision.by_hint, now=self._clock.now()
            )
        note = f"{decision}; {result.ended} in {result.seconds:.1f} s, {requests} requests"
        if refusals:
            # The ones that matter most first: addresses refused, robots.txt, other hosts.
            ranked = sorted(refusals, key=lambda r: _RANK.get(r[1].split(":", 1)[0], len(_RANK)))
            shown = ", ".join(f"{url} ({why})" for url, why in ranked[:_SHOWN])
            more = f" and {len(refusals) - _SHOWN} more" if len(refusals) > _SHOWN else ""
            note += f"; refused: {shown}{more}"
        if result.dom is None:
            self._count.add("render:no dom")
        elif result.ended == "deadline":
            self._count.add("render:deadline")
        return PageRender(
            note,
            result.dom,
            rendered_at=self._clock.now(),
            browser=self.pool.version,
            refusals=refusals,
        )

    async def _render(
        self, lease: Lease, resp: FetchResponse, decision: Decision, ready_at: float
    ) -> tuple[RenderResult, tuple[tuple[str, str], ...], int]:
        waited = time.monotonic()
        slot = await self.pool.open_page()
        started = time.monotonic()
        self._count.add("render:wait ms", int((started - waited) * 1000))
        # The deadline runs from when the browser is ready for the page.
        gate = self._gate.for_page(
            lease.url,
            lease.host,
            resp,
            ready_at=ready_at,
            deadline=self._clock.now() + self._deadline,
        )
        failure: Exception | None = None
        result: RenderResult | None = None
        try:
            result = await render_page(slot, gate, deadline=self._deadline, scrolls=self._scrolls)
        except Exception as exc:  # not the page's: render_page keeps those
            failure = exc
        finally:
            gate.close()
            # A tab that settled serves the next page; one that did not is closed.
            reuse = result is not None and result.dom is not None and result.ended in _CLEAN
            lost = await self.pool.close_page(slot, reuse=reuse)
        if result is None or (lost is not None and (result.dom is None or lost == "crashed")):
            why = lost or f"failed: {failure}"
            raise BrowserLostError(f"the browser {why} while rendering ({decision.reason})")
        self._count.add("render:ms", int((time.monotonic() - started) * 1000))
        return result, tuple(gate.refusals), gate.tally.requests
