"""The crawl loop of a fleet's worker waits through an injected waiter: until the next
host is due, never in polling steps (fake clock, memory store, fake client)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from trawl.config import CrawlConfig
from trawl.crawl import Crawl
from trawl.frontier.idle import local_wait
from trawl.storage.memory import MemoryBlobStore, MemoryCrawlStore
from trawl.testing import FakeClock
from trawl.testing.fakeclient import FakeClient, FakePage

SITE = "https://site.example"
PAGES = {
    f"{SITE}/robots.txt": FakePage(b"", 404),
    f"{SITE}/": FakePage.html('<title>Home</title><p>home</p><a href="/a">a</a>'),
    f"{SITE}/a": FakePage.html('<title>A</title><p>a page</p><a href="/b">b</a>'),
    f"{SITE}/b": FakePage.html("<title>B</title><p>b page</p>"),
}


class FakeWait:
    """An ``IdleWait`` on the fake clock: work under way ends without time passing (its
    end sets ``local``); a wait nothing ends lasts its whole time."""

    max_wait = 30.0

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.waits: list[tuple[float, bool, bool]] = []  # (seconds, idle, full)
        self.slept: list[float] = []  # the waits that ran to their end

    async def wait(self, local: asyncio.Event, seconds: float, *, idle: bool, full: bool) -> None:
        self.waits.append((seconds, idle, full))
        for _ in range(100):  # a fetch or a parse under way ends, and says so
            if local.is_set():
                return
            await asyncio.sleep(0)
        self.clock.advance(seconds)
        self.slept.append(seconds)

    def close(self) -> None:
        pass


def test_an_idle_worker_waits_until_the_next_host_is_due(tmp_path: Path) -> None:
    clock = FakeClock()
    waiter = FakeWait(clock)
    config = CrawlConfig(
        data_dir=tmp_path,
        seeds=(f"{SITE}/",),
        delay=5.0,
        parse_workers=0,
        commit_interval=3600.0,
        fsync=False,
        min_free_space=0,
        sitemaps=False,  # no /sitemap.xml request among the pages' turns
    )
    client = FakeClient(PAGES, clock=clock)
    start = clock.now()

    async def go() -> str:
        store, blobs = MemoryCrawlStore(), MemoryBlobStore()
        # A fleet's worker (a writer of its own): without a waiter it would look every 0.25 s.
        crawl = Crawl(
            config, clock=clock, store=store, blobs=blobs, client=client, writer="w1", waiter=waiter
        )
        try:
            return (await crawl.run()).stopped
        finally:
            crawl.close()

    assert asyncio.run(go()) == "done"
    # robots.txt, then the three pages, each 5 s after the last request to the host.
    assert [round(t - start, 6) for t, _url in client.requests] == [0.0, 5.0, 10.0, 15.0]
    assert waiter.slept == [5.0, 5.0, 5.0]  # one wait per turn of the host, to the second
    assert any(idle for _s, idle, _full in waiter.waits)
    assert not any(full for _s, _i, full in waiter.waits)


def test_a_cancellation_in_the_turn_the_wait_ends_still_cancels() -> None:
    """The crawl loop waits in ``local_wait``; its task group cancels it when the group
    commit fails, and in the same turn the pages held at the commit gate fail and set
    ``local``. ``asyncio.wait_for`` (Python 3.11) returned then, swallowing the
    cancellation: the loop went on, fetching and failing pages, without commits."""

    async def main() -> str:
        local = asyncio.Event()
        waiting = asyncio.create_task(local_wait(local, 10.0))
        await asyncio.sleep(0)  # it waits now
        local.set()  # a page ends...
        waiting.cancel()  # ...in the turn the commit failed
        try:
            await waiting
        except asyncio.CancelledError:
            return "cancelled"
        return "returned"

    assert asyncio.run(main()) == "cancelled"


def test_local_wait_ends_at_its_event_or_its_time() -> None:
    async def main() -> tuple[bool, bool]:
        local = asyncio.Event()
        asyncio.get_running_loop().call_later(0.01, local.set)
        await local_wait(local, 10.0)
        heard = local.is_set()
        other = asyncio.Event()
        await local_wait(other, 0.01)  # nothing sets it: the time runs out, no error
        return heard, other.is_set()

    assert asyncio.run(main()) == (True, False)
