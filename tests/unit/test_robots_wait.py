"""URLs of a host whose robots.txt is unreachable wait (never fail for it); a crawl left
with only such URLs ends after its patience, leaving them queued for a resume.

Fake clock throughout: the fake client moves it on every request, so robots.txt retries
come due without any sleep.
"""

from __future__ import annotations

import asyncio
import io
import random
from pathlib import Path
from typing import Any

from trawl import urls
from trawl.config import CrawlConfig
from trawl.crawl import Crawl
from trawl.fetch.http import FetchResponse
from trawl.fetch.robots_wait import ROBOTS_STOP, RobotsWaits
from trawl.models import NewUrl, UrlStatus
from trawl.progress import ProgressReporter
from trawl.records import CrawlSummary
from trawl.storage.memory import MemoryBlobStore, MemoryCrawlStore
from trawl.storage.memory.state import MemoryDisk
from trawl.testing import FakeClock
from trawl.testing.fakeclient import FakeClient, FakePage

WORDS = ["river", "mill", "stone", "water", "wheel", "grain", "flour", "miller", "oven"]
OK_ROBOTS = FakePage(b"User-agent: *\nDisallow:\n", 200, (("Content-Type", "text/plain"),))
DOWN = FakePage(b"down", 503, (("Content-Type", "text/plain"),))


def _page(host: str, i: int, last: int) -> FakePage:
    words = " ".join(random.Random(f"{host}{i}").choices(WORDS, k=300))
    link = f"<a href='/{i + 1}'>next</a>" if i < last else ""
    return FakePage.html(f"<title>{host} {i}</title><p>{words}</p>{link}")


def _site(host: str, pages: int) -> dict[str, FakePage]:
    return {f"https://{host}/{i}": _page(host, i, pages - 1) for i in range(pages)}


class StepClient(FakeClient):
    """Each request takes ``step`` seconds of fake time; robots.txt of ``down_host``
    answers 503 the first ``down_for`` times."""

    def __init__(self, pages: dict[str, FakePage], clock: FakeClock, **kw: Any) -> None:
        super().__init__(pages, clock=clock)
        self.step = kw.get("step", 120.0)
        self.down_host = kw.get("down_host", "down.example")
        self.down_for = kw.get("down_for", 10**9)
        self.robots_asked = 0

    async def get(self, url: str, **kw: Any) -> FetchResponse:
        assert self.clock is not None
        self.clock.advance(self.step)  # type: ignore[attr-defined]
        if url == f"https://{self.down_host}/robots.txt":
            self.robots_asked += 1
            if self.robots_asked <= self.down_for:
                self.requests.append((self.clock.now(), url))
                return await FakeClient({url: DOWN}, clock=None).get(url, **kw)
        return await super().get(url, **kw)


def _config(tmp_path: Path, **changes: Any) -> CrawlConfig:
    base = CrawlConfig(
        data_dir=tmp_path,
        seeds=("https://up.example/0", "https://down.example/0"),
        delay=0.0,
        parse_workers=0,
        commit_interval=0.05,
        fsync=False,
        min_free_space=0,
        robots_retry_base=100.0,
        robots_retry_max=100.0,
        max_attempts=3,
    )
    return base.with_changes(**changes)


def _pages() -> dict[str, FakePage]:
    pages = {**_site("up.example", 30), **_site("down.example", 3)}
    pages["https://up.example/robots.txt"] = OK_ROBOTS
    pages["https://down.example/robots.txt"] = OK_ROBOTS
    return pages


def _run(crawl: Crawl) -> CrawlSummary:
    async def go() -> CrawlSummary:
        try:
            # Fake time moves only with requests: a crawl that would wait forever fails.
            return await asyncio.wait_for(crawl.run(), timeout=30.0)
        finally:
            crawl.close()

    return asyncio.run(go())


def test_urls_wait_through_many_robots_failures_and_are_fetched_after(tmp_path: Path) -> None:
    # Five 503s in a row, 100 s apart, while up.example's pages come every 30 s: with
    # the old accounting each turn of down.example in between was an attempt, and its
    # URL failed after three.
    clock = FakeClock()
    store = MemoryCrawlStore()
    client = StepClient(_pages(), clock, down_for=5, step=30.0)
    crawl = Crawl(
        _config(tmp_path), clock=clock, store=store, blobs=MemoryBlobStore(), client=client
    )
    summary = _run(crawl)
    assert summary.stopped == "done"
    assert client.robots_asked == 6
    states = {u: (s, r) for u, s, r in store.reader().url_states()}
    for i in range(3):
        assert states[f"https://down.example/{i}"][0] is UrlStatus.PARSED
    assert not any(s is UrlStatus.FAILED for s, _ in states.values())
    asked = [u for _t, u in client.requests if "down.example" in u]
    assert asked[:6] == ["https://down.example/robots.txt"] * 6  # nothing else before
    assert summary.robots_waiting == (0, 0)


def test_a_crawl_left_with_only_robots_waits_ends_after_its_patience(tmp_path: Path) -> None:
    clock = FakeClock()
    disk, blobs = MemoryDisk(), MemoryBlobStore()
    client = StepClient(_pages(), clock, step=120.0)
    config = _config(tmp_path, robots_patience=0.0)
    crawl = Crawl(config, clock=clock, store=MemoryCrawlStore(disk), blobs=blobs, client=client)
    summary = _run(crawl)
    assert summary.stopped == ROBOTS_STOP
    assert summary.robots_waiting == (1, 1)  # down.example/0, the only URL it knows there
    assert summary.snapshot.queued == 1 and summary.snapshot.failed == 0
    out = io.StringIO()
    ProgressReporter(out, interval=1.0).finish(summary)
    assert "robots.txt wait  1 URLs on 1 hosts" in out.getvalue()
    # Resumed once robots.txt answers: the URL left queued is fetched, and its links.
    clock.advance(1000.0)
    client = StepClient(_pages(), clock, down_for=0)
    store = MemoryCrawlStore(disk)
    summary = _run(Crawl(config, clock=clock, store=store, blobs=blobs, client=client))
    assert summary.stopped == "done"
    assert summary.robots_waiting == (0, 0)
    states = {u: s for u, s, _r in store.reader().url_states()}
    assert [states[f"https://down.example/{i}"] for i in range(3)] == [UrlStatus.PARSED] * 3


# -- RobotsWaits, time passed in --------------------------------------------------------


def test_patience_is_counted_from_when_only_waits_were_left() -> None:
    waits = RobotsWaits(patience=600.0)
    assert not waits.over((3, 1), 100.0)
    assert not waits.over((3, 1), 699.999)
    assert waits.over((3, 1), 700.0)
    assert waits.left == (3, 1)
    assert not waits.over(None, 701.0)  # other work came: the count starts again
    assert waits.left == (0, 0)
    assert not waits.over((2, 1), 800.0)
    assert not waits.over((2, 1), 1399.0)
    assert waits.over((2, 1), 1400.0)


def _url(host: str, path: str) -> NewUrl:
    url = f"https://{host}{path}"
    return NewUrl(url=url, host=host, fp=urls.fingerprint(url), depth=1, priority=1)


def test_stalled_only_when_every_url_owed_is_a_waiting_hosts() -> None:
    frontier = MemoryCrawlStore().frontier
    frontier.add([_url("b.example", "/1"), _url("b.example", "/2")], now=0.0)
    frontier.add([_url("a.example", "/1"), _url("a.example", "/2")], now=0.0)
    waits = RobotsWaits(patience=10.0)
    lease = frontier.take(0.0)
    assert lease is not None and lease.host == "b.example"
    frontier.finish(lease, UrlStatus.PARSED, host_ready_at=10.0)
    assert waits.stalled(frontier, []) is None  # nobody waits
    lease = frontier.take(0.0)
    assert lease is not None and lease.host == "a.example"
    waits.wait("a.example", 300.0)  # as the fetch stage does: robots.txt unreachable
    frontier.requeue(lease, host_ready_at=300.0)
    assert waits.stalled(frontier, []) is None  # b.example has work
    retried = frontier.take(10.0)
    assert retried is not None and retried.host == "b.example"
    frontier.retry(retried, due=50.0, host_ready_at=10.0, reason="http 503")
    assert waits.stalled(frontier, []) is None  # a retry waiting for its time is work
    frontier.wake_due(50.0)
    retried = frontier.take(50.0)
    assert retried is not None and retried.host == "b.example"
    assert waits.stalled(frontier, ["b.example"]) is None  # a fetch of another host
    frontier.finish(retried, UrlStatus.PARSED, host_ready_at=50.0)
    assert waits.stalled(frontier, []) == (2, 1)
    robots_retry = frontier.take(300.0)
    assert robots_retry is not None and robots_retry.host == "a.example"
    assert waits.stalled(frontier, ["a.example"]) == (2, 1)  # its robots.txt retry
    frontier.requeue(robots_retry, host_ready_at=400.0)
    waits.clear("a.example")
    assert waits.stalled(frontier, []) is None


def test_a_fleet_worker_ends_on_a_fresh_mark_that_still_holds() -> None:
    store = MemoryCrawlStore()
    frontier = store.frontier
    frontier.add([_url("a.example", "/1"), _url("a.example", "/2")], now=0.0)
    decider = RobotsWaits(patience=0.0)
    decider.wait("a.example", 300.0)
    assert decider.over(decider.stalled(frontier, ()), 100.0)
    decider.publish(store.meta, 100.0)
    other = RobotsWaits(patience=0.0)  # never saw a.example waiting
    assert other.shared_stop(store.meta, frontier, store.parse_queue, 110.0)
    assert other.left == (2, 1)
    assert not other.shared_stop(store.meta, frontier, store.parse_queue, 131.0)  # stale
    frontier.add([_url("b.example", "/1")], now=0.0)
    assert not other.shared_stop(store.meta, frontier, store.parse_queue, 110.0)  # new work
