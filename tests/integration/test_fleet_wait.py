"""Idle fleet workers wait on Redis without polling: woken by a peer's announcement,
by their own events, or at the end of their wait (real redis-server and Cluster).

Real time, with generous bounds: a wake-up must come well before the wait's end
(5 s), so a loaded machine cannot turn a pass into a fail.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from tests.redis_servers import RedisCluster, RedisServer
from trawl.frontier.idle import FleetWait
from trawl.storage.redis.store import RedisCrawlStore

LONG = 5.0  # a wait that must not run to its end


@pytest.fixture(params=["redis", "redis-cluster"])
def url(request: pytest.FixtureRequest) -> str:
    server: RedisServer | RedisCluster = request.getfixturevalue(
        "redis_server" if request.param == "redis" else "redis_cluster"
    )
    return server.url


def _pair(url: str) -> tuple[RedisCrawlStore, RedisCrawlStore]:
    crawl = uuid.uuid4().hex[:12]
    return RedisCrawlStore(url, crawl, worker="idle"), RedisCrawlStore(url, crawl, worker="busy")


def test_an_idle_worker_is_woken_by_a_full_ones_announcement(url: str) -> None:
    idle_store, busy_store = _pair(url)
    idle, busy = FleetWait(idle_store.wake_signal()), FleetWait(busy_store.wake_signal())

    async def go() -> float:
        local = asyncio.Event()
        started = time.monotonic()
        waiting = asyncio.ensure_future(local_and(idle, local, LONG))
        await asyncio.sleep(0.3)  # the idle worker blocks
        # The busy one is full: it announces, sent with its next round trip.
        await busy.wait(asyncio.Event(), 0.0, idle=False, full=True)
        busy_store.frontier.counts()  # a round trip
        await waiting
        return time.monotonic() - started

    try:
        took = asyncio.run(go())
        assert took < LONG - 1
        assert idle.woken == 1
    finally:
        idle.close()
        busy.close()
        idle_store.close(commit=False)
        busy_store.close(commit=False)


async def local_and(waiter: FleetWait, local: asyncio.Event, seconds: float) -> None:
    await waiter.wait(local, seconds, idle=True, full=False)


def test_a_blocked_worker_hears_its_own_events_at_once_and_ends_its_wait(url: str) -> None:
    store, _other = _pair(url)
    waiter = FleetWait(store.wake_signal())

    async def go() -> tuple[float, float]:
        local = asyncio.Event()
        started = time.monotonic()
        waiting = asyncio.ensure_future(local_and(waiter, local, LONG))
        await asyncio.sleep(0.3)
        local.set()  # a stop request, say
        await waiting
        stopped = time.monotonic() - started
        local.clear()
        started = time.monotonic()
        await local_and(waiter, local, 0.5)  # nothing comes: the wait ends on time
        return stopped, time.monotonic() - started

    try:
        stopped, quiet = asyncio.run(go())
        assert stopped < LONG - 1
        assert 0.4 < quiet < LONG - 1
        assert waiter.woken == 0
    finally:
        waiter.close()
        store.close(commit=False)
        _other.close(commit=False)


def test_an_announcement_nobody_waits_for_is_kept_once(url: str) -> None:
    idle_store, busy_store = _pair(url)
    idle, busy = FleetWait(idle_store.wake_signal()), FleetWait(busy_store.wake_signal())

    async def go() -> float:
        for _ in range(3):  # full three times, nobody idle: one token left, not three
            await busy.wait(asyncio.Event(), 0.0, idle=False, full=True)
            busy_store.conn.flush()
        started = time.monotonic()
        await local_and(idle, asyncio.Event(), LONG)  # the next idle worker looks at once
        return time.monotonic() - started

    try:
        assert asyncio.run(go()) < LONG - 1
        assert idle.woken == 1
        assert busy_store.conn.client.llen(busy_store.keys.wake) == 0
    finally:
        idle.close()
        busy.close()
        idle_store.close(commit=False)
        busy_store.close(commit=False)
