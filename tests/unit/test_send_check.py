"""A worker stopped between taking a lease and sending does not send after its lease's
first half: the URL goes back untouched (fake clock, memory store, fake client)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from trawl.config import CrawlConfig
from trawl.crawl import Crawl
from trawl.fetch.role import FetchRole
from trawl.fetch.sendcheck import LeaseEndingError, SendWindow, check_send, sending_under
from trawl.models import UrlStatus
from trawl.storage.memory import MemoryBlobStore, MemoryCrawlStore
from trawl.testing import FakeClock
from trawl.testing.fakeclient import FakeClient, FakePage

SEED = "https://site.example/"
PAGES = {
    "https://site.example/robots.txt": FakePage(b"", 404),
    SEED: FakePage.html("<title>Home</title><p>home</p>"),
}


def test_a_window_closes_at_the_lease_end_less_the_margin() -> None:
    clock = FakeClock()
    window = SendWindow(expires=clock.now() + 100, now=clock.now(), margin=50, monotonic=clock.now)
    clock.advance(49.9)
    with sending_under(window):
        check_send()
        clock.advance(0.1)
        with pytest.raises(LeaseEndingError):
            check_send()
    check_send()  # outside a lease's fetch nothing is checked


@pytest.mark.parametrize(
    ("stopped", "sent", "session_ttl"),
    [
        (49.0, True, None),
        (50.0, False, None),
        # A fleet worker's session of 10 s: past 5 s others may have taken its hosts.
        (4.9, True, 10.0),
        (5.0, False, 10.0),
    ],
)
def test_a_fetch_stopped_past_half_its_lease_gives_the_url_back_untouched(
    tmp_path: Path, stopped: float, sent: bool, session_ttl: float | None
) -> None:
    clock = FakeClock()
    client = FakeClient(PAGES, clock=clock)
    config = CrawlConfig(
        data_dir=tmp_path, delay=0.0, parse_workers=0, fsync=False, min_free_space=0
    )

    async def go() -> None:
        store = MemoryCrawlStore(lease_seconds=100.0)
        store.session_ttl = session_ttl
        crawl = Crawl(config, clock=clock, store=store, blobs=MemoryBlobStore(), client=client)
        try:
            crawl.add_seeds([SEED])
            role = FetchRole(
                stage=crawl.fetcher,
                frontier=crawl.frontier,
                counters=crawl.counters,
                clock=clock,
                delay=0.0,
                hand_off=None,
                on_done=lambda: None,
                on_error=lambda exc: False,
                writable=lambda: True,
                monotonic=clock.now,
                fleet=store if session_ttl is not None else None,
            )
            lease = crawl.frontier.take(clock.now())
            assert lease is not None
            role.start(lease)
            clock.advance(stopped)  # SIGSTOP between the lease and the request
            await asyncio.gather(*role.tasks)
            record = crawl.frontier.get(lease.host, lease.fp)
            assert record is not None
            if sent:
                assert [url for _t, url in client.requests] == [f"{SEED}robots.txt"]
                return
            assert client.requests == []  # nothing went out
            assert record.status is UrlStatus.QUEUED and record.attempts == 0
            assert crawl.counters.get("fetch:lease ending") == 1
            again = crawl.frontier.take(clock.now())  # a new lease: a new window
            assert again is not None and again.url == SEED
            role.start(again)
            await asyncio.gather(*role.tasks)
            assert [url for _t, url in client.requests] == [f"{SEED}robots.txt"]
        finally:
            crawl.close()

    asyncio.run(go())
