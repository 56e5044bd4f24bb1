"""A bounded browser pool: N pages at once in one browser, restarted when it fails.

``open_page`` waits for one of ``pages`` slots and hands out a tab: a page in a
browser context of its own (service workers blocked, downloads refused, no
permissions granted, popups closed, and an init script that takes WebSocket, WebRTC,
``window.open`` and ``sendBeacon`` away from the page's scripts), every request of
which goes to the slot's current ``router`` (none: refused). It launches the browser
first if there is none (the first render of a crawl, or after a restart).

A tab is used again for the next page (``close_page(reuse=True)`` takes it back to
``about:blank``), ``REUSE`` times at most: opening a tab costs the browser about three
times a navigation's CPU (bench_render). Its context then holds what earlier pages
left (their origins' storage, the cache), which is what one visitor's browser would
hold; the crawler sends no cookie of the browser's anywhere. A tab that did not
settle (no DOM, an error) is closed, never reused. ``close_page`` says whether the
browser is still sound:

- a tab whose context does not close (or go blank) within ``close_grace`` seconds
  means a hung browser (a crashed or stopped process, or one past saving): its
  process group is killed;
- a browser that disconnected (crashed, killed) is replaced at the next ``open_page``;
- a browser whose processes' memory (PSS, shared pages counted once) passes
  ``memory_cap`` (read in a thread after a page, at most every ``MEMORY_CHECK``
  seconds: reading it takes tens of milliseconds) is retired: new pages go to a new
  browser, and the old one is closed when its last page ends.

A page in a browser that crashed or hung is lost with it, not failed: the render step
raises ``BrowserLostError`` and the fetch stage gives the URL back to be fetched and
rendered again (counted as an attempt, so a page that kills every browser ends failed).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from trawl.errors import TrawlError
from trawl.fetch.render.browser import Launched, launch
from trawl.frontier.admission import CounterSink

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page, Route

__all__ = ["MEMORY_CHECK", "REUSE", "BrowserLostError", "BrowserPool", "PageSlot"]

MEMORY_CHECK: Final = 2.0
REUSE: Final = 50  # pages one tab renders before it is closed and a new one opened
_INIT_SCRIPT: Final = """(() => {
  for (const name of ["WebSocket", "WebTransport", "RTCPeerConnection",
                      "webkitRTCPeerConnection", "RTCDataChannel", "SharedWorker"]) {
    try { Object.defineProperty(window, name, {value: undefined, writable: false}); }
    catch (e) {}
  }
  try { window.open = () => null; } catch (e) {}
  try { navigator.sendBeacon = () => false; } catch (e) {}
})();"""

Router = Callable[["Route"], Awaitable[None]]


class BrowserLostError(TrawlError):
    """The browser crashed or hung while it rendered a page (the page is not to blame)."""


@dataclass(slots=True, eq=False)
class PageSlot:
    """A tab of the pool: its browser, its own context, and who routes its requests."""

    context: BrowserContext
    page: Page
    browser: Launched
    router: Router | None = None  # the render under way's (None: every request refused)
    renders: int = 0

    async def dispatch(self, route: Route) -> None:
        router = self.router
        if router is None:
            with contextlib.suppress(Exception):
                await route.abort("blockedbyclient")
            return
        await router(route)


class BrowserPool:
    def __init__(
        self,
        *,
        executable: str | None,
        pages: int,
        memory_cap: int,
        user_agent: str,
        close_grace: float = 5.0,
        launcher: Callable[[str | None], Awaitable[Launched]] = launch,
        counters: CounterSink | None = None,
        memory_check: float = MEMORY_CHECK,
    ) -> None:
        self._executable = executable
        self._pages = pages
        self._memory_cap = memory_cap
        self._user_agent = user_agent
        self._close_grace = close_grace
        self._launcher = launcher
        self._count = counters
        self._memory_check = memory_check
        self._slots: asyncio.Semaphore | None = None  # made in the running loop
        self._launching = asyncio.Lock()
        self._current: Launched | None = None
        self._retired: list[Launched] = []
        self._idle: list[PageSlot] = []  # tabs of the current browser, blank, free
        self.waiting = 0  # pages waiting for a slot
        self.restarts: dict[str, int] = {}  # why -> how many ("crashed", "hung", "memory")
        self.version = ""
        self.pids: list[int] = []  # every browser launched (the leaders of their groups)
        self.launches = 0
        self.tabs = 0  # tabs opened

    @property
    def pages(self) -> int:
        return self._pages

    @property
    def browser(self) -> Launched | None:
        """The browser new pages go to (None before the first render)."""
        return self._current

    async def open_page(self) -> PageSlot:
        """A blank tab in a sound browser; waits for a free slot."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._pages)
        self.waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self.waiting -= 1
        try:
            browser = await self._browser()
            browser.active += 1
            while self._idle:
                slot = self._idle.pop()
                if slot.browser is browser:
                    return slot
                await self._drop_tab(slot)
            try:
                # asyncio.timeout, here and below, not wait_for: on Python 3.11 wait_for
                # swallows a cancellation that comes in the turn its wait ends.
                async with asyncio.timeout(self._close_grace):
                    return await self._new_tab(browser)
            except Exception as exc:
                browser.active -= 1
                await self._lose(browser, "crashed" if not browser.alive else "hung")
                raise BrowserLostError(f"browser failed to open a page: {exc}") from None
        except BaseException:
            self._slots.release()
            raise

    async def _new_tab(self, browser: Launched) -> PageSlot:
        context = await browser.browser.new_context(
            service_workers="block",
            accept_downloads=False,
            user_agent=self._user_agent,
            viewport={"width": 1280, "height": 900},
        )
        await context.add_init_script(_INIT_SCRIPT)
        page = await context.new_page()
        # Any other page of the context is a popup (window.open is gone, but a form or
        # a link with a target could make one): closed at once.
        context.on("page", lambda popup: asyncio.ensure_future(popup.close()))
        slot = PageSlot(context, page, browser)

        async def dispatch(route: Route) -> None:  # (Playwright tags its handlers)
            await slot.dispatch(route)

        await context.route("**/*", dispatch)
        self.tabs += 1
        return slot

    async def close_page(self, slot: PageSlot, *, reuse: bool = False) -> str | None:
        """Give the tab back (``reuse``: blank, for the next page, else closed); None if
        its browser is sound, else why it was lost ("crashed" or "hung": then its
        processes are killed)."""
        browser = slot.browser
        slot.router = None
        slot.renders += 1
        lost = None if browser.alive else "crashed"
        try:
            if lost is None:
                keep = reuse and slot.renders < REUSE and not browser.retired
                try:
                    async with asyncio.timeout(self._close_grace):
                        if keep:
                            await slot.page.goto("about:blank")
                        else:
                            await slot.context.close()
                except Exception:
                    keep = False
                    with contextlib.suppress(Exception):
                        async with asyncio.timeout(self._close_grace):
                            await slot.context.close()
                    lost = None if slot.page.is_closed() else "hung"
                    lost = "crashed" if not browser.alive else lost
                if keep:
                    self._idle.append(slot)
            browser.active -= 1
            if lost is not None:
                await self._lose(browser, lost)
            elif await self._over_memory(browser):
                self._restarted("memory")
                await self._retire(browser)
            elif browser.retired:
                await self._retire(browser)
        finally:
            assert self._slots is not None
            self._slots.release()
        return lost

    async def close(self) -> None:
        """Close every browser (at the crawl's end)."""
        self._idle.clear()
        for browser in [*self._retired, *([self._current] if self._current else [])]:
            await browser.close()
        self._retired.clear()
        self._current = None

    # -- the browser's life -----------------------------------------------------------

    async def _browser(self) -> Launched:
        async with self._launching:
            current = self._current
            if current is not None and current.alive and not current.retired:
                return current
            if current is not None:
                await self._retire(current)
            try:
                launched = await self._launcher(self._executable)
            except Exception as exc:
                raise BrowserLostError(f"browser did not start: {exc}") from None
            if launched.pid is not None:
                self.pids.append(launched.pid)
            self.launches += 1
            self.version = launched.version
            self._current = launched
            return launched

    async def _drop_tab(self, slot: PageSlot) -> None:
        with contextlib.suppress(Exception):
            async with asyncio.timeout(self._close_grace):
                await slot.context.close()

    async def _lose(self, browser: Launched, why: str) -> None:
        """A crashed or hung browser: kill its processes; pages in it are lost."""
        if not browser.retired:
            self._restarted(why)
        browser.kill()
        await self._retire(browser)

    async def _retire(self, browser: Launched) -> None:
        """No new pages for ``browser``; closed once its last page has ended."""
        if self._current is browser:
            self._current = None
        browser.retired = True
        self._idle = [slot for slot in self._idle if slot.browser is not browser]
        if browser.active == 0:
            if browser in self._retired:
                self._retired.remove(browser)
            await browser.close()
        elif browser not in self._retired:
            self._retired.append(browser)

    def _restarted(self, why: str) -> None:
        self.restarts[why] = self.restarts.get(why, 0) + 1
        if self._count is not None:
            self._count.add(f"render:restart:{why}")

    async def _over_memory(self, browser: Launched) -> bool:
        now = time.monotonic()
        if browser.retired or now - browser.memory_checked_at < self._memory_check:
            return False
        browser.memory_checked_at = now
        return await asyncio.to_thread(browser.memory) > self._memory_cap
