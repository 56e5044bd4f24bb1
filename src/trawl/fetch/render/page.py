"""Render one page: its browser requests routed through the gate, its DOM taken.

Every request of the tab (documents, frames, scripts, API calls, workers' fetches)
comes here through the slot's router (``pool.py``) and goes to ``PageGate.answer``:
an answer fulfils it with the response the crawler's client got, a refusal aborts it
(``blockedbyclient``; a refused navigation of the page is answered 204 No Content
instead, so the browser stays on the page rather than showing an error page). The
page's own document is the response the fetch stage already has.

The render: load the page, wait until it is quiet (no request of the page under way
for ``QUIET`` seconds), then scroll to the bottom up to ``scrolls`` times, each
followed by another quiet wait, while the page grows (an infinite feed stops at the
limit); then serialise the DOM. All of it within the page's deadline: at the deadline
the DOM is taken as it is (``ended="deadline"``), given ``SNAPSHOT_GRACE`` seconds (or
half the deadline, if shorter); a page whose scripts keep the browser busy past that
gives no DOM at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from trawl.fetch.http import FetchResponse
from trawl.fetch.render.gate import BrowserRequest, PageGate

if TYPE_CHECKING:
    from playwright.async_api import Page, Route

    from trawl.fetch.render.pool import PageSlot

__all__ = ["QUIET", "RenderResult", "render_page"]

QUIET: Final = 0.3  # seconds without a request under way: the page has settled
SNAPSHOT_GRACE: Final = 3.0  # at most; a short deadline gives half of itself
_TICK: Final = 0.05
# Response headers not handed to the browser: the body is already decoded, and a
# render keeps no cookies.
_DROPPED: Final = frozenset(
    {
        "content-encoding",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "set-cookie",
        "set-cookie2",
        "alt-svc",
    }
)


@dataclass(frozen=True, slots=True)
class RenderResult:
    dom: bytes | None  # the serialised DOM (UTF-8); None: the page gave none
    ended: str  # "settled", "scroll limit", "deadline", "no DOM: ..."
    seconds: float


class _Quiet:
    """Requests of the page under way, and when the last one started or ended."""

    def __init__(self) -> None:
        self.pending = 0
        self.changed = time.monotonic()

    def start(self) -> None:
        self.pending += 1
        self.changed = time.monotonic()

    def end(self) -> None:
        self.pending -= 1
        self.changed = time.monotonic()

    def touch(self) -> None:
        """Something happened that may start requests (a scroll): wait as if one did."""
        self.changed = time.monotonic()

    async def wait(self, until: float) -> bool:
        """Until no request is under way for ``QUIET`` s (True) or ``until`` (False)."""
        while True:
            now = time.monotonic()
            if self.pending == 0 and now - self.changed >= QUIET:
                return True
            if now >= until:
                return False
            await asyncio.sleep(_TICK)


def _headers(resp: FetchResponse) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in resp.headers:
        key = name.lower()
        if key in _DROPPED:
            continue
        out[key] = f"{out[key]}, {value}" if key in out else value
    if resp.mime_type is not None and "content-type" not in out:
        out["content-type"] = resp.mime_type
    return out


async def render_page(
    slot: PageSlot, gate: PageGate, *, deadline: float, scrolls: int
) -> RenderResult:
    """Render ``gate.url`` in the slot's tab within ``deadline`` seconds."""
    started = time.monotonic()
    until = started + deadline
    quiet = _Quiet()
    page = slot.page

    async def route(r: Route) -> None:
        request = r.request
        quiet.start()
        try:
            navigation = False
            with contextlib.suppress(Exception):
                navigation = request.is_navigation_request() and (request.frame == page.main_frame)
            answer = await gate.answer(
                BrowserRequest(
                    url=request.url,
                    method=request.method,
                    resource_type=request.resource_type,
                    navigation=navigation,
                    accept=request.headers.get("accept"),
                )
            )
            with contextlib.suppress(Exception):  # the page may be gone by now
                if answer.response is None and navigation:
                    # A refused navigation answered 204: the browser stays on the page
                    # (an aborted one would put an error page in its place).
                    await r.fulfill(status=204, body=b"")
                elif answer.response is None:
                    await r.abort("blockedbyclient")
                else:
                    resp = answer.response
                    await r.fulfill(status=resp.status, headers=_headers(resp), body=resp.body)
        finally:
            quiet.end()

    slot.router = route
    ended = "settled"
    try:
        async with asyncio.timeout(deadline):
            await page.goto(gate.url, wait_until="domcontentloaded")
            with contextlib.suppress(Exception):
                left = max(1.0, until - time.monotonic())
                await page.wait_for_load_state("load", timeout=left * 1000)
            if await quiet.wait(until):
                ended = await _scroll(page, quiet, scrolls, until)
            else:
                ended = "deadline"
    except TimeoutError:
        ended = "deadline"
    except Exception as exc:  # the page's own failure (the browser's is the pool's)
        ended = f"error: {str(exc).splitlines()[0][:150]}" if str(exc) else "error"
    try:
        # Not wait_for: on Python 3.11 it swallows a cancellation that comes as it ends.
        async with asyncio.timeout(min(SNAPSHOT_GRACE, deadline / 2)):
            html = await page.content()
    except Exception:
        ended = f"no DOM: page unresponsive ({ended})"
        return RenderResult(None, ended, time.monotonic() - started)
    return RenderResult(html.encode("utf-8", "replace"), ended, time.monotonic() - started)


_HEIGHT: Final = "document.documentElement.scrollHeight"


async def _scroll(page: Page, quiet: _Quiet, scrolls: int, until: float) -> str:
    """Scroll to the bottom while the page grows, at most ``scrolls`` times (not at all
    when it fits in the window)."""
    height = await page.evaluate(_HEIGHT)
    if height <= await page.evaluate("window.innerHeight"):
        return "settled"
    for _ in range(scrolls):
        await page.evaluate(f"window.scrollTo(0, {_HEIGHT})")
        quiet.touch()
        if not await quiet.wait(until):
            return "deadline"
        grown = await page.evaluate(_HEIGHT)
        if grown <= height:
            return "settled"
        height = grown
    return "scroll limit" if scrolls else "settled"
